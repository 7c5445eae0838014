//! The size of a lowered program estimated from the model alone, before anything is lowered, and
//! the limit check on it ([`check`]): a schedule whose program would not fit in memory is a coded
//! error (E0046) at once instead of gigabytes later.
//!
//! Each family's estimate follows its lowering: [`super::ring`] and [`super::tree`] are counted
//! exactly, recursive doubling and multiplying ([`super::recursive`]) stage by stage from above
//! (a factor stage `aB` costs each active rank at most `B - 1` sends, receives and reductions and
//! a copy), and a forest from below (every tree spans every rank, and each tree edge is a send
//! and a receive: the real count is only known once the trees are solved, and
//! [`super::forest`] checks it again then). The unit test in this module holds the estimates
//! against real lowerings.

use crate::diag::{Code, Diagnostic, Span};
use crate::sema::elab::Limits;
use crate::sema::model::{AutoOr, Collective, CollectiveKind, Family, Stage};

/// Ops and buffer slots (all processes) of a program, or a lower bound on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    pub ops: u64,
    pub slots: u64,
    /// Whether the figures are a lower bound (a forest before solving) rather than a count or
    /// an upper bound.
    pub at_least: bool,
}

/// The size of the program `family` lowers `c` to, with `stages` the resolved stage list of
/// recursive multiplying (ignored by the other families). `None` for families collc does not
/// lower (those are refused elsewhere).
pub fn estimate(c: &Collective, family: &Family, stages: &[Stage]) -> Option<Estimate> {
    let n = c.ranks.len() as u64;
    let sq = n.saturating_mul(n);
    let exact = |ops: u64, slots: u64| {
        Some(Estimate {
            ops,
            slots,
            at_least: false,
        })
    };
    match family {
        Family::RecursiveMultiplying { .. } | Family::RecursiveDoubling => {
            let (ops, scratch) = recursive(n, stages);
            exact(ops, n.saturating_mul(2).saturating_add(scratch))
        }
        Family::Ring { slices, channels } => {
            let steps = n.saturating_sub(1);
            let s = u64::from(super::ring_slices(c, *slices));
            // Every channel is a ring of its own; `auto` counts one, as a lower bound, when
            // the search may lay more.
            let (ch, at_least) = match channels {
                AutoOr::Fixed(k) => ((*k).max(1), false),
                AutoOr::Auto => (1, super::ring_channel_room(c, s as u32) > 1),
            };
            let (ops, slots) = match c.kind {
                // out[c] accumulates chunk c: 3 ops per reduce-scatter step and slice, 2 per
                // allgather step and slice.
                CollectiveKind::Allreduce | CollectiveKind::Barrier => (
                    n.saturating_mul(5)
                        .saturating_mul(steps)
                        .saturating_mul(s)
                        .max(s),
                    sq.saturating_mul(2).saturating_mul(s),
                ),
                CollectiveKind::Allgather => (
                    n.saturating_mul(steps.saturating_mul(2).saturating_add(1)),
                    sq.saturating_add(n),
                ),
                _ => (
                    n.saturating_mul(3).saturating_mul(steps).max(1),
                    sq.saturating_add(n.saturating_mul(3)),
                ),
            };
            Some(Estimate {
                ops: ops.saturating_mul(ch),
                slots: slots.saturating_mul(ch),
                at_least,
            })
        }
        // A send and a receive per tree edge, a reduction and a copy per rank at most.
        Family::Binomial => exact(n.saturating_mul(4), n.saturating_mul(3)),
        // Per tree and chunk: a copy, a send and a receive each way per tree edge; one tree
        // pair counted (a lower bound: the boxes, which set the channels, are the topology's).
        Family::NcclTree { chunks } => {
            let slots = 2 * u64::from(super::nccl_tree_chunks(c, *chunks, 1));
            Some(Estimate {
                ops: slots.saturating_mul(n.saturating_mul(5)),
                slots: slots.saturating_mul(n.saturating_mul(2)),
                at_least: true,
            })
        }
        // A copy, then a send and a receive per peer.
        Family::Pairwise { .. } => exact(
            n.saturating_mul(n.saturating_sub(1).saturating_mul(2).saturating_add(1)),
            sq.saturating_mul(2),
        ),
        Family::Bruck { radix } => {
            let (n32, k) = (u32::try_from(n).ok()?, u32::try_from(*radix).ok()?);
            exact(
                n.saturating_mul(super::alltoall::bruck_ops_per_rank(n32, k)),
                sq.saturating_mul(4),
            )
        }
        // At least every block sent and received once (the boxes, which decide the rest, are
        // the topology's).
        Family::Hierarchical | Family::Mcf { .. } => Some(Estimate {
            ops: n.saturating_mul(n.saturating_sub(1).saturating_mul(2).saturating_add(1)),
            slots: sq.saturating_mul(2),
            at_least: true,
        }),
        Family::Forest { .. } => {
            let forests = super::forest::needs(c);
            let ops: u64 = forests
                .iter()
                .map(|(roots, _)| {
                    let roots = match roots {
                        crate::forest::Roots::All => n,
                        crate::forest::Roots::One(_) => 1,
                    };
                    roots.saturating_mul(2).saturating_mul(n.saturating_sub(1))
                })
                .fold(0, u64::saturating_add);
            let parts = match c.kind {
                CollectiveKind::Allgather | CollectiveKind::ReduceScatter => n.saturating_add(1),
                _ => 2,
            };
            Some(Estimate {
                ops,
                slots: n.saturating_mul(parts),
                at_least: true,
            })
        }
        _ => None,
    }
}

