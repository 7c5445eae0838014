//! ForestColl's trees as IR ops (../shared/seeds/forestcoll.txt, Sections 3.2 and 4.6): the
//! data layout that gives every tree its share and the receive-and-forward / receive-and-reduce
//! walks over each tree.
//!
//! # Layout
//!
//! Every root's data (its *shard*: the root's part for allgather and reduce-scatter, the `1/N`
//! slice of the vector it reduces and spreads for allreduce, the whole vector for broadcast and
//! reduce) is split among the root's trees in proportion to their rates. Let `w_t` be tree `t`'s
//! rate over the sum of its root's rates and `D` the least common multiple of the denominators
//! of all `w_t` (every forest involved, so one layout fits both halves of an allreduce). A shard
//! is `D * chunks` slots; tree `t` owns `u_t = w_t * D` units of `chunks` slots each, a contiguous
//! run of `u_t * chunks` slots starting after its predecessors', and its pipelined chunk `j` is
//! the `u_t` slots from `start_t + j * u_t`. The IR's slots split a part into nearly equal
//! element counts (`ir::chunk_range`: slot `s` of `C` covers elements `floor(P*s/C)` to
//! `floor(P*(s+1)/C)`), so tree `t` carries exactly `floor(P*B_t) - floor(P*A_t)` elements, where
//! `A_t` and `B_t` are the cumulative weights before and after it: integer shares proportional to
//! the rates that sum to the whole. With the paper's trees (rate `y` times a multiplicity, `k`
//! per root) `D` divides `k`.
//!
//! # Walks
//!
//! Out-trees (allgather, broadcast, the allgather half of allreduce): for every tree, chunk and
//! edge in breadth-first order, the parent sends the chunk (the root from where it holds the
//! data, everyone else from its output, where it received it) and the child receives it into its
//! output; an inner node's forwards depend only on its own receive of that chunk, so chunks
//! stream down the tree. In-trees (reduce-scatter, reduce, the first half of allreduce): every
//! node with children copies its input into an accumulator (the root's output, else a scratch
//! slot mirroring the input slot), adds its children's partial sums in edge order, and sends the
//! result to its parent; a leaf sends its input. Each chunk is reduced at one root along one
//! tree, in one fixed order, and allreduce then copies that one term everywhere, so every rank
//! holds bitwise the same result. An edge through switches is one message between its two
//! compute nodes; its route matters only to the flow simulator and the report.
//!
//! Tags number the trees of the program (in-trees first), so each (sender, receiver, tag)
//! channel carries one tree's chunks in order.

use crate::forest::{Forest, Tree};
use crate::ir::{Buf, ProcId, Slice};
use crate::lower::builder::Builder;
use crate::sema::model::NodeId;
use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::collections::BTreeMap;

/// One tree's place in its root's shard, with its edges in rank numbers.
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    pub root: u32,
    /// First slot of the tree's run within the shard.
    pub start: u32,
    /// Units (slots per pipelined chunk).
    pub units: u32,
    /// (parent, child) in breadth-first order.
    pub edges: Vec<(u32, u32)>,
}

/// The slot layout shared by the forests of one program; see the module doc.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// `D`: units per shard.
    pub units: u64,
    pub chunks: u32,
}

impl Layout {
    /// Slots of one shard.
    pub fn shard(&self) -> u64 {
        self.units * u64::from(self.chunks)
    }
}

/// The common denominator `D` of the trees' weights in every forest.
pub(crate) fn units(forests: &[&Forest]) -> Result<u64, String> {
    let mut d = BigInt::one();
    for f in forests {
        for (_, total, trees) in by_root(f)? {
            for (_, w) in trees {
                let w = w / &total;
                d = d.lcm(w.denom());
            }
        }
    }
    d.to_u64()
        .ok_or_else(|| format!("the trees' shares need {d} units per shard"))
}

/// A root, its trees' total weight, and its trees with their weights.
type Group<'a> = (NodeId, BigRational, Vec<(&'a Tree, BigRational)>);

/// Trees grouped by root (in order of first appearance) with their weights: their rates, or
/// equal weights for a root whose trees all have rate zero (a single rank, where nothing moves);
/// other zero-rate trees carry nothing and are left out.
fn by_root(f: &Forest) -> Result<Vec<Group<'_>>, String> {
    let mut order: Vec<NodeId> = Vec::new();
    let mut groups: BTreeMap<NodeId, Vec<&Tree>> = BTreeMap::new();
    for t in &f.trees {
        if t.rate.is_negative() {
            return Err(format!(
                "a tree rooted at node {} has a negative rate",
                t.root
            ));
        }
        let g = groups.entry(t.root).or_default();
        if g.is_empty() {
            order.push(t.root);
        }
        g.push(t);
    }
    Ok(order
        .into_iter()
        .map(|r| {
            let trees = groups.remove(&r).unwrap_or_default();
            let weighted: Vec<(&Tree, BigRational)> = if trees.iter().all(|t| t.rate.is_zero()) {
                trees.into_iter().map(|t| (t, BigRational::one())).collect()
            } else {
                trees
                    .into_iter()
                    .filter(|t| !t.rate.is_zero())
                    .map(|t| (t, t.rate.clone()))
                    .collect()
            };
            let total = weighted.iter().map(|(_, w)| w.clone()).sum();
            (r, total, weighted)
        })
        .collect())
}

