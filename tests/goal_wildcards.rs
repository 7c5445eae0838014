//! GOAL wildcard receives (`recv ... from -1`, `tag -1`) matched as LogGOPSim matches them: an
//! arriving message takes the first compatible receive in posting order, a newly posted receive
//! the first compatible message in arrival order, sizes are not compared. Every schedule here is
//! small enough to time by hand: each expected time is LogGP's closed form (a send holds its CPU
//! `o`, arrives `o + L` after it starts, and the receiver's CPU takes `o + (s - 1) G` for it,
//! with O = 0), under LogGOPSim's defaults and under a second parameter set. Which message a
//! receive took shows in the trace: a receive's CPU span starts when its message arrived.
//!
//! When `LogGOPSim` and `txt2bin` are on PATH, the schedules are also run through them and the
//! per-host times compared; otherwise that part is skipped with a printed reason.

use collc::backend::goal::{self, GoalSchedule};
use collc::diag::{SourceMap, render};
use collc::sim::{LogGP, Model, SimOptions, SimResult, simulate};
use std::process::Command;

fn parse(text: &str) -> GoalSchedule {
    let mut files = SourceMap::new();
    let id = files.add("t.goal", text);
    match goal::parse(id, text) {
        Ok(s) => s,
        Err(d) => panic!("rejected:\n{}\n{text}", render::to_text(&d, &files)),
    }
}

fn run(s: &GoalSchedule, m: LogGP) -> SimResult {
    simulate(
        s,
        &SimOptions {
            model: Model::LogGP(m),
            trace: true,
        },
    )
}

/// When the message a receive took arrived (the start of the receive's CPU span).
fn arrival(r: &SimResult, rank: usize, op: usize) -> u64 {
    let tl = r.timeline.as_ref().expect("traced");
    tl[rank][op].expect("the receive ran").start
}

fn params() -> [LogGP; 2] {
    [
        LogGP::default(),
        LogGP {
            L: 1000,
            o: 500,
            g: 200,
            G: 2,
            O: 0,
            S: 65535,
            wrap: false,
        },
    ]
}

/// Per-host times from LogGOPSim for `text` under `m`, or why they cannot be had here.
fn loggopsim(text: &str, m: LogGP) -> Result<Vec<u64>, String> {
    let found = |name: &str| {
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
            .unwrap_or(false)
    };
    if !found("LogGOPSim") || !found("txt2bin") {
        return Err("LogGOPSim or txt2bin is not on PATH".into());
    }
    // One directory per call: the tests run in parallel threads of one process.
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = tmp.path();
    let (txt, bin) = (dir.join("s.goal"), dir.join("s.bin"));
    std::fs::write(&txt, text).map_err(|e| e.to_string())?;
    let t2b = Command::new("txt2bin")
        .arg("-i")
        .arg(&txt)
        .arg("-o")
        .arg(&bin)
        .output()
        .map_err(|e| e.to_string())?;
    if !t2b.status.success() {
        return Err(format!("txt2bin failed: {t2b:?}"));
    }
    let out = Command::new("LogGOPSim")
        .arg("-f")
        .arg(&bin)
        .args(["-L", &m.L.to_string(), "-o", &m.o.to_string()])
        .args(["-g", &m.g.to_string(), "-G", &m.G.to_string()])
        .args(["-O", &m.O.to_string(), "-S", &m.S.to_string()])
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    let times: Vec<u64> = text
        .lines()
        .filter_map(|l| l.strip_prefix("Host "))
        .filter_map(|l| l.split(": ").nth(1))
        .filter_map(|t| t.trim().parse().ok())
        .collect();
    Ok(times)
}

/// Checks `r` against LogGOPSim when it is available.
fn against_loggopsim(text: &str, m: LogGP, r: &SimResult) {
    match loggopsim(text, m) {
        Ok(times) if r.complete() => assert_eq!(times, r.finish, "LogGOPSim disagrees\n{text}"),
        // LogGOPSim prints no times for a run that ends with non-empty queues.
        Ok(times) => assert!(times.is_empty(), "LogGOPSim finished\n{text}"),
        Err(why) => println!("skipping the LogGOPSim comparison: {why}"),
    }
}

