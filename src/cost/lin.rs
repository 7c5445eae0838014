//! Costs as linear forms ([`Lin`]: multiples of `alpha_p`, of one message and of one reduction),
//! the form of each stage kind (the parent module's table), and the cost of a whole stage list
//! for `n` ranks.

use super::Params;
use super::int;
use crate::sema::model::{CostModel, Stage};
use num_rational::BigRational;

/// A cost as whole multiples of `alpha_p`, of one message (`alpha_r + n beta`) and of one
/// reduction (`n gamma`). Every stage cost in this module has this form, so a schedule's cost
/// is three integers; `stages` is also the number of stages (each stage pays `alpha_p` once).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Lin {
    pub stages: u64,
    pub msgs: u64,
    pub reduces: u64,
}

impl Lin {
    pub const ZERO: Lin = Lin {
        stages: 0,
        msgs: 0,
        reduces: 0,
    };

    pub(super) fn stage(msgs: u64, reduces: u64) -> Lin {
        Lin {
            stages: 1,
            msgs,
            reduces,
        }
    }

    /// The exact cost in seconds.
    pub fn seconds(&self, p: &Params, bytes: u64) -> BigRational {
        &p.alpha_p * int(self.stages)
            + p.per_message(bytes) * int(self.msgs)
            + p.per_reduce(bytes) * int(self.reduces)
    }
}

impl std::ops::Add for Lin {
    type Output = Lin;
    fn add(self, o: Lin) -> Lin {
        Lin {
            stages: self.stages.saturating_add(o.stages),
            msgs: self.msgs.saturating_add(o.msgs),
            reduces: self.reduces.saturating_add(o.reduces),
        }
    }
}

/// `aB` (eq. 3 with `b = B - 1`); also the collapse `cTmB`.
pub(super) fn factor_lin(base: u64) -> Lin {
    let b = base.saturating_sub(1);
    Lin::stage(b, b)
}

/// `eTmB`: `B - 1` sends, no reduction.
pub(super) fn expand_lin(base: u64) -> Lin {
    Lin::stage(base.saturating_sub(1), 0)
}

/// `mRgGaB`: group 0 of the first stage also receives `ceil(R/G)` remainders.
pub(super) fn merge_lin(remainder: u64, groups: u64, base: u64) -> Lin {
    let k = remainder.div_ceil(groups.max(1));
    let m = base.saturating_sub(1).saturating_add(k);
    Lin::stage(m, m)
}

/// How many remainder ranks the fullest last-stage group of an inverse merge feeds: remainder
/// `i` is fed by group `(i mod G) mod L`.
pub fn inv_merge_fanout(remainder: u64, groups: u64, last_groups: u64) -> u64 {
    let (g, l) = (groups.max(1), last_groups.max(1));
    g.div_ceil(l)
        .saturating_mul(remainder / g)
        .saturating_add((remainder % g).div_ceil(l))
}

/// `nRgGaB` in a merge group of `size` ranks (so `L = size / B` last-stage groups).
pub(super) fn inv_merge_lin(remainder: u64, groups: u64, base: u64, size: u64) -> Lin {
    let f = inv_merge_fanout(remainder, groups, size / base.max(1));
    let b = base.saturating_sub(1);
    Lin::stage(b.saturating_add(f), b)
}
/// The cost of each stage of a list for `n` ranks, as [`Lin`]s (see the module doc's table).
/// The list should pass `sema::schedule::stage_problem`; for one that does not, each stage is
/// still costed (group sizes are tracked as well as they can be) and nothing panics.
pub fn stage_lins(stages: &[Stage], n: u64) -> Vec<Lin> {
    // Group sizes, innermost last, as `stage_problem` tracks them.
    let mut size = n;
    let mut stack: Vec<u64> = Vec::new();
    stages
        .iter()
        .map(|s| match *s {
            Stage::Factor { base } => factor_lin(base),
            Stage::Collapse { threshold, base } => {
                stack.push(size);
                let t = threshold.min(size);
                size = (t / base.max(1)).saturating_add(size - t);
                factor_lin(base)
            }
            Stage::Expand { base, .. } => {
                size = stack.pop().unwrap_or(size);
                expand_lin(base)
            }
            Stage::Merge {
                remainder,
                groups,
                base,
            } => {
                stack.push(size);
                size = size.saturating_sub(remainder);
                merge_lin(remainder, groups, base)
            }
            Stage::InvMerge {
                remainder,
                groups,
                base,
            } => {
                let l = inv_merge_lin(remainder, groups, base, size);
                size = stack.pop().unwrap_or(size);
                l
            }
        })
        .collect()
}

/// The cost in seconds of each stage of `stages` on `n` ranks under `p`, for `bytes`-byte
/// messages.
pub fn stage_costs(stages: &[Stage], n: u64, p: &Params, bytes: u64) -> Vec<BigRational> {
    stage_lins(stages, n)
        .iter()
        .map(|l| l.seconds(p, bytes))
        .collect()
}

/// The modelled cost of an explicit stage list on `n` ranks with `bytes`-byte messages: the sum
/// of its stages' costs (module doc) under `model`'s parameters ([`Params::for_model`]).
pub fn schedule_cost(stages: &[Stage], n: u64, model: &CostModel, bytes: u64) -> BigRational {
    schedule_cost_with(stages, n, &Params::for_model(Some(model)), bytes)
}

/// [`schedule_cost`] with explicit parameters.
pub fn schedule_cost_with(stages: &[Stage], n: u64, p: &Params, bytes: u64) -> BigRational {
    stage_lins(stages, n)
        .into_iter()
        .fold(Lin::ZERO, |a, b| a + b)
        .seconds(p, bytes)
}
