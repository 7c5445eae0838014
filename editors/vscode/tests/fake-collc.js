#!/usr/bin/env node
// A stand-in for `collc lsp` in tests/activate.test.js: a minimal LSP server over stdio that
// records how it was started and the requests it got (one JSON line each) in $FAKE_COLLC_LOG,
// answers initialize and shutdown, and exits on exit.
"use strict";
const fs = require("fs");
const logFile = process.env.FAKE_COLLC_LOG;
const record = (entry) => fs.appendFileSync(logFile, JSON.stringify(entry) + "\n");
record({ argv: process.argv.slice(2) });

let buf = Buffer.alloc(0);
function send(msg) {
  const body = Buffer.from(JSON.stringify(msg), "utf8");
  process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`);
  process.stdout.write(body);
}
process.stdin.on("data", (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  for (;;) {
    const end = buf.indexOf("\r\n\r\n");
    if (end < 0) return;
    const m = /Content-Length: (\d+)/i.exec(buf.subarray(0, end).toString("ascii"));
    const len = m ? Number(m[1]) : 0;
    if (buf.length < end + 4 + len) return;
    const msg = JSON.parse(buf.subarray(end + 4, end + 4 + len).toString("utf8"));
    buf = buf.subarray(end + 4 + len);
    record({ method: msg.method, params: msg.method === "initialize" ? { processId: msg.params.processId } : undefined });
    if (msg.method === "initialize") {
      send({ jsonrpc: "2.0", id: msg.id, result: { capabilities: { textDocumentSync: 1 }, serverInfo: { name: "fake-collc" } } });
    } else if (msg.method === "shutdown") {
      send({ jsonrpc: "2.0", id: msg.id, result: null });
    } else if (msg.method === "exit") {
      process.exit(0);
    } else if (msg.id !== undefined) {
      send({ jsonrpc: "2.0", id: msg.id, result: null });
    }
  }
});
process.stdin.on("end", () => process.exit(0));
