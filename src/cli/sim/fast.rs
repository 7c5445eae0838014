//! `collc sim FILE.goal` on the fast path: the file streamed straight into the simulator's
//! graph ([`crate::sim::read`]) and run, with no source text or schedule held. It answers only
//! when the result is the one the full path ([`super::run`]) would print: a `.goal` file the
//! streaming reader takes, no `--model`, `--trace`, `--seed`, `--runs` or `--plot`, no
//! command-line diagnostic, and a run that completes within the limits. Everything else (a
//! file to diagnose, a run that stops) goes the full way, which reads the file again with spans.

use super::SimArgs;
use super::report::report;
use crate::cli::progress::Reporter;
use crate::progress::{Phase, Progress};
use crate::sim::{self, LogGP, Model, SimOptions, TimeUnit};

/// The exit code when the fast path answered; None for the full path.
pub(super) fn run(
    a: &SimArgs,
    opts: &crate::sema::Options,
    clean: bool,
    rep: &Reporter,
) -> Option<i32> {
    let goal = a.file.extension().is_some_and(|e| e == "goal");
    let plain = a.model.is_none()
        && a.trace.is_none()
        && a.seed.is_none()
        && a.runs.is_none()
        && a.plot.is_none();
    if !(goal && plain && clean) {
        return None;
    }
    rep.phase(Phase::Check, None);
    let file = std::fs::File::open(&a.file).ok()?;
    let len = file.metadata().ok()?.len();
    let compiled = sim::read::compile(file, len)?;
    let p = compiled.ranks();
    let model = Model::LogGP(a.apply(LogGP::default()));
    rep.phase(Phase::Simulate, None);
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
    rep.finish();
    let text = report(p, &result, &model, TimeUnit::NS, a.batch);
    Some(super::super::write_output(
        a.output.as_deref(),
        text.as_bytes(),
    ))
}
