//! `collc sim FILE.coll` on the network the file describes, for host-based schedules (ring,
//! recursive doubling and multiplying, binomial): the schedule is lowered, proved and run by
//! the flow-level simulator ([`crate::sim::fluid`]). Chosen when no rule names a declared
//! postal or LogGP model (see [`super::prepare::model_name`]) or when the model asked for is a
//! `flow` model. Prints the model and where its parameters come from, the time, algbw and
//! busbw (nccl-tests' definitions), the round model's figure beside it, per-rank finish times
//! the busiest links and the distribution of link utilisation; `-b` prints only the time in
//! ns; `--trace` writes the timeline, `--plot` the utilisation distribution as an SVG chart.

use crate::diag::Diagnostic;
use crate::net::{FlowParams, Net};
use crate::sema::model::Model;
use crate::sim::fluid::{self, FlowRun, show_seconds};
use num_traits::ToPrimitive;
use std::fmt::Write as _;

/// What to print and write.
pub(in crate::cli) struct Ask<'a> {
    pub model: Option<&'a str>,
    pub batch: bool,
    pub trace: Option<&'a std::path::Path>,
    pub plot: Option<&'a std::path::Path>,
}

/// Runs and prints; Err carries diagnostics (exit 1) or a message for an internal failure.
pub(in crate::cli) fn run(m: &Model, ask: &Ask) -> Result<String, Vec<Diagnostic>> {
    let Some(topo) = m.topology.as_ref() else {
        return Err(Vec::new());
    };
    let params = crate::net::for_file(m, ask.model);
    let net = Net::new(topo);
    let lowered = fluid::lower(m, &params)?;
    let run = lowered.simulate(&net, &params, ask.trace.is_some())?;
    if let Some(path) = ask.plot {
        let c = m.collective.as_ref();
        let title = format!(
            "{} of {} B, {} on `{}`",
            c.map_or("", |c| c.kind.name()),
            c.map_or(0, |c| c.bytes()),
            m.schedule
                .as_ref()
                .map_or(String::new(), |s| crate::compare::label(&s.family)),
            topo.name
        );
        let model = params
            .declared
            .as_deref()
            .map_or("flow model defaults".to_string(), |n| {
                format!("flow model `{n}`")
            });
        let series = vec![("flow model".to_string(), histogram(&net, &run).to_vec())];
        let written = crate::sim::packet::report::plot_histograms(series, &title, &model)
            .map_err(|e| format!("cannot draw the utilisation chart: {e}"))
            .and_then(|svg| {
                crate::cli::write_atomic(path, svg.as_bytes())
                    .map_err(|e| format!("cannot write `{}`: {e}", path.display()))
            });
        if let Err(why) = written {
            return Err(vec![
                Diagnostic::error(crate::diag::Code::Io, m.build_span(None), why)
                    .label("while simulating this schedule")
                    .help("check that the directory exists and is writable"),
            ]);
        }
    }
    if let Some(path) = ask.trace
        && let Some(json) = run.chrome_json()
        && let Err(e) = crate::cli::write_atomic(path, json.as_bytes())
    {
        return Err(vec![
            Diagnostic::error(
                crate::diag::Code::Io,
                m.build_span(None),
                format!("cannot write `{}`: {e}", path.display()),
            )
            .label("while simulating this schedule")
            .help("check that the directory exists and is writable"),
        ]);
    }
    if ask.batch {
        return Ok(format!("{:.1}\n", run.seconds() * 1e9));
    }
    let rounds = lowered.round_cost(&net, &params);
    Ok(text(
        m,
        &net,
        &params,
        &run,
        rounds.as_ref().map(|r| &r.seconds),
    ))
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
        let avg = util.iter().map(|x| x.1).sum::<f64>() / net.links.len().max(1) as f64;
        let _ = writeln!(
            out,
            "average over all {} links: {:.1}%",
            net.links.len(),
            avg * 100.0
        );
    }
    out.push_str(&crate::sim::packet::report::histogram_text(
        &histogram(net, run),
        net.links.len(),
    ));
    out
}

/// Directed links per utilisation bin, idle ones in the first.
fn histogram(net: &Net, run: &FlowRun) -> [u64; crate::sim::packet::report::BINS] {
    let util = run.utilisation(net);
    let idle = net.links.len().saturating_sub(util.len());
    crate::sim::packet::report::bin_utilisation(
        util.iter()
            .map(|x| x.1)
            .chain(std::iter::repeat_n(0.0, idle)),
    )
}

/// Bytes per second as GB/s.
pub(in crate::cli) fn gbs(b: f64) -> String {
    format!("{:.2} GB/s", b / 1e9)
}

/// `a` against `b` in percent, with -0.0 shown as 0.0.
pub(in crate::cli) fn pct(a: f64, b: f64) -> f64 {
    let p = if b > 0.0 { (a - b) / b * 100.0 } else { 0.0 };
    if p.abs() < 0.05 { 0.0 } else { p }
}
