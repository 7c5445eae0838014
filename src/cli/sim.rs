//! `collc sim FILE` and `collc build FILE --target goal`.
//!
//! `collc sim FILE.goal` runs the GOAL schedule under LogGP with LogGOPSim's defaults (L=2500,
//! o=1500, g=1000, G=6, O=0, S=65535, in ns); `-L -o -g -G -O -S` set each. `collc sim FILE.coll`
//! checks the file, lowers and verifies its schedule, converts it to GOAL and simulates it under
//! a declared cost model: `--model NAME`, else the `sim` target's `model`, else the schedule's
//! `model`, else the only declared postal, pipelining postal or LogGP model, else LogGP with
//! LogGOPSim's defaults. Reductions take `--reduce-ns` plus the model's `gamma` per byte.
//! The report follows LogGOPSim's output (`Times:`, `Host r: t`, `Maximum finishing time ...`);
//! `--trace OUT.json` writes a Chrome trace (Perfetto). A schedule that cannot finish (unmatched
//! queues, ops that never run) is reported like LogGOPSim does, as E0038, with exit code 1.
//! A `forest` schedule or a `flow` model runs the flow-level model instead ([`super::flow`]).

use super::{CheckArgs, Out, options, read_source, write_atomic};
use crate::backend::goal::{self, GoalOptions, GoalSchedule, GoalSpans, validate::At};
use crate::diag::{Code, Diagnostic, FileId, SourceMap, Span};
use crate::sema::{
    self,
    model::{CostModelKind, Family, Model as Checked, ModelParam, TargetKind},
};
use crate::sim::{self, LogGP, Model, SimOptions, SimResult, TimeUnit};
use num_rational::BigRational;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub(super) struct SimArgs {
    /// A `.goal` schedule, or a `.coll` file to check, lower and simulate.
    file: PathBuf,
    /// The declared cost model to simulate a `.coll` file under.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// LogGP latency L (ns).
    #[arg(short = 'L', value_name = "NS")]
    latency: Option<u64>,
    /// LogGP overhead o (ns).
    #[arg(short = 'o', value_name = "NS")]
    overhead: Option<u64>,
    /// LogGP gap g (ns).
    #[arg(short = 'g', value_name = "NS")]
    gap: Option<u64>,
    /// LogGP gap per byte G (ns).
    #[arg(short = 'G', value_name = "NS")]
    gap_per_byte: Option<u64>,
    /// LogGP overhead per byte O (ns).
    #[arg(short = 'O', value_name = "NS")]
    overhead_per_byte: Option<u64>,
    /// LogGP eager limit S (bytes): larger messages use the rendezvous protocol.
    #[arg(short = 'S', value_name = "BYTES")]
    eager_limit: Option<u64>,
    /// Time of every reduction of a `.coll` schedule, on top of the model's gamma (ns).
    #[arg(long, value_name = "NS", default_value_t = 0)]
    reduce_ns: u64,
    /// Write the timeline as Chrome trace JSON (opens in Perfetto).
    #[arg(long, value_name = "OUT.json")]
    trace: Option<PathBuf>,
    /// Print only the maximum finishing time (LogGOPSim's `-b`).
    #[arg(short = 'b', long)]
    batch: bool,
    #[command(flatten)]
    args: CheckArgs,
}

/// Targets `collc build --target` writes from a lowered schedule.
#[derive(Copy, Clone, Debug, clap::ValueEnum, PartialEq, Eq)]
pub(super) enum BuildTarget {
    /// GOAL text for LogGOPSim's txt2bin.
    Goal,
    /// A Cargo project (directory, `-o DIR`) running the schedule with point-to-point MPI.
    Mpi,
    /// MSCCL XML for NCCL/RCCL with msccl-executor-nccl.
    Msccl,
}

impl SimArgs {
    fn loggp_flags(&self) -> bool {
        self.latency.is_some()
            || self.overhead.is_some()
            || self.gap.is_some()
            || self.gap_per_byte.is_some()
            || self.overhead_per_byte.is_some()
            || self.eager_limit.is_some()
    }

    fn apply(&self, m: LogGP) -> LogGP {
        LogGP {
            L: self.latency.unwrap_or(m.L),
            o: self.overhead.unwrap_or(m.o),
            g: self.gap.unwrap_or(m.g),
            G: self.gap_per_byte.unwrap_or(m.G),
            O: self.overhead_per_byte.unwrap_or(m.O),
            S: self.eager_limit.unwrap_or(m.S),
        }
    }
}

