// Smoke test of the bundled extension (out/extension.js) without VS Code, which cannot be
// downloaded here: `vscode` is replaced by a permissive stand-in, `collc.path` points at
// tests/fake-collc.js (a minimal LSP server that logs what it gets), and activate() must start it
// as `<collc.path> lsp` and complete the LSP handshake over stdin/stdout; deactivate() must shut
// it down. Run after `npm run build`: node --test tests/activate.test.js
"use strict";
const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const Module = require("node:module");

// A stand-in for any vscode API: every property is another stand-in, calling or constructing one
// gives a stand-in, and it is not a thenable (so awaiting it does not hang).
function standIn(name, overrides = {}) {
  const target = function () {};
  return new Proxy(target, {
    get(_t, prop) {
      if (prop in overrides) return overrides[prop];
      if (prop === "then" || typeof prop === "symbol") return undefined;
      if (prop === "toString" || prop === "toJSON") return () => name;
      return standIn(`${name}.${String(prop)}`);
    },
    apply() {
      return standIn(`${name}()`);
    },
    construct() {
      return standIn(`new ${name}`);
    },
  });
}

// The `vscode` module itself: a plain object (so that bundlers' ES-module interop can list its
// namespaces) whose namespaces are stand-ins.
const NAMESPACES = ["commands", "env", "extensions", "languages", "window", "workspace", "Uri", "Disposable",
  "EventEmitter", "FoldingRange", "FoldingRangeKind", "Range", "Position", "Location", "Diagnostic",
  "DiagnosticSeverity", "CancellationTokenSource", "CancellationError", "ProgressLocation", "RelativePattern",
  "ThemeIcon", "TextEdit", "WorkspaceEdit", "MarkdownString", "CodeActionKind", "SemanticTokens",
  "SemanticTokensLegend", "LanguageStatusSeverity", "version"];
function moduleStandIn(overrides) {
  const mod = {};
  for (const ns of NAMESPACES) mod[ns] = ns in overrides ? overrides[ns] : standIn(`vscode.${ns}`);
  mod.version = "1.82.0";
  return new Proxy(mod, {
    get(t, prop) {
      if (prop in t) return t[prop];
      if (prop === "then" || typeof prop === "symbol") return undefined;
      return standIn(`vscode.${String(prop)}`);
    },
  });
}

// One stand-in `vscode` for the whole file: the bundle reads it once, when first required.
const state = { collcPath: "collc", messages: [] };
const message = async (msg) => {
  state.messages.push(msg);
  return undefined;
};
const vscode = moduleStandIn({
  workspace: standIn("vscode.workspace", {
    workspaceFolders: undefined,
    textDocuments: [],
    getConfiguration: (section) =>
      standIn(`config(${section})`, {
        get: (key, dflt) => (section === "collc" && key === "path" ? state.collcPath : dflt),
      }),
  }),
  window: standIn("vscode.window", {
    showWarningMessage: message,
    showErrorMessage: message,
    showInformationMessage: message,
  }),
});

function loadExtension() {
  const load = Module._load;
  Module._load = function (request, ...rest) {
    return request === "vscode" ? vscode : load.call(this, request, ...rest);
  };
  try {
    return require(path.join(__dirname, "..", "out", "extension.js"));
  } finally {
    Module._load = load;
  }
}

function newContext(dir) {
  return { subscriptions: [], extensionPath: dir, asAbsolutePath: (p) => path.join(dir, p) };
}

test("activate() starts `<collc.path> lsp`, which answers initialize; deactivate() stops it", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "collc-vscode-"));
  const log = path.join(dir, "log.jsonl");
  process.env.FAKE_COLLC_LOG = log;
  state.collcPath = path.join(__dirname, "fake-collc.js");
  state.messages = [];
  const entries = () =>
    fs.existsSync(log) ? fs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l)) : [];
  const waitFor = async (what, pred) => {
    const deadline = Date.now() + 10000;
    while (!pred(entries())) {
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; log: ${JSON.stringify(entries())}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  try {
    const ext = loadExtension();
    const context = newContext(dir);
    await ext.activate(context);
    await waitFor("initialized", (e) => e.some((x) => x.method === "initialized"));
    const log1 = entries();
    assert.deepEqual(log1[0], { argv: ["lsp"] }, "the server's command line");
    assert.equal(log1[1].method, "initialize", "the first request");
    assert.equal(log1[1].params.processId, process.pid, "processId of the client");
    assert.ok(context.subscriptions.length >= 3, "folding provider, command and config listener registered");
    await ext.deactivate();
    await waitFor("exit", (e) => e.some((x) => x.method === "exit"));
    assert.deepEqual(
      entries().map((x) => x.method).filter(Boolean),
      ["initialize", "initialized", "shutdown", "exit"],
      "the conversation",
    );
    assert.deepEqual(state.messages, [], "messages shown to the user");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a collc.path that does not exist gives a warning, not a failed activation", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "collc-vscode-"));
  state.collcPath = path.join(dir, "no-such-collc");
  state.messages = [];
  try {
    const ext = loadExtension();
    await ext.activate(newContext(dir));
    const ours = state.messages.filter((m) => m.includes("could not start"));
    assert.equal(ours.length, 1, `one warning from the extension; got ${JSON.stringify(state.messages)}`);
    assert.match(ours[0], /no-such-collc lsp/);
    assert.match(ours[0], /collc\.path/);
    await ext.deactivate();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
