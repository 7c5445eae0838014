//! `collc sim FILE` and `collc build FILE --target goal`.
//!
//! `collc sim FILE.goal` runs the GOAL schedule under LogGP with LogGOPSim's defaults (L=2500,
//! o=1500, g=1000, G=6, O=0, S=65535, in ns); `--loggp-L --loggp-o --loggp-g --loggp-G
//! --loggp-O --loggp-S` set each (LogGOPSim's `-L -g -G -O -S` too; `-o` is the output file, as
//! everywhere in collc, and a number given to it is refused with a pointer to `--loggp-o`);
//! `--loggp-wrap` takes LogGOPSim's wrapped time where its unsigned arithmetic passes 2^64
//! instead of stopping with E0047 (see [`crate::sim`]). `collc sim FILE.coll`
//! checks the file, lowers and verifies its schedule, converts it to GOAL and simulates it under
//! a declared cost model: `--model NAME`, else the `sim` target's `model`, else the schedule's
//! `model`, else the only declared postal, pipelining postal or LogGP model, else LogGP with
//! LogGOPSim's defaults. Reductions take `--reduce-ns` plus the model's `gamma` per byte.
//! The report follows LogGOPSim's output (`Times:`, `Host r: t`, `Maximum finishing time ...`);
//! `--trace OUT.json` writes a Chrome trace (Perfetto); `-o FILE` writes the report to FILE
//! (atomically, nothing on error) instead of standard output; `-b` prints only the time. A schedule that cannot finish (unmatched
//! queues, ops that never run) is reported like LogGOPSim does, as E0038, with exit code 1.
//! A `.goal` file is first streamed into the simulator ([`fast`]); the full reader below runs
//! only when that path leaves the file (to diagnose it, or for `--trace`).
//! When no rule names such a model and the file has a topology, or a `flow` model is asked for,
//! the schedule runs on the file's network under the flow-level model instead: host schedules
//! in [`fluid`], forests in [`super::flow`]; LogGP flags are then an error, not ignored.
//! Under a `packet` model (named, the `sim` target's, or the only one declared) it runs on the
//! network at packet level ([`packet`]), with `--seed N` and `--runs N`.

mod fast;
pub(in crate::cli) mod fluid;
mod packet;
mod prepare;
pub(super) mod report;

use super::progress::{Reporter, Verbose};
use super::{CheckArgs, Out, options, read_source, write_atomic};
use crate::backend::goal::{self, GoalSpans, validate::At};
use crate::diag::{Code, Diagnostic, SourceMap, Span};
use crate::progress::{Phase, Progress};
use crate::sema::{self};
use crate::sim::{self, LogGP, Model, SimOptions, TimeUnit};
use prepare::prepare_coll;
use report::{incomplete, report};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(super) struct SimArgs {
    /// A `.goal` schedule, or a `.coll` file to check, lower and simulate.
    file: PathBuf,
    /// The declared cost model to simulate a `.coll` file under.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// LogGP latency L (ns; LogGOPSim's `-L`).
    #[arg(long = "loggp-L", short = 'L', value_name = "NS")]
    latency: Option<u64>,
    /// LogGP overhead o (ns; LogGOPSim's `-o`, which is `--loggp-o` here: `-o` is the output).
    #[arg(long = "loggp-o", value_name = "NS")]
    overhead: Option<u64>,
    /// LogGP gap g (ns; LogGOPSim's `-g`).
    #[arg(long = "loggp-g", short = 'g', value_name = "NS")]
    gap: Option<u64>,
    /// LogGP gap per byte G (ns; LogGOPSim's `-G`).
    #[arg(long = "loggp-G", short = 'G', value_name = "NS")]
    gap_per_byte: Option<u64>,
    /// LogGP overhead per byte O (ns; LogGOPSim's `-O`).
    #[arg(long = "loggp-O", short = 'O', value_name = "NS")]
    overhead_per_byte: Option<u64>,
    /// LogGP eager limit S (bytes; LogGOPSim's `-S`): larger messages use the rendezvous protocol.
    #[arg(long = "loggp-S", short = 'S', value_name = "BYTES")]
    eager_limit: Option<u64>,
    /// LogGP: where LogGOPSim's unsigned time arithmetic wraps past 2^64 (huge messages; ops
    /// waiting on a 0-byte message's wrapped NIC time when g < G), take its wrapped time, as
    /// LogGOPSim prints it, instead of stopping with E0047.
    #[arg(long = "loggp-wrap")]
    wrap: bool,
    /// Write the report to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Time of every reduction of a `.coll` schedule, on top of the model's gamma (ns).
    #[arg(long, value_name = "NS", default_value_t = 0)]
    reduce_ns: u64,
    /// Packet model: the seed of the first run (random placement, background traffic).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Packet model: repeat with seeds seed..seed+N and report median, min and max (N at
    /// most 1000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=crate::sim::packet::MAX_RUNS))]
    runs: Option<u64>,
    /// Canary: replay the exploration run with this seed alone (the seed an E0049 names) and
    /// say whether it passes.
    #[arg(long, value_name = "SEED", value_parser = clap::value_parser!(u64).range(1..))]
    explore_run: Option<u64>,
    /// Packet model: draw each run's link-utilisation distribution as an SVG histogram.
    #[arg(long, value_name = "OUT.svg")]
    plot: Option<PathBuf>,
    /// Write the timeline as Chrome trace JSON (opens in Perfetto).
    #[arg(long, value_name = "OUT.json")]
    trace: Option<PathBuf>,
    /// Print only the maximum finishing time (LogGOPSim's `-b`).
    #[arg(short = 'b', long)]
    batch: bool,
    #[command(flatten)]
    verbose: Verbose,
    #[command(flatten)]
    args: CheckArgs,
}

