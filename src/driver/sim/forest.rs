//! A forest (ForestColl's trees) under the flow-level model: the forest (the schedule's `k`
//! and `chunks`) is simulated tree by tree on the file's network
//! ([`crate::sim::fluid::run_forest_in`]) with the chunk count
//! [`crate::forest::chunking::choose`] resolves at each size, under the flow parameters of the
//! model asked for, the `sim` target's or the only `flow` model ([`crate::net::for_file`]).
//!
//! The text: the forest's figures (k, trees, depth, chunking, the model's achievable and
//! optimal algbw at the file's size), the table of simulated time, algbw, busbw and chunks from
//! 1 MiB to 1 GiB beside the best ring, then at the file's size: the simulated time, per-rank
//! finish times (all ranks up to 64, else a summary and the latest) and the busiest links. With
//! `batch` only the latest finish (and no table: the run at the file's size is the only one).
//! The trace is the run's timeline at the file's size.

use super::{Engine, Figures, SimOutcome, SimRequest};
use crate::diag::Diagnostic;
use crate::forest::Forest;
use crate::forest::chunking::gbs_short;
use crate::forest::chunking::{self, Chunking};
use crate::net::{FlowParams, Net};
use crate::progress::{Phase, Progress};
use crate::sema::model::{AutoOr, Collective, Family, Model, Topology};
use crate::sim::flow::{self, Ring, Row};
use crate::sim::fluid::forest::ForestPaths;
use crate::sim::fluid::{FlowRun, run_forest_in};
use num_rational::BigRational;
use num_traits::ToPrimitive;

/// The collective `c` at another size (`bytes`, rounded down to whole elements, at least one).
fn resized(c: &Collective, bytes: u64) -> Collective {
    Collective {
        count: (bytes / c.dtype.bytes().max(1)).max(1),
        ..c.clone()
    }
}

/// Runs the forest of `m` under the flow model `asked` for (None: the file's); see the module
/// doc.
pub(super) fn run(
    m: &Model,
    asked: Option<&str>,
    req: &SimRequest,
    progress: &dyn Progress,
) -> Result<SimOutcome, Vec<Diagnostic>> {
    let (Some(c), Some(topo)) = (m.collective.as_ref(), m.topology.as_ref()) else {
        return Err(vec![super::fluid::no_network()]);
    };
    let span = m.schedule.as_ref().map_or(c.span, |s| s.span);
    let (k, asked_chunks) = match m.schedule.as_ref().map(|s| &s.family) {
        Some(Family::Forest { k, chunks }) => (*k, *chunks),
        _ => (AutoOr::Auto, AutoOr::Auto),
    };
    progress.phase(Phase::Solve, None);
    let (forests, ch) = crate::lower::forest::solve_chunked(m, c, k, asked_chunks, span)?;
    progress.phase(Phase::Simulate, None);
    let refs: Vec<&Forest> = forests.iter().collect();
    let at = m.schedule.as_ref().map_or(span, |s| s.prop_span("chunks"));
    let warnings: Vec<Diagnostic> = crate::lower::forest::chunk_warning(c, &ch, at)
        .into_iter()
        .collect();
    let params = crate::net::for_file(m, asked);
    let file = crate::net::for_file(m, None);
    let net = Net::new(topo);
    // The model's trees once (the simulated model's overhead), resized for every run below.
    let per = chunking::per_root(c);
    let mut trees = chunking::trees(topo, &params, &per, &refs);
    let depth = trees.iter().map(|t| t.depth).max().unwrap_or(0);
    let paths = ForestPaths::new(topo, &net, &params, &trees, &refs);
    let run = run_forest_in(&paths, &trees, c, &refs, ch.chunks, req.trace);
    let outcome = |text: String| {
        let mut o = SimOutcome::new(
            Engine::Forest,
            format!("flow model, {}", params.describe()),
            text,
            Figures {
                utilisation: Some(super::fluid::mean_utilisation(&net, &run)),
                ..Figures::of(m, latest(&run).1, run.finish.clone())
            },
        );
        o.trace_json = if req.trace { run.chrome_json() } else { None };
        o.warnings = warnings.clone();
        o.chunks = Some(ch.chunks);
        o
    };
    let n = c.ranks.len();
    if req.batch {
        let (r, t) = latest(&run);
        return Ok(outcome(format!(
            "Maximum finishing time at host {r}: {:.3} us ({} s)\n",
            t * 1e6,
            super::loggopsim::fmt_g(t)
        )));
    }
    let mut out = header(topo, c, &forests, &ch, &params, depth);
    let ring = Ring::new(topo, &c.ranks, &params, &net);
    out.push_str(&format!(
        "ring: best embedding, weakest cut {}, step latency {:.2} us (route and message overhead)\n",
        crate::forest::report::gbs(&ring.lambda),
        ring.step.to_f64().unwrap_or(0.0) * 1e6
    ));
    // The count at every size is the file's choice (its own flow parameters, as lowering
    // uses them); the run is under the simulated model's.
    let same = params.overhead == file.overhead && params.net_overhead == file.net_overhead;
    let mut chosen = if same {
        Vec::new()
    } else {
        chunking::trees(topo, &file, &per, &refs)
    };
    let mut rows = Vec::new();
    for bytes in flow::sizes() {
        let cs = resized(c, bytes);
        let p = chunking::per_root(&cs);
        chunking::resize(&mut trees, &p);
        chunking::resize(&mut chosen, &p);
        let by = if same { &trees } else { &chosen };
        let ch = chunking::choose_in(by, &cs, asked_chunks, &refs);
        let r = run_forest_in(&paths, &trees, &cs, &refs, ch.chunks, false);
        rows.push((bytes, r.seconds(), ch.chunks));
    }
    let row = |bytes: u64| {
        let (_, seconds, chunks) = rows
            .iter()
            .copied()
            .find(|r| r.0 == bytes)
            .unwrap_or((bytes, 0.0, 1));
        Row { seconds, chunks }
    };
    out.push_str(&flow::table(c.kind, n, &row, &ring));
    out.push_str(&at_size(c, &run, &ch, &net, topo));
    Ok(outcome(out))
}

