//! A `.goal` file on the fast path: streamed straight into the simulator's graph
//! ([`crate::sim::read`]) and run, with no source text or schedule held. It answers only when
//! the outcome is the one the full path ([`super::goal::run_file`]) would give: a file the
//! streaming reader takes, a plain request ([`super::SimRequest::plain`]), and a run that
//! completes within the limits. Everything else (a file to diagnose, a run that stops) goes the
//! full way, which reads the file again with spans.

use super::{Figures, SimOutcome, SimRequest};
use crate::driver::LoadOptions;
use crate::progress::{Phase, Progress};
use crate::sim::{self, LogGP, Model, SimOptions, TimeUnit};
use std::path::Path;

/// The outcome when the fast path answered; None for the full path.
pub(super) fn run(
    path: &Path,
    opts: &LoadOptions,
    req: &SimRequest,
    progress: &dyn Progress,
) -> Option<SimOutcome> {
    progress.phase(Phase::Check, None);
    let file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let compiled = sim::read::compile(file, len)?;
    let p = compiled.ranks();
    let model = Model::LogGP(req.loggp.apply(LogGP::default()));
    progress.phase(Phase::Simulate, None);
    let result = sim::engine::simulate_compiled(
        compiled,
        &SimOptions {
            model,
            trace: false,
        },
        opts.limits.max_events,
    );
    if !result.complete() || result.stopped || result.overflow.is_some() {
        return None;
    }
    let unit = TimeUnit::NS;
    let text = super::loggopsim::report(p, &result, &model, unit, req.batch);
    let seconds = |t: u64| unit.ns(t) / 1e9;
    Some(super::goal::outcome(
        &model,
        unit,
        text,
        Figures {
            seconds: seconds(result.max),
            ranks: result.finish.iter().map(|t| seconds(*t)).collect(),
            bytes: None,
            bus_factor: 1.0,
            utilisation: None,
        },
    ))
}
