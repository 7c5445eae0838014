//! ForestColl solver benchmarks (issue 5's and issue 19's speed targets): allgather forests with
//! automatic k for MI250 2x16 (under 1 s), DGX-A100 2x8 (under 0.1 s) and 1,024 GPUs, 128
//! DGX-A100 boxes on an InfiniBand fat tree (under 60 s; median 2.0 s since the leaping switch
//! removal, 1.56 s with push-relabel flows, 2026-11-27), the same with 50 GB/s InfiniBand (37
//! minutes before src/forest/tight.rs, about 7 s after, 5.8 s with leaping, 4.81 s with
//! push-relabel) and allreduce forests on 20x20 and 25x25 tori (283 s before, about 1 s after;
//! 0.22 s and 0.41 s now), on a 45x45 torus (2,025 nodes, about 10 s, 4.05 s with push-relabel),
//! and on even tori (24x24: 31 s before tight.rs's widest-first order, 0.7 s after, 0.39 s now;
//! 40x50, 2,000 nodes, did not finish before, about 10 s after, 3.77 s now), a hypercube of
//! dimension 10 (did not finish before, about 4 s after, 3.00 s now) and allgather forests on
//! dragonflies of 1,056 hosts (33 groups of 8 routers with 4 hosts each: median 3.18 s, then
//! 1.85 s with switch removal's flow shortcuts, 0.99 s with leaping, 0.50 s with push-relabel),
//! 2,112 hosts (16 routers a group: 10.4 s, then 6.06 s, then 2.73 s, then 1.39 s) and 4,160
//! hosts (65 groups: 57 s before, 31 to 41 s by hand after the shortcuts, median 13.9 s with
//! leaping, 7.29 s with push-relabel). Each loads its example through the front end once and
//! times `forest::solve` alone. Run with `cargo bench --bench forest`; `cargo test --benches`
//! runs each once (the 1,024-GPU solve takes about 2 s on the 2-core machine, so it runs by
//! default, with criterion's minimum of 10 samples). `FOREST_BENCH_BOXES=n` also times the same
//! fat tree with n DGX boxes (e.g. 32: 256 GPUs), to measure how the solver scales.

use collc::diag::SourceMap;
use collc::forest::validate::validate;
use collc::forest::{Direction, KChoice, Roots, solve};
use collc::sema::model::Topology;
use collc::sema::{Options, check};
use criterion::{Criterion, criterion_group, criterion_main};
use std::path::Path;
use std::time::Duration;

fn load(rel: &str) -> (Topology, Vec<usize>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let text = std::fs::read_to_string(&path).expect("readable example");
    let mut sources = SourceMap::new();
    let id = sources.add(rel.to_string(), text);
    let c = check(&mut sources, id, &Options::default());
    let model = c.model.expect("the example checks");
    let topo = model.topology.expect("a topology");
    let ranks = model.collective.expect("a collective").ranks;
    (topo, ranks)
}

fn bench(c: &mut Criterion, name: &str, rel: &str, samples: usize, secs: u64) {
    let (topo, ranks) = load(rel);
    let mut g = c.benchmark_group("forest");
    g.sample_size(samples);
    g.measurement_time(Duration::from_secs(secs));
    g.bench_function(name, |b| {
        b.iter(|| solve(&topo, &ranks, Roots::All, KChoice::Auto, Direction::Out).expect("solves"))
    });
    g.finish();
}

/// The example `rel` with each `(from, to)` of `edits` applied, solved once and validated,
/// then timed.
fn bench_edited(c: &mut Criterion, name: &str, rel: &str, edits: &[(&str, String)]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let mut text = std::fs::read_to_string(&path).expect("readable example");
    for (from, to) in edits {
        assert!(text.contains(from), "{rel} has no `{from}`");
        text = text.replace(from, to);
    }
    let tmp = std::env::temp_dir().join(format!("collc_forest_bench_{name}.coll"));
    std::fs::write(&tmp, text).expect("temp file");
    let (topo, ranks) = load(tmp.to_str().expect("utf-8 path"));
    // What is timed is checked once: every tree spans, every link's load fits its bandwidth.
    let forest = solve(&topo, &ranks, Roots::All, KChoice::Auto, Direction::Out).expect("solves");
    validate(&topo, &forest).expect("a valid forest");
    let mut g = c.benchmark_group("forest");
    // One solve takes seconds: criterion's minimum sample count, and no longer than it needs.
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(1));
    g.measurement_time(Duration::from_secs(1));
    g.bench_function(name, |b| {
        b.iter(|| solve(&topo, &ranks, Roots::All, KChoice::Auto, Direction::Out).expect("solves"))
    });
    g.finish();
}

