//! The ForestColl fast paths give exactly the paper's algorithms' results: the optimistic and
//! leaping switch removals (src/forest/split.rs) against Algorithm 4 with Theorem 8's gamma in
//! full, and both speculative packings (src/forest/pack.rs, src/forest/tight.rs) against
//! Algorithm 5 with every mu computed, on the examples, a small DGX fat tree, tori, a hypercube,
//! a dragonfly and random box-and-switch topologies.

mod forest_common;

use collc::forest::net::Net;
use collc::forest::pack::{Batch, pack};
use collc::forest::split::{Logical, Pass, holds, remove_switches};
use collc::forest::{Direction, Roots, optimum, plan, tight};
use collc::sema::model::Topology;
use forest_common::*;
use proptest::prelude::*;

/// A logical arc: from, to, capacity, and its routes with their units.
type Arc = (usize, usize, i64, Vec<(Vec<u32>, i64)>);
/// A batch: root, multiplicity, edges.
type Trees = (usize, i64, Vec<(usize, usize, usize)>);

/// The switch-free graph, arc by arc.
fn arcs(lg: &Logical) -> Vec<Arc> {
    let mut out = Vec::new();
    for (u, m) in lg.out.iter().enumerate() {
        for (&v, &a) in m {
            let pieces = lg.pieces[a / 2]
                .iter()
                .map(|p| (p.path.clone(), p.units))
                .collect();
            out.push((u, v, lg.cap(a), pieces));
        }
    }
    out
}

fn batches(b: &[Batch]) -> Vec<Trees> {
    b.iter().map(|b| (b.root, b.m, b.edges.clone())).collect()
}

/// Runs both paths of both stages; returns whether the fast paths succeeded on their own (the
/// speculative packing of pack.rs for the second).
fn compare(topo: &Topology, ranks: &[usize], roots: Roots, dir: Direction) -> (bool, bool) {
    let (split_ok, spec_ok, _) = compare_all(topo, ranks, roots, dir);
    (split_ok, spec_ok)
}

/// [`compare`], also saying whether tight.rs's packing succeeded.
fn compare_all(
    topo: &Topology,
    ranks: &[usize],
    roots: Roots,
    dir: Direction,
) -> (bool, bool, bool) {
    let net = Net::build(topo, ranks, roots, dir).expect("builds");
    let opt = optimum::optimum(&net);
    let plan = plan::auto(&net, &opt);
    let mut fast = remove_switches(&net, &plan, Pass::Optimistic);
    let exact = remove_switches(&net, &plan, Pass::Exact);
    let split_ok = holds(&mut fast);
    if split_ok {
        assert_eq!(
            arcs(&fast),
            arcs(&exact),
            "optimistic switch removal differs"
        );
    }
    // Leaping over every switch: where the result still meets Theorem 10, it is the
    // optimistic pass's.
    let mut leap = remove_switches(&net, &plan, Pass::Leap(0));
    if holds(&mut leap) {
        assert_eq!(arcs(&leap), arcs(&fast), "leaping switch removal differs");
    }
    let k = plan.k as i64;
    let full = pack(&exact, &net.ranks, &net.roots, k, false);
    let spec = pack(&exact, &net.ranks, &net.roots, k, true);
    if let Some(spec) = &spec {
        let full = full
            .as_ref()
            .expect("a speculative packing proves the exact one exists");
        assert_eq!(batches(spec), batches(full), "speculative packing differs");
    }
    let learned = tight::pack(
        &exact,
        &net.ranks,
        &net.roots,
        k,
        tight::Order::Breadth,
        usize::MAX,
    );
    if let Some(learned) = &learned {
        let full = full
            .as_ref()
            .expect("a completed packing proves the exact one exists");
        assert_eq!(batches(learned), batches(full), "tight packing differs");
    }
    (split_ok, spec.is_some(), learned.is_some())
}

fn torus(x: usize, y: usize) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/torus_4x4.coll");
    std::fs::read_to_string(path)
        .expect("readable example")
        .replace("param x: int = 4;", &format!("param x: int = {x};"))
        .replace("param y: int = 4;", &format!("param y: int = {y};"))
}

