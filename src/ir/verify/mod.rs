//! `ir::verify`: proves that a [`Program`] implements its collective, or says where it does not.
//!
//! The proof is a symbolic execution that holds for every timing the dependencies allow:
//! 1. Structure: peers, slices, dependencies and chunk layouts are valid (E0032).
//! 2. Matching: sends and receives pair up in program order per (sender, receiver, tag); a
//!    receive no send matches, a send nobody receives, or a cycle through dependencies and
//!    messages is a deadlock (E0035).
//! 3. Races: two ops of one process that touch the same slot, at least one writing, must be
//!    ordered by dependencies, or the result would depend on timing (E0036).
//! 4. Execution in one topological order (by 2 and 3, every order gives the same values): each
//!    slot holds a term, a leaf `(rank, input slot)` or an unordered pair of terms (floating-point
//!    addition and multiplication are commutative but not associative, so two terms are equal
//!    exactly when the results are bitwise equal). Terms are hash-consed, so equal terms have
//!    equal ids, and each term records which ranks it combines; combining two terms that share
//!    a rank is a duplicated contribution (E0033).
//! 5. Postcondition: every output slot the collective defines holds exactly the contributions
//!    it promises (E0033), and for reductions every rank holds the same term, i.e. combines in
//!    the same order (E0034).
//!
//! Steps 2 and 4 have fast paths for large, correct programs (`fast.rs`); whenever they find
//! something wrong, the exact code above runs and reports it, so findings do not depend on them.
//! Per-process work (steps 1 and 3, matching per receiver) runs in blocks of processes on all
//! cores ([`crate::par`]) with findings joined in process order, and step 3 runs beside the
//! execution; the answer never depends on the number of threads.

mod exec;
mod fast;
mod terms;

use super::{Buf, OpId, OpKind, ProcId, ProcKind, Program, Slice};
use crate::diag::Code;

/// One reason a program is wrong, located at a process and (usually) an op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub code: Code,
    pub proc: ProcId,
    pub op: Option<OpId>,
    pub message: String,
    pub help: String,
}

/// What a successful verification established.
/// Only [`verify`] makes proofs (outside this crate they cannot be built), so holding one
/// means a program was verified; `backend::goal::from_verified` relies on it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Proof {
    pub ops: usize,
    pub messages: usize,
    /// Distinct partial results built during execution.
    pub terms: usize,
}

const MAX_FINDINGS: usize = 16;

const NONE: u32 = u32::MAX;

pub(super) fn find(
    code: Code,
    proc: ProcId,
    op: Option<OpId>,
    message: String,
    help: &str,
) -> Finding {
    Finding {
        code,
        proc,
        op,
        message,
        help: help.to_string(),
    }
}

pub(super) fn who(p: &Program, proc: ProcId) -> String {
    match &p.procs[proc as usize].kind {
        ProcKind::Rank => format!("rank {proc}"),
        ProcKind::Switch(n) => format!("switch {n} (process {proc})"),
    }
}

/// True when two slices hold the same chunks slot by slot (slot `k` holds chunk `k mod cpp`),
/// so data may move between them.
fn same_chunks(a: Slice, b: Slice, cpp: u32) -> bool {
    a.count == b.count
        && (cpp <= 1 || (0..a.count).all(|x| (a.start + x) % cpp == (b.start + x) % cpp))
}

pub(super) fn show_slice(s: Slice) -> String {
    if s.count == 1 {
        format!("{}[{}]", s.buf.name(), s.start)
    } else {
        format!("{}[{}..{}]", s.buf.name(), s.start, s.start + s.count)
    }
}

/// Verifies a program; see the module doc.
pub fn verify(p: &Program) -> Result<Proof, Vec<Finding>> {
    let backward = structure(p)?;
    after_structure(p, backward)
}

