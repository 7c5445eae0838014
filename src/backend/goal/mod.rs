//! GOAL schedules (LogGOPSim's input language): the data structure, conversion from the IR
//! ([`from_ir`]), the text writer ([`write`]) and collc's own reader ([`parse`]), which rejects
//! what LogGOPSim's `txt2bin` rejects and flags what would make a LogGOPSim run hang or end with
//! unmatched queues (../shared/reference/goal-loggopsim.md).
//!
//! A [`GoalSchedule`] has one [`GoalRank`] per GOAL rank. Each rank holds ops (send, recv, calc)
//! in definition order, which is LogGOPSim's node order, and its dependency edges in the order
//! they are written: LogGOPSim frees the dependents of an op in that order, so the order is part
//! of the schedule's timing and is kept exactly.
//!
//! From the IR, process `p` becomes GOAL rank `p` (switches of in-network schedules are ranks
//! too, "switches as ranks"), and op `i` becomes:
//! - `Send` -> `send`, `Recv` -> `recv`, both of the slice's bytes;
//! - `RecvReduce` -> `recv` then a `calc` that requires it (dependents wait for the calc);
//! - `Reduce` -> `calc`;
//! - `Copy` -> `calc` when copies cost time ([`GoalOptions::copy_per_byte`] > 0), otherwise
//!   nothing: its dependents wait for the copy's own dependencies instead.
//!
//! A calc lasts `reduce_fixed + bytes * reduce_per_byte` (copies: `bytes * copy_per_byte`),
//! rounded to the nearest GOAL time unit ([`GoalOptions::tick`], 1 ns by LogGOPSim's convention).
//! IR dependencies become `requires` lines. Tags: LogGOPSim matches a message to the first
//! posted receive with the same source and tag, in time order, while the IR matches the k-th
//! send from p to q with tag t to the k-th receive on q from p with tag t, in program order.
//! So every message between an ordered pair (p, q) gets its own GOAL tag, 0, 1, 2, ... in the
//! sender's program order, and the receive it is matched with statically gets the same tag:
//! each (source, tag) at a rank names exactly one message, whatever the timing.

pub mod matching;
pub mod parse;
mod quick;
pub mod validate;

pub use parse::{GoalSpans, parse, parse_spanned};
pub use validate::{At, Problem, validate};

use crate::diag::{Code, Diagnostic, Span};
use crate::ir::{OpKind as IrOp, Program};
use matching::FastMap;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use std::fmt::Write;

/// `recv ... from -1`: any source.
pub const ANY_SOURCE: u32 = u32::MAX;
/// `tag -1`: any tag.
pub const ANY_TAG: u32 = u32::MAX;
/// Words `txt2bin` reads as keywords where a label may start a line; they cannot be labels.
pub const KEYWORDS: &[&str] = &["send", "recv", "calc", "rank", "num_ranks"];

/// A whole GOAL schedule.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GoalSchedule {
    /// A comment written before `num_ranks` (one line; newlines become spaces).
    pub comment: Option<String>,
    pub ranks: Vec<GoalRank>,
}

/// One GOAL rank: `rank r { ... }`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GoalRank {
    /// A comment written at the top of the rank's block, e.g. the switch it models.
    pub comment: Option<String>,
    pub ops: Vec<GoalOp>,
    /// Dependency edges in the order they are written.
    pub deps: Vec<Dep>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoalOp {
    /// The op's label; the writer invents one (`l<index>`) for ops without.
    pub label: Option<String>,
    pub kind: OpKind,
    pub cpu: u8,
    /// Always 0 for `calc` (GOAL has no `nic` on calc).
    pub nic: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// `send SIZEb to PEER tag TAG`; a tag of [`ANY_TAG`] matches any receive tag.
    Send { size: u64, to: u32, tag: u32 },
    /// `recv SIZEb from PEER tag TAG`; [`ANY_SOURCE`] / [`ANY_TAG`] are wildcards.
    Recv { size: u64, from: u32, tag: u32 },
    /// `calc TIME`: local work of TIME units.
    Calc { time: u64 },
}

