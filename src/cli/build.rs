//! `collc build FILE`: check the file, then emit its model, its lowered and verified IR or its
//! report (`--emit`), or build a target through the seam ([`super::targets`]): the one named by
//! `--target`, else the one the file declares (several declared ones into `-o DIR`), to
//! standard output or `-o`. Without `--emit`, `--target` or a declared target it prints the
//! model. With `-v`, each phase's wall time goes to standard error ([`super::progress`]).

use super::progress::{Reporter, Verbose};
use super::{CheckArgs, Emit, Out, msccl, options, read_and_check, report, targets, write_output};
use crate::diag::SourceMap;
use crate::progress::{Phase, Progress};
use crate::sema::{self, model::TargetKind};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(super) struct BuildArgs {
    file: PathBuf,
    /// What to emit instead of a target's output (default: the model, when the file declares
    /// no target).
    #[arg(long, value_enum, conflicts_with = "target")]
    emit: Option<Emit>,
    /// Build this target (default: the one the file's `target` block names): `msccl` (MSCCL
    /// XML), `mpi` (a Cargo project, `-o DIR`), `p4` (switch program, entries and host
    /// program, `-o DIR`), `goal` (GOAL text for LogGOPSim).
    #[arg(long, value_parser = targets::parse_kind, value_name = "TARGET")]
    target: Option<TargetKind>,
    /// Write to this file instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// With `--target msccl`: one XML per message-size window over these sizes (a range such
    /// as `1KiB..1GiB`, as `collc compare --sizes`), each the fastest family for its sizes,
    /// written into the directory `-o DIR`.
    #[arg(long, value_name = "SIZES")]
    size_windows: Option<String>,
    #[command(flatten)]
    verbose: Verbose,
    #[command(flatten)]
    args: CheckArgs,
    #[command(flatten)]
    msccl: msccl::MscclArgs,
}

pub(super) fn run(a: BuildArgs, out: &Out) -> i32 {
    let rep = Reporter::new(a.verbose);
    let mut files = SourceMap::new();
    let mut diags = Vec::new();
    let opts = options(&a.args, &mut files, &mut diags);
    rep.phase(Phase::Check, None);
    let model = read_and_check(&a.file, &mut files, &opts, &mut diags);
    let Some(model) = model.filter(|_| diags.is_empty()) else {
        rep.finish();
        out.diags(&diags, &files);
        return 1;
    };
    let (model, pick) = match crate::choose::resolve(&model) {
        Ok(x) => x,
        Err(d) => {
            rep.finish();
            out.diags(&d, &files);
            return 1;
        }
    };
    let chose = pick.as_ref().map(crate::choose::AutoPick::describe);
    let kinds = match (a.target, a.emit) {
        (Some(k), _) => vec![k],
        (None, Some(_)) => Vec::new(),
        (None, None) => targets::chosen(&model),
    };
    if kinds.is_empty()
        && a.emit.is_none()
        && model.targets.iter().any(|t| t.kind == TargetKind::Sim)
    {
        eprintln!(
            "note: this file's target is `sim`, which `collc sim {}` runs; `collc build` prints the model (`--emit report` for the report)",
            a.file.display()
        );
    }
    if let Some(c) = &chose
        && (!kinds.is_empty() || a.output.is_some())
    {
        eprintln!("note: {c}");
    }
    let output = a.output.as_deref();
    let target_options = |k: TargetKind| {
        let mut o = crate::target::Options::from_model(&model, k);
        if k == TargetKind::Msccl {
            msccl::overrides(&a.msccl, &mut o);
        }
        o
    };
    if let Some(spec) = &a.size_windows {
        if kinds != [TargetKind::Msccl] {
            return super::usage::refuse("`--size-windows` applies to `--target msccl` only", None);
        }
        let sizes = match crate::compare::sizes::parse(spec) {
            Ok(s) => s,
            Err(e) => {
                let f = files.add("<command line>", format!("--size-windows {spec}"));
                let span = crate::diag::Span::new(f, 15 + e.at.start, 15 + e.at.end);
                out.diags(
                    &[crate::diag::Diagnostic::error(e.code, span, e.message)
                        .label(e.label)
                        .help(e.help)],
                    &files,
                );
                return 1;
            }
        };
        rep.finish();
        return super::msccl_windows::build(&model, &a.msccl, &sizes, output, out, &files);
    }
    match kinds.as_slice() {
        [] => {}
        [k] => {
            let code = targets::build(*k, &model, target_options(*k), output, out, &files, &rep);
            rep.finish();
            return code;
        }
        several => {
            let Some(dir) = output else {
                rep.finish();
                out.diags(&[targets::several(several, &model)], &files);
                return 1;
            };
            let stem = a
                .file
                .file_stem()
                .map_or("out".into(), |s| s.to_string_lossy().into_owned());
            let code = targets::build_all(
                several,
                &model,
                target_options,
                dir,
                &stem,
                out,
                &files,
                &rep,
            );
            rep.finish();
            return code;
        }
    }
    let text = match a.emit.unwrap_or(Emit::Model) {
        Emit::Model => {
            rep.phase(Phase::Emit, None);
            let mut text = sema::print::model_text(&model);
            if let Some(c) = &chose {
                text.push_str(&format!("// {c}\n"));
            }
            text
        }
        Emit::Ir => match crate::lower::lower_and_verify_with(&model, &rep) {
            Ok((program, _, warnings)) => {
                out.diags(&warnings, &files);
                rep.phase(Phase::Emit, None);
                crate::ir::text::print(&program)
            }
            Err(d) => {
                rep.finish();
                out.diags(&d, &files);
                return 1;
            }
        },
        Emit::Report => {
            rep.phase(Phase::Emit, None);
            match report::report(&model, &a.msccl) {
                Ok((t, warnings)) => {
                    out.diags(&warnings, &files);
                    match &pick {
                        Some(p) => format!("{}\n{t}", p.section()),
                        None => t,
                    }
                }
                Err(mut d) => {
                    rep.finish();
                    super::report_canary::name_file(&mut d, &a.file.display().to_string());
                    out.diags(&d, &files);
                    return 1;
                }
            }
        }
    };
    rep.finish();
    write_output(output, text.as_bytes())
}
