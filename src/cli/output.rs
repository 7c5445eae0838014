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
//! A temporary is named `.NAME.collc-tmp-PID`. SIGINT, SIGTERM and SIGHUP remove the temporaries
//! being written before collc exits ([`install_signal_cleanup`]); temporaries of processes that
//! no longer run (killed with SIGKILL) are removed by the next write of the same output.
//!
//! Diagnostics go to standard error ([`Out`]), errors and warnings counted apart, each batch
//! rendered into memory and written at once. Nothing here panics when standard output or error
//! cannot be written (a full disk, a closed pipe): a lost standard output is E0029 and exit 2,
//! and when standard error itself is lost, [`stderr_lost`] tells `cli::main` to exit 2.

use super::ErrorFormat;
use crate::diag::{Code, Diagnostic, Severity, SourceMap, render};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

static STDERR_LOST: AtomicBool = AtomicBool::new(false);

/// Whether something collc had to say could not be written to standard error.
pub(crate) fn stderr_lost() -> bool {
    STDERR_LOST.load(Ordering::Relaxed)
}

/// Writes `text` to standard error; a failure is remembered ([`stderr_lost`]), never a panic.
pub(crate) fn say(text: &str) {
    let mut err = std::io::stderr().lock();
    if err
        .write_all(text.as_bytes())
        .and_then(|()| err.flush())
        .is_err()
    {
        STDERR_LOST.store(true, Ordering::Relaxed);
    }
}

/// Writes `bytes` to standard output; a failure (E0029, exit 2) is reported on standard error.
pub(crate) fn write_stdout(bytes: &[u8]) -> i32 {
    let written = super::progress::clear(|| {
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

pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// Writes what `fill` writes to `path` atomically: into a temporary file beside it, renamed
/// over `path` only when `fill` succeeded; on any error the temporary file is removed. A
/// symbolic link is followed, and a device, FIFO or socket is written into directly (see the
/// module doc).
pub(crate) fn write_atomic_with<E: From<std::io::Error>>(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> Result<(), E>,
) -> Result<(), E> {
    let path = &follow_links(path)?;
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
        return fill(&mut f);
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "out".into());
    remove_stale(dir, &name);
    let tmp = dir.join(format!("{}{}", tmp_prefix(&name), std::process::id()));
    register(&tmp);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        fill(&mut f)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    unregister(&tmp);
    result
}

/// The name of a temporary for output `name`, without the process id that ends it.
fn tmp_prefix(name: &str) -> String {
    format!(".{name}.collc-tmp-")
}

/// Temporaries this process is writing, removed by [`install_signal_cleanup`]'s handler.
static TEMPS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn temps() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    TEMPS.lock().unwrap_or_else(|e| e.into_inner())
}

fn register(tmp: &Path) {
    temps().push(tmp.to_path_buf());
}

fn unregister(tmp: &Path) {
    temps().retain(|t| t != tmp);
}

/// On SIGINT, SIGTERM or SIGHUP: removes the temporaries being written and exits with 130, so
/// an interrupted build leaves nothing beside its output.
pub(crate) fn install_signal_cleanup() {
    let _ = ctrlc::set_handler(|| {
        for t in temps().iter() {
            let _ = std::fs::remove_file(t);
        }
        std::process::exit(130);
    });
}

/// Removes temporaries for output `name` in `dir` left by collc processes that no longer run (a
/// SIGKILL gives no chance to clean up). A temporary of a live process is left alone: it may be
/// a parallel build of the same output.
fn remove_stale(dir: &Path, name: &str) {
    let prefix = tmp_prefix(name);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(pid) = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !alive(pid) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Whether process `pid` exists (where `/proc` does not tell: assumed, so nothing is removed).
fn alive(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.join("self").exists() || proc.join(pid.to_string()).exists()
}

/// Where `path` leads once every symbolic link in its last component is followed (a link to a
/// path that does not exist yet leads there, so the file is created behind the link).
fn follow_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        if !std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
            return Ok(p);
        }
        let link = std::fs::read_link(&p)?;
        p = match p.parent() {
            Some(dir) if link.is_relative() => dir.join(link),
            _ => link,
        };
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// How diagnostics are printed (`--error-format`, `--color`).
pub(super) struct Out {
    pub format: ErrorFormat,
    pub color: bool,
}

impl Out {
    /// Prints diagnostics on standard error, then (for people) how many errors and warnings.
    pub fn diags(&self, diags: &[Diagnostic], files: &SourceMap) {
        if diags.is_empty() {
            return;
        }
        super::progress::clear(|| self.print(diags, files));
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
        let mut err = std::io::stderr().lock();
        if err.write_all(&text).and_then(|()| err.flush()).is_err() {
            STDERR_LOST.store(true, Ordering::Relaxed);
        }
    }
}
