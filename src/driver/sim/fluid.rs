//! A host-based schedule (ring, recursive doubling and multiplying, binomial) on the network the
//! file describes: lowered, proved and run by the flow-level simulator
//! ([`crate::sim::fluid`]) under the flow parameters of the model asked for, the `sim`
//! target's or the only `flow` model ([`crate::net::for_file`]). The text: the model and where
//! its parameters come from, the time, algbw and busbw (nccl-tests' definitions), the round
//! model's figure beside it, per-rank finish times, the busiest links and the distribution of
//! link utilisation; with `batch` only the time in ns. The chart draws that distribution.

use super::{Engine, Figures, SimOutcome, SimRequest};
use crate::diag::{Code, Diagnostic};
use crate::driver::figures::{gbs, pct};
use crate::net::{FlowParams, Net};
use crate::progress::{Phase, Progress};
use crate::sema::model::Model;
use crate::sim::fluid::{self, FlowRun, show_seconds};
use crate::sim::packet::report as chart;
use num_traits::ToPrimitive;
use std::fmt::Write as _;

/// Runs `m` under the flow model `asked` for (None: the file's).
pub(super) fn run(
    m: &Model,
    asked: Option<&str>,
    req: &SimRequest,
    progress: &dyn Progress,
) -> Result<SimOutcome, Vec<Diagnostic>> {
    let Some(topo) = m.topology.as_ref() else {
        return Err(vec![no_network()]);
    };
    let params = crate::net::for_file(m, asked);
    let net = Net::new(topo);
    // Lowering includes proving the program (and a ring's channel search).
    progress.phase(Phase::Lower, None);
    let lowered = fluid::lower(m, &params)?;
    progress.phase(Phase::Simulate, None);
    let run = lowered.simulate(&net, &params, req.trace)?;
    let plot_svg = match req.plot {
        true => Some(plot(m, &net, &params, &run)?),
        false => None,
    };
    let trace_json = if req.trace { run.chrome_json() } else { None };
    let text = if req.batch {
        format!("{:.1}\n", run.seconds() * 1e9)
    } else {
        let rounds = lowered.round_cost(&net, &params);
        text(m, &net, &params, &run, rounds.as_ref().map(|r| &r.seconds))
    };
    let mut o = SimOutcome::new(
        Engine::Flow,
        format!("flow model, {}", params.describe()),
        text,
        Figures {
            utilisation: Some(mean_utilisation(&net, &run)),
            ..Figures::of(m, run.seconds(), run.finish.clone())
        },
    );
    o.trace_json = trace_json;
    o.plot_svg = plot_svg;
    Ok(o)
}

/// The error of a file the flow model cannot run: it lacks a topology or a collective.
pub(super) fn no_network() -> Diagnostic {
    Diagnostic::error(
        Code::MissingDeclaration,
        crate::diag::Span::default(),
        "the flow model needs a topology and a collective",
    )
    .label("nothing to simulate")
    .help("declare both, e.g. `collective allgather { size: 64 MiB; }`")
}

/// The mean over all directed links of their busy share of the run (idle links count 0).
pub(super) fn mean_utilisation(net: &Net, run: &FlowRun) -> f64 {
    let util = run.utilisation(net);
    util.iter().map(|x| x.1).sum::<f64>() / net.links.len().max(1) as f64
}

/// The utilisation chart as SVG; E0029 when it cannot be drawn.
fn plot(
    m: &Model,
    net: &Net,
    params: &FlowParams,
    run: &FlowRun,
) -> Result<String, Vec<Diagnostic>> {
    let c = m.collective.as_ref();
    let title = format!(
        "{} of {} B, {} on `{}`",
        c.map_or("", |c| c.kind.name()),
        c.map_or(0, |c| c.bytes()),
        m.schedule
            .as_ref()
            .map_or(String::new(), |s| crate::compare::label(&s.family)),
        m.topology.as_ref().map_or("", |t| t.name.as_str())
    );
    let model = params
        .declared
        .as_deref()
        .map_or("flow model defaults".to_string(), |n| {
            format!("flow model `{n}`")
        });
    let series = vec![("flow model".to_string(), histogram(net, run).to_vec())];
    chart::plot_histograms(series, &title, &model).map_err(|e| {
        vec![
            Diagnostic::error(
                Code::Io,
                m.build_span(None),
                format!("cannot draw the utilisation chart: {e}"),
            )
            .label("while simulating this schedule")
            .help("check that the directory exists and is writable"),
        ]
    })
}

fn text(
    m: &Model,
    net: &Net,
    params: &FlowParams,
    run: &FlowRun,
    rounds: Option<&num_rational::BigRational>,
) -> String {
    let mut out = String::new();
    let (Some(c), Some(topo)) = (m.collective.as_ref(), m.topology.as_ref()) else {
        return out;
    };
    let n = c.ranks.len();
    let bytes = c.bytes();
    let family = crate::lower::family_of(m, c.kind);
    let _ = writeln!(
        out,
        "flow model on `{}` ({n} ranks, {} directed links; minimal-hop routes {}, links shared max-min fairly)\n  {}",
        topo.name,
        net.links.len(),
        if params.spray {
            "spread over equal-cost paths"
        } else {
            "with ECMP"
        },
        params.describe()
    );
    let _ = writeln!(
        out,
        "{} of {bytes} B, schedule {}: {} messages",
        c.kind.name(),
        family.name(),
        run.messages
    );
    let t = run.seconds();
    let _ = writeln!(
        out,
        "time {}, goodput {:.2} Gb/s, algbw {}, busbw {}",
        show_seconds(t),
        run.algbw(bytes) * 8.0 / 1e9,
        gbs(run.algbw(bytes)),
        gbs(run.busbw(c.kind, n, bytes))
    );
    if let Some(r) = rounds {
        let r = r.to_f64().unwrap_or(0.0);
        let _ = writeln!(
            out,
            "round model (each step: slowest start-up + most loaded link + reductions): {} ({:+.1}% against the simulation)",
            show_seconds(r),
            pct(r, t)
        );
    }
    out.push_str("Times:\n");
    for (r, f) in run.finish.iter().enumerate() {
        let _ = writeln!(out, "Rank {r}: {}", show_seconds(*f));
    }
    let util = run.utilisation(net);
    if !util.is_empty() {
        out.push_str("busiest links (share of the run spent moving data):\n");
        for (l, u) in util.iter().take(5) {
            let _ = writeln!(out, "  {}: {:.1}%", net.link_name(*l), u * 100.0);
        }
        let _ = writeln!(
            out,
            "average over all {} links: {:.1}%",
            net.links.len(),
            mean_utilisation(net, run) * 100.0
        );
    }
    out.push_str(&chart::histogram_text(
        &histogram(net, run),
        net.links.len(),
    ));
    out
}

/// Directed links per utilisation bin, idle ones in the first.
fn histogram(net: &Net, run: &FlowRun) -> [u64; chart::BINS] {
    let util = run.utilisation(net);
    let idle = net.links.len().saturating_sub(util.len());
    chart::bin_utilisation(
        util.iter()
            .map(|x| x.1)
            .chain(std::iter::repeat_n(0.0, idle)),
    )
}
