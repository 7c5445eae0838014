//! Symbolic execution of an MSCCL XML with `ir::verify`: the XML becomes an [`ir::Program`]
//! whose dependency graph is the executor's, and the verifier proves it (or finds the hang or
//! the wrong result).
//!
//! Semantics (msccl-xml.md section 1.3, kernel): the steps of a thread block run in order; a
//! step with `depid`/`deps` (or a `nop` before it) waits until step `deps` of block `depid` has
//! finished; sends pair FIFO with receives per (sender, receiver, channel), so the channel is
//! the IR tag; a send is buffered (it finishes without waiting for the receive, as in
//! msccl-tools and the IR). Step types: `s` send, `r` receive, `rcs` receive then send the
//! stored value, `rrc` `dst = src ⊕ message`, `rrcs` the same then send `dst`, `rrs` reduce
//! into a per-block temporary scratch slot and send it (nothing stored), `cpy`, `re`
//! (`dst = dst ⊕ src`). A cycle in this graph is a kernel that hangs (E0035 from the
//! verifier); a slot that ends with the wrong contributions is a wrong XML.
//!
//! An XML's buffers have no layout: any slot, of scratch above all, may hold any chunk at any
//! time, so the program is verified with [`ir::Program::any_layout`] set and only the execution
//! (which follows each chunk to the output slot it must reach) judges where data goes. What is
//! not wrong but not proved either comes back as caveats ([`Outcome::Caveats`]): ranks that
//! combine in different orders (every finding an E0034 of the verifier: each rank holds the
//! right contributions, floating-point results may differ in the last bits) are E0052, and a
//! `coll` of the executor that collc cannot execute (alltoallv, gather, ...) is E0053. An
//! all-to-all's buffers are `ngpus` blocks of `nchunksperloop / ngpus` chunks, block `j` of
//! rank `r`'s input bound for rank `j`; in place (`inplace="1"`: send and receive buffer are
//! one) `i` and `o` are that one buffer.
//!
//! In-place calls alias the buffers (msccl-xml.md section 1.4): allreduce, broadcast and reduce
//! run on the input (`i` and `o` are one buffer), then the output is compared; allgather runs
//! on the output with rank r's input at part r (copied there first); reduce-scatter runs on
//! the input and its result is read from part r. An XML marked both in-place and out-of-place
//! is executed both ways. The root of a broadcast or reduce is not in the XML: it is the one
//! rank that receives nothing (broadcast) or sends nothing (reduce), unless the caller knows it.

use super::{Algo, At, MBuf, Problem, StepType, coll_kind};
use crate::diag::Code;
use crate::ir::{self, Buf, OpKind, Proc, ProcKind, Program, Slice, Spec, verify::Proof};
use crate::sema::model::{CollectiveKind, Dtype, ReduceOp};

fn invalid(at: At, m: String, help: &str) -> Problem {
    Problem::new(Code::MscclInvalid, at, m, help)
}

/// What the symbolic execution established about an XML in which it found nothing wrong.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Every mode the XML declares computes the collective, each rank combining in the same
    /// order.
    Proved(Proof),
    /// Nothing wrong, but no full proof either; never empty: [`Code::MscclOrder`] (per
    /// difference of order, the modes it shows in) or [`Code::MscclUnverified`].
    Caveats(Vec<Problem>),
}

/// E0053 for an XML of a collective collc cannot execute.
fn unverified(a: &Algo) -> Problem {
    Problem::new(
        Code::MscclUnverified,
        At::Algo,
        format!(
            "collc checked the structure of this coll=\"{}\" XML but cannot execute it, so its result is unverified",
            a.coll
        ),
        "collc executes allreduce, allgather, reducescatter, broadcast, reduce and alltoall; test the XML on the runtime (`collc check --strict` makes this an error)",
    )
}

