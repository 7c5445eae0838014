//! The command line as a user runs it: exit codes, no colour when not on a terminal, no partial
//! output files, deterministic output, `--param` overrides and `--error-format json`.

use std::path::PathBuf;
use std::process::Command;

fn collc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_collc"))
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("collc-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

const GOOD: &str = "param n: int = 6;
generator ring(n: int, bw: bandwidth) {
    compute host[n];
    for i in 0..n {
        link host[i] <-> host[(i + 1) % n] : bw;
    }
}
topology t = ring(n, 25 GB/s);
collective allreduce { count: 16; dtype: i64; op: sum; }
schedule recursive_multiplying { stages: [c4m2, a2, a2, e4m2]; }
";

const BAD: &str = "generator ring(n: int) { compute host[n]; }
topology t = ring(10);
collective allreduce { count: 16; }
schedule recursive_multiplying { stages: [a3, a4]; }
link ;
";

#[test]
fn check_exit_codes() {
    let d = tmp("codes");
    std::fs::write(d.join("good.coll"), GOOD).expect("write");
    std::fs::write(d.join("bad.coll"), BAD).expect("write");
    let ok = collc()
        .arg("check")
        .arg(d.join("good.coll"))
        .output()
        .expect("run");
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(ok.stderr.is_empty());
    let bad = collc()
        .arg("check")
        .arg(d.join("bad.coll"))
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("error[E0001]"), "{err}");
    assert!(err.contains("error[E0014]"), "{err}");
    assert!(
        !err.contains('\u{1b}'),
        "colour escapes when stderr is not a terminal: {err}"
    );
    let missing = collc()
        .arg("check")
        .arg(d.join("nope.coll"))
        .output()
        .expect("run");
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("E0029"));
    let coloured = collc()
        .args(["--color", "always", "check"])
        .arg(d.join("bad.coll"))
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&coloured.stderr).contains('\u{1b}'));
}

#[test]
fn build_writes_nothing_on_error_and_is_deterministic() {
    let d = tmp("build");
    std::fs::write(d.join("good.coll"), GOOD).expect("write");
    std::fs::write(d.join("bad.coll"), BAD).expect("write");
    let out = d.join("model.txt");
    let r = collc()
        .arg("build")
        .arg(d.join("bad.coll"))
        .arg("-o")
        .arg(&out)
        .output()
        .expect("run");
    assert_eq!(r.status.code(), Some(1));
    assert!(!out.exists(), "an output file was written despite errors");
    // An existing output is left untouched on error.
    std::fs::write(&out, "previous").expect("write");
    let r = collc()
        .arg("build")
        .arg(d.join("bad.coll"))
        .arg("-o")
        .arg(&out)
        .output()
        .expect("run");
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&out).expect("read"), "previous");
    let r = collc()
        .arg("build")
        .arg(d.join("good.coll"))
        .arg("-o")
        .arg(&out)
        .output()
        .expect("run");
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let first = std::fs::read(&out).expect("read");
    let stdout = collc()
        .arg("build")
        .arg(d.join("good.coll"))
        .output()
        .expect("run");
    assert_eq!(first, stdout.stdout, "file and stdout output differ");
    let text = String::from_utf8_lossy(&first);
    assert!(
        text.contains("schedule recursive_multiplying stages [c4m2, a2, a2, e4m2]"),
        "{text}"
    );
    // No temporary files are left in the directory.
    let leftovers: Vec<_> = std::fs::read_dir(&d)
        .expect("read dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("collc-tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

/// `-o` through a symbolic link replaces the link's target and keeps the link; `-o` onto a FIFO
/// (standing in for `/dev/null`, `/dev/stdout` and other special files) writes into it and
/// leaves it a FIFO, where renaming a temporary file over it would replace it with a regular
/// file.
#[test]
fn output_follows_links_and_writes_into_special_files() {
    use std::os::unix::fs::FileTypeExt;
    let d = tmp("special");
    std::fs::write(d.join("good.coll"), GOOD).expect("write");
    let expected = collc()
        .arg("build")
        .arg(d.join("good.coll"))
        .output()
        .expect("run");
    assert_eq!(expected.status.code(), Some(0));

    std::fs::create_dir(d.join("real")).expect("mkdir");
    std::fs::write(d.join("real/model.txt"), "previous").expect("write");
    std::os::unix::fs::symlink("real/model.txt", d.join("link.txt")).expect("symlink");
    let r = collc()
        .arg("build")
        .arg(d.join("good.coll"))
        .arg("-o")
        .arg(d.join("link.txt"))
        .output()
        .expect("run");
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let link = std::fs::symlink_metadata(d.join("link.txt")).expect("stat");
    assert!(link.file_type().is_symlink(), "the link was replaced");
    assert_eq!(
        std::fs::read(d.join("real/model.txt")).expect("read"),
        expected.stdout
    );

    let fifo = d.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).expect("read fifo"))
    };
    let r = collc()
        .arg("build")
        .arg(d.join("good.coll"))
        .arg("-o")
        .arg(&fifo)
        .output()
        .expect("run");
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    // Checked before joining: a reader still waiting on a replaced FIFO would never return.
    let kind = std::fs::symlink_metadata(&fifo).expect("stat").file_type();
    assert!(kind.is_fifo(), "the FIFO was replaced by {kind:?}");
    assert_eq!(reader.join().expect("reader"), expected.stdout);
}

