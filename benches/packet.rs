//! Benchmark: the packet-level simulator on the Canary paper's network (Section 5.2): a 4 MiB
//! allreduce on 512 randomly placed hosts of the 1,024-host two-level fat tree (32 leaves of 32
//! hosts, 32 spines, 100 Gb/s), the other 512 hosts generating random uniform traffic, adaptive
//! routing, default packet parameters (1 KiB payload + 57 B header), seed 1. The collective is
//! four static in-network trees (64 blocks round robin), hand-built as IR with switch processes
//! (tests/packet_support/trees.rs) until `schedule static_trees` lowers; also without
//! background traffic, one static tree with it, and the ring allreduce without it. Run with `cargo bench --bench
//! packet`; `cargo test --benches` runs each once.
//!
//! Measured on this 2-core machine (shared with other builds, load about 4.5), 2026-11-24,
//! one run each (`--test`), release build, seed 1:
//!
//! | run | simulated | goodput | events | wall | events/s |
//! |---|---|---|---|---|---|
//! | 4 static trees, 512 congesting | 436.2 us | 76.9 Gb/s | 26.1 M | 4.85 s | 5.38 M |
//! | 4 static trees, quiet | 354.9 us | 94.6 Gb/s | 8.9 M | 1.02 s | 8.81 M |
//! | 1 static tree, 512 congesting | 367.2 us | 91.4 Gb/s | 23.4 M | 4.18 s | 5.60 M |
//! | ring, quiet | 1813.3 us | 18.5 Gb/s | 33.6 M | 5.21 s | 6.44 M |
//!
//! Peak memory of the whole benchmark process (all programs loaded): 281 MB. (Under load 10-15
//! the first row took 8.59 s.) The congested ring is not benchmarked: it runs for milliseconds
//! of simulated time with 512 hosts injecting background at line rate (hundreds of millions of
//! events).

use collc::diag::SourceMap;
use collc::sema::{Options, check, model::Model};
use collc::sim::packet::{self, Network, PacketParams};
use criterion::{Criterion, criterion_group, criterion_main};
use std::time::Duration;

#[path = "../tests/packet_support/trees.rs"]
mod trees;

// The collc binary's allocator (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const PAPER: &str = "import fat_tree;
topology canary = fat_tree(leaves: 32, hosts_per_leaf: 32, spines: 32, host_bw: 100 Gbps, spine_bw: 100 Gbps);
collective allreduce { participants: host[0..16]; size: 4 MiB; dtype: i32; op: sum; }
schedule ring;
model congested: packet { placement: random; background: 1; }
model quiet: packet { placement: random; }";

fn load() -> Model {
    let mut sources = SourceMap::new();
    let id = sources.add("paper.coll", PAPER.to_string());
    check(&mut sources, id, &Options::default())
        .model
        .expect("the paper's setup checks")
}

/// One run of `prog` under `model` (by index) with seed 1 (the trees were built for the same
/// placement: [`packet::plan`] with seed 1).
fn once(
    m: &Model,
    network: &Network,
    prog: &collc::ir::Program,
    model: usize,
) -> packet::PacketRun {
    let params = PacketParams::from_model(&m.models[model]).expect("packet model");
    let declared: Vec<u32> = m
        .collective
        .as_ref()
        .unwrap()
        .ranks
        .iter()
        .map(|&h| h as u32)
        .collect();
    let mut runs =
        packet::run_seeds(network, prog, &declared, &params, 1, 1, false).expect("finishes");
    runs.remove(0)
}

fn bench(c: &mut Criterion) {
    let m = load();
    let network = Network::new(m.topology.as_ref().unwrap());
    let (ring, _) = collc::lower::lower_and_verify(&m).expect("lowers");
    let declared: Vec<u32> = m
        .collective
        .as_ref()
        .unwrap()
        .ranks
        .iter()
        .map(|&h| h as u32)
        .collect();
    let params = PacketParams::from_model(&m.models[0]).expect("packet model");
    let (hosts, _) = packet::plan(&network, &declared, &params, 1).expect("fits");
    let four = trees::static_trees(&network.net, &hosts, 4, 64, 4 << 20, 1);
    let one = trees::static_trees(&network.net, &hosts, 1, 64, 4 << 20, 1);
    let mut g = c.benchmark_group("packet");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(60));
    for (name, prog, model) in [
        ("4 static trees 4MiB 512 of 1024, 512 congesting", &four, 0),
        ("4 static trees 4MiB 512 of 1024, quiet", &four, 1),
        ("1 static tree 4MiB 512 of 1024, 512 congesting", &one, 0),
        ("ring 4MiB 512 of 1024, quiet", &ring, 1),
    ] {
        let start = std::time::Instant::now();
        let r = once(&m, &network, prog, model);
        let secs = start.elapsed().as_secs_f64();
        eprintln!(
            "{name}: simulated {:.1} us, goodput {:.1} Gb/s, {} events in {secs:.2} s ({:.2} M events/s), {} packets, average utilisation {:.1}%",
            r.jobs[0].seconds() * 1e6,
            r.jobs[0].goodput() / 1e9,
            r.events,
            r.events as f64 / secs / 1e6,
            r.packets,
            r.average_utilisation(&network.net) * 100.0
        );
        g.bench_function(name, |b| b.iter(|| once(&m, &network, prog, model)));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
