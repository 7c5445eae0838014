//! Checking off the message loop: a document's analysis runs on a thread of its own, so that a
//! file that takes seconds to elaborate does not hold up requests about other documents,
//! `$/cancelRequest`, `shutdown` or `exit`.
//!
//! [`Workers`] keeps at most one running check per document, and at most [`MAX_RUNNING`] in
//! all (each check of a topology at the limits holds some hundred megabytes; a client that opens
//! fifty such files must not hold fifty at once): the others wait for a free worker. When the document changes while
//! its check runs, the engine cancels that check ([`sema::Options::cancel`], which the
//! elaborator polls at every loop iteration) and starts one for the latest version once the
//! cancelled one has reported back; the result of a version that is no longer current is
//! dropped. So a document's diagnostics are published in version order, each set the checker's
//! deterministic output for that version.
//!
//! A [`Job`] also runs inline ([`Job::run`]): the engine does that when it is driven in process
//! (tests, benchmarks) or when no thread can be started.

use super::analysis::Analysis;
use crate::sema;
use crossbeam_channel::{Receiver, Sender};
use lsp_types::Uri;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The most checks that run at once.
pub const MAX_RUNNING: usize = 4;

/// One check to make: one revision of one document.
pub struct Job {
    pub uri: Uri,
    pub revision: u64,
    /// The name the document is checked under ([`super::uri::source_name`]).
    pub name: String,
    pub text: String,
    pub version: i32,
    pub opts: sema::Options,
    /// Panic instead of checking ([`super::Engine::inject_fault`]).
    pub fault: bool,
}

/// What a check gave.
pub enum Outcome {
    Checked(Box<Analysis>),
    /// Checking panicked (a bug in collc).
    Failed,
    /// Stopped because a newer version superseded it; nothing to publish.
    Cancelled,
}

/// A finished job.
pub struct Done {
    pub uri: Uri,
    pub revision: u64,
    pub outcome: Outcome,
}

impl Job {
    /// Checks the document on the calling thread.
    pub fn run(self) -> Done {
        let cancel = self.opts.cancel.clone();
        let is_cancelled = || cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed));
        let outcome = match catch_unwind(AssertUnwindSafe(|| {
            assert!(!self.fault, "an injected fault");
            Analysis::new(&self.name, &self.text, self.version, &self.opts)
        })) {
            // A cancelled check stopped part way: its diagnostics would be incomplete.
            _ if is_cancelled() => Outcome::Cancelled,
            Ok(a) => Outcome::Checked(Box::new(a)),
            Err(_) => Outcome::Failed,
        };
        Done {
            uri: self.uri,
            revision: self.revision,
            outcome,
        }
    }
}

/// The checks running in the background, by document.
pub struct Workers {
    done: Sender<Done>,
    running: BTreeMap<String, Running>,
}

struct Running {
    revision: u64,
    cancel: Arc<AtomicBool>,
}

impl Workers {
    /// No checks yet, and the channel their results arrive on.
    pub fn new() -> (Workers, Receiver<Done>) {
        let (done, results) = crossbeam_channel::unbounded();
        let w = Workers {
            done,
            running: BTreeMap::new(),
        };
        (w, results)
    }

    /// The revision being checked for `uri`, if a check runs.
    pub fn running(&self, uri: &Uri) -> Option<u64> {
        self.running.get(uri.as_str()).map(|r| r.revision)
    }

    /// Whether [`MAX_RUNNING`] checks run: the next must wait for one to finish.
    pub fn busy(&self) -> bool {
        self.running.len() >= MAX_RUNNING
    }

    /// Starts `job` on a thread of its own; if no thread can be started, runs it here and
    /// returns the result instead.
    pub fn start(&mut self, mut job: Job) -> Option<Done> {
        let cancel = Arc::new(AtomicBool::new(false));
        job.opts.cancel = Some(cancel.clone());
        let key = job.uri.as_str().to_string();
        let revision = job.revision;
        let done = self.done.clone();
        // The job comes back if the thread cannot be started.
        let slot = Arc::new(std::sync::Mutex::new(Some(job)));
        let theirs = slot.clone();
        let spawned = std::thread::Builder::new()
            .name("collc-lsp-check".into())
            .spawn(move || {
                let job = theirs.lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some(job) = job {
                    // The receiver lives as long as the server; a failed send means it exited.
                    let _ = done.send(job.run());
                }
            });
        match spawned {
            Ok(_) => {
                self.running.insert(key, Running { revision, cancel });
                None
            }
            Err(_) => {
                let job = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
                job.map(Job::run)
            }
        }
    }

    /// Asks the check of `uri` to stop, if one runs; it still reports back.
    pub fn cancel(&self, uri: &Uri) {
        if let Some(r) = self.running.get(uri.as_str()) {
            r.cancel.store(true, Ordering::Relaxed);
        }
    }

    /// Asks every running check to stop (the server is exiting).
    pub fn cancel_all(&self) {
        for r in self.running.values() {
            r.cancel.store(true, Ordering::Relaxed);
        }
    }

    /// Forgets the check that produced `done`.
    pub fn finished(&mut self, done: &Done) {
        let key = done.uri.as_str();
        if self
            .running
            .get(key)
            .is_some_and(|r| r.revision == done.revision)
        {
            self.running.remove(key);
        }
    }
}
