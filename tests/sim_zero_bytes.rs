//! 0-byte messages under LogGP agree with LogGOPSim (issue 41, "Agreement with LogGOPSim").
//!
//! LogGOPSim (`src/LogGOPSim/LogGOPSim.cpp`) keeps times in `btime_t = uint64_t` and sizes in
//! `uint64_t`, so for a 0-byte message `(size-1)*X` is `2^64 - X` (0 when X = 0), which adds as
//! `-X` modulo 2^64:
//!
//! - send at t: CPU free at `t + o + (size-1)*O`, NIC at `t + g + (size-1)*G`; the message
//!   arrives at `t + o + L`; an eager send is done (its dependents queue at the CPU's free time);
//! - message handled at t: CPU free at `t + o + max((size-1)*O, (size-1)*G)`, the maximum of the
//!   two unsigned values, NIC at `t + g + (size-1)*G`; a matched receive is done and its
//!   dependents queue at the CPU's free time;
//! - a host finishes at its CPU's free time.
//!
//! With LogGOPSim's defaults (L=2500, o=1500, g=1000, G=6, O=0) a 0-byte send frees its CPU at
//! `t + 1500` and its NIC at `t + 994`, and a 0-byte receive frees its CPU at
//! `t + 1500 + max(0, 2^64 - 6) = t + 1494`. Every figure below is derived by hand from these
//! rules, step by step in the comments.

mod cli_support;

use cli_support::collc;
use collc::backend::goal::{self, GoalOptions, GoalSchedule};
use collc::diag::FileId;
use collc::sim::{LogGP, Model, SimOptions, SimResult, simulate};

fn parse(text: &str) -> GoalSchedule {
    match goal::parse(FileId(0), text) {
        Ok(s) => s,
        Err(d) => panic!("{d:#?}\n{text}"),
    }
}

fn run(text: &str, m: LogGP) -> SimResult {
    simulate(
        &parse(text),
        &SimOptions {
            model: Model::LogGP(m),
            trace: false,
        },
    )
}

/// `collc build --target goal` of `collective barrier; schedule recursive_doubling;` on 2 ranks.
const BARRIER_2: &str = "num_ranks 2\n\
rank 0 {\nop0: send 0b to 1 tag 0\nop1: recv 0b from 1 tag 0\nop3: calc 0\nop3 requires op1\n}\n\
rank 1 {\nop0: send 0b to 0 tag 0\nop1: recv 0b from 0 tag 0\nop3: calc 0\nop3 requires op1\n}\n";

/// The same on 4 ranks: partner r^1, then r^2.
fn barrier_4() -> String {
    let mut s = String::from("num_ranks 4\n");
    for r in 0..4 {
        let (a, b) = (r ^ 1, r ^ 2);
        s.push_str(&format!(
            "rank {r} {{\nop0: send 0b to {a} tag 0\nop1: recv 0b from {a} tag 0\nop3: calc 0\n\
             op4: send 0b to {b} tag 0\nop5: recv 0b from {b} tag 0\nop6: calc 0\n\
             op3 requires op1\nop4 requires op3\nop5 requires op3\nop6 requires op4\nop6 requires op5\n}}\n"
        ));
    }
    s
}

/// `collc build --target goal` of a ring allreduce of 4 B (one f32) on 2 ranks: one of the two
/// chunks is empty, so each step has a 4-byte and a 0-byte message.
const RING_2X4B: &str = "num_ranks 2\n\
rank 0 {\nop0: send 4b to 1 tag 0\nop2: recv 0b from 1 tag 0\nop2_calc: calc 0\n\
op3: send 0b to 1 tag 1\nop4: recv 4b from 1 tag 1\nop3 requires op2_calc\nop2_calc requires op2\n}\n\
rank 1 {\nop0: send 0b to 0 tag 0\nop2: recv 4b from 0 tag 0\nop2_calc: calc 0\n\
op3: send 4b to 0 tag 1\nop4: recv 0b from 0 tag 1\nop3 requires op2_calc\nop2_calc requires op2\n}\n";

#[test]
fn two_rank_barrier_ends_at_5494_as_in_loggopsim() {
    // t=0: each rank sends 0 B: CPU free at 1500, NIC at 994, message arrives at 1500+2500=4000.
    // t=4000: each message: CPU free at 4000 + 1500 - 6 = 5494 (collc used to say 5500); the
    // receive is done and the calc (0) runs at 5494.
    let r = run(BARRIER_2, LogGP::default());
    assert!(r.complete(), "{r:?}");
    assert_eq!(r.finish, vec![5494, 5494]);
    assert_eq!((r.overflow, r.wrapped), (None, None));
}