/// Tori of the given sizes, the 16-node hypercube and the small dragonfly, named.
fn direct_networks(tori: &[(usize, usize)]) -> Vec<(String, Topology, Vec<usize>)> {
    let mut cases = Vec::new();
    for &(x, y) in tori {
        let (topo, ranks) = load_text("torus.coll", &torus(x, y));
        cases.push((format!("torus {x}x{y}"), topo, ranks));
    }
    for rel in [
        "examples/hypercube_16.coll",
        "examples/dragonfly_small.coll",
    ] {
        let (topo, ranks) = load(rel);
        cases.push((rel.to_string(), topo, ranks));
    }
    cases
}

/// Direct networks, where the speculative packing of pack.rs stalls: tight.rs completes, and
/// completes exactly as Algorithm 5.
#[test]
fn tight_packing_is_exact_on_direct_networks() {
    for (name, topo, ranks) in &direct_networks(&[(4, 4), (6, 5), (3, 7)]) {
        for dir in [Direction::Out, Direction::In] {
            let (_, _, learned) = compare_all(topo, ranks, Roots::All, dir);
            assert!(learned, "{name}");
            compare_all(topo, ranks, Roots::One(ranks[1]), dir);
        }
    }
}

/// Checks that `b` packs k spanning out-trees per root into `lg`: per root the batches' m add
/// up to k, each batch spans the ranks with one edge into every rank but its root, and no
/// logical arc carries more trees than its capacity.
fn assert_packs(lg: &Logical, ranks: &[usize], roots: &[usize], k: i64, b: &[Batch], name: &str) {
    for &r in roots {
        let m: i64 = b.iter().filter(|x| x.root == r).map(|x| x.m).sum();
        assert_eq!(m, k, "{name}: trees rooted at {r}");
    }
    let mut load: std::collections::BTreeMap<usize, i64> = Default::default();
    for x in b {
        let mut heads: Vec<usize> = x.edges.iter().map(|e| e.1).collect();
        heads.sort_unstable();
        heads.dedup();
        assert_eq!(heads.len(), x.edges.len(), "{name}: a rank entered twice");
        assert_eq!(
            x.edges.len() + 1,
            ranks.len(),
            "{name}: a batch that does not span"
        );
        assert!(!heads.contains(&x.root), "{name}: an edge into the root");
        for &(_, _, a) in &x.edges {
            *load.entry(a).or_default() += x.m;
        }
    }
    for (a, l) in load {
        assert!(
            l <= lg.cap(a),
            "{name}: arc {a} carries {l} trees over {}",
            lg.cap(a)
        );
    }
}

/// The widest-first order (tight::Order::Widest, the fallback for bipartite direct networks)
/// completes and packs k trees per root within every capacity, on tori, hypercubes and a
/// dragonfly.
#[test]
fn widest_first_packing_is_a_packing() {
    for (name, topo, ranks) in &direct_networks(&[(4, 4), (6, 5), (8, 8), (10, 6)]) {
        for dir in [Direction::Out, Direction::In] {
            let net = Net::build(topo, ranks, Roots::All, dir).expect("builds");
            let opt = optimum::optimum(&net);
            let plan = plan::auto(&net, &opt);
            let lg = remove_switches(&net, &plan, Pass::Exact);
            let k = plan.k as i64;
            let b = tight::pack(
                &lg,
                &net.ranks,
                &net.roots,
                k,
                tight::Order::Widest,
                usize::MAX,
            )
            .unwrap_or_else(|| panic!("{name}: widest-first packing completes"));
            assert_packs(&lg, &net.ranks, &net.roots, k, &b, name);
        }
    }
}

fn fat_tree(boxes: usize) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/dgx_a100_fat_tree_1024.coll");
    std::fs::read_to_string(path)
        .expect("readable example")
        .replace(
            "param boxes: int = 128;",
            &format!("param boxes: int = {boxes};"),
        )
}

