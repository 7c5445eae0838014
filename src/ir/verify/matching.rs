//! Steps 2 and 4 of the verifier, exactly: sends and receives paired in program order per
//! (sender, receiver, tag) by one global sort, with the findings for a receive no send matches,
//! a send nobody receives and a message into other chunks (E0032, E0035); and one global
//! topological order (Kahn's algorithm with a FIFO queue), or the deadlock that prevents it.
//! `fast.rs` has the fast paths that give the same answers on correct programs.

use super::{
    Finding, Index, MAX_FINDINGS, NONE, differ, find, layout_rule, same_chunks, show_slice, who,
};
use crate::diag::Code;
use crate::ir::{OpId, OpKind, ProcId, Program};

/// For every receive (by global op id), the global id of its matched send, or `NONE`.
pub(super) struct Matching {
    pub send_of: Vec<u32>,
}

pub(super) fn match_messages(p: &Program, ix: &Index) -> Result<Matching, Vec<Finding>> {
    // (sender, receiver, tag, global op), in program order within each process.
    let mut sends: Vec<(u32, u32, u32, u32)> = Vec::new();
    let mut recvs: Vec<(u32, u32, u32, u32)> = Vec::new();
    for (pi, proc) in p.procs.iter().enumerate() {
        let pi = pi as ProcId;
        for (oi, op) in proc.ops.iter().enumerate() {
            let g = ix.global(pi, oi as OpId);
            match op.kind {
                OpKind::Send { peer, tag, .. } => sends.push((pi, peer, tag, g)),
                OpKind::Recv { peer, tag, .. } | OpKind::RecvReduce { peer, tag, .. } => {
                    recvs.push((peer, pi, tag, g))
                }
                _ => {}
            }
        }
    }
    // Stable sorts keep program order within each (sender, receiver, tag) channel.
    // Global ids grow with program order within a process, so sorting by (channel, id) keeps
    // each channel's ops in program order.
    sends.sort_unstable();
    recvs.sort_unstable();
    let mut out = Vec::new();
    let mut send_of = vec![NONE; ix.total()];
    let (mut i, mut j) = (0, 0);
    while i < sends.len() || j < recvs.len() {
        let key = match (sends.get(i), recvs.get(j)) {
            (Some(s), Some(r)) => (s.0, s.1, s.2).min((r.0, r.1, r.2)),
            (Some(s), None) => (s.0, s.1, s.2),
            (None, Some(r)) => (r.0, r.1, r.2),
            (None, None) => break,
        };
        let (from, to, tag) = key;
        let s_end = i + sends[i..]
            .iter()
            .take_while(|x| (x.0, x.1, x.2) == key)
            .count();
        let r_end = j + recvs[j..]
            .iter()
            .take_while(|x| (x.0, x.1, x.2) == key)
            .count();
        let (s, r) = (&sends[i..s_end], &recvs[j..r_end]);
        for (k, (sx, rx)) in s.iter().zip(r).enumerate() {
            send_of[rx.3 as usize] = sx.3;
            let (_, so) = ix.locate(sx.3);
            let (_, ro) = ix.locate(rx.3);
            let OpKind::Send { src, .. } = p.procs[from as usize].ops[so as usize].kind else {
                continue;
            };
            let dst = p.procs[to as usize].ops[ro as usize]
                .kind
                .writes()
                .unwrap_or(src);
            if !same_chunks(p, src, dst) && out.len() < MAX_FINDINGS {
                out.push(find(
                    Code::IrInvalid,
                    to,
                    Some(ro),
                    format!(
                        "message {k} from {} to {} (tag {tag}) carries {} but op {ro} receives it into {}: they {}",
                        who(p, from),
                        who(p, to),
                        show_slice(src),
                        show_slice(dst),
                        differ(src, dst)
                    ),
                    &format!("a receive must have as many slots as its matching send ({})", layout_rule(p)),
                ));
            }
        }
        if s.len() > r.len() && out.len() < MAX_FINDINGS {
            let (_, so) = ix.locate(s[r.len()].3);
            out.push(find(
                Code::IrDeadlock,
                from,
                Some(so),
                format!("op {so} of {} sends to {} (tag {tag}), but no receive matches it", who(p, from), who(p, to)),
                "sends and receives pair up in order per (sender, receiver, tag): add the missing receive or drop the send",
            ));
        }
        if r.len() > s.len() && out.len() < MAX_FINDINGS {
            let (_, ro) = ix.locate(r[s.len()].3);
            out.push(find(
                Code::IrDeadlock,
                to,
                Some(ro),
                format!("op {ro} of {} waits for a message from {} (tag {tag}) that is never sent", who(p, to), who(p, from)),
                "sends and receives pair up in order per (sender, receiver, tag): add the missing send or drop the receive",
            ));
        }
        i = s_end;
        j = r_end;
    }
    if out.is_empty() {
        Ok(Matching { send_of })
    } else {
        Err(out)
    }
}

/// A global topological order of all ops (local dependencies, and send before its receive).
pub(super) fn topo_order(p: &Program, ix: &Index, m: &Matching) -> Result<Vec<u32>, Vec<Finding>> {
    let total = ix.total();
    let (order, indeg) = crate::ir::sweep::fifo_order(p, &ix.base, &m.send_of);
    if order.len() == total {
        return Ok(order);
    }
    // Report the first blocked op of the lowest process.
    let g = (0..total).find(|g| indeg[*g] > 0).unwrap_or(0) as u32;
    let (pi, oi) = ix.locate(g);
    let s = m.send_of[g as usize];
    let waits = if s != NONE {
        let (sp, so) = ix.locate(s);
        format!("the message sent by op {so} of {}", who(p, sp))
    } else {
        "ops that wait for it in turn".to_string()
    };
    Err(vec![find(
        Code::IrDeadlock,
        pi,
        Some(oi),
        format!(
            "op {oi} of {} can never run: it waits, directly or through other processes, on {waits}, in a cycle",
            who(p, pi)
        ),
        "break the cycle: a process must not wait for a message whose sending depends on this op",
    )])
}