/// Rank 1's message leaves after two short calcs, rank 2's after a long one: under any timing
/// the wildcard `a` takes rank 1's and `b` rank 2's. One untimed run in dependency order gave
/// rank 2's to the wildcard (fewer steps) and reported E0038 for a schedule LogGOPSim finishes.
const TIMING_DECIDES: &str = "num_ranks 3
rank 0 {
a: recv 8b from -1 tag -1
b: recv 8b from 2 tag 3
}
rank 1 {
c: calc 1
d: calc 1
s: send 8b to 0 tag 1
d requires c
s requires d
}
rank 2 {
e: calc 100000
t: send 8b to 0 tag 3
t requires e
}
";

#[test]
fn the_wildcard_takes_the_message_that_arrives_first() {
    let s = parse(TIMING_DECIDES);
    for m in params() {
        let r = run(&s, m);
        assert!(r.complete(), "{r:?}");
        let (o, l, g7) = (m.o, m.L, 7 * m.G);
        assert_eq!(arrival(&r, 0, 0), 2 + o + l);
        assert_eq!(arrival(&r, 0, 1), 100_000 + o + l);
        assert_eq!(r.finish, vec![100_000 + 2 * o + l + g7, 2 + o, 100_000 + o]);
        against_loggopsim(TIMING_DECIDES, m, &r);
    }
}

#[test]
fn when_the_other_message_arrives_first_the_queues_are_left_as_loggopsim_leaves_them() {
    // Rank 1's message now comes last: the wildcard takes rank 2's, and `b` waits forever.
    let text = TIMING_DECIDES.replace("c: calc 1\n", "c: calc 200000\n");
    let s = parse(&text);
    for m in params() {
        let r = run(&s, m);
        assert!(!r.complete());
        assert_eq!(
            r.unexpected
                .iter()
                .map(|q| (q.host, q.peer, q.tag))
                .collect::<Vec<_>>(),
            [(0, 1, 1)]
        );
        assert_eq!(
            r.unmatched.iter().map(|q| q.op).collect::<Vec<_>>(),
            [(0, 1)]
        );
        against_loggopsim(&text, m, &r);
    }
}

#[test]
fn any_source_receives_take_messages_in_arrival_order() {
    // Rank 3 sends first, rank 1 last; sizes differ from the receives' (not compared).
    let text = "num_ranks 4
rank 0 {
a: recv 100b from -1 tag 0
b: recv 100b from -1 tag 0
c: recv 100b from -1 tag 0
}
rank 1 {
w: calc 20000
s: send 8b to 0
s requires w
}
rank 2 {
w: calc 10000
s: send 16b to 0
s requires w
}
rank 3 {
send 8b to 0
}
";
    let s = parse(text);
    for m in params() {
        let r = run(&s, m);
        assert!(r.complete(), "{r:?}");
        let (o, l) = (m.o, m.L);
        assert_eq!(arrival(&r, 0, 0), o + l);
        assert_eq!(arrival(&r, 0, 1), 10_000 + o + l);
        assert_eq!(arrival(&r, 0, 2), 20_000 + o + l);
        assert_eq!(r.finish[0], 20_000 + 2 * o + l + 7 * m.G);
        assert_eq!(r.finish[1..], [20_000 + o, 10_000 + o, o]);
        against_loggopsim(text, m, &r);
    }
}

/// Rank 1 sends tag 7, then (after a calc) tag 9; rank 0 posts a tag-7 and an any-tag receive.
fn any_tag(first: &str, second: &str) -> String {
    format!(
        "num_ranks 2
rank 0 {{
{first}
{second}
}}
rank 1 {{
s: send 8b to 0 tag 7
c: calc 10000
t: send 8b to 0 tag 9
c requires s
t requires c
}}
"
    )
}

