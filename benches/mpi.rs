//! Benchmark (issue target: under 1 s): emitting the MPI program for a 1,024-rank schedule,
//! lower + verify + emit (encode `schedule.bin`, assemble the project), for recursive doubling,
//! recursive multiplying `[a4 x 5]` and the ring allreduce; each step is also timed on its own.
//! One element of f64 for the latency schedules, 1,024 elements for the ring. Run with
//! `cargo bench --bench mpi`; in test mode (`cargo test --benches`) the rank count is 64.

mod common;

use collc::backend::mpi;
use collc::ir::verify::verify;
use collc::lower::lower;
use collc::sema::model::{AutoOr, Dtype, Family, Model, Stage};
use criterion::{Criterion, criterion_group, criterion_main};
use std::time::Duration;

const RANKS: usize = if cfg!(debug_assertions) { 64 } else { 1024 };

fn model(family: Family, count: u64) -> Model {
    common::allreduce(RANKS, count, Dtype::F64, family)
}

fn bench(c: &mut Criterion) {
    let a4 = vec![Stage::Factor { base: 4 }; RANKS.trailing_zeros() as usize / 2];
    let cases = [
        ("recursive_doubling", model(Family::RecursiveDoubling, 1)),
        (
            "recursive_multiplying_a4",
            model(
                Family::RecursiveMultiplying {
                    stages: AutoOr::Fixed(a4),
                    model: None,
                },
                1,
            ),
        ),
        ("ring", model(Family::ring(), 1024)),
    ];
    for (name, m) in &cases {
        let program = lower(m).expect("lowers");
        verify(&program).expect("verifies");
        let size = mpi::emit(&program, "bench")
            .expect("emits")
            .files
            .iter()
            .map(|f| f.1.len())
            .sum::<usize>();
        eprintln!(
            "{name} on {RANKS} ranks: {} ops, project {size} bytes",
            program.op_count()
        );
        let mut grp = c.benchmark_group(format!("mpi_{name}_{RANKS}"));
        grp.sample_size(10).measurement_time(Duration::from_secs(5));
        grp.bench_function("lower", |b| b.iter(|| lower(m).map(|p| p.op_count())));
        grp.bench_function("verify", |b| b.iter(|| verify(&program).map(|p| p.terms)));
        grp.bench_function("emit", |b| {
            b.iter(|| mpi::emit(&program, "bench").map(|p| p.files.len()))
        });
        grp.bench_function("all", |b| {
            b.iter(|| {
                let p = lower(m).expect("lowers");
                verify(&p).expect("verifies");
                mpi::emit(&p, "bench").map(|p| p.files.len())
            })
        });
        grp.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