#[test]
fn fast_paths_are_exact_on_the_examples() {
    for rel in [
        "examples/dgx_a100_2x8.coll",
        "examples/mi250_2x16.coll",
        "examples/mi250_8plus8.coll",
        "examples/forestcoll_fig2.coll",
    ] {
        let (topo, ranks) = load(rel);
        for dir in [Direction::Out, Direction::In] {
            // The optimistic switch removal is Algorithm 4's here; the speculative packing may
            // stall (MI250's k = 9 splits batches), and then only the exact one counts.
            let (split_ok, _) = compare(&topo, &ranks, Roots::All, dir);
            assert!(split_ok, "{rel}");
        }
    }
    // DGX boxes, alone and on a fat tree: both fast paths succeed.
    let (topo, ranks) = load("examples/dgx_a100_2x8.coll");
    assert_eq!(
        compare(&topo, &ranks, Roots::All, Direction::Out),
        (true, true)
    );
    let (topo, ranks) = load_text("fat_tree.coll", &fat_tree(8));
    assert_eq!(
        compare(&topo, &ranks, Roots::All, Direction::Out),
        (true, true)
    );
}

/// Boxes of GPUs on a box switch, each GPU with a NIC to one of the leaf switches, leaves on
/// spines; bandwidths vary per level.
#[derive(Debug, Clone)]
struct Boxes {
    gpus: Vec<usize>,
    leaves: usize,
    spines: usize,
    bw: (u32, u32, u32),
}

impl Boxes {
    fn text(&self) -> String {
        let mut s = String::from("topology t {\n");
        for (b, &g) in self.gpus.iter().enumerate() {
            s += &format!("  compute g{b}[{g}];\n  switch x{b};\n");
        }
        for l in 0..self.leaves {
            s += &format!("  switch l{l};\n");
        }
        for p in 0..self.spines {
            s += &format!("  switch p{p};\n");
        }
        let (inner, nic, up) = self.bw;
        let mut nic_no = 0;
        for (b, &g) in self.gpus.iter().enumerate() {
            for i in 0..g {
                s += &format!("  link g{b}[{i}] <-> x{b} : {inner} GB/s;\n");
                s += &format!(
                    "  link g{b}[{i}] <-> l{} : {nic} GB/s;\n",
                    nic_no % self.leaves
                );
                nic_no += 1;
            }
        }
        for l in 0..self.leaves {
            for p in 0..self.spines {
                s += &format!("  link l{l} <-> p{p} : {up} GB/s;\n");
            }
        }
        s + "}\n"
    }
}

fn boxes() -> impl Strategy<Value = Boxes> {
    (
        proptest::collection::vec(1usize..5, 2..5),
        1usize..4,
        1usize..3,
        (
            prop_oneof![Just(4u32), Just(12), Just(30)],
            1u32..4,
            1u32..4,
        ),
    )
        .prop_map(|(gpus, leaves, spines, bw)| Boxes {
            gpus,
            leaves,
            spines,
            bw,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn fast_paths_are_exact_on_random_boxes(spec in boxes(), inward in any::<bool>()) {
        let (topo, ranks) = load_text("boxes.coll", &spec.text());
        let dir = if inward { Direction::In } else { Direction::Out };
        compare(&topo, &ranks, Roots::All, dir);
        compare(&topo, &ranks, Roots::One(ranks[0]), dir);
    }
}

/// `collc build -v` splits the solver's time by step (issue 19), in the solver's order.
#[test]
fn verbose_build_reports_the_solver_steps() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(["build", "examples/dgx_a100_2x8.coll", "--emit", "ir", "-o"])
        .arg(dir.path().join("x.ir"))
        .arg("-v")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("collc runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let steps = [
        "solve: capacities",
        "solve: optimum",
        "solve: k and y",
        "solve: switch removal and packing",
        "solve: routes",
        "solve: chunks",
        "lower",
        "verify",
    ];
    let at: Vec<usize> = steps
        .iter()
        .map(|s| {
            err.find(&format!("collc: {s} "))
                .unwrap_or_else(|| panic!("no `{s}` line: {err}"))
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{err}");
}
