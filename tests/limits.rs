//! Hostile inputs from issue 19, run through the real binary: each must end with a coded
//! diagnostic and the exit code the command line's rule gives (1 for the input's fault, 2 for an
//! output collc cannot write), quickly and within a memory cap, never with a panic. Runs are
//! wrapped in `prlimit --as` (when the machine has it) so that a regression fails the test
//! instead of eating the machine.

mod capped_support;

use capped_support::{collc, expect, path, run, write};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

#[test]
fn huge_ranges_are_coded_errors() {
    let d = tmp();
    let block = write(
        &d,
        "block.coll",
        "topology t { for i in -9223372036854775807..1 { } }\n",
    );
    let generator = write(
        &d,
        "gen.coll",
        "generator g(a: int) { compute x[2]; link x[0] <-> x[1] : 1 GB/s; for i in a..1 { } }\n\
         topology t = g(-9223372036854775807);\ncollective allreduce { count: 8; }\n",
    );
    let param = write(
        &d,
        "param.coll",
        "param a: int = 0;\n\
         topology t { compute x[2]; link x[0] <-> x[1] : 1 GB/s; for i in a..1 { } }\n\
         collective allreduce { count: 8; }\n",
    );
    let len = write(
        &d,
        "len.coll",
        "param n: int = len(-9223372036854775808..2);\n\
         topology t { compute x[2]; link x[0] <-> x[1] : 1 GB/s; }\n",
    );
    expect(&run(&["check", path(&block)], 20), 1, "E0018");
    expect(&run(&["check", path(&generator)], 20), 1, "E0018");
    expect(
        &run(
            &["check", path(&param), "--param", "a=-9223372036854775807"],
            20,
        ),
        1,
        "E0018",
    );
    expect(&run(&["check", path(&len)], 20), 1, "E0022");
}

#[test]
fn ir_buffers_beyond_the_slot_limit_are_e0046() {
    let d = tmp();
    let head = "collc-ir 1\nname \"x\"\n";
    let scratch = write(
        &d,
        "scratch.ir",
        &format!(
            "{head}collective allreduce ranks 2 part_elements 4 chunks_per_part 1 dtype f32 op sum\n\
             proc 0 rank scratch 2147483648 {{\n}}\nproc 1 rank scratch 0 {{\n}}\n"
        ),
    );
    let chunks = write(
        &d,
        "chunks.ir",
        &format!(
            "{head}collective allreduce ranks 2 part_elements 4 chunks_per_part 100000000 dtype f32 op sum\n\
             proc 0 rank scratch 0 {{\n}}\nproc 1 rank scratch 0 {{\n}}\n"
        ),
    );
    expect(&run(&["check", path(&scratch)], 20), 1, "E0046");
    let out = run(&["check", path(&chunks)], 20);
    expect(&out, 1, "E0046");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-slots"));
    // The limit is the user's to raise: with room for 2 x 2 x 10^8 slots the file is read (and
    // found wrong: nothing is sent), not refused for its size.
    let raised = run(&["check", path(&chunks), "--max-slots", "1000000000"], 60);
    assert!(
        !String::from_utf8_lossy(&raised.stderr).contains("E0046"),
        "{}",
        String::from_utf8_lossy(&raised.stderr)
    );
}

/// The executor's own example (msccl-xml.md): a ring allreduce on 4 GPUs, in place.
fn ring_xml() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join("tests/msccl/reference_ring_allreduce_4.xml"))
        .expect("the reference XML")
}

#[test]
fn msccl_xml_beyond_the_slot_limit_is_e0046() {
    let d = tmp();
    let ok = write(&d, "ring.xml", &ring_xml());
    let out = run(&["check", path(&ok)], 20);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (name, from, to) in [
        (
            "a.xml",
            "nchunksperloop=\"4\"",
            "nchunksperloop=\"100000000\"",
        ),
        (
            "b.xml",
            "nchunksperloop=\"4\"",
            "nchunksperloop=\"4294967295\"",
        ),
        ("c.xml", "s_chunks=\"0\"", "s_chunks=\"4000000000\""),
        (
            "d.xml",
            "s_chunks=\"0\"",
            "s_chunks=\"9223372036854775807\"",
        ),
    ] {
        let f = write(&d, name, &ring_xml().replacen(from, to, 1));
        expect(&run(&["check", path(&f)], 20), 1, "E0046");
    }
}

/// A topology of `n` compute nodes on one switch with `schedule` (a family and its block, if
/// any) and `collective`.
fn star(n: u64, collective: &str, schedule: &str) -> String {
    let end = if schedule.ends_with('}') { "" } else { ";" };
    format!(
        "topology t {{ compute h[{n}]; switch s; for i in 0..{n} {{ link h[i] <-> s : 25 GB/s; }} }}\n\
         {collective}\nschedule {schedule}{end}\n"
    )
}

