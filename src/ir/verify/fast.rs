//! The verifier's fast paths for message matching and the execution order (steps 2 and 4), for
//! programs of millions of ops. Each computes the same answer as the exact code in `mod.rs`
//! when the program is right and gives up (`None`) otherwise, so that the exact code, which
//! words the findings, runs only for programs that have some.
//!
//! - Matching: instead of one global sort of every send and receive by channel, each
//!   receiver's incoming sends (bucketed by receiver, one bucket table per run of senders, the
//!   runs on all cores) and its own receives are sorted, both small, and paired k-th with k-th
//!   per (sender, tag): the same pairs as the global sort, since both keep program order within
//!   a channel.
//! - Order: [`crate::ir::sweep`] instead of one FIFO queue. Execution visits ops in this order;
//!   any topological order gives the same values (steps 2 and 3), but findings are reported in
//!   execution order, so when execution finds something it is run again in the exact order.
//! - Run ([`run`]): when every dependency names an earlier op (what the lowerings' builder
//!   emits), execution runs each process in program order, switching process only at a
//!   receive whose send has not run ([`crate::ir::sweep::program_order`]); finishing proves
//!   there is no deadlock, with no order or successor tables. If it stalls, the order above
//!   decides.

use super::exec::Exec;
use super::{Index, Matching, NONE, same_chunks};
use crate::ir::{Buf, OpKind, Program, Slice};

/// The matching of `match_messages`, if every channel pairs up and every receive has the
/// chunks of its send.
pub(super) fn matching(p: &Program, ix: &Index) -> Option<Matching> {
    let n = p.procs.len();
    // Sends bucketed by receiver: (sender, tag, global op of the send, slice), one bucket
    // table per run of senders, the runs on all cores. A receiver's incoming sends are its
    // buckets of every run in turn, so they come in sender order as one table would give them.
    let empty = Slice::one(Buf::Input, 0);
    let runs = crate::par::map_blocks(n, n.div_ceil(crate::par::threads()), |senders| {
        let mut at = vec![0u32; n + 1];
        for proc in &p.procs[senders.clone()] {
            for op in &proc.ops {
                if let OpKind::Send { peer, .. } = op.kind {
                    at[peer as usize + 1] += 1;
                }
            }
        }
        for i in 0..n {
            at[i + 1] += at[i];
        }
        let mut fill = at.clone();
        let mut incoming = vec![(0u32, 0u32, 0u32, empty); at[n] as usize];
        for pi in senders {
            for (oi, op) in p.procs[pi].ops.iter().enumerate() {
                if let OpKind::Send { peer, tag, src } = op.kind {
                    let f = &mut fill[peer as usize];
                    incoming[*f as usize] = (pi as u32, tag, ix.base[pi] + oi as u32, src);
                    *f += 1;
                }
            }
        }
        (at, incoming)
    });
    // Receivers in blocks on all cores, each block giving `send_of` for its own ops.
    let runs = &runs;
    let blocks = crate::par::map_blocks(n, crate::par::block_size(n, 64), |range| {
        let lo = ix.base[range.start];
        let mut send_of = vec![NONE; (ix.base[range.end] - lo) as usize];
        let mut recvs: Vec<(u32, u32, u32, Slice)> = Vec::new();
        let mut sends: Vec<(u32, u32, u32, Slice)> = Vec::new();
        for q in range {
            recvs.clear();
            for (oi, op) in p.procs[q].ops.iter().enumerate() {
                if let OpKind::Recv { peer, tag, dst } | OpKind::RecvReduce { peer, tag, dst } =
                    op.kind
                {
                    recvs.push((peer, tag, ix.base[q] + oi as u32, dst));
                }
            }
            sends.clear();
            for (at, incoming) in runs {
                sends.extend_from_slice(&incoming[at[q] as usize..at[q + 1] as usize]);
            }
            if sends.len() != recvs.len() {
                return None;
            }
            // Global op ids grow with program order, so equal channels stay in program order.
            recvs.sort_unstable_by_key(|x| (x.0, x.1, x.2));
            sends.sort_unstable_by_key(|x| (x.0, x.1, x.2));
            for (s, r) in sends.iter().zip(&recvs) {
                if (s.0, s.1) != (r.0, r.1) || !same_chunks(p, s.3, r.3) {
                    return None;
                }
                send_of[(r.2 - lo) as usize] = s.2;
            }
        }
        Some(send_of)
    });
    let mut send_of = Vec::with_capacity(ix.total());
    for b in blocks {
        send_of.extend(b?);
    }
    Some(Matching { send_of })
}