#[test]
fn param_override() {
    let d = tmp("param");
    std::fs::write(d.join("good.coll"), GOOD).expect("write");
    // 8 ranks do not fit c4m2 + a2 a2 (which needs 6): the override reaches the check.
    let r = collc()
        .arg("build")
        .arg(d.join("good.coll"))
        .args(["--param", "n=8"])
        .output()
        .expect("run");
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("E0014"));
    let r = collc()
        .arg("build")
        .arg(d.join("good.coll"))
        .args(["--param", "m=8"])
        .output()
        .expect("run");
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("names no `param`"));
}

#[test]
fn json_diagnostics() {
    let d = tmp("json");
    std::fs::write(d.join("bad.coll"), BAD).expect("write");
    let r = collc()
        .args(["--error-format", "json", "check"])
        .arg(d.join("bad.coll"))
        .output()
        .expect("run");
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    let lines: Vec<serde_json::Value> = err
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let e14 = lines
        .iter()
        .find(|v| v["code"] == "E0014")
        .expect("E0014 reported");
    assert_eq!(e14["primary"]["line"], 4);
    assert!(
        e14["message"]
            .as_str()
            .expect("message")
            .contains("multiply to 12")
    );
    assert!(e14["help"].as_str().expect("help").contains("10 ranks"));
}

#[test]
fn usage_errors() {
    let r = collc().output().expect("run");
    assert_eq!(r.status.code(), Some(1));
    let r = collc().arg("--help").output().expect("run");
    assert_eq!(r.status.code(), Some(0));
}

#[test]
fn garbage_input_exits_1_with_diagnostics() {
    let d = tmp("garbage");
    // Deterministic pseudo-random bytes (xorshift), including invalid UTF-8.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for case in 0..8 {
        let bytes: Vec<u8> = (0..300 + case * 50)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        let p = d.join(format!("g{case}.coll"));
        std::fs::write(&p, &bytes).expect("write");
        let r = collc().arg("check").arg(&p).output().expect("run");
        assert_eq!(
            r.status.code(),
            Some(1),
            "case {case}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        assert!(String::from_utf8_lossy(&r.stderr).contains("error["));
    }
    // A real file cut in the middle of a declaration.
    let cut = &GOOD[..GOOD.len() / 2];
    let p = d.join("cut.coll");
    std::fs::write(&p, cut).expect("write");
    let r = collc().arg("check").arg(&p).output().expect("run");
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("error[E0001]"));
}
