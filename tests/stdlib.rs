//! The standard library (stdlib/*.coll) elaborates to exactly the topologies it documents: node
//! and link counts, names, bandwidths, parallel links and neighbour sets, including the edge cases
//! (dimensions of size 1 and 2, single nodes). The MI250 link matrix is compared entry by entry
//! with ForestColl's (../shared/topologies/mi250.txt when present, and a copy kept here for CI).

#![allow(clippy::needless_range_loop)] // matrices read best with explicit indices

use collc::diag::{Diagnostic, Severity, SourceMap, render};
use collc::sema::model::{NodeId, NodeKind, Topology};
use collc::sema::{Options, check};
use num_bigint::BigInt;
use num_rational::BigRational;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

// ---------------------------------------------------------------------------------------------
// Helpers

/// Checks `src` as a main file and returns its diagnostics and topology (if it checked).
fn run(src: &str) -> (Vec<Diagnostic>, Option<Topology>, SourceMap) {
    let mut sources = SourceMap::new();
    let id = sources.add("test.coll", src);
    let c = check(&mut sources, id, &Options::default());
    let topo = c.model.and_then(|m| m.topology);
    (c.diagnostics, topo, sources)
}

/// Elaborates `import module; topology t = call;` and returns the topology; panics with the
/// rendered diagnostics if there are any.
fn topo(module: &str, call: &str) -> Topology {
    let src = format!("import {module};\ntopology t = {call};\n");
    let (diags, topo, sources) = run(&src);
    assert!(
        diags.is_empty(),
        "`{call}` has diagnostics:\n{}",
        render::to_text(&diags, &sources)
    );
    topo.expect("a topology when there are no diagnostics")
}

/// Bytes per second from decimal gigabytes per second.
fn gb_s(n: i64) -> BigRational {
    BigRational::from_integer(BigInt::from(n) * BigInt::from(1_000_000_000u64))
}

/// Bytes per second from gigabits per second.
fn gbit_s(n: i64) -> BigRational {
    gb_s(n) / BigRational::from_integer(BigInt::from(8))
}

fn id(t: &Topology, name: &str) -> NodeId {
    t.nodes
        .iter()
        .position(|n| n.name == name)
        .unwrap_or_else(|| panic!("no node `{name}` in topology `{}`", t.name))
}

fn count(t: &Topology, kind: NodeKind) -> usize {
    t.nodes.iter().filter(|n| n.kind == kind).count()
}

/// Names of nodes of one kind whose name starts with `prefix`, in declaration order.
fn names(t: &Topology, kind: NodeKind, prefix: &str) -> Vec<String> {
    t.nodes
        .iter()
        .filter(|n| n.kind == kind && n.name.starts_with(prefix))
        .map(|n| n.name.clone())
        .collect()
}

/// Every link as an unordered pair of node names with (parallel copies, bandwidth). Asserts that
/// every link is bidirectional, has no self-loop and that no pair is linked by two statements.
fn pairs(t: &Topology) -> BTreeMap<(String, String), (u32, BigRational)> {
    let mut out = BTreeMap::new();
    for l in &t.links {
        assert!(l.bidirectional, "stdlib links are `<->`");
        assert_ne!(l.from, l.to, "self-loop");
        let (a, b) = (&t.nodes[l.from].name, &t.nodes[l.to].name);
        let key = if a < b {
            (a.clone(), b.clone())
        } else {
            (b.clone(), a.clone())
        };
        let prev = out.insert(key.clone(), (l.parallel, l.bandwidth.clone()));
        assert!(prev.is_none(), "{key:?} is linked twice in `{}`", t.name);
    }
    out
}

/// Neighbour sets by node id (links are all `<->`).
fn neighbours(t: &Topology) -> Vec<BTreeSet<NodeId>> {
    let mut out = vec![BTreeSet::new(); t.nodes.len()];
    for l in &t.links {
        out[l.from].insert(l.to);
        out[l.to].insert(l.from);
    }
    out
}