/// Places `f`'s trees in the layout, checking that every tree spans `ranks` with its edges in
/// breadth-first order and that the roots are the ones the collective needs (every rank, or
/// `root` alone).
pub(crate) fn place(
    f: &Forest,
    ranks: &[NodeId],
    root: Option<u32>,
    layout: &Layout,
) -> Result<Vec<Placed>, String> {
    let rank_of: BTreeMap<NodeId, u32> = ranks
        .iter()
        .enumerate()
        .map(|(r, n)| (*n, r as u32))
        .collect();
    let rank = |n: NodeId| {
        rank_of
            .get(&n)
            .copied()
            .ok_or_else(|| format!("node {n} in a tree is not a participant"))
    };
    let n = ranks.len();
    let mut out = Vec::new();
    let mut seen_roots = vec![false; n];
    for (node, total, trees) in by_root(f)? {
        let r = rank(node)?;
        if root.is_some_and(|x| x != r) {
            return Err(format!("a tree is rooted at rank {r}, not at the root"));
        }
        seen_roots[r as usize] = true;
        let mut start = 0u64;
        for (t, w) in trees {
            let w = w / &total * BigRational::from_integer(layout.units.into());
            let units = w
                .to_integer()
                .to_u32()
                .filter(|_| w.is_integer())
                .ok_or("a tree's share is not a whole number of units")?;
            let mut reached = vec![false; n];
            reached[r as usize] = true;
            let mut edges = Vec::with_capacity(t.edges.len());
            for e in &t.edges {
                let (p, c) = (rank(e.from)?, rank(e.to)?);
                if !reached[p as usize] || reached[c as usize] {
                    return Err(format!(
                        "tree edge {p} -> {c} (ranks) is not in breadth-first order from root {r}"
                    ));
                }
                reached[c as usize] = true;
                edges.push((p, c));
            }
            if let Some(miss) = reached.iter().position(|x| !x) {
                return Err(format!("a tree rooted at rank {r} misses rank {miss}"));
            }
            out.push(Placed {
                root: r,
                start: (start * u64::from(layout.chunks)) as u32,
                units,
                edges,
            });
            start += u64::from(units);
        }
        if start != layout.units {
            return Err(format!("the shares of rank {r}'s trees do not add up"));
        }
    }
    let want: Vec<u32> = match root {
        Some(x) => vec![x],
        None => (0..n as u32).collect(),
    };
    if let Some(r) = want.iter().find(|r| !seen_roots[**r as usize]) {
        return Err(format!("no tree carries rank {r}'s data"));
    }
    Ok(out)
}

/// Where a walk reads and writes: slot `local` of root `r`'s shard lives at `at(r) + local` of
/// the given buffer.
pub(crate) struct Place {
    pub buf: Buf,
    pub at: fn(u32, u64) -> u64,
}

fn slice(p: &Place, root: u32, shard: u64, local: u32, count: u32) -> Slice {
    Slice::new(
        p.buf,
        ((p.at)(root, shard) + u64::from(local)) as u32,
        count,
    )
}

/// Out-tree walks: the root sends from `src`, everyone else receives into and forwards from `dst`.
pub(crate) fn broadcast(
    b: &mut Builder,
    trees: &[Placed],
    layout: &Layout,
    src: &Place,
    dst: &Place,
    tag0: u32,
) {
    let shard = layout.shard();
    for (i, t) in trees.iter().enumerate() {
        let tag = tag0 + i as u32;
        for j in 0..layout.chunks {
            let local = t.start + j * t.units;
            let from_root = slice(src, t.root, shard, local, t.units);
            let there = slice(dst, t.root, shard, local, t.units);
            for &(p, c) in &t.edges {
                let s = if p == t.root { from_root } else { there };
                b.send(p as ProcId, c as ProcId, s, tag);
                b.recv(c as ProcId, p as ProcId, there, tag);
            }
        }
    }
}

/// In-tree walks: every node contributes `input`; the root accumulates into `root_dst`, inner
/// nodes into `scratch` (which mirrors `input`'s slot numbers).
pub(crate) fn reduce(
    b: &mut Builder,
    trees: &[Placed],
    layout: &Layout,
    input: &Place,
    root_dst: &Place,
    tag0: u32,
) {
    let shard = layout.shard();
    let n = b.ranks() as usize;
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut parent: Vec<u32> = vec![0; n];
    for (i, t) in trees.iter().enumerate() {
        let tag = tag0 + i as u32;
        for c in &mut children {
            c.clear();
        }
        for &(p, c) in &t.edges {
            children[p as usize].push(c);
            parent[c as usize] = p;
        }
        // Children before parents: the reverse of breadth-first order.
        let mut order: Vec<u32> = t.edges.iter().map(|e| e.1).rev().collect();
        order.push(t.root);
        for j in 0..layout.chunks {
            let local = t.start + j * t.units;
            for &v in &order {
                let inp = slice(input, t.root, shard, local, t.units);
                let kids = &children[v as usize];
                let val = if v == t.root {
                    slice(root_dst, t.root, shard, local, t.units)
                } else if kids.is_empty() {
                    inp
                } else {
                    Slice::new(Buf::Scratch, inp.start, inp.count)
                };
                if val != inp {
                    b.copy(v as ProcId, val, inp);
                }
                for &c in kids {
                    b.recv_reduce(v as ProcId, c as ProcId, val, tag);
                }
                if v != t.root {
                    b.send(v as ProcId, parent[v as usize] as ProcId, val, tag);
                }
            }
        }
    }
}
