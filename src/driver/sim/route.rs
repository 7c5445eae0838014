//! Which engine simulates a checked `.coll` file ([`Route::of`], the rules in the module doc
//! of [`super`]), the kinds of engine an outcome names ([`Engine`]), and the errors of a
//! request the chosen engine does not take.

use crate::diag::{Code, Diagnostic, SourceMap, Span};
use crate::sema::model::{CostModel, CostModelKind, Family, Model};

/// The simulator that made an outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The discrete-event engine under LogGP (LogGOPSim's semantics).
    LogGP,
    /// The discrete-event engine under a postal or pipelining postal model.
    Postal,
    /// The flow-level model on the file's network, a host schedule's messages as flows.
    Flow,
    /// The flow-level model on the file's network, a forest's trees as pipelined flows.
    Forest,
    /// The packet-level model on the file's network.
    Packet,
    /// A Canary exploration run replayed alone (its verdict is the text; no figures).
    Replay,
}

/// Where a checked `.coll` file runs.
pub(super) enum Route<'m> {
    /// At packet level, under this declared model (None: the packet model's defaults).
    Packet(Option<&'m CostModel>),
    /// A host schedule under the flow model.
    Flow,
    /// A forest under the flow model.
    Forest,
    /// Converted to GOAL and run under a postal or LogGP model.
    Goal,
}

impl<'m> Route<'m> {
    /// The route of `m` with the model `asked` for (`--model`), if any.
    pub(super) fn of(m: &'m Model, asked: Option<&str>) -> Route<'m> {
        if let Some(cm) = packet_model(m, asked) {
            return Route::Packet(Some(cm));
        }
        if canary_defaults(m, asked) {
            return Route::Packet(None);
        }
        if !flow_wanted(m, asked) {
            Route::Goal
        } else if is_forest(m) {
            Route::Forest
        } else {
            Route::Flow
        }
    }
}

/// The declared packet model the file runs under, if any: the one named by `asked` or the
/// `sim` target, or the file's only model when it is a packet model and nothing names one.
fn packet_model<'m>(m: &'m Model, asked: Option<&str>) -> Option<&'m CostModel> {
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
fn canary_defaults(m: &Model, asked: Option<&str>) -> bool {
    asked.or(m.sim_target_model()).is_none()
        && m.schedule
            .as_ref()
            .is_some_and(|s| matches!(s.family, Family::Canary(_)))
}

/// Whether the file's schedule (auto resolved) is a forest, which the flow model runs tree by
/// tree.
fn is_forest(m: &Model) -> bool {
    m.collective
        .as_ref()
        .is_some_and(|c| matches!(crate::lower::family_of(m, c.kind), Family::Forest { .. }))
}

/// True when a `flow` model is asked for (by `asked` or the `sim` target), or, with neither,
/// the schedule is a forest or the file's only model is a `flow` one.
fn flow_named(m: &Model, asked: Option<&str>) -> bool {
    match asked.or(m.sim_target_model()) {
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

/// True when the file runs on its topology under the flow model: one is named for it
/// ([`flow_named`]), or no rule names a declared latency model and the file has a topology.
fn flow_wanted(m: &Model, asked: Option<&str>) -> bool {
    flow_named(m, asked)
        || (m.topology.is_some()
            && m.collective.is_some()
            && crate::sim::model_name(m, asked).is_none())
}

/// A request's flags the chosen model does not take, written `text` in a `<command line>`
/// source added to `files`; `what` (`--seed/--runs`, `--plot`, `LogGP flags`) says which.
pub(super) fn flags_unused(files: &mut SourceMap, text: &str, what: &str) -> Diagnostic {
    let f = files.add("<command line>", text.to_string());
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

/// LogGP parameters given for a file the flow model simulates.
pub(super) fn loggp_on_flow(files: &mut SourceMap) -> Diagnostic {
    let flags = "--loggp-L/o/g/G/O/S/wrap";
    let f = files.add("<command line>", flags.to_string());
    Diagnostic::error(
        Code::BadValue,
        Span::new(f, 0, flags.len()),
        "LogGP parameters were given, but this file is simulated on its topology with the flow model",
    )
    .label("LogGP flags")
    .help("drop them, or declare a `loggp` model and name it with `--model NAME`")
}
