//! The engine: the whole server without its transport, so that tests drive it in process (as
//! gleam's language server is tested).
//!
//! [`Engine::handle`] takes one JSON-RPC message and returns the messages to send back; changes
//! only mark documents dirty. [`Engine::idle`] checks the dirty documents and returns their
//! `publishDiagnostics` notifications; the stdio loop calls it whenever no message is waiting,
//! so a burst of keystrokes is checked once. Requests check the document first if it changed.
//!
//! Driven by the stdio loop, the engine checks in the background instead ([`background`]): a
//! request about a document whose check has not finished waits for it while other messages are
//! handled.
//!
//! Every request runs under `catch_unwind`: a panic in collc becomes an internal-error response
//! and the server carries on. A request about a document the client never opened answers
//! `InvalidParams`; a request that needs the document to parse (formatting) answers with an
//! empty result instead of an error.

use super::analysis::Analysis;
use super::documents::{Document, Documents};
use super::requests::diagnostics::{self, DocDiag};
use super::requests::{self, ClientCaps, ReqError};
use super::uri::{self, StdlibFiles};
use super::worker::{Job, Outcome, Workers};
use crate::diag::Severity;
use crate::sema;
use lsp_server::{ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{self as notif, Notification as _};
use lsp_types::request::{self as req, Request as _};
use lsp_types::{
    InitializeParams, InitializeResult, PublishDiagnosticsParams, ServerCapabilities, ServerInfo,
    Uri,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

mod background;

/// The language server's state.
pub struct Engine {
    pub(crate) docs: Documents,
    pub(crate) caps: ClientCaps,
    pub(crate) stdlib: StdlibFiles,
    opts: sema::Options,
    initialized: bool,
    shutting_down: bool,
    exit: bool,
    /// Documents closed since the last [`Engine::idle`]: their diagnostics are cleared.
    closed: Vec<Uri>,
    /// Text that makes checking panic ([`Engine::inject_fault`]).
    fault: Option<String>,
    /// The last revision number given to a document: a document's revisions are never reused,
    /// not even after it is closed and opened again, so a background check is never mistaken
    /// for the check of another text.
    clock: u64,
    /// The background checks, once [`Engine::check_in_background`] was called.
    workers: Option<Workers>,
    /// Requests waiting for a background check, in the order they came.
    parked: Vec<background::Parked>,
}

/// The topology limits while typing: a tenth of the command line's, so that a few lines that
/// generate millions of links are refused (E0018) in well under a second instead of blocking the
/// editor for seconds at every keystroke.
pub const LSP_LIMITS: crate::sema::elab::Limits = crate::sema::elab::Limits {
    max_nodes: 100_000,
    max_links: 400_000,
    max_iterations: 2_000_000,
    max_depth: 32,
    max_ops: crate::sema::elab::Limits::MAX_OPS,
    max_slots: crate::sema::elab::Limits::MAX_SLOTS,
    max_events: crate::sema::elab::Limits::MAX_EVENTS,
    max_packets: crate::sema::elab::Limits::MAX_PACKETS,
};

impl Default for Engine {
    fn default() -> Self {
        Engine::new(StdlibFiles::new(None))
    }
}

impl Engine {
    /// An engine that writes standard library files through `stdlib`.
    pub fn new(stdlib: StdlibFiles) -> Engine {
        Engine {
            docs: Documents::default(),
            caps: ClientCaps::default(),
            stdlib,
            opts: sema::Options {
                limits: LSP_LIMITS,
                ..sema::Options::default()
            },
            initialized: false,
            shutting_down: false,
            exit: false,
            closed: Vec::new(),
            fault: None,
            clock: 0,
            workers: None,
            parked: Vec::new(),
        }
    }

    /// Makes checking panic on every document whose text contains `marker`, as a bug in collc
    /// would: for tests of how the server reports its own failures (E0048).
    #[doc(hidden)]
    pub fn inject_fault(&mut self, marker: &str) {
        self.fault = Some(marker.to_string());
    }

    /// The server's capabilities, as answered to `initialize`.
    pub fn capabilities() -> ServerCapabilities {
        use lsp_types::*;
        ServerCapabilities {
            text_document_sync: Some(TextDocumentSyncCapability::Options(
                TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                    ..Default::default()
                },
            )),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            definition_provider: Some(OneOf::Left(true)),
            references_provider: Some(OneOf::Left(true)),
            document_symbol_provider: Some(OneOf::Left(true)),
            document_formatting_provider: Some(OneOf::Left(true)),
            completion_provider: Some(CompletionOptions {
                trigger_characters: Some(vec![":".into(), "[".into(), " ".into(), ".".into()]),
                ..Default::default()
            }),
            semantic_tokens_provider: Some(
                SemanticTokensServerCapabilities::SemanticTokensOptions(SemanticTokensOptions {
                    legend: requests::semantic_tokens::legend(),
                    full: Some(SemanticTokensFullOptions::Bool(true)),
                    range: None,
                    ..Default::default()
                }),
            ),
            ..Default::default()
        }
    }

    /// True once the client sent `exit`.
    pub fn exited(&self) -> bool {
        self.exit
    }

    /// The exit code the protocol asks for: 0 after `shutdown`, else 1.
    pub fn exit_code(&self) -> i32 {
        if self.shutting_down { 0 } else { 1 }
    }

    /// Handles one message; returns the responses and notifications to send.
    pub fn handle(&mut self, msg: Message) -> Vec<Message> {
        match msg {
            Message::Request(r) => match self.park(r) {
                Ok(r) => vec![Message::Response(self.request(r))],
                Err(out) => out,
            },
            Message::Notification(n) => {
                let method = n.method.clone();
                let cancelled = (method == notif::Cancel::METHOD)
                    .then(|| {
                        serde_json::from_value::<lsp_server::RequestId>(n.params["id"].clone()).ok()
                    })
                    .flatten();
                if catch_unwind(AssertUnwindSafe(|| self.notification(n))).is_err() {
                    eprintln!("collc lsp: internal error while handling {method}; carrying on");
                }
                self.unpark(cancelled)
            }
            Message::Response(_) => Vec::new(),
        }
    }

    fn request(&mut self, r: Request) -> Response {
        let id = r.id.clone();
        if r.method == req::Initialize::METHOD {
            let result = serde_json::from_value::<InitializeParams>(r.params)
                .map(|p| {
                    self.caps = ClientCaps::from(&p.capabilities);
                    self.initialized = true;
                    InitializeResult {
                        capabilities: Engine::capabilities(),
                        server_info: Some(ServerInfo {
                            name: "collc".into(),
                            version: Some(env!("CARGO_PKG_VERSION").into()),
                        }),
                    }
                })
                .map_err(|e| ReqError::invalid_params(format!("bad initialize params: {e}")));
            return respond(id, result);
        }
        if !self.initialized {
            return Response::new_err(
                id,
                ErrorCode::ServerNotInitialized as i32,
                "the server is not initialized".into(),
            );
        }
        if r.method == req::Shutdown::METHOD {
            self.shutting_down = true;
            return Response::new_ok(id, ());
        }
        if self.shutting_down {
            return Response::new_err(
                id,
                ErrorCode::InvalidRequest as i32,
                "the server is shutting down".into(),
            );
        }
        let method = r.method.clone();
        match catch_unwind(AssertUnwindSafe(|| self.dispatch(r))) {
            Ok(resp) => resp,
            Err(_) => Response::new_err(
                id,
                ErrorCode::InternalError as i32,
                format!("collc failed while answering {method}; please report it with the file"),
            ),
        }
    }

    fn dispatch(&mut self, r: Request) -> Response {
        use requests::*;
        match r.method.as_str() {
            req::HoverRequest::METHOD => call::<req::HoverRequest>(self, r, hover::handle),
            req::GotoDefinition::METHOD => call::<req::GotoDefinition>(self, r, definition::handle),
            req::References::METHOD => call::<req::References>(self, r, references::handle),
            req::DocumentSymbolRequest::METHOD => {
                call::<req::DocumentSymbolRequest>(self, r, symbols::handle)
            }
            req::Completion::METHOD => call::<req::Completion>(self, r, completion::handle),
            req::Formatting::METHOD => call::<req::Formatting>(self, r, formatting::handle),
            req::SemanticTokensFullRequest::METHOD => {
                call::<req::SemanticTokensFullRequest>(self, r, semantic_tokens::handle)
            }
            _ => Response::new_err(
                r.id,
                ErrorCode::MethodNotFound as i32,
                format!("collc does not handle {}", r.method),
            ),
        }
    }

    fn notification(&mut self, n: Notification) {
        let method = n.method.clone();
        match method.as_str() {
            notif::Exit::METHOD => {
                self.exit = true;
                if let Some(w) = &self.workers {
                    w.cancel_all();
                }
            }
            notif::DidOpenTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidOpenTextDocumentParams>(n.params)
                {
                    let d = p.text_document;
                    let mut doc = Document::new(d.uri, d.text, d.version);
                    doc.revision = self.tick();
                    self.docs.open(doc);
                }
            }
            notif::DidChangeTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidChangeTextDocumentParams>(n.params)
                {
                    let revision = self.tick();
                    if let Some(d) = self.docs.get_mut(&p.text_document.uri) {
                        d.apply(p.text_document.version, p.content_changes);
                        d.revision = revision;
                    }
                }
            }
            notif::DidSaveTextDocument::METHOD => {
                // A saved file may be imported by other open documents: check them all again.
                let revision = self.tick();
                for d in self.docs.iter_mut() {
                    d.revision = revision;
                    d.dirty = true;
                }
            }
            notif::DidCloseTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidCloseTextDocumentParams>(n.params)
                {
                    if let Some(w) = &self.workers {
                        w.cancel(&p.text_document.uri);
                    }
                    self.docs.close(&p.text_document.uri);
                    self.closed.push(p.text_document.uri);
                }
            }
            _ => {}
        }
    }
}

