//! NCCL's tree allreduce (`schedule nccl_tree { chunks: auto | N; }`): the double binary tree
//! across boxes with a chain inside each box, as NCCL runs its Tree algorithm (NCCL 2.4's
//! "double binary trees"; src/graph/trees.cc lays them).
//!
//! - **Boxes** are [`crate::net::boxes`] of the topology. Inside a box the ranks form a chain in
//!   node order; its first rank is the box's head. A topology of one box (or none) is taken as
//!   one rank per box, as NCCL runs with one GPU per node: binary trees over all the ranks, not
//!   a chain as deep as the ranks are many.
//! - **Two binary trees over the boxes**, each carrying half of the vector, as NCCL lays them:
//!   in tree 0, box position `p > 0` with lowest set bit `b` hangs from `(p - b) | 2b` when
//!   that is below the box count `M`, else from `p - b`, and position 0 is the root; so the
//!   odd positions are the leaves. Tree 1 is the same tree over the boxes shifted by one
//!   position (`M` even) or mirrored (`M` odd), so a box that is a leaf in one tree is an inner
//!   node of the other, and each box's links carry about one tree's traffic each way.
//! - A rank's parent is the rank before it in its box's chain, or for a box's head the head of
//!   the parent box (none for the root box's head, the tree's root).
//! - **Channels**: as NCCL runs a tree pair per channel, there is one pair per rank of the
//!   smallest box when there are several boxes (one without): channel `k`'s chains start at
//!   each box's `k`-th rank, so its trees cross between boxes through that rank's NIC and the
//!   channels together use every rail, as the rings over channels do.
//! - **Allreduce** per tree and chunk (each half cut into `chunks` pipelined chunks): every rank
//!   adds its children's partial sums to its own value, children in rank order, and sends the
//!   sum to its parent; the root's sum is the result, which travels back down the same tree.
//!   Every rank ends with the root's term, so results are identical across ranks.
//!
//! Slots: channel `k`'s tree `t`'s chunk `j` is slot `(2k + t) x chunks + j`
//! (`chunks_per_part = 2 x channels x chunks`); tags: `2 x slot` up the tree, `2 x slot + 1`
//! down.

use super::builder::Builder;
use crate::ir::{Buf, ProcId, Slice};

/// Per tree (two per channel), per rank: its parent, and its children in rank order.
pub(crate) struct Trees {
    parent: Vec<Vec<Option<ProcId>>>,
    children: Vec<Vec<Vec<ProcId>>>,
}

impl Trees {
    /// The trees for ranks on `hosts` (rank r on node `hosts[r]`), boxes by node `boxes`
    /// (empty: one box).
    pub(crate) fn new(hosts: &[usize], boxes: &[u32]) -> Trees {
        let order = crate::net::rings::node_order(hosts);
        // Boxes in the order of their first rank in node order; each a chain in node order.
        let mut chains: Vec<(u32, Vec<ProcId>)> = Vec::new();
        let mut index: std::collections::BTreeMap<u32, usize> = Default::default();
        for &r in &order {
            let b = boxes.get(hosts[r as usize]).copied().unwrap_or(0);
            match index.get(&b) {
                Some(&i) => chains[i].1.push(r),
                None => {
                    index.insert(b, chains.len());
                    chains.push((b, vec![r]));
                }
            }
        }
        // One box (a flat network): every rank a node of its own, as NCCL with one GPU per
        // node; a chain through all of them would be as deep as the ranks are many.
        if chains.len() == 1 {
            chains = order.iter().map(|&r| (r, vec![r])).collect();
        }
        let m = chains.len();
        let n = hosts.len();
        let channels = chains.iter().map(|c| c.1.len()).min().unwrap_or(1);
        let mut parent = Vec::new();
        for k in 0..channels {
            for t in 0..2 {
                // The box at tree position `i`.
                let at = |i: usize| match t {
                    0 => i,
                    _ if m % 2 == 0 => (i + 1) % m,
                    _ => m - 1 - i,
                };
                // Box b's chain for channel k: from its k-th rank on, round.
                let chain = |b: usize| -> Vec<ProcId> {
                    let c = &chains[b].1;
                    (0..c.len()).map(|i| c[(i + k) % c.len()]).collect()
                };
                let mut par = vec![None; n];
                for i in 0..m {
                    let here = chain(at(i));
                    par[here[0] as usize] = tree_parent(i, m).map(|q| chain(at(q))[0]);
                    for w in here.windows(2) {
                        par[w[1] as usize] = Some(w[0]);
                    }
                }
                parent.push(par);
            }
        }
        let children = parent
            .iter()
            .map(|par| {
                let mut ch = vec![Vec::new(); n];
                for (r, p) in par.iter().enumerate() {
                    if let Some(p) = p {
                        ch[*p as usize].push(r as ProcId);
                    }
                }
                ch
            })
            .collect();
        Trees { parent, children }
    }

