//! The network a `.coll` file describes, as the simulators and the topology-derived cost model
//! see it (DESIGN.md, "The simulator": every number comes from the network the user wrote).
//!
//! - **Links**: the topology's directed edges with the parallel copies of a pair of nodes (and
//!   repeated `link` lines between them) merged into one [`NetLink`]: bandwidths add up, the
//!   latency is the lowest. Bandwidths and latencies are kept exact and as `f64` for the
//!   simulators.
//! - **Routes** ([`Net::route`]): minimal-hop paths, as a switched network's shortest-path
//!   routing picks them, with equal-cost multipath (ECMP) decided per (source, destination)
//!   by a fixed hash, so different pairs spread over a fat tree's spines while every run picks
//!   the same paths. Compute nodes forward too (direct networks: rings, tori, meshes).
//! - **Spread routes** ([`Net::spread`]): the same minimal-hop paths, with a message split evenly
//!   over the equal-cost next hops at every node, as adaptive routing or packet spraying spreads
//!   it (a flow model's `routing: spray`); what a fractional flow (ForestColl's and the
//!   all-to-all optimum's) assumes of a switched network.
//! - **Sharing** ([`fair_rates`], [`fair_rates_spread`]): max-min fair rates of flows on their
//!   routes (progressive filling), the flow-level model of how messages sent at the same time
//!   share links; a spread flow loads each link by its share of the message.
//!
//! Per-message costs that the topology does not say (software and NIC start-up, the time to
//! reduce a byte) come from a `flow` model declaration, or its documented defaults: [`FlowParams`].

mod fill;
pub mod gpu;
pub mod params;
pub mod rings;

pub use fill::Filler;
pub use params::{FlowParams, fmt_ns, for_file};

use crate::sema::model::{NodeId, Topology};
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use petgraph::visit::EdgeRef;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

/// Index into [`Net::links`].
pub type LinkId = u32;

/// One direction between two nodes, all parallel copies merged.
#[derive(Debug, Clone)]
pub struct NetLink {
    pub from: NodeId,
    pub to: NodeId,
    /// Bytes per second, exact (sum over the parallel copies).
    pub bandwidth: BigRational,
    /// Seconds, exact (the lowest of the copies).
    pub latency: BigRational,
    pub bw: f64,
    pub lat: f64,
}

/// The network of a topology; see the module doc.
#[derive(Debug)]
pub struct Net {
    pub links: Vec<NetLink>,
    pub names: Vec<String>,
    /// Per node, its outgoing links in the order of their far ends.
    out: Vec<Vec<LinkId>>,
    /// Per node, its incoming links.
    into: Vec<Vec<LinkId>>,
    /// Hop distances to a destination, computed on demand.
    dist: Mutex<BTreeMap<NodeId, std::sync::Arc<Vec<u32>>>>,
    /// Per node, its box ([`boxes`]).
    pub boxes: Vec<u32>,
}