impl Engine {
    /// A new revision number.
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Checks every changed document and returns its `publishDiagnostics`, and clears the
    /// diagnostics of closed documents. In the background ([`Engine::check_in_background`]) it
    /// starts the checks instead, and [`Engine::finished`] publishes.
    pub fn idle(&mut self) -> Vec<Message> {
        let mut out: Vec<Message> = std::mem::take(&mut self.closed)
            .into_iter()
            .map(|uri| publish(uri, Vec::new(), None))
            .collect();
        for uri in self.docs.dirty() {
            if self.workers.is_some() {
                out.extend(self.schedule(&uri));
            } else if let Some(m) = self.publish_doc(&uri) {
                out.push(m);
            }
        }
        out
    }

    /// The check of the current revision of an open document.
    fn job(&self, uri: &Uri) -> Option<Job> {
        let doc = self.docs.get(uri)?;
        let fault = self.fault.as_deref().is_some_and(|f| doc.text.contains(f));
        Some(Job {
            uri: uri.clone(),
            revision: doc.revision,
            name: uri::source_name(uri.as_str()),
            text: doc.text.clone(),
            version: doc.version,
            opts: self.opts.clone(),
            fault,
        })
    }

    /// Keeps the outcome of a check of the document's current revision.
    fn store(&mut self, uri: &Uri, outcome: Outcome) -> Result<Rc<Analysis>, ReqError> {
        let failed = || {
            ReqError::internal(
                "collc failed while checking this file; please report it with the file",
            )
        };
        let Some(doc) = self.docs.get_mut(uri) else {
            return Err(failed());
        };
        match outcome {
            Outcome::Checked(a) => {
                let a: Rc<Analysis> = Rc::from(a);
                if let Some(c) = a.model.as_ref().and_then(|m| m.collective.as_ref()) {
                    doc.last_ranks = Some(c.ranks.len());
                }
                doc.analysis = Some((doc.revision, a.clone()));
                Ok(a)
            }
            Outcome::Failed | Outcome::Cancelled => {
                doc.failed = Some(doc.revision);
                Err(failed())
            }
        }
    }

