//! Issue 41's "unbounded work from small inputs", run through the real binary: each input of a
//! few hundred bytes ends with a coded diagnostic (or a correct result) well within the time
//! and memory bounds below, never with a panic. Runs are wrapped in `prlimit --as` (when the
//! machine has it) so that a regression fails the test instead of eating the machine; the time
//! bounds are generous (a debug build on a busy machine) and every limit reached is a
//! deterministic count, not a clock.

mod capped_support;

use capped_support::{path, write};
use std::path::Path;
use std::process::Output;

/// Runs collc with `args` (colours off); the output, after checking it took less than `secs`
/// seconds.
fn run(args: &[&str], secs: u64) -> Output {
    let mut all = vec!["--color", "never"];
    all.extend_from_slice(args);
    capped_support::run(&all, secs)
}

/// Asserts that `out` is exit `code` with diagnostic `want` (and a help line) and no panic;
/// its standard error.
fn expect(out: &Output, code: i32, want: &str) -> String {
    let err = capped_support::expect(out, code, want);
    assert!(err.contains("help:"), "no help line:\n{err}");
    err
}

/// examples/canary_small.coll with `from` replaced by `to` and `tail` appended.
fn canary(from: &str, to: &str, tail: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("examples/canary_small.coll")).expect("example");
    assert!(text.contains(from), "{from}");
    format!("{}\n{tail}\n", text.replacen(from, to, 1))
}

const RING: &str = "import ring;\ntopology t = ring(n: 4, bw: 25 GB/s);\nschedule ring;\n";

#[test]
fn canary_times_beyond_a_second_are_refused_by_the_checker() {
    let d = tempfile::tempdir().expect("temp dir");
    for (from, to, key) in [
        ("timeout: 1 us;", "timeout: 100000 s;", "timeout"),
        (
            "leader_delay: 1 us;",
            "leader_delay: 9223372036854775807 ns;",
            "leader_delay",
        ),
        (
            "retries: 3;",
            "retries: 3; retransmit: 9223372036854775807 ns;",
            "retransmit",
        ),
    ] {
        let f = write(&d, &format!("{key}.coll"), &canary(from, to, ""));
        for cmd in [
            &["build", path(&f), "--emit", "report"][..],
            &["sim", path(&f)],
        ] {
            let err = expect(&run(cmd, 20), 1, "E0024");
            assert!(
                err.contains(&format!("the {key} is longer than 1 s")),
                "{err}"
            );
        }
    }
    // A second is accepted and the report and the simulation finish.
    let f = write(
        &d,
        "second.coll",
        &canary("timeout: 1 us;", "timeout: 1 s;", ""),
    );
    let out = run(&["build", path(&f), "--emit", "report"], 60);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&["sim", path(&f), "-b"], 60);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_lossy_canary_run_stops_at_the_packet_simulators_limits() {
    let d = tempfile::tempdir().expect("temp dir");
    let hopeless = write(
        &d,
        "lossy.coll",
        &canary(
            "retries: 3;",
            "retries: 3;",
            "model p: packet { loss: 0.99; }",
        ),
    );
    // At 99% loss every block falls back to the hosts, and a contribution crossing five
    // links whole takes 10^10 tries on average: refused at once with the default limits (it
    // ran for 100 s to the limit before), naming the flag that raises it.
    let err = expect(&run(&["sim", path(&hopeless)], 20), 1, "E0046");
    assert!(
        err.contains("at 0.99 loss per link") && err.contains("4.096e13 tries"),
        "{err}"
    );
    assert!(err.contains("raise the limit with `--max-events"), "{err}");
    let f = write(
        &d,
        "lossy30.coll",
        &canary(
            "retries: 3;",
            "retries: 3;",
            "model p: packet { loss: 0.3; }",
        ),
    );
    // Each limit is the user's: a low one is reached first and named, with a higher value.
    let err = expect(
        &run(&["sim", path(&f), "--max-events", "100000"], 20),
        1,
        "E0046",
    );
    assert!(err.contains("did not finish within 100000 events"), "{err}");
    assert!(err.contains("`--max-events 131072`"), "{err}");
    let err = expect(
        &run(&["sim", path(&f), "--max-packets", "100"], 20),
        1,
        "E0046",
    );
    assert!(err.contains("more than 100 packets at once"), "{err}");
    assert!(err.contains("`--max-packets 128`"), "{err}");
}

