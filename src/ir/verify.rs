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

use super::{Buf, OpId, OpKind, ProcId, ProcKind, Program, Slice};
use crate::diag::Code;
use crate::sema::model::CollectiveKind;
use std::collections::HashMap;

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof {
    pub ops: usize,
    pub messages: usize,
    /// Distinct partial results built during execution.
    pub terms: usize,
}

const MAX_FINDINGS: usize = 16;

type TermId = u32;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Term {
    Leaf { rank: u32, slot: u32 },
    Pair(TermId, TermId),
}

struct Terms {
    terms: Vec<Term>,
    /// Input slot all contributions of the term come from.
    slot: Vec<u32>,
    /// Sorted ranks whose contributions the term combines.
    ranks: Vec<Vec<u32>>,
    index: HashMap<Term, TermId>,
}

impl Terms {
    fn new() -> Terms {
        Terms {
            terms: Vec::new(),
            slot: Vec::new(),
            ranks: Vec::new(),
            index: HashMap::new(),
        }
    }

    fn intern(&mut self, t: Term, slot: u32, ranks: impl FnOnce() -> Vec<u32>) -> TermId {
        if let Some(id) = self.index.get(&t) {
            return *id;
        }
        let id = self.terms.len() as TermId;
        self.terms.push(t);
        self.slot.push(slot);
        self.ranks.push(ranks());
        self.index.insert(t, id);
        id
    }

    fn leaf(&mut self, rank: u32, slot: u32) -> TermId {
        self.intern(Term::Leaf { rank, slot }, slot, || vec![rank])
    }

    /// Combines two terms; on failure returns why.
    fn pair(&mut self, a: TermId, b: TermId) -> Result<TermId, String> {
        let (sa, sb) = (self.slot[a as usize], self.slot[b as usize]);
        if sa != sb {
            return Err(format!("combines chunk {sa} with chunk {sb}"));
        }
        let key = Term::Pair(a.min(b), a.max(b));
        if let Some(id) = self.index.get(&key) {
            return Ok(*id);
        }
        let (ra, rb) = (&self.ranks[a as usize], &self.ranks[b as usize]);
        let mut merged = Vec::with_capacity(ra.len() + rb.len());
        let (mut i, mut j) = (0, 0);
        while i < ra.len() && j < rb.len() {
            match ra[i].cmp(&rb[j]) {
                std::cmp::Ordering::Less => {
                    merged.push(ra[i]);
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    merged.push(rb[j]);
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    return Err(format!(
                        "adds the contribution of rank {} to chunk {sa} twice",
                        ra[i]
                    ));
                }
            }
        }
        merged.extend_from_slice(&ra[i..]);
        merged.extend_from_slice(&rb[j..]);
        Ok(self.intern(key, sa, || merged))
    }

    /// A short rendering of a term's combination tree, e.g. `((r0 + r1) + r2)`.
    fn show(&self, t: TermId, budget: &mut usize) -> String {
        if *budget == 0 {
            return "…".into();
        }
        *budget -= 1;
        match self.terms[t as usize] {
            Term::Leaf { rank, .. } => format!("r{rank}"),
            Term::Pair(a, b) => {
                let (x, y) = (self.show(a, budget), self.show(b, budget));
                format!("({x} + {y})")
            }
        }
    }
}

fn find(code: Code, proc: ProcId, op: Option<OpId>, message: String, help: &str) -> Finding {
    Finding {
        code,
        proc,
        op,
        message,
        help: help.to_string(),
    }
}

fn who(p: &Program, proc: ProcId) -> String {
    match &p.procs[proc as usize].kind {
        ProcKind::Rank => format!("rank {proc}"),
        ProcKind::Switch(n) => format!("switch {n} (process {proc})"),
    }
}

fn show_slice(s: Slice) -> String {
    if s.count == 1 {
        format!("{}[{}]", s.buf.name(), s.start)
    } else {
        format!("{}[{}..{}]", s.buf.name(), s.start, s.start + s.count)
    }
}

/// Verifies a program; see the module doc.
pub fn verify(p: &Program) -> Result<Proof, Vec<Finding>> {
    structure(p)?;
    let matching = match_messages(p)?;
    let order = topo_order(p, &matching)?;
    races(p)?;
    execute(p, &matching, &order)
}

