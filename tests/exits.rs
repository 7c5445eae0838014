//! Clean exits, driving the real binary: a standard output the shell closed (`>&-`) or that is
//! full (/dev/full) is E0029 and exit 2 for every command that writes to it (`--help`,
//! `--version` and `lsp` included); SIGINT, SIGTERM and SIGHUP during a directory build leave
//! no temporary (and an existing output intact); a temporary left by SIGKILL is removed by the
//! next build of the same output; argument errors are E0055 with exit 1.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_collc");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn example(name: &str) -> String {
    root()
        .join("examples")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("collc-exits-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// `collc ARGS` with standard input from `stdin` (a file, or nothing) and standard output
/// closed by the shell before collc starts (`>&-`), not /dev/null.
fn closed_stdout(args: &[&str], stdin: Option<&Path>) -> Output {
    let script = match stdin {
        Some(_) => r#"f="$1"; shift; exec "$0" "$@" >&- <"$f""#,
        None => r#"exec "$0" "$@" >&- </dev/null"#,
    };
    let mut cmd = Command::new("sh");
    cmd.args(["-c", script, BIN]);
    if let Some(f) = stdin {
        cmd.arg(f);
    }
    cmd.args(["--color", "never"]).args(args);
    cmd.output().expect("sh runs")
}

/// `collc ARGS` with standard output on /dev/full.
fn full_stdout(args: &[&str], stdin: Option<&Path>) -> Output {
    let input = match stdin {
        Some(f) => Stdio::from(std::fs::File::open(f).expect("stdin file")),
        None => Stdio::null(),
    };
    Command::new(BIN)
        .args(["--color", "never"])
        .args(args)
        .stdin(input)
        .stdout(std::fs::File::create("/dev/full").expect("/dev/full"))
        .output()
        .expect("collc runs")
}

fn expect(out: &Output, code: i32, what: &str, case: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{case}: {err}");
    assert!(err.contains(what), "{case}: no {what} in {err}");
}

/// An LSP `initialize` request and `shutdown`/`exit`, framed: the server must answer.
fn lsp_session(dir: &Path) -> PathBuf {
    let frame = |body: &str| format!("Content-Length: {}\r\n\r\n{body}", body.len());
    let text = [
        frame(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#),
        frame(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#),
        frame(r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#),
        frame(r#"{"jsonrpc":"2.0","method":"exit"}"#),
    ]
    .concat();
    let p = dir.join("session.lsp");
    std::fs::write(&p, text).expect("write");
    p
}

#[test]
fn closed_or_full_standard_output_is_e0029_for_every_command() {
    let d = tmp("stdout");
    let q = example("quickstart.coll");
    let goal = d.join("q.goal").to_string_lossy().into_owned();
    let built = Command::new(BIN)
        .args(["build", &q, "--target", "goal", "-o", &goal])
        .output()
        .expect("collc runs");
    assert_eq!(built.status.code(), Some(0));
    let session = lsp_session(&d);
    let source = PathBuf::from(&q);
    let cases: Vec<(Vec<&str>, Option<&Path>)> = vec![
        (vec!["--help"], None),
        (vec!["--version"], None),
        (vec!["build", "--help"], None),
        (vec!["build", &q], None),
        (vec!["build", &q, "--emit", "ir"], None),
        (vec!["build", &q, "--target", "goal"], None),
        (vec!["sim", &q], None),
        (vec!["sim", &goal], None),
        (vec!["compare", &q], None),
        (vec!["explain", "E0029"], None),
        (vec!["fmt"], Some(&source)),
        (vec!["lsp"], Some(&session)),
    ];
    for (args, stdin) in &cases {
        let case = args.join(" ");
        expect(
            &closed_stdout(args, *stdin),
            2,
            "error[E0029]: cannot write to standard output",
            &format!("{case} >&-"),
        );
        expect(
            &full_stdout(args, *stdin),
            2,
            "error[E0029]: cannot write to standard output",
            &format!("{case} >/dev/full"),
        );
    }
    // Nothing to lose: the language server with no input, closed output, still says so.
    expect(
        &closed_stdout(&["lsp"], None),
        2,
        "error[E0029]",
        "lsp >&- </dev/null",
    );
    // /dev/null is not closed: the same commands succeed.
    let r = Command::new(BIN)
        .args(["build", &q])
        .stdout(Stdio::null())
        .output()
        .expect("collc runs");
    assert_eq!(r.status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_trace_or_output_on_dev_full_exits_2() {
    let q = example("quickstart.coll");
    for flag in ["--trace", "-o"] {
        let r = Command::new(BIN)
            .args(["--color", "never", "sim", &q, flag, "/dev/full"])
            .output()
            .expect("collc runs");
        expect(&r, 2, "error[E0029]", &format!("sim {flag} /dev/full"));
    }
}

#[test]
fn argument_errors_are_e0055() {
    let q = example("quickstart.coll");
    let cases: [(&[&str], &str); 7] = [
        (
            &["sim", &q, "--runs", "0"],
            "invalid value '0' for '--runs <N>'",
        ),
        (&["compare", &q, "--format", "xml"], "invalid value 'xml'"),
        (
            &["build", &q, "-o", ""],
            "a value is required for '--output",
        ),
        (&["build", &q, "--no-such-flag"], "unexpected argument"),
        (&["frobnicate"], "unrecognized subcommand"),
        (&[], "'collc' requires a subcommand"),
        (&["explain", "E9999"], "`E9999` is not an error code"),
    ];
    for (args, message) in cases {
        let r = Command::new(BIN)
            .args(["--color", "never"])
            .args(args)
            .output()
            .expect("collc runs");
        let case = args.join(" ");
        expect(&r, 1, &format!("error[E0055]: {message}"), &case);
        assert!(r.stdout.is_empty(), "{case}");
        // clap's usage hint stays.
        if !case.starts_with("explain") {
            let err = String::from_utf8_lossy(&r.stderr);
            assert!(
                err.contains("--help") || err.contains("Usage:"),
                "{case}: {err}"
            );
        }
    }
    // No argument at all: clap's help, under the coded error.
    let r = Command::new(BIN).output().expect("collc runs");
    expect(&r, 1, "error[E0055]: collc needs a command", "collc");
    assert!(String::from_utf8_lossy(&r.stderr).contains("Usage: collc"));
    // With JSON diagnostics asked for, one JSON object with the code.
    let r = Command::new(BIN)
        .args(["--error-format", "json", "sim", &q, "--runs", "0"])
        .output()
        .expect("collc runs");
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    let d: serde_json::Value = serde_json::from_str(err.trim()).expect("one JSON diagnostic");
    assert_eq!(d["code"], "E0055");
    assert!(d["message"].as_str().is_some_and(|m| m.contains("--runs")));
}

/// The temporaries collc keeps beside outputs in `dir`.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("readable")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(".collc-tmp-") || n.contains(".collc-old-"))
        .collect()
}

/// Starts a P4 build of the 1,024-host fat tree (about 80 MB in 146 files) into `out` and waits
/// until its temporary appears; `None` when it finished first.
/// `collc build` of the 1,024-host Canary example into the P4 project `out`.
fn p4_build(out: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.args([
        "build",
        &example("fat_tree_1024.coll"),
        "--target",
        "p4",
        "-o",
    ])
    .arg(out);
    c
}

fn p4_build_until_temporary(dir: &Path, out: &Path) -> Option<Child> {
    let mut child = p4_build(out)
        .stderr(Stdio::null())
        .spawn()
        .expect("collc runs");
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(120) {
        if child.try_wait().expect("waitable").is_some() {
            return None;
        }
        if temporaries(dir).iter().any(|t| t.contains(".collc-tmp-")) {
            return Some(child);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("no temporary appeared within 120 s");
}

fn signal(child: &Child, sig: &str) {
    let status = Command::new("kill")
        .args([&format!("-{sig}"), &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

#[test]
fn signals_during_a_directory_build_leave_no_temporary() {
    let d = tmp("signals");
    let out = d.join("p4");
    let mark = out.join("run.sh");
    let mut interrupted = 0;
    // Fresh output first, then with a finished project to replace (and carry `keep/` over).
    for (trial, sig) in ["TERM", "INT", "HUP", "TERM", "INT", "HUP"]
        .iter()
        .enumerate()
    {
        let replacing = trial >= 3;
        if replacing && !mark.exists() {
            let r = p4_build(&out).output().expect("collc runs");
            assert_eq!(r.status.code(), Some(0));
            std::fs::create_dir_all(out.join("keep")).expect("mkdir");
        }
        let Some(mut child) = p4_build_until_temporary(&d, &out) else {
            continue;
        };
        // Signals land at different points of the write.
        std::thread::sleep(Duration::from_millis(5 * trial as u64));
        signal(&child, sig);
        let code = child.wait().expect("collc ends").code();
        let left = temporaries(&d);
        assert!(left.is_empty(), "SIG{sig} (trial {trial}) left {left:?}");
        match code {
            Some(130) => interrupted += 1,
            // It finished before the signal came: a complete project.
            Some(0) => assert!(mark.exists(), "trial {trial}"),
            other => panic!("SIG{sig} (trial {trial}): exit {other:?}"),
        }
        if replacing {
            assert!(mark.exists(), "SIG{sig} lost the existing project");
            assert!(
                out.join("keep").is_dir(),
                "SIG{sig} lost what was carried over"
            );
        } else if code == Some(130) {
            assert!(!out.exists(), "SIG{sig} left a partial project");
        }
    }
    assert!(interrupted > 0, "no build was interrupted");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_temporary_left_by_sigkill_is_removed_by_the_next_build() {
    let d = tmp("sigkill");
    let out = d.join("p4");
    for _ in 0..3 {
        let Some(mut child) = p4_build_until_temporary(&d, &out) else {
            continue;
        };
        signal(&child, "KILL");
        let _ = child.wait();
        if temporaries(&d).is_empty() {
            // It finished between the look and the signal.
            continue;
        }
        let left = temporaries(&d);
        let r = p4_build(&out).output().expect("collc runs");
        assert_eq!(r.status.code(), Some(0));
        assert!(out.join("run.sh").exists());
        assert!(
            temporaries(&d).is_empty(),
            "{left:?} survived the next build"
        );
        let _ = std::fs::remove_dir_all(&d);
        return;
    }
    panic!("no build was killed while writing in 3 trials");
}
