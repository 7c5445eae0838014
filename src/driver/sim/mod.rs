//! The simulation job (`collc sim`): a `.coll` file's schedule, or a `.goal` schedule, run under
//! a model, with its figures as values and the report `collc sim` prints as text.
//!
//! [`Session::sim`] runs a checked `.coll` file under the engine [`route`] picks:
//! - a `packet` model (named by [`SimRequest::model`], the `sim` target's, or the file's only
//!   model; Canary schedules under the packet model's defaults when nothing names one) on the
//!   file's network at packet level ([`packet`]), with seeds `seed..seed + runs`; with
//!   [`SimRequest::explore_run`], Canary's exploration run of that seed replayed alone;
//! - the flow-level model on the file's network when a `flow` model is asked for, the schedule
//!   is a forest, or no rule names a declared latency model and the file has a topology: host
//!   schedules in [`fluid`], forests tree by tree in [`forest`];
//! - otherwise a declared postal, pipelining postal or LogGP model (or LogGP with LogGOPSim's
//!   defaults): the schedule lowered, verified and converted to GOAL, then run by the
//!   discrete-event engine ([`goal`]), its report in LogGOPSim's format ([`loggopsim`]).
//!
//! [`sim_goal`] runs a `.goal` schedule under LogGP (LogGOPSim's defaults, each parameter
//! overridable), streaming a large file straight into the engine when nothing needs its text
//! ([`fast`]).
//!
//! A GOAL schedule that cannot finish (unmatched queues, ops that never run) is not a failure
//! of the job: the outcome has `complete: false`, its `text` holds the queues as LogGOPSim
//! prints them, and [`SimOutcome::unfinished`] the E0038 errors saying why (the command line
//! prints the text, then the errors, and exits 1). A run stopped at the event limit (E0046) or
//! whose time overflowed (E0047) is a [`Failure`].
//!
//! Nothing here writes a file: a trace and a chart come back as text
//! ([`SimOutcome::trace_json`], [`SimOutcome::plot_svg`]) for the caller to write.

mod fast;
mod fluid;
mod forest;
mod goal;
mod loggopsim;
mod packet;
mod route;

pub use route::Engine;

use super::{Failure, Input, LoadOptions, Session};
use crate::diag::{Code, Diagnostic, Span};
use crate::progress::Progress;
use crate::sim::LogGP;
use route::Route;
use std::path::Path;

/// LogGP parameters that override the model's (`--loggp-L` .. `--loggp-S`, `--loggp-wrap`),
/// in the model's ticks (ns for LogGOPSim's defaults), `S` in bytes.
#[allow(non_snake_case)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogGPOverrides {
    pub L: Option<u64>,
    pub o: Option<u64>,
    pub g: Option<u64>,
    pub G: Option<u64>,
    pub O: Option<u64>,
    pub S: Option<u64>,
    /// Take LogGOPSim's wrapped time where its unsigned arithmetic passes 2^64, instead of
    /// stopping with E0047.
    pub wrap: bool,
}

impl LogGPOverrides {
    /// Whether any parameter is set.
    pub fn any(&self) -> bool {
        self.L.is_some()
            || self.o.is_some()
            || self.g.is_some()
            || self.G.is_some()
            || self.O.is_some()
            || self.S.is_some()
            || self.wrap
    }

    /// `m` with these parameters in place of its own.
    pub fn apply(&self, m: LogGP) -> LogGP {
        LogGP {
            L: self.L.unwrap_or(m.L),
            o: self.o.unwrap_or(m.o),
            g: self.g.unwrap_or(m.g),
            G: self.G.unwrap_or(m.G),
            O: self.O.unwrap_or(m.O),
            S: self.S.unwrap_or(m.S),
            wrap: self.wrap || m.wrap,
        }
    }
}

/// What to simulate and what to make of it; `SimRequest::default()` is `collc sim FILE`.
#[derive(Clone, Debug, Default)]
pub struct SimRequest {
    /// The declared cost model to run a `.coll` file under (`--model NAME`); None lets the
    /// file decide (see the module doc).
    pub model: Option<String>,
    /// Packet model: the seed of the first run (1 when None).
    pub seed: Option<u64>,
    /// Packet model: how many runs, with seeds `seed..seed + runs` (1 when None).
    pub runs: Option<u64>,
    /// Record the timeline as Chrome trace JSON ([`SimOutcome::trace_json`]).
    pub trace: bool,
    /// Packet and flow models of host schedules: draw the link-utilisation distribution as an
    /// SVG chart ([`SimOutcome::plot_svg`]).
    pub plot: bool,
    /// The text holds only the time (LogGOPSim's `-b`); the figures are the same.
    pub batch: bool,
    /// Time of every reduction of a `.coll` schedule under a postal or LogGP model, on top of
    /// the model's gamma (ns).
    pub reduce_ns: u64,
    pub loggp: LogGPOverrides,
    /// Canary under a packet model: replay the exploration run with this seed alone.
    pub explore_run: Option<u64>,
}

