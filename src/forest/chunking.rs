//! Pipelined chunks of a forest schedule: the one time model of a forest that the report, the
//! flow simulation, lowering and hover share, and the count `chunks: auto` (the default)
//! resolves to ([`choose`]).
//!
//! # The model
//!
//! Tree `t` of a root carries `D_t = w_t * P` bytes (`P` the root's data, `w_t` the tree's rate
//! over the sum of its root's rates) at rate `r_t`, in `c` chunks stored and forwarded at every
//! inner node. Its transfer takes `D_t / r_t`; a node has everything once the last chunk has
//! also crossed its path (an out-tree node's path from the root; for an in-tree node, each
//! chain of children below it): `D_t / c` over the slowest link of every tree edge's route but
//! the slowest such edge, which the transfer already counts ([`Reach::tail`]), plus the path's
//! latency: per tree edge, its route's link latencies and the flow model's per-message
//! `overhead` ([`crate::net::FlowParams`]); [`reach`] weighs every node's paths. Latency does not hold back the next chunk
//! (pipelined). A tree finishes with its slowest node; a phase with its slowest tree;
//! allreduce runs reduce-scatter, then allgather. Every figure is exact: latencies and seconds
//! per byte are summed as integers over their common denominators when they fit in 64 bits,
//! as rationals otherwise. With the solver's rates this is the report's figure; the flow
//! simulation ([`crate::sim::fluid::forest`]) puts the max-min fair rates on the physical
//! links in their place.
//!
//! A tree alone on links of one speed is the classic store-and-forward pipeline,
//! `D_t / r_t * (c + h - 1) / c` for a node `h` hops down. Among many trees the fill and the
//! drain are charged at link speed, not at the tree's share of the links (the pipeline is ours:
//! the paper's broadcast flow model, Section 3.2 and Appendix B, lets data flow fluidly down
//! every tree at once): while one tree's first chunks travel, the links it does not yet use
//! carry the other trees' chunks.
//! The flow simulation of a lowered forest program shows it: on a 64-host fat tree whose 64
//! trees are chains 63 edges deep, every link stays busy and the allgather takes the optimum
//! plus 63 overheads at 1, 4, 16 or 64 chunks alike, where charging the fill at each tree's
//! share (1/63 of a link) gave 60 times that at one chunk. The model stays an upper estimate
//! there (twice the optimum at one chunk, 1.5% over it at 64) and meets the simulation as
//! chunks grow.
//!
//! # The choice
//!
//! `chunks: auto` takes the smallest `c` whose modelled time is within 1% of the best over every
//! allowed `c`. The model's time only falls as `c` grows, so the best is at the largest allowed
//! count, the least of:
//! - the lowering's split ([`crate::lower::forest::most_chunks`]): every slot, hence every
//!   pipelined chunk of every tree, holds at least one element;
//! - [`MIN_CHUNK_BYTES`]: no tree's chunk is smaller than 256 bytes (below that a message is
//!   all per-message cost, which the model leaves out, and the lowered program grows with the
//!   message size over this);
//! - [`MAX_CHUNKS`]: never more chunks than a forest program may have slots per buffer.
//!
//! The search evaluates the model a dozen times per size, each time timing each kind of tree
//! once (trees alike in phase, bytes, rate and frontier: a fat tree's forest has thousands of
//! trees of a few kinds), exactly.
//!
//! That count is what the forest's figures use everywhere (`collc compare`, `collc sim`,
//! `schedule auto`, the report, hover): the model and the flow simulation of the trees need no
//! program, so they are not held to its size. A lowered program (`--emit ir`, the targets) must
//! also stay within collc's program limits ([`crate::lower::forest::fitting_chunks`]): under
//! `chunks: auto` it takes the fewer of the two ([`Chunking::program`]), and the report says
//! what that count reaches when it is lower.
//!
//! Small messages therefore get one or a few chunks; a 1 GiB allreduce over 1,024 hosts whose
//! trees are 1,023 edges deep gets 97.

use super::Forest;
use crate::net::FlowParams;
use crate::sema::model::{AutoOr, Collective, CollectiveKind, NodeId, Topology};
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use std::collections::BTreeMap;
use std::sync::Arc;

mod describe;
mod reach;
pub use describe::gbs_short;
pub use reach::trees;

/// The smallest pipelined chunk of a tree `chunks: auto` makes, in bytes.
pub const MIN_CHUNK_BYTES: u64 = 256;
/// The most chunks `chunks: auto` makes (a forest program's slots per buffer).
pub const MAX_CHUNKS: u64 = crate::lower::forest::MAX_SLOTS;
/// `chunks: auto` stays within this fraction (1/100) of the best modelled time.
const TOLERANCE: (i64, i64) = (101, 100);

/// One receiving node of a tree: when it has everything, in hops of store-and-forward, seconds
/// per byte of one chunk's drain behind the transfer, and seconds of latency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach {
    pub node: NodeId,
    pub hops: u64,
    /// Seconds per byte of a chunk: its store-and-forward hops at their routes' slowest links,
    /// all but the slowest of them (which the transfer itself already counts).
    pub tail: BigRational,
    pub latency: BigRational,
}

