//! Where the command line's output goes: standard output, or a file written atomically (a
//! temporary file beside it, renamed over it only once everything is written), so that collc
//! never leaves a partial output file behind.
//!
//! `-o` behaves like a shell redirection where rename would do harm: a symbolic link is
//! followed (the link stays, its target is replaced), and an existing path that is not a
//! regular file or directory (`/dev/null`, `/dev/stdout`, a FIFO, a socket) is written into
//! directly. Renaming over such a path would replace the device with a regular file: run as
//! root, `collc build -o /dev/null` used to turn `/dev/null` into a file for every program on
//! the machine.
//!
//! A temporary is named `.NAME.collc-tmp-PID`; [`temps`] owns them: SIGINT, SIGTERM and SIGHUP
//! remove those being written, and the next write of the same output removes those a killed
//! process left.
//!
//! Diagnostics go to standard error ([`Out`]), errors and warnings counted apart, each batch
//! rendered into memory and written at once. Nothing here panics when standard output or error
//! cannot be written (a full disk, a closed pipe): a lost standard output is E0029 and exit 2,
//! and when standard error itself is lost, [`stderr_lost`] tells `cli::main` to exit 2.

use super::{ErrorFormat, streams};
use crate::diag::{Code, Diagnostic, Severity, SourceMap, render};
use crate::driver::write_atomic;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

static STDERR_LOST: AtomicBool = AtomicBool::new(false);

/// Whether something collc had to say could not be written to standard error.
pub(crate) fn stderr_lost() -> bool {
    STDERR_LOST.load(Ordering::Relaxed)
}

/// Writes `text` to standard error; a failure is remembered ([`stderr_lost`]), never a panic.
pub(crate) fn say(text: &str) {
    write_stderr(text.as_bytes());
}

/// Writes `bytes` to standard error at once; a failure, or a standard error the shell closed,
/// is remembered ([`stderr_lost`]).
fn write_stderr(bytes: &[u8]) {
    let mut err = std::io::stderr().lock();
    if streams::stderr_closed() || err.write_all(bytes).and_then(|()| err.flush()).is_err() {
        STDERR_LOST.store(true, Ordering::Relaxed);
    }
}

/// Writes `bytes` to standard output; a failure (E0029, exit 2) is reported on standard error.
pub(crate) fn write_stdout(bytes: &[u8]) -> i32 {
    let written = super::progress::clear(|| {
        if streams::stdout_closed() {
            return Err(streams::closed_error());
        }
        let mut out = std::io::stdout().lock();
        out.write_all(bytes).and_then(|()| out.flush())
    });
    match written {
        Ok(()) => 0,
        Err(e) => {
            say(&format!(
                "error[{}]: cannot write to standard output: {e}\n",
                Code::Io
            ));
            2
        }
    }
}

/// Writes `bytes` to `path` atomically (temporary file and rename), or to stdout.
pub(crate) fn write_output(path: Option<&Path>, bytes: &[u8]) -> i32 {
    match path {
        None => write_stdout(bytes),
        Some(p) => match write_atomic(p, bytes) {
            Ok(()) => 0,
            Err(e) => {
                say(&format!(
                    "error[{}]: cannot write `{}`: {e}\n",
                    Code::Io,
                    p.display()
                ));
                2
            }
        },
    }
}

/// How diagnostics are printed (`--error-format`, `--color`).
pub(super) struct Out {
    pub format: ErrorFormat,
    pub color: bool,
}

impl Out {
    /// Prints what made a driver job fail: an output it could not write as one line (E0029),
    /// anything else as diagnostics.
    pub fn failure(&self, f: &crate::driver::Failure) {
        if f.is_io() && f.diagnostics.iter().all(|d| d.code == Code::Io) {
            for d in &f.diagnostics {
                say(&format!("error[{}]: {}\n", d.code, d.message));
            }
        } else {
            self.diags(&f.diagnostics, &f.files);
        }
    }

    /// Prints diagnostics on standard error, then (for people) how many errors and warnings.
    /// A diagnostic that two stages found alike (same code, place and message: the report's
    /// forest section and its MSCCL section both warn of the same `chunks`) is printed once, in
    /// its first place, with the notes of the one that says most.
    pub fn diags(&self, diags: &[Diagnostic], files: &SourceMap) {
        if diags.is_empty() {
            return;
        }
        let once = crate::diag::once_per_cause(diags);
        super::progress::clear(|| self.print(&once, files));
    }

    fn print(&self, diags: &[Diagnostic], files: &SourceMap) {
        let text = match self.format {
            ErrorFormat::Json => render::to_json_lines(diags, files).into_bytes(),
            ErrorFormat::Human => {
                let mut text = render::to_bytes(diags, files, self.color);
                let n = diags
                    .iter()
                    .filter(|d| d.severity == Severity::Error)
                    .count();
                let w = diags.len() - n;
                let plural = |k: usize| if k == 1 { "" } else { "s" };
                let total = match (n, w) {
                    (0, w) => format!("{w} warning{} emitted\n", plural(w)),
                    (n, 0) => format!("{n} error{} found\n", plural(n)),
                    (n, w) => format!(
                        "{n} error{} and {w} warning{} found\n",
                        plural(n),
                        plural(w)
                    ),
                };
                text.extend_from_slice(total.as_bytes());
                text
            }
        };
        write_stderr(&text);
    }
}
