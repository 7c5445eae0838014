//! `collc calibrate FILE.coll LOG`: fits the flow model to what a user measured with nccl-tests
//! on the file's machine ([`crate::calibrate`]), prints the fit's error at each size and writes
//! the fitted `model` declaration (to standard output, or `-o OUT.coll`) for the user to paste
//! into the file (imported files may not declare models). The log must have measured the file's collective on as many ranks as the file
//! has; the algorithm is `--algo`, else the log's `NCCL_ALGO`, else NCCL's ring (`tree`: NCCL's
//! tree, for an allreduce), and the
//! protocol `--proto`, else the log's `NCCL_PROTO`, else Simple.

use super::{CheckArgs, Out, options, read_and_check, write_output};
use crate::calibrate::{self, nccl_tests};
use crate::diag::{Code, Diagnostic, SourceMap, Span};
use crate::net::gpu::{Proto, Runtime};
use crate::sema::model::{CostModelKind, Family, Model};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(super) struct CalibrateArgs {
    /// The `.coll` file of the machine the log was measured on.
    file: PathBuf,
    /// nccl-tests output (`all_gather_perf ... > LOG`), as it was printed.
    log: PathBuf,
    /// The algorithm that produced the log (NCCL_ALGO): `ring`, or `tree` for an allreduce.
    #[arg(long, value_name = "ALGO")]
    algo: Option<String>,
    /// The runtime: `nccl` or `rccl`. Default: the file's flow model's, else `nccl`.
    #[arg(long, value_name = "RUNTIME")]
    runtime: Option<String>,
    /// The protocol the log ran with (`simple`, `ll`, `ll128`). Default: the log's
    /// NCCL_PROTO, else `simple`.
    #[arg(long, value_name = "PROTO")]
    proto: Option<String>,
    /// Which table of the log (1 for the first). Default: the one that measured the file's
    /// collective.
    #[arg(long, value_name = "N")]
    table: Option<usize>,
    /// The name of the written model.
    #[arg(long, value_name = "NAME", default_value = "calibrated")]
    name: String,
    /// Write the model declaration here instead of standard output.
    #[arg(short, long, value_name = "OUT.coll")]
    output: Option<PathBuf>,
    #[command(flatten)]
    args: CheckArgs,
}

/// A diagnostic on a command-line flag's value.
fn flag_error(
    files: &mut SourceMap,
    flag: &str,
    value: &str,
    what: &str,
    help: &str,
) -> Diagnostic {
    let f = files.add("<command line>", format!("--{flag} {value}"));
    let at = flag.len() + 3;
    Diagnostic::error(
        Code::BadValue,
        Span::new(f, at, at + value.len()),
        format!("`--{flag} {value}`: {what}"),
    )
    .label("here")
    .help(help.to_string())
}

pub(super) fn run(a: CalibrateArgs, out: &Out) -> i32 {
    let mut files = SourceMap::new();
    let mut diags = Vec::new();
    let opts = options(&a.args, &mut files, &mut diags);
    let model = read_and_check(&a.file, &mut files, &opts, &mut diags);
    let log = match std::fs::read_to_string(&a.log) {
        Ok(text) => {
            let id = files.add(a.log.display().to_string(), text);
            let text = files.get(id).text.clone();
            nccl_tests::parse(id, &text)
                .map_err(|d| diags.extend(d))
                .ok()
        }
        Err(e) => {
            let f = files.add("<command line>", a.log.display().to_string());
            diags.push(
                Diagnostic::error(
                    Code::Io,
                    Span::new(f, 0, a.log.display().to_string().len()),
                    format!("cannot read the log `{}`: {e}", a.log.display()),
                )
                .label("this file")
                .help("give the path of a file with nccl-tests output"),
            );
            None
        }
    };
    let (Some(m), Some(log)) = (model, log) else {
        out.diags(&diags, &files);
        return 1;
    };
    if diags
        .iter()
        .any(|d| d.severity == crate::diag::Severity::Error)
    {
        out.diags(&diags, &files);
        return 1;
    }
    match calibrate_file(&a, &m, &log, &mut files, &mut diags) {
        Ok((report, decl)) => {
            out.diags(&diags, &files);
            match &a.output {
                Some(_) => {
                    print!("{report}");
                    write_output(a.output.as_deref(), decl.as_bytes())
                }
                None => write_output(None, format!("{report}\n{decl}").as_bytes()),
            }
        }
        Err(d) => {
            diags.extend(d);
            out.diags(&diags, &files);
            1
        }
    }
}

