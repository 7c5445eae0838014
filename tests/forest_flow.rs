//! The forest time model (src/forest/chunking.rs) and the tree-level flow simulation
//! (src/sim/fluid/forest.rs): exact times with pipelining, per-hop latency and overhead on the
//! paper's Figure 2 topology with its Figure 5 trees, the simulation meeting the model there,
//! the best ring's time, what `chunks: auto` chooses for small and large messages, and the
//! `collc sim` output (insta snapshot). The agreement of the report's figure and the simulation
//! on the solved examples is in tests/forest_chunks.rs.

mod forest_fixtures;

use collc::forest::Direction;
use collc::forest::chunking::{self, choose};
use collc::net::{FlowParams, Net};
use collc::sema::model::{AutoOr, Collective, CollectiveKind};
use collc::sim::flow::Ring;
use collc::sim::fluid::run_forest;
use forest_fixtures::{fig2, load};
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};

fn q(n: i64, d: i64) -> BigRational {
    BigRational::new(n.into(), d.into())
}

fn us(x: i64) -> BigRational {
    q(x, 1_000_000)
}

const GIB: u64 = 1 << 30;

fn no_overhead() -> FlowParams {
    FlowParams {
        overhead: BigRational::zero(),
        ..FlowParams::default()
    }
}

/// The collective of `m` at `bytes` (f32 elements).
fn sized(m: &collc::sema::model::Model, kind: CollectiveKind, bytes: u64) -> Collective {
    let c = m.collective.as_ref().expect("collective");
    Collective {
        kind,
        count: bytes / c.dtype.bytes(),
        ..c.clone()
    }
}

/// With c chunks every tree finishes when its deepest node (4 tree edges down: the hop through
/// w0 at b, then three through the other cluster's switch at 10b, 4 + 3 * 2 = 10 us of links)
/// has all its data: the transfer at the tree's rate b, (M/8) / b, then its last chunk's three
/// fast hops, 3 * (M/8) / c / (10b), and 10 us, plus 4 overheads of 1 us by default.
#[test]
fn figure_2_allgather_time_is_pipelined_tree_time_plus_latency() {
    let m = load("examples/forestcoll_fig2.coll", &[]);
    let topo = m.topology.as_ref().expect("topology");
    let f = fig2(&m, Direction::Out);
    let b = q(25_000_000_000, 1);
    let c = sized(&m, CollectiveKind::Allgather, GIB);
    let per_root = chunking::per_root(&c);
    assert_eq!(per_root, q(GIB as i64 / 8, 1));
    for chunks in [1u64, 2, 8] {
        let drain = &per_root / q(chunks as i64, 1) * q(3, 10) / &b;
        let want = &per_root / &b + drain + us(10);
        let bare = chunking::trees(topo, &no_overhead(), &per_root, &[&f]);
        assert_eq!(chunking::seconds(&bare, 1, chunks), want, "chunks {chunks}");
        let ch = choose(
            topo,
            &FlowParams::default(),
            &c,
            AutoOr::Fixed(chunks),
            &[&f],
        );
        assert_eq!(ch.seconds, &want + us(4), "chunks {chunks}");
        assert_eq!(ch.optimum, &per_root / &b);
    }
}

#[test]
fn allreduce_is_reduce_scatter_then_allgather() {
    let m = load("examples/forestcoll_fig2.coll", &[]);
    let topo = m.topology.as_ref().expect("topology");
    let (rs, ag) = (fig2(&m, Direction::In), fig2(&m, Direction::Out));
    let p = FlowParams::default();
    let one = choose(
        topo,
        &p,
        &sized(&m, CollectiveKind::Allgather, GIB),
        AutoOr::Fixed(4),
        &[&ag],
    );
    let c = sized(&m, CollectiveKind::Allreduce, GIB);
    let two = choose(topo, &p, &c, AutoOr::Fixed(4), &[&rs, &ag]);
    assert_eq!(two.seconds, &one.seconds * q(2, 1));
}

