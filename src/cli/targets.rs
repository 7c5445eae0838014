//! `collc build --target NAME` through the target seam ([`crate::target`]): look the target up,
//! run its capability check, emit, validate, and write the artifact (to standard output, a file
//! written atomically, or a directory, [`super::dir`]); which targets a build makes when
//! `--target` is not given ([`chosen`]).

use super::{Out, write_atomic_with, write_output};
use crate::diag::{Code, Diagnostic, SourceMap};
use crate::driver::dir;
use crate::progress::Progress;
use crate::sema::model::{Model, TargetKind};
use crate::target::{self, Artifact, StreamError};
use std::path::{Path, PathBuf};

/// `--target NAME`: any word of `target NAME` in the language; those without a backend are
/// refused with a coded error by [`target::get`], as the checker refuses their blocks.
pub(super) fn parse_kind(s: &str) -> Result<TargetKind, String> {
    TargetKind::ALL
        .iter()
        .find(|k| k.0 == s)
        .map(|k| k.1)
        .ok_or_else(|| {
            let all: Vec<&str> = TargetKind::ALL.iter().map(|k| k.0).collect();
            format!("possible values: {}", all.join(", "))
        })
}

/// What `collc build` makes without `--target` or `--emit`: the targets the file declares
/// (`sim` is run by `collc sim`, so it does not count). Empty when it declares none.
pub(super) fn chosen(m: &Model) -> Vec<TargetKind> {
    let mut kinds: Vec<TargetKind> = m
        .targets
        .iter()
        .map(|t| t.kind)
        .filter(|k| *k != TargetKind::Sim)
        .collect();
    kinds.sort();
    kinds.dedup();
    kinds
}

/// The name an artifact of `kind` gets inside `-o DIR` when a file builds several targets.
pub(super) fn file_name(kind: TargetKind, stem: &str) -> String {
    match kind {
        TargetKind::Msccl => format!("{stem}.xml"),
        TargetKind::Goal => format!("{stem}.goal"),
        other => format!("{stem}-{}", other.name()),
    }
}

/// Builds `kind` for `m` with options `o` and writes it to `output`; the exit code.
pub(super) fn build(
    kind: TargetKind,
    m: &Model,
    mut o: target::Options,
    output: Option<&Path>,
    out: &Out,
    files: &SourceMap,
    progress: &dyn Progress,
) -> i32 {
    let t = match target::get(kind, o.span) {
        Ok(t) => t,
        Err(d) => {
            out.diags(&[*d], files);
            return 1;
        }
    };
    if t.directory() && output.is_none() {
        eprintln!(
            "error: `--target {}` writes a directory; name it with `-o DIR`",
            kind.name()
        );
        return 1;
    }
    let refused = t.capable(m, &o);
    if !refused.is_empty() {
        out.diags(&refused, files);
        return 1;
    }
    o.output_name = output
        .and_then(|p| std::path::absolute(p).ok())
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    let emitted = match t.emit(m, &o, progress) {
        Ok(e) => e,
        Err(d) => {
            out.diags(&d, files);
            return 1;
        }
    };
    out.diags(&emitted.warnings, files);
    progress.phase(crate::progress::Phase::Emit, None);
    let check = |a: &Artifact| {
        let problems = t.validate(m, &o, a);
        if !problems.is_empty() {
            out.diags(&problems, files);
        }
        problems.is_empty()
    };
    let a = emitted.artifact;
    if !matches!(a, Artifact::Stream(_)) && !check(&a) {
        return 2;
    }
    match a {
        Artifact::File(bytes) => write_output(output, &bytes),
        Artifact::Dir { files: fs, mark } => {
            match output.map(|d| (d, dir::write_dir(d, &fs, mark))) {
                Some((_, Ok(()))) => 0,
                Some((d, Err(e))) => {
                    super::output::say(&format!(
                        "error[{}]: cannot write `{}`: {e}\n",
                        Code::Io,
                        d.display()
                    ));
                    2
                }
                None => 2,
            }
        }
        Artifact::Stream(write) => match output {
            None => {
                let mut text = Vec::new();
                if let Err(e) = write(&mut text) {
                    return stream_failed(e, None, out, files);
                }
                let a = Artifact::File(text);
                match a {
                    Artifact::File(ref text) if check(&a) => write_output(None, text),
                    _ => 2,
                }
            }
            Some(path) => match write_atomic_with(path, |f| write(f)) {
                Ok(()) => 0,
                Err(e) => stream_failed(e, Some(path), out, files),
            },
        },
    }
}

impl From<std::io::Error> for StreamError {
    fn from(e: std::io::Error) -> StreamError {
        StreamError::Io(e)
    }
}

fn stream_failed(e: StreamError, path: Option<&Path>, out: &Out, files: &SourceMap) -> i32 {
    match e {
        StreamError::Refused(d) => {
            out.diags(&d, files);
            1
        }
        StreamError::Io(e) => {
            let shown = path.map_or("standard output".into(), |p| format!("`{}`", p.display()));
            super::output::say(&format!("error[{}]: cannot write {shown}: {e}\n", Code::Io));
            2
        }
    }
}

/// Builds each of `kinds` into the directory `dir`, named by [`file_name`] after `stem`.
#[allow(clippy::too_many_arguments)]
pub(super) fn build_all(
    kinds: &[TargetKind],
    m: &Model,
    options: impl Fn(TargetKind) -> target::Options,
    dir: &Path,
    stem: &str,
    out: &Out,
    files: &SourceMap,
    progress: &dyn Progress,
) -> i32 {
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!(
            "error[{}]: cannot create `{}`: {e}",
            Code::Io,
            dir.display()
        );
        return 2;
    }
    let mut worst = 0;
    for &k in kinds {
        let path: PathBuf = dir.join(file_name(k, stem));
        let code = build(k, m, options(k), Some(&path), out, files, progress);
        if code == 0 {
            eprintln!("wrote {} ({})", path.display(), k.name());
        }
        worst = worst.max(code);
    }
    worst
}

/// Several declared targets and no `-o DIR` to put them in.
pub(super) fn several(kinds: &[TargetKind], m: &Model) -> Diagnostic {
    let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
    Diagnostic::error(
        Code::TargetUnsupported,
        m.build_span(Some(kinds[0])),
        format!(
            "the file declares {} targets ({}); `collc build` needs one",
            kinds.len(),
            names.join(", ")
        ),
    )
    .label("one of the targets")
    .help(format!(
        "pick one with `--target {}`, or build all of them into a directory with `-o DIR`",
        names[0]
    ))
}