impl OpKind {
    pub fn name(&self) -> &'static str {
        match self {
            OpKind::Send { .. } => "send",
            OpKind::Recv { .. } => "recv",
            OpKind::Calc { .. } => "calc",
        }
    }
}

/// `op requires on` (op starts after `on` finished) or `op irequires on` (after it started).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dep {
    pub op: u32,
    pub on: u32,
    pub kind: DepKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepKind {
    Requires,
    IRequires,
}

impl GoalSchedule {
    /// Total number of ops.
    pub fn op_count(&self) -> usize {
        self.ranks.iter().map(|r| r.ops.len()).sum()
    }

    /// Number of sends (messages).
    pub fn send_count(&self) -> usize {
        self.ranks
            .iter()
            .flat_map(|r| &r.ops)
            .filter(|o| matches!(o.kind, OpKind::Send { .. }))
            .count()
    }
}

/// How IR ops are timed in GOAL. All times are exact, in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct GoalOptions {
    /// The length of one GOAL time unit (LogGOPSim's convention: 1 ns).
    pub tick: BigRational,
    /// Time of every reduce, on top of the per-byte part.
    pub reduce_fixed: BigRational,
    /// Time per byte of a reduce (the postal models' gamma).
    pub reduce_per_byte: BigRational,
    /// Time per byte of a copy; zero (the default) drops copies from the schedule.
    pub copy_per_byte: BigRational,
}

impl Default for GoalOptions {
    fn default() -> Self {
        GoalOptions {
            tick: ns(1),
            reduce_fixed: BigRational::zero(),
            reduce_per_byte: BigRational::zero(),
            copy_per_byte: BigRational::zero(),
        }
    }
}

impl GoalOptions {
    /// Nanosecond ticks and a fixed time of `reduce_ns` per reduce, nothing per byte.
    pub fn with_reduce_ns(reduce_ns: u64) -> GoalOptions {
        GoalOptions {
            reduce_fixed: ns(reduce_ns),
            ..GoalOptions::default()
        }
    }
}

/// `n` nanoseconds, in seconds.
pub fn ns(n: u64) -> BigRational {
    BigRational::new(BigInt::from(n), BigInt::from(1_000_000_000u64))
}

/// Why a program cannot be written as GOAL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoalError {
    pub message: String,
    pub help: String,
}

impl GoalError {
    /// As an E0038 diagnostic at `span` (the schedule declaration, or the IR file).
    pub fn diagnostic(&self, span: Span) -> Diagnostic {
        Diagnostic::error(Code::GoalInvalid, span, self.message.clone())
            .label("in the GOAL output for this schedule")
            .help(self.help.clone())
    }
}

fn err(message: String, help: &str) -> GoalError {
    GoalError {
        message,
        help: help.to_string(),
    }
}

/// `secs / tick`, rounded to the nearest integer (halves up).
fn ticks(secs: &BigRational, tick: &BigRational) -> Option<u64> {
    if tick.is_zero() {
        return None;
    }
    let q = secs / tick;
    let two = BigInt::from(2);
    let rounded =
        num_integer::Integer::div_floor(&(q.numer() * &two + q.denom()), &(q.denom() * two));
    rounded.to_u64()
}