#[test]
fn runs_beyond_the_documented_maximum_are_argument_errors() {
    let d = tempfile::tempdir().expect("temp dir");
    let f = write(&d, "c.coll", &canary("retries: 3;", "retries: 3;", ""));
    for cmd in ["sim", "compare"] {
        for n in ["9223372036854775808", "1001"] {
            let out = run(&[cmd, path(&f), "--runs", n], 20);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{err}");
            assert!(
                err.contains("error[E0055]") && err.contains("1..=1000"),
                "{err}"
            );
        }
    }
}

#[test]
fn sizes_that_do_not_fit_are_refused_and_the_rest_bounded() {
    let d = tempfile::tempdir().expect("temp dir");
    for (name, size) in [
        ("wrap", "18446744073709551616 B"),
        ("huge", "100000 TiB"),
        ("over", "262145 GiB"),
    ] {
        let f = write(
            &d,
            &format!("{name}.coll"),
            &format!("{RING}collective allreduce {{ size: {size}; }}\nmodel p: packet {{ }}\n"),
        );
        for cmd in ["check", "sim"] {
            let err = expect(&run(&[cmd, path(&f)], 20), 1, "E0024");
            assert!(err.contains("(256 TiB) collc accepts"), "{err}");
        }
    }
    // 256 TiB is accepted; its packets alone need more events than the limit: refused at once.
    let f = write(
        &d,
        "max.coll",
        &format!("{RING}collective allreduce {{ size: 256 TiB; }}\nmodel p: packet {{ }}\n"),
    );
    let err = expect(&run(&["sim", path(&f)], 20), 1, "E0046");
    assert!(err.contains("the run needs at least"), "{err}");
    // A ring at 1 GiB is bounded by the same limit (here a low one, reached before it runs).
    let f = write(
        &d,
        "gib.coll",
        &format!("{RING}collective allreduce {{ size: 1 GiB; }}\nmodel p: packet {{ }}\n"),
    );
    let err = expect(
        &run(&["sim", path(&f), "--max-events", "1000000"], 20),
        1,
        "E0046",
    );
    assert!(err.contains("--max-events"), "{err}");
}

#[test]
fn times_beyond_the_packet_simulators_clock_are_e0047() {
    let d = tempfile::tempdir().expect("temp dir");
    let text = canary("retries: 3;", "retries: 3;", "")
        .replace("latency 300 ns;", "latency 9223372036854775807 ns;");
    let f = write(&d, "latency.coll", &text);
    let err = expect(&run(&["sim", path(&f)], 20), 1, "E0047");
    assert!(err.contains("beyond the simulator's step"), "{err}");
}

#[test]
fn the_p4_target_refuses_what_it_cannot_write_before_writing() {
    let d = tempfile::tempdir().expect("temp dir");
    let retries = canary("retries: 3;", "retries: 4294967296;", "target p4;");
    let f = write(&d, "retries.coll", &retries);
    let err = expect(&run(&["check", path(&f)], 20), 1, "E0024");
    assert!(err.contains("do not fit Canary's block ids"), "{err}");
    // Retries the ids hold, but a reclaim age beyond the switch's 48-bit timer field (the
    // retransmission timeout follows the links' latency): E0050 at `retries`, exit 1, no output.
    let slow = canary("retries: 3;", "retries: 1000;", "target p4;")
        .replace("latency 300 ns;", "latency 1000000 s;");
    let f = write(&d, "slow.coll", &slow);
    let out_dir = d.path().join("out");
    let err = expect(
        &run(&["build", path(&f), "-o", path(&out_dir)], 20),
        1,
        "E0050",
    );
    assert!(
        err.contains("48-bit timer field") && err.contains("retries: 1000"),
        "{err}"
    );
    assert!(!out_dir.exists());
}

/// A NUL byte ends the read at the first block that holds it: `/dev/zero` (which never ends)
/// and a `.goal` file with one in the middle (the streaming reader leaves it to the full one).
#[test]
fn binary_input_is_e0059_at_the_first_block() {
    if Path::new("/dev/zero").exists() {
        for cmd in ["sim", "check"] {
            let err = expect(&run(&[cmd, "/dev/zero"], 20), 1, "E0059");
            assert!(err.contains("NUL byte"), "{err}");
        }
    }
    let d = tempfile::tempdir().expect("temp dir");
    let f = write(&d, "nul.goal", "num_ranks 1\nrank 0 {\nl1: calc 5\n\0\n}\n");
    for cmd in ["sim", "check"] {
        let err = expect(&run(&[cmd, path(&f)], 20), 1, "E0059");
        assert!(err.contains("nul.goal:4:1"), "{err}");
    }
}