/// The Figure 5 trees share no link beyond its capacity, so every tree gets its solver rate
/// and the simulation is the model: same time, every link's bytes within bandwidth x time, the
/// links to the global switch the busiest.
#[test]
fn figure_2_simulation_meets_the_model() {
    let m = load("examples/forestcoll_fig2.coll", &[]);
    let topo = m.topology.as_ref().expect("topology");
    let net = Net::new(topo);
    for (kind, forests) in [
        (CollectiveKind::Allgather, vec![fig2(&m, Direction::Out)]),
        (
            CollectiveKind::Allreduce,
            vec![fig2(&m, Direction::In), fig2(&m, Direction::Out)],
        ),
    ] {
        let refs: Vec<_> = forests.iter().collect();
        let c = sized(&m, kind, GIB);
        for p in [FlowParams::default(), no_overhead()] {
            let model = choose(topo, &p, &c, AutoOr::Fixed(8), &refs);
            let run = run_forest(topo, &net, &p, &c, &refs, 8, false);
            let want = model.seconds.to_f64().expect("finite");
            assert!(
                (run.seconds() - want).abs() < want * 1e-9,
                "{}: {} vs {want}",
                kind.name(),
                run.seconds()
            );
            assert_eq!(run.messages, 8 * 7 * 8 * forests.len() as u64);
            let util = run.utilisation(&net);
            assert!(util.iter().all(|u| u.1 <= 1.0 + 1e-9), "{util:?}");
            assert!(
                net.link_name(util[0].0).contains("w0"),
                "{}",
                net.link_name(util[0].0)
            );
        }
    }
}

/// Per-rank finish times: a rank has everything when its last tree's deepest path to it has
/// delivered; the latest is the collective's time; the trace has one span per tree.
#[test]
fn figure_2_finish_times_and_trace() {
    let m = load("examples/forestcoll_fig2.coll", &[]);
    let topo = m.topology.as_ref().expect("topology");
    let net = Net::new(topo);
    let f = fig2(&m, Direction::Out);
    let c = sized(&m, CollectiveKind::Allgather, GIB);
    let run = run_forest(topo, &net, &no_overhead(), &c, &[&f], 8, true);
    assert_eq!(run.finish.len(), 8);
    // Every rank is 4 hops deep in some tree (the chain's end in the other cluster): the
    // transfer at b, then the last of 8 chunks over three hops at 10b.
    let b = 25e9;
    let per_root = GIB as f64 / 8.0;
    let want = per_root / b + per_root / 8.0 * 3.0 / (10.0 * b) + 10e-6;
    for t in &run.finish {
        assert!((t - want).abs() < want * 1e-9, "{t} vs {want}");
    }
    let spans = run.spans.as_ref().expect("spans");
    assert_eq!(spans.len(), 8);
    let json = run.chrome_json().expect("json");
    assert!(json.contains("\"traceEvents\""), "{json}");
}

/// The best ring crosses one cluster's 4b once each way: 7/8 M / 100 GB/s, plus 7 steps of the
/// slowest neighbour path (c[0][3] -> c[1][0] through w0: 4 us), each step paying the message
/// overhead too (1 us by default).
#[test]
fn figure_2_ring() {
    let m = load("examples/forestcoll_fig2.coll", &[]);
    let topo = m.topology.as_ref().expect("topology");
    let net = Net::new(topo);
    let ranks = &m.collective.as_ref().expect("collective").ranks;
    let with = Ring::new(topo, ranks, &FlowParams::default(), &net);
    assert_eq!(with.step, us(5));
    let ring = Ring::new(topo, ranks, &no_overhead(), &net);
    assert_eq!(ring.lambda, q(100_000_000_000, 1));
    assert_eq!(ring.step, us(4));
    let size = q(GIB as i64, 1);
    let t = ring.time(CollectiveKind::Allgather, &size);
    assert_eq!(t, q(7, 8) * &size / &ring.lambda + us(28));
    assert_eq!(ring.time(CollectiveKind::Allreduce, &size), t * q(2, 1));
}

/// `chunks: auto`: one chunk for tiny messages, a few for 1 KiB (no chunk below 256 B), and
/// for 1 GiB the fewest within 1% of the best, which the largest allowed count attains.
#[test]
fn auto_chunks_grow_with_the_message() {
    let m = load("examples/forestcoll_fig2.coll", &[]);
    let topo = m.topology.as_ref().expect("topology");
    let f = fig2(&m, Direction::Out);
    let p = FlowParams::default();
    let at = |bytes: u64| {
        let c = sized(&m, CollectiveKind::Allgather, bytes);
        choose(topo, &p, &c, AutoOr::Auto, &[&f])
    };
    // 8 ranks x one f32 each: one element per rank, one chunk.
    assert_eq!(at(32).chunks, 1);
    let kib = at(8 << 10);
    assert_eq!(kib.max, 4, "1 KiB per rank in chunks of at least 256 B");
    assert!(kib.chunks <= 4);
    let big = at(GIB);
    // 256 B chunks (or the most slots a program has per buffer); a lowered program, held to
    // collc's program limits, takes fewer.
    let c = sized(&m, CollectiveKind::Allgather, GIB);
    let fits = collc::lower::forest::fitting_chunks(&c, &[&f]);
    assert_eq!(big.max, (GIB / 8 / 256).min(chunking::MAX_CHUNKS));
    assert!(fits < GIB / 8 / 256, "this case exercises the limit");
    assert_eq!(big.program, big.chunks.min(fits));
    assert!(big.program_seconds >= big.seconds);
    let best = chunking::seconds(
        &chunking::trees(
            topo,
            &p,
            &chunking::per_root(&sized(&m, CollectiveKind::Allgather, GIB)),
            &[&f],
        ),
        1,
        big.max,
    );
    assert!(big.seconds <= &best * q(101, 100));
    let fewer = choose(
        topo,
        &p,
        &sized(&m, CollectiveKind::Allgather, GIB),
        AutoOr::Fixed(big.chunks - 1),
        &[&f],
    );
    assert!(fewer.seconds > &best * q(101, 100));
    assert!(big.efficiency(&big.seconds) > 0.98);
}