impl SimArgs {
    fn loggp_flags(&self) -> bool {
        self.latency.is_some()
            || self.overhead.is_some()
            || self.gap.is_some()
            || self.gap_per_byte.is_some()
            || self.overhead_per_byte.is_some()
            || self.eager_limit.is_some()
            || self.wrap
    }

    fn apply(&self, m: LogGP) -> LogGP {
        LogGP {
            L: self.latency.unwrap_or(m.L),
            o: self.overhead.unwrap_or(m.o),
            g: self.gap.unwrap_or(m.g),
            G: self.gap_per_byte.unwrap_or(m.G),
            O: self.overhead_per_byte.unwrap_or(m.O),
            S: self.eager_limit.unwrap_or(m.S),
            wrap: self.wrap || m.wrap,
        }
    }
}

/// Whether the file's schedule (auto resolved) is a forest, which the flow model runs tree by
/// tree ([`super::flow`]).
fn is_forest(m: &crate::sema::model::Model) -> bool {
    m.collective.as_ref().is_some_and(|c| {
        matches!(
            crate::lower::family_of(m, c.kind),
            crate::sema::model::Family::Forest { .. }
        )
    })
}

/// True when a `.coll` file runs on its topology under the flow model: a `flow` model is asked
/// for (or is the file's only model, or the schedule is a forest: [`super::flow::wanted`]), or
/// no rule names a declared latency model and the file has a topology.
fn flow_wanted(m: &crate::sema::model::Model, asked: Option<&str>) -> bool {
    super::flow::wanted(m, asked)
        || (m.topology.is_some()
            && m.collective.is_some()
            && prepare::model_name(m, asked).is_none())
}

