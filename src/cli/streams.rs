//! Standard streams the shell closed (`collc ... >&-`, `2>&-`). The Rust runtime reopens a
//! closed standard stream on /dev/null before `main`, after which writes to it succeed and a
//! closed stream cannot be told from `> /dev/null`; so the binary asks [`probe`] before the
//! runtime starts (src/main.rs), and what it found makes a write to that stream fail.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);

/// Records whether standard output and error are open. Run before the Rust runtime starts (an
/// ELF constructor in src/main.rs); it allocates nothing and cannot panic. Where `/proc` does
/// not tell, both count as open.
pub fn probe() {
    if !Path::new("/proc/self/fd").is_dir() {
        return;
    }
    let closed = |fd: &str| std::fs::symlink_metadata(Path::new(fd)).is_err();
    STDOUT_CLOSED.store(closed("/proc/self/fd/1"), Ordering::Relaxed);
    STDERR_CLOSED.store(closed("/proc/self/fd/2"), Ordering::Relaxed);
}

/// Whether standard output was closed when collc started.
pub(crate) fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Whether standard error was closed when collc started.
pub(crate) fn stderr_closed() -> bool {
    STDERR_CLOSED.load(Ordering::Relaxed)
}

/// The error a write to a closed standard stream gives.
pub(crate) fn closed_error() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::BrokenPipe,
        "it was closed when collc started",
    )
}
