//! `collc lsp` through the binary while a check runs long (issue 41): other requests,
//! `$/cancelRequest`, `shutdown` and `exit` are answered while a document takes seconds to
//! check, a superseded version is never published, and the reader recovers from a wrong
//! `Content-Length` and answers ids JSON-RPC does not allow. At the end, the engine's background
//! mode in process, as the binary's loop drives it.
//!
//! Nothing here measures time: on a loaded machine only the order of the server's messages is
//! asserted (the answer about a quick document comes before the slow document's diagnostics),
//! and every wait has a generous timeout so that a hang fails instead of blocking the suite.

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// How long any one message may take to arrive before the test fails.
const PATIENCE: Duration = Duration::from_secs(300);

/// A topology that loops 2,000,000 times (the language server's limit): seconds to check.
const SLOW: &str = "topology t {\n    compute h[2];\n    for i in 0..2000000 { let x = i * 2 + 1; }\n    link h[0] <-> h[1] : 1 GB/s;\n}\ncollective allreduce { count: 8; }\n";

const QUICK: &str = "param n: int = 4;\n";

/// Frames `body` as LSP's base protocol does.
fn frame(body: &[u8]) -> Vec<u8> {
    let mut v = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    v.extend_from_slice(body);
    v
}

/// The bodies of the frames in `out`.
fn bodies(out: &[u8]) -> Vec<Value> {
    let mut buf = out.to_vec();
    std::iter::from_fn(|| take_frame(&mut buf)).collect()
}

/// The first whole frame's body at the start of `buf`, taken out of it.
fn take_frame(buf: &mut Vec<u8>) -> Option<Value> {
    let at = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&buf[..at]).to_string();
    let len: usize = head
        .trim()
        .strip_prefix("Content-Length: ")
        .and_then(|n| n.parse().ok())
        .expect("a Content-Length header");
    if buf.len() < at + 4 + len {
        return None;
    }
    let v = serde_json::from_slice(&buf[at + 4..at + 4 + len]).expect("JSON");
    buf.drain(..at + 4 + len);
    Some(v)
}

/// `collc lsp` with a thread reading its messages.
struct Server {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    /// Every message received so far, in order.
    seen: Vec<Value>,
}

/// `collc lsp` with piped standard input and output.
fn spawn_lsp() -> Child {
    Command::new(env!("CARGO_BIN_EXE_collc"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("collc lsp runs")
}

impl Server {
    fn start() -> Server {
        let mut child = spawn_lsp();
        let stdin = child.stdin.take().expect("piped");
        let mut stdout = child.stdout.take().expect("piped");
        let (tx, messages) = channel();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 65536];
            loop {
                let n = match stdout.read(&mut chunk) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                buf.extend_from_slice(&chunk[..n]);
                while let Some(v) = take_frame(&mut buf) {
                    if tx.send(v).is_err() {
                        return;
                    }
                }
            }
        });
        let mut s = Server {
            child,
            stdin,
            messages,
            seen: Vec::new(),
        };
        s.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}));
        s.until(|m| m["id"] == 1);
        s.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        s
    }

    fn send(&mut self, v: Value) {
        self.send_raw(&frame(v.to_string().as_bytes()));
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).expect("writable");
        self.stdin.flush().expect("writable");
    }

    fn open(&mut self, uri: &str, text: &str) {
        self.send(
            json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "coll", "version": 1, "text": text}}}),
        );
    }

    fn hover(&mut self, id: i32, uri: &str) {
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": uri}, "position": {"line": 0, "character": 7}}}),
        );
    }

    /// Reads messages until one satisfies `done`; returns its index in `seen`.
    fn until(&mut self, done: impl Fn(&Value) -> bool) -> usize {
        if let Some(i) = self.seen.iter().position(&done) {
            return i;
        }
        loop {
            let m = self
                .messages
                .recv_timeout(PATIENCE)
                .unwrap_or_else(|e| panic!("no message ({e}); so far: {:#?}", self.seen));
            self.seen.push(m);
            if done(self.seen.last().expect("just pushed")) {
                return self.seen.len() - 1;
            }
        }
    }

    /// `shutdown` and `exit`; the exit code.
    fn stop(mut self) -> Option<i32> {
        self.send(json!({"jsonrpc": "2.0", "id": 999, "method": "shutdown"}));
        self.until(|m| m["id"] == 999);
        self.send(json!({"jsonrpc": "2.0", "method": "exit"}));
        for _ in 0..600 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        panic!("collc lsp did not exit within a minute of `exit`");
    }
}

