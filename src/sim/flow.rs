//! The flow-level model (DESIGN.md, "The simulator"; ../shared/seeds/forestcoll.txt, Section 3.2
//! and Appendix B): data streams along ForestColl's trees as fluid flows, each tree at its rate,
//! sharing the physical links its edges' routes cross. Exact rationals throughout.
//!
//! Forest: tree `t` of a root carries `w_t` of the root's data `D` (`w_t` its rate over the sum of
//! its root's rates), so `d_t = w_t * D` bytes at rate `r_t`. With `c` pipelined chunks, a chunk
//! is stored and forwarded at every inner node, so a leaf `depth` tree edges below the root has the
//! whole tree's data after `(c + depth - 1) / c * d_t / r_t` plus the latencies of the links on its
//! path; the tree finishes with its last leaf. Every tree edge adds `d_t` to the load of every
//! physical link on its route, and no link can move its load faster than its bandwidth, so the
//! forest's time is the larger of its slowest tree and its most loaded link (equal to the slowest
//! tree's bandwidth term when the forest respects the link capacities, as the solver's does).
//! Allreduce runs reduce-scatter, then allgather.
//!
//! Ring: the paper's best ring embedding ([`crate::forest::report`]): its bandwidth term is the
//! data crossing the weakest cut separating ranks (`(N-1)/N * M` for allgather and
//! reduce-scatter, twice that for allreduce, `M` for a pipelined chain broadcast or reduce) over
//! that cut's bandwidth `lambda`, plus `N-1` (twice for allreduce) steps of latency, a step being
//! the slowest lowest-latency path between ring neighbours in rank order.

use crate::forest::{Forest, Tree, report::ring_cut};
use crate::sema::model::{CollectiveKind, NodeId, Topology};
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use petgraph::visit::EdgeRef;
use std::collections::BTreeMap;

/// Seconds one phase (or a whole collective) takes, and what bounds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowTime {
    pub seconds: BigRational,
    /// Bytes on every loaded link (graph edge index), from the forest's trees.
    pub loads: BTreeMap<usize, BigRational>,
}

impl FlowTime {
    fn zero() -> FlowTime {
        FlowTime {
            seconds: BigRational::zero(),
            loads: BTreeMap::new(),
        }
    }

    /// Runs `next` after this phase.
    fn then(mut self, next: FlowTime) -> FlowTime {
        self.seconds += next.seconds;
        for (e, b) in next.loads {
            *self.loads.entry(e).or_insert_with(BigRational::zero) += b;
        }
        self
    }

    /// The link that bounds the time most, with its load over (bandwidth x time): its share of
    /// busy time.
    pub fn busiest(&self, topo: &Topology) -> Option<(usize, BigRational)> {
        if self.seconds.is_zero() {
            return None;
        }
        self.loads
            .iter()
            .map(|(e, b)| (*e, b / (&bandwidth(topo, *e) * &self.seconds)))
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
    }
}

fn bandwidth(topo: &Topology, e: usize) -> BigRational {
    topo.graph
        .edge_weight(petgraph::graph::EdgeIndex::new(e))
        .map(|w| w.bandwidth.clone())
        .unwrap_or_else(BigRational::zero)
}

fn latency(topo: &Topology, e: usize) -> BigRational {
    topo.graph
        .edge_weight(petgraph::graph::EdgeIndex::new(e))
        .map(|w| w.latency.clone())
        .unwrap_or_else(BigRational::zero)
}

/// One forest moving `per_root` bytes of every root's data in `chunks` pipelined chunks.
pub fn forest_phase(topo: &Topology, f: &Forest, per_root: &BigRational, chunks: u64) -> FlowTime {
    let mut totals: BTreeMap<NodeId, BigRational> = BTreeMap::new();
    for t in &f.trees {
        *totals.entry(t.root).or_insert_with(BigRational::zero) += &t.rate;
    }
    let mut out = FlowTime::zero();
    let c = BigRational::from_integer(chunks.max(1).into());
    for t in f.trees.iter().filter(|t| !t.rate.is_zero()) {
        let data = per_root * &t.rate / &totals[&t.root];
        for e in &t.edges {
            for &l in &e.route {
                *out.loads.entry(l).or_insert_with(BigRational::zero) += &data;
            }
        }
        let stage = &data / &t.rate;
        let finish = reach(topo, t)
            .into_iter()
            .map(|(depth, lat)| {
                let d = BigRational::from_integer(depth.into());
                (&c + d - BigRational::from_integer(1.into())) / &c * &stage + lat
            })
            .max()
            .unwrap_or_else(BigRational::zero);
        out.seconds = out.seconds.max(finish);
    }
    let link_bound = out
        .loads
        .iter()
        .map(|(e, b)| {
            let bw = bandwidth(topo, *e);
            if bw.is_zero() {
                BigRational::zero()
            } else {
                b / bw
            }
        })
        .max()
        .unwrap_or_else(BigRational::zero);
    out.seconds = out.seconds.max(link_bound);
    out
}

/// The depth of a tree: tree edges from the root to its deepest node.
pub fn depth(t: &Tree) -> u64 {
    let mut at: BTreeMap<NodeId, u64> = BTreeMap::new();
    at.insert(t.root, 0);
    let mut deepest = 0;
    for e in &t.edges {
        let d = at.get(&e.from).copied().unwrap_or(0) + 1;
        at.insert(e.to, d);
        deepest = deepest.max(d);
    }
    deepest
}