impl SimRequest {
    /// True when nothing but the LogGP parameters and `batch` is asked for (what the streaming
    /// path of a `.goal` file can answer).
    fn plain(&self) -> bool {
        self.model.is_none()
            && !self.trace
            && self.seed.is_none()
            && self.runs.is_none()
            && !self.plot
    }
}

/// What a simulation gave.
#[derive(Debug)]
pub struct SimOutcome {
    /// The model and its parameters that made the figures, one line: `flow model, overhead
    /// 1000 ns per message, ...`, `LogGP: L=2500, o=1500 ...`, `packet model, ...`.
    pub engine: String,
    /// Which simulator ran.
    pub kind: Engine,
    /// The latest finishing time, in seconds (with several packet runs, the median run's, as
    /// `-b` prints it).
    pub seconds: f64,
    /// Per rank, its finishing time in seconds (packet runs: the first run's; empty for an
    /// exploration replay).
    pub ranks: Vec<f64>,
    /// The collective's size in bytes, when there is one (not for a `.goal` file).
    pub bytes: Option<u64>,
    /// nccl-tests' algorithm bandwidth, bytes over `seconds`, in bytes per second.
    pub algbw: Option<f64>,
    /// nccl-tests' bus bandwidth: `algbw` times the collective's factor, in bytes per second.
    pub busbw: Option<f64>,
    /// On a network (flow and packet models): the mean over all directed links of the share
    /// of the run each spent moving data, idle links included (packet runs: the first run's).
    pub utilisation: Option<f64>,
    /// False when the schedule could not finish ([`SimOutcome::unfinished`] says why).
    pub complete: bool,
    /// Exactly what `collc sim` writes to standard output (or to `-o FILE`).
    pub text: String,
    /// The timeline as Chrome trace JSON, when [`SimRequest::trace`] asked for it.
    pub trace_json: Option<String>,
    /// The link-utilisation chart as SVG, when [`SimRequest::plot`] asked for it.
    pub plot_svg: Option<String>,
    /// Warnings (E0045: a fixed `chunks` that loses much), pointing into the session's sources
    /// ([`Session::files`]); a `.goal` run has none.
    pub warnings: Vec<Diagnostic>,
    /// For a schedule that could not finish: the E0038 errors, with the sources they point
    /// into.
    pub unfinished: Option<Failure>,
    /// A forest's: the chunks each tree's data was pipelined in.
    pub chunks: Option<u64>,
}

impl SimOutcome {
    /// An outcome of `kind` under `engine` with `text`, its figures from `seconds`, `ranks`
    /// and the collective (`bytes`, its bus factor), complete, with nothing else.
    fn new(kind: Engine, engine: String, text: String, figures: Figures) -> SimOutcome {
        let algbw = figures.bytes.map(|b| {
            if figures.seconds > 0.0 {
                b as f64 / figures.seconds
            } else {
                0.0
            }
        });
        SimOutcome {
            engine,
            kind,
            seconds: figures.seconds,
            ranks: figures.ranks,
            bytes: figures.bytes,
            algbw,
            busbw: algbw.map(|a| a * figures.bus_factor),
            utilisation: figures.utilisation,
            complete: true,
            text,
            trace_json: None,
            plot_svg: None,
            warnings: Vec::new(),
            unfinished: None,
            chunks: None,
        }
    }
}

/// The flow model's figure for `m`'s schedule on its network at the file's size, under the
/// file's flow parameters, as `collc sim` computes it (a forest tree by tree, another family
/// lowered and simulated as flows): the figure the report's sections and hover show beside
/// `collc sim`'s. Errors when the file has no network or the schedule does not lower.
pub(crate) fn flow_run(m: &crate::sema::model::Model) -> Result<SimOutcome, Vec<Diagnostic>> {
    let req = SimRequest {
        batch: true,
        ..SimRequest::default()
    };
    let family = m
        .collective
        .as_ref()
        .map(|c| crate::lower::family_of(m, c.kind));
    match family {
        Some(crate::sema::model::Family::Forest { .. }) => {
            forest::run(m, None, &req, &crate::progress::Quiet)
        }
        _ => fluid::run(m, None, &req, &crate::progress::Quiet),
    }
}

/// The figures an engine's result gives.
struct Figures {
    seconds: f64,
    ranks: Vec<f64>,
    bytes: Option<u64>,
    /// nccl-tests' busbw over algbw for the collective (1 without one).
    bus_factor: f64,
    utilisation: Option<f64>,
}

impl Figures {
    /// The figures of a run of the file's collective (`m`'s), if it has one.
    fn of(m: &crate::sema::model::Model, seconds: f64, ranks: Vec<f64>) -> Figures {
        let c = m.collective.as_ref();
        Figures {
            seconds,
            ranks,
            bytes: c.map(|c| c.bytes()),
            bus_factor: c.map_or(1.0, |c| {
                crate::sim::fluid::bus_factor(c.kind, c.ranks.len())
            }),
            utilisation: None,
        }
    }
}

