//! Checks a [`GoalSchedule`] against what LogGOPSim needs to run it to the end (E0038):
//!
//! 1. Structure: labels are identifiers, not keywords, unique per rank; peers name existing
//!    ranks; calcs have no nic; dependencies name existing ops.
//! 2. Execution: the schedule is run without time, every send eager (the most permissive
//!    setting: a schedule that cannot finish this way cannot finish under any LogGP parameters),
//!    with LogGOPSim's matching ([`super::matching`]). What is left at the end is what LogGOPSim
//!    would report as a non-empty "receive queue" (a recv no message reaches) or "unexpected
//!    queue" (a message no recv takes), and ops that never run: behind a receive that never
//!    completes (a deadlock) or in a dependency cycle (LogGOPSim silently never runs them).
//!
//! With wildcards (a recv `from -1` or `tag -1`, a send `tag -1`) the pairing depends on timing,
//! so one untimed run proves nothing either way: such schedules get only the checks no timing
//! can avoid ([`wild`]), and the simulator reports what is left in its queues for the
//! parameters it runs with.
//!
//! The run is skipped when [`super::quick`] shows that every op runs whatever the order (no
//! wildcards, one message per (source, tag) at each rank: what the backend writes); the run
//! itself decides, and words the problems, in every other case.
//!
//! Rendezvous deadlocks that depend on the threshold S are found by the simulator itself.

use super::parse::GoalSpans;
use super::{ANY_SOURCE, GoalSchedule, KEYWORDS, Label, OpKind};
use crate::diag::{Code, Diagnostic};

mod run;
mod wild;

pub(super) use run::execution;
use rustc_hash::FxHashSet;
pub use wild::has_wildcards;

/// A place in a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum At {
    Schedule,
    Rank(u32),
    /// (rank, op index)
    Op(u32, u32),
    /// (rank, index into the rank's deps)
    Dep(u32, usize),
}

/// One reason LogGOPSim would reject the schedule or not finish it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub at: At,
    pub message: String,
    pub label: String,
    pub help: String,
    pub related: Vec<(At, String)>,
}

impl Problem {
    /// As an E0038 diagnostic located with `spans`.
    pub fn diagnostic(&self, spans: &GoalSpans) -> Diagnostic {
        let mut d = Diagnostic::error(Code::GoalInvalid, spans.at(self.at), self.message.clone())
            .label(self.label.clone())
            .help(self.help.clone());
        for (at, m) in &self.related {
            d = d.secondary(spans.at(*at), m.clone());
        }
        d
    }
}

const MAX_PROBLEMS: usize = 16;

fn problem(at: At, message: String, label: &str, help: &str) -> Problem {
    Problem {
        at,
        message,
        label: label.to_string(),
        help: help.to_string(),
        related: Vec::new(),
    }
}

fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphabetic()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

fn who(s: &GoalSchedule, r: u32, i: u32) -> String {
    who_in(&s.ranks[r as usize], r, i)
}

fn who_in(rank: &super::GoalRank, r: u32, i: u32) -> String {
    match &rank.ops[i as usize].label {
        Some(l) => format!("`{l}` of rank {r}"),
        None => format!("op {i} of rank {r}"),
    }
}

fn show(x: u32, any: u32) -> String {
    if x == any {
        "any".into()
    } else {
        x.to_string()
    }
}

/// Every problem found (at most 16), in schedule order.
pub fn validate(s: &GoalSchedule) -> Vec<Problem> {
    let out = structure(s);
    if !out.is_empty() {
        return out;
    }
    if super::quick::completes(s) {
        return Vec::new();
    }
    if wild::has_wildcards(s) {
        return wild::certain(s);
    }
    execution(s)
}

/// Step 1 alone (labels, peers, calcs, dependency ends).
pub(super) fn structure(s: &GoalSchedule) -> Vec<Problem> {
    let mut out = Vec::new();
    let n = s.ranks.len() as u64;
    if n == 0 {
        out.push(problem(
            At::Schedule,
            "a schedule needs at least one rank".into(),
            "no ranks",
            "give `num_ranks N` with N >= 1 and a block per rank",
        ));
        return out;
    }
    // Ranks in blocks on all cores; each block stops once it has enough problems, and the
    // blocks' problems are joined in rank order, so the first ones are those of a serial run.
    let blocks = crate::par::map_blocks(
        s.ranks.len(),
        crate::par::block_size(s.ranks.len(), 64),
        |range| {
            let mut out = Vec::new();
            let mut labels = Labels::default();
            for r in range {
                rank_structure(n, r as u32, &s.ranks[r], &mut labels, &mut out);
                if out.len() >= MAX_PROBLEMS {
                    break;
                }
            }
            out
        },
    );
    let mut out: Vec<Problem> = blocks.into_iter().flatten().collect();
    out.truncate(MAX_PROBLEMS);
    out
}

