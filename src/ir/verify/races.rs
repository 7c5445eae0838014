//! Step 3 of the verifier: two ops of one process that touch the same slot, at least one
//! writing, must be ordered by dependencies (E0036), or the result would depend on timing.
//! Per process, over a local topological order (program order when every dependency names an
//! earlier op, else Kahn's); processes in blocks on all cores.
//!
//! Whether one op waits for another ([`Reach`]) is answered by a search back along the later
//! op's dependencies that never goes before the earlier op in the order: the lowered families
//! order conflicting accesses by a dependency or a short chain, so this is linear in the
//! process's ops. A process whose searches together visit more ops than ancestor bitsets
//! would cost (`ops^2 / 64` words) switches to the bitsets for the rest of it, so no program
//! costs more than it did with the bitsets alone. Both answers are exact.

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
    pos: Vec<u32>,
    stamp: Vec<u32>,
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
        pos,
        stamp,
        ..
    } = sc;
    let proc = &p.procs[pi];
    let n = proc.ops.len();
    if n < 2 {
        return;
    }
    let mut reach = Reach::new(proc, order, pos, stamp, anc);
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
        let mut check = |other: u32, buf: Buf, slot: u32, out: &mut Vec<Finding>| {
            let o = other as usize;
            if other != NONE && o != i && out.len() < MAX_FINDINGS && !reach.waits(i, o) {
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

/// Whether an op waits (through dependencies) for an op before it in a topological order: by
/// searching back (see the module doc), or by ancestor bitsets once the searches cost more.
struct Reach<'a> {
    proc: &'a crate::ir::Proc,
    order: &'a [usize],
    /// Op to its index in `order`.
    pos: &'a mut Vec<u32>,
    /// The search that last visited each op.
    stamp: &'a mut Vec<u32>,
    search: u32,
    stack: Vec<u32>,
    /// Ops visited by the searches so far, and the most before switching to `anc`.
    work: usize,
    limit: usize,
    /// Ancestor bitsets (`words` per op), once built.
    anc: &'a mut Vec<u64>,
    words: usize,
}

impl<'a> Reach<'a> {
    fn new(
        proc: &'a crate::ir::Proc,
        order: &'a [usize],
        pos: &'a mut Vec<u32>,
        stamp: &'a mut Vec<u32>,
        anc: &'a mut Vec<u64>,
    ) -> Self {
        // Every op, also those a cycle keeps out of `order` (never asked about, nor reached).
        let n = proc.ops.len();
        pos.clear();
        pos.resize(n, 0);
        for (k, &i) in order.iter().enumerate() {
            pos[i] = k as u32;
        }
        stamp.clear();
        stamp.resize(n, 0);
        Reach {
            proc,
            order,
            pos,
            stamp,
            search: 0,
            stack: Vec::new(),
            work: 0,
            limit: n * n.div_ceil(64) + 4 * n,
            anc,
            words: 0,
        }
    }

    /// Whether op `i` waits for op `o`, which comes before it in the order.
    fn waits(&mut self, i: usize, o: usize) -> bool {
        if self.words > 0 {
            return self.anc[i * self.words + o / 64] >> (o % 64) & 1 == 1;
        }
        if self.work > self.limit {
            self.build_bitsets();
            return self.waits(i, o);
        }
        // Back along the dependencies (a direct one is found at the first step), never to an
        // op before `o` in the order (its ancestors are all before it too).
        self.search = self.search.wrapping_add(1);
        if self.search == 0 {
            self.stamp.fill(0);
            self.search = 1;
        }
        let floor = self.pos[o];
        self.stack.clear();
        self.stack.push(i as u32);
        while let Some(x) = self.stack.pop() {
            for &d in &self.proc.ops[x as usize].deps {
                let du = d as usize;
                if du == o {
                    return true;
                }
                if self.pos[du] > floor && self.stamp[du] != self.search {
                    self.stamp[du] = self.search;
                    self.work += 1;
                    self.stack.push(d);
                }
            }
        }
        false
    }

    /// Ancestor bitsets of every op, in the order.
    fn build_bitsets(&mut self) {
        let n = self.proc.ops.len();
        let words = n.div_ceil(64);
        self.anc.clear();
        self.anc.resize(n * words, 0);
        for &i in self.order {
            for d in &self.proc.ops[i].deps {
                let d = *d as usize;
                self.anc[i * words + d / 64] |= 1 << (d % 64);
                for w in 0..words {
                    let v = self.anc[d * words + w];
                    self.anc[i * words + w] |= v;
                }
            }
        }
        self.words = words;
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

#[cfg(test)]
mod tests {
    use super::Reach;
    use crate::ir::{Buf, Deps, Op, OpKind, Proc, ProcKind, Slice};

    /// A process of `n` copies whose op `i` depends on the ops `deps(i)` names.
    fn proc_with(n: usize, deps: impl Fn(usize) -> Vec<u32>) -> Proc {
        let copy = OpKind::Copy {
            dst: Slice::one(Buf::Output, 0),
            src: Slice::one(Buf::Input, 0),
        };
        Proc {
            kind: ProcKind::Rank,
            scratch: 0,
            ops: (0..n)
                .map(|i| Op {
                    kind: copy.clone(),
                    deps: Deps::from_slice(&deps(i)),
                })
                .collect(),
        }
    }

    /// The search's answer equals the bitsets' for every pair, on random dependency graphs
    /// (up to four earlier ops each), in program order.
    #[test]
    fn search_answers_as_bitsets_do() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for trial in 0..40 {
            let n = 2 + next(90) as usize;
            let fan: Vec<Vec<u32>> = (0..n)
                .map(|i| {
                    let k = if i == 0 { 0 } else { next(5).min(i as u64) };
                    let mut d: Vec<u32> = (0..k).map(|_| next(i as u64) as u32).collect();
                    d.sort_unstable();
                    d.dedup();
                    d
                })
                .collect();
            let proc = proc_with(n, |i| fan[i].clone());
            let order: Vec<usize> = (0..n).collect();
            let (mut pos, mut stamp, mut anc) = (Vec::new(), Vec::new(), Vec::new());
            let (mut pos2, mut stamp2, mut anc2) = (Vec::new(), Vec::new(), Vec::new());
            let mut search = Reach::new(&proc, &order, &mut pos, &mut stamp, &mut anc);
            search.limit = usize::MAX;
            let mut bits = Reach::new(&proc, &order, &mut pos2, &mut stamp2, &mut anc2);
            bits.build_bitsets();
            let mut some = (false, false);
            for i in 0..n {
                for o in 0..i {
                    let want = bits.waits(i, o);
                    assert_eq!(
                        search.waits(i, o),
                        want,
                        "trial {trial}: does {i} wait for {o}?"
                    );
                    if want { some.0 = true } else { some.1 = true }
                }
            }
            assert!(
                search.words == 0,
                "trial {trial}: the search switched to bitsets"
            );
            if n > 10 {
                assert!(some.0 && some.1, "trial {trial}: a graph with both answers");
            }
        }
    }

    /// Searches that visit more than the bitsets would cost switch to them and still answer
    /// right: a long chain, asked about every pair.
    #[test]
    fn costly_searches_switch_to_bitsets() {
        let n = 300;
        let proc = proc_with(n, |i| if i == 0 { vec![] } else { vec![i as u32 - 1] });
        let order: Vec<usize> = (0..n).collect();
        let (mut pos, mut stamp, mut anc) = (Vec::new(), Vec::new(), Vec::new());
        let mut reach = Reach::new(&proc, &order, &mut pos, &mut stamp, &mut anc);
        for i in 0..n {
            for o in 0..i {
                assert!(reach.waits(i, o));
            }
        }
        assert!(
            reach.words > 0,
            "the searches stayed under the bitsets' cost"
        );
    }
}