/// Every tree node's depth (tree edges from the root) and path latency; the deepest finish last.
fn reach(topo: &Topology, t: &Tree) -> Vec<(u64, BigRational)> {
    let mut at: BTreeMap<NodeId, (u64, BigRational)> = BTreeMap::new();
    at.insert(t.root, (0, BigRational::zero()));
    for e in &t.edges {
        let (d, l) = at.get(&e.from).cloned().unwrap_or((0, BigRational::zero()));
        let hop: BigRational = e.route.iter().map(|&r| latency(topo, r)).sum();
        at.insert(e.to, (d + 1, l + hop));
    }
    at.into_values().collect()
}

/// The forests' time for `kind` on `bytes` (the collective's size, as `Collective::bytes`):
/// `forests` as `lower::forest::needs` lists them.
pub fn forest_time(
    topo: &Topology,
    kind: CollectiveKind,
    n: usize,
    bytes: &BigRational,
    chunks: u64,
    forests: &[&Forest],
) -> FlowTime {
    let per_root = match kind {
        CollectiveKind::Broadcast | CollectiveKind::Reduce => bytes.clone(),
        _ => bytes / BigRational::from_integer(n.max(1).into()),
    };
    forests
        .iter()
        .map(|f| forest_phase(topo, f, &per_root, chunks))
        .fold(FlowTime::zero(), FlowTime::then)
}

/// The best ring embedding's figures on a topology: the weakest separating cut and the latency
/// of one ring step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ring {
    pub n: usize,
    /// Bytes per second across the weakest cut (zero for one rank).
    pub lambda: BigRational,
    /// Seconds of one ring step.
    pub step: BigRational,
}

impl Ring {
    pub fn new(topo: &Topology, ranks: &[NodeId]) -> Ring {
        let n = ranks.len();
        let lambda = ring_cut(topo, ranks)
            .map(|c| c.bandwidth)
            .unwrap_or_else(BigRational::zero);
        let step = (0..n)
            .map(|r| lowest_latency(topo, ranks[r], ranks[(r + 1) % n]))
            .max()
            .unwrap_or_else(BigRational::zero);
        Ring { n, lambda, step }
    }

    /// Seconds for `kind` on `bytes`.
    pub fn time(&self, kind: CollectiveKind, bytes: &BigRational) -> BigRational {
        if self.n < 2 || self.lambda.is_zero() {
            return BigRational::zero();
        }
        let int = |x: usize| BigRational::from_integer(x.into());
        let steps = int(self.n - 1);
        let one_way = bytes * &steps / int(self.n) / &self.lambda + &steps * &self.step;
        match kind {
            CollectiveKind::Allgather | CollectiveKind::ReduceScatter => one_way,
            CollectiveKind::Allreduce | CollectiveKind::Barrier => one_way * int(2),
            CollectiveKind::Broadcast | CollectiveKind::Reduce => {
                bytes / &self.lambda + steps * &self.step
            }
        }
    }
}

/// The least total latency of a path from `a` to `b` (Dijkstra, exact).
fn lowest_latency(topo: &Topology, a: NodeId, b: NodeId) -> BigRational {
    let n = topo.nodes.len();
    let mut best: Vec<Option<BigRational>> = vec![None; n];
    let mut done = vec![false; n];
    best[a] = Some(BigRational::zero());
    loop {
        let u = (0..n)
            .filter(|&i| !done[i])
            .filter_map(|i| best[i].as_ref().map(|d| (i, d)))
            .min_by(|x, y| x.1.cmp(y.1))
            .map(|x| x.0);
        let Some(u) = u else {
            return BigRational::zero();
        };
        if u == b {
            return best[b].clone().unwrap_or_else(BigRational::zero);
        }
        done[u] = true;
        let du = best[u].clone().unwrap_or_else(BigRational::zero);
        for e in topo.graph.edges(topo.index(u)) {
            let v = e.target().index();
            let d = &du + &e.weight().latency;
            if best[v].as_ref().is_none_or(|x| d < *x) {
                best[v] = Some(d);
            }
        }
    }
}

/// Sizes the report sweeps: 1 MiB to 1 GiB, doubling.
pub fn sizes() -> Vec<u64> {
    (0..=10).map(|i| (1u64 << 20) << i).collect()
}

/// `bytes` as `1 MiB` .. `1 GiB`.
fn show_size(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{} GiB", bytes >> 30)
    } else {
        format!("{} MiB", bytes >> 20)
    }
}

fn us(s: &BigRational) -> String {
    format!("{:.2} us", s.to_f64().unwrap_or(0.0) * 1e6)
}

fn algbw(bytes: u64, s: &BigRational) -> String {
    if s.is_zero() {
        return "-".into();
    }
    let b = BigRational::from_integer(bytes.into()) / s;
    format!("{:.2} GB/s", b.to_f64().unwrap_or(0.0) / 1e9)
}

/// The table `collc sim` prints: time and algorithmic bandwidth of the forest (`forest(bytes)`)
/// and of the best ring for every size of [`sizes`].
pub fn table(
    kind: CollectiveKind,
    forest: &dyn Fn(&BigRational) -> FlowTime,
    ring: &Ring,
) -> String {
    let mut out = format!(
        "{:<9} {:>14} {:>14} {:>14} {:>14}\n",
        "size", "forest time", "forest algbw", "ring time", "ring algbw"
    );
    for s in sizes() {
        let b = BigRational::from_integer(s.into());
        let f = forest(&b).seconds;
        let r = ring.time(kind, &b);
        out.push_str(&format!(
            "{:<9} {:>14} {:>14} {:>14} {:>14}\n",
            show_size(s),
            us(&f),
            algbw(s, &f),
            us(&r),
            algbw(s, &r)
        ));
    }
    out
}