#[test]
fn four_rank_barrier_ends_at_10988() {
    // Round 1 as on 2 ranks: every calc op3 at 5494, the NIC free since 994.
    // Round 2: the send starts at max(CPU 5494, NIC 994) = 5494: CPU free at 6994, message
    // arrives at 5494 + 4000 = 9494, where the receive's CPU is free at 9494 + 1494 = 10988.
    let r = run(&barrier_4(), LogGP::default());
    assert!(r.complete(), "{r:?}");
    assert_eq!(r.finish, vec![10988; 4]);
}

#[test]
fn tiny_ring_matches_loggopsim_per_host() {
    // t=0: rank 0 sends 4 B: CPU 1500, NIC 0+1000+3*6 = 1018, arrives at rank 1 at 4000;
    //      rank 1 sends 0 B: CPU 1500, NIC 994, arrives at rank 0 at 4000. Receives posted.
    // t=4000: rank 1 takes 4 B: CPU 4000+1500+3*6 = 5518, calc at 5518;
    //         rank 0 takes 0 B: CPU 4000+1500-6 = 5494, calc at 5494.
    // t=5494: rank 0 sends 0 B (tag 1): CPU 6994, arrives at 9494.
    // t=5518: rank 1 sends 4 B (tag 1): CPU 7018, arrives at 9518.
    // t=9494: rank 1 takes 0 B: CPU 9494+1494 = 10988 (collc used to say 10994).
    // t=9518: rank 0 takes 4 B: CPU 9518+1500+18 = 11036.
    let r = run(RING_2X4B, LogGP::default());
    assert!(r.complete(), "{r:?}");
    assert_eq!(r.finish, vec![11036, 10988]);
}

#[test]
fn lowered_barriers_give_the_same_times() {
    let barrier = |n: u32| {
        let src = format!(
            "generator mesh(n: int) {{\n    compute host[n];\n    for i in 0..n {{\n        for j in i + 1..n {{\n            link host[i] <-> host[j] : 10 GB/s;\n        }}\n    }}\n}}\ntopology t = mesh({n});\ncollective barrier;\nschedule recursive_doubling;\n"
        );
        let mut files = collc::diag::SourceMap::new();
        let id = files.add("barrier.coll", src);
        let c = collc::sema::check(&mut files, id, &collc::sema::Options::default());
        let model = c.model.unwrap_or_else(|| panic!("{:#?}", c.diagnostics));
        let p = match collc::lower::lower_and_verify(&model) {
            Ok((p, _)) => p,
            Err(d) => panic!("{}", collc::diag::render::to_text(&d, &files)),
        };
        let s = goal::from_ir(&p, &GoalOptions::with_reduce_ns(0)).expect("converts");
        simulate(
            &s,
            &SimOptions {
                model: Model::LogGP(LogGP::default()),
                trace: false,
            },
        )
    };
    assert_eq!(barrier(2).finish, vec![5494; 2]);
    assert_eq!(barrier(4).finish, vec![10988; 4]);
}

/// One 0-byte message from rank 0 to rank 1.
const ONE: &str =
    "num_ranks 2\nrank 0 {\ns: send 0b to 1 tag 0\n}\nrank 1 {\nr: recv 0b from 0 tag 0\n}\n";

#[test]
fn receive_takes_the_unsigned_maximum_of_minus_o_and_minus_g() {
    // Rank 0: CPU free at 0 + 1500 + (0-1)*O = 1500 - O. The message arrives at 4000; rank 1's
    // CPU is free at 5500 + max_u(-O, -G): -G when O = 0, -O when G = 0, -min(O, G) otherwise.
    for (o_per, g_per, want) in [
        (0, 6, [1500, 5494]),
        (2, 6, [1498, 5498]),
        (8, 6, [1492, 5494]),
        (4, 0, [1496, 5496]),
        (0, 0, [1500, 5500]),
    ] {
        let m = LogGP {
            O: o_per,
            G: g_per,
            ..LogGP::default()
        };
        let r = run(ONE, m);
        assert!(r.complete(), "{r:?}");
        assert_eq!(r.finish, want, "O={o_per} G={g_per}");
    }
}