/// A topological order of all ops (local dependencies, and each send before its receive) by
/// [`crate::ir::sweep`], or `None` when some ops can never run.
pub(super) fn order(p: &Program, ix: &Index, m: &Matching) -> Option<Vec<u32>> {
    let total = ix.total();
    let mut remaining = vec![0u32; total];
    // Local successors over global op ids (CSR; each count becomes its list's end, and filling
    // moves it back to the list's start).
    let mut start = vec![0u32; total + 1];
    let mut recv_of = vec![NONE; total];
    for (pi, proc) in p.procs.iter().enumerate() {
        let b = ix.base[pi];
        for (oi, op) in proc.ops.iter().enumerate() {
            let me = b + oi as u32;
            remaining[me as usize] = op.deps.len() as u32;
            for d in &op.deps {
                start[(b + d) as usize] += 1;
            }
            let s = m.send_of[me as usize];
            if s != NONE {
                remaining[me as usize] += 1;
                recv_of[s as usize] = me;
            }
        }
    }
    for g in 1..=total {
        start[g] += start[g - 1];
    }
    let mut succ = vec![0u32; start[total] as usize];
    for (pi, proc) in p.procs.iter().enumerate() {
        let b = ix.base[pi];
        for (oi, op) in proc.ops.iter().enumerate() {
            for d in &op.deps {
                let at = &mut start[(b + d) as usize];
                *at -= 1;
                succ[*at as usize] = b + oi as u32;
            }
        }
    }
    let mut order = Vec::with_capacity(total);
    let ran = crate::ir::sweep::sweep(&mut remaining, |g, f| {
        order.push(g);
        let g = g as usize;
        for &x in &succ[start[g] as usize..start[g + 1] as usize] {
            f.local(x);
        }
        if recv_of[g] != NONE {
            f.remote(recv_of[g]);
        }
    });
    (ran == total).then_some(order)
}

/// The symbolic execution in program order ([`crate::ir::sweep::program_order`]) for programs
/// whose dependencies all name earlier ops; `None` when program order deadlocks (the program
/// may still have another order, or a real deadlock: the exact code decides).
pub(super) fn run<'a>(p: &'a Program, ix: &'a Index, m: &'a Matching) -> Option<Exec<'a>> {
    let mut e = Exec::new(p, ix, m);
    let ran = crate::ir::sweep::program_order(
        &ix.base,
        |pi, g| {
            let w = m.send_of[g as usize];
            match p.procs[pi as usize].ops[(g - ix.base[pi as usize]) as usize]
                .kind
                .peer()
            {
                Some(q) if w != NONE => (w, q),
                _ => (NONE, 0),
            }
        },
        |pi, g| e.step_at(pi, g - ix.base[pi as usize], g),
    );
    (ran == ix.total()).then_some(e)
}

#[cfg(test)]
mod tests {
    use super::super::{Index, match_messages};
    use crate::ir::{Buf, OpKind, Program, Slice, Spec};
    use crate::sema::model::{CollectiveKind, Dtype, ReduceOp};

    /// Programs where every process sends a few messages to random peers on random tags and
    /// receives its messages channel by channel in a shuffled order: the fast matching pairs
    /// exactly as the global sort does, however the senders are split into runs.
    #[test]
    fn fast_matching_pairs_as_the_global_sort() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for n in [2u32, 3, 5, 17, 64] {
            let spec = Spec {
                kind: CollectiveKind::Allreduce,
                ranks: n,
                part_elements: 1,
                chunks_per_part: 1,
                dtype: Dtype::F32,
                op: ReduceOp::Sum,
                root: None,
            };
            let mut p = Program::new("random messages", spec);
            let slot = Slice::one(Buf::Input, 0);
            let mut channels = Vec::new();
            for from in 0..n {
                for _ in 0..rnd(6) {
                    let to = (from + 1 + rnd(u64::from(n - 1)) as u32) % n;
                    let tag = rnd(3) as u32;
                    p.push(
                        from,
                        OpKind::Send {
                            peer: to,
                            src: slot,
                            tag,
                        },
                        Vec::new(),
                    );
                    channels.push((to, from, tag));
                }
            }
            // Receives: each receiver takes its messages in a random order of channels, keeping
            // the order within a channel.
            for to in 0..n {
                // Channel by channel: `channels` is in each sender's program order.
                let mine: Vec<(u32, u32)> = channels
                    .iter()
                    .filter(|c| c.0 == to)
                    .map(|c| (c.1, c.2))
                    .collect();
                let mut keys = mine.clone();
                keys.sort_unstable();
                keys.dedup();
                for i in (1..keys.len()).rev() {
                    keys.swap(i, rnd(i as u64 + 1) as usize);
                }
                let order: Vec<(u32, u32)> = keys
                    .iter()
                    .flat_map(|k| mine.iter().filter(move |c| *c == k).copied())
                    .collect();
                for (from, tag) in order {
                    let kind = OpKind::Recv {
                        peer: from,
                        dst: slot,
                        tag,
                    };
                    p.push(to, kind, Vec::new());
                }
            }
            let ix = Index::new(&p);
            let fast = super::matching(&p, &ix).expect("every message pairs up");
            let exact = match_messages(&p, &ix).unwrap_or_else(|f| panic!("{f:?}"));
            assert_eq!(fast.send_of, exact.send_of, "{n} processes");
        }
    }
}