/// A tree as the time model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeTime {
    /// Which phase (index into the forests) and tree (index into its `trees`).
    pub phase: usize,
    pub tree: usize,
    pub root: NodeId,
    /// Bytes the tree carries (`D_t`): `share` of its root's data.
    pub bytes: BigRational,
    /// The tree's rate over the sum of its root's rates (`w_t`).
    pub share: BigRational,
    /// The solver's rate (`r_t`), bytes per second.
    pub rate: BigRational,
    /// Store-and-forward hops to the farthest node (the tree's depth, or height for in-trees).
    pub depth: u64,
    /// Every node that receives data, with its hops, tail and latency (an in-tree node once per
    /// chain of children below it that no other beats in every respect); shared by the copies
    /// a sweep over sizes makes (only `bytes` changes with the size).
    pub reach: Arc<[Reach]>,
    /// Each of `reach`'s latencies as the nearest `f64`, for the flow simulation.
    pub reach_seconds: Arc<[f64]>,
    /// Each of `reach`'s tails as the nearest `f64`, for the flow simulation.
    pub reach_tail: Arc<[f64]>,
    /// The (tail, latency) pairs no other beats in both: what bounds the tree's finish.
    frontier: Arc<[(BigRational, BigRational)]>,
}

impl TreeTime {
    /// Seconds until the tree's slowest node has everything at `rate`, in `chunks` chunks: its
    /// transfer at that rate, then the last chunk's drain and the path's latency.
    pub fn finish(&self, rate: &BigRational, chunks: u64) -> BigRational {
        if rate.is_zero() || self.bytes.is_zero() {
            return self.latency();
        }
        &self.bytes / rate + self.drain(chunks)
    }

    /// Seconds from the end of the transfer until the slowest node has everything: the last
    /// chunk's store-and-forward hops behind the transfer, and the latency of its path.
    pub fn drain(&self, chunks: u64) -> BigRational {
        let chunk = &self.bytes / BigRational::from_integer(chunks.max(1).into());
        self.frontier
            .iter()
            .map(|(tail, lat)| &chunk * tail + lat)
            .max()
            .unwrap_or_default()
    }

    /// The most latency of any node's path.
    pub fn latency(&self) -> BigRational {
        self.frontier
            .iter()
            .map(|f| f.1.clone())
            .max()
            .unwrap_or_default()
    }
}

/// Bytes of every root's data in one phase of `c`: the whole vector for broadcast and reduce,
/// else `1/N` of it.
pub fn per_root(c: &Collective) -> BigRational {
    let bytes = BigRational::from_integer(c.bytes().into());
    match c.kind {
        CollectiveKind::Broadcast | CollectiveKind::Reduce => bytes,
        _ => bytes / BigRational::from_integer(c.ranks.len().max(1).into()),
    }
}

/// Sets every tree's bytes for `per_root` bytes of every root's data (the rest of the model
/// does not depend on the size).
pub fn resize(trees: &mut [TreeTime], per_root: &BigRational) {
    for t in trees {
        t.bytes = per_root * &t.share;
    }
}

/// Seconds the collective takes in the model: every phase's slowest tree at the solver's rates,
/// phases one after the other.
pub fn seconds(trees: &[TreeTime], phases: usize, chunks: u64) -> BigRational {
    seconds_of(trees, &kinds(trees), phases, chunks)
}

/// One tree of each kind (its index): trees alike in every figure their finish depends on
/// (phase, bytes, rate and frontier) finish together, and a symmetric network's forest has
/// thousands of trees of a few kinds.
fn kinds(trees: &[TreeTime]) -> Vec<usize> {
    type Key<'a> = (
        usize,
        &'a BigRational,
        &'a BigRational,
        &'a [(BigRational, BigRational)],
    );
    let mut seen: std::collections::HashSet<Key<'_>> = std::collections::HashSet::new();
    (0..trees.len())
        .filter(|&i| {
            let t = &trees[i];
            seen.insert((t.phase, &t.bytes, &t.rate, &t.frontier[..]))
        })
        .collect()
}

/// [`seconds`] with the trees' [`kinds`] known: each kind timed once.
fn seconds_of(trees: &[TreeTime], kinds: &[usize], phases: usize, chunks: u64) -> BigRational {
    let mut slowest = vec![BigRational::zero(); phases];
    for &i in kinds {
        let t = &trees[i];
        let f = t.finish(&t.rate, chunks);
        if f > slowest[t.phase] {
            slowest[t.phase] = f;
        }
    }
    slowest.into_iter().sum()
}