/// Verifies `a` (which passed [`super::rules::check`]) in every mode it declares: the proof,
/// the caveats of an XML that is not wrong but not fully proved, or the problems.
pub fn verify(a: &Algo) -> Result<Outcome, Vec<Problem>> {
    let Some(kind) = coll_kind(&a.coll) else {
        return Ok(Outcome::Caveats(vec![unverified(a)]));
    };
    let root = match (kind.has_root(), a.root) {
        (false, _) => None,
        (true, Some(r)) => Some(r),
        (true, None) => Some(infer_root(a, kind)?),
    };
    let mut proof = None;
    // Differences of order: (the gpu and message of the first finding, how many more, modes).
    let mut orders: Vec<(At, String, usize, Vec<&str>)> = Vec::new();
    for inplace in [false, true] {
        if (inplace && a.inplace) || (!inplace && a.outofplace) {
            let p = program(a, kind, root, inplace);
            let mode = if inplace { "in place" } else { "out of place" };
            let fs = match ir::verify::verify(&p.prog) {
                Ok(pr) => {
                    proof = Some(pr);
                    continue;
                }
                Err(fs) => fs,
            };
            let at = |f: &ir::verify::Finding| {
                let (gi, orig) = &p.origin[f.proc as usize];
                f.op.and_then(|o| orig.get(o as usize).copied())
                    .map_or(At::Gpu(*gi), |(t, s)| At::Step(*gi, t as usize, s as usize))
            };
            match fs.first() {
                Some(f) if fs.iter().all(|f| f.code == Code::IrOrder) => {
                    match orders.iter_mut().find(|o| o.1 == f.message) {
                        Some(o) => o.3.push(mode),
                        None => orders.push((at(f), f.message.clone(), fs.len() - 1, vec![mode])),
                    }
                }
                _ => {
                    return Err(fs
                        .iter()
                        .map(|f| {
                            let what = match f.code {
                                Code::IrDeadlock => "the XML hangs",
                                Code::IrRace => "the XML has a data race",
                                Code::IrOrder => "the ranks combine in different orders",
                                _ => "the XML computes the wrong result",
                            };
                            invalid(at(f), format!("{what} ({mode}): {}", f.message), &format!("{} (collc executed the XML as its IR: one op per send, receive, copy or reduction of each step)", f.help))
                        })
                        .collect());
                }
            }
        }
    }
    if !orders.is_empty() {
        return Ok(Outcome::Caveats(
            orders
                .into_iter()
                .map(|(at, message, more, modes)| {
                    // The verifier keeps at most MAX_FINDINGS findings, the first included.
                    let more = match more {
                        0 => String::new(),
                        1 => " (and 1 more rank and slot)".to_string(),
                        k if k + 1 >= ir::verify::MAX_FINDINGS => {
                            format!(" (and {k} or more ranks and slots)")
                        }
                        k => format!(" (and {k} more ranks and slots)"),
                    };
                    // The finding's own consequence is what the message leads with.
                    let message = message
                        .strip_suffix(", so floating-point results differ between ranks")
                        .unwrap_or(&message);
                    Problem::new(
                        Code::MscclOrder,
                        at,
                        format!(
                            "correct ({}); results may differ in the last bits across ranks: {message}{more}",
                            modes.join(" and ")
                        ),
                        "every rank ends with every contribution exactly once; to make ranks agree bitwise, combine in one order on every rank (`collc check --strict` makes this an error)",
                    )
                })
                .collect(),
        ));
    }
    proof.map(Outcome::Proved).ok_or_else(|| {
        vec![invalid(
            At::Algo,
            "neither in place nor out of place".into(),
            "set inplace or outofplace",
        )]
    })
}

/// Scratch slots gpu `g`'s `rrs` steps need beyond its declared scratch: each thread block
/// reduces into a temporary of its own (the executor's), as large as its largest `rrs` step;
/// the steps of a block run in order, so they share it. `g` passed [`super::rules::check`].
pub(super) fn rrs_slots(g: &super::Gpu) -> u64 {
    g.tbs.iter().map(rrs_tb_slots).sum()
}

fn rrs_tb_slots(t: &super::Tb) -> u64 {
    t.steps
        .iter()
        .filter(|s| s.ty == StepType::RecvReduceSend)
        .map(|s| s.cnt.max(0) as u64)
        .max()
        .unwrap_or(0)
}

