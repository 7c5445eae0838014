//! The `schedule` declaration: family and parameters, and the rank/factor consistency of
//! recursive-multiplying stage lists (../shared/seeds/recursive-multiplying.txt, Section 4.2).
//!
//! Stage semantics used for the checks, following Algorithms 2-6 of the paper:
//! - `aB` multiplies the current group's stage mask by B; the factors of a group must multiply to
//!   the group's size.
//! - `cTmB` collapses ranks below T in blocks of B into one rank each (T divisible by B, T at most
//!   the group size), so the group shrinks to T/B + (n - T); `eTmB` undoes the innermost
//!   unmatched collapse and must repeat its T and B. MPICH's recursive doubling for 6 ranks is
//!   `[c4m2, a2, a2, e4m2]`.
//! - `mRgGaB` sets R remainder ranks aside (the group shrinks to n - R) and acts as the first
//!   factor stage B of the rest; each remainder rank feeds one of G groups of B, so
//!   1 <= G <= (n - R) / B. `nRgGaB` is the inverse merge: the last factor stage B of the group,
//!   with the same R and G. The paper's 7-rank example is `[m1g1a3, n1g1a2]`.
//!
//! Nesting is stack-like: every collapse and merge is closed by its expand or inverse merge.

mod canary;
mod check;
mod decl;
mod decode;
mod fault;
#[cfg(test)]
mod tests;

use super::model::{CollectiveKind, Family};
use super::value::Value;

pub use canary::{DEFAULT_MTU, default_params, default_shards, max_switch_ports};
pub use check::stage_problem;
pub use decode::{decode_stage, suggestions};
pub use fault::{Fault, StageProblem};

/// Schedule families and the properties each accepts.
pub const FAMILIES: &[(&str, &[&str])] = &[
    ("recursive_multiplying", &["stages", "model"]),
    ("recursive_doubling", &[]),
    ("ring", &["slices", "channels"]),
    ("binomial", &[]),
    ("nccl_tree", &["chunks"]),
    ("forest", &["k", "chunks"]),
    (
        "canary",
        &[
            "timeout",
            "table_size",
            "elements_per_packet",
            "shards",
            "leader",
            "root",
            "retransmit",
            "retries",
            "recovery",
            "leader_delay",
            "fixed_point",
        ],
    ),
    ("static_trees", &["trees", "roots", "seed", "slots"]),
    ("pairwise", &["concurrent"]),
    ("bruck", &["radix"]),
    ("hierarchical", &[]),
    ("mcf", &["chunks"]),
    ("auto", &[]),
];

/// Collectives each family implements.
pub fn supports(family: &Family, kind: CollectiveKind) -> bool {
    use CollectiveKind::*;
    match family {
        Family::RecursiveMultiplying { .. } | Family::RecursiveDoubling => {
            matches!(kind, Allreduce | Barrier)
        }
        Family::Ring { .. } => matches!(kind, Allreduce | Allgather | ReduceScatter | Barrier),
        Family::Binomial => matches!(kind, Broadcast | Reduce),
        Family::NcclTree { .. } => matches!(kind, Allreduce),
        Family::Forest { .. } => matches!(
            kind,
            Allreduce | Allgather | ReduceScatter | Broadcast | Reduce
        ),
        Family::Canary(_) => matches!(kind, Allreduce | Barrier | Reduce | Broadcast),
        Family::StaticTrees { .. } => matches!(kind, Allreduce | Reduce | Broadcast),
        Family::Pairwise { .. }
        | Family::Bruck { .. }
        | Family::Hierarchical
        | Family::Mcf { .. } => kind == Alltoall,
        Family::Auto => true,
    }
}

impl Value {
    /// True for the value `auto`.
    pub fn is_auto(&self) -> bool {
        matches!(self, Value::Auto)
    }
}
