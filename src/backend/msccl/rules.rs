//! Every rule an MSCCL XML must follow to be read, selected and run to the end by
//! msccl-executor-nccl (msccl-xml.md sections 1.3 and 1.5), checked on a parsed [`Algo`]:
//! the parser's own checks (numbered as in section 1.3), the limits of the executor's data
//! structures, and the rules the parser does not check but the kernel needs (one thread block
//! per (peer, channel), `chan < nchannels`, waits only on steps that publish a flag).
//! Exceeding a limit is [`Code::MscclLimit`] (with what to change); anything else is
//! [`Code::MscclInvalid`]. The symbolic execution ([`super::exec`]) runs only on an XML that
//! passes these checks.

use super::{Algo, At, Problem, StepType, coll_kind, limits, size_multiplier};
use crate::diag::Code;
use rustc_hash::FxHashMap;

/// The words of the steps-per-thread-block limit's message, which the channel search reads to
/// tell that limit (more channels help) from the others.
pub(super) const TOO_MANY_STEPS: &str = "steps in one thread block";

const MAX_PROBLEMS: usize = 32;

/// Every `coll` the current executor accepts.
pub const COLLS: &[&str] = &[
    "allreduce",
    "allgather",
    "reducescatter",
    "reduce",
    "broadcast",
    "alltoall",
    "alltoallv",
    "send",
    "recv",
    "gather",
    "scatter",
];

struct Out {
    v: Vec<Problem>,
}

impl Out {
    fn invalid(&mut self, at: At, m: String, help: &str) {
        if self.v.len() < MAX_PROBLEMS {
            self.v.push(Problem::new(Code::MscclInvalid, at, m, help));
        }
    }

    fn limit(&mut self, at: At, m: String, help: &str) {
        if self.v.len() < MAX_PROBLEMS {
            self.v.push(Problem::new(Code::MscclLimit, at, m, help));
        }
    }
}

/// Checks `a`; the problems found, empty when the XML is fine. A `coll` the executor does not
/// know is a problem, but the gpus are still checked (every other rule holds for any `coll`);
/// other problems of the header stop the checking there.
pub fn check(a: &Algo, max_steps: u32) -> Vec<Problem> {
    let mut o = Out { v: Vec::new() };
    if !COLLS.contains(&a.coll.as_str()) {
        o.invalid(At::Algo, format!("coll=\"{}\" is not a collective of the executor", a.coll), "coll is one of allreduce, allgather, reducescatter, reduce, broadcast, alltoall, alltoallv, send, recv, gather, scatter");
    }
    let known = o.v.len();
    header(a, &mut o);
    if o.v.len() > known {
        return o.v;
    }
    let n = a.ngpus;
    let mut seen = vec![false; n as usize];
    for (gi, g) in a.gpus.iter().enumerate() {
        if g.id < 0 || g.id >= n || seen[g.id as usize] {
            o.invalid(
                At::Gpu(gi),
                format!(
                    "gpu id=\"{}\" is out of range or repeated (ngpus=\"{n}\")",
                    g.id
                ),
                "list each gpu 0 .. ngpus-1 once",
            );
            continue;
        }
        seen[g.id as usize] = true;
        gpu(a, gi, max_steps, &mut o);
    }
    if let Some(missing) = seen.iter().position(|x| !x) {
        o.invalid(
            At::Algo,
            format!(
                "gpu {missing} has no <gpu> element; the executor finds no program for that rank"
            ),
            "give every rank 0 .. ngpus-1 a <gpu>",
        );
    }
    o.v
}

