//! The all-to-all optimum (src/mcf): hand-computed optima on small networks, agreement with an
//! independent solve of the arc-based LP by the simplex on the testbeds, and the validity of
//! every returned routing (paths on existing edges between the right ranks, fractions summing to
//! exactly 1, every edge's load within bandwidth * tau_upper, exactly).

use collc::diag::{SourceMap, render};
use collc::mcf::{self, Optimum, approx};
use collc::sema::model::{NodeId, Topology};
use collc::sema::{Options, check};
use microlp::{ComparisonOp, OptimizationDirection, Problem};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};
use petgraph::visit::EdgeRef;
use std::collections::BTreeMap;

/// The topology of `src` and its compute nodes (the ranks, in order).
fn load(src: &str) -> (Topology, Vec<NodeId>) {
    let mut sources = SourceMap::new();
    let id = sources.add("test.coll", src);
    let c = check(&mut sources, id, &Options::default());
    assert!(
        c.diagnostics.is_empty(),
        "{}",
        render::to_text(&c.diagnostics, &sources)
    );
    let topo = c.model.and_then(|m| m.topology).expect("a topology");
    let ranks = topo.compute_nodes().collect();
    (topo, ranks)
}

fn q(n: i64, d: i64) -> BigRational {
    BigRational::new(n.into(), d.into())
}

/// Seconds per byte for `blocks` blocks over `gb_s` GB/s.
fn per(blocks: i64, gb_s: i64) -> BigRational {
    q(blocks, gb_s * 1_000_000_000)
}

/// Bandwidth of each ordered pair, parallel copies summed.
fn capacities(topo: &Topology) -> BTreeMap<(NodeId, NodeId), BigRational> {
    let mut cap = BTreeMap::new();
    for e in topo.graph.edge_references() {
        let (a, b) = (e.source().index(), e.target().index());
        if a != b && e.weight().bandwidth > BigRational::zero() {
            *cap.entry((a, b)).or_insert_with(BigRational::zero) += &e.weight().bandwidth;
        }
    }
    cap
}

/// Checks every pair's routes and that the loads fit bandwidth * tau_upper, the largest
/// exactly at it.
fn check_routing(topo: &Topology, opt: &Optimum) {
    let cap = capacities(topo);
    let mut load: BTreeMap<(NodeId, NodeId), BigRational> = BTreeMap::new();
    let n = opt.ranks.len();
    for s in 0..n {
        for t in 0..n {
            let routes = opt.routes(s, t);
            if s == t {
                assert!(routes.is_empty());
                continue;
            }
            let mut sum = BigRational::zero();
            for r in &routes {
                assert!(r.fraction > BigRational::zero());
                assert_eq!(r.path.first(), Some(&opt.ranks[s]), "{s}->{t}");
                assert_eq!(r.path.last(), Some(&opt.ranks[t]), "{s}->{t}");
                for hop in r.path.windows(2) {
                    let key = (hop[0], hop[1]);
                    assert!(cap.contains_key(&key), "no edge {key:?}");
                    *load.entry(key).or_insert_with(BigRational::zero) += &r.fraction;
                }
                sum += &r.fraction;
            }
            assert_eq!(sum, BigRational::one(), "fractions of {s}->{t}");
        }
    }
    let mut worst = BigRational::zero();
    for (key, l) in &load {
        let ratio = l / &cap[key];
        assert!(ratio <= opt.tau_upper, "edge {key:?} over tau_upper");
        worst = worst.max(ratio);
    }
    assert_eq!(
        worst, opt.tau_upper,
        "tau_upper is the routing's largest load"
    );
}

fn solve(src: &str) -> (Topology, Optimum) {
    let (topo, ranks) = load(src);
    let opt = mcf::solve(&topo, &ranks).expect("solves");
    check_routing(&topo, &opt);
    (topo, opt)
}

#[test]
fn two_ranks_on_one_link() {
    let (_, opt) = solve("topology t { compute a; compute b; link a <-> b : 10 GB/s; }");
    assert!(opt.proved());
    assert_eq!(opt.tau_lower, per(1, 10));
    let cut = opt.cut.expect("a tight cut");
    assert_eq!(cut.demand, 1);
}