/// The fit's report and the declaration, or why the log does not fit the file.
fn calibrate_file(
    a: &CalibrateArgs,
    m: &Model,
    log: &nccl_tests::Log,
    files: &mut SourceMap,
    warnings: &mut Vec<Diagnostic>,
) -> Result<(String, String), Vec<Diagnostic>> {
    let one = |d: Diagnostic| vec![d];
    let Some(c) = m.collective.as_ref() else {
        let span = m.topology.as_ref().map(|t| t.span).unwrap_or_default();
        return Err(one(Diagnostic::error(
            Code::MissingDeclaration,
            span,
            "the file declares no collective to calibrate",
        )
        .label("no collective")
        .help("declare the collective the log measured, e.g. `collective allgather { size: 1 GiB; dtype: bf16; }`")));
    };
    let table = pick_table(a, log, c.kind, files)?;
    let n = c.ranks.len() as u32;
    if table.ranks.is_none() {
        warnings.push(
            Diagnostic::warning(
                Code::NcclTestsLog,
                table.span,
                format!("the log does not say how many ranks ran; taken to be the file's {n}"),
            )
            .label("no `#  Rank` lines before this table")
            .help("keep nccl-tests' whole output, with its `#  Rank N ... device` lines, so collc can check it"),
        );
    }
    if let Some(r) = table.ranks
        && r != n
    {
        return Err(one(
            Diagnostic::error(
                Code::NcclTestsLog,
                table.span,
                format!("the log ran on {r} ranks; the file's collective has {n}"),
            )
            .label(format!("{r} ranks"))
            .help("calibrate with a log measured on the file's machine, or change the file's participants"),
        ));
    }
    // Without a rank count the log's collective is read with the file's.
    let measured_kind = table.collective.or_else(|| {
        table
            .ranks
            .is_none()
            .then(|| nccl_tests::infer(&table.rows, n))
            .flatten()
    });
    if measured_kind != Some(c.kind) {
        let what = measured_kind.map_or("a collective collc cannot tell".to_string(), |k| {
            k.name().to_string()
        });
        return Err(one(
            Diagnostic::error(
                Code::NcclTestsLog,
                table.span,
                format!("this table measured {what}; the file's collective is {}", c.kind.name()),
            )
            .label(format!("not {}", c.kind.name()))
            .help("calibrate with the matching nccl-tests binary (all_reduce_perf, all_gather_perf, reduce_scatter_perf), or pick another table with `--table`"),
        ));
    }
    let algo = a
        .algo
        .clone()
        .or_else(|| log.algo.clone())
        .unwrap_or("ring".into());
    let family = match algo.to_ascii_lowercase().as_str() {
        "ring" => Family::channel_rings(),
        "tree" if c.kind == crate::sema::model::CollectiveKind::Allreduce => Family::NcclTree {
            chunks: crate::sema::model::AutoOr::Auto,
        },
        _ => {
            return Err(one(flag_error(
                files,
                "algo",
                &algo,
                "collc models NCCL's ring, and its tree for allreduce",
                "calibrate from a log measured with NCCL_ALGO=Ring (or Tree for an allreduce)",
            )));
        }
    };
    let runtime = match &a.runtime {
        Some(r) => Runtime::parse(r).ok_or_else(|| {
            one(flag_error(
                files,
                "runtime",
                r,
                "not a runtime",
                "write `nccl` or `rccl`",
            ))
        })?,
        None => file_runtime(m).unwrap_or(Runtime::Nccl),
    };
    let proto_word = a.proto.clone().or_else(|| log.proto.clone());
    let proto = match &proto_word {
        Some(p) => Proto::from_word(p).ok_or_else(|| {
            one(flag_error(
                files,
                "proto",
                p,
                "not a protocol",
                "write `simple`, `ll` or `ll128`",
            ))
        })?,
        None => Proto::Simple,
    };
    let measured: Vec<(u64, f64)> = table
        .rows
        .iter()
        .filter_map(|r| {
            let t = r.out_of_place.or(r.in_place)?;
            (r.bytes > 0 && t.time_us > 0.0).then_some((r.bytes, t.time_us * 1e-6))
        })
        .collect();
    if measured.is_empty() {
        return Err(one(Diagnostic::error(
            Code::NcclTestsLog,
            table.span,
            "this table has no measured time",
        )
        .label("no rows with a time")
        .help("calibrate from a log whose rows have times (not N/A)")));
    }
    let source = a.log.display().to_string();
    let fit = calibrate::fit(m, &family, runtime, proto, &measured, &source)?;
    let report = render(&fit, runtime, proto, c.kind.name(), n, family.name());
    let about = format!(
        "Written by `collc calibrate`: {}'s {} costs fitted to {source}\n({} on {n} ranks, {}, {} sizes; latency scale {}).\nPaste it into the file (`collc compare`, `collc sim` and `schedule auto` then use it).",
        runtime.name(),
        proto.name(),
        c.kind.name(),
        family.name(),
        measured.len(),
        fit.latency_scale
    );
    Ok((report, calibrate::declaration(&a.name, &fit.params, &about)))
}

