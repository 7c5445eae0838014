//! The flow-level model (src/sim/flow.rs) on the paper's Figure 2 topology with its Figure 5
//! trees: exact times with pipelining and per-hop latency, link loads within capacity, the best
//! ring's time, and the algbw table `collc sim` prints (insta snapshot).

mod forest_fixtures;

use collc::forest::Direction;
use collc::sema::model::CollectiveKind;
use collc::sim::flow::{Ring, forest_phase, forest_time, table};
use forest_fixtures::{fig2, load, node};
use num_rational::BigRational;

fn q(n: i64, d: i64) -> BigRational {
    BigRational::new(n.into(), d.into())
}

fn us(x: i64) -> BigRational {
    q(x, 1_000_000)
}

const GIB: i64 = 1 << 30;

/// With c chunks every tree finishes when its deepest node (4 tree edges down: the hop through
/// w0, then three through the other cluster's switch, 4 + 3 * 2 = 10 us of links) has all its
/// data: (c + 3) / c * (M/8) / b + 10 us.
#[test]
fn figure_2_allgather_time_is_pipelined_tree_time_plus_latency() {
    let m = load("examples/forestcoll_fig2.coll", &[]);
    let topo = m.topology.as_ref().expect("topology");
    let f = fig2(&m, Direction::Out);
    let b = q(25_000_000_000, 1);
    let size = q(GIB, 1);
    for c in [1i64, 2, 8] {
        let t = forest_time(topo, CollectiveKind::Allgather, 8, &size, c as u64, &[&f]);
        let want = q(c + 3, c) * &size / q(8, 1) / &b + us(10);
        assert_eq!(t.seconds, want, "chunks {c}");
    }
}

/// Every link's load stays within what its bandwidth moves at the trees' rate (M/8 at b), and
/// the links to the global switch are the saturated ones.
#[test]
fn figure_2_loads_respect_capacities() {
    let m = load("examples/forestcoll_fig2.coll", &[("b", "10 GB/s")]);
    let topo = m.topology.as_ref().expect("topology");
    let f = fig2(&m, Direction::Out);
    let per_root = q(GIB / 8, 1);
    let p = forest_phase(topo, &f, &per_root, 1);
    let stage = &per_root / q(10_000_000_000, 1);
    let w0 = node(topo, "w0");
    let mut saturated = 0;
    for (e, load) in &p.loads {
        let edge = &topo.graph.raw_edges()[*e];
        let cap = &edge.weight.bandwidth * &stage;
        assert!(*load <= cap, "edge {e} carries {load} > {cap}");
        if *load == cap {
            saturated += 1;
            let ends = [edge.source().index(), edge.target().index()];
            assert!(ends.contains(&w0), "edge {e} is saturated");
        }
    }
    // Every node's link to w0 and back: 16 directed edges.
    assert_eq!(saturated, 16);
    // Busiest over the whole (unpipelined) run: a w0 link, busy 1/4 of 4 stages + 10 us.
    let (e, _) = p.busiest(topo).expect("a busiest link");
    let edge = &topo.graph.raw_edges()[e];
    assert!([edge.source().index(), edge.target().index()].contains(&w0));
}

#[test]
fn allreduce_is_reduce_scatter_then_allgather() {
    let m = load("examples/forestcoll_fig2.coll", &[]);
    let topo = m.topology.as_ref().expect("topology");
    let (rs, ag) = (fig2(&m, Direction::In), fig2(&m, Direction::Out));
    let size = q(GIB, 1);
    let one = forest_time(topo, CollectiveKind::Allgather, 8, &size, 4, &[&ag]);
    let two = forest_time(topo, CollectiveKind::Allreduce, 8, &size, 4, &[&rs, &ag]);
    assert_eq!(two.seconds, &one.seconds * q(2, 1));
}

/// The best ring crosses one cluster's 4b once each way: 7/8 M / 100 GB/s, plus 7 steps of the
/// slowest neighbour path (c[0][3] -> c[1][0] through w0: 4 us).
#[test]
fn figure_2_ring() {
    let m = load("examples/forestcoll_fig2.coll", &[]);
    let topo = m.topology.as_ref().expect("topology");
    let ring = Ring::new(topo, &m.collective.as_ref().expect("collective").ranks);
    assert_eq!(ring.lambda, q(100_000_000_000, 1));
    assert_eq!(ring.step, us(4));
    let size = q(GIB, 1);
    let t = ring.time(CollectiveKind::Allgather, &size);
    assert_eq!(t, q(7, 8) * &size / &ring.lambda + us(28));
    assert_eq!(ring.time(CollectiveKind::Allreduce, &size), t * q(2, 1));
}

#[test]
fn figure_2_table() {
    let m = load("examples/forestcoll_fig2.coll", &[]);
    let topo = m.topology.as_ref().expect("topology");
    let f = fig2(&m, Direction::Out);
    let ring = Ring::new(topo, &m.collective.as_ref().expect("collective").ranks);
    let text = table(
        CollectiveKind::Allgather,
        &|b| forest_time(topo, CollectiveKind::Allgather, 8, b, 8, &[&f]),
        &ring,
    );
    // At 1 GiB the forest approaches 8b = 200 GB/s * 8/11 (eight chunks, four stages deep), the
    // ring 100 GB/s * 8/7.
    insta::assert_snapshot!(text);
}

/// The solver's DGX A100 forest: every link's load stays within its bandwidth at the forest's
/// rate (each root's M/N bytes in M/N * inv_rate seconds).
#[test]
fn solved_dgx_forest_respects_link_capacities() {
    let m = load("examples/dgx_a100_2x8.coll", &[]);
    let topo = m.topology.as_ref().expect("topology");
    let c = m.collective.as_ref().expect("collective");
    let f = collc::lower::forest::solve(&m, c, collc::sema::model::AutoOr::Auto, c.span)
        .unwrap_or_else(|d| panic!("{}", d[0].message));
    let per_root = q(1 << 20, 1);
    let p = forest_phase(topo, &f[0], &per_root, 1);
    let time = &per_root * &f[0].inv_rate;
    for (e, load) in &p.loads {
        let cap = &topo.graph.raw_edges()[*e].weight.bandwidth * &time;
        assert!(*load <= cap, "edge {e}: {load} > {cap}");
    }
}

/// `collc sim` on a forest schedule prints the flow table.
#[test]
fn cli_sim_prints_the_flow_table() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["sim", "examples/forestcoll_fig2.coll"])
        .output()
        .expect("collc runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stdout));
}
