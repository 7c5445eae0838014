//! The simulator against LogGOPSim's figures (../shared/reference/goal-loggopsim.md, 1.5) and
//! the recursive-multiplying paper's Section 6, on schedules built by hand as GOAL text (the
//! reference's scratch generator: one calc per stage) and through the IR.

use collc::backend::goal::{self, GoalOptions, GoalSchedule};
use collc::diag::FileId;
use collc::sim::{LogGP, Model, Postal, SimOptions, SimResult, TimeUnit, simulate, trace};

/// Recursive multiplying with factor stages `bases` (N = their product), `size` bytes per
/// message and one `calc` of `calc` after all receives of a stage, as GOAL text: in stage i
/// with base B and mask M (product of the earlier bases), rank r sends to and receives from
/// `block + (r - block + j*M) mod (B*M)` for j = 1..B (Algorithm 2's peer order).
fn rm_goal(bases: &[u32], size: u64, calc: u64) -> String {
    let n: u32 = bases.iter().product();
    let mut out = format!("num_ranks {n}\n");
    for r in 0..n {
        out.push_str(&format!("rank {r} {{\n"));
        let mut mask = 1;
        let mut prev: Option<String> = None;
        let mut deps = Vec::new();
        for (st, &b) in bases.iter().enumerate() {
            let width = b * mask;
            let block = r / width * width;
            let mut recvs = Vec::new();
            for j in 1..b {
                let peer = block + (r - block + j * mask) % width;
                let s = format!("s{st}_{j}");
                out.push_str(&format!("{s}: send {size}b to {peer} tag {st}\n"));
                if let Some(p) = &prev {
                    deps.push(format!("{s} requires {p}"));
                }
            }
            for j in 1..b {
                let peer = block + (r + width - j * mask - block) % width;
                let v = format!("r{st}_{j}");
                out.push_str(&format!("{v}: recv {size}b from {peer} tag {st}\n"));
                if let Some(p) = &prev {
                    deps.push(format!("{v} requires {p}"));
                }
                recvs.push(v);
            }
            let c = format!("c{st}");
            out.push_str(&format!("{c}: calc {calc}\n"));
            for v in recvs {
                deps.push(format!("{c} requires {v}"));
            }
            prev = Some(c);
            mask = width;
        }
        for d in deps {
            out.push_str(&d);
            out.push('\n');
        }
        out.push_str("}\n");
    }
    out
}

fn parse(text: &str) -> GoalSchedule {
    match goal::parse(FileId(0), text) {
        Ok(s) => s,
        Err(d) => panic!("{d:#?}\n{text}"),
    }
}

fn loggp(s: &GoalSchedule, m: LogGP) -> SimResult {
    let r = simulate(
        s,
        &SimOptions {
            model: Model::LogGP(m),
            trace: false,
        },
    );
    assert!(r.complete(), "{r:?}");
    r
}

#[test]
fn recursive_doubling_4_ranks_matches_loggopsim() {
    let s = parse(&rm_goal(&[2, 2], 8, 100));
    let r = loggp(&s, LogGP::default());
    assert_eq!(r.finish, vec![11284; 4]);
    assert_eq!(r.max, 11284);
    // LogGOPSim's event count: 6 ops per rank and 4 messages per rank.
    assert_eq!(r.events, 4 * 6 + 4 * 2);
    let fast = LogGP {
        L: 1000,
        o: 500,
        g: 200,
        G: 2,
        ..LogGP::default()
    };
    assert_eq!(loggp(&s, fast).max, 4228);
}

#[test]
fn recursive_multiplying_figures_match_loggopsim() {
    for (bases, want) in [
        (&[2, 2][..], 11284),
        (&[4], 9226),
        (&[2, 2, 2], 16926),
        (&[8], 21394),
        (&[3, 3], 14368),
        (&[2, 2, 2, 2], 22568),
        (&[4, 4], 18452),
    ] {
        let s = parse(&rm_goal(bases, 8, 100));
        assert_eq!(loggp(&s, LogGP::default()).max, want, "{bases:?}");
    }
}

