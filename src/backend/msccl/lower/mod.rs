//! Lowering a verified [`Program`] into an MSCCL [`Algo`]: buffers, fusion, thread blocks,
//! channels and steps.
//!
//! 1. **Order and channels** ([`order`]). One global topological order of all ops (local
//!    dependencies and each send before its matched receive; Kahn's algorithm, FIFO), in which
//!    every connection's receives come in the order of its sends, and the channel of every
//!    message, chosen as its send is placed: a forwarded chunk keeps the channel it arrived on,
//!    any other message takes the channel its two ends have used least, among the `channels`
//!    asked for (more when a channel would hold more thread blocks than the executor allows).
//!    Every thread block lists its steps in this order, every cross-block wait points
//!    backwards in it, and every send precedes its receive, so the executor's dependency graph
//!    (steps in order per thread block, waits, FIFO pairing per connection) is acyclic: the XML
//!    cannot hang. Sends are modelled as buffered, as in msccl-tools (`passes.py`) and NCCL's
//!    connection FIFOs. Channels are numbered densely, so `nchannels` is the number used.
//! 2. **Buffers** ([`Layout`]): IR input, output and scratch become `i`, `o` and `s`. In place,
//!    input and output are one buffer, as the runtime's in-place calls make them (allreduce,
//!    broadcast and reduce: `i`; allgather: `o`, rank r's input at part r; reduce-scatter: `i`,
//!    rank r's output at part r); copies that become no-ops are dropped. An all-to-all is built
//!    out of place only (its schedules overwrite blocks still to be sent: E0030).
//! 3. **Fusion** ([`fuse`], after msccl-tools' `rrcs`/`rcs` fusion):
//!    a copy `out[x] <- in[x]` whose only reader is a receive-reduce into `out[x]` folds into it
//!    (`rrc` with `src = in[x]`); a send of exactly what a receive(-reduce) just wrote, with no
//!    other dependency after that receive, fuses with it into `rcs` (receive) or `rrcs`
//!    (receive-reduce); `rrcs` becomes `rrs` when the stored value is never read again and is
//!    overwritten later (a dead store), as for the ring's partial sums. A fusion moves a step:
//!    a forwarding send back to its receive's place, a receive folded into its reduction
//!    forward to the reduction's. It is made only when the two share a channel and the step
//!    passes no other message of its connection (same peer and channel), so both ends of every
//!    connection keep the order of step 1 and many trees or peers can share one channel.
//! 4. **Thread blocks.** Per (rank, channel) a send peer and a receive peer each get at most one
//!    thread block; a fused step needs the block of its (send, receive) pair and is split back
//!    into two steps when the two peers are already bound to different blocks. Local copies and
//!    reductions go to the block of their latest dependency (or, with none, of their first
//!    dependent). The validator re-derives the FIFO pairing per connection from the XML and
//!    checks it.
//! 5. **Steps.** Dependencies inside a block are implicit. Of the waits on other blocks only
//!    the latest step per block is kept; all but one become preceding `nop`s (the executor
//!    allows one wait per step), and every step waited on gets `hasdep="1"`. A slice is split
//!    into steps of at most 71 chunks (`cnt` < 72), and with instances at part boundaries.
//! 6. **Instances.** Instance `i` is a copy of every thread block on channels
//!    `c + i * W` (`W`: the channels one instance uses), with its own sub-chunks: IR slot `part * cpp + j` is chunk
//!    `part * cpp * I + i * cpp + j` of the XML (so `nchunksperloop` grows by `I`).
//!
//! Work is linear in the number of ops (plus sorting the messages once).

mod chans;
mod fuse;
mod order;
mod tbs;

use super::{Algo, Gpu, MBuf, Options, Problem, Step, StepType, Tb, coll_name, limits};
use crate::diag::Code;
use crate::ir::{Buf, OpKind, ProcKind, Program, Slice};
use crate::sema::model::CollectiveKind;
use rustc_hash::FxHashMap;

const NONE: u32 = u32::MAX;

/// A slice in XML terms (instance 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct MSlice {
    pub buf: MBuf,
    pub off: u32,
    pub cnt: u32,
}

/// Where IR buffers live in the XML's buffers.
pub(super) struct Layout {
    pub inplace: bool,
    pub kind: CollectiveKind,
    pub cpp: u32,
}

impl Layout {
    pub fn map(&self, rank: u32, s: Slice) -> MSlice {
        let part = rank * self.cpp;
        let (buf, off) = match (s.buf, self.inplace, self.kind) {
            (Buf::Scratch, _, _) => (MBuf::S, s.start),
            (Buf::Input, false, _) => (MBuf::I, s.start),
            (Buf::Output, false, _) => (MBuf::O, s.start),
            (Buf::Input, true, CollectiveKind::Allgather) => (MBuf::O, part + s.start),
            (Buf::Output, true, CollectiveKind::Allgather) => (MBuf::O, s.start),
            (Buf::Output, true, CollectiveKind::ReduceScatter) => (MBuf::I, part + s.start),
            (_, true, _) => (MBuf::I, s.start),
        };
        MSlice {
            buf,
            off,
            cnt: s.count,
        }
    }
}

