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

use super::progress::{Reporter, Verbose};
use super::{CheckArgs, Out, options, read_and_check, write_atomic, write_output};
use crate::compare::{self, sizes};
use crate::diag::{Code, Diagnostic, SourceMap, Span};
use crate::net;
use crate::progress::{Phase, Progress};
use crate::sema::model::{CostModelKind, Model};
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

/// A diagnostic at `len` bytes from `at` of the command-line text `--FLAG VALUE`.
fn at_flag(files: &mut SourceMap, flag: &str, value: &str, at: std::ops::Range<usize>) -> Span {
    let f = files.add("<command line>", format!("--{flag} {value}"));
    let skip = flag.len() + 3;
    Span::new(f, skip + at.start, skip + at.end)
}

/// The engine `--model` asks for (a flow or packet model), or the file's: the `sim` target's
/// packet model, else its flow parameters ([`net::for_file`]).
fn engine(
    m: &Model,
    a: &CompareArgs,
    files: &mut SourceMap,
) -> Result<compare::Engine, Diagnostic> {
    let packet = |x: &crate::sema::model::CostModel| {
        crate::sim::packet::PacketParams::from_model(x).map(|params| compare::Engine::Packet {
            params,
            seed: a.seed,
            runs: a.runs,
        })
    };
    let Some(name) = a.model.as_deref() else {
        let target = m
            .sim_target_model()
            .and_then(|t| m.models.iter().find(|x| x.name == t))
            .and_then(packet);
        return Ok(target.unwrap_or_else(|| compare::Engine::Flow(net::for_file(m, None))));
    };
    let span = at_flag(files, "model", name, 0..name.len());
    let flows: Vec<&str> = m
        .models
        .iter()
        .filter(|x| matches!(x.kind, CostModelKind::Flow | CostModelKind::Packet))
        .map(|x| x.name.as_str())
        .collect();
    let help = if flows.is_empty() {
        "declare one, e.g. `model fluid: flow { overhead: 2 us; }`, or leave out `--model` for the defaults".to_string()
    } else {
        format!("declared flow and packet models: {}", flows.join(", "))
    };
    match m.models.iter().find(|x| x.name == name) {
        None => Err(Diagnostic::error(
            Code::UnknownName,
            span,
            format!("the file declares no model named `{name}`"),
        )
        .label("no such model")
        .help(help)),
        Some(x) => packet(x)
            .or_else(|| net::FlowParams::from_model(x).map(compare::Engine::Flow))
            .ok_or_else(|| {
            Diagnostic::error(
                Code::BadValue,
                span,
                format!(
                    "`{name}` is a `{}` model; `collc compare` simulates with a `flow` or `packet` model",
                    x.kind.name()
                ),
            )
            .label("not a flow or packet model")
            .help(help)
        }),
    }
}

