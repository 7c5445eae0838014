//! From a checked `.coll` file to what the simulator runs: choosing the cost model (`--model`,
//! the `sim` target's, the schedule's, the only declared one, or LogGP defaults), lowering and
//! verifying the schedule, converting it to GOAL; and `collc build --target goal|mpi`.

use super::{BuildTarget, SimArgs};
use crate::backend::goal::{self, GoalOptions, GoalSchedule, GoalSpans};
use crate::cli::Out;
use crate::diag::{Code, Diagnostic, FileId, SourceMap, Span};
use crate::progress::{Phase, Progress};
use crate::sema::model::{CostModelKind, Family, Model as Checked};
use crate::sim::{self, LogGP, Model, TimeUnit};
use num_rational::BigRational;
use std::path::Path;

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
                    "--loggp-L, -o, -g, -G, -O and -S set LogGP parameters, but the chosen model is a postal model",
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

/// The declared model `collc sim` runs under: `asked`, else the `sim` target's, else the
/// schedule's, else the only declared postal, pipelining postal or LogGP model; None when no
/// rule names one (the flow model on the topology, or LogGP defaults without a topology).
pub(super) fn model_name(m: &Checked, asked: Option<&str>) -> Option<String> {
    let runnable = |k: CostModelKind| {
        matches!(
            k,
            CostModelKind::Postal | CostModelKind::PipeliningPostal | CostModelKind::LogGP
        )
    };
    let from_target = m.sim_target_model().map(str::to_string);
    let from_schedule = m.schedule.as_ref().and_then(|s| match &s.family {
        Family::RecursiveMultiplying { model, .. } => model.clone(),
        _ => None,
    });
    let only = {
        let r: Vec<&str> = m
            .models
            .iter()
            .filter(|x| runnable(x.kind))
            .map(|x| x.name.as_str())
            .collect();
        (r.len() == 1).then(|| r[0].to_string())
    };
    asked
        .map(str::to_string)
        .or(from_target)
        .or(from_schedule)
        .or(only)
}

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

/// `collc build FILE --target goal`: lower, convert and write (nothing written on error).
pub(in crate::cli) fn build(
    target: BuildTarget,
    m: &Checked,
    output: Option<&Path>,
    out: &Out,
    files: &SourceMap,
    progress: &dyn Progress,
) -> i32 {
    match target {
        BuildTarget::Mpi => crate::cli::mpi::build(m, output, out, files, progress),
        BuildTarget::Msccl => {
            eprintln!("error: internal: `--target msccl` is built by cli::msccl");
            2
        }
        BuildTarget::Goal => {
            let gamma = choose_model(m, None, Span::default())
                .map(|x| x.2)
                .unwrap_or_default();
            let opts = GoalOptions {
                reduce_per_byte: gamma,
                ..GoalOptions::default()
            };
            build_goal(m, &opts, output, out, files, progress)
        }
    }
}

/// `--target goal`: lower, then prove and write at once ([`goal::verify_and_write`]). Standard
/// output gets nothing unless all of it is proved and converted; a file is written as it is
/// made, into a temporary file renamed only at the end.
fn build_goal(
    m: &Checked,
    opts: &GoalOptions,
    output: Option<&Path>,
    out: &Out,
    files: &SourceMap,
    progress: &dyn Progress,
) -> i32 {
    let program = match crate::lower::lower_with(m, progress) {
        Ok((p, warnings)) => {
            out.diags(&warnings, files);
            p
        }
        Err(d) => {
            out.diags(&d, files);
            return 1;
        }
    };
    // The proof runs while the GOAL text is written: one phase.
    progress.phase(Phase::Verify, None);
    let run = |w: &mut (dyn std::io::Write + Send)| goal::verify_and_write(&program, opts, w);
    let written = match output {
        None => {
            let mut text = Vec::new();
            run(&mut text).map(|_| text)
        }
        Some(path) => {
            crate::cli::write_atomic_with(path, |f| run(f).map(|_| ())).map(|()| Vec::new())
        }
    };
    let diags = match written {
        Ok(text) if output.is_none() => return crate::cli::write_output(None, &text),
        Ok(_) => return 0,
        Err(goal::WriteError::Refuted(findings)) => crate::lower::refuted(m, &program, &findings),
        Err(goal::WriteError::Goal(e)) => vec![e.diagnostic(m.build_span(None))],
        Err(goal::WriteError::Io(e)) => {
            let shown = output.map_or("standard output".into(), |p| format!("`{}`", p.display()));
            eprintln!("error[{}]: cannot write {shown}: {e}", Code::Io);
            return 2;
        }
    };
    out.diags(&diags, files);
    1
}