pub(super) fn run(a: SimArgs, out: &Out) -> i32 {
    let rep = Reporter::new(a.verbose);
    let mut files = SourceMap::new();
    let mut diags = Vec::new();
    let opts = options(&a.args, &mut files, &mut diags);
    if let Some(d) = output_is_a_number(a.output.as_deref(), &mut files) {
        out.diags(&[d], &files);
        return 1;
    }
    if let Some(code) = fast::run(&a, &opts, diags.is_empty(), &rep) {
        return code;
    }
    rep.phase(Phase::Check, None);
    let id = match read_source(&a.file, &mut files) {
        Ok(id) => id,
        Err(d) => {
            out.diags(&[*d], &files);
            return 1;
        }
    };
    let text = files.get(id).text.clone();
    // By extension, else by content (`collc sim schedule.txt` holding GOAL text).
    let is_goal = super::inputs::kind(&a.file, &text) == Some(super::inputs::Kind::Goal);
    // What `schedule auto` chose, printed above the report.
    let mut chose = String::new();
    let prepared = if is_goal {
        if let Some(m) = &a.model {
            return super::usage::refuse(
                &format!(
                    "`--model {m}` names a model of a `.coll` file; a `.goal` file runs under LogGP"
                ),
                Some(
                    "set its parameters with --loggp-L, --loggp-o, --loggp-g, --loggp-G, --loggp-O, --loggp-S",
                ),
            );
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
        let resolved = match checked.model.filter(|_| checked.diagnostics.is_empty()) {
            None => Err(checked.diagnostics),
            Some(m) => crate::choose::resolve(&m).map(|(m, pick)| {
                if let Some(p) = pick
                    && !a.batch
                {
                    chose = format!("{}\n", p.describe());
                }
                m
            }),
        };
        match resolved.map(Some).unwrap_or_else(|d| {
            diags.extend(d);
            None
        }) {
            None => Err(Vec::new()),
            Some(m)
                if diags.is_empty()
                    && (packet::wanted(&m, a.model.as_deref()).is_some()
                        || packet::canary_defaults(&m, a.model.as_deref())) =>
            {
                if let Some(seed) = a.explore_run {
                    let path = a.file.display().to_string();
                    let span = m.schedule.as_ref().map(|s| s.span).unwrap_or_default();
                    let done = crate::driver::report::replay(&m, span, seed).unwrap_or_else(|| {
                        let f = files.add("<command line>", "--explore-run".to_string());
                        Err(vec![packet::flags_unused(f, "--explore-run")])
                    });
                    return match done {
                        Ok(text) => {
                            rep.finish();
                            super::write_output(None, text.as_bytes())
                        }
                        Err(mut d) => {
                            crate::driver::report::name_file(&mut d, &path);
                            out.diags(&d, &files);
                            failed(&d)
                        }
                    };
                }
                let cm = packet::wanted(&m, a.model.as_deref()).cloned();
                let ask = packet::Ask {
                    batch: a.batch,
                    trace: a.trace.as_deref(),
                    plot: a.plot.as_deref(),
                    seed: a.seed.unwrap_or(1),
                    runs: a.runs.unwrap_or(1),
                };
                let done = match a.loggp_flags() {
                    false => packet::run(&m, cm.as_ref(), &ask),
                    true => Err(vec![packet::flags_unused(
                        files.add("<command line>", "-L/-o/-g/-G/-O/-S".to_string()),
                        "LogGP flags",
                    )]),
                };
                return match done {
                    Ok(text) => {
                        rep.finish();
                        super::write_output(None, text.as_bytes())
                    }
                    Err(d) => {
                        out.diags(&d, &files);
                        failed(&d)
                    }
                };
            }
            Some(_) if a.seed.is_some() || a.runs.is_some() => {
                let f = files.add("<command line>", "--seed/--runs".to_string());
                out.diags(&[packet::flags_unused(f, "--seed/--runs")], &files);
                return 1;
            }
            Some(m)
                if a.plot.is_some()
                    && !(diags.is_empty()
                        && flow_wanted(&m, a.model.as_deref())
                        && !is_forest(&m)) =>
            {
                let f = files.add("<command line>", "--plot".to_string());
                out.diags(&[packet::flags_unused(f, "--plot")], &files);
                return 1;
            }
            Some(m) if diags.is_empty() && flow_wanted(&m, a.model.as_deref()) => {
                if a.loggp_flags() {
                    let flags = "--loggp-L/o/g/G/O/S/wrap";
                    let f = files.add("<command line>", flags.to_string());
                    out.diags(
                        &[Diagnostic::error(
                            Code::BadValue,
                            Span::new(f, 0, flags.len()),
                            "LogGP parameters were given, but this file is simulated on its topology with the flow model",
                        )
                        .label("LogGP flags")
                        .help("drop them, or declare a `loggp` model and name it with `--model NAME`")],
                        &files,
                    );
                    return 1;
                }
                if !is_forest(&m) {
                    let ask = fluid::Ask {
                        model: a.model.as_deref(),
                        batch: a.batch,
                        trace: a.trace.as_deref(),
                        plot: a.plot.as_deref(),
                    };
                    return match fluid::run(&m, &ask) {
                        Ok(text) => {
                            rep.finish();
                            super::write_output(a.output.as_deref(), (chose + &text).as_bytes())
                        }
                        Err(d) => {
                            out.diags(&d, &files);
                            failed(&d)
                        }
                    };
                }
                return match super::flow::report(
                    &m,
                    a.model.as_deref(),
                    a.trace.is_some(),
                    a.batch,
                    &rep,
                ) {
                    Ok(r) => {
                        rep.finish();
                        let text = chose + &r.text;
                        let code = super::write_output(a.output.as_deref(), text.as_bytes());
                        out.diags(&r.warnings, &files);
                        match (&a.trace, r.trace) {
                            (Some(path), Some(json)) => write_trace(path, &json).max(code),
                            (Some(_), None) => 2,
                            _ => code,
                        }
                    }
                    Err(d) => {
                        out.diags(&d, &files);
                        failed(&d)
                    }
                };
            }
            Some(m) => prepare_coll(&a, &mut files, id, &m, &rep),
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
    rep.phase(Phase::Simulate, None);
    let result = sim::simulate_bounded(
        &schedule,
        &SimOptions {
            model,
            trace: a.trace.is_some(),
        },
        opts.limits.max_events,
    );
    rep.finish();
    let fallback = Span::new(id, 0, 0);
    let at = |x: At| spans.as_ref().map_or(fallback, |s: &GoalSpans| s.at(x));
    if let Some(d) = report::out_of_bounds(&result, opts.limits.max_events, at) {
        out.diags(&[d], &files);
        return 1;
    }
    let text = chose + &report(schedule.ranks.len(), &result, &model, unit, a.batch);
    if !result.complete() {
        // The queues go to standard output, as LogGOPSim prints them; no file on error.
        let code = super::write_output(None, text.as_bytes());
        if code != 0 {
            return code;
        }
        out.diags(&incomplete(&schedule, &result, at), &files);
        return 1;
    }
    let code = super::write_output(a.output.as_deref(), text.as_bytes());
    if code != 0 {
        return code;
    }
    if let Some(path) = &a.trace {
        let Some(json) = sim::trace::chrome_json(&schedule, &result, unit) else {
            return 2;
        };
        return write_trace(path, &json);
    }
    0
}

/// `-o 1500`, LogGOPSim's spelling of the overhead: refused (here `-o` is the output file), so
/// that a LogGOPSim command line does not silently write the report to a file named `1500`.
fn output_is_a_number(
    output: Option<&std::path::Path>,
    files: &mut SourceMap,
) -> Option<Diagnostic> {
    let text = output?.to_str()?;
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let f = files.add("<command line>", format!("-o {text}"));
    Some(
        Diagnostic::error(
            Code::BadValue,
            Span::new(f, 3, 3 + text.len()),
            format!("`-o` is the output file, so `-o {text}` would write the report to a file named `{text}`"),
        )
        .label("a number, not a file name")
        .help(format!("for LogGOPSim's overhead o write `--loggp-o {text}`; for a file of that name write `-o ./{text}`")),
    )
}

/// The exit code of a run that stopped on `diags`: 2 when an output could not be written
/// (E0029: a trace, a chart), else 1.
fn failed(diags: &[Diagnostic]) -> i32 {
    if diags.iter().any(|d| d.code == Code::Io) {
        2
    } else {
        1
    }
}

/// Writes a Chrome trace; the exit code.
fn write_trace(path: &std::path::Path, json: &str) -> i32 {
    match write_atomic(path, json.as_bytes()) {
        Ok(()) => 0,
        Err(e) => {
            super::output::say(&format!(
                "error[{}]: cannot write `{}`: {e}\n",
                Code::Io,
                path.display()
            ));
            2
        }
    }
}