/// An op after buffer mapping and fusion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MOp {
    Dropped,
    Send {
        peer: u32,
        src: MSlice,
    },
    Recv {
        peer: u32,
        dst: MSlice,
    },
    /// `dst = src ⊕ message` (`src == dst` unless a copy was folded in).
    RecvReduce {
        peer: u32,
        src: MSlice,
        dst: MSlice,
    },
    Copy {
        src: MSlice,
        dst: MSlice,
    },
    Reduce {
        src: MSlice,
        dst: MSlice,
    },
}

fn err(message: String, help: &str) -> Problem {
    Problem::new(Code::TargetUnsupported, super::At::Algo, message, help)
}

/// Lowers `p` (verified) under `opts`; limits are checked afterwards by the validator.
pub fn lower(p: &Program, opts: &Options) -> Result<Algo, Problem> {
    let spec = &p.spec;
    let Some(coll) = coll_name(spec.kind) else {
        return Err(err(
            format!("MSCCL has no {} collective", spec.kind.name()),
            "build a barrier for the `goal` or `sim` target, or use a zero-byte allreduce",
        ));
    };
    if p.procs.iter().any(|x| x.kind != ProcKind::Rank) || p.procs.len() != spec.ranks as usize {
        return Err(err(
            "the schedule runs on switches, which MSCCL cannot program".into(),
            "in-network schedules need the `p4`, `goal` or `sim` target",
        ));
    }
    if opts.inplace && spec.kind == CollectiveKind::Alltoall {
        return Err(err(
            "an in-place all-to-all: collc's all-to-all schedules overwrite blocks of the send buffer that are still to be sent".into(),
            "build it out of place (without `--inplace` or `inplace: true`); nccl-tests and msccl-tools run all-to-all out of place",
        ));
    }
    if opts.instances == 0 {
        return Err(err(
            "instances must be at least 1".into(),
            "give `--instances 1` or more",
        ));
    }
    let n = spec.ranks;
    let cpp = spec.chunks_per_part.max(1);
    let layout = Layout {
        inplace: opts.inplace,
        kind: spec.kind,
        cpp,
    };
    let order = match order::global_order(p, opts.channels) {
        Ok(o) => o,
        Err(order::Stuck::Cycle) => {
            return Err(err(
                "the schedule's dependencies have a cycle".into(),
                "this is a bug in collc's lowering; please report it",
            ));
        }
        Err(order::Stuck::Channels(a, b)) => {
            return Err(Problem::new(
                Code::MscclLimit,
                super::At::Algo,
                format!(
                    "rank {b} takes rank {a}'s messages in an order that needs more than {} channels to keep (the executor pairs messages first in, first out per peer and channel)",
                    limits::MAX_CHANNELS
                ),
                "use fewer chunks or trees",
            ));
        }
    };
    let chans = chans::Channels::new(p, &order);
    if chans.width.saturating_mul(opts.instances) > limits::MAX_CHANNELS {
        return Err(Problem::new(
            Code::MscclLimit,
            super::At::Algo,
            format!(
                "{} channel{} per instance times {} instances need {} channels; the executor has {}",
                chans.width,
                if chans.width == 1 { "" } else { "s" },
                opts.instances,
                chans.width.saturating_mul(opts.instances),
                limits::MAX_CHANNELS
            ),
            "use fewer instances or channels (channels used x instances at most 32)",
        ));
    }
    let mut gpus = Vec::with_capacity(n as usize);
    let mut per_rank: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for &(r, o) in &order.seq {
        per_rank[r as usize].push(o);
    }
    let mut max_chan = 0;
    for (r, ops) in per_rank.iter().enumerate() {
        let r = r as u32;
        let pos = &order.pos[order.base[r as usize] as usize..];
        let mops = fuse::fuse(p, r, ops, pos, &layout, &chans);
        let tbs = tbs::thread_blocks(p, r, ops, &mops, pos, opts, &chans, cpp);
        let (tbs, top) = instances(tbs, opts, cpp, chans.width);
        max_chan = max_chan.max(top);
        let (i_chunks, o_chunks) = match (opts.inplace, spec.kind) {
            (false, _) => (spec.input_chunks(), spec.output_chunks()),
            (true, CollectiveKind::Allgather) => (0, spec.output_chunks()),
            (true, _) => (spec.input_chunks(), 0),
        };
        gpus.push(Gpu {
            id: i64::from(r),
            i_chunks: i64::from(i_chunks * opts.instances),
            o_chunks: i64::from(o_chunks * opts.instances),
            s_chunks: scratch_used(&tbs),
            tbs,
        });
    }
    let big = spec.input_chunks().max(spec.output_chunks());
    Ok(Algo {
        name: p.name.clone(),
        proto: opts.proto,
        nchannels: i64::from(max_chan) + 1,
        nchunksperloop: i64::from(big) * i64::from(opts.instances),
        ngpus: i64::from(n),
        coll: coll.to_string(),
        inplace: opts.inplace,
        outofplace: !opts.inplace,
        min_bytes: opts.min_bytes.min(i64::MAX as u64) as i64,
        max_bytes: opts.max_bytes.min(i64::MAX as u64) as i64,
        gpus,
        root: spec.root,
    })
}

