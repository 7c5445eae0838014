//! The global order the lowering follows and the channel of every message (steps 1 and 4 of
//! [`super`]), found together in one pass.
//!
//! The executor pairs sends and receives FIFO per connection (sender, receiver, channel); the
//! IR pairs them FIFO per (sender, receiver, tag). The two agree when both ends of every
//! connection list its messages in one order. The pass is Kahn's algorithm with one FIFO
//! queue (local dependencies and each send before its matched receive, as
//! [`crate::ir::sweep::fifo_order`]), with one more rule: a receive is ready only when its
//! message is the oldest one still in flight on its connection. The receives of a connection
//! then come in the order of its sends, whatever families, tags or trees share it.
//!
//! A message's channel is chosen when its send is placed, among the `C` channels asked for:
//!
//! - a send of exactly what a receive of the same rank wrote (a chunk forwarded along a ring,
//!   a tree or a recursive stage) keeps that receive's channel, so the two can fuse into one
//!   `rcs`/`rrs`/`rrcs` step;
//! - any other send (a message that starts a chunk's journey) takes the channel its sender and
//!   receiver have used least so far (ties: round robin over such messages, in the order they
//!   are placed), so a rank's peers and a part's chunks spread evenly over the channels.
//!
//! A channel on which the rank already has 32 thread blocks that send (or the receiver 32 that
//! receive) to other peers is skipped (the executor's `MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL`),
//! and when all `C` are full the message opens channel `C`, `C + 1`, ... up to 32: a schedule
//! with more peers than a channel holds is split over channels automatically. Should every
//! ready receive wait behind an older message of its connection (receives whose dependencies
//! order them differently from their sends, as the in-trees of several ForestColl trees can),
//! the oldest such message moves to the front of a channel whose messages in flight on that
//! connection were all sent after it (preferring the `C` channels; one with nothing in flight
//! always qualifies), which keeps both ends in one order and cannot deadlock.
//!
//! A send is placed only once its receive's own dependencies are done (while anything else can
//! run), so messages enter a connection in about the order the receiver takes them: a leaf
//! that sends to the same parent in several trees does not fill the connection with messages
//! the parent needs last.
//!
//! Linear in the number of ops and dependencies, times `C` per send (and a logarithm for the
//! held-back sends and receives).

use crate::backend::msccl::limits;
use crate::ir::{Buf, OpKind, Program};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{BTreeSet, VecDeque};

const NONE: u32 = u32::MAX;

pub(super) struct Order {
    /// (rank, op) in topological order.
    pub seq: Vec<(u32, u32)>,
    /// Op `o` of process `p` is global op `base[p] + o`.
    pub base: Vec<u32>,
    /// Position of every global op in `seq`.
    pub pos: Vec<u32>,
    /// Channel of every global send and receive (`u32::MAX` for local ops), dense from 0.
    pub chan: Vec<u32>,
    /// Channels used (`chan` is below it).
    pub width: u32,
}

/// Which ops of each process last wrote each slot, to find forwards.
struct Writers {
    of: [Vec<u32>; 3],
}

fn buf_index(b: Buf) -> usize {
    match b {
        Buf::Input => 0,
        Buf::Output => 1,
        Buf::Scratch => 2,
    }
}

/// Loads of one rank: messages and peers per channel, in each direction.
#[derive(Default)]
struct Load {
    msgs: [Vec<u32>; 2],
    peers: FxHashSet<(bool, u32, u32)>,
    npeers: [Vec<u32>; 2],
}

impl Load {
    fn grow(&mut self, c: usize) {
        for d in 0..2 {
            if self.msgs[d].len() <= c {
                self.msgs[d].resize(c + 1, 0);
                self.npeers[d].resize(c + 1, 0);
            }
        }
    }

    /// Whether one more message to/from `peer` on `c` keeps the executor's blocks per channel.
    fn room(&self, send: bool, peer: u32, c: u32) -> bool {
        let d = usize::from(!send);
        self.peers.contains(&(send, peer, c))
            || self.npeers[d].get(c as usize).copied().unwrap_or(0) < limits::MAX_TBS_PER_CHANNEL
    }