#[test]
fn an_arriving_message_takes_the_first_compatible_receive_posted() {
    // The tag-7 receive is posted first: it takes tag 7, the any-tag receive takes tag 9.
    let text = any_tag("x: recv 8b from 1 tag 7", "y: recv 8b from 1 tag -1");
    let s = parse(&text);
    for m in params() {
        let r = run(&s, m);
        assert!(r.complete(), "{r:?}");
        let (o, l) = (m.o, m.L);
        assert_eq!(arrival(&r, 0, 0), o + l);
        assert_eq!(arrival(&r, 0, 1), 10_000 + 2 * o + l);
        assert_eq!(r.finish, vec![10_000 + 3 * o + l + 7 * m.G, 10_000 + 2 * o]);
        against_loggopsim(&text, m, &r);
    }
    // Posted the other way round, the any-tag receive takes tag 7 and tag 9 is never received,
    // whatever the parameters; the reader cannot know that without timing, the simulator can.
    let text = any_tag("y: recv 8b from 1 tag -1", "x: recv 8b from 1 tag 7");
    let s = parse(&text);
    for m in params() {
        let r = run(&s, m);
        assert_eq!(
            r.unexpected
                .iter()
                .map(|q| (q.peer, q.tag))
                .collect::<Vec<_>>(),
            [(1, 9)]
        );
        assert_eq!(
            r.unmatched.iter().map(|q| q.op).collect::<Vec<_>>(),
            [(0, 1)]
        );
        against_loggopsim(&text, m, &r);
    }
}

/// Rank 0 posts `a` (any) and `b` (from 2) only once rank 3's late message is in; by then the
/// messages of ranks 1 and 2 wait in the unexpected queue in the order they arrived.
fn unexpected(calc1: u64, calc2: u64) -> String {
    format!(
        "num_ranks 4
rank 0 {{
z: recv 8b from 3 tag 0
a: recv 8b from -1 tag -1
b: recv 8b from 2 tag 0
a requires z
b requires z
}}
rank 1 {{
w: calc {calc1}
v: send 8b to 0
v requires w
}}
rank 2 {{
w: calc {calc2}
v: send 8b to 0
v requires w
}}
rank 3 {{
w: calc 50000
v: send 8b to 0
v requires w
}}
"
    )
}

#[test]
fn a_posted_receive_takes_the_first_compatible_message_that_arrived() {
    // Rank 1's message arrives first, so the wildcard takes it and `b` gets rank 2's.
    let text = unexpected(1, 3000);
    let s = parse(&text);
    for m in params() {
        let r = run(&s, m);
        assert!(r.complete(), "{r:?}");
        let (o, l) = (m.o, m.L);
        assert_eq!(arrival(&r, 0, 1), 1 + o + l);
        assert_eq!(arrival(&r, 0, 2), 3000 + o + l);
        // The receives are posted when `z`'s message has been taken in.
        assert_eq!(r.finish[0], 50_000 + 2 * o + l + 7 * m.G);
        against_loggopsim(&text, m, &r);
    }
    // Rank 2's arrives first: the wildcard takes it and `b` has nothing left.
    let text = unexpected(3000, 1);
    let s = parse(&text);
    for m in params() {
        let r = run(&s, m);
        assert_eq!(r.unexpected.iter().map(|q| q.peer).collect::<Vec<_>>(), [1]);
        assert_eq!(
            r.unmatched.iter().map(|q| q.op).collect::<Vec<_>>(),
            [(0, 2)]
        );
        against_loggopsim(&text, m, &r);
    }
}

/// The binary: the timing-dependent schedule runs to the end; the one whose queues stay
/// non-empty exits 1 with E0038 and says that wildcards were paired by arrival.
#[test]
fn collc_sim_runs_wildcard_files() {
    let dir = std::env::temp_dir().join(format!("collc-wild-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let ok = dir.join("ok.goal");
    std::fs::write(&ok, TIMING_DECIDES).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_collc"))
        .arg("sim")
        .arg(&ok)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout.contains("Host 0: 105542\n"), "{stdout}");
    let bad = dir.join("bad.goal");
    std::fs::write(
        &bad,
        any_tag("y: recv 8b from 1 tag -1", "x: recv 8b from 1 tag 7"),
    )
    .expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_collc"))
        .arg("sim")
        .arg(&bad)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(stderr.contains("error[E0038]"), "{stderr}");
    assert!(
        stderr.contains("wildcard receive takes the first compatible message"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
