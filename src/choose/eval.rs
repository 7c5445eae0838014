//! One (family, size) pair of a file simulated on its topology under the flow-level model: the
//! file's model with the schedule and the collective's size swapped in, lowered and run by
//! [`crate::sim::fluid`] (host families) or tree by tree (forests).

use crate::diag::Diagnostic;
use crate::net::{FlowParams, Net};
use crate::sema::model::{Family, Model, Schedule};
use crate::sim::fluid::FlowRun;

/// `m` with `family` as its schedule and a collective of `bytes` bytes (at least one element).
pub fn with_family_and_size(m: &Model, family: &Family, bytes: u64) -> Model {
    let mut out = m.clone();
    if let Some(c) = out.collective.as_mut() {
        c.count = (bytes / c.dtype.bytes()).max(1);
    }
    let span = m
        .schedule
        .as_ref()
        .map(|s| s.span)
        .or(m.collective.as_ref().map(|c| c.span))
        .unwrap_or_default();
    out.schedule = Some(Schedule {
        family: family.clone(),
        span,
    });
    out
}

/// The flow-level run of `family` on `m`'s topology at `bytes`.
pub fn evaluate(
    m: &Model,
    family: &Family,
    bytes: u64,
    params: &FlowParams,
) -> Result<FlowRun, Vec<Diagnostic>> {
    let mm = with_family_and_size(m, family, bytes);
    let Some(topo) = mm.topology.as_ref() else {
        return Err(Vec::new());
    };
    let net = Net::new(topo);
    if let Family::Forest { k, chunks } = family {
        return forest(&mm, *k, *chunks, params);
    }
    let low = crate::sim::fluid::lower(&mm, params)?;
    low.simulate(&net, params, false).map_err(|e| {
        vec![
            Diagnostic::error(crate::diag::Code::GoalInvalid, mm.build_span(None), e)
                .label("this schedule")
                .help("this is a bug in collc: please report it with the file"),
        ]
    })
}

/// A forest's time from the tree-level flow model.
fn forest(
    m: &Model,
    k: crate::sema::model::AutoOr<u64>,
    chunks: u64,
    params: &FlowParams,
) -> Result<FlowRun, Vec<Diagnostic>> {
    use num_rational::BigRational;
    use num_traits::ToPrimitive;
    let (Some(c), Some(topo)) = (m.collective.as_ref(), m.topology.as_ref()) else {
        return Err(Vec::new());
    };
    let span = m.schedule.as_ref().map_or(c.span, |s| s.span);
    let forests = crate::lower::forest::solve(m, c, k, span)?;
    let refs: Vec<&crate::forest::Forest> = forests.iter().collect();
    let n = c.ranks.len();
    let t = crate::sim::flow::forest_time(
        topo,
        c.kind,
        n,
        &BigRational::from_integer(c.bytes().into()),
        chunks,
        &refs,
    );
    let seconds = t.seconds.to_f64().unwrap_or(0.0) + params.overhead_s();
    Ok(FlowRun {
        finish: vec![seconds; n],
        link_bytes: Vec::new(),
        messages: 0,
        spans: None,
    })
}