/// The runtime a file's flow model declares.
fn file_runtime(m: &Model) -> Option<Runtime> {
    m.models
        .iter()
        .filter(|x| x.kind == CostModelKind::Flow)
        .find_map(|x| crate::net::FlowParams::from_model(x)?.runtime)
        .map(|r| r.0)
}

/// `--table N`, else the first table that measured `kind`, else the first.
fn pick_table<'l>(
    a: &CalibrateArgs,
    log: &'l nccl_tests::Log,
    kind: crate::sema::model::CollectiveKind,
    files: &mut SourceMap,
) -> Result<&'l nccl_tests::Table, Vec<Diagnostic>> {
    match a.table {
        Some(k) => log.tables.get(k.wrapping_sub(1)).ok_or_else(|| {
            vec![flag_error(
                files,
                "table",
                &k.to_string(),
                &format!("the log has {} table(s)", log.tables.len()),
                "number the tables from 1",
            )]
        }),
        None => log
            .tables
            .iter()
            .find(|t| t.collective == Some(kind))
            .or(log.tables.first())
            .ok_or_else(Vec::new),
    }
}

/// The fit as a table: every fitted size, measured and modelled, and the parameters.
fn render(
    fit: &calibrate::Fit,
    runtime: Runtime,
    proto: Proto,
    kind: &str,
    n: u32,
    family: &str,
) -> String {
    let mut s = format!(
        "calibrate: {kind} on {n} ranks, {family} under {} {} costs, fitted by least squares on log time\n",
        runtime.name(),
        proto.name()
    );
    s.push_str(&format!(
        "{:>12} {:>14} {:>14} {:>8}\n",
        "size", "measured", "model", "error"
    ));
    for r in &fit.rows {
        s.push_str(&format!(
            "{:>12} {:>14} {:>14} {:>+7.1}%\n",
            crate::compare::sizes::show(r.bytes),
            crate::sim::fluid::show_seconds(r.measured),
            crate::sim::fluid::show_seconds(r.model),
            r.error() * 100.0
        ));
    }
    let p = &fit.params;
    let eff = |v: &num_rational::BigRational, constrained: bool| {
        let shown = crate::sema::units::fmt_rational(v);
        if constrained {
            shown
        } else {
            format!("{shown} (no link of this class limits the measured sizes)")
        }
    };
    s.push_str(&format!(
        "latency scale {} (launch {} ns, step {} ns inside a box, {} ns over the network)\n",
        fit.latency_scale,
        crate::net::fmt_ns(&p.launch),
        crate::net::fmt_ns(&p.overhead),
        crate::net::fmt_ns(p.net_overhead.as_ref().unwrap_or(&p.overhead)),
    ));
    s.push_str(&format!(
        "link efficiency inside a box {}, over the network {}\n",
        eff(&p.box_efficiency, fit.constrained.0),
        eff(&p.net_efficiency, fit.constrained.1)
    ));
    s
}