/// Each of N ranks sends N - 1 blocks through its one link to the switch: tau >= (N-1)/c by
/// the cut around the rank, met by routing every block through the switch.
#[test]
fn star_of_five() {
    let (_, opt) = solve(
        "topology t { compute g[5]; switch x; for i in 0..5 { link g[i] <-> x : 20 GB/s; } }",
    );
    assert!(opt.proved());
    assert_eq!(opt.tau_lower, per(4, 20));
    assert_eq!(opt.cut.expect("a cut").ranks_inside, 1);
}

/// Bidirectional ring of 4, c per direction. Unit lengths on all 8 directed edges: the
/// distances from a node are 1, 1, 2, sum over pairs 16, sum c*l = 8c, so tau >= 2/c. Routing
/// neighbours directly and the opposite node half each way puts 1 + 1/2 + 1/2 = 2 on every
/// edge: tau = 2/c. No single cut is that tight (half the ring: 4 blocks over 2c).
#[test]
fn ring_of_four() {
    let (_, opt) = solve("import ring; topology t = ring(n: 4, bw: 10 GB/s);");
    assert!(opt.proved());
    assert_eq!(opt.tau_lower, per(2, 10));
    assert!(opt.cut.is_none());
}

/// Bidirectional ring of 5: unit lengths give distances 1, 1, 2, 2 from each node, sum 30,
/// over sum c*l = 10c: tau >= 3/c. Shortest paths are unique and every directed edge carries
/// its direct block and two 2-hop blocks: 3, so tau = 3/c.
#[test]
fn ring_of_five() {
    let (_, opt) = solve("import ring; topology t = ring(n: 5, bw: 10 GB/s);");
    assert!(opt.proved());
    assert_eq!(opt.tau_lower, per(3, 10));
}

/// Two boxes of 4 GPUs (100 GB/s to the box switch) whose switches each have one 25 GB/s link
/// to a shared switch: 4 * 4 blocks leave each box over 25 GB/s, tau = 16/25 GB/s, the cut
/// around a box (its GPUs and switch).
#[test]
fn two_boxes_behind_one_nic_each() {
    let (topo, opt) = solve(
        "topology t { compute a[4]; compute b[4]; switch xa; switch xb; switch ib;
         for i in 0..4 { link a[i] <-> xa : 100 GB/s; link b[i] <-> xb : 100 GB/s; }
         link xa <-> ib : 25 GB/s; link xb <-> ib : 25 GB/s; }",
    );
    assert!(opt.proved());
    assert_eq!(opt.tau_lower, per(16, 25));
    let cut = opt.cut.as_ref().expect("the box cut");
    assert_eq!((cut.demand, cut.ranks_inside), (16, 4));
    assert_eq!(cut.capacity, q(25_000_000_000, 1));
    let names: Vec<&str> = cut
        .nodes
        .iter()
        .map(|&v| topo.nodes[v].name.as_str())
        .collect();
    assert_eq!(names, ["a[0]", "a[1]", "a[2]", "a[3]", "xa"]);
    let line = opt.describe(&topo, 1 << 26);
    assert!(
        line.starts_with("optimal all-to-all time 42.950 ms for 64 MiB blocks"),
        "{line}"
    );
}

/// The arc-based (source-aggregated) LP solved by the simplex: per source, supply N-1 at the
/// source and demand 1 at every other rank; per edge, the sources' flows within c_e * tau.
/// Returns tau in seconds per byte.
fn arc_lp(topo: &Topology, ranks: &[NodeId]) -> f64 {
    let cap = capacities(topo);
    let unit = 1e9; // GB/s keeps the coefficients near 1
    let edges: Vec<((NodeId, NodeId), f64)> =
        cap.iter().map(|(&k, c)| (k, approx(c) / unit)).collect();
    let n = topo.nodes.len();
    let mut p = Problem::new(OptimizationDirection::Minimize);
    let tau = p.add_var(1.0, (0.0, f64::INFINITY));
    let mut on_edge = vec![vec![(tau, 0.0); 0]; edges.len()];
    for &s in ranks {
        let mut at = vec![Vec::new(); n];
        for (i, &((a, b), _)) in edges.iter().enumerate() {
            let f = p.add_var(0.0, (0.0, f64::INFINITY));
            at[a].push((f, 1.0));
            at[b].push((f, -1.0));
            on_edge[i].push((f, 1.0));
        }
        for (v, row) in at.into_iter().enumerate() {
            let net = if v == s {
                (ranks.len() - 1) as f64
            } else if ranks.contains(&v) {
                -1.0
            } else {
                0.0
            };
            p.add_constraint(row.as_slice(), ComparisonOp::Eq, net);
        }
    }
    for (mut row, &(_, c)) in on_edge.into_iter().zip(&edges) {
        row.push((tau, -c));
        p.add_constraint(row.as_slice(), ComparisonOp::Le, 0.0);
    }
    let sol = p
        .solve()
        .expect("arc LP")
        .into_solution()
        .expect("solution");
    sol.var_value(tau) / unit
}

