//! Step 3 of the verifier: two ops of one process that touch the same slot, at least one
//! writing, must be ordered by dependencies (E0036), or the result would depend on timing.
//! Per process, ancestor bitsets over a local topological order (program order when every
//! dependency names an earlier op, else Kahn's); processes in blocks on all cores.

use super::{Finding, MAX_FINDINGS, NONE, find, who};
use crate::diag::Code;
use crate::ir::{Buf, OpId, ProcId, Program};

/// Checks that conflicting accesses to a slot are ordered by dependencies; processes in blocks
/// on all cores, findings joined in process order.
pub(super) fn races(p: &Program) -> Result<(), Vec<Finding>> {
    let blocks = crate::par::map_blocks(
        p.procs.len(),
        crate::par::block_size(p.procs.len(), 64),
        |range| {
            let mut scratch = RaceScratch::default();
            let mut out = Vec::new();
            for pi in range {
                if out.len() >= MAX_FINDINGS {
                    break;
                }
                proc_races(p, pi, &mut scratch, &mut out);
            }
            out
        },
    );
    let mut out: Vec<Finding> = blocks.into_iter().flatten().collect();
    out.truncate(MAX_FINDINGS);
    if out.is_empty() { Ok(()) } else { Err(out) }
}

/// Buffers reused across the processes of a block.
#[derive(Default)]
struct RaceScratch {
    anc: Vec<u64>,
    last_write: Vec<u32>,
    reads: Vec<Vec<u32>>,
    // In-degrees, CSR successors, order, stack.
    indeg: Vec<usize>,
    start: Vec<usize>,
    fill: Vec<usize>,
    succ: Vec<usize>,
    order: Vec<usize>,
    stack: Vec<usize>,
}

/// The race findings of process `pi`. When every dependency names an earlier op, program order
/// is a topological order and is tried first; findings are always reported in the order of
/// Kahn's algorithm below, so if there are any, the check runs again in that order.
fn proc_races(p: &Program, pi: usize, sc: &mut RaceScratch, out: &mut Vec<Finding>) {
    let proc = &p.procs[pi];
    if proc
        .ops
        .iter()
        .enumerate()
        .all(|(i, op)| op.deps.iter().all(|d| (*d as usize) < i))
    {
        let before = out.len();
        sc.order.clear();
        sc.order.extend(0..proc.ops.len());
        check_races(p, pi, sc, out);
        if out.len() == before {
            return;
        }
        out.truncate(before);
    }
    kahn_order(p, pi, sc);
    check_races(p, pi, sc, out);
}

/// A local topological order of process `pi` into `sc.order` (Kahn's algorithm over the
/// dependency lists, depth first).
fn kahn_order(p: &Program, pi: usize, sc: &mut RaceScratch) {
    let RaceScratch {
        indeg,
        start,
        fill,
        succ,
        order,
        stack,
        ..
    } = sc;
    let proc = &p.procs[pi];
    let n = proc.ops.len();
    // Local topological order (Kahn's algorithm over the dependency lists).
    indeg.clear();
    indeg.resize(n, 0);
    for (oi, op) in proc.ops.iter().enumerate() {
        indeg[oi] = op.deps.len();
    }
    // Successors in CSR form.
    start.clear();
    start.resize(n + 1, 0);
    for op in &proc.ops {
        for d in &op.deps {
            start[*d as usize + 1] += 1;
        }
    }
    for k in 0..n {
        start[k + 1] += start[k];
    }
    fill.clear();
    fill.extend_from_slice(&start[..n]);
    succ.clear();
    succ.resize(start[n], 0);
    for (oi, op) in proc.ops.iter().enumerate() {
        for d in &op.deps {
            succ[fill[*d as usize]] = oi;
            fill[*d as usize] += 1;
        }
    }
    order.clear();
    stack.clear();
    stack.extend((0..n).rev().filter(|i| indeg[*i] == 0));
    while let Some(i) = stack.pop() {
        order.push(i);
        for &s in succ[start[i]..start[i + 1]].iter().rev() {
            indeg[s] -= 1;
            if indeg[s] == 0 {
                stack.push(s);
            }
        }
    }
}

/// Checks the accesses of process `pi` in the local topological order `sc.order`.
fn check_races(p: &Program, pi: usize, sc: &mut RaceScratch, out: &mut Vec<Finding>) {
    let RaceScratch {
        anc,
        last_write,
        reads,
        order,
        ..
    } = sc;
    let proc = &p.procs[pi];
    let n = proc.ops.len();
    if n < 2 {
        return;
    }
    // Ancestor bitsets.
    let words = n.div_ceil(64);
    anc.clear();
    anc.resize(n * words, 0);
    for &i in order.iter() {
        for d in &proc.ops[i].deps {
            let d = *d as usize;
            anc[i * words + d / 64] |= 1 << (d % 64);
            for w in 0..words {
                let v = anc[d * words + w];
                anc[i * words + w] |= v;
            }
        }
    }
    let before = |a: usize, b: usize| anc[b * words + a / 64] >> (a % 64) & 1 == 1;
    // Slots of the process, numbered densely: input, output, scratch.
    let pid = pi as ProcId;
    let lens = [
        p.buffer_len(pid, Buf::Input),
        p.buffer_len(pid, Buf::Output),
        p.buffer_len(pid, Buf::Scratch),
    ];
    let offset = |b: Buf| match b {
        Buf::Input => 0,
        Buf::Output => lens[0],
        Buf::Scratch => lens[0] + lens[1],
    } as usize;
    let slots = (lens[0] + lens[1] + lens[2]) as usize;
    last_write.clear();
    last_write.resize(slots, NONE);
    for r in reads.iter_mut().take(slots) {
        r.clear();
    }
    if reads.len() < slots {
        reads.resize(slots, Vec::new());
    }
    for &i in order.iter() {
        let kind = &proc.ops[i].kind;
        // Op `other` touched the slot earlier in this order: a race unless one waits for the other.
        let check = |other: u32, buf: Buf, slot: u32, out: &mut Vec<Finding>| {
            let o = other as usize;
            if other != NONE && o != i && !before(o, i) && out.len() < MAX_FINDINGS {
                out.push(race(p, pi, o, i, buf, slot));
            }
        };
        for s in kind.reads() {
            for slot in s.slots() {
                let k = offset(s.buf) + slot as usize;
                check(last_write[k], s.buf, slot, out);
                reads[k].push(i as u32);
            }
        }
        if let Some(s) = kind.writes() {
            for slot in s.slots() {
                let k = offset(s.buf) + slot as usize;
                check(last_write[k], s.buf, slot, out);
                for &r in &reads[k] {
                    check(r, s.buf, slot, out);
                }
                reads[k].clear();
                last_write[k] = i as u32;
            }
        }
    }
}

fn race(p: &Program, pi: usize, a: usize, b: usize, buf: Buf, slot: u32) -> Finding {
    find(
        Code::IrRace,
        pi as ProcId,
        Some(b as OpId),
        format!(
            "ops {a} and {b} of {} both use {}[{slot}] and at least one writes it, but neither waits for the other",
            who(p, pi as ProcId),
            buf.name()
        ),
        "add a dependency (`after`) between them so the result does not depend on timing",
    )
}
