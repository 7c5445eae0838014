//! From a checked `.coll` file to what the simulator runs: choosing the cost model (`--model`,
//! the `sim` target's, the schedule's, the only declared one, or LogGP defaults), lowering and
//! verifying the schedule, converting it to GOAL.

use super::SimArgs;
use crate::backend::goal::{self, GoalOptions, GoalSchedule, GoalSpans};
use crate::diag::{Code, Diagnostic, FileId, SourceMap, Span};
use crate::progress::{Phase, Progress};
use crate::sema::model::Model as Checked;
use crate::sim::{self, LogGP, Model, TimeUnit};
use num_rational::BigRational;

type Prepared = (GoalSchedule, Option<GoalSpans>, Model, TimeUnit);

/// Choose the model, lower, verify and convert a checked `.coll` file.
pub(super) fn prepare_coll(
    a: &SimArgs,
    files: &mut SourceMap,
    id: FileId,
    m: &Checked,
    progress: &dyn Progress,
) -> Result<Prepared, Vec<Diagnostic>> {
    let asked = match &a.model {
        Some(n) => {
            let f = files.add("<command line>", format!("--model {n}"));
            Span::new(f, 8, 8 + n.len())
        }
        None => Span::new(id, 0, 0),
    };
    let (model, unit, gamma, declared) = choose_model(m, a.model.as_deref(), asked)?;
    let model = match model {
        Model::LogGP(lg) => Model::LogGP(a.apply(lg)),
        Model::Postal(_) if a.loggp_flags() => {
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
        reduce_fixed: goal::ns(a.reduce_ns),
        reduce_per_byte: gamma,
        ..GoalOptions::default()
    };
    let schedule = lower_to_goal(m, &goal_opts, progress)?;
    Ok((schedule, None, model, unit))
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

pub(super) use crate::sim::model_name;

/// The model to simulate under; see the module doc.
fn choose_model(
    m: &Checked,
    asked: Option<&str>,
    asked_at: Span,
) -> Result<(Model, TimeUnit, BigRational, Option<Span>), Vec<Diagnostic>> {
    let Some(name) = model_name(m, asked) else {
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
