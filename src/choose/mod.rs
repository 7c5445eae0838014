//! Choosing among schedule families for a file: [`candidates`] lists the families that implement
//! its collective on its topology (what `collc compare` sweeps and `schedule auto` picks from),
//! and [`evaluate`] simulates one family at one size on the file's network under the flow-level
//! model. Every figure `collc compare` shows comes from [`evaluate`].

use crate::diag::{Code, Diagnostic};
use crate::net::FlowParams;
use crate::sema::model::{AutoOr, Family, Model, Schedule};
use crate::sema::schedule::supports;
use crate::sim::fluid::FlowRun;

/// Pipelined chunks per tree of the `forest` candidate.
// CHUNKS-AUTO: becomes `chunks: auto` when forest chunks can be chosen automatically (being
// added on another branch); until then one chunk, which always fits the lowering's limits.
pub const FOREST_CHUNKS: u64 = 1;

/// The families that implement the file's collective, with their parameters left to collc
/// (`stages: auto`, `k: auto`), in a fixed order: ring, recursive doubling, recursive
/// multiplying, binomial, forest. Exactly those [`crate::lower`] lowers for the collective
/// (`sema::schedule::supports`): canary and static in-network trees are left out until they
/// can be lowered, and forest when the file has no topology to build trees on. Empty without
/// a collective.
pub fn candidates(m: &Model) -> Vec<Family> {
    let Some(c) = &m.collective else {
        return Vec::new();
    };
    [
        Family::Ring,
        Family::RecursiveDoubling,
        Family::RecursiveMultiplying {
            stages: AutoOr::Auto,
            model: None,
        },
        Family::Binomial,
        Family::Forest {
            k: AutoOr::Auto,
            chunks: FOREST_CHUNKS,
        },
    ]
    .into_iter()
    .filter(|f| supports(f, c.kind))
    .filter(|f| m.topology.is_some() || !matches!(f, Family::Forest { .. }))
    .collect()
}

/// Simulates `family` on the file's topology and collective resized to `bytes`, under the flow
/// parameters `params`.
pub fn evaluate(
    m: &Model,
    family: &Family,
    bytes: u64,
    params: &FlowParams,
) -> Result<FlowRun, Vec<Diagnostic>> {
    // TEMPORARY: replaced on merge. A cheap stand-in so `collc compare` can be developed: it
    // lowers the resized model (so a family that cannot build fails here as it will), then
    // estimates a time without simulating: a forest by `sim::flow::forest_time`, anything else
    // by its busiest rank's messages (each `overhead` plus the ring's step latency) and bytes
    // sent over the best ring's weakest cut.
    use crate::sim::flow::{Ring, forest_time};
    use num_rational::BigRational;
    use num_traits::ToPrimitive;
    let mut m = m.clone();
    let missing = |what: &str| {
        vec![
            Diagnostic::error(
                Code::MissingDeclaration,
                crate::diag::Span::default(),
                format!("evaluating a schedule needs a {what}"),
            )
            .label("missing")
            .help(format!("declare a {what}")),
        ]
    };
    let Some(c) = m.collective.as_mut() else {
        return Err(missing("collective"));
    };
    c.count = (bytes / c.dtype.bytes()).max(1);
    let span = c.span;
    m.schedule = Some(Schedule {
        family: family.clone(),
        span: m.schedule.as_ref().map_or(span, |s| s.span),
    });
    let program = crate::lower::lower(&m)?;
    let (Some(c), Some(topo)) = (m.collective.as_ref(), m.topology.as_ref()) else {
        return Err(missing("topology"));
    };
    let n = c.ranks.len();
    let exact = BigRational::from_integer(bytes.into());
    let seconds = match family {
        Family::Forest { k, chunks } => {
            let forests = crate::lower::forest::solve(&m, c, *k, span)?;
            let refs: Vec<&crate::forest::Forest> = forests.iter().collect();
            forest_time(topo, c.kind, n, &exact, *chunks, &refs)
                .seconds
                .to_f64()
                .unwrap_or(0.0)
                + params.overhead_s()
        }
        _ => {
            let ring = Ring::new(topo, &c.ranks);
            let lambda = ring.lambda.to_f64().unwrap_or(0.0);
            let step = ring.step.to_f64().unwrap_or(0.0);
            let busiest = program
                .procs
                .iter()
                .map(|p| {
                    p.ops.iter().fold((0u64, 0u64), |(k, b), op| match op.kind {
                        crate::ir::OpKind::Send { src, .. } => {
                            (k + 1, b + program.slice_bytes(src))
                        }
                        _ => (k, b),
                    })
                })
                .max()
                .unwrap_or((0, 0));
            let wire = if lambda > 0.0 {
                busiest.1 as f64 / lambda
            } else {
                0.0
            };
            busiest.0 as f64 * (params.overhead_s() + step) + wire
        }
    };
    Ok(FlowRun {
        finish: vec![seconds; n],
        link_bytes: Vec::new(),
        messages: 0,
        spans: None,
    })
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
            ["ring", "recursive_doubling", "recursive_multiplying"]
        );
        assert_eq!(names(CollectiveKind::Allgather), ["ring"]);
        assert_eq!(names(CollectiveKind::Broadcast), ["binomial"]);
        let mut none = bare(CollectiveKind::Allreduce);
        none.collective = None;
        assert!(candidates(&none).is_empty());
    }
}