fn header(a: &Algo, o: &mut Out) {
    if a.ngpus < 1 {
        o.invalid(
            At::Algo,
            format!("ngpus=\"{}\" must be at least 1", a.ngpus),
            "ngpus is the communicator size the XML is for",
        );
    } else if a.ngpus > i64::from(limits::MAX_SUBS) {
        o.limit(At::Algo, format!("{} gpus, but the executor's reader keeps at most {} children per element (MAX_SUBS, unchecked: it overflows)", a.ngpus, limits::MAX_SUBS), "MSCCL cannot run on more than 1024 ranks with one XML; use the `mpi` target or fewer ranks");
    }
    if a.gpus.len() as i64 != a.ngpus.max(0) {
        o.invalid(
            At::Algo,
            format!(
                "ngpus=\"{}\" but the file has {} <gpu> elements",
                a.ngpus,
                a.gpus.len()
            ),
            "write one <gpu> per rank",
        );
    }
    if a.nchunksperloop < 1 {
        o.invalid(
            At::Algo,
            format!("nchunksperloop=\"{}\" must be at least 1", a.nchunksperloop),
            "nchunksperloop is the number of chunks the buffer is cut into",
        );
    }
    if a.nchannels < 1 || a.nchannels > i64::from(limits::MAX_CHANNELS) {
        o.limit(
            At::Algo,
            format!(
                "nchannels=\"{}\"; the executor has 1 to {} channels",
                a.nchannels,
                limits::MAX_CHANNELS
            ),
            "use fewer channels or instances (channels x instances at most 32)",
        );
    }
    if !a.inplace && !a.outofplace {
        o.invalid(
            At::Algo,
            "inplace=\"0\" and outofplace=\"0\": the runtime never selects this XML".into(),
            "set inplace or outofplace to 1",
        );
    }
    if a.min_bytes < 0 || a.max_bytes < 0 || (a.max_bytes != 0 && a.min_bytes > a.max_bytes) {
        o.invalid(At::Algo, format!("the size window minBytes=\"{}\" maxBytes=\"{}\" is empty or negative: the runtime never selects this XML", a.min_bytes, a.max_bytes), "give 0 <= minBytes <= maxBytes (maxBytes 0 means no upper limit)");
    }
    if let Some(k) = coll_kind(&a.coll) {
        let m = size_multiplier(k, a.ngpus.max(1) as u64) as i64;
        if m > 1 && a.nchunksperloop % m != 0 {
            o.invalid(At::Algo, format!("nchunksperloop=\"{}\" is not a multiple of ngpus=\"{}\", so the {} parts of the buffer are not whole chunks", a.nchunksperloop, a.ngpus, a.coll), "use a multiple of ngpus");
        }
    }
}

/// E0046 when executing `a` symbolically needs more than `max_slots` buffer slots in all (the
/// input and output buffers of `nchunksperloop` chunks, scratch, and the temporaries of `rrs`
/// steps, [`super::exec::rrs_slots`]), or a buffer beyond what a slot index counts; `a` passed
/// [`check`].
pub fn too_large(a: &Algo, max_slots: u64) -> Option<Problem> {
    let n = a.nchunksperloop.max(0) as u64;
    let mut total = 0u64;
    for (gi, g) in a.gpus.iter().enumerate() {
        let s = g.s_chunks.max(0) as u64;
        let scratch = s.saturating_add(super::exec::rrs_slots(g));
        total = total
            .saturating_add(n.saturating_mul(2))
            .saturating_add(scratch);
        // A buffer must also stay indexable by the `u32` slots of the IR.
        if n.max(scratch) > u64::from(u32::MAX / 4) {
            total = u64::MAX;
        }
        if total > max_slots {
            let at = if s > n { At::Gpu(gi) } else { At::Algo };
            return Some(Problem::new(
                Code::ProgramTooLarge,
                at,
                format!(
                    "nchunksperloop=\"{}\" with s_chunks=\"{}\" needs {} buffer slots on gpus 0 to {gi} to check, more than the limit of {max_slots}",
                    a.nchunksperloop,
                    g.s_chunks,
                    if total == u64::MAX {
                        "more".to_string()
                    } else {
                        total.to_string()
                    },
                ),
                if total == u64::MAX {
                    format!(
                        "check nchunksperloop and s_chunks: collc checks buffers of at most {} chunks",
                        u32::MAX / 4
                    )
                } else {
                    format!(
                        "check nchunksperloop and s_chunks; if the size is intended, raise the limit with `--max-slots {}`",
                        total
                            .saturating_add(1)
                            .checked_next_power_of_two()
                            .unwrap_or(u64::MAX)
                    )
                },
            ));
        }
    }
    None
}

/// The chunk count of each buffer (i, o) the runtime passes, for the collectives collc
/// executes (an all-to-all's buffers both hold `count x ngpus` elements, the whole
/// `nchunksperloop`); None for the others (alltoallv, send, recv, gather, scatter), whose
/// structure is checked without it.
fn buffers(a: &Algo) -> Option<(i64, i64)> {
    let n = a.nchunksperloop;
    let k = coll_kind(&a.coll)?;
    let per = n / a.ngpus.max(1);
    Some(match k {
        crate::sema::model::CollectiveKind::Allgather => (per, n),
        crate::sema::model::CollectiveKind::ReduceScatter => (n, per),
        _ => (n, n),
    })
}

