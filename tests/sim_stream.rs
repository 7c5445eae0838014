//! `collc sim FILE.goal`'s fast path (`collc::sim::read`): GOAL text streamed straight into the
//! simulator's graph. Held to the full reader: whenever the stream reader takes a text and its
//! run completes, the full reader accepts the text and its run is identical, in one chunk or
//! cut into many (read on several threads); texts it must leave to the full reader are left.

use collc::backend::goal;
use collc::diag::FileId;
use collc::sim::engine::simulate_compiled;
use collc::sim::read::compile_in_chunks;
use collc::sim::{LogGP, Model, SimOptions, SimResult, simulate};
use proptest::prelude::*;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_collc");

fn opts(s: u64) -> SimOptions {
    SimOptions {
        model: Model::LogGP(LogGP {
            S: s,
            ..LogGP::default()
        }),
        trace: false,
    }
}

/// The stream reader's run, cut into chunks of `chunk` bytes; None when it leaves the text.
fn fast(text: &str, chunk: usize, s: u64) -> Option<SimResult> {
    let c = compile_in_chunks(text.as_bytes(), text.len() as u64, chunk)?;
    Some(simulate_compiled(c, &opts(s), u64::MAX))
}

/// The full reader's run; None when it rejects the text.
fn full(text: &str, s: u64) -> Option<SimResult> {
    let sched = goal::parse(FileId(0), text).ok()?;
    Some(simulate(&sched, &opts(s)))
}

/// The contract the CLI relies on, for several chunk sizes; true when the fast path answered.
fn agree(text: &str, s: u64) -> bool {
    let mut answered = false;
    for chunk in [1 << 20, 97, 13] {
        let Some(f) = fast(text, chunk, s) else {
            continue;
        };
        if !f.complete() {
            continue;
        }
        let g = full(text, s).unwrap_or_else(|| panic!("the full reader rejects\n{text}"));
        assert_eq!(f, g, "chunk {chunk}\n{text}");
        answered = true;
    }
    answered
}

