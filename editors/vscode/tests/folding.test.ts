// Unit tests of the server-free parts of the extension, run with `node --test` after esbuild.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as os from "node:os";
import * as path from "node:path";
import { foldingRanges } from "../src/folding";
import { resolveCollcPath, serverArgs } from "../src/server";

test("braces, brackets and parentheses that span lines fold", () => {
  const text = [
    "topology t {", // 0
    "    compute gpu[4];", // 1
    "    for i in 0..4 {", // 2
    "        link gpu[i] <-> gpu[(i + 1) % 4] : 25 GB/s;", // 3
    "    }", // 4
    "}", // 5
    "let xs = [", // 6
    "    1, 2,", // 7
    "];", // 8
  ].join("\n");
  assert.deepEqual(foldingRanges(text), [
    { start: 0, end: 4, comment: false },
    { start: 2, end: 3, comment: false },
    { start: 6, end: 7, comment: false },
  ]);
});

test("brackets in strings and comments are ignored; comment runs fold", () => {
  const text = [
    "// header line one", // 0
    "// header line two {", // 1
    "// header line three", // 2
    'let s = "{ not a block";', // 3
    "collective allreduce { // {", // 4
    "    size: 1 MiB;", // 5
    "}", // 6
    "// a single comment line does not fold", // 7
  ].join("\n");
  assert.deepEqual(foldingRanges(text), [
    { start: 0, end: 2, comment: true },
    { start: 4, end: 5, comment: false },
  ]);
});

test("one-line and unbalanced blocks do not fold and do not throw", () => {
  assert.deepEqual(foldingRanges("schedule forest { k: auto; }\n}\n}"), []);
  assert.deepEqual(foldingRanges("topology t {\n compute a;\n"), []);
  assert.deepEqual(foldingRanges('let s = "a \\" { b";\n'), []);
});

test("CRLF line ends", () => {
  assert.deepEqual(foldingRanges("topology t {\r\n  compute a;\r\n}\r\n"), [{ start: 0, end: 1, comment: false }]);
});

test("collc.path resolution", () => {
  assert.equal(resolveCollcPath(undefined, undefined), "collc");
  assert.equal(resolveCollcPath("  ", "/ws"), "collc");
  assert.equal(resolveCollcPath("collc", "/ws"), "collc");
  assert.equal(resolveCollcPath("/opt/collc/bin/collc", "/ws"), "/opt/collc/bin/collc");
  assert.equal(resolveCollcPath("~/bin/collc", "/ws"), path.join(os.homedir(), "bin/collc"));
  assert.equal(resolveCollcPath("target/debug/collc", "/ws"), path.join("/ws", "target/debug/collc"));
  assert.equal(resolveCollcPath("${workspaceFolder}/target/release/collc", "/ws"), "/ws/target/release/collc");
  assert.deepEqual(serverArgs(), ["lsp"]);
});
