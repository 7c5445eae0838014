//! Parking ([`super::park`]) against LogGOPSim's own way of putting busy events back one by
//! one: the same results, traces included, on random schedules built to keep CPUs and NICs
//! busy (many ops ready at once, several CPUs and NICs, 0-byte and rendezvous messages, odd
//! LogGP parameters), and the large fan-in that parking exists for.

use super::{Builder, Compiled, Parking, run};
use crate::sim::{LogGP, Model, Postal, SimOptions, SimResult};

fn rng(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = seed | 1;
    move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m.max(1)
    }
}

/// An op of [`random`]: (kind, size, peer, tag, cpu, nic).
type Op = (u8, u64, u32, u32, u8, u8);

/// A random schedule: matched messages (unique tags), calcs, and dependencies, many of them
/// on one op so that its dependents become ready together.
fn random(seed: u64) -> Compiled {
    let mut next = rng(seed);
    let n = 1 + next(3) as usize;
    let mut ops: Vec<Vec<Op>> = vec![Vec::new(); n];
    let sizes = [0, 1, 8, 1000, 70_000];
    for m in 0..(n as u64 * 12) {
        let (a, b) = (next(n as u64) as usize, next(n as u64) as usize);
        let size = sizes[next(sizes.len() as u64) as usize];
        let (cpu, nic) = (next(3) as u8 / 2, next(3) as u8 / 2);
        ops[a].push((0, size, b as u32, m as u32, cpu, nic));
        ops[b].push((1, size, a as u32, m as u32, cpu, next(2) as u8));
        for _ in 0..next(3) {
            ops[a].push((2, next(30_000), 0, 0, next(2) as u8, 0));
        }
    }
    let mut b = Builder::with_capacity(0, 0);
    for list in &mut ops {
        for i in (1..list.len()).rev() {
            list.swap(i, next(i as u64 + 1) as usize);
        }
        b.rank();
        for &(k, size, peer, tag, cpu, nic) in list.iter() {
            match k {
                0 => b.send(size, peer, tag, cpu, nic),
                1 => b.recv(size, peer, tag, cpu, nic),
                _ => b.calc(size, cpu, nic),
            }
        }
        // A hub every few ops that the next ones wait for.
        let mut hub = 0u32;
        for i in 1..list.len() as u32 {
            if next(4) == 0 {
                hub = i;
            } else if next(3) != 0 {
                b.dep(i, hub.min(i - 1), next(8) == 0);
            }
        }
    }
    b.finish()
}

fn both(make: impl Fn() -> Compiled, model: Model) -> (SimResult, SimResult) {
    let opts = SimOptions { model, trace: true };
    let max = crate::sema::elab::Limits::MAX_EVENTS;
    (
        run(make(), &opts, max, Parking::new(true)),
        run(make(), &opts, max, Parking::new(false)),
    )
}

#[test]
fn parking_changes_no_result() {
    let loggps = [
        LogGP::default(),
        LogGP {
            g: 0,
            o: 10,
            O: 20,
            ..LogGP::default()
        },
        // No CPU overhead: a send leaves its CPU free and its NIC busy, so a calc can run in
        // between and change when the sends waiting for both are free.
        LogGP {
            L: 100,
            o: 0,
            g: 5000,
            G: 3,
            O: 0,
            S: 65535,
            wrap: false,
        },
        LogGP {
            L: 0,
            o: 1,
            g: 4000,
            G: 1,
            O: 0,
            S: 8,
            wrap: true,
        },
    ];
    let mut ran = 0;
    for seed in 1..=1000u64 {
        let mut models: Vec<Model> = loggps.iter().map(|m| Model::LogGP(*m)).collect();
        models.push(Model::Postal(Postal {
            alpha_p: 700,
            alpha_r: 300,
            beta: 2,
        }));
        for model in models {
            let (on, off) = both(|| random(seed), model);
            assert_eq!(on, off, "seed {seed}, {model:?}");
            ran += usize::from(on.max != 0);
        }
    }
    // The schedules ran (not all trivially empty).
    assert!(ran > 3000, "{ran}");
}

/// 20,000 calcs of 3 ns that one calc requires, all on one CPU: they run back to back, then
/// the last. Without parking this took 2 * 10^8 pops.
#[test]
fn a_large_fan_in_runs_in_order() {
    const N: u32 = 20_000;
    let mut b = Builder::with_capacity(0, 0);
    b.rank();
    for _ in 0..N {
        b.calc(3, 0, 0);
    }
    b.calc(5, 0, 0);
    for i in 0..N {
        b.dep(N, i, false);
    }
    let opts = SimOptions {
        model: Model::LogGP(LogGP::default()),
        trace: false,
    };
    let r = run(b.finish(), &opts, u64::MAX, Parking::new(true));
    assert!(r.complete());
    assert_eq!(r.finish, vec![3 * u64::from(N) + 5]);
    assert_eq!(r.events, u64::from(N) + 1);
}
