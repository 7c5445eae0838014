//! `collc build FILE`: the flags as the driver's requests ([`crate::driver`]): the model, the
//! lowered and verified IR or the report (`--emit`), or a target's artifact: the one named by
//! `--target`, else the one the file declares (several declared ones into `-o DIR`), to
//! standard output or `-o`; `--size-windows` writes the windows' XMLs into `-o DIR`. Without
//! `--emit`, `--target` or a declared target it prints the model. With `-v`, each phase's wall
//! time goes to standard error ([`super::progress`]).

use super::progress::{Reporter, Verbose};
use super::{CheckArgs, Emit, Out, load_options, msccl, options, write_atomic, write_output};
use crate::diag::{Code, Diagnostic, SourceMap};
use crate::driver::{self, BuildRequest, Input, Output, Session};
use crate::progress::{Phase, Progress};
use crate::sema::model::TargetKind;
use std::path::{Path, PathBuf};

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
    #[arg(long, value_parser = parse_kind, value_name = "TARGET")]
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
    if !diags.is_empty() {
        out.diags(&diags, &files);
        return 1;
    }
    rep.phase(Phase::Check, None);
    let session = match driver::load(&Input::Path(a.file.clone()), &load_options(&a.args, opts)) {
        Ok(s) => s,
        Err(f) => {
            rep.finish();
            out.failure(&f);
            return f.exit_code();
        }
    };
    let model = session.model();
    let chose = session.auto_pick().map(crate::choose::AutoPick::describe);
    let kinds = match (a.target, a.emit) {
        (Some(k), _) => vec![k],
        (None, Some(_)) => Vec::new(),
        (None, None) => driver::declared(model),
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
    let req = BuildRequest {
        msccl: a.msccl.overrides(),
        output_name: None,
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
                    &[Diagnostic::error(e.code, span, e.message)
                        .label(e.label)
                        .help(e.help)],
                    &files,
                );
                return 1;
            }
        };
        rep.finish();
        return windows(&session, &req, &sizes, output, out);
    }
    match kinds.as_slice() {
        [] => {}
        [k] => {
            let code = build(&session, *k, &req, output, out, &rep);
            rep.finish();
            return code;
        }
        several => {
            let Some(dir) = output else {
                rep.finish();
                out.diags(&[driver::several(several, model)], session.files());
                return 1;
            };
            let stem = a
                .file
                .file_stem()
                .map_or("out".into(), |s| s.to_string_lossy().into_owned());
            let code = build_all(several, &session, &req, dir, &stem, out, &rep);
            rep.finish();
            return code;
        }
    }
    let text = match a.emit.unwrap_or(Emit::Model) {
        Emit::Model => {
            rep.phase(Phase::Emit, None);
            session.model_text()
        }
        Emit::Ir => match session.ir_text(&rep) {
            Ok((text, warnings)) => {
                out.diags(&warnings, session.files());
                rep.phase(Phase::Emit, None);
                text
            }
            Err(f) => {
                rep.finish();
                out.failure(&f);
                return f.exit_code();
            }
        },
        Emit::Report => {
            rep.phase(Phase::Emit, None);
            match session.report(&req.msccl) {
                Ok(r) => {
                    out.diags(&r.warnings, session.files());
                    r.render()
                }
                Err(mut f) => {
                    rep.finish();
                    driver::report::name_file(&mut f.diagnostics, &a.file.display().to_string());
                    out.failure(&f);
                    return f.exit_code();
                }
            }
        }
    };
    rep.finish();
    write_output(output, text.as_bytes())
}

/// `--target NAME`: any word of `target NAME` in the language; those without a backend are
/// refused with a coded error by [`crate::target::get`], as the checker refuses their blocks.
fn parse_kind(s: &str) -> Result<TargetKind, String> {
    TargetKind::ALL
        .iter()
        .find(|k| k.0 == s)
        .map(|k| k.1)
        .ok_or_else(|| {
            let all: Vec<&str> = TargetKind::ALL.iter().map(|k| k.0).collect();
            format!("possible values: {}", all.join(", "))
        })
}

/// Builds `kind` and writes it to `output` (standard output when `None`); the exit code.
fn build(
    s: &Session,
    kind: TargetKind,
    req: &BuildRequest,
    output: Option<&Path>,
    out: &Out,
    progress: &dyn Progress,
) -> i32 {
    let directory =
        crate::target::get(kind, s.model().build_span(Some(kind))).is_ok_and(|t| t.directory());
    let done = match output {
        Some(path) => s
            .build_into(Some(kind), req, path, progress)
            .map(|warnings| (warnings, None)),
        None if directory => {
            eprintln!(
                "error: `--target {}` writes a directory; name it with `-o DIR`",
                kind.name()
            );
            return 1;
        }
        None => s
            .build_with(Some(kind), req, progress)
            .map(|b| (b.warnings, Some(b.output))),
    };
    match done {
        Ok((warnings, artifact)) => {
            out.diags(&warnings, s.files());
            match artifact {
                Some(Output::File(bytes)) => write_output(None, &bytes),
                Some(Output::Dir(_)) => 2,
                None => 0,
            }
        }
        Err(f) => {
            out.failure(&f);
            f.exit_code()
        }
    }
}

/// Builds each of `kinds` into the directory `dir`, named by [`driver::file_name`] after `stem`.
fn build_all(
    kinds: &[TargetKind],
    s: &Session,
    req: &BuildRequest,
    dir: &Path,
    stem: &str,
    out: &Out,
    progress: &dyn Progress,
) -> i32 {
    if !create_dir(dir) {
        return 2;
    }
    let mut worst = 0;
    for &k in kinds {
        let path: PathBuf = dir.join(driver::file_name(k, stem));
        let code = build(s, k, req, Some(&path), out, progress);
        if code == 0 {
            eprintln!("wrote {} ({})", path.display(), k.name());
        }
        worst = worst.max(code);
    }
    worst
}

/// `--size-windows`: the windows' XMLs into the directory `dir`, the summary to standard
/// output.
fn windows(s: &Session, req: &BuildRequest, sizes: &[u64], dir: Option<&Path>, out: &Out) -> i32 {
    let Some(dir) = dir else {
        out.diags(
            &[Diagnostic::error(
                Code::BadValue,
                s.model().build_span(None),
                "`--size-windows` writes one XML per window and needs a directory",
            )
            .label("the schedule to build")
            .help("add `-o DIR`")],
            s.files(),
        );
        return 1;
    };
    let w = match s.size_windows(sizes, &req.msccl) {
        Ok(w) => w,
        Err(f) => {
            out.failure(&f);
            return f.exit_code();
        }
    };
    out.diags(&w.warnings, s.files());
    if !create_dir(dir) {
        return 2;
    }
    for (name, text) in &w.files {
        if let Err(e) = write_atomic(&dir.join(name), text.as_bytes()) {
            eprintln!(
                "error[{}]: cannot write `{}`: {e}",
                Code::Io,
                dir.join(name).display()
            );
            return 2;
        }
    }
    write_output(None, w.summary.as_bytes())
}

/// Creates the output directory `dir` (and its parents); false, having said why, when it
/// cannot.
fn create_dir(dir: &Path) -> bool {
    match std::fs::create_dir_all(dir) {
        Ok(()) => true,
        Err(e) => {
            super::output::say(&format!(
                "error[{}]: cannot create `{}`: {e}\n",
                Code::Io,
                dir.display()
            ));
            false
        }
    }
}