    /// The analysis of the document's current text, made now if needed.
    pub(crate) fn analysis(&mut self, uri: &Uri) -> Result<Rc<Analysis>, ReqError> {
        let Some(doc) = self.docs.get(uri) else {
            return Err(ReqError::invalid_params(format!(
                "`{}` is not open: send textDocument/didOpen first",
                uri.as_str()
            )));
        };
        if let Some((rev, a)) = &doc.analysis {
            if *rev == doc.revision {
                return Ok(a.clone());
            }
        }
        if doc.failed == Some(doc.revision) {
            return Err(ReqError::internal(
                "collc failed while checking this file; please report it with the file",
            ));
        }
        // Inline: in process, or (never expected) a request the background did not wait for.
        let outcome = match self.job(uri) {
            Some(job) => job.run().outcome,
            None => Outcome::Failed,
        };
        self.store(uri, outcome)
    }

    /// Checks one document and builds its notification (see `documents` for the rules).
    fn publish_doc(&mut self, uri: &Uri) -> Option<Message> {
        let analysis = self.analysis(uri);
        let converted = match &analysis {
            Ok(a) => {
                let stdlib = &mut self.stdlib;
                catch_unwind(AssertUnwindSafe(|| diagnostics::convert(a, uri, stdlib))).ok()
            }
            Err(_) => None,
        };
        let doc = self.docs.get_mut(uri)?;
        doc.dirty = false;
        let diags: Vec<DocDiag> = match (analysis, converted) {
            (Ok(a), Some(new)) => {
                if a.syntax_errors {
                    let mut all = new;
                    all.extend(doc.carried.iter().cloned());
                    all.sort_by_key(|d| (d.start, d.end));
                    all
                } else {
                    doc.carried = new
                        .iter()
                        .filter(|d| {
                            d.code
                                .is_some_and(|c| sema::HIDDEN_AFTER_SYNTAX_ERRORS.contains(&c))
                        })
                        .cloned()
                        .collect();
                    new
                }
            }
            // Only the failure itself: diagnostics of an earlier version may no longer be true.
            _ => vec![DocDiag {
                start: 0,
                end: 0,
                code: Some(crate::diag::Code::Internal),
                severity: Severity::Error,
                message: "internal compiler error: collc failed while checking this version of the file\nhelp: please report it with the file (`collc explain E0048`)".into(),
                related: Vec::new(),
            }],
        };
        let lsp = diags
            .iter()
            .map(|d| d.to_lsp(&doc.uri, &doc.text, &doc.lines, &self.caps))
            .collect();
        doc.published = diags;
        Some(publish(doc.uri.clone(), lsp, Some(doc.version)))
    }
}

/// Runs a typed handler on a request.
fn call<R>(
    e: &mut Engine,
    r: Request,
    f: fn(&mut Engine, R::Params) -> Result<R::Result, ReqError>,
) -> Response
where
    R: lsp_types::request::Request,
    R::Params: DeserializeOwned,
    R::Result: Serialize,
{
    let id = r.id.clone();
    match serde_json::from_value::<R::Params>(r.params) {
        Ok(p) => respond(id, f(e, p)),
        Err(err) => Response::new_err(
            id,
            ErrorCode::InvalidParams as i32,
            format!("bad parameters for {}: {err}", R::METHOD),
        ),
    }
}

fn respond<T: Serialize>(id: lsp_server::RequestId, r: Result<T, ReqError>) -> Response {
    match r {
        Ok(v) => Response::new_ok(id, v),
        Err(e) => Response::new_err(id, e.code, e.message),
    }
}

fn publish(uri: Uri, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) -> Message {
    Message::Notification(Notification::new(
        notif::PublishDiagnostics::METHOD.to_string(),
        PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        },
    ))
}
