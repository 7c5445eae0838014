//! Symbolic execution and the postcondition (steps 4 and 5 of the verifier).

use super::terms::{RankSet, TermId, Terms};
use super::{Finding, Index, MAX_FINDINGS, Matching, NONE, Proof, find, who};
use crate::diag::Code;
use crate::ir::{Buf, OpId, OpKind, ProcId, Program, Slice};
use crate::sema::model::CollectiveKind;
use rustc_hash::FxHashMap;

/// Every slot of every process in one flat array: `NONE` for empty, otherwise a term id.
struct Slots {
    /// Per process: offsets of its input, output and scratch slots.
    at: Vec<[u32; 3]>,
    v: Vec<TermId>,
}

impl Slots {
    fn get(&self, p: ProcId, buf: Buf, k: u32) -> TermId {
        self.v[(self.at[p as usize][buf_ix(buf)] + k) as usize]
    }

    fn set(&mut self, p: ProcId, buf: Buf, k: u32, t: TermId) {
        self.v[(self.at[p as usize][buf_ix(buf)] + k) as usize] = t;
    }
}

fn buf_ix(b: Buf) -> usize {
    match b {
        Buf::Input => 0,
        Buf::Output => 1,
        Buf::Scratch => 2,
    }
}

/// The symbolic execution, one op at a time ([`Exec::step`]) in any topological order.
pub(super) struct Exec<'a> {
    p: &'a Program,
    ix: &'a Index,
    m: &'a Matching,
    terms: Terms,
    slots: Slots,
    /// Messages in flight live in one arena; `mail_at[send]` is where the send's data starts.
    mail_at: Vec<u32>,
    arena: Vec<TermId>,
    out: Vec<Finding>,
    messages: usize,
}

/// Executes the ops in `order` (a topological order); see [`Exec`].
pub(super) fn execute(
    p: &Program,
    ix: &Index,
    m: &Matching,
    order: &[u32],
) -> Result<Proof, Vec<Finding>> {
    let mut e = Exec::new(p, ix, m);
    for &g in order {
        e.step(g);
    }
    e.finish()
}

