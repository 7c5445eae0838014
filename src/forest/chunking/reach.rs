//! The forest model's trees ([`trees`]): each receiving node's chains of tree edges, weighed by
//! latency and by seconds per byte of a chunk's store-and-forward hops ([`super::Reach`]), in
//! machine integers over common units where they fit and in rationals otherwise.

use super::{Reach, TreeTime};
use crate::forest::{Direction, Forest, Tree};
use crate::net::FlowParams;
use crate::sema::model::{NodeId, Topology};
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Exact integer counts of one common unit ([`crate::ratio::in_units`]) for each of `qs`, when
/// each is at most 2^62 of them.
pub(super) fn scaled<'a>(
    qs: impl IntoIterator<Item = &'a BigRational>,
) -> Option<(BigRational, Vec<i128>)> {
    let u = crate::ratio::in_units(qs);
    let counts = u
        .counts
        .iter()
        .map(|c| c.to_i128().filter(|x| x.unsigned_abs() <= 1 << 62))
        .collect::<Option<_>>()?;
    Some((u.unit, counts))
}

/// Latencies and seconds per byte as the model adds them up: exact integer counts of a common
/// unit each (per graph edge, and for the overheads) when they fit, so a forest of a thousand
/// trees of a thousand edges adds machine integers instead of rationals; [`trees`] falls back
/// to rationals otherwise.
pub(super) struct Scaled {
    unit: BigRational,
    edges: Vec<i128>,
    overhead: i128,
    net: i128,
    /// Seconds per byte of every graph edge (zero for no bandwidth), in units of `per_byte`.
    per_byte: BigRational,
    inverse: Vec<i128>,
}

impl Scaled {
    pub(super) fn new(
        topo: &Topology,
        overhead: &BigRational,
        net: &BigRational,
    ) -> Option<Scaled> {
        let lat = topo.graph.edge_weights().map(|w| &w.latency);
        let (unit, mut counts) = scaled(lat.chain([overhead, net]))?;
        let net = counts.pop()?;
        let overhead = counts.pop()?;
        let inverse = inverses(topo);
        let (per_byte, inverse) = scaled(&inverse)?;
        Some(Scaled {
            unit,
            edges: counts,
            overhead,
            net,
            per_byte,
            inverse,
        })
    }
}

/// Seconds per byte of every graph edge of `topo` (zero where it has no bandwidth).
pub(super) fn inverses(topo: &Topology) -> Vec<BigRational> {
    topo.graph
        .edge_weights()
        .map(|w| {
            if w.bandwidth.is_zero() {
                BigRational::zero()
            } else {
                w.bandwidth.recip()
            }
        })
        .collect()
}

/// Latency sums of one kind: the operations the reach computations need.
pub(super) trait Lat: Clone + Ord + Default {
    fn plus(&self, other: &Self) -> Self;
    fn minus(&self, other: &Self) -> Self;
}

impl Lat for i128 {
    fn plus(&self, other: &Self) -> Self {
        self.saturating_add(*other)
    }
    fn minus(&self, other: &Self) -> Self {
        self.saturating_sub(*other)
    }
}

impl Lat for BigRational {
    fn plus(&self, other: &Self) -> Self {
        self + other
    }
    fn minus(&self, other: &Self) -> Self {
        self - other
    }
}

/// A chain of tree edges as the model weighs it: its store-and-forward hops, its latency, and
/// the seconds per byte of each hop's slowest link, summed and at their most.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Chain<L> {
    pub(super) hops: u64,
    pub(super) latency: L,
    sum: L,
    most: L,
}

impl<L: Lat> Chain<L> {
    /// The chain one edge longer, the edge's (latency, seconds per byte) being `hop`.
    pub(super) fn then(&self, hop: &(L, L)) -> Chain<L> {
        Chain {
            hops: self.hops + 1,
            latency: self.latency.plus(&hop.0),
            sum: self.sum.plus(&hop.1),
            most: self.most.clone().max(hop.1.clone()),
        }
    }

    /// Seconds per byte of a chunk's drain: every hop but the slowest.
    pub(super) fn tail(&self) -> L {
        self.sum.minus(&self.most)
    }

    /// Whether this chain finishes no earlier than `other` now and after any extension: the
    /// tail of a longer chain is the least of (this tail + the extension's sum) and (this sum +
    /// the extension's sum - its most), so tail, sum and latency together decide.
    pub(super) fn covers(&self, other: &Chain<L>) -> bool {
        self.tail() >= other.tail() && self.sum >= other.sum && self.latency >= other.latency
    }
}