fn gpu(a: &Algo, gi: usize, max_steps: u32, o: &mut Out) {
    let g = &a.gpus[gi];
    let me = g.id;
    if g.i_chunks < 0 || g.o_chunks < 0 || g.s_chunks < 0 {
        o.invalid(
            At::Gpu(gi),
            "i_chunks, o_chunks and s_chunks must not be negative".into(),
            "give chunk counts >= 0",
        );
    }
    if let Some((bi, bo)) = buffers(a) {
        if g.i_chunks > bi || g.o_chunks > bo {
            o.invalid(At::Gpu(gi), format!("i_chunks=\"{}\" o_chunks=\"{}\", but the buffers of a `{}` call hold {bi} and {bo} chunks of nchunksperloop=\"{}\"", g.i_chunks, g.o_chunks, a.coll, a.nchunksperloop), "declare at most the chunks the buffers have; steps past the end corrupt memory");
        }
    }
    let tbs = g.tbs.len() as i64;
    let steps: usize = g.tbs.iter().map(|t| t.steps.len()).sum();
    if tbs > i64::from(limits::MAX_TBS.min(limits::MAX_SUBS)) {
        o.limit(
            At::Gpu(gi),
            format!(
                "{tbs} thread blocks; the executor has at most {} per GPU",
                limits::MAX_TBS
            ),
            "use fewer channels or instances",
        );
    }
    let nodes = 1 + a.ngpus + tbs + steps as i64;
    if nodes > i64::from(limits::MAX_NODES) {
        o.limit(At::Gpu(gi), format!("rank {me} parses {nodes} XML nodes (1 algo + {} gpus + {tbs} tbs + {steps} steps); the executor's reader holds at most {} (MAX_NODES)", a.ngpus, limits::MAX_NODES), "use fewer ranks, chunks or instances, so fewer steps");
    }
    // Thread blocks per (channel, peer) and per channel.
    let mut by_send: FxHashMap<(i64, i64), usize> = FxHashMap::default();
    let mut by_recv: FxHashMap<(i64, i64), usize> = FxHashMap::default();
    let mut per_chan: FxHashMap<i64, (u32, u32)> = FxHashMap::default();
    for (ti, tb) in g.tbs.iter().enumerate() {
        let at = At::Tb(gi, ti);
        for (what, p) in [("send", tb.send), ("recv", tb.recv)] {
            if p < -1 || p >= a.ngpus || p == me {
                o.invalid(
                    at,
                    format!(
                        "{what}=\"{p}\" is not another rank (gpu {me} of {})",
                        a.ngpus
                    ),
                    "peers are -1 (none) or another rank below ngpus",
                );
            }
        }
        if tb.chan < 0 || tb.chan >= a.nchannels || tb.chan >= i64::from(limits::MAX_CHANNELS) {
            o.invalid(
                at,
                format!(
                    "chan=\"{}\" is outside 0 .. nchannels-1 = {}",
                    tb.chan,
                    a.nchannels - 1
                ),
                "raise nchannels or renumber the channel (at most 32 channels)",
            );
        }
        let e = per_chan.entry(tb.chan).or_default();
        if tb.send >= 0 {
            e.0 += 1;
            if let Some(t0) = by_send.insert((tb.chan, tb.send), ti) {
                o.invalid(at, format!("tbs {t0} and {ti} both send to rank {} on channel {}; NCCL has one connection per (peer, channel)", tb.send, tb.chan), "merge them into one thread block or move one to another channel");
            }
        }
        if tb.recv >= 0 {
            e.1 += 1;
            if let Some(t0) = by_recv.insert((tb.chan, tb.recv), ti) {
                o.invalid(at, format!("tbs {t0} and {ti} both receive from rank {} on channel {}; NCCL has one connection per (peer, channel)", tb.recv, tb.chan), "merge them into one thread block or move one to another channel");
            }
        }
        if tb.steps.len() > max_steps as usize {
            o.limit(at, format!("{} {TOO_MANY_STEPS}; the executor runs at most {max_steps} (MSCCL_MAX_NUM_STEPS)", tb.steps.len()), "spread the schedule over more channels (`--channels`, one chunk per channel), or build for a runtime with a larger MSCCL_MAX_NUM_STEPS (`--max-steps`)");
        }
        steps_of(a, gi, ti, o);
    }
    let mut chans: Vec<_> = per_chan.into_iter().collect();
    chans.sort_unstable();
    for (c, (s, r)) in chans {
        if s > limits::MAX_TBS_PER_CHANNEL || r > limits::MAX_TBS_PER_CHANNEL {
            o.limit(At::Gpu(gi), format!("channel {c} of rank {me} has {s} sending and {r} receiving thread blocks; the executor allows {} of each per channel", limits::MAX_TBS_PER_CHANNEL), "use more channels (`--channels`)");
        }
    }
}

