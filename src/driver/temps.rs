//! Temporary outputs: their names (`.NAME.collc-tmp-PID` beside output `NAME`, and
//! `.NAME.collc-old-PID` for a directory output being replaced), the registry of those this
//! process is writing, their removal on SIGINT, SIGTERM and SIGHUP, and the removal of those a
//! killed process left (SIGKILL gives no chance to clean up).
//!
//! One lock orders the writers and the signal handler. Every step that creates or renames a
//! path of a temporary runs under it ([`guarded`]); the handler takes it, removes every
//! registered temporary and exits with 130 without ever releasing it. So no temporary appears
//! after the handler looked (a writer's next step waits for ever, until the process exits), and
//! none is half-removed when it exits. Bytes written into a file already open need no lock: once
//! the handler has removed its path they go nowhere. [`exit`] takes the same lock, so a process
//! that finishes while the handler runs does not cut its removal short.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Temporaries this process is writing.
static TEMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temps() -> MutexGuard<'static, Vec<PathBuf>> {
    TEMPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `step` (creating, filling or renaming a temporary's path) where the signal handler
/// cannot interleave; `register` and `unregister` inside it name the temporaries.
pub(crate) fn guarded<T>(step: impl FnOnce(&mut Registry) -> T) -> T {
    let mut list = temps();
    step(&mut Registry(&mut list))
}

/// The registered temporaries, while [`guarded`] holds them.
pub(crate) struct Registry<'a>(&'a mut Vec<PathBuf>);

impl Registry<'_> {
    /// Marks `path` as a temporary to remove if a signal ends the process.
    pub fn register(&mut self, path: &Path) {
        self.0.push(path.to_path_buf());
    }

    /// Marks `path` as no longer a temporary (renamed into place, or removed).
    pub fn unregister(&mut self, path: &Path) {
        self.0.retain(|t| t != path);
    }
}

/// The temporary of kind `what` (`tmp`, `old`) for output `path`, beside it.
pub(crate) fn sibling(path: &Path, what: &str) -> PathBuf {
    let (dir, name) = split(path);
    dir.join(format!("{}{}", prefix(&name, what), std::process::id()))
}

/// The directory of output `path` and its file name.
fn split(path: &Path) -> (PathBuf, String) {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    (dir.to_path_buf(), name)
}

/// The name of a temporary of kind `what` for output `name`, without the process id.
fn prefix(name: &str, what: &str) -> String {
    format!(".{name}.collc-{what}-")
}

/// On SIGINT, SIGTERM or SIGHUP: removes the temporaries being written and exits with 130, so
/// an interrupted build leaves nothing beside its output (see the module doc).
pub(crate) fn install_signal_cleanup() {
    let _ = ctrlc::set_handler(|| {
        let list = temps();
        for t in list.iter() {
            remove(t);
        }
        std::process::exit(130);
    });
}

/// Exits with `code` once no signal handler is removing temporaries.
pub fn exit(code: i32) -> ! {
    let _held = temps();
    std::process::exit(code)
}

/// Removes `path`, a file or a directory tree (a symbolic link itself, never its target). A
/// directory is removed again while it still exists: a writer that was inside it when the
/// handler started may have been creating its last entry.
fn remove(path: &Path) {
    for _ in 0..100 {
        match std::fs::symlink_metadata(path) {
            Err(_) => return,
            Ok(m) if m.is_dir() => {
                let _ = std::fs::remove_dir_all(path);
            }
            Ok(_) => {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// Removes the temporaries for output `path` that no running process writes: those of dead
/// processes (killed with SIGKILL), and this process's own when it does not hold them (a
/// reused process id). A `collc-old` directory is the previous project of a directory output
/// and is removed only when the output exists again (the replacement finished). A temporary of
/// another live process is left alone: it may be a parallel build of the same output.
pub(crate) fn remove_stale(path: &Path) {
    let (dir, name) = split(path);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let own = std::process::id();
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(file) = file.to_str() else {
            continue;
        };
        for what in ["tmp", "old"] {
            let Some(pid) = file
                .strip_prefix(&prefix(&name, what))
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            let stale = if pid == own {
                !temps().iter().any(|t| *t == e.path())
            } else {
                !alive(pid)
            };
            if stale && (what == "tmp" || path.exists()) {
                remove(&e.path());
            }
        }
    }
}

/// Whether process `pid` exists (where `/proc` does not tell: assumed, so nothing is removed).
fn alive(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.join("self").exists() || proc.join(pid.to_string()).exists()
}