fn goal_of(coll: &str, dir: &std::path::Path) -> String {
    let src = dir.join("x.coll");
    let out = dir.join("x.goal");
    std::fs::write(&src, coll).unwrap();
    let st = Command::new(BIN)
        .args(["build", src.to_str().unwrap(), "--target", "goal", "-o"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::read_to_string(out).unwrap()
}

fn star(n: u32, size: &str, schedule: &str) -> String {
    format!(
        "topology t {{\n    compute host[{n}];\n    switch s;\n    for i in 0..{n} {{ link host[i] <-> s : 25 GB/s; }}\n}}\ncollective allreduce {{ size: {size}; dtype: f32; op: sum; }}\nschedule {schedule}\n"
    )
}

#[test]
fn lowered_schedules_take_the_fast_path_and_agree() {
    let dir = tempfile::tempdir().unwrap();
    for (n, size, sched) in [
        (16, "8 B", "recursive_doubling;"),
        (12, "4 KiB", "recursive_doubling;"),
        (8, "1 MiB", "ring;"),
        (16, "64 B", "recursive_multiplying { stages: [a4, a4]; }"),
        (
            27,
            "256 KiB",
            "recursive_multiplying { stages: [a3, a3, a3]; }",
        ),
    ] {
        let text = goal_of(&star(n, size, sched), dir.path());
        for s in [65535, 0] {
            assert!(agree(&text, s), "{sched} on {n} ranks left the fast path");
        }
    }
}

#[test]
fn hand_written_layouts_agree() {
    let text = "// a comment\nnum_ranks 3\n\n  rank 0 {\n\tfirst: send 8b to 1 tag 4 cpu 1\n  x_2 : calc 100 cpu 1\nrecv 8b from 2 tag 7 nic 1\n  x_2 requires first   \n}\n// between\nrank 1 {\nr: recv 8b from 0 tag 4\ns: send 80000b to 2\ns requires r\n}\nrank 2 {\nrecv 80000b from 1\nop1: send 8b to 0 tag 7\nop1_calc: calc 5\nop1 irequires op1_calc\n}";
    assert!(agree(text, 65535));
    assert!(agree(text, 0));
}

/// Texts the stream reader must leave to the full reader (which rejects them, or accepts
/// them through a path of its own).
#[test]
fn what_the_fast_path_leaves() {
    let ok =
        "num_ranks 2\nrank 0 {\na: send 8b to 1 tag 3\n}\nrank 1 {\nb: recv 8b from 0 tag 3\n}\n";
    assert!(agree(ok, 65535));
    for (why, text) in [
        ("wildcard source", ok.replace("from 0", "from -1")),
        ("wildcard tag", ok.replace("from 0 tag 3", "from 0 tag -1")),
        (
            "block comment",
            ok.replace("rank 1 {\n", "rank 1 {\n/* c */\n"),
        ),
        (
            "comment after an op",
            ok.replace("tag 3\n}", "tag 3 // c\n}"),
        ),
        ("carriage return", ok.replace('\n', "\r\n")),
        ("peer out of range", ok.replace("to 1", "to 2")),
        (
            "ranks out of order",
            ok.replace("rank 1", "rank 2")
                .replace("num_ranks 2", "num_ranks 3"),
        ),
        ("missing rank", ok.replace("num_ranks 2", "num_ranks 3")),
        ("no num_ranks", ok.replace("num_ranks 2\n", "")),
        (
            "num_ranks twice",
            ok.replace("num_ranks 2\n", "num_ranks 2\nnum_ranks 2\n"),
        ),
        ("unclosed", ok.trim_end().trim_end_matches('}').to_string()),
        (
            "undefined label",
            ok.replace("tag 3\n}\nrank 1", "tag 3\na requires zz\n}\nrank 1"),
        ),
        (
            "forward reference",
            ok.replace(
                "a: send 8b to 1 tag 3\n",
                "a requires c\na: send 8b to 1 tag 3\nc: calc 1\n",
            ),
        ),
        (
            "duplicate label",
            ok.replace(
                "a: send 8b to 1 tag 3\n",
                "a: send 8b to 1 tag 3\na: calc 1\n",
            ),
        ),
        (
            "duplicate IR label",
            ok.replace(
                "a: send 8b to 1 tag 3\n",
                "op5: send 8b to 1 tag 3\nop5: calc 1\n",
            ),
        ),
        (
            "duplicate IR label, the first beyond the label table",
            ok.replace(
                "a: send 8b to 1 tag 3\n",
                "op128: calc 1\nop128: calc 1\na: send 8b to 1 tag 3\n",
            ),
        ),
        ("keyword label", ok.replace("a: send", "calc: send")),
        (
            "two sends under one tag",
            ok.replace(
                "a: send 8b to 1 tag 3\n",
                "send 8b to 1 tag 3\nsend 8b to 1 tag 3\n",
            ),
        ),
        (
            "two receives under one tag",
            ok.replace(
                "b: recv 8b from 0 tag 3\n",
                "recv 8b from 0 tag 3\ncalc 1\nrecv 8b from 0 tag 3\n",
            ),
        ),
        (
            "nic on a calc",
            ok.replace("a: send 8b to 1 tag 3\n", "calc 1 nic 1\n"),
        ),
        (
            "tag too large",
            ok.replace("tag 3\n}\nrank 1", "tag 4294967295\n}\nrank 1"),
        ),
        (
            "cpu too large",
            ok.replace("to 1 tag 3", "to 1 tag 3 cpu 256"),
        ),
        (
            "options out of order",
            ok.replace("to 1 tag 3", "to 1 cpu 1 tag 3"),
        ),
        ("no b", ok.replace("8b to", "8 to")),
        ("op outside a rank", format!("{ok}calc 1\n")),
    ] {
        assert!(fast(&text, 1 << 20, 65535).is_none(), "{why}\n{text}");
        assert!(fast(&text, 7, 65535).is_none(), "{why}, in chunks\n{text}");
    }
    // `op05` and `op5` are two labels, not one.
    let two = ok.replace(
        "a: send 8b to 1 tag 3\n",
        "op5: send 8b to 1 tag 3\nop05: calc 1\nop5 requires op05\n",
    );
    assert!(agree(&two, 65535));
    // An IR label too far ahead for the label table is found all the same.
    let far = ok.replace(
        "a: send 8b to 1 tag 3\n",
        "a: send 8b to 1 tag 3\nop200: calc 1\nop200 requires a\n",
    );
    assert!(fast(&far, 1 << 20, 65535).is_some());
    assert!(agree(&far, 65535));
}

/// Random schedules (matched messages, random dependencies and layouts, some that deadlock):
/// the fast path answers for most and agrees with the full reader every time.
fn random_goal(seed: u64) -> String {
    let mut x = seed | 1;
    let mut next = move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m.max(1)
    };
    let n = 1 + next(5) as usize;
    let mut ops: Vec<Vec<String>> = vec![Vec::new(); n];
    for m in 0..(n as u64 * 3) {
        let (a, b) = (next(n as u64) as usize, next(n as u64) as usize);
        let size = [0, 8, 1000, 70_000][next(4) as usize];
        let cpu = if next(4) == 0 { " cpu 1" } else { "" };
        ops[a].push(format!("send {size}b to {b} tag {m}{cpu}"));
        ops[b].push(format!("recv {size}b from {a} tag {m}"));
        if next(3) == 0 {
            ops[a].push(format!("calc {}", next(500)));
        }
    }
    let mut out = format!("// random {seed}\nnum_ranks {n}\n");
    for (r, list) in ops.iter_mut().enumerate() {
        // Shuffle the rank's ops.
        for i in (1..list.len()).rev() {
            list.swap(i, next(i as u64 + 1) as usize);
        }
        out.push_str(&format!("rank {r} {{\n"));
        let name = |i: usize| {
            if i % 2 == 0 {
                format!("op{i}")
            } else {
                format!("l{i}_x")
            }
        };
        for (i, op) in list.iter().enumerate() {
            let pad = if next(5) == 0 { "\t " } else { "" };
            out.push_str(&format!("{pad}{}: {op}\n", name(i)));
            if i > 0 && next(2) == 0 {
                let on = next(i as u64) as usize;
                let kind = if next(6) == 0 {
                    "irequires"
                } else {
                    "requires"
                };
                out.push_str(&format!("{} {kind} {}\n", name(i), name(on)));
            }
        }
        out.push_str("}\n");
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn random_schedules_agree(seed in any::<u64>()) {
        let text = random_goal(seed);
        agree(&text, 65535);
        agree(&text, 100);
    }
}

#[test]
fn random_schedules_mostly_take_the_fast_path() {
    let answered = (1..=100u64)
        .filter(|s| agree(&random_goal(*s), 65535))
        .count();
    assert!(answered >= 30, "only {answered} of 100 took the fast path");
}

/// Through the CLI: a `.goal` file (fast path) and the same text under another name (the
/// full reader, by content) print the same report.
#[test]
fn cli_reports_agree() {
    let dir = tempfile::tempdir().unwrap();
    let text = goal_of(&star(32, "1 KiB", "recursive_doubling;"), dir.path());
    let a = dir.path().join("s.goal");
    let b = dir.path().join("s.txt");
    std::fs::write(&a, &text).unwrap();
    std::fs::write(&b, &text).unwrap();
    let run = |p: &std::path::Path, extra: &[&str]| {
        let o = Command::new(BIN)
            .arg("sim")
            .arg(p)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    for extra in [&[][..], &["-b"], &["--loggp-S", "0", "--loggp-L", "700"]] {
        assert_eq!(run(&a, extra), run(&b, extra));
    }
}