fn structure(p: &Program) -> Result<(), Vec<Finding>> {
    let mut out = Vec::new();
    let n = p.procs.len() as u32;
    let cpp = p.spec.chunks_per_part;
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
    for (pi, proc) in p.procs.iter().enumerate() {
        let pi = pi as u32;
        for (oi, op) in proc.ops.iter().enumerate() {
            let oi = oi as u32;
            let mut bad = |m: String, h: &str| {
                if out.len() < MAX_FINDINGS {
                    out.push(find(Code::IrInvalid, pi, Some(oi), m, h));
                }
            };
            for d in &op.deps {
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
            let mut slices = op.kind.reads();
            slices.extend(op.kind.writes());
            for s in slices {
                let len = p.buffer_len(pi, s.buf);
                if s.count == 0 || s.start.checked_add(s.count).is_none_or(|e| e > len) {
                    bad(
                        format!(
                            "op {oi} of {} uses {}, but its {} buffer has {len} slots",
                            who(p, pi),
                            show_slice(s),
                            s.buf.name()
                        ),
                        "keep slices within the buffer; scratch slots are declared per process",
                    );
                }
            }
            if let OpKind::Reduce { dst, src } | OpKind::Copy { dst, src } = op.kind {
                if dst.count != src.count
                    || (0..dst.count).any(|i| (dst.start + i) % cpp != (src.start + i) % cpp)
                {
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
    }
    if out.is_empty() { Ok(()) } else { Err(out) }
}

/// For every receive (proc, op), the matched send (proc, op); and the number of messages.
struct Matching {
    send_of: HashMap<(ProcId, OpId), (ProcId, OpId)>,
}

fn match_messages(p: &Program) -> Result<Matching, Vec<Finding>> {
    let mut sends: HashMap<(ProcId, ProcId, u32), Vec<OpId>> = HashMap::new();
    let mut recvs: HashMap<(ProcId, ProcId, u32), Vec<OpId>> = HashMap::new();
    for (pi, proc) in p.procs.iter().enumerate() {
        let pi = pi as ProcId;
        for (oi, op) in proc.ops.iter().enumerate() {
            match op.kind {
                OpKind::Send { peer, tag, .. } => {
                    sends.entry((pi, peer, tag)).or_default().push(oi as OpId)
                }
                OpKind::Recv { peer, tag, .. } | OpKind::RecvReduce { peer, tag, .. } => {
                    recvs.entry((peer, pi, tag)).or_default().push(oi as OpId)
                }
                _ => {}
            }
        }
    }
    let mut keys: Vec<(ProcId, ProcId, u32)> = sends.keys().chain(recvs.keys()).copied().collect();
    keys.sort_unstable();
    keys.dedup();
    let mut out = Vec::new();
    let mut send_of = HashMap::new();
    let cpp = p.spec.chunks_per_part;
    for key @ (from, to, tag) in keys {
        let s = sends.get(&key).map(|v| v.as_slice()).unwrap_or(&[]);
        let r = recvs.get(&key).map(|v| v.as_slice()).unwrap_or(&[]);
        for (k, (so, ro)) in s.iter().zip(r).enumerate() {
            let OpKind::Send { src, .. } = p.procs[from as usize].ops[*so as usize].kind else {
                continue;
            };
            let dst = p.procs[to as usize].ops[*ro as usize]
                .kind
                .writes()
                .unwrap_or(src);
            if src.count != dst.count
                || (0..src.count).any(|i| (src.start + i) % cpp != (dst.start + i) % cpp)
            {
                if out.len() < MAX_FINDINGS {
                    out.push(find(
                        Code::IrInvalid,
                        to,
                        Some(*ro),
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
            send_of.insert((to, *ro), (from, *so));
        }
        if s.len() > r.len() && out.len() < MAX_FINDINGS {
            out.push(find(
                Code::IrDeadlock,
                from,
                Some(s[r.len()]),
                format!("op {} of {} sends to {} (tag {tag}), but no receive matches it", s[r.len()], who(p, from), who(p, to)),
                "sends and receives pair up in order per (sender, receiver, tag): add the missing receive or drop the send",
            ));
        }
        if r.len() > s.len() && out.len() < MAX_FINDINGS {
            out.push(find(
                Code::IrDeadlock,
                to,
                Some(r[s.len()]),
                format!("op {} of {} waits for a message from {} (tag {tag}) that is never sent", r[s.len()], who(p, to), who(p, from)),
                "sends and receives pair up in order per (sender, receiver, tag): add the missing send or drop the receive",
            ));
        }
    }
    if out.is_empty() {
        Ok(Matching { send_of })
    } else {
        Err(out)
    }
}

/// A global topological order of all ops (local dependencies, and send before its receive).
fn topo_order(p: &Program, m: &Matching) -> Result<Vec<(ProcId, OpId)>, Vec<Finding>> {
    let base: Vec<usize> = p
        .procs
        .iter()
        .scan(0usize, |acc, x| {
            let b = *acc;
            *acc += x.ops.len();
            Some(b)
        })
        .collect();
    let total = p.op_count();
    let mut indeg = vec![0u32; total];
    let mut succ: Vec<Vec<u32>> = vec![Vec::new(); total];
    for (pi, proc) in p.procs.iter().enumerate() {
        for (oi, op) in proc.ops.iter().enumerate() {
            let me = base[pi] + oi;
            for d in &op.deps {
                succ[base[pi] + *d as usize].push(me as u32);
                indeg[me] += 1;
            }
            if let Some((sp, so)) = m.send_of.get(&(pi as ProcId, oi as OpId)) {
                succ[base[*sp as usize] + *so as usize].push(me as u32);
                indeg[me] += 1;
            }
        }
    }
    let locate = |g: usize| -> (ProcId, OpId) {
        let pi = base.partition_point(|b| *b <= g) - 1;
        (pi as ProcId, (g - base[pi]) as OpId)
    };
    let mut queue: std::collections::VecDeque<u32> = (0..total as u32)
        .filter(|g| indeg[*g as usize] == 0)
        .collect();
    let mut order = Vec::with_capacity(total);
    while let Some(g) = queue.pop_front() {
        order.push(locate(g as usize));
        for s in std::mem::take(&mut succ[g as usize]) {
            indeg[s as usize] -= 1;
            if indeg[s as usize] == 0 {
                queue.push_back(s);
            }
        }
    }
    if order.len() == total {
        return Ok(order);
    }
    // Report the first blocked op of the lowest process.
    let g = (0..total).find(|g| indeg[*g] > 0).unwrap_or(0);
    let (pi, oi) = locate(g);
    let op = &p.procs[pi as usize].ops[oi as usize];
    let waits = match (m.send_of.get(&(pi, oi)), op.kind.peer()) {
        (Some((sp, so)), _) => format!("the message sent by op {so} of {}", who(p, *sp)),
        _ => "ops that wait for it in turn".to_string(),
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

/// Checks that conflicting accesses to a slot are ordered by dependencies.
fn races(p: &Program) -> Result<(), Vec<Finding>> {
    let mut out = Vec::new();
    for (pi, proc) in p.procs.iter().enumerate() {
        let n = proc.ops.len();
        if n < 2 {
            continue;
        }
        // Local topological order (the global one restricted to this process would do too).
        let mut indeg = vec![0usize; n];
        let mut succ = vec![Vec::new(); n];
        for (oi, op) in proc.ops.iter().enumerate() {
            for d in &op.deps {
                succ[*d as usize].push(oi);
                indeg[oi] += 1;
            }
        }
        let mut order = Vec::with_capacity(n);
        let mut stack: Vec<usize> = (0..n).rev().filter(|i| indeg[*i] == 0).collect();
        while let Some(i) = stack.pop() {
            order.push(i);
            for s in succ[i].iter().rev() {
                indeg[*s] -= 1;
                if indeg[*s] == 0 {
                    stack.push(*s);
                }
            }
        }
        // Ancestor bitsets.
        let words = n.div_ceil(64);
        let mut anc = vec![0u64; n * words];
        for &i in &order {
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
        let mut last_write: HashMap<(Buf, u32), usize> = HashMap::new();
        let mut reads: HashMap<(Buf, u32), Vec<usize>> = HashMap::new();
        for &i in &order {
            let kind = &proc.ops[i].kind;
            for s in kind.reads() {
                for slot in s.slots() {
                    if let Some(&w) = last_write.get(&(s.buf, slot)) {
                        if w != i && !before(w, i) && out.len() < MAX_FINDINGS {
                            out.push(race(p, pi, w, i, s.buf, slot));
                        }
                    }
                    reads.entry((s.buf, slot)).or_default().push(i);
                }
            }
            if let Some(s) = kind.writes() {
                for slot in s.slots() {
                    if let Some(&w) = last_write.get(&(s.buf, slot)) {
                        if w != i && !before(w, i) && out.len() < MAX_FINDINGS {
                            out.push(race(p, pi, w, i, s.buf, slot));
                        }
                    }
                    for r in reads.remove(&(s.buf, slot)).unwrap_or_default() {
                        if r != i && !before(r, i) && out.len() < MAX_FINDINGS {
                            out.push(race(p, pi, r, i, s.buf, slot));
                        }
                    }
                    last_write.insert((s.buf, slot), i);
                }
            }
        }
    }
    if out.is_empty() { Ok(()) } else { Err(out) }
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

fn execute(p: &Program, m: &Matching, order: &[(ProcId, OpId)]) -> Result<Proof, Vec<Finding>> {
    let mut terms = Terms::new();
    let mut state: Vec<[Vec<Option<TermId>>; 3]> = Vec::with_capacity(p.procs.len());
    for (pi, _) in p.procs.iter().enumerate() {
        let pi = pi as ProcId;
        let input = (0..p.buffer_len(pi, Buf::Input))
            .map(|k| Some(terms.leaf(pi, k)))
            .collect();
        let output = vec![None; p.buffer_len(pi, Buf::Output) as usize];
        let scratch = vec![None; p.buffer_len(pi, Buf::Scratch) as usize];
        state.push([input, output, scratch]);
    }
    let idx = |b: Buf| match b {
        Buf::Input => 0,
        Buf::Output => 1,
        Buf::Scratch => 2,
    };
    let mut mail: HashMap<(ProcId, OpId), Vec<Option<TermId>>> = HashMap::new();
    let reverse: HashMap<(ProcId, OpId), (ProcId, OpId)> =
        m.send_of.iter().map(|(r, s)| (*s, *r)).collect();
    let mut out = Vec::new();
    let mut messages = 0;
    for &(pi, oi) in order {
        let op = &p.procs[pi as usize].ops[oi as usize];
        let st = &mut state[pi as usize];
        let read = |st: &[Vec<Option<TermId>>; 3], s: Slice| -> Vec<Option<TermId>> {
            s.slots().map(|k| st[idx(s.buf)][k as usize]).collect()
        };
        let mut combine = |dst: Slice,
                           vals: Vec<Option<TermId>>,
                           st: &mut [Vec<Option<TermId>>; 3],
                           out: &mut Vec<Finding>| {
            for (i, v) in vals.into_iter().enumerate() {
                let slot = dst.start + i as u32;
                let cur = st[idx(dst.buf)][slot as usize];
                let res = match (cur, v) {
                    (Some(a), Some(b)) => terms.pair(a, b).map(Some),
                    (None, _) => Err(format!(
                        "combines into {}[{slot}], which holds nothing yet",
                        dst.buf.name()
                    )),
                    (_, None) => Err(format!(
                        "combines an empty value into {}[{slot}]",
                        dst.buf.name()
                    )),
                };
                match res {
                    Ok(t) => st[idx(dst.buf)][slot as usize] = t,
                    Err(why) => {
                        if out.len() < MAX_FINDINGS {
                            out.push(find(
                                Code::IrWrongResult,
                                pi,
                                Some(oi),
                                format!("op {oi} of {} {why}", who(p, pi)),
                                "each contribution must be combined exactly once, into a slot that already holds a partial result of the same chunk",
                            ));
                        }
                    }
                }
            }
        };
        match op.kind {
            OpKind::Send { src, .. } => {
                messages += 1;
                let v = read(st, src);
                if let Some(r) = reverse.get(&(pi, oi)) {
                    mail.insert(*r, v);
                }
            }
            OpKind::Recv { dst, .. } => {
                let v = mail.remove(&(pi, oi)).unwrap_or_default();
                for (i, t) in v.into_iter().enumerate() {
                    st[idx(dst.buf)][dst.start as usize + i] = t;
                }
            }
            OpKind::RecvReduce { dst, .. } => {
                let v = mail.remove(&(pi, oi)).unwrap_or_default();
                combine(dst, v, st, &mut out);
            }
            OpKind::Reduce { dst, src } => {
                let v = read(st, src);
                combine(dst, v, st, &mut out);
            }
            OpKind::Copy { dst, src } => {
                let v = read(st, src);
                for (i, t) in v.into_iter().enumerate() {
                    st[idx(dst.buf)][dst.start as usize + i] = t;
                }
            }
        }
    }
    if !out.is_empty() {
        return Err(out);
    }
    postcondition(p, &terms, &state, &mut out);
    if out.is_empty() {
        Ok(Proof {
            ops: p.op_count(),
            messages,
            terms: terms.terms.len(),
        })
    } else {
        Err(out)
    }
}

fn postcondition(
    p: &Program,
    terms: &Terms,
    state: &[[Vec<Option<TermId>>; 3]],
    out: &mut Vec<Finding>,
) {
    let sp = &p.spec;
    let n = sp.ranks;
    let cpp = sp.chunks_per_part;
    let all: Vec<u32> = (0..n).collect();
    // For each rank and output slot: the expected (input slot, contributing ranks), if defined.
    let expect = |r: u32, s: u32| -> Option<(u32, Vec<u32>)> {
        match sp.kind {
            CollectiveKind::Allreduce | CollectiveKind::Barrier => Some((s, all.clone())),
            CollectiveKind::Allgather => Some((s % cpp, vec![s / cpp])),
            CollectiveKind::ReduceScatter => Some((r * cpp + s, all.clone())),
            CollectiveKind::Broadcast => Some((s, vec![sp.root.unwrap_or(0)])),
            CollectiveKind::Reduce => (Some(r) == sp.root).then(|| (s, all.clone())),
        }
    };
    let mut reference: HashMap<u32, (u32, TermId)> = HashMap::new();
    for r in 0..n {
        for s in 0..sp.output_chunks() {
            let Some((slot, ranks)) = expect(r, s) else {
                continue;
            };
            if out.len() >= MAX_FINDINGS {
                return;
            }
            let got = state[r as usize][1][s as usize];
            let Some(t) = got else {
                out.push(find(
                    Code::IrWrongResult,
                    r,
                    None,
                    format!("rank {r}'s out[{s}] is never written"),
                    "every output slot must receive its result",
                ));
                continue;
            };
            let (gslot, granks) = (terms.slot[t as usize], &terms.ranks[t as usize]);
            if gslot != slot {
                out.push(find(
                    Code::IrWrongResult,
                    r,
                    None,
                    format!("rank {r}'s out[{s}] holds chunk {gslot} of the input, but should hold chunk {slot}"),
                    "check which slots the final copies and receives write",
                ));
                continue;
            }
            if *granks != ranks {
                let missing: Vec<String> = ranks
                    .iter()
                    .filter(|x| !granks.contains(x))
                    .take(8)
                    .map(|x| x.to_string())
                    .collect();
                let extra: Vec<String> = granks
                    .iter()
                    .filter(|x| !ranks.contains(x))
                    .take(8)
                    .map(|x| x.to_string())
                    .collect();
                let mut m = format!("rank {r}'s out[{s}] is wrong:");
                if !missing.is_empty() {
                    m.push_str(&format!(
                        " it lacks the contribution of rank{} {}",
                        if missing.len() == 1 { "" } else { "s" },
                        missing.join(", ")
                    ));
                }
                if !extra.is_empty() {
                    m.push_str(&format!(
                        " it includes rank{} {} that should not be there",
                        if extra.len() == 1 { "" } else { "s" },
                        extra.join(", ")
                    ));
                }
                out.push(find(
                    Code::IrWrongResult,
                    r,
                    None,
                    m,
                    "a send or receive on the path of the missing contribution is probably dropped",
                ));
                continue;
            }
            if matches!(sp.kind, CollectiveKind::Allreduce | CollectiveKind::Barrier) {
                match reference.get(&s) {
                    None => {
                        reference.insert(s, (r, t));
                    }
                    Some((r0, t0)) if *t0 != t => {
                        let (mut b1, mut b2) = (24, 24);
                        out.push(find(
                            Code::IrOrder,
                            r,
                            None,
                            format!(
                                "rank {r} combines out[{s}] as {} but rank {r0} as {}, so floating-point results differ between ranks",
                                terms.show(t, &mut b1),
                                terms.show(*t0, &mut b2)
                            ),
                            "every rank must combine contributions in the same order (the recursive-multiplying paper's consistency rule)",
                        ));
                    }
                    Some(_) => {}
                }
            }
        }
    }
}
