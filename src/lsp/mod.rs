//! `collc lsp`: the language server, on the same front end as the command line.
//!
//! Diagnostics are the checker's own ([`crate::sema::check`], converted by
//! [`requests::diagnostics`]), so the editor and `collc check` never disagree; hover, go to
//! definition, references, document symbols and completion work from the parsed trees through
//! the name [`index`]; formatting is `collc fmt` ([`crate::fmt::format_source`]).
//!
//! Layout, after nickel's `lsp/nls`:
//! - [`engine`]: the server without its transport (tests drive it in process);
//! - [`documents`]: open documents, their versions and published diagnostics;
//! - [`analysis`]: one checked version of a document, with its trees and index;
//! - [`index`]: declarations and uses of names; [`describe`]: words for hover and completion;
//! - [`requests`]: one file per request;
//! - [`text`] and [`uri`]: positions (UTF-16) and addresses (`file:` URIs, stdlib files);
//! - [`worker`]: checks on threads of their own, cancelled when superseded;
//! - [`framing`]: the base protocol's frames, answering malformed messages (-32700, -32600)
//!   instead of exiting and finding the next message after a wrong `Content-Length`;
//! - [`transport`]: the frames on stdio.
//!
//! This module is the message loop over lsp-server's [`Connection`]: messages go to the engine in
//! order; whenever no message is waiting, the engine starts checks of what changed, so a burst
//! of edits is checked once. Checks run in the background and their results come back through
//! the same loop, so a document that takes seconds to check holds up nothing but the requests
//! about itself.

pub mod analysis;
pub mod describe;
pub mod documents;
pub mod engine;
pub mod framing;
pub mod index;
pub mod requests;
pub mod text;
pub mod transport;
pub mod uri;
pub mod worker;

pub use engine::Engine;

use lsp_server::{Connection, Message};

/// Serves LSP on standard input and output until the client sends `exit`; returns the process
/// exit code (0 after an orderly `shutdown`, 1 otherwise, 2 if the transport failed).
pub fn run_stdio() -> i32 {
    transport::run_stdio(Engine::default())
}

/// Runs `engine` over a connection until `exit` (or until the client goes away), checking in
/// the background.
pub fn serve(connection: &Connection, mut engine: Engine) -> i32 {
    let done = engine.check_in_background();
    let send = |m: Message| connection.sender.send(m).is_ok();
    loop {
        // The client's messages first: a change that supersedes a finished check is seen before
        // the check is published.
        let out = crossbeam_channel::select_biased! {
            recv(connection.receiver) -> msg => match msg {
                Ok(msg) => engine.handle(msg),
                // The client closed the stream without `exit`.
                Err(_) => return 1,
            },
            recv(done) -> d => match d {
                Ok(d) => engine.finished(d),
                Err(_) => Vec::new(),
            },
        };
        for m in out {
            if !send(m) {
                return 2;
            }
        }
        if engine.exited() {
            return engine.exit_code();
        }
        if connection.receiver.is_empty() {
            for out in engine.idle() {
                if !send(out) {
                    return 2;
                }
            }
        }
    }
}