#[test]
fn programs_beyond_the_op_limit_are_refused_before_lowering() {
    let d = tmp();
    let ar = "collective allreduce { size: 1 MiB; dtype: f32; op: sum; }";
    let ring = write(&d, "ring.coll", &star(100_000, ar, "ring"));
    let rm = write(
        &d,
        "rm.coll",
        &star(
            1 << 18,
            ar,
            "recursive_multiplying { stages: [a4, a4, a4, a4, a4, a4, a4, a4, a4]; }",
        ),
    );
    // `stages: auto` on the topology: routes from every rank once cost a search per host
    // and kept 4 bytes per pair of nodes (275 GB here) before the choice was even made.
    let auto = write(
        &d,
        "auto.coll",
        &star(1 << 18, ar, "recursive_multiplying { stages: auto; }"),
    );
    // `schedule auto` weighs every family: none is lowered, solved or simulated over the limit.
    // At 64 MiB NCCL's tree pipelines 64 chunks per tree (5.2 M ops at 1 MiB fit the limit, and
    // lower and simulate in seconds).
    let big = "collective allreduce { size: 64 MiB; dtype: f32; op: sum; }";
    let any = write(&d, "any.coll", &star(1 << 18, big, "auto"));
    let barrier = write(
        &d,
        "barrier.coll",
        &star(20_000, "collective barrier;", "ring"),
    );
    let o = d.path().join("out");
    let o = path(&o);
    for args in [
        vec!["build", path(&ring), "--target", "goal", "-o", o],
        vec!["build", path(&ring), "--target", "mpi", "-o", o],
        vec!["build", path(&rm), "--emit", "ir"],
        vec!["build", path(&rm), "--emit", "report"],
        vec!["build", path(&rm), "--target", "goal", "-o", o],
        vec!["sim", path(&rm)],
        vec!["build", path(&auto), "--emit", "ir"],
        vec!["build", path(&auto), "--emit", "report"],
        vec!["sim", path(&auto)],
        vec!["build", path(&any), "--emit", "ir"],
        vec!["sim", path(&any)],
    ] {
        let out = run(&args, 120);
        expect(&out, 1, "E0046");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--max-ops"),
            "no flag named"
        );
    }
    // What MSCCL cannot express is known before lowering: no barrier (E0030) and no more
    // ranks than it has (E0040), at once, not 13 GB later.
    expect(
        &run(
            &["build", path(&barrier), "--target", "msccl", "-o", o],
            120,
        ),
        1,
        "E0030",
    );
    expect(
        &run(&["build", path(&ring), "--target", "msccl", "-o", o], 120),
        1,
        "E0040",
    );
}

#[test]
fn goal_time_overflow_is_e0047() {
    let d = tmp();
    let f = write(
        &d,
        "big.goal",
        "num_ranks 2\nrank 0 {\n  l1: send 18446744073709551615b to 1 tag 0\n}\n\
         rank 1 {\n  l1: recv 18446744073709551615b from 0 tag 0\n}\n",
    );
    let out = run(&["sim", path(&f)], 20);
    expect(&out, 1, "E0047");
    // No wrapped-around finish time is printed.
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // On a rank other than the first, the diagnostic points at that rank's op.
    let f = write(
        &d,
        "late.goal",
        "num_ranks 2\nrank 0 {\n  l1: recv 18446744073709551615b from 1 tag 0\n}\n\
         rank 1 {\n  l0: calc 5\n  l1: send 18446744073709551615b to 0 tag 0\n  l1 requires l0\n}\n",
    );
    let out = run(&["sim", path(&f)], 20);
    expect(&out, 1, "E0047");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("on rank 1") && err.contains("7 │   l1: send"),
        "{err}"
    );
}

#[test]
fn simulated_events_are_bounded() {
    let d = tmp();
    let f = write(
        &d,
        "two.goal",
        "num_ranks 2\nrank 0 {\n  l1: send 8b to 1 tag 0\n  l2: send 8b to 1 tag 1\n}\n\
         rank 1 {\n  l1: recv 8b from 0 tag 0\n  l2: recv 8b from 0 tag 1\n}\n",
    );
    let out = run(&["sim", path(&f), "--max-events", "2"], 20);
    expect(&out, 1, "E0046");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-events"));
    let out = run(&["sim", path(&f)], 20);
    assert_eq!(out.status.code(), Some(0));
}

fn example(name: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    path(&root.join("examples").join(name)).to_string()
}

