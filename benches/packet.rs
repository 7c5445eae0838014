//! Benchmark: the packet-level simulator on the Canary paper's network (Section 5.2): a 4 MiB
//! allreduce on 512 randomly placed hosts of the 1,024-host two-level fat tree (32 leaves of 32
//! hosts, 32 spines, 100 Gb/s), the other 512 hosts generating random uniform traffic, adaptive
//! routing, default packet parameters (1 KiB payload + 57 B header), seed 1. The collective is
//! `schedule static_trees { trees: 4; }` lowered for the run's placement and roots
//! ([`packet::run_file`], what `collc sim` runs); also without background traffic, one static
//! tree with it, the ring allreduce without it, and Canary (`schedule canary { }`, its protocol
//! executed per packet, the postcondition checked) with and without it. Run with
//! `cargo bench --bench packet`;
//! `cargo test --benches` runs each once.
//!
//! Figures: see the table in docs/figures/canary-fig7.md and the issue notes (events per second
//! and peak memory of `collc sim` on the same runs, measured with /usr/bin/time).

use collc::diag::SourceMap;
use collc::sema::{Options, check, model::Model};
use collc::sim::packet::{self, Network, PacketParams};
use criterion::{Criterion, criterion_group, criterion_main};
use std::time::Duration;

// The collc binary's allocator (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const PAPER: &str = "import fat_tree;
topology canary = fat_tree(leaves: 32, hosts_per_leaf: 32, spines: 32, host_bw: 100 Gbps, spine_bw: 100 Gbps);
collective allreduce { participants: host[0..16]; size: 4 MiB; dtype: i32; op: sum; }
schedule static_trees { trees: 4; }
model congested: packet { placement: random; background: 1; }
model quiet: packet { placement: random; }";

/// The paper's setup with `schedule` in place of the static trees.
fn load(schedule: &str) -> Model {
    let text = PAPER.replace("schedule static_trees { trees: 4; }", schedule);
    let mut sources = SourceMap::new();
    let id = sources.add("paper.coll", text);
    check(&mut sources, id, &Options::default())
        .model
        .expect("the paper's setup checks")
}

/// One run of `m` under its model `model` (by index) with seed 1.
fn once(m: &Model, model: usize) -> packet::PacketRun {
    let params = PacketParams::from_model(&m.models[model]).expect("packet model");
    let mut runs =
        packet::run_file(m, m.models[model].span, &params, 1, 1, false).expect("finishes");
    runs.remove(0)
}

fn bench(c: &mut Criterion) {
    let four = load("schedule static_trees { trees: 4; }");
    let one = load("schedule static_trees { trees: 1; }");
    let ring = load("schedule ring;");
    let canary = load("schedule canary { }");
    let network = Network::new(four.topology.as_ref().unwrap());
    let mut g = c.benchmark_group("packet");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(60));
    for (name, m, model) in [
        ("4 static trees 4MiB 512 of 1024, 512 congesting", &four, 0),
        ("4 static trees 4MiB 512 of 1024, quiet", &four, 1),
        ("1 static tree 4MiB 512 of 1024, 512 congesting", &one, 0),
        ("ring 4MiB 512 of 1024, quiet", &ring, 1),
        ("canary 4MiB 512 of 1024, 512 congesting", &canary, 0),
        ("canary 4MiB 512 of 1024, quiet", &canary, 1),
    ] {
        let start = std::time::Instant::now();
        let r = once(m, model);
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
        g.bench_function(name, |b| b.iter(|| once(m, model)));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
