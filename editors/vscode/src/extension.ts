// The collc extension: .coll language support for VS Code.
//
// Highlighting, brackets, comments and indentation come from the static contributions in
// package.json (syntaxes/coll.tmLanguage.json, language-configuration.json) and work without
// the server. This file starts the language server, `collc lsp` over stdio, for every .coll
// file, and adds brace and comment folding that works without it.
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";
import { foldingRanges } from "./folding";
import { resolveCollcPath, serverArgs } from "./server";

let client: LanguageClient | undefined;
let output: vscode.OutputChannel | undefined;

function firstWorkspaceFolder(): string | undefined {
  const folders = vscode.workspace.workspaceFolders;
  return folders && folders.length > 0 ? folders[0].uri.fsPath : undefined;
}

async function startClient(): Promise<void> {
  const setting = vscode.workspace.getConfiguration("collc").get<string>("path");
  const command = resolveCollcPath(setting, firstWorkspaceFolder());
  const serverOptions: ServerOptions = {
    run: { command, args: serverArgs() },
    debug: { command, args: serverArgs(), options: { env: { ...process.env, RUST_BACKTRACE: "1" } } },
  };
  output ??= vscode.window.createOutputChannel("collc");
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "coll" },
      { scheme: "untitled", language: "coll" },
    ],
    outputChannel: output,
  };
  client = new LanguageClient("collc", "collc language server", serverOptions, clientOptions);
  try {
    await client.start();
  } catch (err) {
    client = undefined;
    const msg =
      `collc: could not start \`${command} lsp\` (${err instanceof Error ? err.message : String(err)}). ` +
      "Highlighting still works; diagnostics need the server. Set `collc.path` to the collc binary.";
    output.appendLine(msg);
    const choice = await vscode.window.showWarningMessage(msg, "Open Settings");
    if (choice === "Open Settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "collc.path");
    }
  }
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) {
    try {
      await c.stop();
    } catch {
      // The server may already be gone; nothing to clean up.
    }
  }
}

async function restartClient(): Promise<void> {
  await stopClient();
  await startClient();
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.languages.registerFoldingRangeProvider(
      { language: "coll" },
      {
        provideFoldingRanges(document) {
          return foldingRanges(document.getText()).map(
            (f) =>
              new vscode.FoldingRange(f.start, f.end, f.comment ? vscode.FoldingRangeKind.Comment : undefined),
          );
        },
      },
    ),
    vscode.commands.registerCommand("collc.restartServer", restartClient),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("collc.path")) void restartClient();
    }),
  );
  await startClient();
}

export function deactivate(): Thenable<void> | undefined {
  return stopClient();
}