/// Which labels a rank has defined: IR labels (`op<i>`, `op<i>_calc`) in a bitset over
/// `2 i + calc`, text labels in a set. A rank that mixes both is checked on the text of all.
#[derive(Default)]
pub(super) struct Labels<'a> {
    bits: Vec<u64>,
    text: FxHashSet<std::borrow::Cow<'a, str>>,
}

impl<'a> Labels<'a> {
    /// Starts a rank; true when all its labels are IR labels (or absent).
    fn start(&mut self, ops: &[super::GoalOp]) -> bool {
        self.text.clear();
        let mut top = 0;
        for op in ops {
            match &op.label {
                Some(Label::Ir { op, .. }) => top = top.max(*op as usize + 1),
                Some(Label::Text(_)) => return false,
                None => {}
            }
        }
        // Only the words this rank uses are cleared, so small ranks after a large one stay cheap.
        self.bits.clear();
        self.bits.resize((2 * top).div_ceil(64), 0);
        true
    }

    /// Records an IR label; false when it was defined before.
    fn insert_ir(&mut self, op: u32, calc: bool) -> bool {
        let k = 2 * op as usize + usize::from(calc);
        let (w, b) = (k / 64, 1u64 << (k % 64));
        let fresh = self.bits[w] & b == 0;
        self.bits[w] |= b;
        fresh
    }
}

/// Step 1 for rank `r` of a schedule of `n` ranks.
pub(super) fn rank_structure<'a>(
    n: u64,
    r: u32,
    rank: &'a super::GoalRank,
    labels: &mut Labels<'a>,
    out: &mut Vec<Problem>,
) {
    let all_ir = labels.start(&rank.ops);
    for (i, op) in rank.ops.iter().enumerate() {
        let at = At::Op(r, i as u32);
        if let Some(l) = &op.label {
            let fresh = match l {
                // `op<i>` and `op<i>_calc` are identifiers and not keywords.
                Label::Ir { op, calc } if all_ir => Ok(labels.insert_ir(*op, *calc)),
                _ => {
                    let t = l.as_str();
                    if !is_label(&t) || KEYWORDS.contains(&t.as_ref()) {
                        Err(t)
                    } else {
                        Ok(labels.text.insert(t))
                    }
                }
            };
            match fresh {
                Err(t) => out.push(problem(
                    at,
                    format!("`{t}` cannot be a GOAL label"),
                    "invalid label",
                    "labels are a letter then letters, digits or `_`, and not send, recv, calc, rank or num_ranks",
                )),
                Ok(false) => out.push(problem(
                    at,
                    format!("label `{l}` is defined twice in rank {r}"),
                    "duplicate label",
                    "give every op of a rank its own label",
                )),
                Ok(true) => {}
            }
        }
        let peer = match op.kind {
            OpKind::Send { to, .. } => Some(to),
            OpKind::Recv { from, .. } if from != ANY_SOURCE => Some(from),
            _ => None,
        };
        if let Some(p) = peer.filter(|p| u64::from(*p) >= n) {
            out.push(problem(
                at,
                format!(
                    "{} names rank {p}, but the schedule has {n} rank{}",
                    who_in(rank, r, i as u32),
                    if n == 1 { "" } else { "s" }
                ),
                "no such rank",
                "peers are ranks 0 to num_ranks - 1 (LogGOPSim would read past its tables)",
            ));
        }
        if matches!(op.kind, OpKind::Calc { .. }) && op.nic != 0 {
            out.push(problem(
                at,
                "a calc cannot name a nic".into(),
                "calc with a nic",
                "remove the nic: a calc runs on a cpu only",
            ));
        }
    }
    for (k, d) in rank.deps.iter().enumerate() {
        if d.op as usize >= rank.ops.len() || d.on as usize >= rank.ops.len() {
            out.push(problem(
                At::Dep(r, k),
                format!("a dependency of rank {r} names an op that does not exist"),
                "no such op",
                "dependencies name ops of the same rank",
            ));
        }
    }
}