#[test]
fn rendezvous_recursive_doubling_matches_loggopsim() {
    let s = parse(&rm_goal(&[2, 2], 100_000, 100));
    assert_eq!(loggp(&s, LogGP::default()).max, 1_211_188);
}

/// Checks and lowers a `.coll` source.
fn lowered(src: &str) -> collc::ir::Program {
    let mut files = collc::diag::SourceMap::new();
    let id = files.add("test.coll", src.to_string());
    let c = collc::sema::check(&mut files, id, &collc::sema::Options::default());
    let model = c.model.unwrap_or_else(|| panic!("{:#?}", c.diagnostics));
    match collc::lower::lower_and_verify(&model) {
        Ok((p, _)) => p,
        Err(d) => panic!("{}", collc::diag::render::to_text(&d, &files)),
    }
}

fn allreduce(n: u32, bytes: u64, stages: &str) -> String {
    format!(
        "generator mesh(n: int) {{\n    compute host[n];\n    for i in 0..n {{\n        for j in i + 1..n {{\n            link host[i] <-> host[j] : 10 GB/s;\n        }}\n    }}\n}}\ntopology t = mesh({n});\ncollective allreduce {{ size: {bytes} B; dtype: i64; op: sum; }}\nschedule recursive_multiplying {{ stages: {stages}; }}\n"
    )
}

#[test]
fn lowered_recursive_doubling_matches_loggopsim() {
    let p = lowered(&allreduce(4, 8, "[a2, a2]"));
    let s = goal::from_ir(&p, &GoalOptions::with_reduce_ns(100)).expect("converts");
    assert_eq!(loggp(&s, LogGP::default()).max, 11284);
}

/// Section 6 of the paper: pipelining postal, latency 500 ns, pipeline latency 100 ns,
/// 0.4 ns/B, compute 10 ns; 8-byte allreduce on 7 ranks.
#[test]
fn merging_beats_recursive_doubling_on_7_ranks() {
    let model = Model::Postal(Postal {
        alpha_p: 500_000,
        alpha_r: 100_000,
        beta: 400,
    });
    let opts = GoalOptions {
        tick: TimeUnit::PS.seconds(),
        ..GoalOptions::with_reduce_ns(10)
    };
    let run = |stages: &str| {
        let p = lowered(&allreduce(7, 8, stages));
        let s = goal::from_ir(&p, &opts).expect("converts");
        let r = simulate(
            &s,
            &SimOptions {
                model,
                trace: false,
            },
        );
        assert!(r.complete());
        r
    };
    let rd = run("[c6m2, a2, a2, e6m2]");
    let merge = run("[m1g1a3, n1g1a2]");
    let show = |r: &SimResult| {
        r.finish
            .iter()
            .map(|t| TimeUnit::PS.show(*t))
            .collect::<Vec<_>>()
    };
    eprintln!("rd {:?}\nmerge {:?}", show(&rd), show(&merge));
    let gain = rd.max - merge.max;
    assert!((900_000..=1_100_000).contains(&gain), "gain {gain} ps");
}

#[test]
fn trace_has_one_event_per_op_and_is_deterministic() {
    let s = parse(&rm_goal(&[4, 2], 8, 100));
    let opts = SimOptions {
        model: Model::LogGP(LogGP::default()),
        trace: true,
    };
    let r = simulate(&s, &opts);
    let text = trace::chrome_json(&s, &r, TimeUnit::NS).expect("traced");
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let events = v["traceEvents"].as_array().expect("traceEvents");
    assert_eq!(events.len(), s.op_count());
    assert!(
        events
            .iter()
            .all(|e| e["ph"] == "X" && e["pid"].is_u64() && e["tid"].is_u64())
    );
    // The last calc of every rank ends at the rank's finish time.
    let end = events
        .iter()
        .map(|e| e["ts"].as_f64().unwrap_or(0.0) + e["dur"].as_f64().unwrap_or(0.0))
        .fold(0.0, f64::max);
    assert!(
        (end - r.max as f64 / 1000.0).abs() < 1e-9,
        "{end} vs {}",
        r.max
    );
    let again = trace::chrome_json(&s, &simulate(&s, &opts), TimeUnit::NS);
    assert_eq!(again.as_deref(), Some(text.as_str()));
}