/// [`verify`], running `beside` on another core (when there is one) once step 1 has found the
/// program well formed (every peer, slice and dependency in range), so that work which needs
/// only that, such as writing a backend's output that is kept only if the proof succeeds,
/// overlaps the rest of the proof. `beside` does not run when step 1 fails; its result comes
/// back whether or not the proof succeeds.
pub fn verify_beside<T: Send>(
    p: &Program,
    beside: impl FnOnce() -> T + Send,
) -> (Result<Proof, Vec<Finding>>, Option<T>) {
    let backward = match structure(p) {
        Ok(b) => b,
        Err(findings) => return (Err(findings), None),
    };
    let (proof, other) = crate::par::join(|| after_structure(p, backward), beside);
    (proof, Some(other))
}

/// Steps 2 to 5, for a program step 1 accepted (`backward`: every dependency names an earlier
/// op).
fn after_structure(p: &Program, backward: bool) -> Result<Proof, Vec<Finding>> {
    let ix = Index::new(p);
    let matching = match fast::matching(p, &ix) {
        Some(m) => m,
        None => match_messages(p, &ix)?,
    };
    // The race check and the execution are independent: on two threads when there are.
    let (raced, run) = crate::par::join(
        || races(p),
        || backward.then(|| fast::run(p, &ix, &matching)).flatten(),
    );
    let done = match run {
        Some(e) => {
            raced?;
            e.finish()
        }
        None => {
            let order = match fast::order(p, &ix, &matching) {
                Some(o) => o,
                None => topo_order(p, &ix, &matching)?,
            };
            raced?;
            exec::execute(p, &ix, &matching, &order)
        }
    };
    done.or_else(|_| {
        // Findings come in execution order: report them in the exact (queue) order.
        let order = topo_order(p, &ix, &matching)?;
        exec::execute(p, &ix, &matching, &order)
    })
}

/// Step 1; on success, whether every dependency names an earlier op of its process.
fn structure(p: &Program) -> Result<bool, Vec<Finding>> {
    let mut out = Vec::new();
    if p.spec.ranks as usize > p.procs.len()
        || p.procs
            .iter()
            .take(p.spec.ranks as usize)
            .any(|x| x.kind != ProcKind::Rank)
    {
        out.push(find(
            Code::IrInvalid,
            0,
            None,
            format!(
                "the collective has {} ranks, but the first {} processes are not all ranks",
                p.spec.ranks, p.spec.ranks
            ),
            "list one `rank` process per rank first, then switches",
        ));
        return Err(out);
    }
    if p.spec.kind.has_root() && p.spec.root.is_none_or(|r| r >= p.spec.ranks) {
        out.push(find(
            Code::IrInvalid,
            0,
            None,
            format!("{} needs a root among the ranks", p.spec.kind.name()),
            "give `root R` on the collective line",
        ));
        return Err(out);
    }
    // Processes in blocks on all cores; each block's findings (at most MAX_FINDINGS) are joined
    // in process order, so the first findings are those of a serial run.
    let blocks = crate::par::map_blocks(
        p.procs.len(),
        crate::par::block_size(p.procs.len(), 64),
        |range| {
            let mut out = Vec::new();
            let mut backward = true;
            for pi in range {
                backward &= proc_structure(p, pi as u32, &mut out);
            }
            (out, backward)
        },
    );
    let backward = blocks.iter().all(|b| b.1);
    out.extend(blocks.into_iter().flat_map(|b| b.0));
    out.truncate(MAX_FINDINGS);
    if out.is_empty() {
        Ok(backward)
    } else {
        Err(out)
    }
}