/// Checks a topology of compute nodes only: no duplicate or self links, every link at `bw` with
/// one copy, and node `i`'s neighbours exactly `expected[i]`. Returns the number of links.
fn assert_graph(t: &Topology, bw: &BigRational, expected: &[BTreeSet<NodeId>]) -> usize {
    assert_eq!(t.nodes.len(), expected.len(), "{}: node count", t.name);
    assert_eq!(count(t, NodeKind::Switch), 0, "{}: no switches", t.name);
    let p = pairs(t);
    for (k, (par, b)) in &p {
        assert_eq!(*par, 1, "{k:?}: one copy");
        assert_eq!(b, bw, "{k:?}: bandwidth");
    }
    let got = neighbours(t);
    for (i, want) in expected.iter().enumerate() {
        assert_eq!(
            &got[i], want,
            "{}: neighbours of `{}`",
            t.name, t.nodes[i].name
        );
    }
    let undirected: usize = expected.iter().map(BTreeSet::len).sum::<usize>() / 2;
    assert_eq!(t.links.len(), undirected, "{}: link count", t.name);
    assert_eq!(t.edge_count(), 2 * undirected, "{}: directed edges", t.name);
    undirected
}

fn errors(diags: &[Diagnostic]) -> Vec<&Diagnostic> {
    diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The library itself

const MODULES: &[&str] = &[
    "dgx_a100",
    "dragonfly",
    "fat_tree",
    "full_mesh",
    "hypercube",
    "mi250",
    "ring",
    "torus",
];

#[test]
fn every_module_is_embedded_and_documented() {
    let embedded: Vec<&str> = collc::sema::stdlib::names().collect();
    for m in MODULES {
        assert!(embedded.contains(m), "module `{m}` is not embedded");
        let text = collc::sema::stdlib::get(m).expect("embedded");
        assert!(
            text.starts_with("// "),
            "stdlib/{m}.coll must start with a `//` comment block"
        );
        // The header documents each generator's signature.
        for line in text.lines().filter(|l| l.starts_with("generator ")) {
            let sig = line.trim_end_matches(" {");
            let sig = sig.split('(').next().expect("name");
            assert!(
                text.contains(&format!("// {sig}(")),
                "stdlib/{m}.coll: `{sig}` is not documented in the header"
            );
        }
    }
}

#[test]
fn all_modules_import_together_without_clashes() {
    let imports: String = MODULES.iter().map(|m| format!("import {m};\n")).collect();
    let (diags, _, sources) = run(&imports);
    assert!(
        diags.is_empty(),
        "importing every module:\n{}",
        render::to_text(&diags, &sources)
    );
}

#[test]
fn stdlib_generators_compose_with_use() {
    let src = "import full_mesh;\n\
               topology t {\n\
                   switch net;\n\
                   for b in 0..3 {\n\
                       use full_mesh(n: 4, bw: 100 GB/s) as box[b];\n\
                       link box[b].node[0] <-> net : 25 GB/s;\n\
                   }\n\
               }\n";
    let (diags, t, sources) = run(src);
    assert!(diags.is_empty(), "{}", render::to_text(&diags, &sources));
    let t = t.expect("topology");
    assert_eq!(count(&t, NodeKind::Compute), 12);
    assert_eq!(t.links.len(), 3 * 6 + 3);
    id(&t, "box[2].node[3]");
}

#[test]
fn stdlib_generators_nest_inside_user_generators() {
    let src = "import ring;\n\
               generator pod(n: int) {\n\
                   switch tor;\n\
                   for b in 0..2 {\n\
                       use ring(n: n, bw: 10 GB/s) as r[b];\n\
                       link r[b].node[0] <-> tor : 10 GB/s;\n\
                   }\n\
               }\n\
               topology t {\n\
                   for p in 0..2 {\n\
                       use pod(n: 3) as pod[p];\n\
                   }\n\
               }\n";
    let (diags, t, sources) = run(src);
    assert!(diags.is_empty(), "{}", render::to_text(&diags, &sources));
    let t = t.expect("topology");
    assert_eq!(count(&t, NodeKind::Compute), 2 * 2 * 3);
    assert_eq!(count(&t, NodeKind::Switch), 2);
    assert_eq!(t.links.len(), 2 * (2 * 3 + 2));
    let p = pairs(&t);
    assert!(p.contains_key(&("pod[1].r[1].node[0]".into(), "pod[1].tor".into())));
    assert!(p.contains_key(&("pod[1].r[1].node[1]".into(), "pod[1].r[1].node[2]".into())));
}

// ---------------------------------------------------------------------------------------------
// full_mesh, ring

#[test]
fn full_mesh_links_every_pair_once() {
    for n in [1usize, 2, 3, 5, 8] {
        let t = topo("full_mesh", &format!("full_mesh(n: {n}, bw: 25 GB/s)"));
        let expected: Vec<BTreeSet<NodeId>> = (0..n)
            .map(|i| (0..n).filter(|&j| j != i).collect())
            .collect();
        let links = assert_graph(&t, &gb_s(25), &expected);
        assert_eq!(links, n * (n - 1) / 2);
        for (i, node) in t.nodes.iter().enumerate() {
            assert_eq!(node.name, format!("node[{i}]"));
        }
    }
}

#[test]
fn full_mesh_latency_is_applied() {
    let t = topo("full_mesh", "full_mesh(n: 3, bw: 1 GB/s, lat: 2 us)");
    let two_us = BigRational::new(BigInt::from(2), BigInt::from(1_000_000));
    assert!(t.links.iter().all(|l| l.latency == two_us));
}

#[test]
fn ring_has_n_links_and_degree_two() {
    for n in [3usize, 4, 8, 13] {
        let t = topo("ring", &format!("ring(n: {n}, bw: 10 GB/s)"));
        let expected: Vec<BTreeSet<NodeId>> = (0..n)
            .map(|i| [(i + 1) % n, (i + n - 1) % n].into_iter().collect())
            .collect();
        assert_eq!(assert_graph(&t, &gb_s(10), &expected), n);
    }
}

#[test]
fn ring_of_two_has_one_link() {
    let t = topo("ring", "ring(n: 2, bw: 10 GB/s)");
    let expected: Vec<BTreeSet<NodeId>> = vec![[1].into(), [0].into()];
    assert_eq!(assert_graph(&t, &gb_s(10), &expected), 1);
}

#[test]
fn ring_of_one_is_an_error() {
    let (diags, t, _) = run("import ring;\ntopology t = ring(n: 1, bw: 10 GB/s);\n");
    assert!(t.is_none());
    let errs = errors(&diags);
    assert_eq!(errs.len(), 1, "{diags:?}");
    assert!(errs[0].message.contains("to itself"), "{}", errs[0].message);
}

// ---------------------------------------------------------------------------------------------
// torus

/// Expected neighbour sets of a torus with the given dimension sizes (row-major ids).
fn torus_neighbours(dims: &[usize]) -> Vec<BTreeSet<NodeId>> {
    let total: usize = dims.iter().product();
    let mut strides = vec![1usize; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * dims[d + 1];
    }
    (0..total)
        .map(|id| {
            let mut set = BTreeSet::new();
            for (d, &s) in dims.iter().enumerate() {
                let c = (id / strides[d]) % s;
                for nc in [(c + 1) % s, (c + s - 1) % s] {
                    if nc != c {
                        set.insert(id - c * strides[d] + nc * strides[d]);
                    }
                }
            }
            set
        })
        .collect()
}

/// Links of a torus: per dimension of size s, (s if s >= 3, else s - 1) per line of nodes.
fn torus_links(dims: &[usize]) -> usize {
    let total: usize = dims.iter().product();
    dims.iter()
        .map(|&s| {
            let lines = total / s;
            lines * if s >= 3 { s } else { s - 1 }
        })
        .sum()
}

#[test]
fn torus2d_counts_and_neighbours() {
    for (x, y) in [
        (4, 4),
        (3, 5),
        (2, 4),
        (4, 2),
        (2, 2),
        (1, 4),
        (1, 2),
        (1, 1),
    ] {
        let t = topo("torus", &format!("torus2d(x: {x}, y: {y}, bw: 50 GB/s)"));
        let links = assert_graph(&t, &gb_s(50), &torus_neighbours(&[x, y]));
        assert_eq!(links, torus_links(&[x, y]), "torus2d({x}, {y})");
        assert_eq!(t.nodes[y * (x - 1)].name, format!("node[{}][0]", x - 1));
    }
    // Spot checks of the documented figures.
    let t = topo("torus", "torus2d(x: 4, y: 4, bw: 50 GB/s)");
    assert_eq!(t.links.len(), 32);
    assert!(neighbours(&t).iter().all(|n| n.len() == 4));
    let t = topo("torus", "torus2d(x: 2, y: 4, bw: 50 GB/s)");
    assert_eq!(t.links.len(), 12);
    assert!(neighbours(&t).iter().all(|n| n.len() == 3));
    let t = topo("torus", "torus2d(x: 2, y: 2, bw: 50 GB/s)");
    assert_eq!(t.links.len(), 4);
    let t = topo("torus", "torus2d(x: 1, y: 1, bw: 50 GB/s)");
    assert_eq!((t.nodes.len(), t.links.len()), (1, 0));
}

#[test]
fn torus3d_counts_and_neighbours() {
    for dims in [
        [2, 2, 2],
        [3, 3, 3],
        [4, 2, 1],
        [2, 3, 4],
        [4, 4, 4],
        [1, 1, 3],
        [1, 2, 1],
    ] {
        let [x, y, z] = dims;
        let t = topo(
            "torus",
            &format!("torus3d(x: {x}, y: {y}, z: {z}, bw: 25 GB/s)"),
        );
        let links = assert_graph(&t, &gb_s(25), &torus_neighbours(&dims));
        assert_eq!(links, torus_links(&dims), "torus3d{dims:?}");
        assert_eq!(
            t.nodes.last().expect("nodes").name,
            format!("node[{}][{}][{}]", x - 1, y - 1, z - 1)
        );
    }
    let t = topo("torus", "torus3d(x: 3, y: 3, z: 3, bw: 25 GB/s)");
    assert_eq!(t.links.len(), 81);
    assert!(neighbours(&t).iter().all(|n| n.len() == 6));
    let t = topo("torus", "torus3d(x: 2, y: 2, z: 2, bw: 25 GB/s)");
    assert_eq!(t.links.len(), 12);
    assert!(neighbours(&t).iter().all(|n| n.len() == 3));
}

// ---------------------------------------------------------------------------------------------
// hypercube

#[test]
fn hypercube_links_differ_in_one_bit() {
    for dim in 0..=6usize {
        let t = topo("hypercube", &format!("hypercube(dim: {dim}, bw: 25 GB/s)"));
        let n = 1usize << dim;
        let expected: Vec<BTreeSet<NodeId>> = (0..n)
            .map(|i| (0..dim).map(|d| i ^ (1 << d)).collect())
            .collect();
        let links = assert_graph(&t, &gb_s(25), &expected);
        assert_eq!(links, dim * n / 2, "hypercube({dim})");
        assert!(neighbours(&t).iter().all(|s| s.len() == dim));
    }
}

// ---------------------------------------------------------------------------------------------
// fat_tree

#[test]
fn fat_tree_canary_1024_hosts() {
    let t = topo(
        "fat_tree",
        "fat_tree(leaves: 32, hosts_per_leaf: 32, spines: 32, host_bw: 100 Gbps, spine_bw: 100 Gbps)",
    );
    assert_eq!(count(&t, NodeKind::Compute), 1024);
    assert_eq!(count(&t, NodeKind::Switch), 64);
    assert_eq!(names(&t, NodeKind::Switch, "leaf[").len(), 32);
    assert_eq!(names(&t, NodeKind::Switch, "spine[").len(), 32);
    assert_eq!(t.links.len(), 32 * 32 + 32 * 32);
    assert_eq!(t.edge_count(), 2 * (32 * 32 + 32 * 32));
    let p = pairs(&t);
    let bw = gbit_s(100);
    assert_eq!(
        bw,
        BigRational::from_integer(BigInt::from(12_500_000_000u64))
    );
    for l in 0..32 {
        for h in 0..32 {
            let key = (format!("host[{l}][{h}]"), format!("leaf[{l}]"));
            assert_eq!(p.get(&key), Some(&(1, bw.clone())), "{key:?}");
        }
        for s in 0..32 {
            let key = (format!("leaf[{l}]"), format!("spine[{s}]"));
            assert_eq!(p.get(&key), Some(&(1, bw.clone())), "{key:?}");
        }
    }
    // Ports: hosts 1, leaves 64 (32 down, 32 up), spines 32.
    let nb = neighbours(&t);
    for (i, node) in t.nodes.iter().enumerate() {
        let want = if node.name.starts_with("host[") {
            1
        } else if node.name.starts_with("leaf[") {
            64
        } else {
            32
        };
        assert_eq!(nb[i].len(), want, "ports of `{}`", node.name);
    }
}

#[test]
fn fat_tree_uneven_sizes_and_bandwidths() {
    let t = topo(
        "fat_tree",
        "fat_tree(leaves: 3, hosts_per_leaf: 5, spines: 2, host_bw: 25 GB/s, spine_bw: 50 GB/s, lat: 1 us)",
    );
    assert_eq!(count(&t, NodeKind::Compute), 15);
    assert_eq!(count(&t, NodeKind::Switch), 5);
    assert_eq!(t.links.len(), 15 + 6);
    let p = pairs(&t);
    assert_eq!(
        p.get(&("host[2][4]".to_string(), "leaf[2]".to_string())),
        Some(&(1, gb_s(25)))
    );
    assert_eq!(
        p.get(&("leaf[2]".to_string(), "spine[1]".to_string())),
        Some(&(1, gb_s(50)))
    );
    // Nodes in the documented order: hosts, leaves, spines.
    assert_eq!(t.nodes[15].name, "leaf[0]");
    assert_eq!(t.nodes[18].name, "spine[0]");
}

// ---------------------------------------------------------------------------------------------
// dragonfly

fn dragonfly(groups: usize, routers: usize, hosts: usize) -> Topology {
    topo(
        "dragonfly",
        &format!(
            "dragonfly(groups: {groups}, routers: {routers}, hosts_per_router: {hosts}, \
             host_bw: 100 Gbps, local_bw: 200 Gbps, global_bw: 50 GB/s)"
        ),
    )
}

#[test]
fn dragonfly_counts_and_global_arrangement() {
    for (g, r, h) in [
        (5, 4, 2),
        (9, 4, 1),
        (4, 2, 1),
        (3, 5, 3),
        (1, 3, 2),
        (6, 1, 2),
    ] {
        let t = dragonfly(g, r, h);
        assert_eq!(count(&t, NodeKind::Compute), g * r * h);
        assert_eq!(count(&t, NodeKind::Switch), g * r);
        let (host, local, global) = (g * r * h, g * r * (r - 1) / 2, g * (g - 1) / 2);
        assert_eq!(
            t.links.len(),
            host + local + global,
            "dragonfly({g}, {r}, {h})"
        );
        let p = pairs(&t);
        let mut seen = (0, 0, 0);
        let mut global_per_router: BTreeMap<String, usize> = BTreeMap::new();
        let mut group_pairs: BTreeSet<(usize, usize)> = BTreeSet::new();
        for ((a, b), (par, bw)) in &p {
            assert_eq!(*par, 1);
            let group = |n: &str| -> usize {
                n.split(['[', ']'])
                    .nth(1)
                    .expect("group")
                    .parse()
                    .expect("int")
            };
            if a.starts_with("host[") || b.starts_with("host[") {
                seen.0 += 1;
                assert_eq!(bw, &gbit_s(100));
                let (hn, rn) = if a.starts_with("host[") {
                    (a, b)
                } else {
                    (b, a)
                };
                // host[g][r][h] hangs off router[g][r].
                let prefix = &hn["host".len()..hn.rfind('[').expect("index")];
                assert_eq!(rn, &format!("router{prefix}"));
            } else if group(a) == group(b) {
                seen.1 += 1;
                assert_eq!(bw, &gbit_s(200));
            } else {
                seen.2 += 1;
                assert_eq!(bw, &gb_s(50));
                let (g1, g2) = (group(a).min(group(b)), group(a).max(group(b)));
                assert!(
                    group_pairs.insert((g1, g2)),
                    "groups {g1} and {g2} linked twice"
                );
                // The documented rule.
                let r1 = format!("router[{g1}][{}]", (g2 - 1) % r);
                let r2 = format!("router[{g2}][{}]", g1 % r);
                let key = if r1 < r2 { (r1, r2) } else { (r2, r1) };
                assert_eq!(key, (a.clone(), b.clone()));
                *global_per_router.entry(a.clone()).or_default() += 1;
                *global_per_router.entry(b.clone()).or_default() += 1;
            }
        }
        assert_eq!(seen, (host, local, global));
        assert_eq!(
            group_pairs.len(),
            global,
            "one global link per pair of groups"
        );
        // Balanced: every router carries floor or ceil of (g - 1) / r global links.
        let lo = (g - 1) / r;
        let hi = (g - 1).div_ceil(r);
        for gi in 0..g {
            for ri in 0..r {
                let name = format!("router[{gi}][{ri}]");
                let n = global_per_router.get(&name).copied().unwrap_or(0);
                assert!(lo <= n && n <= hi, "{name} has {n} global links");
            }
        }
    }
}

#[test]
fn dragonfly_canonical_balance() {
    // groups = routers * p + 1: every router has exactly p global links.
    let t = dragonfly(9, 4, 1);
    let nb = neighbours(&t);
    for (i, node) in t.nodes.iter().enumerate() {
        if node.kind == NodeKind::Switch {
            // 1 host + 3 local + 2 global.
            assert_eq!(nb[i].len(), 6, "{}", node.name);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// dgx_a100

#[test]
fn dgx_a100_two_clusters_matches_forestcoll() {
    let t = topo("dgx_a100", "dgx_a100(2)");
    let gpus = names(&t, NodeKind::Compute, "");
    let want: Vec<String> = (0..2)
        .flat_map(|c| (0..8).map(move |i| format!("gpu[{c}][{i}]")))
        .collect();
    assert_eq!(gpus, want, "16 GPUs, the only compute nodes");
    assert_eq!(
        names(&t, NodeKind::Switch, "nvswitch["),
        vec!["nvswitch[0]", "nvswitch[1]"]
    );
    assert_eq!(names(&t, NodeKind::Switch, "nic[").len(), 16);
    assert_eq!(names(&t, NodeKind::Switch, "ib["), vec!["ib[0]", "ib[1]"]);
    assert_eq!(t.nodes.len(), 16 + 2 + 16 + 2);

    let mut expected: BTreeMap<(String, String), (u32, BigRational)> = BTreeMap::new();
    let mut put = |a: String, b: String, bw: BigRational| {
        let key = if a < b { (a, b) } else { (b, a) };
        assert!(expected.insert(key, (1, bw)).is_none());
    };
    for c in 0..2 {
        for i in 0..8 {
            put(
                format!("gpu[{c}][{i}]"),
                format!("nvswitch[{c}]"),
                gb_s(300),
            );
            put(format!("gpu[{c}][{i}]"), format!("nic[{c}][{i}]"), gb_s(25));
            put(format!("nic[{c}][{i}]"), format!("ib[{}]", i % 2), gb_s(25));
        }
    }
    assert_eq!(pairs(&t), expected);
    assert_eq!(t.links.len(), 48);
    assert_eq!(t.edge_count(), 96);

    // Each GPU: 300 GB/s to its NVSwitch plus 25 GB/s to its NIC, in both directions (the 325 GB/s
    // ingress bound of the paper's Section 5.3); each IB switch serves 8 NICs.
    let nb = neighbours(&t);
    for g in &gpus {
        let i = id(&t, g);
        let total: BigRational = t
            .graph
            .edges(t.index(i))
            .map(|e| e.weight().bandwidth.clone())
            .sum();
        assert_eq!(total, gb_s(325), "egress of {g}");
    }
    assert_eq!(nb[id(&t, "ib[0]")].len(), 8);
    assert_eq!(nb[id(&t, "ib[1]")].len(), 8);
    assert_eq!(nb[id(&t, "nvswitch[1]")].len(), 8);
}

#[test]
fn dgx_a100_one_cluster_has_no_network() {
    let t = topo("dgx_a100", "dgx_a100(clusters: 1)");
    assert_eq!(count(&t, NodeKind::Compute), 8);
    assert_eq!(count(&t, NodeKind::Switch), 1);
    assert_eq!(t.links.len(), 8);
    assert!(t.links.iter().all(|l| l.bandwidth == gb_s(300)));
}

#[test]
fn dgx_a100_bandwidths_can_be_overridden() {
    let t = topo(
        "dgx_a100",
        "dgx_a100(clusters: 3, nvlink_bw: 600 GB/s, ib_bw: 50 GB/s)",
    );
    assert_eq!(count(&t, NodeKind::Compute), 24);
    assert_eq!(count(&t, NodeKind::Switch), 3 + 24 + 2);
    assert_eq!(t.links.len(), 3 * 24);
    let p = pairs(&t);
    assert_eq!(
        p[&("gpu[2][7]".to_string(), "nvswitch[2]".to_string())].1,
        gb_s(600)
    );
    assert_eq!(
        p[&("ib[1]".to_string(), "nic[2][7]".to_string())].1,
        gb_s(50)
    );
}

// ---------------------------------------------------------------------------------------------
// mi250

/// ForestColl's MI250_ADJ_MAT (liangyuRain/ForestColl topologies.py), as copied in
/// ../shared/topologies/mi250.txt: number of parallel 50 GB/s xGMI links between local GPUs.
const MI250_ADJ: [[u32; 16]; 16] = [
    [0, 4, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
    [4, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0],
    [0, 0, 0, 4, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0],
    [0, 0, 4, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0],
    [2, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 1, 0, 0, 4, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 1, 0, 1, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, 2, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    [1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 2, 0, 0, 0],
    [0, 1, 1, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1, 0, 0],
    [0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 1, 0],
    [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 2],
    [0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 4, 1, 0],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 1, 1],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 4],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 4, 0],
];

/// The 16x16 matrix under "## Adjacency matrix" in the shared MI250 file.
fn parse_shared_matrix(text: &str) -> [[u32; 16]; 16] {
    let mut lines = text
        .lines()
        .skip_while(|l| !l.starts_with("## Adjacency matrix"))
        .skip(1);
    let mut m = [[0u32; 16]; 16];
    for row in m.iter_mut() {
        let line = lines.next().expect("16 matrix rows");
        let vals: Vec<u32> = line
            .split_whitespace()
            .map(|v| v.parse().expect("an integer entry"))
            .collect();
        assert_eq!(vals.len(), 16, "row `{line}`");
        row.copy_from_slice(&vals);
    }
    m
}

#[test]
fn mi250_const_matches_shared_file() {
    // Sanity of the copy: symmetric, zero diagonal, 28 pairs, 7 links per GPU.
    let mut pairs_count = 0;
    for a in 0..16 {
        assert_eq!(MI250_ADJ[a][a], 0);
        assert_eq!(MI250_ADJ[a].iter().sum::<u32>(), 7, "GPU {a}");
        for b in 0..16 {
            assert_eq!(MI250_ADJ[a][b], MI250_ADJ[b][a]);
            if a < b && MI250_ADJ[a][b] > 0 {
                pairs_count += 1;
            }
        }
    }
    assert_eq!(pairs_count, 28);
    // The shared copy is not part of the repository; compare when it is there.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/topologies/mi250.txt");
    if let Ok(text) = std::fs::read_to_string(&path) {
        assert_eq!(parse_shared_matrix(&text), MI250_ADJ, "{}", path.display());
    }
}

#[test]
fn mi250_two_clusters_reproduces_the_matrix() {
    let t = topo("mi250", "mi250(2)");
    assert_eq!(count(&t, NodeKind::Compute), 32);
    assert_eq!(names(&t, NodeKind::Switch, ""), vec!["ib"]);
    let ib = id(&t, "ib");
    let xgmi = gb_s(50);

    // Matrix per cluster, from the declared links.
    let mut got = [[[0u32; 16]; 16]; 2];
    let mut ib_links = [[0u32; 16]; 2];
    let gpu = |n: NodeId| -> (usize, usize) {
        let parts: Vec<usize> = t.nodes[n]
            .name
            .trim_start_matches("gpu")
            .split(['[', ']'])
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().expect("index"))
            .collect();
        (parts[0], parts[1])
    };
    for l in &t.links {
        assert!(l.bidirectional);
        if l.to == ib || l.from == ib {
            let g = if l.to == ib { l.from } else { l.to };
            assert_eq!(l.bandwidth, gb_s(16), "GPU to IB bandwidth");
            assert_eq!(l.parallel, 1);
            let (c, i) = gpu(g);
            ib_links[c][i] += 1;
            continue;
        }
        let ((ca, a), (cb, b)) = (gpu(l.from), gpu(l.to));
        assert_eq!(ca, cb, "xGMI links stay inside a cluster");
        assert_eq!(l.bandwidth, xgmi, "per-link xGMI bandwidth");
        assert_eq!(
            got[ca][a][b], 0,
            "gpu[{ca}][{a}]-gpu[{ca}][{b}] declared twice"
        );
        got[ca][a][b] += l.parallel;
        got[ca][b][a] += l.parallel;
    }
    for (c, m) in got.iter().enumerate() {
        assert_eq!(m, &MI250_ADJ, "cluster {c}");
        for (i, row) in m.iter().enumerate() {
            assert_eq!(row.iter().sum::<u32>(), 7, "xGMI links of gpu[{c}][{i}]");
        }
    }
    assert_eq!(ib_links, [[1; 16]; 2], "one link from every GPU to ib");
    assert_eq!(t.links.len(), 2 * 28 + 32);

    // The graph: ForestColl's capacities (nlinks * 50 GB/s each way, 16 GB/s to and from ib).
    let mut cap: BTreeMap<(NodeId, NodeId), BigRational> = BTreeMap::new();
    for e in t.graph.edge_indices() {
        let (s, d) = t.graph.edge_endpoints(e).expect("edge");
        *cap.entry((s.index(), d.index()))
            .or_insert_with(|| BigRational::from_integer(0.into())) += &t.graph[e].bandwidth;
    }
    for c in 0..2 {
        for a in 0..16 {
            let ga = id(&t, &format!("gpu[{c}][{a}]"));
            for b in 0..16 {
                let gb = id(&t, &format!("gpu[{c}][{b}]"));
                let want = gb_s(50 * i64::from(MI250_ADJ[a][b]));
                let have = cap
                    .get(&(ga, gb))
                    .cloned()
                    .unwrap_or_else(|| BigRational::from_integer(0.into()));
                assert_eq!(have, want, "capacity gpu[{c}][{a}] -> gpu[{c}][{b}]");
            }
            assert_eq!(cap[&(ga, ib)], gb_s(16));
            assert_eq!(cap[&(ib, ga)], gb_s(16));
        }
    }
    // 2 clusters * 56 xGMI link copies * 2 directions + 32 * 2 IB edges.
    assert_eq!(t.edge_count(), 2 * 56 * 2 + 64);
}

#[test]
fn mi250_gpus_0_and_1_have_four_parallel_links() {
    let t = topo("mi250", "mi250(clusters: 1)");
    assert_eq!(t.nodes.len(), 16, "one cluster has no IB switch");
    assert_eq!(t.links.len(), 28);
    let (g0, g1) = (id(&t, "gpu[0][0]"), id(&t, "gpu[0][1]"));
    let l = t
        .links
        .iter()
        .find(|l| (l.from, l.to) == (g0, g1))
        .expect("gpu[0][0] <-> gpu[0][1]");
    assert_eq!((l.parallel, l.bandwidth.clone()), (4, gb_s(50)));
    assert_eq!(
        t.graph.edges_connecting(t.index(g0), t.index(g1)).count(),
        4
    );
    assert_eq!(
        t.graph.edges_connecting(t.index(g1), t.index(g0)).count(),
        4
    );
}

// ---------------------------------------------------------------------------------------------
// Examples

#[test]
fn examples_using_the_stdlib_are_small_and_documented() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    for stem in [
        "dgx_a100_2x8",
        "mi250_2x16",
        "torus_4x4",
        "hypercube_16",
        "dragonfly_small",
        "fat_tree_1024",
        "ring_8",
        "full_mesh_boxes",
    ] {
        let path = dir.join(format!("{stem}.coll"));
        let text = std::fs::read_to_string(&path).expect("example exists");
        assert!(text.starts_with("// "), "{stem}: starts with a comment");
        let (diags, t, sources) = run(&text);
        assert!(
            diags.is_empty(),
            "{stem}:\n{}",
            render::to_text(&diags, &sources)
        );
        let t = t.expect("topology");
        if stem != "fat_tree_1024" {
            assert!(
                t.nodes.len() + t.links.len() < 300,
                "{stem}: {} nodes + {} links",
                t.nodes.len(),
                t.links.len()
            );
        }
    }
}
