//! Choosing among schedule families for a file: [`candidates`] lists the families that implement
//! its collective on its topology (what `collc compare` sweeps and `schedule auto` picks from),
//! and [`evaluate`] simulates one family at one size on the file's network under the flow-level
//! model. Every figure `collc compare` shows comes from [`evaluate`].

mod auto;
mod eval;
pub mod windows;

pub use auto::{AutoPick, resolve};
pub use eval::{evaluate, evaluate_packet, with_family_and_size};

use crate::sema::model::{AutoOr, Family, Model, NodeKind};
use crate::sema::schedule::supports;

/// The families that implement the file's collective, with their parameters left to collc
/// (`channels: auto`, `stages: auto`, `k: auto`), in a fixed order: ring, recursive doubling, recursive
/// multiplying, binomial, NCCL's tree, forest; for all-to-all, shifted and concurrent pairwise
/// exchange, Bruck (radix 2) and the hierarchical exchange. Exactly those [`crate::lower`] lowers for the collective
/// (`sema::schedule::supports`): canary and static in-network trees are left out until they
/// can be lowered, and forest when the file has no topology to build trees on. Empty without
/// a collective.
pub fn candidates(m: &Model) -> Vec<Family> {
    let Some(c) = &m.collective else {
        return Vec::new();
    };
    [
        Family::channel_rings(),
        Family::RecursiveDoubling,
        Family::RecursiveMultiplying {
            stages: AutoOr::Auto,
            model: None,
        },
        Family::Binomial,
        Family::NcclTree {
            chunks: AutoOr::Auto,
        },
        Family::Forest {
            k: AutoOr::Auto,
            chunks: AutoOr::Auto,
        },
        Family::Pairwise { concurrent: false },
        Family::Pairwise { concurrent: true },
        Family::Bruck { radix: 2 },
        Family::Hierarchical,
        Family::Mcf {
            chunks: AutoOr::Auto,
        },
    ]
    .into_iter()
    .filter(|f| supports(f, c.kind))
    .filter(|f| {
        m.topology.is_some()
            || !matches!(
                f,
                Family::Forest { .. } | Family::Hierarchical | Family::Mcf { .. }
            )
    })
    .collect()
}

/// The in-network families the packet simulator runs, for files whose topology has switches:
/// one static tree (as SHARP, SwitchML or ATP) and four (as PANAMA, the Canary paper's
/// baseline), roots drawn by seed, and Canary with the file's Canary parameters when its
/// schedule is `canary`, else the defaults ([`crate::sema::schedule::default_params`]).
pub fn in_network_candidates(m: &Model) -> Vec<Family> {
    let (Some(c), Some(t)) = (&m.collective, &m.topology) else {
        return Vec::new();
    };
    if !t.nodes.iter().any(|n| n.kind == NodeKind::Switch) {
        return Vec::new();
    }
    let mut out: Vec<Family> = [1, 4].into_iter().map(Family::static_trees).collect();
    // Canary with the file's own parameters when it declares a Canary schedule (so a sweep
    // can vary its timeout), else the defaults.
    let canary = match m.schedule.as_ref().map(|s| &s.family) {
        Some(Family::Canary(cp)) => cp.as_ref().clone(),
        _ => crate::sema::schedule::default_params(t, c, &m.models),
    };
    out.push(Family::Canary(Box::new(canary)));
    out.retain(|f| supports(f, c.kind));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sema::model::{CollectiveKind, Dtype, ReduceOp};

    fn bare(kind: CollectiveKind) -> Model {
        Model::bare(
            kind,
            4,
            16,
            Dtype::F32,
            ReduceOp::Sum,
            Some(0),
            Family::Auto,
        )
    }

    #[test]
    fn candidates_are_the_lowerable_families_of_the_collective() {
        let names = |k| {
            candidates(&bare(k))
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
        };
        // A bare model has no topology, so no forest.
        assert_eq!(
            names(CollectiveKind::Allreduce),
            [
                "ring",
                "recursive_doubling",
                "recursive_multiplying",
                "nccl_tree"
            ]
        );
        assert_eq!(names(CollectiveKind::Allgather), ["ring"]);
        assert_eq!(names(CollectiveKind::Broadcast), ["binomial"]);
        assert_eq!(
            names(CollectiveKind::Alltoall),
            ["pairwise", "pairwise", "bruck"]
        );
        let mut none = bare(CollectiveKind::Allreduce);
        none.collective = None;
        assert!(candidates(&none).is_empty());
    }
}