/// Converts a program to GOAL; see the module doc. The result is checked with [`validate`].
pub fn from_ir(p: &Program, opts: &GoalOptions) -> Result<GoalSchedule, GoalError> {
    if opts.tick <= BigRational::zero() {
        return Err(err(
            "the GOAL time unit must be positive".into(),
            "use 1 ns, LogGOPSim's unit",
        ));
    }
    let n = p.procs.len();
    if n as u64 >= u64::from(ANY_SOURCE) {
        return Err(err(
            format!("{n} processes do not fit GOAL's 32-bit rank numbers"),
            "simulate fewer ranks",
        ));
    }
    // GOAL tags: per ordered pair, messages numbered in the sender's program order; the
    // receive matched statically (k-th of (p, q, t)) takes the same number.
    // Per sender, in program order: (receiver, IR tag, GOAL tag). Processes talk to few peers,
    // so short linear scans beat hash maps with millions of entries.
    let mut sends_of: Vec<Vec<(u32, u32, u32)>> = Vec::with_capacity(n);
    for (pi, proc) in p.procs.iter().enumerate() {
        let mut pair_next: Vec<(u32, u32)> = Vec::new();
        let mut list = Vec::new();
        for op in &proc.ops {
            if let IrOp::Send { peer, tag, .. } = op.kind {
                let next = match pair_next.iter_mut().find(|(q, _)| *q == peer) {
                    Some((_, c)) => c,
                    None => {
                        pair_next.push((peer, 0));
                        let last = pair_next.len() - 1;
                        &mut pair_next[last].1
                    }
                };
                if *next == ANY_TAG {
                    return Err(err(
                        format!(
                            "process {pi} sends more than {} messages to {peer}",
                            ANY_TAG
                        ),
                        "GOAL tags are 32 bits; split the schedule",
                    ));
                }
                list.push((peer, tag, *next));
                *next += 1;
            }
        }
        sends_of.push(list);
    }
    let mut calc_cache: FastMap<(u8, u64), u64> = FastMap::default();
    let mut calc = |kind: u8, bytes: u64| -> Result<u64, GoalError> {
        if let Some(t) = calc_cache.get(&(kind, bytes)) {
            return Ok(*t);
        }
        let b = BigRational::from_integer(BigInt::from(bytes));
        let secs = match kind {
            0 => &opts.reduce_fixed + &opts.reduce_per_byte * b,
            _ => &opts.copy_per_byte * b,
        };
        let t = ticks(&secs, &opts.tick).ok_or_else(|| {
            err(
                "a calc time does not fit 64 bits of GOAL time units".into(),
                "use a coarser time unit",
            )
        })?;
        calc_cache.insert((kind, bytes), t);
        Ok(t)
    };
    let mut ranks = Vec::with_capacity(n);
    for (pi, proc) in p.procs.iter().enumerate() {
        let me = pi as u32;
        let calcs = proc
            .ops
            .iter()
            .filter(|o| matches!(o.kind, IrOp::RecvReduce { .. }))
            .count();
        let mut rank = GoalRank {
            comment: match &proc.kind {
                crate::ir::ProcKind::Rank => None,
                crate::ir::ProcKind::Switch(name) => Some(format!("switch {name}")),
            },
            ops: Vec::with_capacity(proc.ops.len() + calcs),
            deps: Vec::with_capacity(calcs),
        };
        // GOAL ops whose completion stands for each IR op's completion.
        let mut first: Vec<Option<u32>> = vec![None; proc.ops.len()];
        let mut last: Vec<Option<u32>> = vec![None; proc.ops.len()];
        let push = |rank: &mut GoalRank, label: String, kind: OpKind| -> u32 {
            rank.ops.push(GoalOp {
                label: Some(label),
                kind,
                cpu: 0,
                nic: 0,
            });
            (rank.ops.len() - 1) as u32
        };
        let mut send_ix = 0usize;
        let mut received: Vec<((u32, u32), usize)> = Vec::new();
        for (oi, op) in proc.ops.iter().enumerate() {
            let label = op_label(oi, "");
            match op.kind {
                IrOp::Send { peer, src, .. } => {
                    let goal_tag = sends_of[pi].get(send_ix).map(|x| x.2).unwrap_or(0);
                    send_ix += 1;
                    let size = p.slice_bytes(src);
                    let g = push(
                        &mut rank,
                        label,
                        OpKind::Send {
                            size,
                            to: peer,
                            tag: goal_tag,
                        },
                    );
                    (first[oi], last[oi]) = (Some(g), Some(g));
                }
                IrOp::Recv { peer, dst, tag } | IrOp::RecvReduce { peer, dst, tag } => {
                    let k = match received.iter_mut().find(|(key, _)| *key == (peer, tag)) {
                        Some((_, c)) => c,
                        None => {
                            received.push(((peer, tag), 0));
                            let last = received.len() - 1;
                            &mut received[last].1
                        }
                    };
                    // `k` is where the search for this channel's next send resumes in the
                    // sender's list, so each list is scanned once per channel.
                    let found = sends_of.get(peer as usize).and_then(|list| {
                        let at = list[*k..].iter().position(|x| x.0 == me && x.1 == tag)? + *k;
                        Some((at, list[at].2))
                    });
                    if let Some((at, _)) = found {
                        *k = at + 1;
                    }
                    let goal_tag = found
                        .map(|x| x.1)
                        .ok_or_else(|| {
                            err(
                                format!(
                                    "op {oi} of process {pi} receives from process {peer} (tag {tag}) a message that is never sent"
                                ),
                                "verify the program first (`collc check FILE.ir`): every receive needs its send",
                            )
                        })?;
                    let size = p.slice_bytes(dst);
                    let reduces = matches!(op.kind, IrOp::RecvReduce { .. });
                    let r = push(
                        &mut rank,
                        label,
                        OpKind::Recv {
                            size,
                            from: peer,
                            tag: goal_tag,
                        },
                    );
                    first[oi] = Some(r);
                    last[oi] = Some(r);
                    if reduces {
                        let time = calc(0, size)?;
                        let c = push(&mut rank, op_label(oi, "_calc"), OpKind::Calc { time });
                        rank.deps.push(Dep {
                            op: c,
                            on: r,
                            kind: DepKind::Requires,
                        });
                        last[oi] = Some(c);
                    }
                }
                IrOp::Reduce { dst, .. } => {
                    let time = calc(0, p.slice_bytes(dst))?;
                    let c = push(&mut rank, label, OpKind::Calc { time });
                    (first[oi], last[oi]) = (Some(c), Some(c));
                }
                IrOp::Copy { dst, .. } => {
                    if !opts.copy_per_byte.is_zero() {
                        let time = calc(1, p.slice_bytes(dst))?;
                        let c = push(&mut rank, label, OpKind::Calc { time });
                        (first[oi], last[oi]) = (Some(c), Some(c));
                    }
                }
            }
        }
        // Completion sets: an elided copy stands for the completion of its own dependencies.
        let done = completion_sets(me, proc, &last)?;
        let mut deps = Vec::with_capacity(
            proc.ops.iter().map(|o| o.deps.len()).sum::<usize>() + rank.deps.len(),
        );
        for (oi, op) in proc.ops.iter().enumerate() {
            let Some(f) = first[oi] else { continue };
            let from = deps.len();
            for d in &op.deps {
                for &on in done[*d as usize].as_slice() {
                    if !deps[from..].iter().any(|x: &Dep| x.on == on) {
                        deps.push(Dep {
                            op: f,
                            on,
                            kind: DepKind::Requires,
                        });
                    }
                }
            }
        }
        // The recv -> calc edges of recv_reduce were pushed while converting; keep them after
        // the IR's own dependencies of the same ops so that every edge is written once.
        deps.append(&mut rank.deps);
        rank.deps = deps;
        ranks.push(rank);
    }
    let sched = GoalSchedule {
        comment: Some(format!(
            "GOAL schedule written by collc from {:?} ({} {}, {} processes)",
            p.name,
            p.spec.kind.name(),
            p.spec.dtype.name(),
            n
        )),
        ranks,
    };
    if let Some(problem) = validate(&sched).into_iter().next() {
        return Err(err(
            format!("the GOAL output would be rejected: {}", problem.message),
            "this is a bug in collc's GOAL backend or an unverified program; run `collc check` on the IR",
        ));
    }
    Ok(sched)
}

