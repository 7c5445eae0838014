//! Benchmark: checking a generated topology of 100,000 links, end to end (parse, elaborate,
//! collective, schedule and whole-model checks). Two shapes: a file with 100,000 explicit `link`
//! statements (parser-bound) and a generator loop producing 100,000 links (elaborator-bound).
//! Run with `cargo bench --bench check`; the target is under 1 s each on a 2-core machine.

use collc::diag::SourceMap;
use collc::sema::{Options, check};
use criterion::{Criterion, criterion_group, criterion_main};
use std::fmt::Write;
use std::time::Duration;

const HOSTS: usize = 20_000;
const LINKS: usize = 100_000;

/// A flat file: `HOSTS` hosts in a ring plus chords, `LINKS` link statements in all.
pub fn flat_source() -> String {
    let mut s = format!("topology big {{\n    compute host[{HOSTS}];\n");
    for i in 0..LINKS {
        let a = i % HOSTS;
        let b = if i < HOSTS {
            (a + 1) % HOSTS
        } else {
            (a + 1 + (i / HOSTS) * 97) % HOSTS
        };
        let _ = writeln!(
            s,
            "    link host[{a}] <-> host[{b}] : 25 GB/s, latency 500 ns;"
        );
    }
    s.push_str("}\ncollective allreduce { size: 1 MiB; dtype: f32; op: sum; }\nschedule ring;\n");
    s
}

/// The same number of links from a generator loop.
pub fn loop_source() -> String {
    format!(
        "generator chords(n: int, m: int, bw: bandwidth) {{
    compute host[n];
    for i in 0..m {{
        let a = i % n;
        let k = floor(i / n);
        link host[a] <-> host[(a + 1 + k * 97) % n] : bw, latency 500 ns;
    }}
}}
topology big = chords({HOSTS}, {LINKS}, 25 GB/s);
collective allreduce {{ size: 1 MiB; dtype: f32; op: sum; }}
schedule ring;
"
    )
}

fn run(text: &str) -> usize {
    let mut sources = SourceMap::new();
    let id = sources.add("bench.coll", text.to_string());
    let c = check(&mut sources, id, &Options::default());
    assert!(c.diagnostics.is_empty(), "benchmark input has errors");
    c.model
        .and_then(|m| m.topology)
        .map(|t| t.links.len())
        .unwrap_or(0)
}

fn bench(c: &mut Criterion) {
    let flat = flat_source();
    let looped = loop_source();
    assert_eq!(run(&flat), LINKS);
    assert_eq!(run(&looped), LINKS);
    let mut g = c.benchmark_group("check_100k_links");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("flat_file", |b| b.iter(|| run(&flat)));
    g.bench_function("generator_loop", |b| b.iter(|| run(&looped)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
