//! The flow-level figures `collc sim` prints for a forest schedule (DESIGN.md, "The
//! simulator"; ../shared/seeds/forestcoll.txt, Section 3.2 and Appendix B): the forest's
//! simulated time over message sizes ([`table`], from [`crate::sim::fluid::run_forest`] with the
//! chunk count [`crate::forest::chunking::choose`] gives at each size) beside the best ring's
//! analytic time ([`Ring`]).
//!
//! Ring: the paper's best ring embedding ([`crate::forest::report`]): its bandwidth term is the
//! data crossing the weakest cut separating ranks (`(N-1)/N * M` for allgather and
//! reduce-scatter, twice that for allreduce, `M` for a pipelined chain broadcast or reduce) over
//! that cut's bandwidth `lambda`, plus `N-1` (twice for allreduce) steps of latency, a step being
//! the slowest lowest-latency path between ring neighbours in rank order plus the flow model's
//! per-message overhead (which the forest's tree edges pay too).

use crate::forest::report::ring_cut;
use crate::net::{FlowParams, Net};
use crate::sema::model::{CollectiveKind, NodeId, Topology};
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use petgraph::visit::EdgeRef;

/// The best ring embedding's figures on a topology: the weakest separating cut and the latency
/// of one ring step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ring {
    pub n: usize,
    /// Bytes per second across the weakest cut (zero for one rank).
    pub lambda: BigRational,
    /// Seconds of one ring step: the slowest neighbour pair's lowest path latency plus its
    /// message's overhead under the flow parameters (as the forest's tree edges pay it).
    pub step: BigRational,
}

impl Ring {
    /// The ring through `ranks` in their order on `topo` (`net` built from it), its steps
    /// paying `params`' per-message overhead.
    pub fn new(topo: &Topology, ranks: &[NodeId], params: &FlowParams, net: &Net) -> Ring {
        let n = ranks.len();
        let lambda = ring_cut(topo, ranks)
            .map(|c| c.bandwidth)
            .unwrap_or_else(BigRational::zero);
        let step = (0..n)
            .filter(|_| n > 1)
            .map(|r| {
                let (a, b) = (ranks[r], ranks[(r + 1) % n]);
                lowest_latency(topo, a, b) + params.overhead_between(net, a, b)
            })
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
            // Relayed round the ring, block j of a rank travels j hops: a link carries
            // (N-1)/2 of the buffer.
            CollectiveKind::Alltoall => {
                bytes * &steps / int(2) / &self.lambda + &steps * &self.step
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

/// Sizes the table sweeps: 1 MiB to 1 GiB, doubling.
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

fn us(s: f64) -> String {
    format!("{:.2} us", s * 1e6)
}

fn gbs(bytes_per_s: f64) -> String {
    if bytes_per_s > 0.0 && bytes_per_s.is_finite() {
        format!("{:.2} GB/s", bytes_per_s / 1e9)
    } else {
        "-".into()
    }
}

/// One size's forest figures: simulated seconds, the chunk count used.
pub struct Row {
    pub seconds: f64,
    pub chunks: u64,
}

/// The table `collc sim` prints: for every size of [`sizes`] the forest's simulated time,
/// algorithmic and bus bandwidth (nccl-tests' definitions) and chunk count (`forest(bytes)`),
/// and the best ring's time and algorithmic bandwidth.
pub fn table(kind: CollectiveKind, n: usize, forest: &dyn Fn(u64) -> Row, ring: &Ring) -> String {
    let mut out = format!(
        "{:<9} {:>14} {:>14} {:>14} {:>7} {:>14} {:>14}\n",
        "size", "forest time", "forest algbw", "forest busbw", "chunks", "ring time", "ring algbw"
    );
    let factor = crate::sim::fluid::bus_factor(kind, n);
    for s in sizes() {
        let f = forest(s);
        let b = BigRational::from_integer(s.into());
        let r = ring.time(kind, &b).to_f64().unwrap_or(0.0);
        let algbw = |t: f64| if t > 0.0 { s as f64 / t } else { 0.0 };
        out.push_str(&format!(
            "{:<9} {:>14} {:>14} {:>14} {:>7} {:>14} {:>14}\n",
            show_size(s),
            us(f.seconds),
            gbs(algbw(f.seconds)),
            gbs(algbw(f.seconds) * factor),
            f.chunks,
            us(r),
            gbs(algbw(r))
        ));
    }
    out
}
