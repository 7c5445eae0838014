//! The pairing of messages the flow-level simulator makes before a run ([`super::engine`]),
//! and the round model ([`crate::cost::rounds`]) with it: which receive takes which send's
//! message ([`pair`]).

use crate::backend::goal::{GoalSchedule, OpKind};

/// No op.
pub(crate) const NONE: u32 = u32::MAX;

/// Each send's receive and each receive's send, by global op index ([`NONE`] when there is
/// none): a key (sender, receiver, tag)'s k-th send in program order goes with its k-th
/// receive.
pub(crate) fn pair(s: &GoalSchedule, base: &[usize]) -> Vec<u32> {
    let total = base.last().copied().unwrap_or(0);
    let mut sends: Vec<(u32, u32, u32, u32)> = Vec::new();
    let mut recvs: Vec<(u32, u32, u32, u32)> = Vec::new();
    for (r, rank) in s.ranks.iter().enumerate() {
        for (i, op) in rank.ops.iter().enumerate() {
            let g = (base[r] + i) as u32;
            match op.kind {
                OpKind::Send { to, tag, .. } => sends.push((r as u32, to, tag, g)),
                OpKind::Recv { from, tag, .. } => recvs.push((from, r as u32, tag, g)),
                OpKind::Calc { .. } => {}
            }
        }
    }
    sends.sort_unstable();
    recvs.sort_unstable();
    let mut pair = vec![NONE; total];
    let (mut a, mut b) = (0, 0);
    while a < sends.len() && b < recvs.len() {
        let (x, y) = (sends[a], recvs[b]);
        match (x.0, x.1, x.2).cmp(&(y.0, y.1, y.2)) {
            std::cmp::Ordering::Less => a += 1,
            std::cmp::Ordering::Greater => b += 1,
            std::cmp::Ordering::Equal => {
                pair[x.3 as usize] = y.3;
                pair[y.3 as usize] = x.3;
                a += 1;
                b += 1;
            }
        }
    }
    pair
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::goal::{GoalOp, GoalRank};

    #[test]
    fn a_keys_messages_pair_in_program_order_and_strays_stay_unpaired() {
        let send = |to, tag| GoalOp::new(OpKind::Send { size: 8, to, tag });
        let recv = |from, tag| GoalOp::new(OpKind::Recv { size: 8, from, tag });
        let rank = |ops| GoalRank {
            comment: None,
            ops,
            deps: Vec::new(),
        };
        // Rank 0 sends tag 5 twice and tag 6 once; rank 1 receives tag 5 twice and tag 7.
        let s = GoalSchedule {
            comment: None,
            ranks: vec![
                rank(vec![send(1, 5), send(1, 6), send(1, 5)]),
                rank(vec![recv(0, 7), recv(0, 5), recv(0, 5)]),
            ],
        };
        let p = pair(&s, &[0, 3, 6]);
        assert_eq!(p, vec![4, NONE, 5, NONE, 0, 2]);
    }
}