fn steps_of(a: &Algo, gi: usize, ti: usize, o: &mut Out) {
    let g = &a.gpus[gi];
    let tb = &g.tbs[ti];
    let size = |b: super::MBuf| match b {
        super::MBuf::I => g.i_chunks,
        super::MBuf::O => g.o_chunks,
        super::MBuf::S => g.s_chunks,
    };
    let mut after_nop = false;
    for (si, s) in tb.steps.iter().enumerate() {
        let at = At::Step(gi, ti, si);
        if s.ty == StepType::Nop {
            if s.depid < 0 {
                o.invalid(
                    at,
                    "a nop without a dependency does nothing".into(),
                    "give the nop depid and deps, or remove it",
                );
            }
        } else {
            if after_nop && s.depid < 0 {
                o.invalid(at, "a step after nops must itself wait on a dependency (the parser: \"the last reduction must be a part of the first immediate instruction\")".into(), "move the last nop's depid/deps onto this step");
            }
            if !(0..i64::from(limits::MAX_COUNT)).contains(&s.cnt) {
                o.limit(
                    at,
                    format!(
                        "cnt=\"{}\"; the executor takes 0 <= cnt < {} (MSCCL_MAX_COUNT)",
                        s.cnt,
                        limits::MAX_COUNT
                    ),
                    "split the transfer into steps of at most 71 chunks",
                );
            }
            if s.ty.sends() && tb.send < 0 {
                o.invalid(
                    at,
                    format!("a `{}` step sends, but its tb has send=\"-1\"", s.ty.name()),
                    "give the tb a send peer or move the step",
                );
            }
            if s.ty.receives() && tb.recv < 0 {
                o.invalid(
                    at,
                    format!(
                        "a `{}` step receives, but its tb has recv=\"-1\"",
                        s.ty.name()
                    ),
                    "give the tb a recv peer or move the step",
                );
            }
            let (src_used, dst_used) = operands(s.ty);
            for (used, what, b, off) in [
                (src_used, "src", s.src, s.srcoff),
                (dst_used, "dst", s.dst, s.dstoff),
            ] {
                if !used {
                    continue;
                }
                let len = size(b);
                let end = i128::from(off) + i128::from(s.cnt);
                if off < 0 || end > i128::from(len) {
                    o.invalid(
                        at,
                        format!(
                            "{what} {}[{off}..{end}] is outside the {} chunks of buffer {}",
                            b.name(),
                            len,
                            b.name()
                        ),
                        "keep offsets and counts within i_chunks, o_chunks and s_chunks",
                    );
                } else if off > i64::from(limits::MAX_OFFSET) {
                    o.limit(
                        at,
                        format!("{what}off=\"{off}\" does not fit the executor's int16 offsets"),
                        "use fewer chunks (nchunksperloop, instances)",
                    );
                }
            }
        }
        after_nop = s.ty == StepType::Nop;
        if s.depid >= 0 {
            if s.depid >= g.tbs.len() as i64 {
                o.invalid(
                    at,
                    format!("depid=\"{}\" names no tb of gpu {}", s.depid, g.id),
                    "depid is a tb id of the same gpu, or -1",
                );
                continue;
            }
            if s.depid > i64::from(limits::MAX_DEPID) {
                o.limit(
                    at,
                    format!(
                        "depid=\"{}\" does not fit the executor's int8 dependentBid (at most {})",
                        s.depid,
                        limits::MAX_DEPID
                    ),
                    "use fewer thread blocks per GPU (fewer channels or instances)",
                );
            }
            let target = &g.tbs[s.depid as usize];
            if s.deps < 0 || s.deps >= target.steps.len() as i64 {
                o.invalid(
                    at,
                    format!(
                        "deps=\"{}\" names no step of tb {} ({} steps)",
                        s.deps,
                        s.depid,
                        target.steps.len()
                    ),
                    "deps is a step index of tb depid",
                );
            } else if s.depid == ti as i64 && s.deps >= si as i64 {
                o.invalid(
                    at,
                    format!(
                        "waits on step {} of its own tb, which runs after it: a hang",
                        s.deps
                    ),
                    "dependencies inside a tb are implicit; drop it",
                );
            } else if !target.steps[s.deps as usize].hasdep {
                o.invalid(at, format!("waits on step {} of tb {}, which has hasdep=\"0\" and never publishes its flag: a hang", s.deps, s.depid), "set hasdep=\"1\" on every step another tb waits on");
            }
        } else if s.depid < -1 {
            o.invalid(
                at,
                format!("depid=\"{}\" must be -1 or a tb id", s.depid),
                "write -1 for no dependency",
            );
        }
    }
}

/// Whether a step type reads `src` and writes/reads `dst` (all operands, checked or not).
pub fn operands(t: StepType) -> (bool, bool) {
    match t {
        StepType::Send | StepType::RecvReduceSend => (true, false),
        StepType::Recv | StepType::RecvCopySend => (false, true),
        StepType::RecvReduceCopy
        | StepType::RecvReduceCopySend
        | StepType::Copy
        | StepType::Reduce => (true, true),
        StepType::Nop => (false, false),
    }
}
