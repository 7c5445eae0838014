//! Benchmark: the simulator's event rate on recursive doubling over 65,536 ranks (16 rounds of
//! send, recv and one calc per rank: 3.1 M ops and 1 M messages, 4.2 M events), built directly
//! as a GOAL schedule, under LogGP with LogGOPSim's defaults and under pipelining postal; and
//! on the GOAL of benches/pipeline.rs's program (recursive multiplying `[a4 x 8]` on 65,536
//! ranks, lowered and verified, 10 ns per reduce) under LogGP.
//! Reports events per second (criterion's element throughput). Run with
//! `cargo bench --bench sim`.
//!
//! Figures on 2 cores shared with another agent (load average 1.2 to 2.1, criterion medians of
//! 10 samples), the same machine and load before and after the engine's rework:
//!
//! | bench                         | before (6ec14ea)      | after                  |
//! |-------------------------------|-----------------------|------------------------|
//! | recursive doubling, LogGP     | 2.09 M events/s (2.0 s) | 4.77 M events/s (0.88 s) |
//! | recursive doubling, pipelining postal | 2.28 M/s (1.84 s) | 5.47 M/s (0.77 s)   |
//! | `[a4 x 8]` GOAL, LogGP (6.3 M events) | 0.59 M/s (10.7 s) | 1.30 M/s (4.85 s)    |
//!
//! Why the lowered GOAL was slower per event: its ranks keep six events each in the queue (sends,
//! receives and messages waiting for a busy CPU) against two in recursive doubling, 393,216 in all,
//! and 1.7 heap pops per event (events put back while their CPU is busy); every pop of the 4-ary
//! heap (LogGOPSim keeps a binary one) walked nine levels of cache misses, and releasing a
//! dependent cost a miss in each of four arrays, since events visit the ranks in no useful order.
//! The queue is now bucketed by time (at most 30 distinct times are pending; events arrive in ts
//! order, so a bucket is a FIFO plus a small heap for events put back, see
//! `src/sim/engine/queue.rs`) and an op's remaining count and dependent lists sit in one entry
//! (`Links`). Per event the lowered GOAL is still about 3.7 times slower than recursive doubling:
//! what is left is cache misses in the per-rank state (nodes, matching queues, ready lists), which
//! `perf` shows in `State::release` and `simulate`.
//!
//! 2026-11-24, same code, a quiet machine (load average 1.1 to 1.9), two runs of
//! `cargo bench --bench sim`, criterion medians: recursive doubling under LogGP 6.96 and 6.91 M
//! events/s (0.60 s), under pipelining postal 7.00 and 6.90 M events/s (0.60 s); the `[a4 x 8]`
//! GOAL under LogGP 1.72 and 1.82 M events/s (3.65 and 3.46 s).

mod common;

use collc::backend::goal::{self, Dep, DepKind, GoalOp, GoalRank, GoalSchedule, OpKind};
use collc::sema::model::Dtype;
use collc::sim::{LogGP, Model, Postal, SimOptions, simulate};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::time::Duration;

const RANKS: u32 = 1 << 16;

/// Round k: send to and receive from `r ^ 2^k` (tag k), then a calc of 100 that needs the
/// receive; the next round's send and receive need that calc.
pub fn recursive_doubling(n: u32) -> GoalSchedule {
    let rounds = n.trailing_zeros();
    let ranks = (0..n)
        .map(|r| {
            let mut rank = GoalRank::default();
            for k in 0..rounds {
                let peer = r ^ (1 << k);
                let base = rank.ops.len() as u32;
                rank.ops.push(GoalOp::new(OpKind::Send {
                    size: 8,
                    to: peer,
                    tag: k,
                }));
                rank.ops.push(GoalOp::new(OpKind::Recv {
                    size: 8,
                    from: peer,
                    tag: k,
                }));
                rank.ops.push(GoalOp::new(OpKind::Calc { time: 100 }));
                let dep = |op, on| Dep {
                    op,
                    on,
                    kind: DepKind::Requires,
                };
                rank.deps.push(dep(base + 2, base + 1));
                if k > 0 {
                    rank.deps.push(dep(base, base - 1));
                    rank.deps.push(dep(base + 1, base - 1));
                }
            }
            rank
        })
        .collect();
    GoalSchedule {
        comment: None,
        ranks,
    }
}

fn bench(c: &mut Criterion) {
    let s = recursive_doubling(RANKS);
    let models = [
        ("loggp", Model::LogGP(LogGP::default())),
        (
            "pipelining_postal",
            Model::Postal(Postal {
                alpha_p: 500,
                alpha_r: 100,
                beta: 1,
            }),
        ),
    ];
    let mut g = c.benchmark_group("sim_recursive_doubling_65536");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for (name, model) in models {
        let opts = SimOptions {
            model,
            trace: false,
        };
        let events = simulate(&s, &opts).events;
        g.throughput(Throughput::Elements(events));
        g.bench_function(name, |b| b.iter(|| simulate(&s, &opts)));
    }
    g.finish();
    let s = recursive_multiplying(RANKS as usize);
    let mut g = c.benchmark_group("sim_rm_a4_65536");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    let opts = SimOptions {
        model: Model::LogGP(LogGP::default()),
        trace: false,
    };
    let events = simulate(&s, &opts).events;
    g.throughput(Throughput::Elements(events));
    g.bench_function("loggp", |b| b.iter(|| simulate(&s, &opts)));
    g.finish();
}

/// The GOAL of benches/pipeline.rs's program: `[a4 x 8]` allreduce of one f64 on `n` ranks.
fn recursive_multiplying(n: usize) -> GoalSchedule {
    let m = common::allreduce(n, 1, Dtype::F64, common::rm_a4(n));
    let (p, proof) = collc::lower::lower_and_verify(&m).expect("lowers and verifies");
    goal::from_verified(&p, &proof, &goal::GoalOptions::with_reduce_ns(10)).expect("converts")
}

criterion_group!(benches, bench);
criterion_main!(benches);
