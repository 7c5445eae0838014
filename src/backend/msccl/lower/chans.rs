//! Which channel every message travels on (step 4 of [`super`]).
//!
//! The executor pairs sends and receives FIFO per (sender, receiver, channel); the IR pairs
//! them FIFO per (sender, receiver, tag). The two agree when every connection's messages are
//! sent and received in one order. Two ways to get there:
//!
//! - [`Spread::Chunks`] (every family but ForestColl): chunk `j` of a part travels on channel
//!   `j mod C`. The families that use it send every tag of a pair in one order on both ends
//!   (a ring's steps, a tree's levels), so the global order keeps the pairing.
//! - [`Spread::Trees`] (ForestColl): the IR tags are trees, and many trees cross one link with
//!   their chunks pipelined independently. Both ends of a connection list its messages in the
//!   global order, but a forward fused into its receive (`rcs`) moves back to the receive's
//!   place, ahead of another tree's send the receiver expects first (MI250 8+8: rank 8 sends
//!   rank 9's part to rank 12 before rank 0's, and rank 12 takes the first for the second), so
//!   one FIFO for several trees pairs the wrong messages.
//!   Trees that share a (sender, receiver) pair therefore get disjoint channel groups: a greedy
//!   colouring of the trees in tag order (the conflict graph links trees with a common directed
//!   pair), `C` channels per colour, and the `k`-th message of a (sender, receiver, tree) on
//!   channel `colour * C + k mod C` (both ends count `k` the same way: the IR's pairing). Every
//!   connection then carries one tree, in the order the IR pairs it: a thread block per tree
//!   edge and channel, as the paper does when k is small ("allocate an equal number of
//!   threadblocks to each tree", Section 4.5); a large k needs more channels than the
//!   executor has (E0040, with a `k` that fits). A receive and the send it forwards share a
//!   block only when they share a channel (a tree's chunk `k` in and out).
//!
//! Colouring is linear in the sum, over trees, of the trees met on their pairs.

use super::fuse::Fusion;
use super::{MOp, channel};
use crate::backend::msccl::{At, Options, Problem, Spread, limits};
use crate::diag::Code;
use crate::ir::{OpKind, Program};
use rustc_hash::FxHashMap;

/// The channel of every op of every rank (instance 0), and how many channels one instance uses.
pub(super) struct Channels {
    spread: Spread,
    channels: u32,
    /// Chunks per part.
    pub cpp: u32,
    /// Trees: per rank, per op, the channel (`u32::MAX` for local ops).
    of: Vec<Vec<u32>>,
    /// Channels of one instance.
    pub width: u32,
    /// Trees: the number of colours (trees that share no pair may share one).
    pub colours: u32,
}

impl Channels {
    /// The channel of op `o` of rank `r`, mapped and fused as `m` (a receive folded into a
    /// reduction travels on the receive's channel).
    pub fn of(&self, r: u32, o: u32, m: &MOp, f: &Fusion) -> u32 {
        match self.spread {
            Spread::Chunks => channel(m, self.cpp, self.channels),
            Spread::Trees => {
                let mine = &self.of[r as usize];
                match (mine[o as usize], m) {
                    // A reduction that absorbed a receive.
                    (u32::MAX, MOp::RecvReduce { .. }) => f
                        .moved
                        .iter()
                        .position(|x| *x == o)
                        .map_or(0, |rv| mine[rv]),
                    (u32::MAX, _) => 0,
                    (c, _) => c,
                }
            }
        }
    }
}

/// Assigns channels under `spread` with `channels` per chunk group (see the module doc).
pub(super) fn assign(p: &Program, spread: Spread, channels: u32, cpp: u32) -> Channels {
    if spread == Spread::Chunks {
        return Channels {
            spread,
            channels,
            cpp,
            of: Vec::new(),
            width: channels,
            colours: 1,
        };
    }
    // Directed pairs of every tag, and tags of every pair.
    let mut pairs_of: FxHashMap<u32, Vec<(u32, u32)>> = FxHashMap::default();
    let mut tags_of: FxHashMap<(u32, u32), Vec<u32>> = FxHashMap::default();
    for (s, proc) in p.procs.iter().enumerate() {
        for op in &proc.ops {
            if let OpKind::Send { peer, tag, .. } = op.kind {
                let pair = (s as u32, peer);
                let t = tags_of.entry(pair).or_default();
                if t.last() != Some(&tag) && !t.contains(&tag) {
                    t.push(tag);
                    pairs_of.entry(tag).or_default().push(pair);
                }
            }
        }
    }
    let mut tags: Vec<u32> = pairs_of.keys().copied().collect();
    tags.sort_unstable();
    let mut colour: FxHashMap<u32, u32> = FxHashMap::default();
    let mut used: Vec<bool> = Vec::new();
    for &t in &tags {
        used.clear();
        for pair in &pairs_of[&t] {
            for u in &tags_of[pair] {
                if let Some(&c) = colour.get(u) {
                    if used.len() <= c as usize {
                        used.resize(c as usize + 1, false);
                    }
                    used[c as usize] = true;
                }
            }
        }
        let c = used.iter().position(|x| !x).unwrap_or(used.len()) as u32;
        colour.insert(t, c);
    }
    let colours = colour.values().max().map_or(1, |c| c + 1);
    // The k-th message of each (peer, tag) of each rank, in program order.
    let of =
        p.procs
            .iter()
            .map(|proc| {
                let mut count: FxHashMap<(bool, u32, u32), u32> = FxHashMap::default();
                proc.ops
                    .iter()
                    .map(|op| {
                        let (send, peer, tag) = match op.kind {
                            OpKind::Send { peer, tag, .. } => (true, peer, tag),
                            OpKind::Recv { peer, tag, .. }
                            | OpKind::RecvReduce { peer, tag, .. } => (false, peer, tag),
                            _ => return u32::MAX,
                        };
                        let k = count.entry((send, peer, tag)).or_default();
                        let c = colour.get(&tag).copied().unwrap_or(0) * channels + *k % channels;
                        *k += 1;
                        c
                    })
                    .collect()
            })
            .collect();
    Channels {
        spread,
        channels,
        cpp,
        of,
        width: colours * channels,
        colours,
    }
}

