//! The global topological order the lowering follows (step 1 of [`super`]): local dependencies
//! and each send before its matched receive (sends and receives pair in program order per
//! (sender, receiver, tag), as in `ir::verify`), Kahn's algorithm with a FIFO queue.

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
    let mut base = Vec::with_capacity(p.procs.len() + 1);
    let mut acc = 0u32;
    for proc in &p.procs {
        base.push(acc);
        acc += proc.ops.len() as u32;
    }
    base.push(acc);
    let total = acc as usize;
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
    let mut indeg = vec![0u32; total];
    let mut start = vec![0u32; total + 1];
    let each = |f: &mut dyn FnMut(u32, u32)| {
        for (pi, proc) in p.procs.iter().enumerate() {
            let b = base[pi];
            for (oi, op) in proc.ops.iter().enumerate() {
                let me = b + oi as u32;
                for d in &op.deps {
                    f(b + d, me);
                }
                if send_of[me as usize] != u32::MAX {
                    f(send_of[me as usize], me);
                }
            }
        }
    };
    each(&mut |from, to| {
        start[from as usize + 1] += 1;
        indeg[to as usize] += 1;
    });
    for k in 0..total {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    let mut succ = vec![0u32; start[total] as usize];
    each(&mut |from, to| {
        succ[fill[from as usize] as usize] = to;
        fill[from as usize] += 1;
    });
    let mut queue: std::collections::VecDeque<u32> = (0..total as u32)
        .filter(|g| indeg[*g as usize] == 0)
        .collect();
    let mut proc_of = Vec::with_capacity(total);
    for (pi, proc) in p.procs.iter().enumerate() {
        proc_of.extend(std::iter::repeat_n(pi as u32, proc.ops.len()));
    }
    let mut seq = Vec::with_capacity(total);
    let mut pos = vec![u32::MAX; total];
    while let Some(g) = queue.pop_front() {
        pos[g as usize] = seq.len() as u32;
        let pi = proc_of[g as usize];
        seq.push((pi, g - base[pi as usize]));
        for &s in &succ[start[g as usize] as usize..start[g as usize + 1] as usize] {
            indeg[s as usize] -= 1;
            if indeg[s as usize] == 0 {
                queue.push_back(s);
            }
        }
    }
    Order { seq, base, pos }
}
