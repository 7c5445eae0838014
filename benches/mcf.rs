//! All-to-all optimum benchmarks (src/mcf): the exact max-concurrent-flow solve on the DGX-A100
//! fat tree of examples/dgx_a100_fat_tree_1024.coll with 8, 32 and 128 boxes (64, 256 and
//! 1,024 GPUs). The 64-GPU solve is timed by criterion; the larger ones take up to seconds, so
//! each is solved five times and the median time, the bounds and whether they are proved are
//! printed (with the four testbeds' figures for a 1 GiB per-rank buffer). Run with `cargo bench --bench mcf`;
//! `MCF_BENCH_BOXES=a,b` chooses the large box counts (default 32,128).

use collc::diag::SourceMap;
use collc::mcf::{self, approx};
use collc::sema::model::{NodeId, Topology};
use collc::sema::{Options, check};
use criterion::{Criterion, criterion_group, criterion_main};
use std::path::Path;
use std::time::{Duration, Instant};

fn checked(text: String, name: &str, params: &[(&str, String)]) -> (Topology, Vec<NodeId>) {
    let mut sources = SourceMap::new();
    let id = sources.add(name.to_string(), text);
    let mut opts = Options::default();
    for (k, v) in params {
        opts.params.push((k.to_string(), v.clone()));
    }
    let c = check(&mut sources, id, &opts);
    let topo = c.model.and_then(|m| m.topology).expect("a topology");
    let ranks = topo.compute_nodes().collect();
    (topo, ranks)
}

fn fat_tree(boxes: usize) -> (Topology, Vec<NodeId>) {
    let rel = "examples/dgx_a100_fat_tree_1024.coll";
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let text = std::fs::read_to_string(&path).expect("readable example");
    checked(text, rel, &[("boxes", boxes.to_string())])
}

/// Solves `RUNS` times and prints the median solve time, tau and T for a 1 GiB per-rank buffer.
fn once(name: &str, topo: &Topology, ranks: &[NodeId]) {
    const RUNS: usize = 5;
    let mut times = Vec::with_capacity(RUNS);
    let mut opt = None;
    for _ in 0..RUNS {
        let start = Instant::now();
        opt = Some(mcf::solve(topo, ranks).expect("solves"));
        times.push(start.elapsed());
    }
    times.sort();
    let took = times[RUNS / 2];
    let opt = opt.expect("solved");
    let block = (1u64 << 30) / ranks.len() as u64;
    let (lo, hi) = opt.time(block);
    println!(
        "mcf {name}: {} ranks, solved in {:.3} s (median of 5) ({} rounds, {} trees), proved {}, \
         tau in [{:.6e}, {:.6e}] s/B, T(1 GiB/N) in [{:.6} ms, {:.6} ms]\n  {}",
        ranks.len(),
        took.as_secs_f64(),
        opt.rounds,
        opt.tree_count(),
        opt.proved(),
        approx(&opt.tau_lower),
        approx(&opt.tau_upper),
        approx(&lo) * 1e3,
        approx(&hi) * 1e3,
        opt.describe(topo, block)
    );
}

fn testbeds() {
    for (name, src) in [
        (
            "dgx_a100 x2",
            "import dgx_a100; topology t = dgx_a100(clusters: 2);",
        ),
        ("mi250 x2", "import mi250; topology t = mi250(clusters: 2);"),
        (
            "torus 4x4",
            "import torus; topology t = torus2d(x: 4, y: 4, bw: 50 GB/s);",
        ),
    ] {
        let (topo, ranks) = checked(src.to_string(), "bench.coll", &[]);
        once(name, &topo, &ranks);
    }
    let (topo, ranks) = fat_tree(8);
    once("dgx fat tree 64", &topo, &ranks);
}

fn bench(c: &mut Criterion) {
    testbeds();
    let (topo, ranks) = fat_tree(8);
    let mut g = c.benchmark_group("mcf");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(3));
    g.bench_function("dgx_fat_tree_64", |b| {
        b.iter(|| mcf::solve(&topo, &ranks).expect("solves"))
    });
    g.finish();
    let boxes = std::env::var("MCF_BENCH_BOXES").unwrap_or_else(|_| "32,128".into());
    for b in boxes
        .split(',')
        .filter_map(|b| b.trim().parse::<usize>().ok())
    {
        let (topo, ranks) = fat_tree(b);
        once(&format!("dgx fat tree {}", 8 * b), &topo, &ranks);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