/// The 1,024-GPU example with `boxes` DGX boxes instead of 128, and InfiniBand links of `ib`.
fn bench_boxes(c: &mut Criterion, name: &str, boxes: &str, ib: &str) {
    bench_edited(
        c,
        name,
        "examples/dgx_a100_fat_tree_1024.coll",
        &[
            (
                "param boxes: int = 128;",
                format!("param boxes: int = {boxes};"),
            ),
            (
                "topology superpod = dgx_fat_tree(boxes);",
                format!("topology superpod = dgx_fat_tree(boxes, ib_bw: {ib});"),
            ),
        ],
    );
}

/// An x-by-y torus of 50 GB/s links (examples/torus_4x4.coll) with a forest allreduce.
fn bench_torus(c: &mut Criterion, x: u32, y: u32) {
    bench_edited(
        c,
        &format!("torus_{x}x{y}_auto"),
        "examples/torus_4x4.coll",
        &[
            ("param x: int = 4;", format!("param x: int = {x};")),
            ("param y: int = 4;", format!("param y: int = {y};")),
            ("schedule ring;", "schedule forest;".into()),
        ],
    );
}

/// A hypercube of dimension `dim` of 25 GB/s links (examples/hypercube_16.coll) with a forest
/// allreduce.
fn bench_hypercube(c: &mut Criterion, dim: u32) {
    bench_edited(
        c,
        &format!("hypercube_{dim}_auto"),
        "examples/hypercube_16.coll",
        &[
            ("param dim: int = 4;", format!("param dim: int = {dim};")),
            ("schedule recursive_doubling;", "schedule forest;".into()),
        ],
    );
}

/// A dragonfly of `groups` groups of `routers` routers with `hosts` hosts each
/// (examples/dragonfly_small.coll) with a forest allgather over every host.
fn bench_dragonfly(c: &mut Criterion, groups: u32, routers: u32, hosts: u32) {
    let n = groups * routers * hosts;
    bench_edited(
        c,
        &format!("dragonfly_{groups}x{routers}x{hosts}_auto"),
        "examples/dragonfly_small.coll",
        &[
            (
                "dragonfly(groups: 5, routers: 4, hosts_per_router: 2,",
                format!(
                    "dragonfly(groups: {groups}, routers: {routers}, hosts_per_router: {hosts},"
                ),
            ),
            (
                "participants: [host[0][0], host[1][0], host[2][0], host[3][0], host[4][0]];",
                String::new(),
            ),
            ("size: 4 MiB;", format!("size: {} B;", 4 * n)),
            ("collective allreduce", "collective allgather".into()),
            ("op: sum;", String::new()),
            ("schedule static_trees", "schedule forest".into()),
            ("trees: 2;", String::new()),
        ],
    );
}

fn forest(c: &mut Criterion) {
    bench(c, "dgx_a100_2x8_auto", "examples/dgx_a100_2x8.coll", 20, 5);
    bench(c, "mi250_2x16_auto", "examples/mi250_2x16.coll", 10, 10);
    if let Ok(boxes) = std::env::var("FOREST_BENCH_BOXES") {
        let name = format!("dgx_a100_fat_tree_{boxes}x8_auto");
        bench_boxes(c, &name, &boxes, "25 GB/s");
    }
    bench_boxes(c, "dgx_a100_fat_tree_1024_auto", "128", "25 GB/s");
    bench_torus(c, 20, 20);
    // Seconds each in release; `cargo test --benches` (which passes no `--bench`) skips them.
    if std::env::args().any(|a| a == "--bench") {
        bench_boxes(c, "dgx_a100_fat_tree_1024_ib50_auto", "128", "50 GB/s");
        bench_torus(c, 25, 25);
        // 2,025 nodes: about 4 s a solve, so about a minute for criterion's ten samples.
        bench_torus(c, 45, 45);
        // Even tori and hypercubes pack in tight.rs's widest-first order (its breadth-first
        // order restarted over a thousand times on 24 x 24, and did not finish on these).
        bench_torus(c, 24, 24);
        bench_torus(c, 40, 50);
        bench_hypercube(c, 10);
        // Dragonflies of 1,056 hosts (264 routers), 2,112 hosts (528 routers) and 4,160 hosts
        // (1,040 routers; about 7 s a solve).
        bench_dragonfly(c, 33, 8, 4);
        bench_dragonfly(c, 33, 16, 4);
        bench_dragonfly(c, 65, 16, 4);
    }
}

criterion_group!(benches, forest);
criterion_main!(benches);
