//! From a read log to a fit: the table the request picks, checked against the file's
//! collective and ranks; the algorithm, runtime and protocol; the measured times; the fit
//! ([`crate::calibrate::fit`]), its table ([`super::table`]) and declaration.

use super::CalibrateRequest;
use crate::calibrate::{self, Fit, nccl_tests};
use crate::diag::{Code, Diagnostic, SourceMap};
use crate::driver::flag::bad_value;
use crate::net::gpu::{Proto, Runtime};
use crate::sema::model::{AutoOr, CollectiveKind, CostModelKind, Family, Model};

/// What [`run`] fitted, and with what.
pub(super) struct Fitted {
    pub fit: Fit,
    pub family: Family,
    pub runtime: Runtime,
    pub proto: Proto,
    pub table: String,
    pub declaration: String,
}

/// The fit of `log` (named `source`) on `m`, or why the log does not fit the file; warnings
/// on the log go to `warnings`, and `files` takes what the diagnostics on options point into.
pub(super) fn run(
    m: &Model,
    log: &nccl_tests::Log,
    source: &str,
    req: &CalibrateRequest,
    files: &mut SourceMap,
    warnings: &mut Vec<Diagnostic>,
) -> Result<Fitted, Vec<Diagnostic>> {
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
    let table = pick_table(req, log, c.kind, files)?;
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
    let (family, runtime, proto) = choices(req, m, log, c.kind, files).map_err(one)?;
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
    let fit = calibrate::fit(m, &family, runtime, proto, &measured, source)?;
    let kind = c.kind.name();
    let text = super::table::render(&fit, runtime, proto, kind, n, family.name());
    let about = format!(
        "Written by `collc calibrate`: {}'s {} costs fitted to {source}\n({kind} on {n} ranks, {}, {} sizes; latency scale {}).\nPaste it into the file (`collc compare`, `collc sim` and `schedule auto` then use it).",
        runtime.name(),
        proto.name(),
        family.name(),
        measured.len(),
        fit.latency_scale
    );
    let declaration = calibrate::declaration(&req.name, &fit.params, &about);
    Ok(Fitted {
        fit,
        family,
        runtime,
        proto,
        table: text,
        declaration,
    })
}

/// The algorithm (`algo`, else the log's, else the ring), runtime (`runtime`, else the file's
/// flow model's, else NCCL) and protocol (`proto`, else the log's, else Simple).
fn choices(
    req: &CalibrateRequest,
    m: &Model,
    log: &nccl_tests::Log,
    kind: CollectiveKind,
    files: &mut SourceMap,
) -> Result<(Family, Runtime, Proto), Diagnostic> {
    let algo = req
        .algo
        .clone()
        .or_else(|| log.algo.clone())
        .unwrap_or("ring".into());
    let family = match algo.to_ascii_lowercase().as_str() {
        "ring" => Family::channel_rings(),
        "tree" if kind == CollectiveKind::Allreduce => Family::NcclTree {
            chunks: AutoOr::Auto,
        },
        _ => {
            return Err(bad_value(
                files,
                "algo",
                &algo,
                "collc models NCCL's ring, and its tree for allreduce",
                "calibrate from a log measured with NCCL_ALGO=Ring (or Tree for an allreduce)",
            ));
        }
    };
    let runtime = match &req.runtime {
        Some(r) => Runtime::parse(r).ok_or_else(|| {
            bad_value(
                files,
                "runtime",
                r,
                "not a runtime",
                "write `nccl` or `rccl`",
            )
        })?,
        None => file_runtime(m).unwrap_or(Runtime::Nccl),
    };
    let proto = match req.proto.clone().or_else(|| log.proto.clone()) {
        Some(p) => Proto::from_word(&p).ok_or_else(|| {
            bad_value(
                files,
                "proto",
                &p,
                "not a protocol",
                "write `simple`, `ll` or `ll128`",
            )
        })?,
        None => Proto::Simple,
    };
    Ok((family, runtime, proto))
}

/// The runtime a file's flow model declares.
fn file_runtime(m: &Model) -> Option<Runtime> {
    m.models
        .iter()
        .filter(|x| x.kind == CostModelKind::Flow)
        .find_map(|x| crate::net::FlowParams::from_model(x)?.runtime)
        .map(|r| r.0)
}

/// `table` (from 1), else the first table that measured `kind`, else the first.
fn pick_table<'l>(
    req: &CalibrateRequest,
    log: &'l nccl_tests::Log,
    kind: CollectiveKind,
    files: &mut SourceMap,
) -> Result<&'l nccl_tests::Table, Vec<Diagnostic>> {
    match req.table {
        Some(k) => log.tables.get(k.wrapping_sub(1)).ok_or_else(|| {
            vec![bad_value(
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
