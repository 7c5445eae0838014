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
    let f = write(
        &d,
        "lossy.coll",
        &canary(
            "retries: 3;",
            "retries: 3;",
            "model p: packet { loss: 0.99; }",
        ),
    );
    // With the default limits: a coded error naming the flag that raises the limit hit.
    let err = expect(&run(&["sim", path(&f)], 120), 1, "E0046");
    assert!(err.contains("raise the limit with `--max-"), "{err}");
    // Each limit is the user's: a low one is reached first and named, with a higher value.
    let err = expect(
        &run(&["sim", path(&f), "--max-events", "100000"], 20),
        1,
        "E0046",
    );
    assert!(err.contains("did not finish within 100000 events"), "{err}");
    assert!(err.contains("`--max-events 131072`"), "{err}");
    let err = expect(
        &run(&["sim", path(&f), "--max-packets", "20000"], 20),
        1,
        "E0046",
    );
    assert!(err.contains("more than 20000 packets at once"), "{err}");
    assert!(err.contains("`--max-packets 32768`"), "{err}");
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
