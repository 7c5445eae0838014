//! Shortest-path trees, the columns of the all-to-all LP. Demands are uniform (one unit from a
//! source to each other rank), so one source's routing is a convex combination of out-trees
//! rooted at it, each carrying one unit to every other rank along its tree path; an edge's load
//! in a tree is the number of ranks below it. The cheapest tree under edge lengths is a
//! shortest-path tree ([`shortest_tree`], Dijkstra in f64 with ties kept by the first edge found,
//! so deterministic), and the exact dual bound needs exact distances ([`exact_distance_sum`],
//! Dijkstra on integer lengths).

use super::net::Network;
use num_bigint::BigInt;
use num_traits::Zero;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// No parent: the root, or a node the tree does not reach.
pub const NONE: u32 = u32::MAX;

/// One out-tree of a source: its parent edges and the load it puts on each edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    /// The source's rank.
    pub source: usize,
    /// `parent[v]`: index into `Network::arcs` of the edge into `v`, or [`NONE`].
    pub parent: Vec<u32>,
    /// (edge, ranks below it), sorted by edge, only edges the tree uses.
    pub load: Vec<(u32, u32)>,
}

impl Tree {
    /// The tree's cost under `len`: the sum of its paths' lengths.
    pub fn cost(&self, len: &[f64]) -> f64 {
        self.load
            .iter()
            .map(|&(e, k)| f64::from(k) * len[e as usize])
            .sum()
    }
}

#[derive(PartialEq)]
struct Key(f64);

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The shortest-path out-tree of rank `source` under the nonnegative lengths `len` (by arc).
pub fn shortest_tree(net: &Network, source: usize, len: &[f64]) -> Tree {
    let s = net.ranks[source];
    let mut dist = vec![f64::INFINITY; net.n];
    let mut parent = vec![NONE; net.n];
    let mut done = vec![false; net.n];
    let mut order = Vec::with_capacity(net.n);
    let mut heap = BinaryHeap::new();
    dist[s] = 0.0;
    heap.push(Reverse((Key(0.0), s)));
    while let Some(Reverse((Key(d), u))) = heap.pop() {
        if done[u] {
            continue;
        }
        done[u] = true;
        order.push(u);
        for &e in &net.out[u] {
            let v = net.arcs[e].to;
            let nd = d + len[e];
            if !done[v] && nd < dist[v] {
                dist[v] = nd;
                parent[v] = e as u32;
                heap.push(Reverse((Key(nd), v)));
            }
        }
    }
    // Ranks below each node, children before parents (reverse settling order).
    let mut below = vec![0u32; net.n];
    let mut load = Vec::new();
    for &v in order.iter().rev() {
        if v != s && net.rank_of[v].is_some() {
            below[v] += 1;
        }
        let p = parent[v];
        if p != NONE && below[v] > 0 {
            load.push((p, below[v]));
            below[net.arcs[p as usize].from] += below[v];
        }
    }
    // Edges that lead to no rank are not part of the routing.
    for (v, p) in parent.iter_mut().enumerate() {
        if below[v] == 0 {
            *p = NONE;
        }
    }
    load.sort_unstable();
    Tree {
        source,
        parent,
        load,
    }
}

/// The sum over ranks `t != source` of the exact distance from rank `source` under integer
/// lengths, or None on overflow or an unreachable rank.
pub fn exact_distance_sum(net: &Network, source: usize, len: &[u64]) -> Option<u128> {
    let s = net.ranks[source];
    let mut dist = vec![u128::MAX; net.n];
    let mut done = vec![false; net.n];
    let mut heap = BinaryHeap::new();
    dist[s] = 0;
    heap.push(Reverse((0u128, s)));
    let mut sum: u128 = 0;
    while let Some(Reverse((d, u))) = heap.pop() {
        if done[u] {
            continue;
        }
        done[u] = true;
        if u != s && net.rank_of[u].is_some() {
            sum = sum.checked_add(d)?;
        }
        for &e in &net.out[u] {
            let v = net.arcs[e].to;
            let nd = d.checked_add(u128::from(len[e]))?;
            if !done[v] && nd < dist[v] {
                dist[v] = nd;
                heap.push(Reverse((nd, v)));
            }
        }
    }
    let all = net.ranks.iter().all(|&r| done[r]);
    all.then_some(sum)
}

/// [`exact_distance_sum`] on big integer lengths, for lengths beyond machine integers.
pub fn big_distance_sum(net: &Network, source: usize, len: &[BigInt]) -> Option<BigInt> {
    let s = net.ranks[source];
    let mut dist: Vec<Option<BigInt>> = vec![None; net.n];
    let mut done = vec![false; net.n];
    let mut heap = BinaryHeap::new();
    dist[s] = Some(BigInt::zero());
    heap.push(Reverse((BigInt::zero(), s)));
    let mut sum = BigInt::zero();
    while let Some(Reverse((d, u))) = heap.pop() {
        if done[u] {
            continue;
        }
        done[u] = true;
        if u != s && net.rank_of[u].is_some() {
            sum += &d;
        }
        for &e in &net.out[u] {
            let v = net.arcs[e].to;
            let nd = &d + &len[e];
            if !done[v] && dist[v].as_ref().is_none_or(|old| nd < *old) {
                dist[v] = Some(nd.clone());
                heap.push(Reverse((nd, v)));
            }
        }
    }
    let all = net.ranks.iter().all(|&r| done[r]);
    all.then_some(sum)
}