/// Ops (from above) and scratch slots (all ranks) of recursive multiplying with `stages` on `n`
/// ranks: the lowering walks the stages with a group that collapses and merges shrink and
/// expands and inverse merges restore.
fn recursive(n: u64, stages: &[Stage]) -> (u64, u64) {
    let mut active = n;
    let mut saved: Vec<u64> = Vec::new();
    // Every rank copies its value to its output once (at its first reduction, or at the end).
    let mut ops = n;
    let mut widest = 1u64;
    // A send, a receive and a reduction per peer.
    let factor = |active: u64, b: u64| active.saturating_mul(b.saturating_sub(1).saturating_mul(3));
    for s in stages {
        match *s {
            Stage::Factor { base } => {
                ops = ops.saturating_add(factor(active, base));
                widest = widest.max(base);
            }
            Stage::Collapse { threshold, base } => {
                ops = ops.saturating_add(threshold.saturating_mul(3));
                saved.push(active);
                active = active.saturating_sub(threshold) + threshold / base.max(1);
            }
            Stage::Expand { threshold, .. } => {
                ops = ops.saturating_add(threshold.saturating_mul(3));
                active = saved.pop().unwrap_or(n);
            }
            Stage::Merge {
                remainder, base, ..
            }
            | Stage::InvMerge {
                remainder, base, ..
            } => {
                let inner = if matches!(s, Stage::Merge { .. }) {
                    saved.push(active);
                    active = active.saturating_sub(remainder);
                    active
                } else {
                    let inner = active;
                    active = saved.pop().unwrap_or(n);
                    inner
                };
                ops = ops
                    .saturating_add(factor(inner, base))
                    .saturating_add(remainder.saturating_mul(base).saturating_mul(4));
                widest = widest.max(base.saturating_add(1));
            }
        }
    }
    (ops, n.saturating_mul(widest.saturating_add(1)))
}