/// Two ranks that each send 100 kB before receiving: eager under S = 1 MB, a rendezvous
/// deadlock under LogGOPSim's default S (both sends wait for a receive that is never posted).
#[test]
fn rendezvous_deadlock_leaves_both_receives_unmatched() {
    let text = "num_ranks 2\nrank 0 {\ns: send 100000b to 1\nr: recv 100000b from 1\nr requires s\n}\nrank 1 {\ns: send 100000b to 0\nr: recv 100000b from 0\nr requires s\n}\n";
    let s = parse(text);
    let stuck = simulate(
        &s,
        &SimOptions {
            model: Model::LogGP(LogGP::default()),
            trace: false,
        },
    );
    assert!(!stuck.complete());
    assert_eq!(stuck.unexpected.len(), 2, "{stuck:?}");
    assert_eq!(stuck.ops_run, 2);
    let eager = LogGP {
        S: 1_000_000,
        ..LogGP::default()
    };
    assert!(loggp(&s, eager).max > 0);
}

#[test]
fn written_goal_parses_back_to_the_same_schedule() {
    let p = lowered(&allreduce(7, 8, "[m1g1a3, n1g1a2]"));
    let s = goal::from_ir(&p, &GoalOptions::with_reduce_ns(10)).expect("converts");
    let text = goal::write(&s);
    let back = parse(&text);
    assert_eq!(back.ranks.len(), s.ranks.len());
    for (a, b) in back.ranks.iter().zip(&s.ranks) {
        assert_eq!(a.ops, b.ops);
        assert_eq!(a.deps, b.deps);
    }
    // Comments are not kept by the reader; with them restored the text is the same.
    let mut back = back;
    back.comment = s.comment.clone();
    for (a, b) in back.ranks.iter_mut().zip(&s.ranks) {
        a.comment = b.comment.clone();
    }
    assert_eq!(goal::write(&back), text);
}