/// `collc check FILE.goal`.
pub(super) fn check_goal(id: FileId, text: &str) -> Vec<Diagnostic> {
    goal::parse(id, text).err().unwrap_or_default()
}

pub(super) fn run(a: SimArgs, out: &Out) -> i32 {
    let mut files = SourceMap::new();
    let mut diags = Vec::new();
    let opts = options(&a.args, &mut files, &mut diags);
    let id = match read_source(&a.file, &mut files) {
        Ok(id) => id,
        Err(d) => {
            out.diags(&[*d], &files);
            return 1;
        }
    };
    let text = files.get(id).text.clone();
    let is_goal = a.file.extension().is_some_and(|e| e == "goal");
    let prepared = if is_goal {
        if let Some(m) = &a.model {
            eprintln!(
                "error: `--model {m}` names a model of a `.coll` file; a `.goal` file runs under LogGP (set it with -L -o -g -G -O -S)"
            );
            return 1;
        }
        goal::parse_spanned(id, &text).map(|(s, spans)| {
            (
                s,
                Some(spans),
                Model::LogGP(a.apply(LogGP::default())),
                TimeUnit::NS,
            )
        })
    } else {
        let checked = sema::check(&mut files, id, &opts);
        match checked.model.filter(|_| checked.diagnostics.is_empty()) {
            None => Err(checked.diagnostics),
            Some(m) if super::flow::wanted(&m, a.model.as_deref()) && diags.is_empty() => {
                return match super::flow::report(&m) {
                    Ok(text) => {
                        print!("{text}");
                        0
                    }
                    Err(d) => {
                        out.diags(&d, &files);
                        1
                    }
                };
            }
            Some(m) => prepare_coll(&a, &mut files, id, &m),
        }
    };
    let (schedule, spans, model, unit) = match prepared {
        Ok(x) if diags.is_empty() => x,
        Ok(_) => {
            out.diags(&diags, &files);
            return 1;
        }
        Err(d) => {
            diags.extend(d);
            out.diags(&diags, &files);
            return 1;
        }
    };
    let result = sim::simulate(
        &schedule,
        &SimOptions {
            model,
            trace: a.trace.is_some(),
        },
    );
    print!("{}", report(&schedule, &result, &model, unit, a.batch));
    if !result.complete() {
        let fallback = Span::new(id, 0, 0);
        let at = |x: At| spans.as_ref().map_or(fallback, |s: &GoalSpans| s.at(x));
        out.diags(&incomplete(&schedule, &result, at), &files);
        return 1;
    }
    if let Some(path) = &a.trace {
        let Some(json) = sim::trace::chrome_json(&schedule, &result, unit) else {
            return 2;
        };
        if let Err(e) = write_atomic(path, json.as_bytes()) {
            eprintln!(
                "error[{}]: cannot write `{}`: {e}",
                Code::Io,
                path.display()
            );
            return 2;
        }
    }
    0
}

type Prepared = (GoalSchedule, Option<GoalSpans>, Model, TimeUnit);

/// Choose the model, lower, verify and convert a checked `.coll` file.
fn prepare_coll(
    a: &SimArgs,
    files: &mut SourceMap,
    id: FileId,
    m: &Checked,
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
                    "-L, -o, -g, -G, -O and -S set LogGP parameters, but the chosen model is a postal model",
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
    let schedule = lower_to_goal(m, &goal_opts)?;
    Ok((schedule, None, model, unit))
}

fn lower_to_goal(m: &Checked, opts: &GoalOptions) -> Result<GoalSchedule, Vec<Diagnostic>> {
    let (program, proof) = crate::lower::lower_and_verify(m)?;
    let span = m
        .schedule
        .as_ref()
        .map(|s| s.span)
        .or(m.collective.as_ref().map(|c| c.span))
        .unwrap_or_default();
    goal::from_verified(&program, &proof, opts).map_err(|e| vec![e.diagnostic(span)])
}

