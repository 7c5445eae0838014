//! What the flow engine ([`super::engine`]) runs a GOAL program on, made once per program and
//! shared by the sizes of a sweep ([`Prepared`]): every op's record, count of dependencies,
//! paired message and dependents, laid out in the order the ranks run them.
//!
//! **The layout.** Op i of every rank sits beside op i of the other ranks (column by column;
//! within a column the ranks with the most ops first, then by rank), not rank after rank as
//! GOAL numbers them. The ranks of a collective schedule move in step: a ring's or a recursive
//! halving's ranks all run their i-th op at about the same time. Numbered rank by rank, each
//! op the engine starts is a jump of a rank's length and a cache miss on every array it reads
//! (a 1,024-rank ring touches 64 MB of records per size); in this order the ops of one step
//! are neighbours. Only the engine's own indices change: it starts, pairs and releases the
//! same ops in the same order, so its results are the same bits.

use super::pair::{NONE, pair};
use crate::backend::goal::{Flat, GoalSchedule, OpKind};

/// What the event loop reads of an op when it starts, besides its bytes or time (which
/// depend on the size, [`Prepared::own`]): 12 bytes instead of a
/// [`crate::backend::goal::GoalOp`]'s 56 with its label.
#[derive(Clone, Copy)]
pub(super) struct Hot {
    /// A send's receiver, a receive's sender.
    pub peer: u32,
    /// The rank the op belongs to.
    pub rank: u32,
    /// [`SEND`], [`RECV`] or [`CALC`].
    pub kind: u8,
    pub cpu: u8,
}

pub(super) const SEND: u8 = 0;
pub(super) const RECV: u8 = 1;
pub(super) const CALC: u8 = 2;

/// A program's ops in the engine's layout (see the module doc), each by its place there.
pub struct Prepared {
    /// Each op's record.
    pub(super) hot: Vec<Hot>,
    /// Each send's bytes and calc's time in the program (a run at another size has its own).
    pub(super) own: Vec<u64>,
    /// Each op's GOAL number (`base[rank] + op`), to lay out per-op values by.
    pub(super) goal: Vec<u32>,
    /// Each op's count of dependencies.
    pub(super) remaining: Vec<u32>,
    /// Each send's receive and each receive's send ([`NONE`] when unpaired).
    pub(super) pair: Vec<u32>,
    /// Each send's (rank, receiver) pair, numbered densely in the order of the layout (0 for
    /// other ops), and how many there are: a run finds a send's route by its pair's number in
    /// a table of its own instead of hashing its two nodes per send.
    pub(super) peers: Vec<u32>,
    pub(super) peer_pairs: usize,
    /// The ops released when an op finishes and when it starts: `list[start[p]..start[p + 1]]`.
    done_start: Vec<u32>,
    done_list: Vec<u32>,
    start_start: Vec<u32>,
    start_list: Vec<u32>,
    /// The ops executable before anything ran, in GOAL's order.
    pub(super) initial: Vec<u32>,
}

impl Prepared {
    /// `by_goal` (one value per op, by GOAL number) in this layout's order.
    pub fn laid(&self, by_goal: &[u32]) -> Vec<u32> {
        self.goal.iter().map(|&g| by_goal[g as usize]).collect()
    }

    pub fn new(s: &GoalSchedule) -> Prepared {
        let (flat, remaining_g) = Flat::new(s);
        let pair_g = pair(s, &flat.base);
        let total = remaining_g.len();
        let lens: Vec<usize> = s.ranks.iter().map(|r| r.ops.len()).collect();
        let mut by_len: Vec<usize> = (0..lens.len()).collect();
        by_len.sort_by_key(|&r| std::cmp::Reverse(lens[r]));
        let (mut goal, mut hot, mut own) = (
            Vec::with_capacity(total),
            Vec::with_capacity(total),
            Vec::with_capacity(total),
        );
        let mut at = vec![0u32; total];
        for i in 0..lens.iter().copied().max().unwrap_or(0) {
            for &r in by_len.iter().take_while(|&&r| lens[r] > i) {
                let g = flat.base[r] + i;
                at[g] = goal.len() as u32;
                goal.push(g as u32);
                let op = &s.ranks[r].ops[i];
                let (kind, amount, peer) = match op.kind {
                    OpKind::Send { size, to, .. } => (SEND, size, to),
                    OpKind::Recv { from, .. } => (RECV, 0, from),
                    OpKind::Calc { time } => (CALC, time, 0),
                };
                hot.push(Hot {
                    peer,
                    rank: r as u32,
                    kind,
                    cpu: op.cpu,
                });
                own.push(amount);
            }
        }
        let lists = |on_done: bool| {
            let mut start = Vec::with_capacity(total + 1);
            let mut list = Vec::new();
            for (&g, h) in goal.iter().zip(&hot) {
                start.push(list.len() as u32);
                let base = flat.base[h.rank as usize];
                let i = g - base as u32;
                let after = if on_done {
                    flat.after_done(h.rank, i)
                } else {
                    flat.after_start(h.rank, i)
                };
                list.extend(after.iter().map(|&d| at[base + d as usize]));
            }
            start.push(list.len() as u32);
            (start, list)
        };
        let (done_start, done_list) = lists(true);
        let (start_start, start_list) = lists(false);
        let remaining = goal.iter().map(|&g| remaining_g[g as usize]).collect();
        let pair = goal
            .iter()
            .map(|&g| match pair_g[g as usize] {
                NONE => NONE,
                q => at[q as usize],
            })
            .collect();
        let mut numbers: rustc_hash::FxHashMap<(u32, u32), u32> = Default::default();
        let peers = hot
            .iter()
            .map(|h| match h.kind {
                SEND => {
                    let next = numbers.len() as u32;
                    *numbers.entry((h.rank, h.peer)).or_insert(next)
                }
                _ => 0,
            })
            .collect();
        let initial = (0..total)
            .filter(|&g| remaining_g[g] == 0)
            .map(|g| at[g])
            .collect();
        Prepared {
            hot,
            own,
            goal,
            remaining,
            pair,
            peers,
            peer_pairs: numbers.len(),
            done_start,
            done_list,
            start_start,
            start_list,
            initial,
        }
    }

    /// The ops released when op `p` finishes.
    pub(super) fn after_done(&self, p: u32) -> &[u32] {
        let p = p as usize;
        &self.done_list[self.done_start[p] as usize..self.done_start[p + 1] as usize]
    }

    /// The ops released when op `p` starts.
    pub(super) fn after_start(&self, p: u32) -> &[u32] {
        let p = p as usize;
        &self.start_list[self.start_start[p] as usize..self.start_start[p + 1] as usize]
    }
}
