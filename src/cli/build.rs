//! `collc build FILE`: check the file, then emit its model, its lowered and verified IR, its
//! report, or a target's output (`--target goal|mpi|msccl`), to standard output or `-o`.
//! With `-v`, each phase's wall time goes to standard error ([`super::progress`]).

use super::progress::{Reporter, Verbose};
use super::{CheckArgs, Emit, Out, msccl, options, read_source, report, sim, write_output};
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
    let checked = match read_source(&a.file, &mut files) {
        Ok(id) => Some(sema::check(&mut files, id, &opts)),
        Err(d) => {
            diags.push(*d);
            None
        }
    };
    let model = checked.and_then(|c| {
        diags.extend(c.diagnostics);
        c.model
    });
    let Some(model) = model.filter(|_| diags.is_empty()) else {
        rep.finish();
        out.diags(&diags, &files);
        return 1;
    };
    let output = a.output.as_deref();
    if a.target == Some(sim::BuildTarget::Msccl) {
        return msccl::build(&model, &a.msccl, output, out, &files, &rep);
    }
    if let Some(t) = a.target {
        return sim::build(t, &model, output, out, &files, &rep);
    }
    let text = match a.emit {
        Emit::Model => {
            rep.phase(Phase::Emit, None);
            sema::print::model_text(&model)
        }
        Emit::Ir => match crate::lower::lower_and_verify_with(&model, &rep) {
            Ok((program, _)) => {
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
                Ok(t) => t,
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