/// The chunk count a forest schedule runs with, and what the model says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunking {
    /// The count used: the fixed one, or the auto choice.
    pub chunks: u64,
    /// True when the schedule says `chunks: auto` or leaves `chunks` out.
    pub auto: bool,
    /// The most chunks allowed (see the module doc).
    pub max: u64,
    /// The model's seconds with `chunks`.
    pub seconds: BigRational,
    /// What `chunks: auto` chooses (equal to `chunks` when auto), and its seconds.
    pub auto_chunks: u64,
    pub auto_seconds: BigRational,
    /// Seconds without any pipelining or latency loss: every phase's data at the forest's rate.
    pub optimum: BigRational,
    /// The count a lowered program uses: `chunks`, or under `chunks: auto` the most within
    /// collc's program limits when that is fewer; and its seconds.
    pub program: u64,
    pub program_seconds: BigRational,
}

impl Chunking {
    /// Algorithmic bandwidth (bytes/s) of `bytes` in `seconds`; zero for no time.
    pub fn algbw(bytes: u64, seconds: &BigRational) -> BigRational {
        if seconds.is_zero() {
            return BigRational::zero();
        }
        BigRational::from_integer(bytes.into()) / seconds
    }

    /// `seconds` as a share of the optimum's bandwidth (optimum / seconds), 0..1.
    pub fn efficiency(&self, seconds: &BigRational) -> f64 {
        if seconds.is_zero() {
            return 1.0;
        }
        (&self.optimum / seconds).to_f64().unwrap_or(0.0)
    }

    /// True when the count was fixed and reaches less than 90% of the optimum's bandwidth
    /// while `chunks: auto` would do at least 1% better: the E0045 warning.
    pub fn loses(&self) -> bool {
        !self.auto
            && self.efficiency(&self.seconds) < 0.9
            && &self.auto_seconds * BigRational::new(101.into(), 100.into()) < self.seconds
    }
}

/// The most chunks allowed for `c` over `forests` (see the module doc), at least 1.
pub fn most(c: &Collective, forests: &[&Forest]) -> u64 {
    let split = crate::lower::forest::most_chunks(c, forests);
    let per = per_root(c);
    let min_share = forests
        .iter()
        .flat_map(|f| {
            let mut totals: BTreeMap<NodeId, BigRational> = BTreeMap::new();
            for t in &f.trees {
                *totals.entry(t.root).or_default() += &t.rate;
            }
            f.trees
                .iter()
                .filter(|t| !t.rate.is_zero())
                .map(move |t| &t.rate / &totals[&t.root])
                .collect::<Vec<_>>()
        })
        .min()
        .unwrap_or_else(|| BigRational::from_integer(1.into()));
    let by_bytes = (per * min_share / BigRational::from_integer(MIN_CHUNK_BYTES.into()))
        .floor()
        .to_integer()
        .to_u64()
        .unwrap_or(u64::MAX);
    split.min(by_bytes).clamp(1, MAX_CHUNKS)
}

/// Resolves `asked` for collective `c` over `forests` (as `lower::forest::needs` lists them) on
/// `topo` under the flow parameters `params`: the count to use and the model's figures for it
/// and for the auto choice. Lowering, the report, hover and the simulation all call this, with
/// the file's flow parameters (`crate::net::for_file(model, None)`), so they use one count.
pub fn choose(
    topo: &Topology,
    params: &FlowParams,
    c: &Collective,
    asked: AutoOr<u64>,
    forests: &[&Forest],
) -> Chunking {
    let trees = trees(topo, params, &per_root(c), forests);
    choose_in(&trees, c, asked, forests)
}

/// [`choose`] with the model's trees already made ([`trees`], sized for `c` with [`resize`]):
/// the same result, for sweeps over sizes that make the trees once.
pub fn choose_in(
    trees: &[TreeTime],
    c: &Collective,
    asked: AutoOr<u64>,
    forests: &[&Forest],
) -> Chunking {
    let per = per_root(c);
    let phases = forests.len();
    let max = most(c, forests);
    let kinds = kinds(trees);
    let time = |k: u64| seconds_of(trees, &kinds, phases, k);
    let best = time(max);
    let target = &best * BigRational::new(TOLERANCE.0.into(), TOLERANCE.1.into());
    // The time falls as chunks grow: binary search for the first count within the tolerance.
    let (mut lo, mut hi) = (1u64, max);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if time(mid) <= target {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let auto_seconds = time(lo);
    let optimum: BigRational = forests.iter().map(|f| &per * &f.inv_rate).sum();
    let (chunks, seconds) = match asked {
        AutoOr::Auto => (lo, auto_seconds.clone()),
        AutoOr::Fixed(n) => (n, time(n)),
    };
    // Within the program limits too, so `chunks: auto` always lowers (E0043 is for fixed
    // counts and for layouts that fit no count at all).
    let program = match asked {
        AutoOr::Auto => chunks.min(crate::lower::forest::fitting_chunks(c, forests).max(1)),
        AutoOr::Fixed(n) => n,
    };
    let program_seconds = if program == chunks {
        seconds.clone()
    } else {
        time(program)
    };
    Chunking {
        chunks,
        auto: matches!(asked, AutoOr::Auto),
        max,
        seconds,
        auto_chunks: lo,
        auto_seconds,
        optimum,
        program,
        program_seconds,
    }
}

#[cfg(test)]
mod tests;