#[test]
fn a_time_below_zero_wraps_as_in_loggopsim() {
    // O = 2000 > o = 1500: rank 0's CPU is free at 0 + 1500 - 2000, which LogGOPSim's unsigned
    // arithmetic makes 2^64 - 500, and prints as rank 0's time; rank 1: 5500 - min(2000, 6).
    let m = LogGP {
        O: 2000,
        ..LogGP::default()
    };
    let r = run(ONE, m);
    assert!(r.complete(), "{r:?}");
    assert_eq!(r.finish, vec![u64::MAX - 499, 5494]);
    assert_eq!((r.wrapped, r.overflow), (Some((0, 0)), None));
}

#[test]
fn gap_zero_two_rank_barrier_still_ends_at_5494() {
    // g = 0: each send frees its NIC at 0 + 0 - 6, which wraps to 2^64 - 6; no rank sends
    // again, so nothing waits for it. Each message: CPU 4000 + 1494 = 5494, NIC 3994.
    let m = LogGP {
        g: 0,
        ..LogGP::default()
    };
    let r = run(BARRIER_2, m);
    assert!(r.complete(), "{r:?}");
    assert_eq!(r.finish, vec![5494, 5494]);
    assert_eq!((r.wrapped, r.overflow), (Some((0, 0)), None));
}

#[test]
fn gap_zero_four_rank_barrier_stops_or_wraps_like_loggopsim() {
    // g = 0: round 1 ends at 5494 on every rank as above, but every NIC is busy until
    // T = 2^64 - 6. Round 1's messages arrive at 4000 in the order 0->1, 1->0, 2->3, 3->2
    // (send order), so the calcs at 5494 run on ranks 1, 0, 3, 2 in that order, and the
    // round-2 sends, queued at T, go in that order too; their receives are posted at 5494.
    let m = LogGP {
        g: 0,
        ..LogGP::default()
    };
    // By default the first of them (rank 1's op4, its 4th op) stops the run: T + o passes 2^64.
    let r = run(&barrier_4(), m);
    assert_eq!((r.overflow, r.wrapped), (Some((1, 3)), Some((0, 0))));
    // LogGOPSim wraps instead. Rank 1's send at T: CPU T + 1500 = 1494 (mod 2^64), message to
    // rank 3 at T + 4000 = 3994; rank 3's CPU is busy until 5494, so it is taken at 5494: CPU
    // 5494 + 1494 = 6988. Rank 0's send likewise: CPU 1494, rank 2's CPU 6988. Rank 3's send
    // at T (CPU 6988 <= T): CPU 1494, so its calc op6 runs at 1494: rank 3 ends at 1494; its
    // message reaches rank 1 at 3994 (CPU 1494, NIC 3994 free): 3994 + 1494 = 5488, the calc
    // at 5488. Rank 2 likewise: rank 2 ends at 1494, rank 0 at 5488.
    let wrapping = LogGP { wrap: true, ..m };
    let r = run(&barrier_4(), wrapping);
    assert!(r.complete(), "{r:?}");
    assert_eq!(r.finish, vec![5488, 5488, 1494, 1494]);
    assert_eq!(r.overflow, None);
}

#[test]
fn cli_prints_loggopsim_times_and_explains_a_wrapped_wait() {
    let dir = std::env::temp_dir().join(format!("collc-zero-bytes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let two = dir.join("barrier2.goal");
    let four = dir.join("barrier4.goal");
    std::fs::write(&two, BARRIER_2).expect("write");
    std::fs::write(&four, barrier_4()).expect("write");
    let (two, four) = (two.to_str().expect("utf-8"), four.to_str().expect("utf-8"));
    for args in [&["sim", two][..], &["sim", two, "-g", "0"][..]] {
        let (rc, out, err) = collc(args);
        assert_eq!(rc, 0, "{err}");
        assert!(out.contains("Host 0: 5494\nHost 1: 5494\n"), "{out}");
    }
    let (rc, out, err) = collc(&["sim", four, "-g", "0"]);
    assert_eq!(rc, 1, "{out}");
    assert!(err.contains("error[E0047]"), "{err}");
    assert!(err.contains("wrapped below zero"), "{err}");
    assert!(err.contains("--loggp-wrap"), "{err}");
    let (rc, out, err) = collc(&["sim", four, "-g", "0", "--loggp-wrap", "-b"]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.contains("Maximum finishing time at host 0: 5488"),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