/// `--vary NAME=V1,V2,...` as the name and its values; commas inside brackets, parentheses or
/// quotes do not split.
fn parse_vary(spec: &str, files: &mut SourceMap) -> Result<(String, Vec<String>), Diagnostic> {
    let bad = |files: &mut SourceMap, at: std::ops::Range<usize>, why: &str| {
        Diagnostic::error(
            Code::Syntax,
            at_flag(files, "vary", spec, at),
            format!("`--vary {spec}`: {why}"),
        )
        .label("expected NAME=V1,V2,...")
        .help("write e.g. `--vary hosts=51,256,512`, naming a `param` of the file")
    };
    let Some((name, list)) = spec.split_once('=') else {
        return Err(bad(files, 0..spec.len(), "no `=`"));
    };
    let (name, base) = (name.trim(), spec.len() - list.len());
    if name.is_empty() {
        return Err(bad(files, 0..base, "no parameter name"));
    }
    let mut values = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0);
    for (i, ch) in list
        .char_indices()
        .chain(std::iter::once((list.len(), ',')))
    {
        match ch {
            '"' => quoted = !quoted,
            '[' | '(' if !quoted => depth += 1,
            ']' | ')' if !quoted => depth -= 1,
            ',' if !quoted && depth <= 0 => {
                let v = list[start..i].trim();
                if v.is_empty() {
                    return Err(bad(files, base + start..base + i, "an empty value"));
                }
                values.push(v.to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    Ok((name.to_string(), values))
}

/// Every combination of the varied values, the first `param` slowest.
fn combinations(vary: &[(String, Vec<String>)]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    for (_, values) in vary {
        out = out
            .into_iter()
            .flat_map(|head| {
                values.iter().map(move |v| {
                    let mut row = head.clone();
                    row.push(v.clone());
                    row
                })
            })
            .collect();
    }
    out
}

/// The file checked once per combination of `--vary` values, each with its engine; warnings
/// are kept from the first combination only (they repeat), and checking stops at the first
/// combination with errors.
fn points(
    a: &CompareArgs,
    vary: &[(String, Vec<String>)],
    opts: &crate::sema::Options,
    files: &mut SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> Vec<(Vec<String>, Model, compare::Engine)> {
    let mut out = Vec::new();
    for (i, values) in combinations(vary).into_iter().enumerate() {
        let mut o = opts.clone();
        o.params.retain(|(k, _)| !vary.iter().any(|(n, _)| n == k));
        let mut with = Vec::new();
        for ((name, _), v) in vary.iter().zip(&values) {
            o.params.push((name.clone(), v.clone()));
            with.push(format!("`{name}` = {v}"));
        }
        let mut here = Vec::new();
        let model = read_and_check(&a.file, files, &o, &mut here);
        let failed = here
            .iter()
            .any(|d| d.severity == crate::diag::Severity::Error);
        diags.extend(
            here.into_iter()
                .filter(|d| i == 0 || d.severity == crate::diag::Severity::Error)
                .map(|d| d.note(format!("with {} (`--vary`)", with.join(", ")))),
        );
        let Some(m) = model.filter(|_| !failed) else {
            break;
        };
        match engine(&m, a, files) {
            Ok(e) => out.push((values, m, e)),
            Err(d) => {
                diags.push(d);
                break;
            }
        }
    }
    out
}

pub(super) fn run(a: CompareArgs, out: &Out) -> i32 {
    let rep = Reporter::new(a.verbose);
    let mut files = SourceMap::new();
    let mut diags = Vec::new();
    let opts = options(&a.args, &mut files, &mut diags);
    rep.phase(Phase::Check, None);
    if !a.vary.is_empty() {
        return run_vary(&a, &opts, files, diags, &rep, out);
    }
    let model = read_and_check(&a.file, &mut files, &opts, &mut diags);
    let engine = match &model {
        Some(m) => engine(m, &a, &mut files).map_err(|d| diags.push(d)).ok(),
        None => None,
    };
    let declared = |m: &Model| {
        m.collective
            .as_ref()
            .map(|c| sizes::show(c.count.saturating_mul(c.dtype.bytes())).replace(' ', ""))
    };
    let spec = match (&a.sizes, &engine, &model) {
        (Some(s), _, _) => s.clone(),
        (None, Some(compare::Engine::Packet { .. }), Some(m)) => {
            declared(m).unwrap_or_else(|| sizes::DEFAULT.to_string())
        }
        _ => sizes::DEFAULT.to_string(),
    };
    let sizes = match sizes::parse(&spec) {
        Ok(s) => s,
        Err(e) => {
            let span = at_flag(&mut files, "sizes", &spec, e.at);
            diags.push(
                Diagnostic::error(e.code, span, e.message)
                    .label(e.label)
                    .help(e.help),
            );
            Vec::new()
        }
    };
    if let (Some(m), Some(e)) = (&model, &engine) {
        check_families(&a, m, e, &mut files, &mut diags);
    }
    let (Some(model), Some(engine)) = (model, engine) else {
        rep.finish();
        out.diags(&diags, &files);
        return 1;
    };
    if !diags.is_empty() {
        rep.finish();
        out.diags(&diags, &files);
        return 1;
    }
    let (split, prints) = match split(&a, &mut files) {
        Ok(s) => s,
        Err(d) => {
            rep.finish();
            out.diags(&[d], &files);
            return 1;
        }
    };
    let cmp = match compare::compare_split(&model, &sizes, &engine, &a.families, &rep, &split)
        .and_then(|c| {
            same_sweep(&c, &prints, &mut files)
                .map(|_| c)
                .map_err(|d| vec![d])
        }) {
        Ok(c) => c,
        Err(d) => {
            rep.finish();
            out.diags(&d, &files);
            return 1;
        }
    };
    emit(&a, &cmp, &rep)
}

/// `--families` names the file's families under `e`, else a diagnostic per unknown name.
fn check_families(
    a: &CompareArgs,
    m: &Model,
    e: &compare::Engine,
    files: &mut SourceMap,
    diags: &mut Vec<Diagnostic>,
) {
    let known: Vec<&'static str> = compare::families_for(m, e)
        .iter()
        .map(|f| f.name())
        .collect();
    let spec = a.families.join(",");
    let mut at = 0;
    for name in &a.families {
        if !known.contains(&name.as_str()) {
            let span = at_flag(files, "families", &spec, at..at + name.len());
            diags.push(
                Diagnostic::error(
                    Code::UnknownName,
                    span,
                    format!("`{name}` is not a family this comparison runs"),
                )
                .label("no such family here")
                .help(format!(
                    "families of this file under this model: {}",
                    known.join(", ")
                )),
            );
        }
        at += name.len() + 1;
    }
}

/// `collc compare --vary NAME=V1,V2,... [--vary ...]`.
fn run_vary(
    a: &CompareArgs,
    opts: &crate::sema::Options,
    mut files: SourceMap,
    mut diags: Vec<Diagnostic>,
    rep: &Reporter,
    out: &Out,
) -> i32 {
    let mut vary = Vec::new();
    for spec in &a.vary {
        match parse_vary(spec, &mut files) {
            Ok(v) => vary.push(v),
            Err(d) => diags.push(d),
        }
    }
    let fail = |diags: &[Diagnostic], files: &SourceMap| {
        rep.finish();
        out.diags(diags, files);
        1
    };
    if !diags.is_empty() {
        return fail(&diags, &files);
    }
    let points = points(a, &vary, opts, &mut files, &mut diags);
    if let Some((_, m, e)) = points.first() {
        check_families(a, m, e, &mut files, &mut diags);
    }
    if diags
        .iter()
        .any(|d| d.severity == crate::diag::Severity::Error)
        || points.is_empty()
    {
        return fail(&diags, &files);
    }
    if !diags.is_empty() {
        out.diags(&diags, &files);
    }
    let (split, prints) = match split(a, &mut files) {
        Ok(s) => s,
        Err(d) => return fail(&[d], &files),
    };
    let names: Vec<String> = vary.into_iter().map(|(n, _)| n).collect();
    match compare::compare_over_split(&names, &points, &a.families, rep, &split) {
        Ok(cmp) => match same_sweep(&cmp, &prints, &mut files) {
            Ok(()) => emit(a, &cmp, rep),
            Err(d) => fail(&[d], &files),
        },
        Err(d) => fail(&d, &files),
    }
}

/// The cells to evaluate: `--shard`'s rows, or none with `--merge` (the parts' cells, and
/// their fingerprints to check once the sweep is known); a diagnostic for a bad flag or part.
fn split(
    a: &CompareArgs,
    files: &mut SourceMap,
) -> Result<(compare::shard::Split, Vec<(PathBuf, String)>), Diagnostic> {
    let mut out = compare::shard::Split::default();
    if let Some(spec) = &a.shard {
        out.shard = Some(compare::shard::parse(spec).map_err(|why| {
            Diagnostic::error(
                Code::BadValue,
                at_flag(files, "shard", spec, 0..spec.len()),
                format!("`--shard {spec}`: {why}"),
            )
            .label("expected K/N")
            .help("write e.g. `--shard 2/3` for the second of three shards")
        })?);
    }
    if a.merge.is_empty() {
        return Ok((out, Vec::new()));
    }
    let mut given = rustc_hash::FxHashMap::default();
    let mut prints = Vec::new();
    for path in &a.merge {
        let bad = |files: &mut SourceMap, why: String| {
            let shown = path.display().to_string();
            Diagnostic::error(
                Code::BadValue,
                at_flag(files, "merge", &shown, 0..shown.len()),
                format!("`{shown}` is not a part of a sharded sweep: {why}"),
            )
            .label("this part")
            .help("give `--merge` the files `collc compare --shard K/N` wrote")
        };
        let text = std::fs::read_to_string(path).map_err(|e| bad(files, e.to_string()))?;
        let part = compare::shard::read(&text).map_err(|why| bad(files, why))?;
        given.extend(part.cells);
        prints.push((path.clone(), part.fingerprint));
    }
    out.given = Some(given);
    Ok((out, prints))
}

/// With `--merge`: every part's fingerprint is the merged sweep's, else a diagnostic.
fn same_sweep(
    cmp: &compare::Comparison,
    prints: &[(PathBuf, String)],
    files: &mut SourceMap,
) -> Result<(), Diagnostic> {
    let want = compare::shard::fingerprint(cmp);
    match prints.iter().find(|(_, f)| *f != want) {
        None => Ok(()),
        Some((path, theirs)) => {
            let shown = path.display().to_string();
            Err(Diagnostic::error(
                Code::BadValue,
                at_flag(files, "merge", &shown, 0..shown.len()),
                format!("`{shown}` is a part of another sweep"),
            )
            .label("this part")
            .help(format!(
                "merge with the file and flags the parts were made with; this sweep is `{want}`, the part's `{theirs}`"
            )))
        }
    }
}

/// Prints (or writes) the comparison and draws `--plot`.
fn emit(a: &CompareArgs, cmp: &compare::Comparison, rep: &Reporter) -> i32 {
    rep.phase(Phase::Emit, None);
    if let Some((k, n)) = a
        .shard
        .as_deref()
        .and_then(|s| compare::shard::parse(s).ok())
    {
        rep.finish();
        return write_output(
            a.output.as_deref(),
            compare::shard::part(cmp, k, n).as_bytes(),
        );
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