/// The label of IR op `oi` (`op<oi>`, then `suffix`), built without the formatting machinery.
fn op_label(oi: usize, suffix: &str) -> String {
    let mut l = String::with_capacity(2 + 20 + suffix.len());
    l.push_str("op");
    push_num(&mut l, oi as u64);
    l.push_str(suffix);
    l
}

fn dedup_keep_order(v: &mut Vec<u32>) {
    if v.len() <= 16 {
        let mut k = 0;
        for i in 0..v.len() {
            if !v[..k].contains(&v[i]) {
                v[k] = v[i];
                k += 1;
            }
        }
        v.truncate(k);
    } else {
        let mut seen = std::collections::HashSet::new();
        v.retain(|x| seen.insert(*x));
    }
}

/// Who waits for whom, over ops numbered `base[rank] + op`: how many dependencies each op has,
/// and, in CSR form (`start[g]..start[g + 1]` indexes `list`, which holds op indices within the
/// rank), the ops released when op `g` finishes (`requires`) or starts (`irequires`). Shared by
/// the run checks of [`validate`] and the simulator.
pub struct Dependents {
    pub remaining: Vec<u32>,
    pub done_start: Vec<u32>,
    pub done_list: Vec<u32>,
    pub start_start: Vec<u32>,
    pub start_list: Vec<u32>,
}

