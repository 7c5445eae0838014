//! The engine's background mode: checks run on [`Workers`] while the engine goes on handling
//! messages.
//!
//! - [`Engine::idle`] starts a check for each changed document (or, when an older version of it
//!   is still being checked, cancels that check; the latest version starts when it reports);
//! - [`Engine::finished`] takes a check's result: a result for a version that is no longer
//!   current is dropped, a current one is published and answers the requests waiting for it;
//!   then the checks that waited for a free worker start (those requests wait on first, then
//!   the other changed documents, in URI order);
//! - a request that needs the analysis of a document whose current version is not checked yet
//!   is *parked* until then; if the document changes or closes first it is answered
//!   `ContentModified` (its positions refer to a text that is gone), and `$/cancelRequest`
//!   answers it `RequestCanceled`.

use super::{Engine, Uri};
use crate::lsp::documents::Document;
use crate::lsp::worker::{Done, Outcome, Workers};
use crossbeam_channel::Receiver;
use lsp_server::{ErrorCode, Message, Request, RequestId, Response};
use lsp_types::request::{self as req, Request as _};
use std::str::FromStr;

/// A request waiting for a check.
pub(crate) struct Parked {
    uri: Uri,
    /// The document's revision when the request came.
    revision: u64,
    request: Request,
}

/// Requests answered from a document's analysis.
const NEEDS_ANALYSIS: &[&str] = &[
    req::HoverRequest::METHOD,
    req::GotoDefinition::METHOD,
    req::References::METHOD,
    req::DocumentSymbolRequest::METHOD,
    req::Completion::METHOD,
    req::SemanticTokensFullRequest::METHOD,
];

/// Whether the document's current revision is checked (or failed to check).
fn settled(doc: &Document) -> bool {
    doc.failed == Some(doc.revision)
        || doc
            .analysis
            .as_ref()
            .is_some_and(|(r, _)| *r == doc.revision)
}

impl Engine {
    /// Switches to checking in the background; returns the channel that finished checks arrive
    /// on, each to be given to [`Engine::finished`].
    pub fn check_in_background(&mut self) -> Receiver<Done> {
        let (workers, done) = Workers::new();
        self.workers = Some(workers);
        done
    }

    /// Takes a finished check; returns the diagnostics to publish and the answers to the
    /// requests that waited for it.
    pub fn finished(&mut self, done: Done) -> Vec<Message> {
        if let Some(w) = &mut self.workers {
            w.finished(&done);
        }
        let uri = done.uri.clone();
        let current = self
            .docs
            .get(&uri)
            .is_some_and(|d| d.revision == done.revision);
        let mut out = Vec::new();
        // A superseded result is dropped (the latest version is checked by `resume`); a
        // failure is kept too, and published as E0048.
        if current && !matches!(done.outcome, Outcome::Cancelled) {
            let _ = self.store(&uri, done.outcome);
            out.extend(self.settle(&uri));
        }
        if !self.exit {
            out.extend(self.resume());
        }
        out
    }

    /// Starts the checks that wait for a free worker.
    fn resume(&mut self) -> Vec<Message> {
        let mut uris: Vec<Uri> = self.parked.iter().map(|p| p.uri.clone()).collect();
        uris.extend(self.docs.dirty());
        let mut out = Vec::new();
        for uri in uris {
            out.extend(self.schedule(&uri));
        }
        out
    }

    /// Parks `r` if it must wait for a check; gives it back if it can be answered now.
    pub(super) fn park(&mut self, r: Request) -> Result<Request, Vec<Message>> {
        if self.workers.is_none()
            || !self.initialized
            || self.shutting_down
            || !NEEDS_ANALYSIS.contains(&r.method.as_str())
        {
            return Ok(r);
        }
        let uri = r.params["textDocument"]["uri"]
            .as_str()
            .and_then(|u| Uri::from_str(u).ok());
        let Some(uri) = uri else {
            return Ok(r);
        };
        let Some(doc) = self.docs.get(&uri) else {
            return Ok(r);
        };
        if settled(doc) {
            return Ok(r);
        }
        let revision = doc.revision;
        self.parked.push(Parked {
            uri: uri.clone(),
            revision,
            request: r,
        });
        Err(self.schedule(&uri))
    }

    /// Answers the parked requests the client cancelled (`cancelled`) or whose document changed
    /// or closed since they came.
    pub(super) fn unpark(&mut self, cancelled: Option<RequestId>) -> Vec<Message> {
        let mut out = Vec::new();
        let parked = std::mem::take(&mut self.parked);
        for p in parked {
            let answer = if cancelled.as_ref() == Some(&p.request.id) {
                Some((ErrorCode::RequestCanceled, "cancelled by the client"))
            } else if self
                .docs
                .get(&p.uri)
                .is_none_or(|d| d.revision != p.revision)
            {
                Some((
                    ErrorCode::ContentModified,
                    "the document changed before the answer was ready",
                ))
            } else {
                None
            };
            match answer {
                Some((code, why)) => out.push(Message::Response(Response::new_err(
                    p.request.id,
                    code as i32,
                    why.into(),
                ))),
                None => self.parked.push(p),
            }
        }
        out
    }

    /// Makes sure the current revision of `uri` is being checked; publishes and answers at once
    /// if it already is checked.
    pub(super) fn schedule(&mut self, uri: &Uri) -> Vec<Message> {
        let Some(doc) = self.docs.get(uri) else {
            return Vec::new();
        };
        if settled(doc) {
            return self.settle(uri);
        }
        let revision = doc.revision;
        let Some(w) = &self.workers else {
            return Vec::new();
        };
        match w.running(uri) {
            Some(r) if r == revision => Vec::new(),
            Some(_) => {
                w.cancel(uri);
                Vec::new()
            }
            // Started when a check finishes.
            None if w.busy() => Vec::new(),
            None => {
                let started = self.job(uri).and_then(|job| {
                    let w = self.workers.as_mut()?;
                    w.start(job)
                });
                match started {
                    // No thread could be started: checked here instead.
                    Some(done) => self.finished(done),
                    None => Vec::new(),
                }
            }
        }
    }

    /// Publishes the diagnostics of `uri`'s checked revision if they are due, and answers the
    /// requests parked on it.
    fn settle(&mut self, uri: &Uri) -> Vec<Message> {
        let mut out = Vec::new();
        if self.docs.get(uri).is_some_and(|d| d.dirty) {
            out.extend(self.publish_doc(uri));
        }
        let parked = std::mem::take(&mut self.parked);
        let (now, later): (Vec<Parked>, Vec<Parked>) =
            parked.into_iter().partition(|p| p.uri == *uri);
        self.parked = later;
        for p in now {
            out.push(Message::Response(self.request(p.request)));
        }
        out
    }
}