/// The model's view of every tree of `forests` (as `lower::forest::needs` lists them) moving
/// `per_root` bytes of every root's data; each tree edge costs its route's latencies plus the
/// flow parameters' overhead: `net_overhead` for an edge between two boxes
/// ([`crate::net::boxes`]) when the parameters have one (a GPU runtime's steps), `overhead`
/// otherwise; and a chunk crosses it at its route's slowest link. Trees with rate zero carry
/// nothing and are left out.
pub fn trees(
    topo: &Topology,
    params: &FlowParams,
    per_root: &BigRational,
    forests: &[&Forest],
) -> Vec<TreeTime> {
    let boxes = match &params.net_overhead {
        Some(_) => crate::net::boxes(topo),
        None => Vec::new(),
    };
    let overhead = &params.overhead;
    let net_overhead = params.net_overhead.as_ref().unwrap_or(overhead);
    let crosses = |e: &crate::forest::ForestEdge| boxes.get(e.from) != boxes.get(e.to);
    let Some(Scaled {
        unit,
        edges,
        overhead: intra,
        net,
        per_byte,
        inverse,
    }) = Scaled::new(topo, overhead, net_overhead)
    else {
        return trees_exact(topo, &crosses, overhead, net_overhead, per_root, forests);
    };
    // Equal sums are common (every path over the same kinds of links): convert each once.
    let mut seen: std::collections::HashMap<(bool, i128), BigRational> = Default::default();
    let mut exact = |tail: bool, x: &i128| {
        seen.entry((tail, *x))
            .or_insert_with(|| {
                BigRational::from_integer((*x).into()) * if tail { &per_byte } else { &unit }
            })
            .clone()
    };
    let hop = |e: &crate::forest::ForestEdge| {
        let o = if crosses(e) { net } else { intra };
        let lat = e
            .route
            .iter()
            .map(|&r| edges.get(r).copied().unwrap_or(0))
            .fold(o, |a, b| a.saturating_add(b));
        let slowest = e
            .route
            .iter()
            .map(|&r| inverse.get(r).copied().unwrap_or(0))
            .max()
            .unwrap_or(0);
        (lat, slowest)
    };
    trees_with(per_root, forests, &hop, &mut exact)
}

/// [`trees`] in rationals throughout.
pub(super) fn trees_exact(
    topo: &Topology,
    crosses: &dyn Fn(&crate::forest::ForestEdge) -> bool,
    overhead: &BigRational,
    net_overhead: &BigRational,
    per_root: &BigRational,
    forests: &[&Forest],
) -> Vec<TreeTime> {
    let edges: Vec<&BigRational> = topo.graph.edge_weights().map(|w| &w.latency).collect();
    let inverse = inverses(topo);
    let hop = |e: &crate::forest::ForestEdge| {
        let o = if crosses(e) { net_overhead } else { overhead };
        let lat = e
            .route
            .iter()
            .filter_map(|&r| edges.get(r).copied())
            .fold(o.clone(), |a, b| a + b);
        let slowest = e
            .route
            .iter()
            .filter_map(|&r| inverse.get(r))
            .max()
            .cloned()
            .unwrap_or_default();
        (lat, slowest)
    };
    trees_with(per_root, forests, &hop, &mut |_, x: &BigRational| x.clone())
}