fn agrees_with_arc_lp(src: &str) -> (Topology, Optimum) {
    let (topo, opt) = solve(src);
    assert!(
        opt.proved(),
        "not proved: {} .. {}",
        opt.tau_lower,
        opt.tau_upper
    );
    let want = arc_lp(&topo, &opt.ranks);
    let got = approx(&opt.tau_lower);
    assert!(
        (got - want).abs() <= 1e-7 * want,
        "column generation {got} vs arc LP {want}"
    );
    (topo, opt)
}

#[test]
fn dgx_a100_two_boxes_agrees() {
    let (_, opt) = agrees_with_arc_lp("import dgx_a100; topology t = dgx_a100(clusters: 2);");
    // 8 * 8 blocks leave a box over its 8 NICs of 25 GB/s.
    assert_eq!(opt.tau_lower, per(64, 200));
    assert!(opt.cut.is_some());
}

#[test]
fn mi250_two_boxes_agrees() {
    agrees_with_arc_lp("import mi250; topology t = mi250(clusters: 2);");
}

/// The torus is not settled by the greedy routing: column generation runs, and the bisection
/// (8 * 8 blocks over 8 links of 50 GB/s) is tight.
#[test]
fn torus_4x4_agrees() {
    let (_, opt) =
        agrees_with_arc_lp("import torus; topology t = torus2d(x: 4, y: 4, bw: 50 GB/s);");
    assert!(opt.rounds > 0);
    assert_eq!(opt.tau_lower, per(64, 400));
    assert_eq!(opt.cut.expect("the bisection").demand, 64);
}

/// 64 GPUs, 8 DGX boxes on the example's fat tree: the box cut, 8 * 56 blocks over 8 NICs.
#[test]
fn dgx_fat_tree_64_is_proved() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/dgx_a100_fat_tree_1024.coll");
    let text = std::fs::read_to_string(path).expect("readable example");
    let (topo, opt) = solve(&text.replace("param boxes: int = 128;", "param boxes: int = 8;"));
    assert_eq!(opt.ranks.len(), 64);
    assert!(opt.proved());
    assert_eq!(opt.tau_lower, per(8 * 56, 200));
    let cut = opt.cut.as_ref().expect("a box");
    assert_eq!((cut.ranks_inside, cut.demand), (8, 8 * 56));
    assert!(opt.describe(&topo, 1 << 24).contains("of 200 GB/s"));
}

#[test]
fn small_fat_tree_agrees() {
    agrees_with_arc_lp(
        "import fat_tree; topology t = fat_tree(leaves: 4, hosts_per_leaf: 4, spines: 2, \
         host_bw: 100 Gbps, spine_bw: 100 Gbps);",
    );
}

#[test]
fn errors_not_panics() {
    let (topo, _) = load("topology t { compute a; compute b; link a -> b : 1 GB/s; }");
    assert!(matches!(
        mcf::solve(&topo, &[0, 1]),
        Err(mcf::McfError::Unreachable { .. })
    ));
    assert!(matches!(
        mcf::solve(&topo, &[0, 7]),
        Err(mcf::McfError::UnknownNode(7))
    ));
    assert!(matches!(
        mcf::solve(&topo, &[0, 0]),
        Err(mcf::McfError::DuplicateRank(0))
    ));
    let one = mcf::solve(&topo, &[0]).expect("one rank");
    assert!(one.proved() && one.tau_upper.is_zero());
    let _ = BigInt::zero();
}
