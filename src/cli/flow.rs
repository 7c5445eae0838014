//! `collc sim FILE.coll` under the flow-level model ([`crate::sim::flow`]): chosen when
//! `--model` or the `sim` target names a `flow` model, or, with neither, when the schedule is
//! `forest` or the file's only model is a `flow` one. Prints the forest's and the best ring's time
//! and algorithmic bandwidth for 1 MiB to 1 GiB, then both at the collective's own size with the
//! forest's busiest link. The forest is the schedule's (its `k` and `chunks`) or, for another
//! family, ForestColl with `k: auto` and one chunk, for comparison.

use crate::diag::{Code, Diagnostic, Span};
use crate::forest::Forest;
use crate::progress::{Phase, Progress};
use crate::sema::model::{AutoOr, CostModelKind, Family, Model, ModelParam, TargetKind};
use crate::sim::flow::{self, Ring};
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};

/// True when `collc sim` should use the flow model; see the module doc.
pub(super) fn wanted(m: &Model, asked: Option<&str>) -> bool {
    let target = m
        .targets
        .iter()
        .filter(|t| t.kind == TargetKind::Sim)
        .find_map(|t| match t.options.get("model") {
            Some(ModelParam::Word(w)) => Some(w.as_str()),
            _ => None,
        });
    match asked.or(target) {
        Some(name) => m
            .models
            .iter()
            .any(|x| x.name == name && x.kind == CostModelKind::Flow),
        None => {
            matches!(
                m.schedule.as_ref().map(|s| &s.family),
                Some(Family::Forest { .. })
            ) || (m.models.len() == 1 && m.models[0].kind == CostModelKind::Flow)
        }
    }
}

/// The flow report for a checked model; solving the forests is [`Phase::Solve`], the table
/// [`Phase::Simulate`].
pub(super) fn report(m: &Model, progress: &dyn Progress) -> Result<String, Vec<Diagnostic>> {
    let (Some(c), Some(topo)) = (m.collective.as_ref(), m.topology.as_ref()) else {
        return Err(vec![
            Diagnostic::error(
                Code::MissingDeclaration,
                Span::default(),
                "the flow model needs a topology and a collective",
            )
            .label("nothing to simulate")
            .help("declare both, e.g. `collective allgather { size: 64 MiB; }`"),
        ]);
    };
    let span = m.schedule.as_ref().map_or(c.span, |s| s.span);
    let (k, chunks) = match m.schedule.as_ref().map(|s| &s.family) {
        Some(Family::Forest { k, chunks }) => (*k, *chunks),
        _ => (AutoOr::Auto, 1),
    };
    progress.phase(Phase::Solve, None);
    let forests = crate::lower::forest::solve(m, c, k, span)?;
    progress.phase(Phase::Simulate, None);
    let refs: Vec<&Forest> = forests.iter().collect();
    let n = c.ranks.len();
    let ring = Ring::new(topo, &c.ranks);
    let time = |b: &BigRational| flow::forest_time(topo, c.kind, n, b, chunks, &refs);
    let trees: usize = forests.iter().map(|f| f.trees.len()).sum();
    let mut out = format!(
        "flow model: {} on `{}` ({n} ranks)\nforest: k = {}, {trees} tree batches, {chunks} chunk{}; ring: best embedding, weakest cut {}, step latency {:.2} us\n",
        c.kind.name(),
        topo.name,
        forests.first().map_or(0, |f| f.k),
        if chunks == 1 { "" } else { "s" },
        crate::forest::report::gbs(&ring.lambda),
        ring.step.to_f64().unwrap_or(0.0) * 1e6
    );
    let depth = forests
        .iter()
        .flat_map(|f| &f.trees)
        .map(flow::depth)
        .max()
        .unwrap_or(0);
    // Without chunking: each phase moves a root's data at 1 / inv_rate.
    let per_root = if c.kind.has_root() { 1 } else { n };
    let inv: BigRational = forests.iter().map(|f| f.inv_rate.clone()).sum();
    if !inv.is_zero() {
        out.push_str(&format!(
            "forest without chunking limits: {}; its deepest tree is {depth} edges deep, so {chunks} chunk{} reach about {:.0}% of it\n",
            crate::forest::report::gbs(&(BigRational::from_integer(per_root.into()) / inv)),
            if chunks == 1 { "" } else { "s" },
            100.0 * chunks as f64 / (chunks + depth.max(1) - 1) as f64
        ));
    }
    out.push_str(&flow::table(c.kind, &time, &ring));
    let bytes = BigRational::from_integer(c.bytes().into());
    let t = time(&bytes);
    if let Some((e, busy)) = t.busiest(topo) {
        let (a, b) = topo
            .graph
            .edge_endpoints(petgraph::graph::EdgeIndex::new(e))
            .unzip();
        let name = |x: Option<petgraph::graph::NodeIndex>| {
            x.map_or("?", |i| topo.nodes[i.index()].name.as_str())
        };
        out.push_str(&format!(
            "at {} B: busiest link {} -> {}, busy {:.1}% of the forest's time\n",
            c.bytes(),
            name(a),
            name(b),
            busy.to_f64().unwrap_or(0.0) * 100.0
        ));
    }
    Ok(out)
}
