//! Benchmark: `collc compare examples/dgx_a100_2x8.coll` over 1 KiB to 1 GiB (21 sizes, ring and
//! forest: 42 evaluations), through the library function behind the command
//! (`compare::compare`), with the file checked once outside the timing; and the table and SVG
//! chart drawn from the result. Run with `cargo bench --bench compare`; `cargo test --benches`
//! runs each once. The forest is solved in the first iteration and reused (as in one `collc
//! compare` run, which solves it once for all sizes).
//!
//! Measured on this 2-core machine, load below 1 (2026-11-24): `dgx_a100_2x8 1KiB..1GiB`
//! criterion medians 47.1 ms and 42.1 ms (two runs); the whole command, `collc compare
//! examples/dgx_a100_2x8.coll --plot OUT.svg`, 0.06-0.10 s over five runs (median 0.07 s,
//! 26 MB peak).

use collc::compare::{self, chart, render, sizes};
use collc::diag::SourceMap;
use collc::net::for_file;
use collc::progress::Quiet;
use collc::sema::{Options, check, model::Model};
use criterion::{Criterion, criterion_group, criterion_main};
use std::path::Path;
use std::time::Duration;

// The collc binary's allocator (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn load(rel: &str) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let text = std::fs::read_to_string(&path).expect("readable example");
    let mut sources = SourceMap::new();
    let id = sources.add(rel.to_string(), text);
    check(&mut sources, id, &Options::default())
        .model
        .expect("the example checks")
}

fn bench(c: &mut Criterion) {
    let m = load("examples/dgx_a100_2x8.coll");
    let params = compare::Engine::Flow(for_file(&m, None));
    let sweep = sizes::parse("1KiB..1GiB").expect("sizes");
    let mut g = c.benchmark_group("compare");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.bench_function("dgx_a100_2x8 1KiB..1GiB", |b| {
        b.iter(|| compare::compare(&m, &sweep, &params, &[], &Quiet).expect("compares"))
    });
    let done = compare::compare(&m, &sweep, &params, &[], &Quiet).expect("compares");
    g.bench_function("table and svg", |b| {
        b.iter(|| (render::table(&done), chart::svg(&done).expect("draws")))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