#[test]
fn full_or_closed_outputs_are_e0029_not_panics() {
    let q = example("quickstart.coll");
    for args in [
        vec!["sim", q.as_str()],
        vec!["build", q.as_str(), "--emit", "ir"],
        vec!["explain", "E0014"],
    ] {
        let out = collc()
            .args(&args)
            .stdout(std::fs::File::create("/dev/full").expect("/dev/full"))
            .output()
            .expect("collc runs");
        expect(&out, 2, "E0029");
    }
    // Diagnostics to a full standard error: nothing can be said, so exit 2, and no panic.
    let d = tmp();
    let bad = write(
        &d,
        "bad.coll",
        "topology t { compute x; link x <-> y : 1 GB/s; }\n",
    );
    let out = collc()
        .args(["check", path(&bad)])
        .stderr(std::fs::File::create("/dev/full").expect("/dev/full"))
        .output()
        .expect("collc runs");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_closed_pipe_is_e0029() {
    // 512 ranks of recursive doubling print megabytes of IR; the reader takes one byte.
    let d = tmp();
    let f = write(
        &d,
        "rd.coll",
        &star(
            512,
            "collective allreduce { size: 1 MiB; dtype: f32; op: sum; }",
            "recursive_doubling",
        ),
    );
    let mut child = collc()
        .args(["build", path(&f), "--emit", "ir"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("collc runs");
    let mut stdout = child.stdout.take().expect("piped");
    let mut one = [0u8; 1];
    std::io::Read::read_exact(&mut stdout, &mut one).expect("a first byte");
    drop(stdout);
    let out = child.wait_with_output().expect("collc ends");
    expect(&out, 2, "E0029");
}

/// The temporaries beside `dir`'s outputs.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("readable")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(".collc-tmp-"))
        .collect()
}

#[test]
fn interrupted_builds_leave_no_temporary() {
    let d = tmp();
    let f = write(
        &d,
        "rd.coll",
        &star(
            32_768,
            "collective allreduce { size: 1 MiB; dtype: f32; op: sum; }",
            "recursive_doubling",
        ),
    );
    let out = d.path().join("out.goal");
    for signal in ["TERM", "INT", "HUP"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_collc"))
            .args(["build", path(&f), "--target", "goal", "-o", path(&out)])
            .stderr(Stdio::null())
            .spawn()
            .expect("collc runs");
        // Wait until the temporary exists (the GOAL text is written while the proof runs).
        let start = Instant::now();
        while temporaries(d.path()).is_empty() && start.elapsed() < Duration::from_secs(120) {
            if child.try_wait().expect("waitable").is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if child.try_wait().expect("waitable").is_some() {
            // Finished before it could be interrupted (a fast machine): nothing to test.
            assert!(temporaries(d.path()).is_empty());
            continue;
        }
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        let code = child.wait().expect("collc ends").code();
        assert_eq!(code, Some(130), "after SIG{signal}");
        assert!(
            temporaries(d.path()).is_empty(),
            "SIG{signal} left {:?}",
            temporaries(d.path())
        );
    }
}

#[test]
fn stale_temporaries_of_dead_processes_are_removed() {
    let d = tmp();
    let out = d.path().join("out.goal");
    // A process id that no live process has: beyond Linux's pid_max (2^22).
    let stale = d.path().join(".out.goal.collc-tmp-4294967294");
    let mut f = std::fs::File::create(&stale).expect("creatable");
    f.write_all(b"half a file").expect("writable");
    drop(f);
    // A temporary of a live process (this test) is left alone.
    let live = d
        .path()
        .join(format!(".out.goal.collc-tmp-{}", std::process::id()));
    std::fs::write(&live, b"in progress").expect("writable");
    let q = example("quickstart.coll");
    let r = run(&["build", &q, "--target", "goal", "-o", path(&out)], 60);
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    assert!(out.exists());
    assert!(!stale.exists(), "the stale temporary is still there");
    assert!(live.exists(), "a live process's temporary was removed");
}

#[test]
fn long_lines_are_shown_truncated() {
    // 60,000 ops on one line, 1.8 MB: each diagnostic shows a window of the line around its
    // labels, with the real column, instead of echoing megabytes.
    let d = tmp();
    let ops: Vec<String> = (0..60_000)
        .map(|i| format!("l{i}: send 8b to 5 tag {i}"))
        .collect();
    let f = write(
        &d,
        "oneline.goal",
        &format!("num_ranks 2 rank 0 {{ {} }} rank 1 {{ }}\n", ops.join(" ")),
    );
    let out = run(&["check", path(&f)], 10);
    expect(&out, 1, "E0037");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.len() < 4000, "{} bytes of diagnostics", err.len());
    assert!(err.contains("oneline.goal:1:45"), "{err}");
}
