//! The second half of the reader: file structure (`num_ranks`, rank order), labels used before
//! or without a definition, then [`validate`] on the assembled schedule (all E0038).

use super::Parser;
use crate::backend::goal::validate::validate;
use crate::backend::goal::{Dep, GoalOp, GoalRank, GoalSchedule, GoalSpans, Label};
use crate::diag::{Code, Diagnostic};

impl Parser<'_> {
    /// Checks what the scanner collected and builds the schedule.
    pub(super) fn assemble(mut self) -> Result<(GoalSchedule, GoalSpans), Vec<Diagnostic>> {
        let file_start = self.span(0, 0);
        // Dependencies on labels that were not defined when the dependency was read.
        for b in &self.blocks {
            for (name, at, line) in &b.missing {
                let d = match b.labels.get(name) {
                    Some((_, def)) if def.start > line.start => Diagnostic::error(
                        Code::GoalInvalid,
                        *at,
                        format!("`{name}` is used before it is defined"),
                    )
                    .label("not defined yet")
                    .secondary(*def, "defined here, further down")
                    .help("txt2bin resolves labels as it reads: write dependency lines after the ops they name"),
                    _ => Diagnostic::error(
                        Code::GoalInvalid,
                        *at,
                        format!("label `{name}` is not defined in rank {}", b.number),
                    )
                    .label("undefined label")
                    .help("dependencies name labels of ops of the same rank (labels are per rank)"),
                };
                self.semantic.push(d);
            }
        }
        let num_ranks = match self.num_ranks.first() {
            None => {
                let at = self.blocks.first().map(|b| b.head).unwrap_or(file_start);
                self.semantic.push(
                    Diagnostic::error(Code::GoalInvalid, at, "the file has no `num_ranks` line")
                        .label("the number of ranks is never given")
                        .help("start the file with `num_ranks N` (txt2bin stops with \"Number of Ranks undefined\")"),
                );
                None
            }
            Some(&(n, at)) => {
                for (_, again) in self.num_ranks.iter().skip(1) {
                    self.semantic.push(
                        Diagnostic::error(Code::GoalInvalid, *again, "`num_ranks` is given twice")
                            .label("again here")
                            .secondary(at, "first given here")
                            .help("give `num_ranks N` once, first in the file"),
                    );
                }
                if let Some(b) = self.blocks.first().filter(|b| b.head.start < at.start) {
                    self.semantic.push(
                        Diagnostic::error(
                            Code::GoalInvalid,
                            at,
                            "`num_ranks` comes after the first rank",
                        )
                        .label("too late")
                        .secondary(b.head, "the first rank")
                        .help("move `num_ranks N` before the first `rank` block"),
                    );
                }
                if n == 0 {
                    self.semantic.push(
                        Diagnostic::error(
                            Code::GoalInvalid,
                            at,
                            "a schedule needs at least one rank",
                        )
                        .label("zero ranks")
                        .help("give the number of ranks, `num_ranks N` with N >= 1"),
                    );
                }
                Some((n, at))
            }
        };
        if let Some((n, at)) = num_ranks.filter(|(n, _)| *n > 0) {
            let mut ordered = true;
            for (i, b) in self.blocks.iter().enumerate() {
                let i = i as u64;
                if b.number == i && i < n {
                    continue;
                }
                ordered = false;
                let (message, label, help) = if b.number >= n {
                    (
                        format!("rank {} is outside `num_ranks {n}`", b.number),
                        "no such rank".to_string(),
                        if n == 1 {
                            "the only rank is rank 0".to_string()
                        } else {
                            format!("ranks are numbered 0 to {}", n - 1)
                        },
                    )
                } else if let Some(later) =
                    self.blocks.iter().skip(i as usize).find(|x| x.number == i)
                {
                    let d = Diagnostic::error(
                        Code::GoalInvalid,
                        b.head,
                        format!(
                            "ranks are out of order: rank {} comes before rank {i}",
                            b.number
                        ),
                    )
                    .label("out of order")
                    .secondary(later.head, format!("rank {i} is here"))
                    .help("write every rank once, in ascending order (txt2bin aborts otherwise)");
                    self.semantic.push(d);
                    break;
                } else if b.number < i {
                    (
                        format!("rank {} appears again (rank {i} expected here)", b.number),
                        "repeated rank".to_string(),
                        "write every rank once, in ascending order (txt2bin aborts otherwise)"
                            .to_string(),
                    )
                } else {
                    (
                        format!("rank {i} is missing: rank {} comes next", b.number),
                        format!("rank {i} expected here"),
                        "write every rank from 0 once, in ascending order, even if its block is empty".to_string(),
                    )
                };
                self.semantic.push(
                    Diagnostic::error(Code::GoalInvalid, b.head, message)
                        .label(label)
                        .help(help),
                );
                break;
            }
            if ordered && (self.blocks.len() as u64) < n {
                self.semantic.push(
                    Diagnostic::error(
                        Code::GoalInvalid,
                        at,
                        format!(
                            "`num_ranks {n}`, but the file has {} rank block{}",
                            self.blocks.len(),
                            if self.blocks.len() == 1 { "" } else { "s" }
                        ),
                    )
                    .label(if self.blocks.len() as u64 + 1 == n {
                        format!("rank {} is missing", n - 1)
                    } else {
                        format!("ranks {} to {} are missing", self.blocks.len(), n - 1)
                    })
                    .help("write a block for every rank, or lower `num_ranks` (txt2bin loops forever looking for the missing ranks)"),
                );
            }
        }
        if !self.semantic.is_empty() {
            self.semantic.sort_by_key(|d| d.primary.span.start);
            return Err(self.semantic);
        }
        let mut spans = GoalSpans {
            num_ranks: num_ranks.map(|x| x.1).unwrap_or(file_start),
            ..GoalSpans::default()
        };
        let mut sched = GoalSchedule::default();
        for b in self.blocks {
            spans.ranks.push(b.head);
            spans.ops.push(b.ops.iter().map(|o| o.span).collect());
            spans.deps.push(b.deps.iter().map(|d| d.span).collect());
            sched.ranks.push(GoalRank {
                comment: None,
                ops: b
                    .ops
                    .into_iter()
                    .map(|o| GoalOp {
                        label: o.label.map(|l| Label::Text(l.0)),
                        kind: o.kind,
                        cpu: o.cpu,
                        nic: o.nic,
                    })
                    .collect(),
                deps: b
                    .deps
                    .iter()
                    .map(|d| Dep {
                        op: d.op,
                        on: d.on,
                        kind: d.kind,
                    })
                    .collect(),
            });
        }
        let problems = validate(&sched);
        if problems.is_empty() {
            return Ok((sched, spans));
        }
        Err(problems.iter().map(|p| p.diagnostic(&spans)).collect())
    }
}
