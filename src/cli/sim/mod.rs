//! `collc sim FILE`: the command line over [`crate::driver::sim`], which runs the job.
//!
//! `collc sim FILE.goal` runs the GOAL schedule under LogGP with LogGOPSim's defaults (L=2500,
//! o=1500, g=1000, G=6, O=0, S=65535, in ns); `--loggp-L --loggp-o --loggp-g --loggp-G
//! --loggp-O --loggp-S` set each (LogGOPSim's `-L -g -G -O -S` too; `-o` is the output file, as
//! everywhere in collc, and a number given to it is refused with a pointer to `--loggp-o`);
//! `--loggp-wrap` takes LogGOPSim's wrapped time where its unsigned arithmetic passes 2^64
//! instead of stopping with E0047 (see [`crate::sim`]). `collc sim FILE.coll` simulates the
//! file's schedule under the model the driver picks for it (`--model NAME` first; see
//! [`crate::driver::sim`]): a postal or LogGP model (LogGOPSim's report: `Times:`, `Host r:
//! t`, `Maximum finishing time ...`), the flow model on the file's network, or a packet model
//! (`--seed N`, `--runs N`; `--explore-run SEED` replays one of Canary's exploration runs).
//!
//! Here: the arguments into a [`SimRequest`], the `-o 1500` refusal, where the outputs go and the
//! exit code. The report goes to standard output, or with `-o FILE` to FILE (atomically,
//! nothing on error); a packet model's report and an exploration replay always go to standard
//! output. `--trace OUT.json` writes the Chrome trace (Perfetto), `--plot OUT.svg` the chart;
//! `-b` prints only the time. A schedule that cannot finish (unmatched queues, ops that never
//! run) prints its queues on standard output, as LogGOPSim does, and exits 1 with E0038.
//! Under the flow model of a host schedule and under a packet model, the chart and the trace
//! are written before the report, and one that cannot be written is E0029 at the schedule
//! (exit 2, no report); otherwise the report comes first and the trace after it.

use super::progress::{Reporter, Verbose};
use super::{CheckArgs, Out, load_options, options, read_source, write_atomic, write_output};
use crate::diag::{Code, Diagnostic, SourceMap, Span};
use crate::driver::{
    self, Engine, Failure, Input, LogGPOverrides, Session, SimOutcome, SimRequest,
};
use crate::progress::{Phase, Progress};
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
    /// The request these arguments make.
    fn request(&self) -> SimRequest {
        SimRequest {
            model: self.model.clone(),
            seed: self.seed,
            runs: self.runs,
            trace: self.trace.is_some(),
            plot: self.plot.is_some(),
            batch: self.batch,
            reduce_ns: self.reduce_ns,
            loggp: LogGPOverrides {
                L: self.latency,
                o: self.overhead,
                g: self.gap,
                G: self.gap_per_byte,
                O: self.overhead_per_byte,
                S: self.eager_limit,
                wrap: self.wrap,
            },
            explore_run: self.explore_run,
        }
    }
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
    if !diags.is_empty() {
        out.diags(&diags, &files);
        return 1;
    }
    let opts = load_options(&a.args, opts);
    let req = a.request();
    // A `.goal` file is streamed into the simulator when nothing needs its text.
    if a.file.extension().is_some_and(|e| e == "goal") && a.model.is_none() {
        let done = driver::sim_goal(&Input::Path(a.file.clone()), &opts, &req, &rep);
        return written(&a, out, &rep, None, done);
    }
    rep.phase(Phase::Check, None);
    let id = match read_source(&a.file, &mut files) {
        Ok(id) => id,
        Err(d) => {
            out.diags(&[*d], &files);
            return 1;
        }
    };
    let source = files.get(id);
    let input = Input::text(source.name.clone(), source.text.clone());
    // By extension, else by content (`collc sim schedule.txt` holding GOAL text).
    if driver::inputs::kind(&a.file, &source.text) == Some(driver::Kind::Goal) {
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
        let done = driver::sim_goal(&input, &opts, &req, &rep);
        return written(&a, out, &rep, None, done);
    }
    let session = match driver::load(&input, &opts) {
        Ok(s) => s,
        Err(f) => {
            out.diags(&f.diagnostics, &f.files);
            return 1;
        }
    };
    let done = session.sim(&req, &rep);
    written(&a, out, &rep, Some(&session), done)
}

/// Prints and writes what the simulation gave (see the module doc); the exit code.
fn written(
    a: &SimArgs,
    out: &Out,
    rep: &Reporter,
    session: Option<&Session>,
    done: Result<SimOutcome, Failure>,
) -> i32 {
    let o = match done {
        Ok(o) => o,
        Err(f) => {
            out.diags(&f.diagnostics, &f.files);
            // An output that could not be made (a chart) is exit 2; the `.goal` path's E0029
            // is its input's.
            return if session.is_some() && f.is_io() { 2 } else { 1 };
        }
    };
    rep.finish();
    if let Some(f) = &o.unfinished {
        // The queues go to standard output, as LogGOPSim prints them; no file on error.
        let code = write_output(None, o.text.as_bytes());
        if code != 0 {
            return code;
        }
        out.diags(&f.diagnostics, &f.files);
        return 1;
    }
    let files_first = matches!(o.kind, Engine::Flow | Engine::Packet);
    if let (true, Some(s)) = (files_first, session) {
        let outputs = [(&a.plot, &o.plot_svg), (&a.trace, &o.trace_json)];
        for (path, text) in outputs {
            if let (Some(path), Some(text)) = (path, text)
                && let Err(e) = write_atomic(path, text.as_bytes())
            {
                let f = s.sim_write_failure(path, &e);
                out.diags(&f.diagnostics, &f.files);
                return 2;
            }
        }
    }
    let to = match o.kind {
        Engine::Packet | Engine::Replay => None,
        _ => a.output.as_deref(),
    };
    let code = write_output(to, o.text.as_bytes());
    if let Some(s) = session {
        out.diags(&o.warnings, s.files());
    }
    match o.kind {
        Engine::Flow | Engine::Packet | Engine::Replay => return code,
        Engine::LogGP | Engine::Postal if code != 0 => return code,
        _ => {}
    }
    match (&a.trace, &o.trace_json) {
        (Some(path), Some(json)) => write_trace(path, json).max(code),
        (Some(_), None) => 2,
        _ => code,
    }
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