fn infer_root(a: &Algo, kind: CollectiveKind) -> Result<u32, Vec<Problem>> {
    let quiet: Vec<u32> = a
        .gpus
        .iter()
        .filter(|g| {
            !g.tbs.iter().any(|t| {
                t.steps.iter().any(|s| {
                    if kind == CollectiveKind::Broadcast {
                        s.ty.receives()
                    } else {
                        s.ty.sends()
                    }
                })
            })
        })
        .map(|g| g.id as u32)
        .collect();
    match quiet.as_slice() {
        [r] => Ok(*r),
        _ => Err(vec![invalid(
            At::Algo,
            format!(
                "cannot tell the root of this {}: {} ranks never {}",
                a.coll,
                quiet.len(),
                if kind == CollectiveKind::Broadcast {
                    "receive"
                } else {
                    "send"
                }
            ),
            "a broadcast's root receives nothing and a reduce's root sends nothing; exactly one rank must",
        )]),
    }
}

struct Converted {
    prog: Program,
    /// Per process: its gpu's index in the file, and per op the (tb, step) it came from.
    origin: Vec<(usize, Vec<(u32, u32)>)>,
}

/// The XML as an IR program for one mode.
fn program(a: &Algo, kind: CollectiveKind, root: Option<u32>, inplace: bool) -> Converted {
    let n = a.ngpus as u32;
    let parts = super::size_multiplier(kind, u64::from(n)) as u32;
    let cpp = (a.nchunksperloop as u32) / parts.max(1);
    let spec = Spec {
        kind,
        ranks: n,
        part_elements: u64::from(cpp),
        chunks_per_part: cpp,
        dtype: Dtype::F32,
        op: ReduceOp::Sum,
        root,
    };
    let mut prog = Program::new(format!("msccl {}", a.name), spec);
    prog.any_layout = true;
    let mut origin = vec![(0, Vec::new()); n as usize];
    let mut order: Vec<usize> = (0..a.gpus.len()).collect();
    order.sort_by_key(|g| a.gpus[*g].id);
    for gi in order {
        let g = &a.gpus[gi];
        let r = g.id as u32;
        let map = |b: MBuf, off: i64, cnt: i64| -> Slice {
            let (off, cnt) = (off as u32, cnt as u32);
            let part = r * cpp;
            let (buf, start) = match (b, inplace, kind) {
                (MBuf::S, _, _) => (Buf::Scratch, off),
                (MBuf::I, false, _) => (Buf::Input, off),
                (MBuf::O, false, _) => (Buf::Output, off),
                (MBuf::O, true, CollectiveKind::Allgather) => (Buf::Output, off),
                (MBuf::I, true, CollectiveKind::Allgather) => (Buf::Output, part + off),
                (MBuf::O, true, CollectiveKind::ReduceScatter) => (Buf::Input, part + off),
                (_, true, _) => (Buf::Input, off),
            };
            Slice::new(buf, start, cnt)
        };
        // Temporaries for rrs (reduce and send, nothing stored): after the declared scratch,
        // one region per thread block ([`rrs_slots`]); `rules::too_large` has bounded the sum.
        let mut tmp_at = Vec::with_capacity(g.tbs.len());
        let mut scratch = g.s_chunks as u32;
        for t in &g.tbs {
            tmp_at.push(scratch);
            scratch += rrs_tb_slots(t) as u32;
        }
        let mut proc = Proc {
            kind: ProcKind::Rank,
            scratch,
            ops: Vec::new(),
        };
        let mut orig: Vec<(u32, u32)> = Vec::new();
        let prologue = (inplace && kind == CollectiveKind::Allgather).then(|| {
            proc.ops.push(ir::Op {
                kind: OpKind::Copy {
                    dst: Slice::new(Buf::Output, r * cpp, cpp),
                    src: Slice::new(Buf::Input, 0, cpp),
                },
                deps: ir::Deps::new(),
            });
            orig.push((0, 0));
            0u32
        });
        // Last op at or before each step of each block, and the waits to add afterwards.
        let mut last_upto: Vec<Vec<u32>> = Vec::with_capacity(g.tbs.len());
        let mut waits: Vec<(u32, u32, u32)> = Vec::new();
        for (ti, tb) in g.tbs.iter().enumerate() {
            let mut prev = prologue;
            let mut upto = Vec::with_capacity(tb.steps.len());
            let mut pending: Vec<(u32, u32)> = Vec::new();
            let chan = tb.chan as u32;
            let (sp, rp) = (tb.send as u32, tb.recv as u32);
            for (si, s) in tb.steps.iter().enumerate() {
                if s.depid >= 0 {
                    pending.push((s.depid as u32, s.deps as u32));
                }
                let src = map(s.src, s.srcoff, s.cnt);
                let dst = map(s.dst, s.dstoff, s.cnt);
                let tmp = Slice::new(Buf::Scratch, tmp_at[ti], s.cnt as u32);
                let kinds: Vec<OpKind> = match s.ty {
                    StepType::Nop => Vec::new(),
                    _ if s.cnt == 0 => Vec::new(),
                    StepType::Send => vec![OpKind::Send {
                        peer: sp,
                        src,
                        tag: chan,
                    }],
                    StepType::Recv => vec![OpKind::Recv {
                        peer: rp,
                        dst,
                        tag: chan,
                    }],
                    StepType::RecvCopySend => vec![
                        OpKind::Recv {
                            peer: rp,
                            dst,
                            tag: chan,
                        },
                        OpKind::Send {
                            peer: sp,
                            src: dst,
                            tag: chan,
                        },
                    ],
                    StepType::RecvReduceSend => vec![
                        OpKind::Copy { dst: tmp, src },
                        OpKind::RecvReduce {
                            peer: rp,
                            dst: tmp,
                            tag: chan,
                        },
                        OpKind::Send {
                            peer: sp,
                            src: tmp,
                            tag: chan,
                        },
                    ],
                    StepType::RecvReduceCopy | StepType::RecvReduceCopySend => {
                        let mut v = Vec::with_capacity(3);
                        if src != dst {
                            v.push(OpKind::Copy { dst, src });
                        }
                        v.push(OpKind::RecvReduce {
                            peer: rp,
                            dst,
                            tag: chan,
                        });
                        if s.ty == StepType::RecvReduceCopySend {
                            v.push(OpKind::Send {
                                peer: sp,
                                src: dst,
                                tag: chan,
                            });
                        }
                        v
                    }
                    StepType::Copy => vec![OpKind::Copy { dst, src }],
                    StepType::Reduce => vec![OpKind::Reduce { dst, src }],
                };
                for k in kinds {
                    let id = proc.ops.len() as u32;
                    proc.ops.push(ir::Op {
                        kind: k,
                        deps: prev.into_iter().collect(),
                    });
                    orig.push((ti as u32, si as u32));
                    for (dt, ds) in pending.drain(..) {
                        waits.push((id, dt, ds));
                    }
                    prev = Some(id);
                }
                upto.push(prev.unwrap_or(u32::MAX));
            }
            last_upto.push(upto);
        }
        for (id, dt, ds) in waits {
            let d = last_upto[dt as usize][ds as usize];
            if d != u32::MAX && d != id && !proc.ops[id as usize].deps.contains(&d) {
                proc.ops[id as usize].deps.push(d);
            }
        }
        // In place, the one buffer ends holding the output: an all-to-all's all of it.
        let epilogue = match (inplace, kind) {
            (true, CollectiveKind::Allgather) | (false, _) => None,
            (true, CollectiveKind::ReduceScatter) => Some(Slice::new(Buf::Input, r * cpp, cpp)),
            (true, CollectiveKind::Alltoall) => Some(Slice::new(Buf::Input, 0, n * cpp)),
            (true, _) => Some(Slice::new(Buf::Input, 0, cpp)),
        };
        if let Some(src) = epilogue {
            let deps: ir::Deps = last_upto
                .iter()
                .filter_map(|u| u.last().copied())
                .filter(|d| *d != u32::MAX)
                .collect();
            proc.ops.push(ir::Op {
                kind: OpKind::Copy {
                    dst: Slice::new(Buf::Output, 0, src.count),
                    src,
                },
                deps,
            });
            orig.push((0, 0));
        }
        prog.procs[r as usize] = proc;
        origin[r as usize] = (gi, orig);
    }
    Converted { prog, origin }
}
