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

mod convert;
mod label;
pub mod matching;
pub mod parse;
mod quick;
mod rank;
mod stream;
pub mod validate;
mod write;

pub use convert::{Sizing, from_ir, from_verified, from_verified_at, sizing};
pub use label::Label;
pub use parse::{GoalSpans, parse, parse_spanned};
pub use stream::{WriteError, verify_and_write, write_verified, write_verified_in_windows};
pub use validate::{At, Problem, validate};
pub use write::{output_labels, write};

use crate::diag::{Code, Diagnostic, Span};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Zero;

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
    pub label: Option<Label>,
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

impl GoalOp {
    /// An op without a label, on CPU 0 and NIC 0.
    pub fn new(kind: OpKind) -> GoalOp {
        GoalOp {
            label: None,
            kind,
            cpu: 0,
            nic: 0,
        }
    }
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

/// A schedule's dependents, flat: rank r's op i is at `base[r] + i` (`base` has a closing
/// entry, the op count). Shared by the validator's run, the flow-level simulator and the round
/// model, which walk the schedule op by op.
pub struct Flat {
    pub base: Vec<usize>,
    /// Dependents released when an op finishes (`requires`) and when it starts (`irequires`),
    /// compressed: `list[start[g]..start[g + 1]]`.
    done_start: Vec<u32>,
    done_list: Vec<u32>,
    start_start: Vec<u32>,
    start_list: Vec<u32>,
}

impl Flat {
    /// The flat dependents and every op's count of dependencies.
    pub fn new(s: &GoalSchedule) -> (Flat, Vec<u32>) {
        let mut base = Vec::with_capacity(s.ranks.len() + 1);
        let mut total = 0;
        for r in &s.ranks {
            base.push(total);
            total += r.ops.len();
        }
        base.push(total);
        let Dependents {
            remaining,
            done_start,
            done_list,
            start_start,
            start_list,
        } = dependents(s, &base, total);
        (
            Flat {
                base,
                done_start,
                done_list,
                start_start,
                start_list,
            },
            remaining,
        )
    }

    /// The flat index of rank r's op i.
    pub fn g(&self, r: u32, i: u32) -> usize {
        self.base[r as usize] + i as usize
    }

    /// The ops released when rank r's op i finishes.
    pub fn after_done(&self, r: u32, i: u32) -> &[u32] {
        let g = self.g(r, i);
        &self.done_list[self.done_start[g] as usize..self.done_start[g + 1] as usize]
    }

    /// The ops released when rank r's op i starts.
    pub fn after_start(&self, r: u32, i: u32) -> &[u32] {
        let g = self.g(r, i);
        &self.start_list[self.start_start[g] as usize..self.start_start[g + 1] as usize]
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
