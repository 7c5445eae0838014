//! A fast acceptance test for the execution check of [`super::validate`], for schedules whose
//! message matching cannot depend on timing.
//!
//! The exact check runs the schedule op by op in one work-queue order with LogGOPSim's matching
//! ([`super::matching`]). In general that order matters: a wildcard receive, or two messages
//! under the same (source, tag) at a rank, may match differently in another order. This module
//! handles the common case where neither can happen: no wildcards, and at every rank each
//! (source, tag) names at most one send and one receive. Then every receive has exactly one
//! possible message, whichever order ops run in, and whether every op runs and both queues end
//! empty is a property of the graph alone: each receive must pair with exactly one send, and the
//! graph of dependencies plus send-before-matched-receive edges must be acyclic. It is checked
//! with `irequires` treated as `requires` (a stronger constraint: if everything runs under it,
//! everything runs under LogGOPSim's rule too), by [`crate::ir::sweep`]: first by running
//! every rank in op order when all dependencies point backwards (as the backend writes them;
//! no per-op tables needed), then, if that stalls, by the general sweep.
//!
//! [`completes`] returns `true` only when the exact check would find nothing; on `false` the
//! caller runs the exact check, which finds and words the problems (or accepts schedules this
//! test does not cover). Both answers therefore agree on every schedule.

use super::{ANY_SOURCE, ANY_TAG, GoalSchedule, OpKind};

const NONE: u32 = u32::MAX;

/// True when every op of `s` runs and no message or receive is left over, for any run order;
/// see the module doc. Assumes [`super::validate`]'s structure checks passed (peers and
/// dependencies name existing ranks and ops).
pub(super) fn completes(s: &GoalSchedule) -> bool {
    let n = s.ranks.len();
    let mut base = Vec::with_capacity(n + 1);
    let mut total = 0usize;
    for r in &s.ranks {
        base.push(total);
        total += r.ops.len();
    }
    base.push(total);
    if total >= NONE as usize {
        return false;
    }
    // Sends by destination (CSR): (source, tag, global op of the send).
    let mut at = vec![0u32; n + 1];
    for rank in &s.ranks {
        for op in &rank.ops {
            match op.kind {
                OpKind::Send { to, tag, .. } => {
                    if tag == ANY_TAG {
                        return false;
                    }
                    at[to as usize + 1] += 1;
                }
                OpKind::Recv { from, tag, .. } => {
                    if from == ANY_SOURCE || tag == ANY_TAG {
                        return false;
                    }
                }
                OpKind::Calc { .. } => {}
            }
        }
    }
    for i in 0..n {
        at[i + 1] += at[i];
    }
    let mut fill = at.clone();
    let mut incoming = vec![(0u32, 0u32, 0u32); at[n] as usize];
    for (r, rank) in s.ranks.iter().enumerate() {
        for (i, op) in rank.ops.iter().enumerate() {
            if let OpKind::Send { to, tag, .. } = op.kind {
                let f = &mut fill[to as usize];
                incoming[*f as usize] = (r as u32, tag, (base[r] + i) as u32);
                *f += 1;
            }
        }
    }
    // Pair each receive with the one send of its (source, tag); the receive waits for it.
    // Ranks in blocks on all cores, each block giving `send_of` for its own ops.
    let incoming = &incoming;
    let at = &at;
    let base_ref = &base;
    let blocks = crate::par::map_blocks(n, crate::par::block_size(n, 64), |range| {
        let lo = base_ref[range.start];
        let mut send_of = vec![NONE; base_ref[range.end] - lo];
        let mut recvs: Vec<(u32, u32, u32)> = Vec::new();
        let mut sends: Vec<(u32, u32, u32)> = Vec::new();
        for r in range {
            recvs.clear();
            for (i, op) in s.ranks[r].ops.iter().enumerate() {
                if let OpKind::Recv { from, tag, .. } = op.kind {
                    recvs.push((from, tag, (base_ref[r] + i) as u32));
                }
            }
            sends.clear();
            sends.extend_from_slice(&incoming[at[r] as usize..at[r + 1] as usize]);
            if sends.len() != recvs.len() {
                return None;
            }
            recvs.sort_unstable();
            sends.sort_unstable();
            for (k, (x, y)) in recvs.iter().zip(sends.iter()).enumerate() {
                if (x.0, x.1) != (y.0, y.1)
                    || (k > 0 && (x.0, x.1) == (recvs[k - 1].0, recvs[k - 1].1))
                {
                    return None;
                }
                send_of[x.2 as usize - lo] = y.2;
            }
        }
        Some(send_of)
    });
    let mut send_of = Vec::with_capacity(total);
    for b in blocks {
        match b {
            Some(v) => send_of.extend(v),
            None => return false,
        }
    }
    // When every dependency names an earlier op, running each rank in op order is the
    // cheapest test: if that finishes, the graph is acyclic.
    if s.ranks.iter().all(|r| r.deps.iter().all(|d| d.on < d.op)) {
        let base32: Vec<u32> = base.iter().map(|b| *b as u32).collect();
        let ran = crate::ir::sweep::program_order(
            &base32,
            |r, g| {
                let w = send_of[g as usize];
                if w == NONE {
                    return (NONE, 0);
                }
                let r = r as usize;
                match s.ranks[r].ops[g as usize - base[r]].kind {
                    OpKind::Recv { from, .. } => (w, from),
                    _ => (NONE, 0),
                }
            },
            |_, _| {},
        );
        if ran == total {
            return true;
        }
    }
    let mut recv_of = vec![NONE; total];
    for (r, x) in send_of.iter().enumerate() {
        if *x != NONE {
            recv_of[*x as usize] = r as u32;
        }
    }
    // Dependencies of both kinds, as local successor lists over global op numbers (CSR; each
    // count is turned into its list's end, and filling moves it back to the list's start).
    let mut remaining = vec![0u32; total];
    let mut start = vec![0u32; total + 1];
    for (r, rank) in s.ranks.iter().enumerate() {
        for d in &rank.deps {
            remaining[base[r] + d.op as usize] += 1;
            start[base[r] + d.on as usize] += 1;
        }
    }
    for g in 1..=total {
        start[g] += start[g - 1];
    }
    let mut succ = vec![0u32; start[total] as usize];
    for (r, rank) in s.ranks.iter().enumerate() {
        for d in &rank.deps {
            let at = &mut start[base[r] + d.on as usize];
            *at -= 1;
            succ[*at as usize] = (base[r] + d.op as usize) as u32;
        }
    }
    for &g in &recv_of {
        if g != NONE {
            remaining[g as usize] += 1;
        }
    }
    let ran = crate::ir::sweep::sweep(&mut remaining, |g, f| {
        let g = g as usize;
        for &x in &succ[start[g] as usize..start[g + 1] as usize] {
            f.local(x);
        }
        if recv_of[g] != NONE {
            f.remote(recv_of[g]);
        }
    });
    ran == total
}