/// The model to simulate under; see the module doc.
fn choose_model(
    m: &Checked,
    asked: Option<&str>,
    asked_at: Span,
) -> Result<(Model, TimeUnit, BigRational, Option<Span>), Vec<Diagnostic>> {
    let runnable = |k: CostModelKind| {
        matches!(
            k,
            CostModelKind::Postal | CostModelKind::PipeliningPostal | CostModelKind::LogGP
        )
    };
    let from_target = m
        .targets
        .iter()
        .filter(|t| t.kind == TargetKind::Sim)
        .find_map(|t| match t.options.get("model") {
            Some(ModelParam::Word(w)) => Some(w.clone()),
            _ => None,
        });
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
    let name = asked
        .map(str::to_string)
        .or(from_target)
        .or(from_schedule)
        .or(only);
    let Some(name) = name else {
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
pub(super) fn build(
    target: BuildTarget,
    m: &Checked,
    output: Option<&Path>,
    out: &Out,
    files: &SourceMap,
) -> i32 {
    match target {
        BuildTarget::Mpi => super::mpi::build(m, output, out, files),
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
            match lower_to_goal(m, &opts) {
                Ok(s) => super::write_output(output, goal::write(&s).as_bytes()),
                Err(d) => {
                    out.diags(&d, files);
                    1
                }
            }
        }
    }
}

/// LogGOPSim's `%g`: six significant digits, scientific below 1e-4 or from 1e6.
fn fmt_g(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let exp = format!("{v:.5e}");
    let (mant, e) = exp.split_once('e').unwrap_or((&exp, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    if !(-4..6).contains(&e) {
        let mant = mant.trim_end_matches('0').trim_end_matches('.');
        let sign = if e < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", e.abs());
    }
    let decimals = (5 - e).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The report printed on standard output.
pub fn report(s: &GoalSchedule, r: &SimResult, m: &Model, unit: TimeUnit, batch: bool) -> String {
    let mut out = String::new();
    let p = s.ranks.len();
    out.push_str(&format!(
        "{}\nsize: {p} ({} CPUs, {} NICs)\nEvents: {}\n",
        m.describe(unit),
        r.cpus,
        r.nics,
        r.events
    ));
    if !r.complete() {
        for q in &r.unexpected {
            out.push_str(&format!(
                "unexpected queue on host {} contains a message from {} (tag {})\n",
                q.host, q.peer, q.tag
            ));
        }
        for q in &r.unmatched {
            out.push_str(&format!(
                "receive queue on host {} contains a receive from {} (tag {})\n",
                q.host, q.peer, q.tag
            ));
        }
        return out;
    }
    if p <= 16 && !batch {
        out.push_str("Times:\n");
        for (h, t) in r.finish.iter().enumerate() {
            out.push_str(&format!("Host {h}: {}\n", unit.show(*t)));
        }
    }
    out.push_str(&format!(
        "Maximum finishing time at host {}: {} ({} s)\n",
        r.max_rank,
        unit.show(r.max),
        fmt_g(unit.ns(r.max) / 1e9)
    ));
    out
}

/// Why a run did not finish, as E0038 diagnostics located by `at`.
fn incomplete(s: &GoalSchedule, r: &SimResult, at: impl Fn(At) -> Span) -> Vec<Diagnostic> {
    let mut d = Vec::new();
    for q in r.unexpected.iter().take(8) {
        d.push(
            Diagnostic::error(
                Code::GoalInvalid,
                at(At::Op(q.op.0, q.op.1)),
                format!("this message to rank {} is never received", q.host),
            )
            .label("left in the unexpected queue")
            .help("under these parameters the schedule cannot finish: a recv is missing or waits on this rank's progress (a rendezvous deadlock with messages above S)"),
        );
    }
    for q in r.unmatched.iter().take(8) {
        d.push(
            Diagnostic::error(
                Code::GoalInvalid,
                at(At::Op(q.op.0, q.op.1)),
                format!("this receive on rank {} never gets its message", q.host),
            )
            .label("left in the receive queue")
            .help("the matching send never runs under these parameters (a deadlock), or does not exist"),
        );
    }
    if d.is_empty() {
        d.push(
            Diagnostic::error(
                Code::GoalInvalid,
                at(At::Schedule),
                format!(
                    "{} of {} ops never ran",
                    r.ops_total - r.ops_run,
                    s.op_count()
                ),
            )
            .label("the schedule does not finish")
            .help("look for dependency cycles (`collc check FILE.goal`)"),
        );
    }
    d
}

#[cfg(test)]
mod tests {
    use super::fmt_g;

    #[test]
    fn g_format_matches_c() {
        assert_eq!(fmt_g(1.1284e-5), "1.1284e-05");
        assert_eq!(fmt_g(0.001211188), "0.00121119");
        assert_eq!(fmt_g(2.5), "2.5");
        assert_eq!(fmt_g(1234567.0), "1.23457e+06");
    }
}