/// The structure findings of process `pi`, while `out` has room; whether its dependencies all
/// name earlier ops.
fn proc_structure(p: &Program, pi: u32, out: &mut Vec<Finding>) -> bool {
    let n = p.procs.len() as u32;
    let cpp = p.spec.chunks_per_part;
    let proc = &p.procs[pi as usize];
    let mut backward = true;
    for (oi, op) in proc.ops.iter().enumerate() {
        let oi = oi as u32;
        let mut bad = |m: String, h: &str| {
            if out.len() < MAX_FINDINGS {
                out.push(find(Code::IrInvalid, pi, Some(oi), m, h));
            }
        };
        for d in &op.deps {
            backward &= *d < oi;
            if *d as usize >= proc.ops.len() || *d == oi {
                bad(
                    format!(
                        "op {oi} of {} depends on op {d}, which {}",
                        who(p, pi),
                        if *d == oi {
                            "is itself"
                        } else {
                            "does not exist"
                        }
                    ),
                    "dependencies name other ops of the same process",
                );
            }
        }
        if let Some(peer) = op.kind.peer() {
            if peer >= n || peer == pi {
                bad(
                    format!(
                        "op {oi} of {} talks to process {peer}, which {}",
                        who(p, pi),
                        if peer == pi {
                            "is itself"
                        } else {
                            "does not exist"
                        }
                    ),
                    "peers are other processes of the program",
                );
            }
        }
        for s in op.kind.reads().chain(op.kind.writes()) {
            let len = p.buffer_len(pi, s.buf);
            if s.count == 0 || s.start.checked_add(s.count).is_none_or(|e| e > len) {
                bad(
                    format!(
                        "op {oi} of {} uses {}, but its {} buffer has {len} slot{}",
                        who(p, pi),
                        show_slice(s),
                        s.buf.name(),
                        if len == 1 { "" } else { "s" }
                    ),
                    "keep slices within the buffer; scratch slots are declared per process",
                );
            }
        }
        if let OpKind::Reduce { dst, src } | OpKind::Copy { dst, src } = op.kind {
            if !same_chunks(src, dst, cpp) {
                bad(
                    format!(
                        "op {oi} of {} moves {} into {}, which hold different chunks",
                        who(p, pi),
                        show_slice(src),
                        show_slice(dst)
                    ),
                    "slot k holds chunk k mod chunks_per_part; copy and reduce between slots of the same chunk",
                );
            }
        }
    }
    backward
}

/// Global numbering of ops: op `o` of process `p` is `base[p] + o`. The reverse table
/// (`proc_of`) is built on first use: the fast paths never need it.
pub(super) struct Index {
    pub base: Vec<u32>,
    proc_of: std::sync::OnceLock<Vec<u32>>,
}

impl Index {
    fn new(p: &Program) -> Index {
        Index {
            base: p.op_base(),
            proc_of: std::sync::OnceLock::new(),
        }
    }

    pub fn total(&self) -> usize {
        self.base.last().copied().unwrap_or(0) as usize
    }

    pub fn global(&self, p: ProcId, o: OpId) -> u32 {
        self.base[p as usize] + o
    }

    pub fn locate(&self, g: u32) -> (ProcId, OpId) {
        let proc_of = self.proc_of.get_or_init(|| {
            let mut v = Vec::with_capacity(self.total());
            for (pi, w) in self.base.windows(2).enumerate() {
                v.extend(std::iter::repeat_n(pi as u32, (w[1] - w[0]) as usize));
            }
            v
        });
        let p = proc_of[g as usize];
        (p, g - self.base[p as usize])
    }
}

/// For every receive (by global op id), the global id of its matched send, or `NONE`.
pub(super) struct Matching {
    pub send_of: Vec<u32>,
}

fn match_messages(p: &Program, ix: &Index) -> Result<Matching, Vec<Finding>> {
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
    let cpp = p.spec.chunks_per_part;
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
            if !same_chunks(src, dst, cpp) && out.len() < MAX_FINDINGS {
                out.push(find(
                    Code::IrInvalid,
                    to,
                    Some(ro),
                    format!(
                        "message {k} from {} to {} (tag {tag}) carries {} but op {ro} receives it into {}, which holds other chunks",
                        who(p, from),
                        who(p, to),
                        show_slice(src),
                        show_slice(dst)
                    ),
                    "a receive must have the same number of slots, of the same chunks, as its matching send",
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
fn topo_order(p: &Program, ix: &Index, m: &Matching) -> Result<Vec<u32>, Vec<Finding>> {
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

/// Checks that conflicting accesses to a slot are ordered by dependencies; processes in blocks
/// on all cores, findings joined in process order.
fn races(p: &Program) -> Result<(), Vec<Finding>> {
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
