//! GOAL schedules on the discrete-event engine ([`crate::sim::engine`]): a `.goal` file's, read
//! with spans so that errors point into it, and a `.coll` file's, lowered, verified and
//! converted under the model chosen for it (`--model`, the `sim` target's, the schedule's, the
//! only declared postal, pipelining postal or LogGP model, else LogGP with LogGOPSim's
//! defaults; [`crate::sim::model_name`]). Reductions take [`SimRequest::reduce_ns`] plus the
//! model's `gamma` per byte.

use super::loggopsim::{incomplete, out_of_bounds, report};
use super::{Engine, Figures, SimOutcome, SimRequest};
use crate::backend::goal::{self, GoalOptions, GoalSchedule, GoalSpans, validate::At};
use crate::diag::{Code, Diagnostic, FileId, SourceMap, Span};
use crate::driver::{Failure, Input, LoadOptions};
use crate::progress::{Phase, Progress};
use crate::sema::model::Model as Checked;
use crate::sim::{self, LogGP, Model, SimOptions, TimeUnit};
use num_rational::BigRational;

/// A `.goal` file under LogGP (the full path: read whole, parsed with spans).
pub(super) fn run_file(
    input: &Input,
    opts: &LoadOptions,
    req: &SimRequest,
    progress: &dyn Progress,
) -> Result<SimOutcome, Failure> {
    progress.phase(Phase::Check, None);
    let mut files = SourceMap::new();
    let id = match crate::driver::read(input, &mut files, opts.max_input_bytes) {
        Ok(id) => id,
        Err(d) => {
            return Err(Failure::new(vec![*d], files));
        }
    };
    let (schedule, spans) = match goal::parse_spanned(id, &files.get(id).text) {
        Ok(x) => x,
        Err(diagnostics) => return Err(Failure::new(diagnostics, files)),
    };
    let run = Run {
        schedule: &schedule,
        spans: Some(&spans),
        file: id,
        model: Model::LogGP(req.loggp.apply(LogGP::default())),
        unit: TimeUnit::NS,
        max_events: opts.limits.max_events,
    };
    let figures = |seconds, ranks| Figures {
        seconds,
        ranks,
        bytes: None,
        bus_factor: 1.0,
        utilisation: None,
    };
    run.go(req, &files, figures, progress)
        .map_err(|diagnostics| Failure::new(diagnostics, files))
}

/// A checked `.coll` file's schedule as GOAL under its postal or LogGP model, within
/// `max_events`; errors point into `files` (which gets a `<command line>` source for
/// `--model`).
pub(super) fn run_coll(
    m: &Checked,
    files: &mut SourceMap,
    req: &SimRequest,
    max_events: u64,
    progress: &dyn Progress,
) -> Result<SimOutcome, Vec<Diagnostic>> {
    // A session's file is the first its sources hold.
    let file = FileId::default();
    let asked = match &req.model {
        Some(n) => {
            let f = files.add("<command line>", format!("--model {n}"));
            Span::new(f, 8, 8 + n.len())
        }
        None => Span::new(file, 0, 0),
    };
    let (model, unit, gamma, declared) = choose_model(m, req.model.as_deref(), asked)?;
    let model = match model {
        Model::LogGP(lg) => Model::LogGP(req.loggp.apply(lg)),
        Model::Postal(_) if req.loggp.any() => {
            return Err(vec![
                Diagnostic::error(
                    Code::BadValue,
                    declared.unwrap_or(asked),
                    "--loggp-L, -o, -g, -G, -O, -S and --loggp-wrap set LogGP parameters, but the chosen model is a postal model",
                )
                .label("the model simulated")
                .help("drop the LogGP flags, or pick a `loggp` model with `--model NAME`"),
            ]);
        }
        other => other,
    };
    let goal_opts = GoalOptions {
        tick: unit.seconds(),
        reduce_fixed: goal::ns(req.reduce_ns),
        reduce_per_byte: gamma,
        ..GoalOptions::default()
    };
    let schedule = lower_to_goal(m, &goal_opts, progress)?;
    let run = Run {
        schedule: &schedule,
        spans: None,
        file,
        model,
        unit,
        max_events,
    };
    let figures = |seconds, ranks| Figures::of(m, seconds, ranks);
    run.go(req, files, figures, progress)
}