fn published(m: &Value, uri: &str, version: i64) -> bool {
    m["method"] == "textDocument/publishDiagnostics"
        && m["params"]["uri"] == uri
        && m["params"]["version"] == version
}

#[test]
fn a_slow_document_does_not_hold_up_requests_about_others() {
    let mut s = Server::start();
    let (quick, slow) = ("file:///p/quick.coll", "file:///p/slow.coll");
    s.open(quick, QUICK);
    s.until(|m| published(m, quick, 1));
    s.open(slow, SLOW);
    s.hover(2, quick);
    // A request about the slow document waits for its check.
    s.hover(3, slow);
    let quick_answer = s.until(|m| m["id"] == 2);
    let slow_done = s.until(|m| published(m, slow, 1));
    let slow_answer = s.until(|m| m["id"] == 3);
    assert!(quick_answer < slow_done, "{:#?}", s.seen);
    assert!(slow_done < slow_answer, "{:#?}", s.seen);
    assert!(
        s.seen[quick_answer]["result"]["contents"].is_object(),
        "{:#?}",
        s.seen
    );
    assert_eq!(s.seen[slow_done]["params"]["diagnostics"], json!([]));
    assert!(s.seen[slow_answer]["error"].is_null(), "{:#?}", s.seen);
    assert_eq!(s.stop(), Some(0));
}

#[test]
fn cancel_shutdown_and_exit_are_answered_while_a_check_runs() {
    let mut s = Server::start();
    let slow = "file:///p/slow.coll";
    s.open(slow, SLOW);
    s.hover(5, slow);
    s.send(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 5}}));
    let cancelled = s.until(|m| m["id"] == 5);
    assert_eq!(s.seen[cancelled]["error"]["code"], -32800, "{:#?}", s.seen);
    // `shutdown` and `exit` do not wait for the check either.
    assert_eq!(s.stop(), Some(0));
}

#[test]
fn a_superseded_version_is_cancelled_and_never_published() {
    let mut s = Server::start();
    let (a, b, quick) = ("file:///p/a.coll", "file:///p/b.coll", "file:///p/q.coll");
    s.open(quick, QUICK);
    s.until(|m| published(m, quick, 1));
    // `b` is the clock: it takes as long to check as `a`'s first version.
    s.open(a, SLOW);
    s.open(b, SLOW);
    s.hover(7, a);
    // Once this is answered the server has gone idle after the opens and started both checks
    // (a round trip, not a guess at how long checking takes).
    s.hover(6, quick);
    s.until(|m| m["id"] == 6);
    s.send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": a, "version": 2}, "contentChanges": [{"text": QUICK}]}}),
    );
    // The hover was about a text that is gone.
    let modified = s.until(|m| m["id"] == 7);
    assert_eq!(s.seen[modified]["error"]["code"], -32801, "{:#?}", s.seen);
    s.hover(8, a);
    let a2 = s.until(|m| published(m, a, 2));
    let answer = s.until(|m| m["id"] == 8);
    let b1 = s.until(|m| published(m, b, 1));
    // Cancelled, `a`'s first version did not hold up its second.
    assert!(a2 < b1, "{:#?}", s.seen);
    assert!(
        s.seen[answer]["result"]["contents"].is_object(),
        "{:#?}",
        s.seen
    );
    assert!(!s.seen.iter().any(|m| published(m, a, 1)), "{:#?}", s.seen);
    assert_eq!(s.stop(), Some(0));
}

#[test]
fn a_content_length_too_long_on_a_message_the_client_waits_on_is_answered() {
    let mut s = Server::start();
    let body = hover_on(2).to_string();
    // The client sends nothing more until it has the answer.
    s.send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len() + 10).as_bytes());
    s.until(|m| m["id"] == 2);
    s.send(hover_on(3));
    s.until(|m| m["id"] == 3);
    assert_eq!(s.stop(), Some(0));
}

