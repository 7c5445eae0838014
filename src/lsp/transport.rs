//! The stdio transport of `collc lsp`: LSP's base protocol (`Content-Length` headers and JSON
//! bodies) read from standard input and written to standard output, with the engine behind an
//! in-memory [`Connection`].
//!
//! lsp-server's own stdio reader ends the server on the first malformed message and allocates
//! whatever `Content-Length` claims. This one answers what it cannot read, as JSON-RPC asks, and
//! goes on: a body that is not JSON gets a `-32700` (parse error) response with a null id, JSON
//! that is not a request, response or notification a `-32600` (invalid request), a header it
//! cannot read a `-32700` after which it skips to the next `Content-Length` line, and a length
//! over [`MAX_BODY`] a `-32700` while the body is skipped without being stored.

use lsp_server::{Connection, Message};
use std::io::{BufRead, Read, Write};
use std::sync::{Arc, Mutex};

/// The largest body read into memory (a document of 64 MiB is far beyond what collc checks).
pub const MAX_BODY: usize = 64 << 20;

/// One frame of input.
enum Frame {
    Message(Message),
    /// What to answer instead: (code, message, id).
    Bad(i64, String, serde_json::Value),
}

/// Serves on standard input and output; the exit code as [`super::serve`] gives it.
pub fn run_stdio(engine: super::Engine) -> i32 {
    let (server, client) = Connection::memory();
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let writer_out = out.clone();
    // The first write to standard output that failed, reported (E0029, exit 2) at the end.
    let lost: Arc<Mutex<Option<std::io::Error>>> = Arc::default();
    let (writer_lost, reader_lost) = (lost.clone(), lost.clone());
    let client_receiver = client.receiver;
    let writer = std::thread::spawn(move || {
        for m in client_receiver {
            let mut o = writer_out.lock().unwrap_or_else(|e| e.into_inner());
            if let Err(e) = m.write(&mut *o) {
                lose(&writer_lost, e);
                return;
            }
        }
    });
    let sender = client.sender;
    // The reader is not joined: it may be blocked on standard input when the server exits.
    let _reader = std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        loop {
            let frames = match read_frames(&mut input) {
                Ok(Some(f)) => f,
                Ok(None) | Err(_) => return,
            };
            for frame in frames {
                match frame {
                    Frame::Message(m) => {
                        if sender.send(m).is_err() {
                            return;
                        }
                    }
                    Frame::Bad(code, message, id) => {
                        let body = serde_json::json!({
                            "jsonrpc": "2.0",
                            "id": id,
                            "error": { "code": code, "message": message },
                        })
                        .to_string();
                        let mut o = out.lock().unwrap_or_else(|e| e.into_inner());
                        let written = write!(o, "Content-Length: {}\r\n\r\n{body}", body.len())
                            .and_then(|()| o.flush());
                        if let Err(e) = written {
                            lose(&reader_lost, e);
                            return;
                        }
                    }
                }
            }
        }
    });
    let code = super::serve(&server, engine);
    drop(server);
    if writer.join().is_err() {
        return 2;
    }
    let lost = lost.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(e) = lost {
        let _ = writeln!(
            std::io::stderr(),
            "error[{}]: cannot write to standard output: {e}",
            crate::diag::Code::Io
        );
        return 2;
    }
    code
}

/// Remembers `e` unless an earlier failure is already remembered.
fn lose(lost: &Mutex<Option<std::io::Error>>, e: std::io::Error) {
    lost.lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert(e);
}

/// Reads the next frame, and before it an answer to the garbage skipped to reach it; `None` at
/// the end of the input.
fn read_frames(r: &mut impl BufRead) -> std::io::Result<Option<Vec<Frame>>> {
    let mut out = Vec::new();
    let mut size: Option<usize> = None;
    let mut line = String::new();
    let bad = |why: String| Frame::Bad(-32700, why, serde_json::Value::Null);
    loop {
        line.clear();
        // Header lines are short; a "line" of megabytes is garbage, read in bounded pieces.
        if r.by_ref().take(4096).read_line(&mut line)? == 0 {
            return Ok((!out.is_empty()).then_some(out));
        }
        let l = line.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            if size.is_some() {
                break;
            }
            continue;
        }
        match l.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                size = value.trim().parse::<usize>().ok();
                if size.is_none() && out.is_empty() {
                    out.push(bad(format!(
                        "bad Content-Length `{}`",
                        shorten(value.trim())
                    )));
                }
            }
            Some((name, _)) if name.trim().eq_ignore_ascii_case("content-type") => {}
            _ => {
                // Not a header: one answer, then skip to the next `Content-Length` line.
                if out.is_empty() {
                    out.push(bad(format!("malformed header `{}`", shorten(l))));
                }
                size = None;
            }
        }
    }
    let size = size.unwrap_or(0);
    if size > MAX_BODY {
        std::io::copy(&mut r.by_ref().take(size as u64), &mut std::io::sink())?;
        out.push(bad(format!(
            "a body of {size} bytes is more than collc reads ({MAX_BODY})"
        )));
        return Ok(Some(out));
    }
    let mut body = vec![0u8; size];
    r.read_exact(&mut body)?;
    out.push(parse(&body));
    Ok(Some(out))
}

/// A body as a message, or what to answer.
fn parse(body: &[u8]) -> Frame {
    let value: serde_json::Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return Frame::Bad(-32700, format!("parse error: {e}"), serde_json::Value::Null),
    };
    let id = value.get("id").cloned().unwrap_or(serde_json::Value::Null);
    match serde_json::from_value::<Message>(value) {
        Ok(m) => Frame::Message(m),
        Err(e) => Frame::Bad(-32600, format!("invalid request: {e}"), id),
    }
}

fn shorten(s: &str) -> String {
    let mut t: String = s.chars().take(60).collect();
    if t.len() < s.len() {
        t.push_str("...");
    }
    t
}
