//! Benchmark: lowering recursive multiplying on 65,536 ranks (`[a4 x 8]`: 4.8 M ops, 1.6 M
//! messages), recursive doubling on 65,536 ranks, and MPICH's collapse/expand on 65,535 ranks
//! (`[c65534m2, a2 x 15, e65534m2]`). Lowering is linear in the ops it emits. Run with
//! `cargo bench --bench lower`; in test mode (`cargo test --benches`, unoptimised) the rank
//! count is 4,096 so the run stays short.

mod common;

use collc::lower::lower;
use collc::sema::model::{AutoOr, Dtype, Family, Model, Stage};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::time::Duration;

const RANKS: usize = if cfg!(debug_assertions) {
    1 << 12
} else {
    1 << 16
};

fn model(n: usize, family: Family) -> Model {
    common::allreduce(n, 1, Dtype::F64, family)
}

fn bench(c: &mut Criterion) {
    let a4 = vec![Stage::Factor { base: 4 }; RANKS.trailing_zeros() as usize / 2];
    let cases = [
        (
            "recursive_multiplying_a4",
            model(
                RANKS,
                Family::RecursiveMultiplying {
                    stages: AutoOr::Fixed(a4),
                    model: None,
                },
            ),
        ),
        (
            "recursive_doubling",
            model(RANKS, Family::RecursiveDoubling),
        ),
        (
            "recursive_doubling_collapse",
            model(RANKS - 1, Family::RecursiveDoubling),
        ),
    ];
    let mut g = c.benchmark_group(format!("lower_{RANKS}_ranks"));
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    for (name, m) in &cases {
        let ops = lower(m).map(|p| p.op_count()).unwrap_or(0);
        assert!(ops > 0, "{name} does not lower");
        g.throughput(Throughput::Elements(ops as u64));
        g.bench_function(*name, |b| b.iter(|| lower(m).map(|p| p.op_count())));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
