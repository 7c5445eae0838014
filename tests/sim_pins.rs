//! Pins the simulator's complete results (every finish time, every op's span in the trace, the
//! event and message counts) on lowered recursive-multiplying schedules, under LogGP (eager and
//! rendezvous sizes), postal and pipelining postal. The digests were recorded with the engine
//! before its event queue and op layout were reworked for speed (commit 6ec14ea): any change
//! to the order in which events are handled or to a time shows up here.

use collc::backend::goal::{self, GoalOptions, GoalSchedule};
use collc::sema::model::{AutoOr, CollectiveKind, Dtype, Family, Model as Spec, ReduceOp, Stage};
use collc::sim::{LogGP, Model, Postal, SimOptions, SimResult, simulate};

/// The GOAL of a sum allreduce of `count` f64 on `n` ranks by recursive multiplying with
/// factor stages `bases`, lowered, verified and converted as `collc build --target goal` does.
fn lowered(n: usize, count: u64, bases: &[u64], reduce_ns: u64) -> GoalSchedule {
    let family = Family::RecursiveMultiplying {
        stages: AutoOr::Fixed(bases.iter().map(|&b| Stage::Factor { base: b }).collect()),
        model: None,
    };
    let m = Spec::bare(
        CollectiveKind::Allreduce,
        n,
        count,
        Dtype::F64,
        ReduceOp::Sum,
        None,
        family,
    );
    let (p, proof) = collc::lower::lower_and_verify(&m).expect("lowers and verifies");
    goal::from_verified(&p, &proof, &GoalOptions::with_reduce_ns(reduce_ns)).expect("converts")
}

/// FNV-1a over everything a run reports.
fn digest(r: &SimResult) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut eat = |x: u64| {
        for b in x.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    };
    r.finish.iter().for_each(|&f| eat(f));
    for x in [
        r.max,
        r.max_rank.into(),
        r.events,
        r.messages,
        r.ops_run as u64,
    ] {
        eat(x);
    }
    for op in r.timeline.iter().flatten().flatten() {
        match op {
            Some(s) => {
                for x in [s.rank.into(), s.op.into(), s.cpu.into(), s.start, s.end] {
                    eat(x);
                }
                eat(s.issued);
                eat(s.completed);
            }
            None => eat(u64::MAX),
        }
    }
    h
}

fn run(s: &GoalSchedule, model: Model) -> u64 {
    let traced = simulate(s, &SimOptions { model, trace: true });
    let plain = simulate(
        s,
        &SimOptions {
            model,
            trace: false,
        },
    );
    assert!(traced.complete(), "{traced:?}");
    assert_eq!(plain.finish, traced.finish);
    assert_eq!(plain.events, traced.events);
    digest(&traced)
}

/// Ranks, f64 elements, factor stages, ns per reduce, and the digests under LogGOPSim's LogGP,
/// a faster LogGP, postal and pipelining postal.
type Case = (usize, u64, &'static [u64], u64, [u64; 4]);

#[test]
fn lowered_schedules_simulate_exactly_as_recorded() {
    let postal = Model::Postal(Postal {
        alpha_p: 0,
        alpha_r: 700,
        beta: 1,
    });
    let pipelining = Model::Postal(Postal {
        alpha_p: 500,
        alpha_r: 100,
        beta: 1,
    });
    let fast = Model::LogGP(LogGP {
        L: 1000,
        o: 500,
        g: 200,
        G: 2,
        ..LogGP::default()
    });
    let cases: &[Case] = &[
        (
            256,
            1,
            &[4, 4, 4, 4],
            10,
            [
                0x2102d640e6e3c041,
                0x81e10aee9c987287,
                0xd1d4b35b20ce3a6a,
                0x93788abe3c08948b,
            ],
        ),
        (
            64,
            8192,
            &[2, 8, 4],
            100,
            [
                0xbf83d1fd9f35f808,
                0x232fdaf99060b1f6,
                0xbd91be109cd6d7af,
                0x1210dd4bcdee42dd,
            ],
        ),
        (
            96,
            16384,
            &[4, 3, 8],
            1000,
            [
                0x0dcc07ff36bd5f9d,
                0x3c2a37f38bc1f09e,
                0x01e5bf5e51634025,
                0xe376eb5b347cbd1b,
            ],
        ),
        (
            128,
            3,
            &[2, 2, 2, 2, 2, 2, 2],
            7,
            [
                0x8a7a0970b675cd9d,
                0x970d2398aba5acbf,
                0xbb4b604805cce254,
                0xe96781fe51cbd93e,
            ],
        ),
    ];
    let mut got = Vec::new();
    for (n, count, bases, reduce, _) in cases {
        let s = lowered(*n, *count, bases, *reduce);
        got.push([
            run(&s, Model::LogGP(LogGP::default())),
            run(&s, fast),
            run(&s, postal),
            run(&s, pipelining),
        ]);
    }
    let want: Vec<[u64; 4]> = cases.iter().map(|c| c.4).collect();
    assert_eq!(got, want, "{got:#x?}");
}