/// Builds [`Dependents`] for a schedule whose ops are numbered from `base` (one entry per rank).
pub fn dependents(s: &GoalSchedule, base: &[usize], total: usize) -> Dependents {
    let mut remaining = vec![0u32; total];
    let mut counts = [vec![0u32; total + 1], vec![0u32; total + 1]];
    for (r, rank) in s.ranks.iter().enumerate() {
        for d in &rank.deps {
            remaining[base[r] + d.op as usize] += 1;
            let k = usize::from(d.kind == DepKind::IRequires);
            counts[k][base[r] + d.on as usize + 1] += 1;
        }
    }
    for c in &mut counts {
        for i in 0..total {
            c[i + 1] += c[i];
        }
    }
    let mut fill = counts.clone();
    let mut lists = [
        vec![0u32; counts[0][total] as usize],
        vec![0u32; counts[1][total] as usize],
    ];
    for (r, rank) in s.ranks.iter().enumerate() {
        for d in &rank.deps {
            let k = usize::from(d.kind == DepKind::IRequires);
            let at = &mut fill[k][base[r] + d.on as usize];
            lists[k][*at as usize] = d.op;
            *at += 1;
        }
    }
    let [done_list, start_list] = lists;
    let [done_start, start_start] = counts;
    Dependents {
        remaining,
        done_start,
        done_list,
        start_start,
        start_list,
    }
}

/// The GOAL ops whose completion means an IR op is complete: usually the one op it became; for
/// an elided copy, the completions of its own dependencies.
#[derive(Clone)]
enum Done {
    One(u32),
    Many(Vec<u32>),
}

impl Done {
    fn as_slice(&self) -> &[u32] {
        match self {
            Done::One(g) => std::slice::from_ref(g),
            Done::Many(v) => v,
        }
    }
}

/// For each IR op, the GOAL ops whose completion means the IR op is complete.
fn completion_sets(
    me: u32,
    proc: &crate::ir::Proc,
    last: &[Option<u32>],
) -> Result<Vec<Done>, GoalError> {
    let n = proc.ops.len();
    let mut done: Vec<Option<Done>> = last.iter().map(|l| l.map(Done::One)).collect();
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    for start in 0..n {
        if done[start].is_some() {
            continue;
        }
        // Iterative depth-first search over elided ops' dependencies.
        stack.push((start, false));
        while let Some((i, expanded)) = stack.pop() {
            if done[i].is_some() {
                continue;
            }
            if expanded {
                let mut v: Vec<u32> = proc.ops[i]
                    .deps
                    .iter()
                    .flat_map(|d| {
                        done[*d as usize]
                            .as_ref()
                            .map(|x| x.as_slice().to_vec())
                            .unwrap_or_default()
                    })
                    .collect();
                dedup_keep_order(&mut v);
                done[i] = Some(Done::Many(v));
                on_stack[i] = false;
                continue;
            }
            if on_stack[i] {
                return Err(err(
                    format!("process {me} has a dependency cycle through op {i}"),
                    "verify the program first (`collc check FILE.ir`)",
                ));
            }
            on_stack[i] = true;
            stack.push((i, true));
            for d in &proc.ops[i].deps {
                let d = *d as usize;
                if d >= n {
                    return Err(err(
                        format!("op {i} of process {me} depends on op {d}, which does not exist"),
                        "verify the program first (`collc check FILE.ir`)",
                    ));
                }
                if done[d].is_none() {
                    if on_stack[d] {
                        return Err(err(
                            format!("process {me} has a dependency cycle through op {d}"),
                            "verify the program first (`collc check FILE.ir`)",
                        ));
                    }
                    stack.push((d, false));
                }
            }
        }
    }
    Ok(done
        .into_iter()
        .map(|d| d.unwrap_or(Done::Many(Vec::new())))
        .collect())
}

