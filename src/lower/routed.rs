//! All-to-all along given routes: each block is cut into `chunks_per_part` chunks, and each
//! contiguous range of a block's chunks travels from its source rank through a list of relay
//! ranks to its destination, store and forward (the lowering of the topology-optimal
//! all-to-all, whose routes come from a maximum concurrent flow, [`crate::mcf`]).
//!
//! Each chunk is one message per hop. A relay receives it into scratch and sends it on; its
//! scratch is handed out in whole blocks of `chunks_per_part` slots (one per route it relays)
//! so that slot `k` holds chunk `k mod chunks_per_part`, the layout `ir::verify` checks. The
//! last hop receives straight into the destination's output. Every message has tag 0: sends
//! and receives of one (sender, receiver) pair are emitted in the same order, which is the
//! order the static matching pairs them in.
//!
//! From the optimum's routing ([`mcf_routes`]): a source's trees share its blocks' chunks by
//! their weights, exactly when the chunk count is a multiple of every weight's denominator
//! ([`mcf_chunks`]), else by largest remainder (the load then exceeds the optimum's by at most
//! one chunk per tree and block). Deviation: only ranks relay; the network between two relays
//! is the simulator's minimal-hop routing (ECMP), which follows the flow's path wherever that
//! path is the only minimal one between them, as on a box's switch or a rail's NICs.

use super::builder::Builder;
use crate::ir::{Buf, OpId, Slice};
use crate::mcf::Optimum;
use crate::sema::model::{AutoOr, NodeId};
use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive};
use std::collections::BTreeMap;

/// One range of one block on its way: chunks `first .. first + count` of block `dst` of rank
/// `src`'s input, relayed by `via` (ranks, in order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    pub(crate) src: u32,
    pub(crate) dst: u32,
    pub(crate) via: Vec<u32>,
    pub(crate) first: u32,
    pub(crate) count: u32,
}

/// Emits every rank's own-block copy and every route as a pipeline: chunk c's hop d is emitted
/// in wave c + d, and each route's sends at one hop go one chunk after another (a send waits
/// for the route's previous send from that rank), so a relay forwards a chunk while the next
/// arrives. Routes sharing a link share it; the flow's weights already balance what they
/// carry. (Serialising each (sender, receiver) pair instead leaves a link idle behind a
/// forwarded chunk that has not arrived: 28% on a 4x4 torus.)
pub(crate) fn alltoall(b: &mut Builder, cpp: u32, routes: &[Route]) {
    let n = b.ranks();
    for r in 0..n {
        let (at, len) = (r * cpp, cpp);
        b.copy(
            r,
            Slice::new(Buf::Output, at, len),
            Slice::new(Buf::Input, at, len),
        );
    }
    // A scratch block (cpp slots) on each relay of each route.
    let mut blocks = vec![0u32; n as usize];
    let base: Vec<Vec<u32>> = routes
        .iter()
        .map(|rt| {
            rt.via
                .iter()
                .map(|&v| {
                    blocks[v as usize] += 1;
                    blocks[v as usize] - 1
                })
                .collect()
        })
        .collect();
    let depth = routes.iter().map(|r| r.via.len() + 1).max().unwrap_or(0);
    // The last send of each (route, hop): the next chunk's waits for it.
    let mut last: BTreeMap<(u32, u32), OpId> = BTreeMap::new();
    for wave in 0..cpp + depth as u32 {
        for d in 0..depth.min(wave as usize + 1) {
            let c = wave - d as u32;
            for (i, (rt, base)) in routes.iter().zip(&base).enumerate() {
                if c < rt.first || c >= rt.first + rt.count || d > rt.via.len() {
                    continue;
                }
                let (from, data) = match d {
                    0 => (rt.src, Slice::one(Buf::Input, rt.dst * cpp + c)),
                    _ => (
                        rt.via[d - 1],
                        Slice::one(Buf::Scratch, base[d - 1] * cpp + c),
                    ),
                };
                let (to, into) = match rt.via.get(d) {
                    Some(&v) => (v, Slice::one(Buf::Scratch, base[d] * cpp + c)),
                    None => (rt.dst, Slice::one(Buf::Output, rt.src * cpp + c)),
                };
                let send = b.send(from, to, data, 0);
                if let Some(prev) = last.insert((i as u32, d as u32), send) {
                    b.after(from, send, prev);
                }
                b.recv(to, from, into, 0);
            }
        }
    }
}

/// The most chunks per block `chunks: auto` cuts an `mcf` all-to-all into.
pub const MCF_MAX_CHUNKS: u64 = 64;

/// The fewest bytes per chunk `chunks: auto` pipelines a relayed block in.
const MCF_CHUNK_BYTES: u64 = 256 << 10;