/// The latest rank and its finish.
fn latest(run: &FlowRun) -> (usize, f64) {
    run.finish
        .iter()
        .copied()
        .enumerate()
        .fold((0, 0.0), |a, (r, t)| if t > a.1 { (r, t) } else { a })
}

/// The lines about the forest and its chunking before the table.
fn header(
    topo: &Topology,
    c: &Collective,
    forests: &[Forest],
    ch: &Chunking,
    params: &FlowParams,
    depth: u64,
) -> String {
    let topo_name = topo.name.as_str();
    let n = c.ranks.len();
    // As the report counts them: k trees per rank, solved in batches of identical trees.
    let trees: u64 = forests.iter().map(|f| f.k * n as u64).sum();
    let batches: usize = forests.iter().map(|f| f.trees.len()).sum();
    let phases = if forests.len() > 1 {
        format!(" over {} phases", forests.len())
    } else {
        String::new()
    };
    let bytes = c.bytes();
    let bw = |s: &BigRational| gbs_short(&Chunking::algbw(bytes, s));
    let how = if ch.auto {
        ch.auto_line()
    } else {
        format!(
            "chunks: {} fixed (auto would choose {})",
            ch.chunks, ch.auto_chunks
        )
    };
    format!(
        "flow model: {} on `{topo_name}` ({n} ranks); {}\nforest: k = {} per rank, {trees} trees in {batches} batches{phases}, deepest {depth} edges; {how}\nmodel at {bytes} B with {} chunk{}: {} ({:.1}% of the forest's optimum {})\n",
        c.kind.name(),
        params.describe(),
        forests.first().map_or(0, |f| f.k),
        ch.chunks,
        if ch.chunks == 1 { "" } else { "s" },
        bw(&ch.seconds),
        100.0 * ch.efficiency(&ch.seconds),
        bw(&ch.optimum),
    )
}

/// The run at the file's size: time, per-rank finishes, busiest links.
fn at_size(c: &Collective, run: &FlowRun, ch: &Chunking, net: &Net, topo: &Topology) -> String {
    let bytes = c.bytes();
    let n = c.ranks.len();
    let (r, t) = latest(run);
    let mut out = format!(
        "at {bytes} B ({} chunk{}): simulated {:.2} us, algbw {:.2} GB/s, busbw {:.2} GB/s, {} messages; model {}\n",
        ch.chunks,
        if ch.chunks == 1 { "" } else { "s" },
        t * 1e6,
        run.algbw(bytes) / 1e9,
        run.busbw(c.kind, n, bytes) / 1e9,
        run.messages,
        gbs_short(&Chunking::algbw(bytes, &ch.seconds))
    );
    let name = |r: usize| topo.nodes[c.ranks[r]].name.as_str();
    out.push_str("finish times:\n");
    if n <= 64 {
        for (i, t) in run.finish.iter().enumerate() {
            out.push_str(&format!("  rank {i} ({}): {:.2} us\n", name(i), t * 1e6));
        }
    } else {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|a, b| run.finish[*a].total_cmp(&run.finish[*b]).then(a.cmp(b)));
        let first = order[0];
        out.push_str(&format!(
            "  earliest rank {first} ({}): {:.2} us; median {:.2} us; latest rank {r} ({}): {:.2} us\n",
            name(first),
            run.finish[first] * 1e6,
            run.finish[order[n / 2]] * 1e6,
            name(r),
            t * 1e6
        ));
    }
    out.push_str("busiest links:\n");
    for (l, u) in run.utilisation(net).into_iter().take(5) {
        out.push_str(&format!(
            "  {}: busy {:.1}% of the run\n",
            net.link_name(l),
            u * 100.0
        ));
    }
    out
}