    /// Tree pairs (channels).
    pub(crate) fn channels(&self) -> u32 {
        (self.parent.len() / 2) as u32
    }
}

/// The parent of position `p` of the binary tree over `m` positions (see the module doc).
fn tree_parent(p: usize, m: usize) -> Option<usize> {
    if p == 0 {
        return None;
    }
    let bit = p & p.wrapping_neg();
    let up = (p ^ bit) | (bit << 1);
    Some(if up < m { up } else { p ^ bit })
}

/// Allreduce over `trees` with `chunks` chunks per tree (see the module doc).
pub(crate) fn allreduce(b: &mut Builder, trees: &Trees, chunks: u32) {
    let n = b.ranks();
    for t in 0..trees.parent.len() {
        for j in 0..chunks {
            let slot = t as u32 * chunks + j;
            let out = Slice::one(Buf::Output, slot);
            for r in 0..n {
                let ri = r as usize;
                b.copy(r, out, Slice::one(Buf::Input, slot));
                for &c in &trees.children[t][ri] {
                    b.recv_reduce(r, c, out, 2 * slot);
                }
                if let Some(p) = trees.parent[t][ri] {
                    b.send(r, p, out, 2 * slot);
                    b.recv(r, p, out, 2 * slot + 1);
                }
                for &c in &trees.children[t][ri] {
                    b.send(r, c, out, 2 * slot + 1);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four boxes of one rank: tree 0 is 0 -> 2 -> {1, 3}; tree 1, shifted by one, is
    /// 1 -> 3 -> {2, 0}: the leaves of one are inner nodes of the other.
    #[test]
    fn the_two_trees_swap_leaves() {
        let t = Trees::new(&[0, 1, 2, 3], &[0, 1, 2, 3]);
        assert_eq!(t.parent[0], [None, Some(2), Some(0), Some(2)]);
        assert_eq!(t.parent[1], [Some(3), None, Some(3), Some(1)]);
        let leaves =
            |k: usize| -> Vec<usize> { (0..4).filter(|&r| t.children[k][r].is_empty()).collect() };
        assert_eq!(leaves(0), [1, 3]);
        assert_eq!(leaves(1), [0, 2]);
        // Three boxes: tree 0 is 0 -> 2 -> 1, tree 1 its mirror 2 -> 0 -> 1.
        let t = Trees::new(&[0, 1, 2], &[0, 1, 2]);
        assert_eq!(t.parent[0], [None, Some(2), Some(0)]);
        assert_eq!(t.parent[1], [Some(2), Some(0), None]);
    }

    /// Two boxes of two ranks: chains inside, heads joined across.
    #[test]
    fn boxes_are_chains_under_their_heads() {
        let t = Trees::new(&[0, 1, 2, 3], &[0, 0, 1, 1]);
        assert_eq!(t.channels(), 2);
        assert_eq!(t.parent[0], [None, Some(0), Some(0), Some(2)]);
        assert_eq!(t.parent[1], [Some(2), Some(0), None, Some(2)]);
        // Channel 1: the chains start at each box's second rank.
        assert_eq!(t.parent[2], [Some(1), None, Some(3), Some(1)]);
    }
}
