//! The global topological order the lowering follows (step 1 of [`super`]): local dependencies
//! and each send before its matched receive (sends and receives pair in program order per
//! (sender, receiver, tag), as in `ir::verify`), in the FIFO Kahn order of
//! [`crate::ir::sweep::fifo_order`], which `ir::verify` also uses.

use crate::ir::{OpKind, Program};

pub(super) struct Order {
    /// (rank, op) in topological order.
    pub seq: Vec<(u32, u32)>,
    /// Op `o` of process `p` is global op `base[p] + o`.
    pub base: Vec<u32>,
    /// Position of every global op in `seq`.
    pub pos: Vec<u32>,
}

pub(super) fn global_order(p: &Program) -> Order {
    let base = p.op_base();
    let total = base[p.procs.len()] as usize;
    let mut sends: Vec<(u32, u32, u32, u32)> = Vec::new();
    let mut recvs: Vec<(u32, u32, u32, u32)> = Vec::new();
    for (pi, proc) in p.procs.iter().enumerate() {
        for (oi, op) in proc.ops.iter().enumerate() {
            let g = base[pi] + oi as u32;
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
    // A verified program matches every message, so the k-th send and k-th receive of each
    // (sender, receiver, tag) line up in the sorted lists.
    let mut send_of = vec![u32::MAX; total];
    for (s, r) in sends.iter().zip(&recvs) {
        if (s.0, s.1, s.2) == (r.0, r.1, r.2) {
            send_of[r.3 as usize] = s.3;
        }
    }
    let (topo, _) = crate::ir::sweep::fifo_order(p, &base, &send_of);
    let mut proc_of = Vec::with_capacity(total);
    for (pi, proc) in p.procs.iter().enumerate() {
        proc_of.extend(std::iter::repeat_n(pi as u32, proc.ops.len()));
    }
    let mut seq = Vec::with_capacity(total);
    let mut pos = vec![u32::MAX; total];
    for g in topo {
        pos[g as usize] = seq.len() as u32;
        let pi = proc_of[g as usize];
        seq.push((pi, g - base[pi as usize]));
    }
    Order { seq, base, pos }
}
