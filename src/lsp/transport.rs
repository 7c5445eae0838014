//! The stdio transport of `collc lsp`: LSP's base protocol (`Content-Length` headers and JSON
//! bodies) read from standard input and written to standard output, with the engine behind an
//! in-memory [`Connection`].
//!
//! lsp-server's own stdio reader ends the server on the first malformed message and allocates
//! whatever `Content-Length` claims. This one reads with [`framing`](super::framing), which
//! answers what it cannot read, as JSON-RPC asks, and finds the next message after a wrong
//! `Content-Length`; the answers are written here, between the engine's messages.

use super::framing::{Frame, Input, read_frames};
use lsp_server::Connection;
use std::io::Write;
use std::sync::{Arc, Mutex};

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
        let mut input = Input::new(stdin.lock());
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
