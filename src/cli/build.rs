//! `collc build FILE`: check the file, then emit its model, its lowered and verified IR, its
//! report, or a target's output (`--target goal|mpi|msccl`), to standard output or `-o`.
//! With `-v`, each phase's wall time goes to standard error ([`super::progress`]).

use super::progress::{Reporter, Verbose};
use super::{CheckArgs, Emit, Out, msccl, options, read_and_check, report, sim, write_output};
use crate::diag::SourceMap;
use crate::progress::{Phase, Progress};
use crate::sema;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(super) struct BuildArgs {
    file: PathBuf,
    /// What to emit.
    #[arg(long, value_enum, default_value_t = Emit::Model)]
    emit: Emit,
    /// Lower the schedule and write this target instead (`goal`: GOAL text for LogGOPSim;
    /// `mpi`: a Cargo project, `-o DIR`).
    #[arg(long, value_enum)]
    target: Option<sim::BuildTarget>,
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
    if let Some(c) = &chose
        && (a.target.is_some() || a.output.is_some())
    {
        eprintln!("note: {c}");
    }
    let output = a.output.as_deref();
    if let Some(spec) = &a.size_windows {
        if a.target != Some(sim::BuildTarget::Msccl) {
            eprintln!("error: `--size-windows` applies to `--target msccl` only");
            return 1;
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
    if a.target == Some(sim::BuildTarget::Msccl) {
        return msccl::build(&model, &a.msccl, output, out, &files, &rep);
    }
    if let Some(t) = a.target {
        return sim::build(t, &model, output, out, &files, &rep);
    }
    let text = match a.emit {
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
                Err(d) => {
                    rep.finish();
                    out.diags(&d, &files);
                    return 1;
                }
            }
        }
    };
    rep.finish();
    write_output(output, text.as_bytes())
}