/// Pipelined chunks `chunks: auto` aims at for relayed blocks.
const MCF_PIPELINE: u64 = 16;

/// The flow's trees as the lowering uses them: per source, each tree's weight (a source's sum
/// to 1) and, per destination rank, the ranks that relay on its path.
pub(crate) struct Trees(Vec<Vec<(BigRational, Vec<Vec<u32>>)>>);

impl Trees {
    /// `opt`'s trees, each path reduced to its relaying ranks (computed once, for both the
    /// chunk count and the routes).
    pub(crate) fn new(opt: &Optimum) -> Trees {
        let rank_of: BTreeMap<NodeId, u32> = opt
            .ranks
            .iter()
            .enumerate()
            .map(|(r, &v)| (v, r as u32))
            .collect();
        let relays = |path: &[NodeId]| -> Vec<u32> {
            match path {
                [_, inner @ .., _] => inner
                    .iter()
                    .filter_map(|v| rank_of.get(v).copied())
                    .collect(),
                _ => Vec::new(),
            }
        };
        Trees(
            (0..opt.ranks.len())
                .map(|s| {
                    opt.source_trees(s)
                        .into_iter()
                        .map(|(w, paths)| (w, paths.iter().map(|p| relays(p)).collect()))
                        .collect()
                })
                .collect(),
        )
    }
}

/// Chunks per block for the flow's trees. `auto`: the least common denominator of every
/// tree's weight (each tree then gets exactly its share; [`MCF_MAX_CHUNKS`] when larger), and
/// when some route is relayed, its smallest multiple that pipelines a block in up to
/// [`MCF_PIPELINE`] chunks of at least [`MCF_CHUNK_BYTES`]. Never more than a block has
/// elements.
pub(crate) fn mcf_chunks(
    trees: &Trees,
    chunks: AutoOr<u64>,
    block_elements: u64,
    block_bytes: u64,
) -> u64 {
    let want = match chunks {
        AutoOr::Fixed(k) => k,
        AutoOr::Auto => {
            let mut lcm = BigInt::one();
            let mut relayed = false;
            for (w, via) in trees.0.iter().flatten() {
                lcm = lcm.lcm(w.denom());
                relayed |= via.iter().any(|v| !v.is_empty());
            }
            let exact = lcm
                .to_u64()
                .filter(|&l| l <= MCF_MAX_CHUNKS)
                .unwrap_or(MCF_MAX_CHUNKS);
            let pipeline = if relayed {
                (block_bytes / MCF_CHUNK_BYTES).clamp(1, MCF_PIPELINE)
            } else {
                1
            };
            (pipeline.div_ceil(exact) * exact).min(MCF_MAX_CHUNKS)
        }
    };
    want.clamp(1, block_elements.max(1))
}

/// Shares of `cpp` chunks by `weights` (summing to 1): floors, then the remaining chunks to the
/// largest fractional parts, earlier trees first among equals.
fn shares(weights: &[BigRational], cpp: u64) -> Vec<u64> {
    let c = BigRational::from_integer(BigInt::from(cpp));
    let exact: Vec<BigRational> = weights.iter().map(|w| w * &c).collect();
    let mut out: Vec<u64> = exact
        .iter()
        .map(|x| x.floor().to_integer().to_u64().unwrap_or(0))
        .collect();
    let left = cpp.saturating_sub(out.iter().sum());
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| {
        let fa = &exact[a] - exact[a].floor();
        let fb = &exact[b] - exact[b].floor();
        fb.cmp(&fa).then(a.cmp(&b))
    });
    for &i in order.iter().take(left as usize) {
        out[i] += 1;
    }
    out
}

/// The routes of the flow's trees with `cpp` chunks per block: each source's chunks shared
/// among its trees ([`shares`]), a tree's range of every block sent along that tree's path,
/// relayed by the ranks on it (switches and other nodes are the network between them).
pub(crate) fn mcf_routes(trees: &Trees, cpp: u32) -> Vec<Route> {
    let mut out = Vec::new();
    for (s, source) in trees.0.iter().enumerate() {
        let weights: Vec<BigRational> = source.iter().map(|(w, _)| w.clone()).collect();
        let mut first = 0u32;
        for ((_, paths), count) in source.iter().zip(shares(&weights, u64::from(cpp))) {
            let count = count as u32;
            if count == 0 {
                continue;
            }
            for (t, via) in paths.iter().enumerate() {
                if t == s {
                    continue;
                }
                out.push(Route {
                    src: s as u32,
                    dst: t as u32,
                    via: via.clone(),
                    first,
                    count,
                });
            }
            first += count;
        }
    }
    out
}