    fn msgs(&self, send: bool, c: u32) -> u32 {
        self.msgs[usize::from(!send)]
            .get(c as usize)
            .copied()
            .unwrap_or(0)
    }

    fn add(&mut self, send: bool, peer: u32, c: u32) {
        self.grow(c as usize);
        let d = usize::from(!send);
        self.msgs[d][c as usize] += 1;
        if self.peers.insert((send, peer, c)) {
            self.npeers[d][c as usize] += 1;
        }
    }
}

/// Why no order was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stuck {
    /// The dependencies have a cycle (a verified program has none).
    Cycle,
    /// Keeping the connection from the first rank to the second in one order needs more
    /// channels than the executor has.
    Channels(u32, u32),
}

/// The order and channels of `p` with `channels` channels asked for (see the module doc).
pub(super) fn global_order(p: &Program, channels: u32) -> Result<Order, Stuck> {
    let channels = channels.clamp(1, limits::MAX_CHANNELS);
    let base = p.op_base();
    let total = base[p.procs.len()] as usize;
    let mut proc_of = Vec::with_capacity(total);
    for (pi, proc) in p.procs.iter().enumerate() {
        proc_of.extend(std::iter::repeat_n(pi as u32, proc.ops.len()));
    }
    let op = |g: u32| {
        let pi = proc_of[g as usize];
        &p.procs[pi as usize].ops[(g - base[pi as usize]) as usize]
    };
    // Pair the k-th send and receive of each (sender, receiver, tag), as `ir::verify` does.
    let mut sends: Vec<(u32, u32, u32, u32)> = Vec::new();
    let mut recvs: Vec<(u32, u32, u32, u32)> = Vec::new();
    for (pi, proc) in p.procs.iter().enumerate() {
        for (oi, o) in proc.ops.iter().enumerate() {
            let g = base[pi] + oi as u32;
            match o.kind {
                OpKind::Send { peer, tag, .. } => sends.push((pi as u32, peer, tag, g)),
                OpKind::Recv { peer, tag, .. } | OpKind::RecvReduce { peer, tag, .. } => {
                    recvs.push((peer, pi as u32, tag, g))
                }
                _ => {}
            }
        }
    }
    sends.sort_unstable();
    recvs.sort_unstable();
    let mut recv_of = vec![NONE; total];
    let mut send_of = vec![NONE; total];
    for (s, r) in sends.iter().zip(&recvs) {
        if (s.0, s.1, s.2) == (r.0, r.1, r.2) {
            recv_of[s.3 as usize] = r.3;
            send_of[r.3 as usize] = s.3;
        }
    }
    // Local successors (CSR) and in-degrees.
    let mut local = vec![0u32; total];
    let mut start = vec![0u32; total + 1];
    for (pi, proc) in p.procs.iter().enumerate() {
        for (oi, o) in proc.ops.iter().enumerate() {
            let me = base[pi] as usize + oi;
            local[me] = o.deps.len() as u32;
            for d in &o.deps {
                start[(base[pi] + d) as usize + 1] += 1;
            }
        }
    }
    for k in 0..total {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    let mut succ = vec![0u32; start[total] as usize];
    for (pi, proc) in p.procs.iter().enumerate() {
        for (oi, o) in proc.ops.iter().enumerate() {
            for d in &o.deps {
                let from = (base[pi] + d) as usize;
                succ[fill[from] as usize] = base[pi] + oi as u32;
                fill[from] += 1;
            }
        }
    }
    // Slot writers per process, sized by the slots its ops touch.
    let mut writers: Vec<Writers> = p
        .procs
        .iter()
        .map(|proc| {
            let mut len = [0usize; 3];
            for o in &proc.ops {
                let sl = match o.kind {
                    OpKind::Send { src, .. } => [Some(src), None],
                    OpKind::Recv { dst, .. } | OpKind::RecvReduce { dst, .. } => [Some(dst), None],
                    OpKind::Reduce { dst, src } | OpKind::Copy { dst, src } => {
                        [Some(dst), Some(src)]
                    }
                };
                for s in sl.into_iter().flatten() {
                    let b = buf_index(s.buf);
                    len[b] = len[b].max((s.start + s.count) as usize);
                }
            }
            Writers {
                of: len.map(|l| vec![NONE; l]),
            }
        })
        .collect();
    let mut load: Vec<Load> = (0..p.procs.len()).map(|_| Load::default()).collect();
    let mut queues: FxHashMap<(u32, u32, u32), VecDeque<u32>> = FxHashMap::default();
    let mut chan = vec![NONE; total];
    // A receive's message is at the head of its connection.
    let mut head = vec![false; total];
    let mut sent = vec![false; total];
    // Sends whose own dependencies are done but whose receive's are not (by op), and receives
    // ready but for an older message ahead of theirs (by their send's position).
    let mut early: BTreeSet<u32> = BTreeSet::new();
    let mut blocked: BTreeSet<(u32, u32)> = BTreeSet::new();
    let mut ready: VecDeque<u32> = VecDeque::new();
    let mut seq = Vec::with_capacity(total);
    let mut pos = vec![NONE; total];
    let mut origins = 0u32;
    // Op `g`'s own dependencies are done: is it ready?
    let settle = |g: u32,
                  local: &[u32],
                  head: &[bool],
                  sent: &[bool],
                  pos: &[u32],
                  early: &mut BTreeSet<u32>,
                  blocked: &mut BTreeSet<(u32, u32)>,
                  ready: &mut VecDeque<u32>| {
        let (r, s) = (recv_of[g as usize], send_of[g as usize]);
        if r != NONE {
            // A send waits until its receive could take it, so that messages enter their
            // connection in about the order the receiver wants them.
            if local[r as usize] == 0 {
                ready.push_back(g);
            } else {
                early.insert(g);
            }
        } else if s != NONE {
            if head[g as usize] {
                ready.push_back(g);
            } else if sent[g as usize] {
                blocked.insert((pos[s as usize], g));
            }
            if early.remove(&s) {
                ready.push_back(s);
            }
        } else {
            ready.push_back(g);
        }
    };
    for g in 0..total as u32 {
        if local[g as usize] == 0 {
            settle(
                g,
                &local,
                &head,
                &sent,
                &pos,
                &mut early,
                &mut blocked,
                &mut ready,
            );
        }
    }
    loop {
        while let Some(g) = ready.pop_front() {
            let pi = proc_of[g as usize];
            pos[g as usize] = seq.len() as u32;
            seq.push((pi, g - base[pi as usize]));
            let o = op(g);
            match o.kind {
                OpKind::Send { peer, src, .. } => {
                    let r = recv_of[g as usize];
                    // A forward keeps the channel of the receive that wrote its data.
                    let w = &writers[pi as usize].of[buf_index(src.buf)];
                    let range = src.start as usize..(src.start + src.count) as usize;
                    let first = w.get(src.start as usize).copied().unwrap_or(NONE);
                    let from = (first != NONE
                        && w[range].iter().all(|x| *x == first)
                        && matches!(op(first).kind,
                            OpKind::Recv { dst, .. } | OpKind::RecvReduce { dst, .. } if dst == src))
                    .then(|| chan[first as usize]);
                    let c = pick(&load, pi, peer, channels, from, &mut origins);
                    load[pi as usize].add(true, peer, c);
                    load[peer as usize].add(false, pi, c);
                    chan[g as usize] = c;
                    if r != NONE {
                        chan[r as usize] = c;
                        sent[r as usize] = true;
                        let q = queues.entry((pi, peer, c)).or_default();
                        q.push_back(r);
                        if q.len() == 1 {
                            head[r as usize] = true;
                        }
                        if local[r as usize] == 0 {
                            if head[r as usize] {
                                ready.push_back(r);
                            } else {
                                blocked.insert((pos[g as usize], r));
                            }
                        }
                    }
                }
                OpKind::Recv { peer, .. } | OpKind::RecvReduce { peer, .. } => {
                    let c = chan[g as usize];
                    if let Some(q) = queues.get_mut(&(peer, pi, c)) {
                        q.pop_front();
                        if let Some(&next) = q.front() {
                            head[next as usize] = true;
                            if local[next as usize] == 0 {
                                blocked.remove(&(pos[send_of[next as usize] as usize], next));
                                ready.push_back(next);
                            }
                        }
                    }
                }
                _ => {}
            }
            // Writes, for forwards.
            let dst = match o.kind {
                OpKind::Recv { dst, .. }
                | OpKind::RecvReduce { dst, .. }
                | OpKind::Reduce { dst, .. }
                | OpKind::Copy { dst, .. } => Some(dst),
                OpKind::Send { .. } => None,
            };
            if let Some(d) = dst {
                let w = &mut writers[pi as usize].of[buf_index(d.buf)];
                w[d.start as usize..(d.start + d.count) as usize].fill(g);
            }
            for &x in &succ[start[g as usize] as usize..start[g as usize + 1] as usize] {
                local[x as usize] -= 1;
                if local[x as usize] == 0 {
                    settle(
                        x,
                        &local,
                        &head,
                        &sent,
                        &pos,
                        &mut early,
                        &mut blocked,
                        &mut ready,
                    );
                }
            }
        }
        if seq.len() == total {
            break;
        }
        // Nothing is ready. Sends held back for their receiver go now, in op order.
        if !early.is_empty() {
            ready.extend(std::mem::take(&mut early));
            continue;
        }
        // Every receive that could run waits behind an older message of its connection: the
        // oldest such message goes first on a channel whose messages in flight on this
        // connection were all sent after it (or none), so both ends keep one order.
        let (sp, r) = blocked.pop_first().ok_or(Stuck::Cycle)?;
        let s = send_of[r as usize];
        let (from, to, old) = (proc_of[s as usize], proc_of[r as usize], chan[r as usize]);
        if let Some(q) = queues.get_mut(&(from, to, old)) {
            q.retain(|x| *x != r);
        }
        let later = |c: u32| {
            queues
                .get(&(from, to, c))
                .and_then(|q| q.front())
                .is_none_or(|f| pos[send_of[*f as usize] as usize] > sp)
        };
        let c = pick_idle(&load, from, to, channels, &later).ok_or(Stuck::Channels(from, to))?;
        load[from as usize].add(true, to, c);
        load[to as usize].add(false, from, c);
        chan[s as usize] = c;
        chan[r as usize] = c;
        let q = queues.entry((from, to, c)).or_default();
        if let Some(&h) = q.front() {
            // The old head waits for its turn again.
            head[h as usize] = false;
            if local[h as usize] == 0 {
                blocked.insert((pos[send_of[h as usize] as usize], h));
            }
        }
        q.push_front(r);
        head[r as usize] = true;
        ready.push_back(r);
    }
    // Dense channel numbers, in numeric order.
    let mut used: Vec<u32> = chan.iter().copied().filter(|c| *c != NONE).collect();
    used.sort_unstable();
    used.dedup();
    let mut dense = vec![NONE; limits::MAX_CHANNELS as usize + 1];
    for (i, c) in used.iter().enumerate() {
        dense[*c as usize] = i as u32;
    }
    for c in chan.iter_mut().filter(|c| **c != NONE) {
        *c = dense[*c as usize];
    }
    Ok(Order {
        seq,
        base,
        pos,
        chan,
        width: (used.len() as u32).max(1),
    })
}

/// The channel of a message from `s` to `r` (see the module doc): `from` (a forward's) when it
/// has room, else the least loaded of the `channels` asked for with room, else the first of the
/// executor's other channels with room, else the least loaded.
fn pick(load: &[Load], s: u32, r: u32, channels: u32, from: Option<u32>, origins: &mut u32) -> u32 {
    let room = |c: u32| load[s as usize].room(true, r, c) && load[r as usize].room(false, s, c);
    if let Some(c) = from.filter(|c| room(*c)) {
        return c;
    }
    let first = *origins % channels;
    *origins += 1;
    let cost = |c: u32| load[s as usize].msgs(true, c) + load[r as usize].msgs(false, c);
    let best = (0..channels)
        .map(|i| (first + i) % channels)
        .filter(|c| room(*c))
        .min_by_key(|c| cost(*c));
    if let Some(c) = best {
        return c;
    }
    (channels..limits::MAX_CHANNELS)
        .find(|c| room(*c))
        .unwrap_or_else(|| (0..channels).min_by_key(|c| cost(*c)).unwrap_or(0))
}

/// A channel for a message moved off its busy connection: idle for that connection, with room;
/// one of the `channels` asked for before the others, then the least loaded; None when the
/// executor's channels are exhausted.
fn pick_idle(
    load: &[Load],
    s: u32,
    r: u32,
    channels: u32,
    idle: &dyn Fn(u32) -> bool,
) -> Option<u32> {
    (0..limits::MAX_CHANNELS)
        .filter(|c| {
            idle(*c) && load[s as usize].room(true, r, *c) && load[r as usize].room(false, s, *c)
        })
        .min_by_key(|c| {
            (
                *c >= channels,
                load[s as usize].msgs(true, *c) + load[r as usize].msgs(false, *c),
                *c,
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Deps, Op, Slice, Spec};
    use crate::sema::model::{CollectiveKind, Dtype, ReduceOp};

    fn program(ranks: u32) -> Program {
        let spec = Spec {
            kind: CollectiveKind::Allreduce,
            ranks,
            part_elements: 4,
            chunks_per_part: 4,
            dtype: Dtype::F32,
            op: ReduceOp::Sum,
            root: None,
        };
        Program::new("t", spec)
    }

    fn push(p: &mut Program, r: u32, kind: OpKind, deps: &[u32]) {
        p.procs[r as usize].ops.push(Op {
            kind,
            deps: deps.iter().copied().collect::<Deps>(),
        });
    }

    fn s(buf: Buf, i: u32) -> Slice {
        Slice::new(buf, i, 1)
    }

    /// Per connection (sender, receiver, channel), the receives come in the order of the sends.
    fn connections_keep_order(p: &Program, o: &Order) {
        let mut sends: Vec<(u32, u32, u32, u32)> = Vec::new();
        let mut recvs: Vec<(u32, u32, u32, u32)> = Vec::new();
        for (pi, proc) in p.procs.iter().enumerate() {
            for (oi, op) in proc.ops.iter().enumerate() {
                let g = o.base[pi] + oi as u32;
                match op.kind {
                    OpKind::Send { peer, tag, .. } => sends.push((pi as u32, peer, tag, g)),
                    OpKind::Recv { peer, tag, .. } | OpKind::RecvReduce { peer, tag, .. } => {
                        recvs.push((peer, pi as u32, tag, g))
                    }
                    _ => {}
                }
            }
        }
        sends.sort_unstable();
        recvs.sort_unstable();
        let mut by_conn: FxHashMap<(u32, u32, u32), Vec<(u32, u32)>> = FxHashMap::default();
        for (a, b) in sends.iter().zip(&recvs) {
            assert_eq!(
                o.chan[a.3 as usize], o.chan[b.3 as usize],
                "both ends agree"
            );
            by_conn
                .entry((a.0, a.1, o.chan[a.3 as usize]))
                .or_default()
                .push((o.pos[a.3 as usize], o.pos[b.3 as usize]));
        }
        for (conn, mut v) in by_conn {
            v.sort_unstable();
            assert!(
                v.windows(2).all(|w| w[0].1 < w[1].1),
                "connection {conn:?} receives out of send order: {v:?}"
            );
        }
    }

    /// Rank 2 sums two in-trees whose children come in opposite orders (tree 0: rank 0 then
    /// rank 1; tree 1: rank 1 then rank 0). Both children send tree 0 first; rank 1's tree 0
    /// message is held back until rank 2 can take it, so one channel serves both trees.
    #[test]
    fn receives_that_wait_on_other_children_keep_one_order() {
        let mut p = program(3);
        for r in 0..2 {
            push(
                &mut p,
                r,
                OpKind::Send {
                    peer: 2,
                    src: s(Buf::Input, 0),
                    tag: 0,
                },
                &[],
            );
            push(
                &mut p,
                r,
                OpKind::Send {
                    peer: 2,
                    src: s(Buf::Input, 1),
                    tag: 1,
                },
                &[],
            );
        }
        let rr = |peer, i, tag| OpKind::RecvReduce {
            peer,
            dst: s(Buf::Scratch, i),
            tag,
        };
        let copy = |i| OpKind::Copy {
            dst: s(Buf::Scratch, i),
            src: s(Buf::Input, i),
        };
        push(&mut p, 2, copy(0), &[]);
        push(&mut p, 2, rr(0, 0, 0), &[0]);
        push(&mut p, 2, rr(1, 0, 0), &[1]);
        push(&mut p, 2, copy(1), &[]);
        push(&mut p, 2, rr(1, 1, 1), &[3]);
        push(&mut p, 2, rr(0, 1, 1), &[4]);
        let o = global_order(&p, 1).expect("an order");
        assert_eq!(o.width, 1);
        connections_keep_order(&p, &o);
    }

    /// A chain 0 -> 1 -> 2 with two chunks on two channels: the chunks start on different
    /// channels and each forward keeps the channel its chunk arrived on.
    #[test]
    fn forwards_keep_their_channel_and_chunks_spread() {
        let mut p = program(3);
        for i in 0..2 {
            push(
                &mut p,
                0,
                OpKind::Send {
                    peer: 1,
                    src: s(Buf::Input, i),
                    tag: 0,
                },
                &[],
            );
        }
        for i in 0..2u32 {
            push(
                &mut p,
                1,
                OpKind::Recv {
                    peer: 0,
                    dst: s(Buf::Output, i),
                    tag: 0,
                },
                &[],
            );
            push(
                &mut p,
                1,
                OpKind::Send {
                    peer: 2,
                    src: s(Buf::Output, i),
                    tag: 0,
                },
                &[2 * i],
            );
            push(
                &mut p,
                2,
                OpKind::Recv {
                    peer: 1,
                    dst: s(Buf::Output, i),
                    tag: 0,
                },
                &[],
            );
        }
        let o = global_order(&p, 2).expect("an order");
        assert_eq!(o.width, 2);
        let b1 = o.base[1] as usize;
        assert_ne!(o.chan[b1], o.chan[b1 + 2], "the two chunks spread");
        assert_eq!(
            o.chan[b1],
            o.chan[b1 + 1],
            "chunk 0 forwarded on its channel"
        );
        assert_eq!(
            o.chan[b1 + 2],
            o.chan[b1 + 3],
            "chunk 1 forwarded on its channel"
        );
        connections_keep_order(&p, &o);
    }

    /// Rank 0 hears from 40 peers: one channel holds 32 receiving thread blocks, so the peers
    /// are split over two even when one channel is asked for.
    #[test]
    fn more_peers_than_a_channel_holds_open_channels() {
        let mut p = program(41);
        for r in 1..41 {
            push(
                &mut p,
                r,
                OpKind::Send {
                    peer: 0,
                    src: s(Buf::Input, 0),
                    tag: 0,
                },
                &[],
            );
            push(
                &mut p,
                0,
                OpKind::Recv {
                    peer: r,
                    dst: s(Buf::Scratch, r),
                    tag: 0,
                },
                &[],
            );
        }
        let o = global_order(&p, 1).expect("an order");
        assert_eq!(o.width, 2);
        let mut per: FxHashMap<u32, u32> = FxHashMap::default();
        for g in o.base[0]..o.base[1] {
            *per.entry(o.chan[g as usize]).or_default() += 1;
        }
        assert!(
            per.values().all(|n| *n <= limits::MAX_TBS_PER_CHANNEL),
            "{per:?}"
        );
        connections_keep_order(&p, &o);
    }
}
