//! A `.coll` file under a `packet` model (or, for Canary, the packet model's defaults): the
//! schedule lowered, proved and run by the packet simulator ([`crate::sim::packet`]) with
//! seeds `seed..seed + runs`. The text is [`crate::sim::packet::report::render`] (with `batch`
//! the time in ns, the median over runs); the trace is the first run's timeline, the chart
//! every run's link-utilisation distribution. Canary's exploration run of one seed can be
//! replayed alone ([`replay`]).

use super::{Engine, Figures, SimOutcome, SimRequest};
use crate::diag::{Code, Diagnostic, SourceMap};
use crate::sema::model::{CostModel, Model};
use crate::sim::packet::{self, Network, PacketParams, Summary};

/// Runs `m` under `cm` (None: the packet model's defaults).
pub(super) fn run(
    m: &Model,
    cm: Option<&CostModel>,
    req: &SimRequest,
) -> Result<SimOutcome, Vec<Diagnostic>> {
    let span = cm.map_or_else(|| m.build_span(None), |c| c.span);
    let (Some(topo), Some(c)) = (m.topology.as_ref(), m.collective.as_ref()) else {
        return Err(vec![
            Diagnostic::error(
                Code::MissingDeclaration,
                span,
                "a packet model simulates a collective on a topology, and this file lacks one",
            )
            .label("this model")
            .help("declare a `topology` and a `collective`"),
        ]);
    };
    let params = cm.and_then(PacketParams::from_model).unwrap_or_default();
    let network = Network::new(topo);
    let (seed, runs) = (req.seed.unwrap_or(1), req.runs.unwrap_or(1));
    let runs = packet::run_file(m, span, &params, seed, runs, req.trace)?;
    let plot_svg = match req.plot {
        false => None,
        true => {
            let title = format!(
                "{} of {} B, {} on `{}`",
                c.kind.name(),
                runs.first()
                    .and_then(|r| r.jobs.first())
                    .map_or(0, |j| j.bytes),
                m.schedule
                    .as_ref()
                    .map_or(String::new(), |s| crate::compare::label(&s.family)),
                network.name
            );
            let short = params
                .declared
                .as_deref()
                .map_or("packet model defaults".to_string(), |n| {
                    format!("packet model `{n}`")
                });
            let svg = packet::report::plot_utilisation(&network.net, &runs, &title, &short)
                .map_err(|e| {
                    vec![
                        Diagnostic::error(
                            Code::Io,
                            m.build_span(None),
                            format!("cannot draw the utilisation chart: {e}"),
                        )
                        .label("while simulating this schedule")
                        .help("this is a bug in collc: please report it with the file"),
                    ]
                })?;
            Some(svg)
        }
    };
    let trace_json = match req.trace {
        true => runs.first().and_then(|r| r.chrome_json()),
        false => None,
    };
    let median = Summary::of(&runs).map_or(0, |s| s.median);
    let text = if req.batch {
        format!("{}\n", crate::sim::TimeUnit::PS.show(median))
    } else {
        packet::report::render(&network, &params, c.kind, &runs)
    };
    let first = runs.first();
    let ranks = first.and_then(|r| r.jobs.first()).map_or(Vec::new(), |j| {
        j.finish[..j.ranks as usize]
            .iter()
            .map(|&f| f as f64 * 1e-12)
            .collect()
    });
    let mut o = SimOutcome::new(
        Engine::Packet,
        format!("packet model, {}", params.describe()),
        text,
        Figures {
            utilisation: first.map(|r| r.average_utilisation(&network.net)),
            ..Figures::of(m, median as f64 * 1e-12, ranks)
        },
    );
    o.trace_json = trace_json;
    o.plot_svg = plot_svg;
    Ok(o)
}

/// Canary's exploration run with `seed` replayed alone (`--explore-run`): its verdict as text,
/// or its E0049 counterexample (naming the file `name`). A schedule without an exploration
/// (not Canary) is an error at a `<command line>` source added to `files`.
pub(super) fn replay(
    m: &Model,
    name: &str,
    seed: u64,
    files: &mut SourceMap,
) -> Result<SimOutcome, Vec<Diagnostic>> {
    let span = m.schedule.as_ref().map(|s| s.span).unwrap_or_default();
    // The exploration and its verdict are the report's Canary section's.
    let done = crate::driver::report::replay(m, span, seed).unwrap_or_else(|| {
        Err(vec![super::route::flags_unused(
            files,
            "--explore-run",
            "--explore-run",
        )])
    });
    match done {
        Ok(text) => Ok(SimOutcome::new(
            Engine::Replay,
            format!(
                "packet model, {}",
                crate::cost::canary::packet_model(m)
                    .and_then(PacketParams::from_model)
                    .unwrap_or_default()
                    .describe()
            ),
            text,
            Figures {
                seconds: 0.0,
                ranks: Vec::new(),
                bytes: None,
                bus_factor: 1.0,
                utilisation: None,
            },
        )),
        Err(mut d) => {
            crate::driver::report::name_file(&mut d, name);
            Err(d)
        }
    }
}