/// Runs `collc lsp` on `input` (which ends with `exit`); its messages and exit code.
fn run(input: &[u8]) -> (Vec<Value>, Option<i32>) {
    let mut child = spawn_lsp();
    let mut stdin = child.stdin.take().expect("piped");
    let input = input.to_vec();
    // Written from a thread, so that a server that stops reading cannot block the test.
    std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
        // Kept open: the server must stop on `exit`, not on the end of its input.
        std::thread::sleep(Duration::from_secs(120));
    });
    let mut stdout = child.stdout.take().expect("piped");
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        let _ = tx.send(out);
    });
    let out = rx.recv_timeout(Duration::from_secs(60));
    let status = child.try_wait().ok().flatten();
    if out.is_err() || status.is_none() {
        let _ = child.kill();
    }
    let out = out.expect("collc lsp exits on `exit`");
    let status = child.wait().expect("collc lsp ends");
    (bodies(&out), status.code())
}

fn msg(v: Value) -> Vec<u8> {
    frame(v.to_string().as_bytes())
}

fn hover_on(id: i32) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": "file:///p/x.coll"}, "position": {"line": 0, "character": 0}}})
}

fn start_and_stop(middle: &[u8]) -> Vec<u8> {
    let mut input = msg(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}),
    );
    input.extend(msg(
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    ));
    input.extend(middle);
    input.extend(msg(
        json!({"jsonrpc": "2.0", "id": 99, "method": "shutdown"}),
    ));
    input.extend(msg(json!({"jsonrpc": "2.0", "method": "exit"})));
    input
}

fn answered(got: &[Value], id: i32) -> bool {
    got.iter()
        .any(|m| m["id"] == id && m.get("method").is_none())
}

#[test]
fn a_content_length_too_long_is_recovered_from() {
    let body = hover_on(2).to_string();
    let mut middle = format!("Content-Length: {}\r\n\r\n{body}", body.len() + 10).into_bytes();
    middle.extend(msg(hover_on(3)));
    let (got, code) = run(&start_and_stop(&middle));
    // The message whose length was wrong is whole: it is served, and so is the next.
    for id in [2, 3, 99] {
        assert!(answered(&got, id), "{id}: {got:#?}");
    }
    assert_eq!(code, Some(0), "{got:#?}");
}

#[test]
fn a_content_length_too_long_by_more_than_a_frame_is_recovered_from() {
    let body = hover_on(2).to_string();
    let mut middle = format!("Content-Length: {}\r\n\r\n{body}", body.len() + 200).into_bytes();
    for id in 3..8 {
        middle.extend(msg(hover_on(id)));
    }
    let (got, code) = run(&start_and_stop(&middle));
    for id in [2, 3, 4, 5, 6, 7, 99] {
        assert!(answered(&got, id), "{id}: {got:#?}");
    }
    assert_eq!(code, Some(0), "{got:#?}");
}

#[test]
fn a_content_length_too_short_without_newlines_is_recovered_from() {
    let body = hover_on(2).to_string();
    let mut middle = format!("Content-Length: 20\r\n\r\n{body}").into_bytes();
    middle.extend(msg(hover_on(3)));
    // Garbage that is not UTF-8 where a header should be.
    middle.extend(b"\xff\xfe\x00garbage\r\n");
    middle.extend(msg(hover_on(4)));
    let (got, code) = run(&start_and_stop(&middle));
    let parse_errors = got
        .iter()
        .filter(|m| m["error"]["code"] == -32700 && m["id"].is_null())
        .count();
    // The cut body, the rest of it where a header should be, and the garbage.
    assert_eq!(parse_errors, 3, "{got:#?}");
    for id in [3, 4, 99] {
        assert!(answered(&got, id), "{id}: {got:#?}");
    }
    assert!(!answered(&got, 2), "{got:#?}");
    assert_eq!(code, Some(0), "{got:#?}");
}