impl<'a> Exec<'a> {
    pub(super) fn new(p: &'a Program, ix: &'a Index, m: &'a Matching) -> Exec<'a> {
        let mut terms = Terms::new(p.spec.ranks);
        let mut slots = Slots {
            at: Vec::with_capacity(p.procs.len()),
            v: Vec::new(),
        };
        for pi in 0..p.procs.len() as ProcId {
            let mut at = [0u32; 3];
            for b in [Buf::Input, Buf::Output, Buf::Scratch] {
                at[buf_ix(b)] = slots.v.len() as u32;
                let len = p.buffer_len(pi, b);
                if b == Buf::Input {
                    for k in 0..len {
                        let t = terms.leaf(pi, k);
                        slots.v.push(t);
                    }
                } else {
                    slots.v.resize(slots.v.len() + len as usize, NONE);
                }
            }
            slots.at.push(at);
        }
        Exec {
            p,
            ix,
            m,
            terms,
            slots,
            mail_at: vec![NONE; ix.total()],
            arena: Vec::new(),
            out: Vec::new(),
            messages: 0,
        }
    }

    /// Runs global op `g`, whose predecessors have all run.
    pub(super) fn step(&mut self, g: u32) {
        let (pi, oi) = self.ix.locate(g);
        self.step_at(pi, oi, g);
    }

    /// Runs op `oi` of process `pi`, global op `g`.
    pub(super) fn step_at(&mut self, pi: ProcId, oi: OpId, g: u32) {
        let p = self.p;
        let op = &p.procs[pi as usize].ops[oi as usize];
        let out = &mut self.out;
        // Writes `vals(i)` into `dst` slot by slot, combining when `reduce` is set.
        let mut store = |slots: &mut Slots,
                         terms: &mut Terms,
                         dst: Slice,
                         reduce: bool,
                         val: &dyn Fn(&Slots, u32) -> TermId| {
            for i in 0..dst.count {
                let slot = dst.start + i;
                let v = val(slots, i);
                if !reduce {
                    slots.set(pi, dst.buf, slot, v);
                    continue;
                }
                let cur = slots.get(pi, dst.buf, slot);
                let res = if cur == NONE {
                    Err(format!(
                        "combines into {}[{slot}], which holds nothing yet",
                        dst.buf.name()
                    ))
                } else if v == NONE {
                    Err(format!(
                        "combines an empty value into {}[{slot}]",
                        dst.buf.name()
                    ))
                } else {
                    terms.pair(cur, v)
                };
                match res {
                    Ok(t) => slots.set(pi, dst.buf, slot, t),
                    Err(why) if out.len() < MAX_FINDINGS => out.push(find(
                        Code::IrWrongResult,
                        pi,
                        Some(oi),
                        format!("op {oi} of {} {why}", who(p, pi)),
                        "each contribution must be combined exactly once, into a slot that already holds a partial result of the same chunk",
                    )),
                    Err(_) => {}
                }
            }
        };
        match op.kind {
            OpKind::Send { src, .. } => {
                self.messages += 1;
                self.mail_at[g as usize] = self.arena.len() as u32;
                for k in src.slots() {
                    self.arena.push(self.slots.get(pi, src.buf, k));
                }
            }
            OpKind::Recv { dst, .. } | OpKind::RecvReduce { dst, .. } => {
                let s = self.m.send_of[g as usize];
                let at = if s == NONE {
                    NONE
                } else {
                    self.mail_at[s as usize]
                };
                let reduce = matches!(op.kind, OpKind::RecvReduce { .. });
                let arena = &self.arena;
                store(&mut self.slots, &mut self.terms, dst, reduce, &|_, i| {
                    if at == NONE {
                        NONE
                    } else {
                        arena[(at + i) as usize]
                    }
                });
            }
            OpKind::Reduce { dst, src } | OpKind::Copy { dst, src } => {
                let reduce = matches!(op.kind, OpKind::Reduce { .. });
                store(&mut self.slots, &mut self.terms, dst, reduce, &|s, i| {
                    s.get(pi, src.buf, src.start + i)
                });
            }
        }
    }

    /// The findings of the execution, or the postcondition's.
    pub(super) fn finish(self) -> Result<Proof, Vec<Finding>> {
        let Exec {
            p,
            terms,
            slots,
            mut out,
            messages,
            ..
        } = self;
        if !out.is_empty() {
            return Err(out);
        }
        postcondition(p, &terms, &slots, &mut out);
        if out.is_empty() {
            Ok(Proof {
                ops: p.op_count(),
                messages,
                terms: terms.len(),
            })
        } else {
            Err(out)
        }
    }
}

fn postcondition(p: &Program, terms: &Terms, slots: &Slots, out: &mut Vec<Finding>) {
    let sp = &p.spec;
    let n = sp.ranks;
    let cpp = sp.chunks_per_part;
    // For each rank and output slot: the expected input slot, and one rank (`Some`) or all
    // ranks (`None`) as contributors; nothing when the collective leaves the slot undefined.
    let expect = |r: u32, s: u32| -> Option<(u32, Option<u32>)> {
        match sp.kind {
            CollectiveKind::Allreduce | CollectiveKind::Barrier => Some((s, None)),
            CollectiveKind::Allgather => Some((s % cpp, Some(s / cpp))),
            CollectiveKind::ReduceScatter => Some((r * cpp + s, None)),
            CollectiveKind::Broadcast => Some((s, Some(sp.root.unwrap_or(0)))),
            CollectiveKind::Reduce => (Some(r) == sp.root).then_some((s, None)),
            // Block i of rank r's output is block r of rank i's input.
            CollectiveKind::Alltoall => Some((r * cpp + s % cpp, Some(s / cpp))),
        }
    };
    // Term ranks are sorted and distinct, so "all ranks" is a length check.
    let fits = |set: &RankSet, want: Option<u32>| match want {
        Some(x) => set.len() == 1 && set.to_vec() == [x],
        None => set.len() == n as usize,
    };
    let mut reference: FxHashMap<u32, (u32, TermId)> = FxHashMap::default();
    // Once `out` is full, scanning goes on only while every finding in it is an order
    // difference (E0034): a caller may accept a program whose only findings are those, so a
    // wrong result further on must still be reported (it takes the last place).
    let push = |out: &mut Vec<Finding>, f: Finding| {
        if out.len() < MAX_FINDINGS {
            out.push(f);
        } else if f.code != Code::IrOrder {
            if let Some(last) = out.last_mut() {
                *last = f;
            }
        }
    };
    for r in 0..n {
        for s in 0..sp.output_chunks() {
            let Some((slot, want)) = expect(r, s) else {
                continue;
            };
            if out.len() >= MAX_FINDINGS {
                if out.iter().any(|f| f.code != Code::IrOrder) {
                    return;
                }
            }
            let t = slots.get(r, Buf::Output, s);
            if t == NONE {
                push(
                    out,
                    find(
                        Code::IrWrongResult,
                        r,
                        None,
                        format!("rank {r}'s out[{s}] is never written"),
                        "every output slot must receive its result",
                    ),
                );
                continue;
            }
            let (gslot, gset) = (terms.slot[t as usize], &terms.ranks[t as usize]);
            if gslot != slot {
                push(
                    out,
                    find(
                        Code::IrWrongResult,
                        r,
                        None,
                        format!(
                            "rank {r}'s out[{s}] holds chunk {gslot} of the input, but should hold chunk {slot}"
                        ),
                        "check which slots the final copies and receives write",
                    ),
                );
                continue;
            }
            if !fits(gset, want) {
                let granks = gset.to_vec();
                let ranks: Vec<u32> = match want {
                    Some(x) => vec![x],
                    None => (0..n).collect(),
                };
                let missing: Vec<String> = ranks
                    .iter()
                    .filter(|x| granks.binary_search(x).is_err())
                    .take(8)
                    .map(|x| x.to_string())
                    .collect();
                let extra: Vec<String> = granks
                    .iter()
                    .filter(|x| ranks.binary_search(x).is_err())
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
                push(
                    out,
                    find(
                        Code::IrWrongResult,
                        r,
                        None,
                        m,
                        "a send or receive on the path of the missing contribution is probably dropped",
                    ),
                );
                continue;
            }
            if matches!(sp.kind, CollectiveKind::Allreduce | CollectiveKind::Barrier) {
                match reference.get(&s) {
                    None => {
                        reference.insert(s, (r, t));
                    }
                    Some((r0, t0)) if *t0 != t => {
                        let (mut b1, mut b2) = (24, 24);
                        push(
                            out,
                            find(
                                Code::IrOrder,
                                r,
                                None,
                                format!(
                                    "rank {r} combines out[{s}] as {} but rank {r0} as {}, so floating-point results differ between ranks",
                                    terms.show(t, &mut b1),
                                    terms.show(*t0, &mut b2)
                                ),
                                "every rank must combine contributions in the same order (the recursive-multiplying paper's consistency rule)",
                            ),
                        );
                    }
                    Some(_) => {}
                }
            }
        }
    }
}