/// The boxes of a topology, one number per node: the nodes joined by links faster than its
/// slowest links (a DGX's NVSwitch, an MI250's xGMI mesh; the slowest being the NICs and the
/// network), when that splits the compute nodes into several groups of more than one; else
/// every node in box 0 (a torus, a fat tree of equal links: no box is special). A GPU
/// runtime's step crosses the network when its ranks are in different boxes.
pub fn boxes(topo: &Topology) -> Vec<u32> {
    let nodes = topo.nodes.len();
    let slowest = topo.links.iter().map(|l| &l.bandwidth).min();
    let mut parent: Vec<usize> = (0..nodes).collect();
    fn find(p: &mut [usize], x: usize) -> usize {
        let mut r = x;
        while p[r] != r {
            r = p[r];
        }
        let mut y = x;
        while p[y] != r {
            let n = p[y];
            p[y] = r;
            y = n;
        }
        r
    }
    for l in &topo.links {
        if Some(&l.bandwidth) > slowest {
            let (a, b) = (find(&mut parent, l.from), find(&mut parent, l.to));
            if a != b {
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let roots: Vec<usize> = (0..nodes).map(|v| find(&mut parent, v)).collect();
    let mut size: BTreeMap<usize, usize> = BTreeMap::new();
    for v in topo.compute_nodes() {
        *size.entry(roots[v]).or_insert(0) += 1;
    }
    if size.len() < 2 || size.values().any(|&k| k < 2) {
        return vec![0; nodes];
    }
    let number: BTreeMap<usize, u32> = size
        .keys()
        .enumerate()
        .map(|(i, &r)| (r, i as u32))
        .collect();
    roots
        .iter()
        .map(|r| number.get(r).copied().unwrap_or(u32::MAX))
        .collect()
}

/// Whether the ranks on `hosts` are in more than one of `boxes` ([`boxes`]).
pub fn spans_boxes(boxes: &[u32], hosts: &[NodeId]) -> bool {
    hosts
        .first()
        .is_some_and(|&a| hosts.iter().any(|&b| boxes.get(a) != boxes.get(b)))
}

/// Whether a file's collective spans several boxes of its topology (false without either):
/// whether a GPU runtime's steps may cross the network.
pub fn file_spans_boxes(m: &crate::sema::model::Model) -> bool {
    m.topology
        .as_ref()
        .zip(m.collective.as_ref())
        .is_some_and(|(t, c)| spans_boxes(&boxes(t), &c.ranks))
}

impl Net {
    pub fn new(topo: &Topology) -> Net {
        let n = topo.nodes.len();
        let mut merged: BTreeMap<(NodeId, NodeId), NetLink> = BTreeMap::new();
        for e in topo.graph.edge_references() {
            let (a, b) = (e.source().index(), e.target().index());
            let w = e.weight();
            merged
                .entry((a, b))
                .and_modify(|l| {
                    l.bandwidth += &w.bandwidth;
                    if w.latency < l.latency {
                        l.latency = w.latency.clone();
                    }
                })
                .or_insert_with(|| NetLink {
                    from: a,
                    to: b,
                    bandwidth: w.bandwidth.clone(),
                    latency: w.latency.clone(),
                    bw: 0.0,
                    lat: 0.0,
                });
        }
        let mut links: Vec<NetLink> = merged.into_values().collect();
        let mut out = vec![Vec::new(); n];
        let mut into = vec![Vec::new(); n];
        for (i, l) in links.iter_mut().enumerate() {
            l.bw = l.bandwidth.to_f64().unwrap_or(0.0);
            l.lat = l.latency.to_f64().unwrap_or(0.0);
            out[l.from].push(i as LinkId);
            into[l.to].push(i as LinkId);
        }
        Net {
            boxes: boxes(topo),
            links,
            names: topo.nodes.iter().map(|x| x.name.clone()).collect(),
            out,
            into,
            dist: Mutex::new(BTreeMap::new()),
        }
    }

    pub fn node_count(&self) -> usize {
        self.out.len()
    }

    /// Whether compute nodes `a` and `b` are in different boxes.
    pub fn crosses(&self, a: NodeId, b: NodeId) -> bool {
        self.boxes.get(a) != self.boxes.get(b)
    }

    /// Hops from every node to `to` (u32::MAX where `to` cannot be reached).
    fn distances(&self, to: NodeId) -> std::sync::Arc<Vec<u32>> {
        if let Some(d) = self.dist.lock().ok().and_then(|m| m.get(&to).cloned()) {
            return d;
        }
        let mut d = vec![u32::MAX; self.node_count()];
        let mut q = VecDeque::new();
        d[to] = 0;
        q.push_back(to);
        while let Some(v) = q.pop_front() {
            for &l in &self.into[v] {
                let u = self.links[l as usize].from;
                if d[u] == u32::MAX {
                    d[u] = d[v] + 1;
                    q.push_back(u);
                }
            }
        }
        let d = std::sync::Arc::new(d);
        if let Ok(mut m) = self.dist.lock() {
            m.insert(to, d.clone());
        }
        d
    }

    /// Hops from any node to `b`, and `b`'s sole link in with its far end when it has one
    /// (see [`Net::route`]).
    fn hops_to(&self, b: NodeId) -> (Option<(LinkId, NodeId)>, impl Fn(NodeId) -> u32) {
        let last = match self.into[b].as_slice() {
            &[l] if self.links[l as usize].from != b => Some((l, self.links[l as usize].from)),
            _ => None,
        };
        let d = self.distances(last.map_or(b, |(_, p)| p));
        let dist = move |x: NodeId| match last {
            Some(_) if x == b => 0,
            Some(_) => d[x].saturating_add(1),
            None => d[x],
        };
        (last, dist)
    }

    /// The route from `a` to `b`: links in order, empty when `a == b` or `b` is unreachable.
    /// Minimal hops; among equal-cost next hops one is picked by a hash of (a, b, hop).
    ///
    /// Hop distances to `b` come from a breadth-first search, kept per destination. A `b`
    /// with a single link in (a host on its switch) borrows the distances of that link's
    /// other end `p`: every route to `b` ends with the link, so a node's distance to `b` is
    /// one more than to `p` (`b`'s own is 0). On networks of many hosts this keeps one
    /// search per switch instead of one per host (a million hosts on a switch would hold
    /// 4 TB of distances), with the same routes.
    pub fn route(&self, a: NodeId, b: NodeId) -> Vec<LinkId> {
        let mut path = Vec::new();
        self.routes_to(b, &[a], |_, r| path.extend_from_slice(r));
        path
    }

    /// [`Net::route`] from each of `sources` to `b`, handed to `f` with the source's index,
    /// with `b`'s distances looked up once.
    pub fn routes_to(&self, b: NodeId, sources: &[NodeId], mut f: impl FnMut(usize, &[LinkId])) {
        let (last, dist) = self.hops_to(b);
        let mut path = Vec::new();
        for (i, &a) in sources.iter().enumerate() {
            path.clear();
            if dist(a) != u32::MAX {
                self.walk(a, b, last, &dist, &mut path);
            }
            f(i, &path);
        }
    }

    fn walk(
        &self,
        a: NodeId,
        b: NodeId,
        last: Option<(LinkId, NodeId)>,
        dist: &impl Fn(NodeId) -> u32,
        path: &mut Vec<LinkId>,
    ) {
        let mut at = a;
        while at != b {
            // `b`'s one link in is the only hop from `p` that gets closer to `b`.
            if let Some((l, p)) = last
                && at == p
            {
                path.push(l);
                break;
            }
            let goal = dist(at) - 1;
            let closer = |l: &&LinkId| dist(self.links[**l as usize].to) == goal;
            let count = self.out[at].iter().filter(closer).count() as u64;
            // A node at a finite distance always has a hop closer; none is left only on a
            // network that changed under the distances, where the route stops short.
            let Some(&pick) = (count > 0)
                .then(|| mix(a as u64, b as u64, path.len() as u64) % count)
                .and_then(|k| self.out[at].iter().filter(closer).nth(k as usize))
            else {
                break;
            };
            path.push(pick);
            at = self.links[pick as usize].to;
        }
    }

    /// The links out of `at` one hop closer to the destination `dist` measures: the
    /// equal-cost next hops of a minimal route.
    fn closer(&self, at: NodeId, dist: &impl Fn(NodeId) -> u32) -> Vec<LinkId> {
        self.out[at]
            .iter()
            .copied()
            .filter(|&l| dist(self.links[l as usize].to) == dist(at) - 1)
            .collect()
    }

    /// The links a message from `a` to `b` loads when the network spreads it ([`Net::route`]'s
    /// minimal hops, split evenly over the equal-cost next hops at every node), each with the
    /// share of the message it carries (exact), in link order; empty when `a == b` or `b` is
    /// unreachable. The shares leaving `a` sum to 1, as do those entering `b`.
    pub fn spread(&self, a: NodeId, b: NodeId) -> Vec<(LinkId, BigRational)> {
        let (_, d) = self.hops_to(b);
        if a == b || d(a) == u32::MAX {
            return Vec::new();
        }
        // Layer by layer from `a`, each one hop closer to `b`: a node's share is complete
        // before it is passed on.
        let mut share: BTreeMap<NodeId, BigRational> =
            BTreeMap::from([(a, BigRational::from_integer(1.into()))]);
        let mut layer = vec![a];
        let mut out: BTreeMap<LinkId, BigRational> = BTreeMap::new();
        while !layer.is_empty() {
            let mut next_layer = Vec::new();
            for &at in &layer {
                if at == b {
                    continue;
                }
                let next = self.closer(at, &d);
                let part = &share[&at] / BigRational::from_integer(next.len().into());
                for l in next {
                    *out.entry(l).or_insert_with(BigRational::zero) += &part;
                    let to = self.links[l as usize].to;
                    let s = share.entry(to).or_insert_with(BigRational::zero);
                    if s.is_zero() {
                        next_layer.push(to);
                    }
                    *s += &part;
                }
            }
            next_layer.sort_unstable();
            layer = next_layer;
        }
        out.into_iter().collect()
    }

    /// The sum of the route's link latencies, exact.
    pub fn latency(&self, route: &[LinkId]) -> BigRational {
        route
            .iter()
            .map(|&l| self.links[l as usize].latency.clone())
            .fold(BigRational::zero(), |a, b| a + b)
    }

    /// The lowest bandwidth on the route, exact (None for an empty route).
    pub fn bottleneck(&self, route: &[LinkId]) -> Option<BigRational> {
        route
            .iter()
            .map(|&l| self.links[l as usize].bandwidth.clone())
            .min()
    }

    /// `from -> to` of a link, by node name.
    pub fn link_name(&self, l: LinkId) -> String {
        let x = &self.links[l as usize];
        format!("{} -> {}", self.names[x.from], self.names[x.to])
    }
}

/// A fixed 64-bit mix (splitmix64 of the three values): the same on every machine.
fn mix(a: u64, b: u64, c: u64) -> u64 {
    let mut z = a
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(b.wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
        .wrapping_add(c.wrapping_mul(0x1656_67B1_9E37_79F9));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An `f64` ordered totally (`f64::total_cmp`), for heaps of shares and times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Total(pub f64);
impl Eq for Total {}

impl Total {
    /// The number as an integer in the same total order (`f64::total_cmp`): heaps of packed
    /// integer keys compare one machine word instead of a float and its tie-breakers.
    pub fn key(self) -> u64 {
        let b = self.0.to_bits();
        if b >> 63 == 1 { !b } else { b | 1 << 63 }
    }

    /// The number whose [`Total::key`] `k` is (the same bits).
    pub fn from_key(k: u64) -> f64 {
        f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
    }
}
impl PartialOrd for Total {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Total {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// Max-min fair rates (bytes per second) of flows sharing links, by progressive filling:
/// raise every unfrozen flow's rate together until a link is full, freeze the flows through it,
/// repeat. A flow that crosses a link several times counts once per crossing there. `caps[l]`
/// is link l's bandwidth; a flow with an empty route gets `f64::INFINITY`. Ties go to the
/// lowest link index, so the result is the same on every run.
pub fn fair_rates(caps: &[f64], flows: &[&[LinkId]]) -> Vec<f64> {
    Filler::default()
        .fill(caps, flows.len(), |f| flows[f].iter().map(|&l| (l, 1.0)))
        .to_vec()
}

/// [`fair_rates`] of spread flows ([`Net::spread`]): a flow at rate r loads each of its links
/// by r times the link's share. With every share 1 it is [`fair_rates`].
pub fn fair_rates_spread(caps: &[f64], flows: &[&[(LinkId, f64)]]) -> Vec<f64> {
    Filler::default()
        .fill(caps, flows.len(), |f| flows[f].iter().copied())
        .to_vec()
}

#[cfg(test)]
mod tests;