#[cfg(test)]
mod tests {
    use super::super::validate::execution;
    use super::super::{Dep, DepKind, GoalOp, GoalRank};
    use super::*;
    use proptest::prelude::*;

    /// A small random schedule: 1-3 ranks, sends and receives with small tags (sometimes
    /// wildcards), calcs, and dependencies in both directions (so cycles occur).
    fn schedule() -> impl Strategy<Value = GoalSchedule> {
        let op = (0u8..3, 0u32..3, 0u32..3);
        let rank = (
            proptest::collection::vec(op, 1..6),
            proptest::collection::vec((0u32..6, 0u32..6, any::<bool>()), 0..6),
        );
        (1usize..4, proptest::collection::vec(rank, 3)).prop_map(|(n, ranks)| {
            let tag = |t: u32| if t == 2 { ANY_TAG } else { t };
            let ranks = ranks
                .into_iter()
                .take(n)
                .map(|(ops, deps)| {
                    let ops: Vec<GoalOp> = ops
                        .into_iter()
                        .map(|(k, peer, t)| GoalOp {
                            label: None,
                            kind: match k {
                                0 => OpKind::Send {
                                    size: 8,
                                    to: peer % n as u32,
                                    tag: tag(t).min(1),
                                },
                                1 => OpKind::Recv {
                                    size: 8,
                                    from: if peer == 2 {
                                        ANY_SOURCE
                                    } else {
                                        peer % n as u32
                                    },
                                    tag: tag(t),
                                },
                                _ => OpKind::Calc { time: 1 },
                            },
                            cpu: 0,
                            nic: 0,
                        })
                        .collect();
                    let m = ops.len() as u32;
                    let deps = deps
                        .into_iter()
                        .map(|(a, b, i)| Dep {
                            op: a % m,
                            on: b % m,
                            kind: if i {
                                DepKind::IRequires
                            } else {
                                DepKind::Requires
                            },
                        })
                        .filter(|d| d.op != d.on)
                        .collect();
                    GoalRank {
                        comment: None,
                        ops,
                        deps,
                    }
                })
                .collect();
            GoalSchedule {
                comment: None,
                ranks,
            }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
        /// The fast test never accepts what the exact run rejects.
        #[test]
        fn accepts_only_what_the_exact_run_accepts(s in schedule()) {
            if completes(&s) {
                prop_assert!(execution(&s).is_empty());
            }
        }
    }

    /// It covers the schedules the backend writes (unique tags per pair), and rejects a
    /// missing receive and a dependency cycle.
    #[test]
    fn covers_unique_tag_schedules() {
        let op = GoalOp::new;
        let dep = |op, on| Dep {
            op,
            on,
            kind: DepKind::Requires,
        };
        let pair = |r: u32| GoalRank {
            comment: None,
            ops: vec![
                op(OpKind::Send {
                    size: 8,
                    to: 1 - r,
                    tag: 0,
                }),
                op(OpKind::Recv {
                    size: 8,
                    from: 1 - r,
                    tag: 0,
                }),
                op(OpKind::Calc { time: 5 }),
            ],
            deps: vec![dep(2, 1), dep(2, 0)],
        };
        let mut s = GoalSchedule {
            comment: None,
            ranks: vec![pair(0), pair(1)],
        };
        assert!(completes(&s));
        // Rank 1 sends only after its receive, which waits for rank 0, which waits likewise.
        s.ranks[0].deps.push(dep(0, 1));
        s.ranks[1].deps.push(dep(0, 1));
        assert!(!completes(&s));
        assert!(!execution(&s).is_empty());
        s.ranks[0].deps.pop();
        s.ranks[1].deps.pop();
        s.ranks[1].ops[1] = op(OpKind::Calc { time: 1 });
        assert!(!completes(&s));
        assert!(!execution(&s).is_empty());
    }
}