/// Scratch chunks the steps use (fusion may leave some of the IR's scratch unused; the
/// runtime allocates `s_chunks` of them per call).
fn scratch_used(tbs: &[Tb]) -> i64 {
    let mut top = 0;
    for s in tbs.iter().flat_map(|t| &t.steps) {
        let (src, dst) = super::rules::operands(s.ty);
        if src && s.src == MBuf::S {
            top = top.max(s.srcoff + s.cnt);
        }
        if dst && s.dst == MBuf::S {
            top = top.max(s.dstoff + s.cnt);
        }
    }
    top
}

/// Pieces `(relative start, count)` of a slice: at most `MAX_COUNT - 1` chunks each, and not
/// across a part boundary when `split_parts`.
pub(super) fn pieces(start: u32, count: u32, cpp: u32, split_parts: bool) -> Vec<(u32, u32)> {
    let mut out = Vec::with_capacity(1);
    let mut x = 0;
    while x < count {
        let mut len = (count - x).min(limits::MAX_COUNT - 1);
        if split_parts {
            len = len.min(cpp - (start + x) % cpp);
        }
        out.push((x, len));
        x += len;
    }
    if out.is_empty() {
        out.push((0, 0));
    }
    out
}

/// Replicates the thread blocks of instance 0 (on channels below `width`) into
/// `opts.instances` instances; returns them and the highest channel used.
fn instances(tbs: Vec<Tb>, opts: &Options, cpp: u32, width: u32) -> (Vec<Tb>, u32) {
    let inst = opts.instances;
    let t = tbs.len() as i64;
    let max_chan = tbs.iter().map(|x| x.chan as u32).max().unwrap_or(0);
    if inst == 1 {
        return (tbs, max_chan);
    }
    let c = i64::from(width);
    let mut out = Vec::with_capacity(tbs.len() * inst as usize);
    let cpp64 = i64::from(cpp);
    let scale = |off: i64, i: i64| {
        if off < 0 {
            off
        } else {
            (off / cpp64) * cpp64 * i64::from(inst) + i * cpp64 + off % cpp64
        }
    };
    for i in 0..i64::from(inst) {
        for tb in &tbs {
            out.push(Tb {
                send: tb.send,
                recv: tb.recv,
                chan: tb.chan + i * c,
                steps: tb
                    .steps
                    .iter()
                    .map(|s| Step {
                        srcoff: scale(s.srcoff, i),
                        dstoff: scale(s.dstoff, i),
                        depid: if s.depid < 0 {
                            s.depid
                        } else {
                            s.depid + i * t
                        },
                        ..s.clone()
                    })
                    .collect(),
            });
        }
    }
    let top = max_chan + (inst - 1) * width;
    (out, top)
}

/// Per-rank step list of one thread block under construction.
pub(super) fn step(
    ty: StepType,
    src: Option<MSlice>,
    dst: Option<MSlice>,
    rel: u32,
    cnt: u32,
) -> Step {
    let (s, d) = match (src, dst) {
        (Some(s), Some(d)) => (s, d),
        (Some(s), None) => (s, s),
        (None, Some(d)) => (d, d),
        (None, None) => {
            return Step {
                ty,
                src: MBuf::I,
                srcoff: -1,
                dst: MBuf::O,
                dstoff: -1,
                cnt: 0,
                depid: -1,
                deps: -1,
                hasdep: false,
            };
        }
    };
    Step {
        ty,
        src: s.buf,
        srcoff: i64::from(s.off + rel),
        dst: d.buf,
        dstoff: i64::from(d.off + rel),
        cnt: i64::from(cnt),
        depid: -1,
        deps: -1,
        hasdep: false,
    }
}

/// The IR op kinds as mapped slices, before fusion.
pub(super) fn map_op(kind: &OpKind, r: u32, l: &Layout) -> MOp {
    match *kind {
        OpKind::Send { peer, src, .. } => MOp::Send {
            peer,
            src: l.map(r, src),
        },
        OpKind::Recv { peer, dst, .. } => MOp::Recv {
            peer,
            dst: l.map(r, dst),
        },
        OpKind::RecvReduce { peer, dst, .. } => {
            let d = l.map(r, dst);
            MOp::RecvReduce {
                peer,
                src: d,
                dst: d,
            }
        }
        OpKind::Copy { dst, src } => {
            let (s, d) = (l.map(r, src), l.map(r, dst));
            if s == d {
                MOp::Dropped
            } else {
                MOp::Copy { src: s, dst: d }
            }
        }
        OpKind::Reduce { dst, src } => MOp::Reduce {
            src: l.map(r, src),
            dst: l.map(r, dst),
        },
    }
}

/// A hash map keyed by (channel, peer), for thread-block lookup.
pub(super) type PeerMap = FxHashMap<(u32, u32), u32>;

pub(super) const NO: u32 = NONE;
