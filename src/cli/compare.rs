//! `collc compare FILE.coll`: every schedule family that implements the file's collective,
//! simulated on the file's topology over a sweep of sizes ([`crate::compare`]), printed as a
//! table (default), CSV or JSON (to standard output, or `-o FILE`), and with `--plot OUT.svg`
//! drawn as a chart of algbw against size. The figures come from the flow-level model:
//! `--model NAME` names a declared `flow` model, else the `sim` target's, else the only
//! declared one, else the defaults
//! ([`crate::net::for_file`]); or from the packet-level simulator when `--model` (or, without
//! it, the `sim` target) names a `packet` model, which adds the in-network families and takes
//! `--seed` and `--runs`. `--families` keeps only the named families. `--shard K/N` runs
//! one part of the sweep and writes it as JSON; `--merge PARTS...` puts parts back together
//! ([`crate::compare::shard`]). `--sizes` takes a range or a list (`compare::sizes`); a bad value
//! is a diagnostic pointing into the flag.
//!
//! The job is the driver's ([`crate::driver::compare`]); this is its arguments, the choice of
//! format and the files written.

use super::progress::{Reporter, Verbose};
use super::{CheckArgs, Out, load_options, options, write_atomic, write_output};
use crate::compare;
use crate::diag::{Code, SourceMap};
use crate::driver::Input;
use crate::driver::compare::CompareRequest;
use crate::progress::{Phase, Progress};
use std::path::PathBuf;

#[derive(Copy, Clone, Debug, clap::ValueEnum, PartialEq, Eq)]
pub(super) enum Format {
    /// A table for people, with the winners and crossovers.
    Table,
    /// One row per size and family, with the model in every row.
    Csv,
    /// One JSON object.
    Json,
}

#[derive(clap::Args, Debug)]
pub(super) struct CompareArgs {
    /// The `.coll` file whose topology and collective to compare schedules on.
    file: PathBuf,
    /// Sizes to simulate: a range doubling from the first size (`1KiB..1GiB`), a range with
    /// another factor (`1KiB..1GiB*4`), or a list (`8B,1MiB,64MiB`). Default: 1KiB..1GiB under
    /// a flow model, the collective's declared size under a packet model.
    #[arg(long, value_name = "SIZES")]
    sizes: Option<String>,
    /// Instead of sizes, compare as a `param` of the file takes each of these values
    /// (`--vary hosts=51,256,512`): one row per value, the file checked with `--param NAME=V`,
    /// each row at its collective's size and under its model. Repeat it to vary several
    /// `param`s: one row per combination, the first slowest.
    #[arg(long, value_name = "NAME=V1,V2,...", conflicts_with = "sizes")]
    vary: Vec<String>,
    /// How to print the comparison.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Also draw algbw against size as an SVG line chart.
    #[arg(long, value_name = "OUT.svg")]
    plot: Option<PathBuf>,
    /// The declared model to simulate with: a `flow` model, or a `packet` model (which also
    /// runs the in-network families). Default: the `sim` target's packet model if it names
    /// one, else the file's flow model or the flow defaults.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Only these families (comma-separated names, e.g. `ring,static_trees`).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    families: Vec<String>,
    /// Packet model: the seed of the first run.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// Packet model: runs per figure (seeds seed..seed+N; each figure is their median; N at
    /// most 1000).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=crate::sim::packet::MAX_RUNS))]
    runs: u64,
    /// Run only shard K of N of the sweep (its rows K, K+N, ...: sizes or `--vary` values) and
    /// write them as a part (JSON) for `--merge`; N runs with the same file and flags cover it.
    #[arg(long, value_name = "K/N", conflicts_with = "merge")]
    shard: Option<String>,
    /// Put the parts of `--shard` runs (made with the same file and flags) back together and
    /// print what one run without shards prints, simulating nothing.
    #[arg(long, value_name = "PART", num_args = 1..)]
    merge: Vec<PathBuf>,
    /// Write the table, CSV or JSON to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    verbose: Verbose,
    #[command(flatten)]
    args: CheckArgs,
}

pub(super) fn run(a: CompareArgs, out: &Out) -> i32 {
    let rep = Reporter::new(a.verbose);
    let mut files = SourceMap::new();
    let mut diags = Vec::new();
    let opts = options(&a.args, &mut files, &mut diags);
    if !diags.is_empty() {
        out.diags(&diags, &files);
        return 1;
    }
    let req = CompareRequest {
        sizes: a.sizes.clone(),
        vary: a.vary.clone(),
        model: a.model.clone(),
        families: a.families.clone(),
        seed: a.seed,
        runs: a.runs,
        shard: a.shard.clone(),
        merge: a.merge.iter().cloned().map(Input::Path).collect(),
    };
    let input = Input::Path(a.file.clone());
    match crate::driver::compare::compare(&input, &load_options(&a.args, opts), &req, &rep) {
        Ok(cmp) => emit(&a, &req, &cmp, &rep),
        Err(f) => {
            rep.finish();
            out.diags(&f.diagnostics, &f.files);
            1
        }
    }
}

/// Prints (or writes) the comparison and draws `--plot`.
fn emit(a: &CompareArgs, req: &CompareRequest, cmp: &compare::Comparison, rep: &Reporter) -> i32 {
    rep.phase(Phase::Emit, None);
    if let Some(part) = req.part(cmp) {
        rep.finish();
        return write_output(a.output.as_deref(), part.as_bytes());
    }
    let text = match a.format {
        Format::Table => compare::render::table(cmp),
        Format::Csv => compare::render::csv(cmp),
        Format::Json => compare::render::json(cmp),
    };
    if let Some(path) = &a.plot {
        let svg = match compare::chart::svg(cmp) {
            Ok(s) => s,
            Err(e) => {
                rep.finish();
                super::output::say(&format!(
                    "error[{}]: internal: cannot draw the chart: {e}\n",
                    crate::diag::Code::Internal
                ));
                return 2;
            }
        };
        if let Err(e) = write_atomic(path, svg.as_bytes()) {
            rep.finish();
            eprintln!(
                "error[{}]: cannot write `{}`: {e}",
                Code::Io,
                path.display()
            );
            return 2;
        }
    }
    rep.finish();
    write_output(a.output.as_deref(), text.as_bytes())
}
