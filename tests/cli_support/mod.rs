//! Shared by tests that run the `collc` binary on `.coll` files they write: a fixture file in
//! a temporary directory of its own, and a run without colour that gives the exit code,
//! standard output and standard error.

use std::path::PathBuf;

/// Writes `text` to `NAME.coll` in a fresh temporary directory named after `tag`; the
/// directory (to remove afterwards) and the file's path as text.
#[allow(dead_code)] // not every test that shares this module writes fixtures
pub fn fixture(tag: &str, text: &str) -> (PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("collc-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("fixture.coll");
    std::fs::write(&file, text).expect("fixture");
    let path = file.to_string_lossy().into_owned();
    (dir, path)
}

/// Runs `collc --color never ARGS`: exit code, standard output, standard error.
pub fn collc(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(["--color", "never"])
        .args(args)
        .output()
        .expect("collc runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `collc ARGS`' standard output, run from the package root; it must succeed.
#[allow(dead_code)] // not every test that shares this module needs it
pub fn collc_ok(args: &[&str]) -> String {
    let (code, out, err) = collc(args);
    assert_eq!(code, 0, "{args:?}: {out}{err}");
    out
}