fn one_line(s: &str) -> String {
    s.replace(['\r', '\n'], " ")
}

/// The labels the writer uses: the op's own, or `l<index>` (made unique) for ops without.
pub fn output_labels(rank: &GoalRank) -> Vec<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    if rank.ops.iter().all(|o| o.label.is_some()) {
        return rank
            .ops
            .iter()
            .map(|o| Cow::Borrowed(o.label.as_deref().unwrap_or_default()))
            .collect();
    }
    let taken: std::collections::HashSet<&str> =
        rank.ops.iter().filter_map(|o| o.label.as_deref()).collect();
    let mut made = std::collections::HashSet::new();
    rank.ops
        .iter()
        .enumerate()
        .map(|(i, o)| match &o.label {
            Some(l) => Cow::Borrowed(l.as_str()),
            None => {
                let mut l = format!("l{i}");
                while taken.contains(l.as_str()) || made.contains(&l) {
                    l.push('_');
                }
                made.insert(l.clone());
                Cow::Owned(l)
            }
        })
        .collect()
}

/// Appends a decimal number without going through the formatting machinery (the writer emits
/// millions of numbers for large schedules).
fn push_num(out: &mut String, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&buf[i..]).unwrap_or("0"));
}

/// A peer or tag, with LogGOPSim's `-1` for "any".
fn push_any(out: &mut String, v: u32) {
    if v == u32::MAX {
        out.push_str("-1");
    } else {
        push_num(out, u64::from(v));
    }
}

/// Writes GOAL text that `txt2bin` accepts: `num_ranks` first, every rank once in ascending
/// order, every op labelled (labels unique per rank), dependency lines after all ops of the
/// rank, comments on their own lines, sizes as `8b`. Deterministic.
pub fn write(s: &GoalSchedule) -> String {
    let mut out = String::with_capacity(
        64 + 48
            * s.ranks
                .iter()
                .map(|r| r.ops.len() + r.deps.len())
                .sum::<usize>(),
    );
    if let Some(c) = &s.comment {
        let _ = writeln!(out, "// {}", one_line(c));
    }
    let _ = writeln!(out, "num_ranks {}", s.ranks.len());
    for (r, rank) in s.ranks.iter().enumerate() {
        out.push_str("\nrank ");
        push_num(&mut out, r as u64);
        out.push_str(" {\n");
        if let Some(c) = &rank.comment {
            let _ = writeln!(out, "// {}", one_line(c));
        }
        let labels = output_labels(rank);
        for (op, label) in rank.ops.iter().zip(&labels) {
            out.push_str(label);
            out.push_str(": ");
            match op.kind {
                OpKind::Send { size, to, tag } => {
                    out.push_str("send ");
                    push_num(&mut out, size);
                    out.push_str("b to ");
                    push_num(&mut out, u64::from(to));
                    out.push_str(" tag ");
                    push_any(&mut out, tag);
                }
                OpKind::Recv { size, from, tag } => {
                    out.push_str("recv ");
                    push_num(&mut out, size);
                    out.push_str("b from ");
                    push_any(&mut out, from);
                    out.push_str(" tag ");
                    push_any(&mut out, tag);
                }
                OpKind::Calc { time } => {
                    out.push_str("calc ");
                    push_num(&mut out, time);
                }
            }
            if op.cpu != 0 {
                out.push_str(" cpu ");
                push_num(&mut out, u64::from(op.cpu));
            }
            if op.nic != 0 && !matches!(op.kind, OpKind::Calc { .. }) {
                out.push_str(" nic ");
                push_num(&mut out, u64::from(op.nic));
            }
            out.push('\n');
        }
        for d in &rank.deps {
            let (Some(a), Some(b)) = (labels.get(d.op as usize), labels.get(d.on as usize)) else {
                continue;
            };
            out.push_str(a);
            out.push_str(match d.kind {
                DepKind::Requires => " requires ",
                DepKind::IRequires => " irequires ",
            });
            out.push_str(b);
            out.push('\n');
        }
        out.push_str("}\n");
    }
    out
}
