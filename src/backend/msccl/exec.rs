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

/// Verifies `a` (which passed [`super::rules::check`]) in every mode it declares.
pub fn verify(a: &Algo) -> Result<Proof, Vec<Problem>> {
    let Some(kind) = coll_kind(&a.coll) else {
        return Err(vec![invalid(
            At::Algo,
            format!(
                "collc cannot verify coll=\"{}\" (it proves allreduce, allgather, reducescatter, broadcast and reduce)",
                a.coll
            ),
            "the XML may still be fine; collc checked its structure but cannot execute it",
        )]);
    };
    let root = match (kind.has_root(), a.root) {
        (false, _) => None,
        (true, Some(r)) => Some(r),
        (true, None) => Some(infer_root(a, kind)?),
    };
    let mut proof = None;
    for inplace in [false, true] {
        if (inplace && a.inplace) || (!inplace && a.outofplace) {
            let p = program(a, kind, root, inplace);
            let mode = if inplace { "in place" } else { "out of place" };
            match ir::verify::verify(&p.prog) {
                Ok(pr) => proof = Some(pr),
                Err(fs) => {
                    return Err(fs
                        .iter()
                        .map(|f| {
                            let (gi, orig) = &p.origin[f.proc as usize];
                            let at = f.op.and_then(|o| orig.get(o as usize).copied()).map_or(At::Gpu(*gi), |(t, s)| At::Step(*gi, t as usize, s as usize));
                            let what = match f.code {
                                Code::IrDeadlock => "the XML hangs",
                                Code::IrRace => "the XML has a data race",
                                _ => "the XML computes the wrong result",
                            };
                            invalid(at, format!("{what} ({mode}): {}", f.message), &format!("{} (collc executed the XML as its IR: one op per send, receive, copy or reduction of each step)", f.help))
                        })
                        .collect());
                }
            }
        }
    }
    proof.ok_or_else(|| {
        vec![invalid(
            At::Algo,
            "neither in place nor out of place".into(),
            "set inplace or outofplace",
        )]
    })
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
        // Temporaries for rrs (reduce and send, nothing stored): a region after the declared
        // scratch, slot `base + srcoff` for source offset `srcoff`, so it holds the same chunk.
        let round = |x: u32| x.div_ceil(cpp) * cpp;
        let has_rrs = g
            .tbs
            .iter()
            .any(|t| t.steps.iter().any(|s| s.ty == StepType::RecvReduceSend));
        let tmp_base = round(g.s_chunks as u32);
        let scratch = if has_rrs {
            tmp_base + round((a.nchunksperloop as u32).max(g.s_chunks as u32))
        } else {
            g.s_chunks as u32
        };
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
                let tmp = Slice::new(
                    Buf::Scratch,
                    tmp_base + s.srcoff.max(0) as u32,
                    s.cnt as u32,
                );
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
        let epilogue = match (inplace, kind) {
            (true, CollectiveKind::Allgather) | (false, _) => None,
            (true, CollectiveKind::ReduceScatter) => Some(Slice::new(Buf::Input, r * cpp, cpp)),
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
                    dst: Slice::new(Buf::Output, 0, cpp),
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