/// The channels one instance of `p` uses under `opts` (ForestColl: colours times channels per
/// colour), and the number of tree colours (1 for the other families).
pub fn channels_needed(p: &Program, opts: &Options) -> (u32, u32) {
    let cpp = p.spec.chunks_per_part.max(1);
    let c = assign(p, opts.spread, opts.channels.max(1), cpp);
    (c.width, c.colours)
}

/// The trees need more channels than the executor has (see [`chans`]).
pub(super) fn too_many(c: &Channels, opts: &Options) -> Problem {
    let per = if opts.channels == 1 {
        String::new()
    } else {
        format!(", {} channels each", opts.channels)
    };
    let inst = if opts.instances == 1 {
        String::new()
    } else {
        format!(", times {} instances", opts.instances)
    };
    Problem::new(
        Code::MscclLimit,
        At::Algo,
        format!(
            "the forest's trees need {} channels: {} groups of trees that cross a common link{per}{inst}; the executor has {}",
            c.width.saturating_mul(opts.instances),
            c.colours,
            limits::MAX_CHANNELS
        ),
        "trees that share a link need their own channels (MSCCL pairs messages per peer and channel); fix k to a smaller value (`k: 1;`) for fewer trees, or use fewer channels and instances",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Buf, Op, Slice, Spec};
    use crate::sema::model::{CollectiveKind, Dtype, ReduceOp};

    /// Three ranks: trees 0 and 1 both cross 0 -> 1 (twice each), tree 2 crosses 1 -> 2 only.
    fn program() -> Program {
        let spec = Spec {
            kind: CollectiveKind::Allgather,
            ranks: 3,
            part_elements: 4,
            chunks_per_part: 4,
            dtype: Dtype::F32,
            op: ReduceOp::Sum,
            root: None,
        };
        let mut p = Program::new("t", spec);
        let s = |i| Slice::new(Buf::Output, i, 1);
        let op = |kind| Op {
            kind,
            deps: crate::ir::Deps::new(),
        };
        for (tag, i) in [(0, 0), (1, 1), (0, 2), (1, 3)] {
            p.procs[0].ops.push(op(OpKind::Send {
                peer: 1,
                src: s(i),
                tag,
            }));
            p.procs[1].ops.push(op(OpKind::Recv {
                peer: 0,
                dst: s(i),
                tag,
            }));
        }
        for i in 4..6 {
            p.procs[1].ops.push(op(OpKind::Send {
                peer: 2,
                src: s(i),
                tag: 2,
            }));
            p.procs[2].ops.push(op(OpKind::Recv {
                peer: 1,
                dst: s(i),
                tag: 2,
            }));
        }
        p
    }

    #[test]
    fn trees_on_a_common_pair_get_disjoint_channels() {
        let c = assign(&program(), Spread::Trees, 1, 4);
        // Trees 0 and 1 share 0 -> 1; tree 2 shares no pair with them and reuses colour 0.
        assert_eq!((c.colours, c.width), (2, 2));
        assert_eq!(c.of[0], vec![0, 1, 0, 1]);
        assert_eq!(c.of[1], vec![0, 1, 0, 1, 0, 0]);
        assert_eq!(c.of[2], vec![0, 0]);
    }

    #[test]
    fn a_trees_messages_alternate_over_its_group() {
        let c = assign(&program(), Spread::Trees, 2, 4);
        assert_eq!((c.colours, c.width), (2, 4));
        // Tree 0 on channels 0 and 1, tree 1 on 2 and 3; both ends count the same way.
        assert_eq!(c.of[0], vec![0, 2, 1, 3]);
        assert_eq!(c.of[1], vec![0, 2, 1, 3, 0, 1]);
        assert_eq!(c.of[2], vec![0, 1]);
    }
}