/// One run of a GOAL schedule: what it runs, under what, and where errors point.
struct Run<'a> {
    schedule: &'a GoalSchedule,
    /// The `.goal` file's spans; None for a converted `.coll` schedule (errors then point at
    /// the start of `file`).
    spans: Option<&'a GoalSpans>,
    file: FileId,
    model: Model,
    unit: TimeUnit,
    max_events: u64,
}

impl Run<'_> {
    /// Simulates; the outcome's figures by `figures` (seconds, per-rank seconds). A run that
    /// cannot finish is an outcome with `complete: false` and E0038 errors pointing into
    /// `files`; one over the limits is E0046 or E0047.
    fn go(
        &self,
        req: &SimRequest,
        files: &SourceMap,
        figures: impl Fn(f64, Vec<f64>) -> Figures,
        progress: &dyn Progress,
    ) -> Result<SimOutcome, Vec<Diagnostic>> {
        progress.phase(Phase::Simulate, None);
        let result = sim::simulate_bounded(
            self.schedule,
            &SimOptions {
                model: self.model,
                trace: req.trace,
            },
            self.max_events,
        );
        let fallback = Span::new(self.file, 0, 0);
        let at = |x: At| self.spans.map_or(fallback, |s| s.at(x));
        if let Some(d) = out_of_bounds(&result, self.max_events, at) {
            return Err(vec![d]);
        }
        let text = report(
            self.schedule.ranks.len(),
            &result,
            &self.model,
            self.unit,
            req.batch,
        );
        let seconds = |t: u64| self.unit.ns(t) / 1e9;
        let mut o = outcome(
            &self.model,
            self.unit,
            text,
            figures(
                seconds(result.max),
                result.finish.iter().map(|t| seconds(*t)).collect(),
            ),
        );
        if !result.complete() {
            o.complete = false;
            o.unfinished = Some(Failure::new(
                incomplete(self.schedule, &result, at),
                files.clone(),
            ));
            return Ok(o);
        }
        if req.trace {
            o.trace_json = sim::trace::chrome_json(self.schedule, &result, self.unit);
        }
        Ok(o)
    }
}

/// The outcome of a run under `model` with `text` and `figures`.
pub(super) fn outcome(model: &Model, unit: TimeUnit, text: String, figures: Figures) -> SimOutcome {
    let kind = match model {
        Model::LogGP(_) => Engine::LogGP,
        Model::Postal(_) => Engine::Postal,
    };
    SimOutcome::new(kind, model.describe(unit), text, figures)
}

fn lower_to_goal(
    m: &Checked,
    opts: &GoalOptions,
    progress: &dyn Progress,
) -> Result<GoalSchedule, Vec<Diagnostic>> {
    let (program, proof, _) = crate::lower::lower_and_verify_with(m, progress)?;
    progress.phase(Phase::Emit, None);
    let span = m.build_span(None);
    goal::from_verified(&program, &proof, opts).map_err(|e| vec![e.diagnostic(span)])
}

/// The model to simulate under, its time unit, the reduction time per byte and where it is
/// declared; see the module doc.
fn choose_model(
    m: &Checked,
    asked: Option<&str>,
    asked_at: Span,
) -> Result<(Model, TimeUnit, BigRational, Option<Span>), Vec<Diagnostic>> {
    let Some(name) = sim::model_name(m, asked) else {
        return Ok((
            Model::LogGP(LogGP::default()),
            TimeUnit::NS,
            BigRational::default(),
            None,
        ));
    };
    let Some(cm) = m.models.iter().find(|x| x.name == name) else {
        let declared: Vec<&str> = m.models.iter().map(|x| x.name.as_str()).collect();
        return Err(vec![
            Diagnostic::error(
                Code::UnknownName,
                asked_at,
                format!("the file declares no model named `{name}`"),
            )
            .label("no such model")
            .help(if declared.is_empty() {
                "declare one, e.g. `model m: loggp;`".to_string()
            } else {
                format!("declared models: {}", declared.join(", "))
            }),
        ]);
    };
    sim::from_cost_model(cm)
        .map(|(a, b, c)| (a, b, c, Some(cm.span)))
        .map_err(|e| {
            vec![
                Diagnostic::error(Code::BadValue, cm.span, e.message)
                    .label("this model")
                    .help(e.help),
            ]
        })
}
