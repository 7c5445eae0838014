//! Running a job with the interpreter released and Ctrl-C honoured.
//!
//! The job runs on a worker thread of its own while the calling thread, detached from the
//! interpreter, waits for it and wakes every [`TICK`] to run Python's signal handlers
//! (`PyErr_CheckSignals`, which only the main thread can do). When a handler raises (Ctrl-C's
//! `KeyboardInterrupt`), the job's cancel flag is set, so the driver stops at its next check,
//! and the exception is raised once the job has returned. A second Ctrl-C while it winds down
//! raises at once and leaves the worker to finish on its own (its result is dropped). Other
//! Python threads meanwhile run freely: a job holds no Python state.

use pyo3::panic::PanicException;
use pyo3::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often a waiting caller looks for signals.
pub const TICK: Duration = Duration::from_millis(50);

/// The worker's stack: the command line's compiler thread's (`src/cli/mod.rs`), since
/// elaboration recurses over the (depth-limited) syntax tree and the solver and lowerings run
/// deep; reserved, not committed, until used.
const STACK: usize = 256 << 20;

/// A fresh cancel flag.
pub fn flag() -> Arc<AtomicBool> {
    Arc::new(AtomicBool::new(false))
}

/// Runs `job` on a worker thread, releasing the interpreter while it runs; sets `cancel` and
/// raises the signal handler's exception (`KeyboardInterrupt`) when one raises. A panic in the
/// job becomes a `PanicException`.
pub fn run<T: Send + 'static>(
    py: Python<'_>,
    cancel: &Arc<AtomicBool>,
    job: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    let waiter = std::thread::current();
    let worker = std::thread::Builder::new()
        .name("collc".into())
        .stack_size(STACK)
        .spawn(move || {
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            waiter.unpark();
            out
        })
        .map_err(PyErr::from)?;
    let mut interrupted: Option<PyErr> = None;
    while !worker.is_finished() {
        py.detach(|| std::thread::park_timeout(TICK));
        if let Err(e) = py.check_signals() {
            if interrupted.is_some() {
                // A second interrupt: stop waiting for the job to notice the first.
                return Err(e);
            }
            cancel.store(true, Ordering::SeqCst);
            interrupted = Some(e);
        }
    }
    let out = worker
        .join()
        .unwrap_or_else(|p| Err(p))
        .map_err(|p| PanicException::new_err(panic_message(&*p)))?;
    match interrupted {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The message a panic carried.
fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    let what = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into());
    format!("collc failed (a bug; please report it): {what}")
}