impl Session {
    /// Simulates the file's schedule (`collc sim FILE.coll`); see the module doc for the
    /// engine it runs under. A [`Failure`] for a request the chosen model does not take, a
    /// schedule that cannot be lowered or run, or a run over the limits.
    pub fn sim(&self, req: &SimRequest, progress: &dyn Progress) -> Result<SimOutcome, Failure> {
        let m = &self.model;
        let mut files = self.files.clone();
        // What `schedule auto` chose, above the report.
        let chose = match (&self.pick, req.batch) {
            (Some(p), false) => format!("{}\n", p.describe()),
            _ => String::new(),
        };
        let asked = req.model.as_deref();
        let route = Route::of(m, asked);
        let done = match route {
            Route::Packet(cm) => match req.explore_run {
                Some(seed) => packet::replay(m, &self.name, seed, &mut files),
                None if req.loggp.any() => Err(vec![route::flags_unused(
                    &mut files,
                    "-L/-o/-g/-G/-O/-S",
                    "LogGP flags",
                )]),
                None => packet::run(m, cm, req),
            },
            _ if req.seed.is_some() || req.runs.is_some() => Err(vec![route::flags_unused(
                &mut files,
                "--seed/--runs",
                "--seed/--runs",
            )]),
            _ if req.plot && !matches!(route, Route::Flow) => {
                Err(vec![route::flags_unused(&mut files, "--plot", "--plot")])
            }
            Route::Flow | Route::Forest if req.loggp.any() => {
                Err(vec![route::loggp_on_flow(&mut files)])
            }
            Route::Flow => fluid::run(m, asked, req, progress),
            Route::Forest => forest::run(m, asked, req, progress),
            Route::Goal => {
                goal::run_coll(m, &mut files, req, self.opts.limits.max_events, progress)
            }
        };
        match done {
            Ok(mut o) => {
                if o.kind != Engine::Packet && o.kind != Engine::Replay {
                    o.text.insert_str(0, &chose);
                }
                Ok(o)
            }
            Err(diagnostics) => Err(Failure::new(diagnostics, files)),
        }
    }

    /// The E0029 failure of a simulation's output (`path`: a trace, a chart) that could not be
    /// written, at the file's schedule.
    pub fn sim_write_failure(&self, path: &Path, e: &std::io::Error) -> Failure {
        self.fail(vec![
            Diagnostic::error(
                Code::Io,
                self.model.build_span(None),
                format!("cannot write `{}`: {e}", path.display()),
            )
            .label("while simulating this schedule")
            .help("check that the directory exists and is writable"),
        ])
    }
}

/// What [`Session::sim`] gives for `model` (checked, `schedule auto` resolved) with
/// `SimRequest { batch: true, ..Default::default() }`, when the engine that runs it is the
/// flow model on the file's network (a host schedule or a forest): the figures `collc sim`
/// prints, from the run at the file's size. For a caller that holds a model rather than a
/// session (the language server's hover); None under another engine or when the run fails.
pub fn flow_figure(model: &crate::sema::model::Model) -> Option<SimOutcome> {
    if !matches!(Route::of(model, None), Route::Flow | Route::Forest) {
        return None;
    }
    let session = Session {
        name: String::new(),
        files: crate::diag::SourceMap::new(),
        model: model.clone(),
        pick: None,
        opts: LoadOptions::default(),
    };
    let req = SimRequest {
        batch: true,
        ..SimRequest::default()
    };
    session.sim(&req, &crate::progress::Quiet).ok()
}

/// Simulates a `.goal` schedule under LogGP (`collc sim FILE.goal`): LogGOPSim's defaults
/// with [`SimRequest::loggp`] in their place. A path ending in `.goal` is streamed into the
/// engine when nothing needs its text; a request naming a model is refused (a `.goal` file
/// runs under LogGP), and the packet-model fields are not used.
pub fn sim_goal(
    input: &Input,
    opts: &LoadOptions,
    req: &SimRequest,
    progress: &dyn Progress,
) -> Result<SimOutcome, Failure> {
    if let Some(name) = &req.model {
        let mut files = crate::diag::SourceMap::new();
        let text = format!("--model {name}");
        let f = files.add("<command line>", text.clone());
        return Err(Failure::new(
            vec![
                Diagnostic::error(
                    Code::CommandLine,
                    Span::new(f, 0, text.len()),
                    format!("`--model {name}` names a model of a `.coll` file; a `.goal` file runs under LogGP"),
                )
                .label("a `.goal` file has no models")
                .help("set its parameters with --loggp-L, --loggp-o, --loggp-g, --loggp-G, --loggp-O, --loggp-S"),
            ],
            files,
        ));
    }
    if let Input::Path(path) = input
        && req.plain()
        && path.extension().is_some_and(|e| e == "goal")
        && let Some(o) = fast::run(path, opts, req, progress)
    {
        return Ok(o);
    }
    goal::run_file(input, opts, req, progress)
}

#[cfg(test)]
mod tests;