pub(crate) fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// E0046 when `e` (for `family` on `c`) exceeds `limits`, at `span` (the schedule).
pub fn check(
    c: &Collective,
    family: &Family,
    e: Estimate,
    limits: &Limits,
    span: Span,
) -> Result<(), Diagnostic> {
    let about = if e.at_least { "at least" } else { "about" };
    let n = thousands(c.ranks.len() as u64);
    let (what, have, limit, flag) = if e.ops > limits.max_ops {
        ("ops", e.ops, limits.max_ops, "--max-ops")
    } else if e.slots > limits.max_slots {
        ("buffer slots", e.slots, limits.max_slots, "--max-slots")
    } else {
        return Ok(());
    };
    Err(Diagnostic::error(
        Code::ProgramTooLarge,
        span,
        format!(
            "the `{}` schedule of this {} on {n} ranks lowers to {about} {} {what}, more than the limit of {}",
            family.name(),
            c.kind.name(),
            thousands(have),
            thousands(limit)
        ),
        )
        .label("too large to lower")
        .help(format!(
            "use fewer ranks or a schedule with fewer messages; if the size is intended, raise the limit with `{flag} {}`",
            have.saturating_add(1).checked_next_power_of_two().unwrap_or(u64::MAX)
        ))
        .note("the limits keep collc's memory bounded: each op costs about a hundred bytes while it is lowered and proved"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sema::model::{AutoOr, Dtype, Model, ReduceOp};

    fn real(kind: CollectiveKind, n: usize, family: Family) -> (u64, u64, Estimate) {
        let m = Model::bare(
            kind,
            n,
            64 * n as u64,
            Dtype::F32,
            ReduceOp::Sum,
            None,
            family,
        );
        let c = m.collective.as_ref().unwrap();
        let fam = super::super::family_of(&m, kind);
        let stages = match &fam {
            Family::RecursiveMultiplying {
                stages: AutoOr::Fixed(s),
                ..
            } => s.clone(),
            Family::RecursiveDoubling => crate::cost::doubling_stages(n as u64),
            _ => Vec::new(),
        };
        let e = estimate(c, &fam, &stages).unwrap();
        let p = super::super::lower(&m).unwrap_or_else(|d| panic!("{n}: {}", d[0].message));
        let slots: u64 = (0..p.procs.len() as u32)
            .map(|pi| {
                [
                    crate::ir::Buf::Input,
                    crate::ir::Buf::Output,
                    crate::ir::Buf::Scratch,
                ]
                .iter()
                .map(|b| u64::from(p.buffer_len(pi, *b)))
                .sum::<u64>()
            })
            .sum();
        (p.op_count() as u64, slots, e)
    }

    #[test]
    fn estimates_bound_the_lowered_programs() {
        for n in 1..=70 {
            let mut cases = vec![
                (CollectiveKind::Allreduce, Family::ring()),
                (CollectiveKind::Allgather, Family::ring()),
                (CollectiveKind::ReduceScatter, Family::ring()),
                (CollectiveKind::Broadcast, Family::Binomial),
                (CollectiveKind::Reduce, Family::Binomial),
            ];
            if n > 1 {
                cases.push((CollectiveKind::Allreduce, Family::RecursiveDoubling));
            }
            for (kind, family) in cases {
                let (ops, slots, e) = real(kind, n, family.clone());
                assert!(
                    ops <= e.ops && e.ops <= 2 * ops + 8,
                    "{family:?} {kind:?} on {n}: {ops} ops, estimated {}",
                    e.ops
                );
                assert!(
                    slots <= e.slots && e.slots <= 3 * slots + 8,
                    "{family:?} {kind:?} on {n}: {slots} slots, estimated {}",
                    e.slots
                );
            }
        }
    }

    #[test]
    fn recursive_multiplying_estimates_bound_every_stage_kind() {
        let lists: &[(usize, &str)] = &[
            (12, "a3 a4"),
            (12, "a2 a2 a3"),
            (10, "c4m2 a2 a4 e4m2"),
            (9, "c3m3 a7 e3m3"),
            (11, "m3g2a2 n3g2a4"),
            (13, "m1g1a3 a2 n1g1a2"),
            (21, "m1g1a4 n1g1a5"),
            (64, "a4 a16"),
            (256, "a4 a4 a4 a4"),
        ];
        for &(n, list) in lists {
            let stages: Vec<Stage> = list
                .split(' ')
                .map(|s| {
                    crate::sema::schedule::decode_stage(s)
                        .expect("a stage")
                        .expect("in range")
                })
                .collect();
            let family = Family::RecursiveMultiplying {
                stages: AutoOr::Fixed(stages),
                model: None,
            };
            let (ops, slots, e) = real(CollectiveKind::Allreduce, n, family);
            assert!(
                ops <= e.ops && e.ops <= 2 * ops + 8,
                "{list} on {n}: {ops} ops, estimated {}",
                e.ops
            );
            // Factor stages alone are counted exactly: the lowering reserves that much room.
            if list.split(' ').all(|s| s.starts_with('a')) {
                assert_eq!(ops, e.ops, "{list} on {n}");
            }
            assert!(
                slots <= e.slots && e.slots <= 4 * slots + 8,
                "{list} on {n}: {slots} slots, estimated {}",
                e.slots
            );
        }
    }
}
