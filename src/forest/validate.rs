//! An independent check of a solved [`Forest`] against its topology, used by the tests and
//! available to any consumer: every tree is a spanning tree over exactly the ranks (in
//! breadth-first order), every route is a path of graph edges from the edge's parent to its
//! child (reversed edges for in-trees) through relay nodes only, every root's trees add up to the
//! forest's rate, and the trees' load on every physical edge stays within its bandwidth
//! (../shared/seeds/forestcoll.txt, Section 3.2: each tree occupies its bandwidth on every link
//! of its routes).

use super::types::{Direction, Forest};
use crate::sema::model::Topology;
use num_rational::BigRational;
use num_traits::{One, Zero};
use petgraph::graph::EdgeIndex;
use std::collections::{BTreeMap, BTreeSet};

pub fn validate(topo: &Topology, forest: &Forest) -> Result<(), String> {
    let ranks: BTreeSet<usize> = forest.ranks.iter().copied().collect();
    let mut load: BTreeMap<usize, BigRational> = BTreeMap::new();
    let mut per_root: BTreeMap<usize, BigRational> = BTreeMap::new();
    for (ti, tree) in forest.trees.iter().enumerate() {
        if !ranks.contains(&tree.root) {
            return Err(format!("tree {ti}: root {} is not a rank", tree.root));
        }
        let mut seen = BTreeSet::from([tree.root]);
        for e in &tree.edges {
            if !seen.contains(&e.from) {
                return Err(format!(
                    "tree {ti}: parent {} appears before it joins",
                    e.from
                ));
            }
            if !ranks.contains(&e.to) || !seen.insert(e.to) {
                return Err(format!("tree {ti}: child {} is not a new rank", e.to));
            }
            let mut at = e.from;
            for (i, &g) in e.route.iter().enumerate() {
                let Some((a, b)) = topo.graph.edge_endpoints(EdgeIndex::new(g)) else {
                    return Err(format!("tree {ti}: route uses unknown edge {g}"));
                };
                let (a, b) = match forest.direction {
                    Direction::Out => (a.index(), b.index()),
                    Direction::In => (b.index(), a.index()),
                };
                if a != at {
                    return Err(format!(
                        "tree {ti}: route {} -> {} breaks at edge {g}",
                        e.from, e.to
                    ));
                }
                if i + 1 < e.route.len() && ranks.contains(&b) {
                    return Err(format!(
                        "tree {ti}: route {} -> {} passes rank {b}",
                        e.from, e.to
                    ));
                }
                at = b;
                *load.entry(g).or_insert_with(BigRational::zero) += &tree.rate;
            }
            if at != e.to || e.route.is_empty() {
                return Err(format!(
                    "tree {ti}: route does not lead from {} to {}",
                    e.from, e.to
                ));
            }
        }
        if seen != ranks {
            return Err(format!(
                "tree {ti}: spans {} of {} ranks",
                seen.len(),
                ranks.len()
            ));
        }
        *per_root.entry(tree.root).or_insert_with(BigRational::zero) += &tree.rate;
    }
    if forest.ranks.len() > 1 {
        let want = BigRational::one() / &forest.inv_rate;
        for (root, total) in &per_root {
            if *total != want {
                return Err(format!(
                    "root {root}: trees carry {total}, the forest promises {want}"
                ));
            }
        }
    }
    for (g, l) in &load {
        let bw = &topo.graph[EdgeIndex::new(*g)].bandwidth;
        if l > bw {
            return Err(format!("edge {g}: load {l} exceeds bandwidth {bw}"));
        }
    }
    Ok(())
}