/// [`trees`] with sums of type `L`: `hop` is a tree edge's (latency, seconds per byte),
/// `exact` converts a sum (`true`: of seconds per byte).
pub(super) fn trees_with<L: Lat>(
    per_root: &BigRational,
    forests: &[&Forest],
    hop: &dyn Fn(&crate::forest::ForestEdge) -> (L, L),
    exact: &mut dyn FnMut(bool, &L) -> BigRational,
) -> Vec<TreeTime> {
    let mut out = Vec::new();
    for (phase, f) in forests.iter().enumerate() {
        let mut totals: BTreeMap<NodeId, BigRational> = BTreeMap::new();
        for t in &f.trees {
            *totals.entry(t.root).or_default() += &t.rate;
        }
        for (i, t) in f.trees.iter().enumerate() {
            if t.rate.is_zero() {
                continue;
            }
            let reach = match f.direction {
                Direction::Out => out_reach(t, hop),
                Direction::In => in_reach(t, hop),
            };
            let share = &t.rate / &totals[&t.root];
            let front = frontier(reach.iter().map(|r| (r.1.tail(), r.1.latency.clone())));
            let reach: Arc<[Reach]> = reach
                .iter()
                .map(|(node, c)| Reach {
                    node: *node,
                    hops: c.hops,
                    tail: exact(true, &c.tail()),
                    latency: exact(false, &c.latency),
                })
                .collect();
            out.push(TreeTime {
                phase,
                tree: i,
                root: t.root,
                bytes: per_root * &share,
                share,
                rate: t.rate.clone(),
                depth: depth(t),
                frontier: front
                    .iter()
                    .map(|(tail, l)| (exact(true, tail), exact(false, l)))
                    .collect(),
                reach_seconds: reach
                    .iter()
                    .map(|r| r.latency.to_f64().unwrap_or(0.0))
                    .collect(),
                reach_tail: reach
                    .iter()
                    .map(|r| r.tail.to_f64().unwrap_or(0.0))
                    .collect(),
                reach,
            });
        }
    }
    out
}

/// The most tree edges between the root and any node (an out-tree's depth, an in-tree's
/// height); edges come parent first.
pub(super) fn depth(t: &Tree) -> u64 {
    let free = |_: &crate::forest::ForestEdge| (0i128, 0i128);
    out_reach(t, &free)
        .iter()
        .map(|r| r.1.hops)
        .max()
        .unwrap_or(0)
}

/// Out-trees: a node's chain is its path from the root. Each receiving node with its chain.
pub(super) fn out_reach<L: Lat>(
    t: &Tree,
    hop: &dyn Fn(&crate::forest::ForestEdge) -> (L, L),
) -> Vec<(NodeId, Chain<L>)> {
    let mut at: BTreeMap<NodeId, Chain<L>> = BTreeMap::new();
    at.insert(t.root, Chain::default());
    let mut out = Vec::with_capacity(t.edges.len());
    for e in &t.edges {
        let v = at.get(&e.from).cloned().unwrap_or_default().then(&hop(e));
        out.push((e.to, v.clone()));
        at.insert(e.to, v);
    }
    out
}

/// In-trees: a node with children has everything once every chain of children below it has
/// delivered. Each node keeps the chains no other covers ([`Chain::covers`]), one entry each;
/// leaves receive nothing.
pub(super) fn in_reach<L: Lat>(
    t: &Tree,
    hop: &dyn Fn(&crate::forest::ForestEdge) -> (L, L),
) -> Vec<(NodeId, Chain<L>)> {
    let mut at: BTreeMap<NodeId, Vec<Chain<L>>> = BTreeMap::new();
    // Children before parents: the reverse of breadth-first order.
    for e in t.edges.iter().rev() {
        let below = at
            .get(&e.to)
            .cloned()
            .unwrap_or_else(|| vec![Chain::default()]);
        let h = hop(e);
        let p = at.entry(e.from).or_default();
        p.extend(below.iter().map(|c| c.then(&h)));
        *p = uncovered(std::mem::take(p));
    }
    at.into_iter()
        .flat_map(|(node, chains)| chains.into_iter().map(move |c| (node, c)))
        .collect()
}

/// The chains no other covers, one of each equal group, most tail first.
pub(super) fn uncovered<L: Lat>(mut chains: Vec<Chain<L>>) -> Vec<Chain<L>> {
    chains.sort_by(|a, b| {
        (b.tail(), &b.sum, &b.latency, b.hops).cmp(&(a.tail(), &a.sum, &a.latency, a.hops))
    });
    let mut out: Vec<Chain<L>> = Vec::new();
    for c in chains {
        if !out.iter().any(|k| k.covers(&c)) {
            out.push(c);
        }
    }
    out
}

/// The (tail, latency) pairs not dominated by another (at least as much of both), most tail
/// first.
pub(super) fn frontier<L: Lat>(pairs: impl Iterator<Item = (L, L)>) -> Vec<(L, L)> {
    let mut best: BTreeMap<L, L> = BTreeMap::new();
    for (h, l) in pairs {
        let e = best.entry(h).or_insert_with(|| l.clone());
        if l > *e {
            *e = l;
        }
    }
    let mut out: Vec<(L, L)> = Vec::new();
    for (h, l) in best.into_iter().rev() {
        if out.last().is_none_or(|(_, m)| l > *m) {
            out.push((h, l));
        }
    }
    out
}
