//! The bottleneck cut: a node set S whose cut alone proves the lower bound, i.e.
//! |S ∩ R| * |R \ S| / c(S -> V \ S) equals the exact dual bound (R the ranks). Candidates come
//! from the snapped dual lengths: remove the edges of positive length; for every strongly
//! connected component C of what remains, S is everything C reaches without such an edge, so
//! the edges leaving S all have positive length. When the lengths are one cut's, that S is
//! among the candidates; when they mix several equally tight cuts (two boxes, each the other's
//! mirror), each of those is too. This is wider than "the lengths are supported on exactly one
//! cut": any candidate whose own bound equals the dual bound is reported (the smallest, then the
//! first in node order), and None when no single cut is tight (a ring's optimum is not a cut).

use super::net::{Network, reach};
use crate::sema::model::NodeId;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Zero;

/// A node set whose cut is tight, in capacity units.
#[derive(Debug, Clone)]
pub struct UnitCut {
    pub nodes: Vec<NodeId>,
    pub capacity: i128,
    pub inside: usize,
    pub demand: u128,
}

/// The smallest tight cut among the candidates of `len` (by arc), for the bound `tau` (units).
pub fn find(net: &Network, len: &[BigRational], tau: &BigRational) -> Option<UnitCut> {
    let removed: Vec<bool> = len.iter().map(|l| !l.is_zero()).collect();
    let mut best: Option<UnitCut> = None;
    for cut in candidates(net, &removed) {
        let bound = BigRational::new(BigInt::from(cut.demand), BigInt::from(cut.capacity));
        if bound == *tau
            && best
                .as_ref()
                .is_none_or(|b| cut.nodes.len() < b.nodes.len())
        {
            best = Some(cut);
        }
    }
    best
}

/// The candidate with the largest bound among those of `removed` (saturated edges, say).
pub fn strongest(net: &Network, removed: &[bool]) -> Option<UnitCut> {
    let mut best: Option<UnitCut> = None;
    for cut in candidates(net, removed) {
        let better = best.as_ref().is_none_or(|b| {
            BigInt::from(cut.demand) * BigInt::from(b.capacity)
                > BigInt::from(b.demand) * BigInt::from(cut.capacity)
        });
        if better {
            best = Some(cut);
        }
    }
    best
}

/// The candidate cuts of the edge set `removed`: for each strongly connected component of the
/// other edges, what it reaches along them.
fn candidates(net: &Network, removed: &[bool]) -> Vec<UnitCut> {
    let kept: Vec<usize> = (0..net.arcs.len()).filter(|&e| !removed[e]).collect();
    let mut fwd = vec![Vec::new(); net.n];
    let mut back = vec![Vec::new(); net.n];
    for &e in &kept {
        let a = net.arcs[e];
        fwd[a.from].push(a.to);
        back[a.to].push(a.from);
    }
    let comp = components(&fwd, &back);
    let mut seen_root = vec![false; net.n];
    let mut out = Vec::new();
    for (v, &c) in comp.iter().enumerate() {
        if seen_root[c] {
            continue;
        }
        seen_root[c] = true;
        let inside = reach(&fwd, v);
        out.extend(measure(net, &inside));
    }
    out
}

/// The cut leaving `inside`, if ranks lie on both sides and capacity leaves it.
pub fn measure(net: &Network, inside: &[bool]) -> Option<UnitCut> {
    let capacity: i128 = net
        .arcs
        .iter()
        .filter(|a| inside[a.from] && !inside[a.to])
        .map(|a| i128::from(a.cap))
        .sum();
    let k = net.ranks.iter().filter(|&&r| inside[r]).count();
    let demand = (k as u128) * ((net.ranks.len() - k) as u128);
    if capacity == 0 || demand == 0 {
        return None;
    }
    let nodes = (0..net.n).filter(|&v| inside[v]).collect();
    Some(UnitCut {
        nodes,
        capacity,
        inside: k,
        demand,
    })
}

/// Strongly connected components (Kosaraju, iterative): a component id per node.
fn components(fwd: &[Vec<NodeId>], back: &[Vec<NodeId>]) -> Vec<usize> {
    let n = fwd.len();
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    for s in 0..n {
        if seen[s] {
            continue;
        }
        seen[s] = true;
        let mut stack = vec![(s, 0usize)];
        while let Some((u, i)) = stack.pop() {
            if let Some(&v) = fwd[u].get(i) {
                stack.push((u, i + 1));
                if !seen[v] {
                    seen[v] = true;
                    stack.push((v, 0));
                }
            } else {
                order.push(u);
            }
        }
    }
    let mut comp = vec![usize::MAX; n];
    for &s in order.iter().rev() {
        if comp[s] != usize::MAX {
            continue;
        }
        comp[s] = s;
        let mut stack = vec![s];
        while let Some(u) = stack.pop() {
            for &v in &back[u] {
                if comp[v] == usize::MAX {
                    comp[v] = s;
                    stack.push(v);
                }
            }
        }
    }
    comp
}