#[test]
fn ids_json_rpc_does_not_allow_are_invalid_requests() {
    let mut middle = Vec::new();
    for id in [json!({"a": 1}), json!([1]), json!(true), json!(null)] {
        middle.extend(msg(
            json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": {}}),
        ));
    }
    // A number collc cannot echo as an id: the error names it.
    middle.extend(msg(
        json!({"jsonrpc": "2.0", "id": 1.5, "method": "shutdown"}),
    ));
    let (got, code) = run(&start_and_stop(&middle));
    let invalid: Vec<&Value> = got
        .iter()
        .filter(|m| m["error"]["code"] == -32600)
        .map(|m| &m["id"])
        .collect();
    assert_eq!(
        invalid,
        [
            &Value::Null,
            &Value::Null,
            &Value::Null,
            &Value::Null,
            &json!(1.5)
        ],
        "{got:#?}"
    );
    assert!(answered(&got, 99), "{got:#?}");
    assert_eq!(code, Some(0), "{got:#?}");
}

// ------------------------------------------------------------------ the background in process

/// The engine in background mode, driven as `collc lsp`'s loop drives it.
struct Background {
    engine: collc::lsp::Engine,
    done: crossbeam_channel::Receiver<collc::lsp::worker::Done>,
    published: Vec<Value>,
}

impl Background {
    fn new() -> Background {
        use lsp_server::{Message, Request};
        let mut engine = collc::lsp::Engine::default();
        let done = engine.check_in_background();
        let init = Request::new(1.into(), "initialize".into(), json!({"capabilities": {}}));
        engine.handle(Message::Request(init));
        Background {
            engine,
            done,
            published: Vec::new(),
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        use lsp_server::{Message, Notification};
        let out = self.engine.handle(Message::Notification(Notification::new(
            method.into(),
            params,
        )));
        self.keep(out);
        let out = self.engine.idle();
        self.keep(out);
    }

    fn keep(&mut self, out: Vec<lsp_server::Message>) {
        for m in out {
            if let lsp_server::Message::Notification(n) = m {
                self.published.push(n.params);
            }
        }
    }

    /// Takes finished checks until `uri`'s `version` is published; returns its codes.
    fn wait_for(&mut self, uri: &str, version: i64) -> Vec<String> {
        loop {
            if let Some(p) = self
                .published
                .iter()
                .find(|p| p["uri"] == uri && p["version"] == version)
            {
                return p["diagnostics"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|d| d["code"].as_str().unwrap_or("").to_string())
                            .collect()
                    })
                    .unwrap_or_default();
            }
            let done = self.done.recv_timeout(PATIENCE).expect("a check finishes");
            let out = self.engine.finished(done);
            self.keep(out);
        }
    }
}

#[test]
fn background_checks_publish_the_latest_version_and_report_failures() {
    let mut b = Background::new();
    b.engine.inject_fault("boom");
    let uri = "file:///p/bg.coll";
    b.notify(
        "textDocument/didOpen",
        json!({"textDocument": {
        "uri": uri, "languageId": "coll", "version": 1, "text": "let a = bogus;\n"}}),
    );
    b.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"text": "let a = bogus; // boom\n"}]}),
    );
    // The first version's check, if it finished, came after the change: it is dropped.
    assert_eq!(b.wait_for(uri, 2), ["E0048"], "{:#?}", b.published);
    b.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3},
        "contentChanges": [{"text": "let a = bogus;\n"}]}),
    );
    assert_eq!(b.wait_for(uri, 3), ["E0003"], "{:#?}", b.published);
    let versions: Vec<&Value> = b.published.iter().map(|p| &p["version"]).collect();
    assert_eq!(versions, [&json!(2), &json!(3)], "{:#?}", b.published);
}

#[test]
fn more_documents_than_workers_are_all_checked_once() {
    let mut b = Background::new();
    let n = collc::lsp::worker::MAX_RUNNING + 3;
    let text = "topology t {\n    compute h[2];\n    for i in 0..20000 { let x = i; }\n    link h[0] <-> h[1] : 1 GB/s;\n}\ncollective allreduce { count: 8; }\n";
    for i in 0..n {
        b.notify("textDocument/didOpen", json!({"textDocument": {
            "uri": format!("file:///p/d{i}.coll"), "languageId": "coll", "version": 1, "text": text}}));
    }
    for i in 0..n {
        assert_eq!(
            b.wait_for(&format!("file:///p/d{i}.coll"), 1),
            Vec::<String>::new()
        );
    }
    assert_eq!(b.published.len(), n, "{:#?}", b.published);
}
