//! Hand-built forests for the report and flow-simulator tests: checked example topologies and
//! the paper's Figure 5 trees on its Figure 2 topology.

#![allow(dead_code)]

use collc::diag::{SourceMap, render};
use collc::forest::{Cut, Direction, Forest, ForestEdge, Tree};
use collc::sema::model::{Model, NodeId, Topology};
use collc::sema::{Options, check};
use num_rational::BigRational;
use petgraph::visit::EdgeRef;

/// Checks an example (path from the crate root) with `params` overridden.
pub fn load(rel: &str, params: &[(&str, &str)]) -> Model {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let text = std::fs::read_to_string(&path).expect("readable example");
    let mut sources = SourceMap::new();
    let id = sources.add(rel.to_string(), text);
    let mut opts = Options::default();
    for (k, v) in params {
        opts.params.push((k.to_string(), v.to_string()));
    }
    let c = check(&mut sources, id, &opts);
    assert!(
        c.diagnostics.is_empty(),
        "{}",
        render::to_text(&c.diagnostics, &sources)
    );
    c.model.expect("a model")
}

pub fn node(topo: &Topology, name: &str) -> NodeId {
    topo.nodes
        .iter()
        .position(|n| n.name == name)
        .unwrap_or_else(|| panic!("no node {name}"))
}

/// The index of a graph edge from `a` to `b`.
pub fn edge(topo: &Topology, a: NodeId, b: NodeId) -> usize {
    topo.graph
        .edges(topo.index(a))
        .find(|e| e.target().index() == b)
        .unwrap_or_else(|| panic!("no edge {a} -> {b}"))
        .id()
        .index()
}

/// A tree edge `from -> to` through switch `via`; for in-trees the route is the data's way back.
fn hop(topo: &Topology, dir: Direction, from: NodeId, via: NodeId, to: NodeId) -> ForestEdge {
    let route = match dir {
        Direction::Out => vec![edge(topo, from, via), edge(topo, via, to)],
        Direction::In => vec![edge(topo, to, via), edge(topo, via, from)],
    };
    ForestEdge {
        from,
        to,
        route: route.into(),
    }
}

/// Figure 5's trees on examples/forestcoll_fig2.coll: rooted at every `c[i][j]`, a chain through
/// the own cluster's switch, one hop through `w0` to `c[1-i][j]` and a chain there; each tree
/// carries `b`, which is optimal (k = 1, 1/x* = 4 / 4b).
pub fn fig2(m: &Model, dir: Direction) -> Forest {
    let topo = m.topology.as_ref().expect("a topology");
    let c = |i: usize, j: usize| node(topo, &format!("c[{i}][{j}]"));
    let w = |i: usize| node(topo, &format!("w[{i}]"));
    let w0 = node(topo, "w0");
    let b = topo.links[1].bandwidth.clone();
    let mut trees = Vec::new();
    for i in 0..2 {
        for j in 0..4 {
            let mut edges = Vec::new();
            for (cl, start) in [(i, j), (1 - i, j)] {
                if cl != i {
                    edges.push(hop(topo, dir, c(i, j), w0, c(cl, j)));
                }
                for s in 0..3 {
                    let (x, y) = ((start + s) % 4, (start + s + 1) % 4);
                    edges.push(hop(topo, dir, c(cl, x), w(cl), c(cl, y)));
                }
            }
            trees.push(Tree {
                root: c(i, j),
                rate: b.clone(),
                edges,
            });
        }
    }
    let four = BigRational::from_integer(4.into());
    Forest {
        direction: dir,
        ranks: m.collective.as_ref().expect("a collective").ranks.clone(),
        k: 1,
        inv_rate: b.recip(),
        optimum: b.recip(),
        bottleneck: Cut {
            nodes: vec![c(0, 0), c(0, 1), c(0, 2), c(0, 3), w(0)],
            compute: 4,
            bandwidth: &b * four,
        },
        trees,
    }
}