/// `collc sim` on a forest schedule prints the flow table, the finish times and the busiest
/// links; `-b` only the latest finish; `--trace` writes the timeline.
#[test]
fn cli_sim_prints_the_flow_table() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_collc"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(args)
            .output()
            .expect("collc runs")
    };
    let out = run(&["sim", "examples/forestcoll_fig2.coll"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stdout));
    let b = run(&["sim", "-b", "examples/forestcoll_fig2.coll"]);
    let text = String::from_utf8_lossy(&b.stdout);
    assert!(text.starts_with("Maximum finishing time at host"), "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
    let dir = std::env::temp_dir().join(format!("collc-forest-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("t.json");
    let t = run(&[
        "sim",
        "examples/forestcoll_fig2.coll",
        "--trace",
        path.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(t.status.code(), Some(0));
    let json = std::fs::read_to_string(&path).expect("trace written");
    assert!(json.contains("out-tree"), "{json}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The tree model against the flow simulation of the lowered program, op by op, on a fat tree
/// of 64 hosts (8 leaves of 8, 8 spines, 100 Gb/s), whose forest is 64 chains 63 edges deep
/// and whose routes the program's messages take too: the links stay busy in the program at
/// any chunk count (the optimum plus 63 overheads), and the model (a tree's transfer at its
/// rate, then the last chunk's drain at link speed) is an upper estimate within a factor of
/// 1 + 1/c of it. Charging the fill at each tree's share of the links instead gave 60 times
/// the program's time at one chunk and twice it at 64.
#[test]
fn the_model_bounds_the_lowered_program_on_a_fat_tree() {
    let net_text = |chunks: u64| {
        format!(
            "import fat_tree;\n\
             topology t = fat_tree(leaves: 8, hosts_per_leaf: 8, spines: 8, host_bw: 100 Gbps, spine_bw: 100 Gbps);\n\
             collective allgather {{ participants: all; size: 16 MiB; dtype: i32; }}\n\
             schedule forest {{ chunks: {chunks}; }}\n"
        )
    };
    let optimum = 63.0 / 64.0 * (16u64 << 20) as f64 / 12.5e9;
    for chunks in [1u64, 4, 16, 64] {
        let mut sources = collc::diag::SourceMap::new();
        let id = sources.add("ft64.coll", net_text(chunks));
        let checked = collc::sema::check(&mut sources, id, &collc::sema::Options::default());
        let m = checked.model.expect("checks");
        let (topo, c) = (
            m.topology.as_ref().expect("topology"),
            m.collective.as_ref().expect("collective"),
        );
        let params = FlowParams::default();
        let net = Net::new(topo);
        let program = collc::sim::fluid::lower(&m, &params)
            .expect("lowers")
            .simulate(&net, &params, false)
            .expect("runs")
            .seconds();
        assert!(
            (program - (optimum + 63e-6)).abs() < 1e-9,
            "{chunks} chunks: the program takes {program}"
        );
        let (forests, ch) =
            collc::lower::forest::solve_chunked(&m, c, AutoOr::Auto, AutoOr::Fixed(chunks), c.span)
                .expect("solves");
        assert_eq!(ch.chunks, chunks);
        let model = ch.seconds.to_f64().expect("finite");
        let refs: Vec<_> = forests.iter().collect();
        let trees = chunking::trees(topo, &params, &chunking::per_root(c), &refs);
        assert!(trees.iter().all(|t| t.depth == 63), "chains");
        let sim = run_forest(topo, &net, &params, c, &refs, chunks, false).seconds();
        assert!((sim - model).abs() < model * 1e-9, "{sim} vs {model}");
        assert!(
            model >= program && model <= program * (1.0 + 1.0 / chunks as f64),
            "{chunks} chunks: model {model}, program {program}"
        );
    }
}