/// A file read whole is at most `--max-input-bytes` (lowered here; 128 MiB by default): over
/// it, E0060 names the limit and the flag, before the file is read.
#[test]
fn files_over_the_input_limit_are_e0060() {
    let d = tempfile::tempdir().expect("temp dir");
    let blank = write(&d, "blank.goal", &"\n".repeat(200_000));
    let coll = write(
        &d,
        "ring.coll",
        &format!("{RING}collective allreduce {{ size: 1 MiB; dtype: f32; op: sum; }}\n"),
    );
    for args in [
        &["sim", path(&blank)][..],
        &["check", path(&blank)],
        &["check", path(&coll)],
        &["build", path(&coll)],
    ] {
        let mut all = args.to_vec();
        all.extend(["--max-input-bytes", "50"]);
        let err = expect(&run(&all, 20), 1, "E0060");
        assert!(
            err.contains("over the limit of 50 bytes") && err.contains("--max-input-bytes"),
            "{err}"
        );
    }
    // Within the limit the files are read: the blank file is a GOAL file without ranks.
    let err = expect(&run(&["check", path(&blank)], 20), 1, "E0038");
    assert!(!err.contains("E0060"), "{err}");
    let out = run(&["check", path(&coll)], 20);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
}

/// `collc sim FILE.goal` streams: megabytes of blank lines inside a rank (more than the reader's
/// chunk of 2 MiB, so pieces end inside the rank) run within a limit of a few bytes on files
/// read whole, with LogGOPSim's result (two calcs back to back: 5 + 7 ns).
#[test]
fn goal_files_stream_past_the_input_limit() {
    let d = tempfile::tempdir().expect("temp dir");
    let text = format!(
        "num_ranks 1\nrank 0 {{\na: calc 5\n{}b: calc 7\nb requires a\n}}\n",
        "\n".repeat(5 << 20)
    );
    let f = write(&d, "spaced.goal", &text);
    let out = run(&["sim", path(&f), "-b", "--max-input-bytes", "10"], 60);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("at host 0: 12 ("), "{report}");
}

/// A misspelt identifier of 20,000 characters in a loop of 2,000 iterations (60 KB of text):
/// each iteration reports it again, and the "did you mean" search, once quadratic in the
/// name's length (8 * 10^11 steps here), is linear: one E0003 with the suggestion, at once.
#[test]
fn long_misspelt_names_in_loops_check_at_once() {
    let d = tempfile::tempdir().expect("temp dir");
    let name = "v".repeat(20_000);
    let typo = format!("{}w", &name[1..]);
    let text = format!(
        "topology t {{\n    compute gpu[4];\n    let {name} = 1;\n    for i in 0..2000 {{\n        let x = {typo} + i;\n    }}\n}}\n"
    );
    let f = write(&d, "long.coll", &text);
    let err = expect(&run(&["check", path(&f)], 20), 1, "E0003");
    assert_eq!(err.matches("error[E0003]").count(), 1, "{err}");
    assert!(err.contains("did you mean"), "{err}");
}

/// `collc check DIR` types a file without an extension by its first 64 KiB only: a large
/// binary file there is skipped, not read whole.
#[test]
fn directories_type_files_by_their_head() {
    let d = tempfile::tempdir().expect("temp dir");
    write(
        &d,
        "ring.coll",
        &format!("{RING}collective allreduce {{ size: 1 MiB; dtype: f32; op: sum; }}\n"),
    );
    std::fs::write(d.path().join("zeros"), vec![0u8; 8 << 20]).expect("writable");
    let mut goal = String::from("num_ranks 1\nrank 0 {\n");
    goal.push_str(&"// padding\n".repeat(20_000));
    goal.push_str("l1: calc 5\n}\n");
    write(&d, "schedule", &goal);
    let out = run(&["check", path(d.path())], 20);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("E0059"), "{err}");
    assert!(err.contains("skipped"), "{err}");
}
