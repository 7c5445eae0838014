//! `collc sim FILE.coll` under a `packet` model (`--model NAME`, the `sim` target's model, or
//! the file's only model): the schedule is lowered, proved, and run by the packet simulator
//! ([`crate::sim::packet`]) with seeds `--seed`..`--seed + --runs`; prints
//! [`crate::sim::packet::report::render`] (or with `-b` the time in ns, the median over runs),
//! and `--trace` writes the first run's timeline.

use crate::diag::{Code, Diagnostic, Span};
use crate::sema::model::{CostModel, CostModelKind, Model};
use crate::sim::packet::{self, Network, PacketParams, Summary};

/// The declared packet model the file runs under, if any: the one named by `asked` or the
/// `sim` target, or the file's only model when it is a packet model and nothing names one.
pub(in crate::cli) fn wanted<'m>(m: &'m Model, asked: Option<&str>) -> Option<&'m CostModel> {
    match asked.or(m.sim_target_model()) {
        Some(name) => m
            .models
            .iter()
            .find(|x| x.name == name && x.kind == CostModelKind::Packet),
        None => match m.models.as_slice() {
            [one] if one.kind == CostModelKind::Packet => Some(one),
            _ => None,
        },
    }
}

/// Whether the file's schedule is Canary and no model is asked for: Canary runs only at packet
/// level, so it runs under the packet model's defaults.
pub(in crate::cli) fn canary_defaults(m: &Model, asked: Option<&str>) -> bool {
    asked.or(m.sim_target_model()).is_none()
        && m.schedule
            .as_ref()
            .is_some_and(|s| matches!(s.family, crate::sema::model::Family::Canary(_)))
}

/// What to run and print.
pub(in crate::cli) struct Ask<'a> {
    pub batch: bool,
    pub trace: Option<&'a std::path::Path>,
    pub plot: Option<&'a std::path::Path>,
    pub seed: u64,
    pub runs: u64,
}

/// Runs and prints under `cm` (None: the packet model's defaults); Err carries diagnostics
/// (exit 1).
pub(in crate::cli) fn run(
    m: &Model,
    cm: Option<&CostModel>,
    ask: &Ask,
) -> Result<String, Vec<Diagnostic>> {
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
    let runs = packet::run_file(m, span, &params, ask.seed, ask.runs, ask.trace.is_some())?;
    if let Some(path) = ask.plot {
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
        let svg =
            packet::report::plot_utilisation(&network.net, &runs, &title, &short).map_err(|e| {
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
        write(m, path, svg.as_bytes())?;
    }
    if let Some(path) = ask.trace
        && let Some(json) = runs[0].chrome_json()
    {
        write(m, path, json.as_bytes())?;
    }
    if ask.batch {
        let t = Summary::of(&runs).map_or(0, |s| s.median);
        return Ok(format!("{}\n", crate::sim::TimeUnit::PS.show(t)));
    }
    Ok(packet::report::render(&network, &params, c.kind, &runs))
}

/// Writes `bytes` to `path` atomically; a failure is E0029 at the file's schedule.
fn write(m: &Model, path: &std::path::Path, bytes: &[u8]) -> Result<(), Vec<Diagnostic>> {
    crate::cli::write_atomic(path, bytes).map_err(|e| {
        vec![
            Diagnostic::error(
                Code::Io,
                m.build_span(None),
                format!("cannot write `{}`: {e}", path.display()),
            )
            .label("while simulating this schedule")
            .help("check that the directory exists and is writable"),
        ]
    })
}

/// Flags the chosen model does not take (`what`: `--seed/--runs` without a packet model, or
/// LogGP flags with one), written in the source `f`.
pub(in crate::cli) fn flags_unused(f: crate::diag::FileId, what: &str) -> Diagnostic {
    let (message, help) = if what == "--plot" {
        (
            "`--plot` draws the link utilisation of a packet-model or flow-model simulation (not of forests or LogGP/postal models)",
            "declare `model NAME: packet { ... }` or `model NAME: flow { ... }` and name it with `--model NAME`, or drop `--plot`",
        )
    } else if what.starts_with("--") {
        (
            "`--seed` and `--runs` apply to packet-model simulations only",
            "declare `model NAME: packet { ... }` and name it with `--model NAME`, or drop these flags",
        )
    } else {
        (
            "LogGP parameters were given, but this file is simulated with a packet model",
            "drop them, or declare a `loggp` model and name it with `--model NAME`",
        )
    };
    Diagnostic::error(Code::BadValue, Span::new(f, 0, what.len()), message)
        .label("not used by this model")
        .help(help)
}
