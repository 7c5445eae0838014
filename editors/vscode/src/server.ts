// Where the collc binary is, from the `collc.path` setting. Free of the `vscode` module so that
// it can be unit-tested under plain Node (tests/server.test.ts).
import * as os from "os";
import * as path from "path";

/**
 * Resolves the `collc.path` setting: empty means `collc`; `~` is the home directory;
 * `${workspaceFolder}` and relative paths that contain a slash are taken from the first
 * workspace folder; a bare name (`collc`) is left for the operating system to find on PATH.
 */
export function resolveCollcPath(setting: string | undefined, workspaceFolder: string | undefined): string {
  let p = (setting ?? "").trim();
  if (p === "") return "collc";
  if (p === "~" || p.startsWith("~/")) p = path.join(os.homedir(), p.slice(1));
  if (workspaceFolder !== undefined) p = p.split("${workspaceFolder}").join(workspaceFolder);
  const hasSlash = p.includes("/") || p.includes("\\");
  if (hasSlash && !path.isAbsolute(p) && workspaceFolder !== undefined) {
    p = path.join(workspaceFolder, p);
  }
  return p;
}

/** The command line of the language server. */
export function serverArgs(): string[] {
  return ["lsp"];
}
