//! Benchmark (issue target: under 1 s): emitting MSCCL XML for 1,024-rank schedules from the
//! verified IR: recursive doubling, recursive multiplying `[a4, a4, a4, a4, a4]`, and the ring
//! allreduce (1,024 chunks on 32 channels: 64 steps per thread block, the executor's limit).
//! `emit` is the whole `--target msccl` backend: lowering to thread blocks and steps, writing,
//! reading back with quick-xml, every rule, and symbolic execution with `ir::verify`; the phases
//! are also timed alone. Run with `cargo bench --bench msccl`.
//!
//! Measured (2 shared cores, medians): recursive doubling emit 143 ms (lower 31, write 10,
//! validate 102), recursive multiplying emit 345 ms (lower 53, write 19, validate 246): under
//! the 1 s target. The ring is not: its XML is 253 MB (1,024 GPUs x 2,047 steps) and its
//! symbolic execution builds N^2 = 1M distinct partial sums; emit takes about 15 s (only
//! `emit` is timed for it, to keep the run short).

mod common;

use collc::backend::msccl::{self, Options};
use collc::ir::Program;
use collc::lower::lower;
use collc::sema::model::{AutoOr, Dtype, Family, Model, Stage};
use criterion::{Criterion, criterion_group, criterion_main};
use std::time::Duration;

const RANKS: usize = 1024;

fn model(family: Family) -> Model {
    common::allreduce(RANKS, 1 << 20, Dtype::F32, family)
}

fn case(c: &mut Criterion, name: &str, p: &Program, opts: &Options, phases: bool) {
    let mut g = c.benchmark_group(name);
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("emit", |b| {
        b.iter(|| msccl::emit(p, opts).map(|e| e.text.len()))
    });
    if !phases {
        g.finish();
        return;
    }
    let e = msccl::emit(p, opts).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    let algo = msccl::lower::lower(p, opts).expect("lowers");
    g.bench_function("lower", |b| {
        b.iter(|| msccl::lower::lower(p, opts).map(|a| a.gpus.len()))
    });
    g.bench_function("write", |b| b.iter(|| msccl::write::write(&algo).len()));
    g.bench_function("validate", |b| {
        b.iter(|| msccl::validate(&e.text, None, opts.max_steps).map(|p| p.ops))
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    let rd = lower(&model(Family::RecursiveDoubling)).expect("lowers");
    case(c, "msccl_rd_1024", &rd, &Options::default(), true);
    let rm = lower(&model(Family::RecursiveMultiplying {
        stages: AutoOr::Fixed(vec![Stage::Factor { base: 4 }; 5]),
        model: None,
    }))
    .expect("lowers");
    case(c, "msccl_rm_a4_1024", &rm, &Options::default(), true);
    let ring = lower(&model(Family::ring())).expect("lowers");
    let opts = Options {
        channels: 32,
        ..Options::default()
    };
    case(c, "msccl_ring_1024", &ring, &opts, false);
}

criterion_group!(benches, bench);
criterion_main!(benches);
