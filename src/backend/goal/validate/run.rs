//! Step 2 of the validator: the untimed, all-eager run of a schedule that passed step 1 (see
//! the module doc of [`super`]), which finds unmatched sends and receives, deadlocks and
//! dependency cycles as LogGOPSim would meet them.

use super::{At, MAX_PROBLEMS, Problem, problem, show, who};
use crate::backend::goal::matching::Queue;
use crate::backend::goal::{ANY_SOURCE, ANY_TAG, DepKind, Flat, GoalSchedule, OpKind};
use std::collections::{HashSet, VecDeque};

/// The untimed, all-eager run; see the module doc.
pub(in crate::backend::goal) fn execution(s: &GoalSchedule) -> Vec<Problem> {
    let n = s.ranks.len();
    let (flat, mut remaining) = Flat::new(s);
    let total = remaining.len();
    let mut started = vec![false; total];
    let mut done = vec![false; total];
    let mut work: VecDeque<(u32, u32)> = VecDeque::new();
    for (r, rank) in s.ranks.iter().enumerate() {
        for i in 0..rank.ops.len() as u32 {
            if remaining[flat.g(r as u32, i)] == 0 {
                work.push_back((r as u32, i));
            }
        }
    }
    let mut rq: Vec<Queue<u32>> = (0..n).map(|_| Queue::default()).collect();
    let mut uq: Vec<Queue<(u32, u32)>> = (0..n).map(|_| Queue::default()).collect();
    // Frees what waited for an op to start or finish.
    let release = |list: &[u32], r: u32, remaining: &mut [u32], work: &mut VecDeque<(u32, u32)>| {
        for &x in list {
            let c = &mut remaining[flat.g(r, x)];
            *c -= 1;
            if *c == 0 {
                work.push_back((r, x));
            }
        }
    };
    while let Some((r, i)) = work.pop_front() {
        started[flat.g(r, i)] = true;
        release(flat.after_start(r, i), r, &mut remaining, &mut work);
        let mut finish = |r: u32, i: u32, remaining: &mut [u32], work: &mut VecDeque<_>| {
            done[flat.g(r, i)] = true;
            release(flat.after_done(r, i), r, remaining, work);
        };
        match s.ranks[r as usize].ops[i as usize].kind {
            OpKind::Calc { .. } => finish(r, i, &mut remaining, &mut work),
            OpKind::Send { to, tag, .. } => {
                finish(r, i, &mut remaining, &mut work);
                match rq[to as usize].take(r, tag) {
                    Some(j) => finish(to, j, &mut remaining, &mut work),
                    None => uq[to as usize].push(r, tag, (r, i)),
                }
            }
            OpKind::Recv { from, tag, .. } => match uq[r as usize].take(from, tag) {
                Some(_) => finish(r, i, &mut remaining, &mut work),
                None => rq[r as usize].push(from, tag, i),
            },
        }
    }
    let mut out = Vec::new();
    // Receives no message reached, and messages no receive took.
    let mut stuck: Vec<(u32, u32)> = Vec::new();
    for r in 0..n {
        for (from, tag, &i) in rq[r].items() {
            let r32 = r as u32;
            stuck.push((r32, i));
            // A matching send that never ran means a deadlock; none at all, a mismatch.
            let sender = (0..n as u32)
                .filter(|p| from == ANY_SOURCE || *p == from)
                .flat_map(|p| {
                    s.ranks[p as usize]
                        .ops
                        .iter()
                        .enumerate()
                        .filter(move |(_, o)| {
                            matches!(o.kind, OpKind::Send { to, tag: t, .. }
                                if to == r32 && (t == tag || t == ANY_TAG || tag == ANY_TAG))
                        })
                        .map(move |(j, _)| (p, j as u32))
                })
                .find(|(p, j)| !started[flat.g(*p, *j)]);
            let pr = match sender {
                Some((p, j)) => {
                    let mut pr = problem(
                        At::Op(r32, i),
                        format!(
                            "deadlock: {} waits for a message from rank {p} that is sent only after it",
                            who(s, r32, i)
                        ),
                        "never completes",
                        "break the cycle: a send must not depend (through dependencies and messages) on the receive it feeds",
                    );
                    pr.related.push((
                        At::Op(p, j),
                        format!("this send never runs ({})", who(s, p, j)),
                    ));
                    pr
                }
                None => problem(
                    At::Op(r32, i),
                    format!(
                        "no send matches {}: nothing from rank {} with tag {} arrives",
                        who(s, r32, i),
                        show(from, ANY_SOURCE),
                        show(tag, ANY_TAG)
                    ),
                    "never matched",
                    "add the matching send, or fix the source or tag (LogGOPSim would report a non-empty receive queue and no times)",
                ),
            };
            out.push(pr);
            if out.len() >= MAX_PROBLEMS {
                break;
            }
        }
        for (_, tag, &(p, j)) in uq[r].items() {
            out.push(problem(
                At::Op(p, j),
                format!(
                    "no recv on rank {r} matches {} (tag {})",
                    who(s, p, j),
                    show(tag, ANY_TAG)
                ),
                "never received",
                "add a recv for this message on the destination, or fix its tag (LogGOPSim would report a non-empty unexpected queue and no times)",
            ));
        }
    }
    // Ops that never ran and are not behind a stuck receive: dependency cycles.
    let mut behind = vec![false; total];
    let mut walk: Vec<(u32, u32)> = stuck.clone();
    while let Some((r, i)) = walk.pop() {
        for &x in flat.after_done(r, i).iter().chain(flat.after_start(r, i)) {
            let g = flat.g(r, x);
            if !started[g] && !behind[g] {
                behind[g] = true;
                walk.push((r, x));
            }
        }
    }
    for (r, rank) in s.ranks.iter().enumerate() {
        let r32 = r as u32;
        let Some(first) = (0..rank.ops.len() as u32).find(|&i| {
            let g = flat.g(r32, i);
            !started[g] && !behind[g]
        }) else {
            continue;
        };
        // Walk unsatisfied dependencies backwards until an op repeats: that op is on a cycle.
        let mut seen = HashSet::new();
        let mut cur = first;
        while seen.insert(cur) {
            let next = rank.deps.iter().find(|d| {
                d.op == cur
                    && !match d.kind {
                        DepKind::Requires => done[flat.g(r32, d.on)],
                        DepKind::IRequires => started[flat.g(r32, d.on)],
                    }
            });
            match next {
                Some(d) => cur = d.on,
                None => break,
            }
        }
        out.push(problem(
            At::Op(r32, cur),
            format!(
                "{} never runs: it is on a dependency cycle",
                who(s, r32, cur)
            ),
            "waits for itself",
            "remove a dependency of the cycle (LogGOPSim silently skips these ops and the times it prints are wrong)",
        ));
    }
    out.sort_by_key(|p| p.at);
    out.truncate(MAX_PROBLEMS);
    out
}