fn collc(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(args)
        .output()
        .expect("collc runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("collc-sim-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

#[test]
fn cli_sim_goal_prints_loggopsim_times_and_writes_a_trace() {
    let path = scratch("rd4.goal");
    std::fs::write(&path, rm_goal(&[2, 2], 8, 100)).expect("write");
    let p = path.to_str().expect("utf-8 path");
    let (rc, out, err) = collc(&["sim", p]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.contains("Times:\nHost 0: 11284\nHost 1: 11284\n"),
        "{out}"
    );
    assert!(
        out.contains("Maximum finishing time at host 0: 11284 (1.1284e-05 s)"),
        "{out}"
    );
    let json = scratch("rd4.json");
    let j = json.to_str().expect("utf-8 path");
    let (rc, out, err) = collc(&[
        "sim",
        p,
        "-L",
        "1000",
        "--loggp-o",
        "500",
        "-g",
        "200",
        "-G",
        "2",
        "--trace",
        j,
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.contains("Maximum finishing time at host 0: 4228"),
        "{out}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("trace written"))
            .expect("JSON");
    assert_eq!(v["traceEvents"].as_array().map(Vec::len), Some(24));
    // A schedule LogGOPSim cannot finish: E0038, exit 1, the queues named like LogGOPSim does.
    let bad = scratch("bad.goal");
    std::fs::write(&bad, "num_ranks 2\nrank 0 {\ns: send 100000b to 1\nr: recv 8b from 1\nr requires s\n}\nrank 1 {\ns: send 100000b to 0\nr: recv 8b from 0\nr requires s\n}\n").expect("write");
    let (rc, out, err) = collc(&["sim", bad.to_str().expect("utf-8")]);
    assert_eq!(rc, 1);
    assert!(out.contains("unexpected queue on host 1"), "{out}");
    assert!(err.contains("error[E0038]"), "{err}");
    let (rc, _, err) = collc(&["check", bad.to_str().expect("utf-8")]);
    assert_eq!(rc, 0, "eager everywhere it completes: {err}");
}

#[test]
fn cli_build_goal_and_sim_coll() {
    let src = format!(
        "{}model aries: pipelining_postal {{ alpha_p: 500 ns; alpha_r: 100 ns; beta: 0.4 ns/B; }}\n",
        allreduce(7, 8, "[m1g1a3, n1g1a2]")
    );
    let coll = scratch("m7.coll");
    std::fs::write(&coll, src).expect("write");
    let c = coll.to_str().expect("utf-8");
    let (rc, out, err) = collc(&["sim", c, "--reduce-ns", "10"]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.starts_with("pipelining postal: alpha_p=500, alpha_r=100, beta=0.4"),
        "{out}"
    );
    assert!(
        out.contains("Maximum finishing time at host 6: 1432.8 "),
        "{out}"
    );
    let goal_out = scratch("m7.goal");
    let g = goal_out.to_str().expect("utf-8");
    let (rc, _, err) = collc(&["build", c, "--target", "goal", "-o", g]);
    assert_eq!(rc, 0, "{err}");
    let (rc, _, err) = collc(&["check", g]);
    assert_eq!(rc, 0, "{err}");
    // The file (written as it is made) and standard output hold the same text.
    let (rc, printed, err) = collc(&["build", c, "--target", "goal"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&goal_out).expect("read"), printed);
    // A file that cannot be made is an I/O error (exit 2) that leaves nothing behind.
    let dir = scratch("not-a-dir.goal");
    std::fs::write(&dir, "x").expect("write");
    let inside = dir.join("m7.goal");
    let (rc, _, err) = collc(&[
        "build",
        c,
        "--target",
        "goal",
        "-o",
        inside.to_str().expect("utf-8"),
    ]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("cannot write"), "{err}");
    assert_eq!(std::fs::read_to_string(&dir).expect("read"), "x");
    let (rc, out, err) = collc(&["sim", g, "-b"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("Maximum finishing time"), "{out}");
    // Nothing is written when the file has errors.
    let broken = scratch("broken.coll");
    std::fs::write(&broken, "collective allreduce { size: 8 B; }\n").expect("write");
    let none = scratch("none.goal");
    let (rc, _, _) = collc(&[
        "build",
        broken.to_str().expect("utf-8"),
        "--target",
        "goal",
        "-o",
        none.to_str().expect("utf-8"),
    ]);
    assert_eq!(rc, 1);
    assert!(!none.exists());
}

/// 20,000 sends that wait for one calc, to 20,000 receives posted on another rank (issue 41:
/// an op whose dependents all become ready at once; the busy CPU and NICs used to put each
/// waiting send and message back one by one, N^2 pops). By hand, under LogGOPSim's defaults:
/// the sends leave every o = 1500 ns from t = 1 and arrive o + L = 4000 ns later; the
/// receiver's CPU takes o + 7 G = 1542 ns a message, so it is the bottleneck: message k is
/// received from 4001 + 1542 k, and the last ends at 4001 + 1542 N.
#[test]
fn a_fan_out_of_20000_sends_finishes_at_the_hand_computed_time() {
    const N: u64 = 20_000;
    let mut text = String::from("num_ranks 2\nrank 0 {\nh: calc 1\n");
    for i in 0..N {
        text.push_str(&format!("s{i}: send 8b to 1 tag {i}\ns{i} requires h\n"));
    }
    text.push_str("}\nrank 1 {\n");
    for i in 0..N {
        text.push_str(&format!("r{i}: recv 8b from 0 tag {i}\n"));
    }
    text.push_str("}\n");
    let r = loggp(&parse(&text), LogGP::default());
    assert_eq!(r.finish, vec![1 + 1500 * N, 4001 + 1542 * N]);
    assert_eq!(r.messages, N);
    assert_eq!(r.events, 1 + 3 * N);
}
