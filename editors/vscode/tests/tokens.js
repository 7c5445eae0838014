#!/usr/bin/env node
// Tokenizes .coll files with the TextMate grammar, the way VS Code does (vscode-textmate and
// vscode-oniguruma), and checks properties that must hold for every real file:
//   - no token is scoped invalid.* (a character the lexer rejects, or a grammar bug);
//   - every keyword of the language is scoped as a keyword/constant, never as a plain name;
//   - every quantity literal is scoped constant.numeric + keyword.other.unit.
// Usage: node tests/tokens.js FILE...          check
//        node tests/tokens.js --dump FILE...   print each token with its scopes
"use strict";
const fs = require("fs");
const path = require("path");
const vsctm = require("vscode-textmate");
const oniguruma = require("vscode-oniguruma");

const root = path.join(__dirname, "..");
const grammarPath = path.join(root, "syntaxes", "coll.tmLanguage.json");

async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm")).buffer;
  await oniguruma.loadWASM(wasm);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (s) => new oniguruma.OnigScanner(s),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) =>
      scope === "source.coll"
        ? vsctm.parseRawGrammar(fs.readFileSync(grammarPath, "utf8"), grammarPath)
        : null,
  });
  return registry.loadGrammar("source.coll");
}

const KEYWORDS = new Set(
  "import param let generator topology compute switch link for in if else use as collective schedule model target auto true false".split(" "),
);

function tokenize(grammar, text) {
  const out = [];
  let state = vsctm.INITIAL;
  text.split(/\r?\n/).forEach((line, lineNo) => {
    const r = grammar.tokenizeLine(line, state);
    for (const t of r.tokens) {
      out.push({ line: lineNo + 1, col: t.startIndex + 1, text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes });
    }
    state = r.ruleStack;
  });
  return out;
}

async function main() {
  const args = process.argv.slice(2);
  const dump = args[0] === "--dump";
  const files = dump ? args.slice(1) : args;
  if (files.length === 0) {
    console.error("usage: node tests/tokens.js [--dump] FILE...");
    process.exit(2);
  }
  const grammar = await loadGrammar();
  let failures = 0;
  for (const file of files) {
    const tokens = tokenize(grammar, fs.readFileSync(file, "utf8"));
    for (const t of tokens) {
      const scopes = t.scopes.join(" ");
      if (dump) {
        if (t.text.trim() !== "") console.log(`${file}:${t.line}:${t.col}\t${JSON.stringify(t.text)}\t${scopes}`);
        continue;
      }
      const fail = (why) => {
        failures++;
        console.log(`${file}:${t.line}:${t.col}: ${JSON.stringify(t.text)} ${why} (${scopes})`);
      };
      const inComment = scopes.includes("comment.") || scopes.includes("string.");
      if (scopes.includes("invalid.")) fail("is scoped invalid");
      if (!inComment && KEYWORDS.has(t.text.trim())) {
        const k = t.text.trim();
        const ok =
          /\b(keyword|storage\.type|constant\.language)\./.test(scopes) ||
          (k === "model" && scopes.includes("variable.other.property.coll"));
        if (!ok) fail("is a keyword but not scoped as one");
      }
      if (!inComment && /^[0-9][0-9_]*(\.[0-9][0-9_]*)?[ \t]*[A-Za-z]/.test(t.text)) {
        fail("is a number glued to a word but not one quantity token");
      }
    }
  }
  if (!dump) {
    console.log(`tokens: ${files.length} files checked, ${failures} problems`);
    process.exit(failures === 0 ? 0 : 1);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(2);
});
