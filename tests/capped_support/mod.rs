//! Shared by the tests that run hostile inputs through the real binary (tests/limits.rs,
//! tests/unbounded.rs): collc under `prlimit --as` (when the machine has it) so that a
//! regression fails the test instead of eating the machine, with a generous time bound.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Address space for one run: the binary reserves a 256 MiB stack for its worker and the
/// allocator reserves ahead, so this is well above what a refused input touches but far below
/// what the inputs asked for before they were bounded (2 to 14 GB).
const ADDRESS_SPACE: &str = "--as=3221225472";

pub fn collc() -> Command {
    let bin = env!("CARGO_BIN_EXE_collc");
    if Path::new("/usr/bin/prlimit").exists() {
        let mut c = Command::new("/usr/bin/prlimit");
        c.args([ADDRESS_SPACE, "--", bin]);
        c
    } else {
        Command::new(bin)
    }
}

pub fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, text).expect("writable");
    p
}

/// Runs collc with `args`; the output, after checking it took less than `secs` seconds.
pub fn run(args: &[&str], secs: u64) -> Output {
    let start = Instant::now();
    let out = collc()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("collc runs");
    assert!(
        start.elapsed() < Duration::from_secs(secs),
        "collc {args:?} took {:?}",
        start.elapsed()
    );
    out
}

/// Asserts that `out` is exit `code` with diagnostic `want` and no panic; its standard error.
pub fn expect(out: &Output, code: i32, want: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "a panic:\n{err}");
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert!(
        err.contains(&format!("error[{want}]")),
        "expected {want}:\n{err}"
    );
    err
}

pub fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}
