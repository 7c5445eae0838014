//! The build job: a target's artifacts for a session, through the target seam
//! ([`crate::target`]): look the target up, run its capability check, emit, validate, and hand
//! back the bytes (a file, or a directory's files) or write them atomically to a path. Which
//! targets a file builds when none is named ([`declared`]), and the MSCCL options a front end
//! overrides ([`MscclOverrides`]: the command line's `--proto`, `--channels`, ..., Python's
//! keyword arguments).

use super::{Failure, Session, dir, write_atomic, write_atomic_with};
use crate::diag::{Code, Diagnostic, Span};
use crate::progress::{Progress, Quiet};
use crate::sema::model::{Model, ModelParam, TargetKind};
use crate::sema::units::{Dim, Quantity};
use crate::target::{self, Artifact, StreamError};
use num_rational::BigRational;
use std::path::Path;

/// MSCCL options given by a front end over the file's `target msccl` block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MscclOverrides {
    /// `simple`, `ll` or `ll128`.
    pub proto: Option<String>,
    pub channels: Option<u32>,
    pub instances: Option<u32>,
    pub inplace: Option<bool>,
    pub min_bytes: Option<u64>,
    /// 0: no limit.
    pub max_bytes: Option<u64>,
    /// Steps per thread block of the runtime (`MSCCL_MAX_NUM_STEPS`).
    pub max_steps: Option<u32>,
}

impl MscclOverrides {
    /// Puts these over the options of a `target msccl` block.
    pub fn apply(&self, o: &mut target::Options) {
        let count =
            |v: u64| ModelParam::Quantity(Quantity::int(i64::try_from(v).unwrap_or(i64::MAX)));
        let bytes = |v: u64| {
            ModelParam::Quantity(Quantity {
                value: BigRational::from_integer(v.into()),
                dim: Dim::SIZE,
            })
        };
        let word = |w: &str| ModelParam::Word(w.to_string());
        if let Some(p) = &self.proto {
            o.set("proto", word(p));
        }
        if let Some(c) = self.channels {
            o.set("channels", count(c.into()));
        }
        if let Some(i) = self.instances {
            o.set("instances", count(i.into()));
        }
        if let Some(inplace) = self.inplace {
            o.set("inplace", word(if inplace { "true" } else { "false" }));
        }
        if let Some(b) = self.min_bytes {
            o.set("min_bytes", bytes(b));
        }
        if let Some(b) = self.max_bytes {
            o.set("max_bytes", bytes(b));
        }
        if let Some(n) = self.max_steps {
            o.set("max_steps", count(n.into()));
        }
    }

    /// The MSCCL backend's options for `m`: its `target msccl` block, overridden by these.
    pub fn options(&self, m: &Model) -> crate::backend::msccl::Options {
        let mut o = target::Options::from_model(m, TargetKind::Msccl);
        self.apply(&mut o);
        target::msccl::options(&o)
    }
}

/// What a build is asked for besides the target.
#[derive(Clone, Debug, Default)]
pub struct BuildRequest {
    pub msccl: MscclOverrides,
    /// The name of the file or directory the artifact goes to (the MPI project is named after
    /// it); `None` when it goes to memory or standard output.
    pub output_name: Option<String>,
}

/// A built artifact in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    File(Vec<u8>),
    /// Paths relative to the directory (with `/`), in a fixed order, and their bytes.
    Dir(Vec<(String, Vec<u8>)>),
}

/// A target's artifact and the warnings made on the way.
#[derive(Debug)]
pub struct Built {
    pub target: TargetKind,
    pub output: Output,
    pub warnings: Vec<Diagnostic>,
}

/// The targets a file declares that `collc build` makes (`sim` is run by `collc sim`, so it
/// does not count), in a fixed order; empty when it declares none.
pub fn declared(m: &Model) -> Vec<TargetKind> {
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

/// The name an artifact of `kind` gets inside a directory when a file builds several targets.
pub fn file_name(kind: TargetKind, stem: &str) -> String {
    match kind {
        TargetKind::Msccl => format!("{stem}.xml"),
        TargetKind::Goal => format!("{stem}.goal"),
        other => format!("{stem}-{}", other.name()),
    }
}

/// Several declared targets where one is needed.
pub fn several(kinds: &[TargetKind], m: &Model) -> Diagnostic {
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

/// Where a build's artifact goes.
enum Sink<'a> {
    Memory,
    Path(&'a Path),
}

impl Session {
    /// The target `target` names, else the one the file declares; a diagnostic when it
    /// declares none or several.
    pub fn target(&self, target: Option<TargetKind>) -> Result<TargetKind, Failure> {
        if let Some(k) = target {
            return Ok(k);
        }
        match declared(&self.model).as_slice() {
            [k] => Ok(*k),
            [] => Err(self.fail(vec![
                Diagnostic::error(
                    Code::TargetUnsupported,
                    self.model.build_span(None),
                    "the file declares no target to build",
                )
                .label("the schedule to build")
                .help("name one, e.g. `msccl`, `mpi`, `p4` or `goal`, or declare `target msccl;` in the file"),
            ])),
            several_kinds => Err(self.fail(vec![several(several_kinds, &self.model)])),
        }
    }

    /// The target's options for this file: its `target` block, the MSCCL overrides.
    fn target_options(&self, kind: TargetKind, req: &BuildRequest) -> target::Options {
        let mut o = target::Options::from_model(&self.model, kind);
        if kind == TargetKind::Msccl {
            req.msccl.apply(&mut o);
        }
        o.output_name = req.output_name.clone();
        o
    }

    /// Builds `target` (else the file's declared target) into memory.
    pub fn build(&self, target: Option<TargetKind>, req: &BuildRequest) -> Result<Built, Failure> {
        self.build_with(target, req, &Quiet)
    }

    /// [`Session::build`] reporting phases to `progress`.
    pub fn build_with(
        &self,
        target: Option<TargetKind>,
        req: &BuildRequest,
        progress: &dyn Progress,
    ) -> Result<Built, Failure> {
        let kind = self.target(target)?;
        let (output, warnings) = self.emit(kind, req, Sink::Memory, progress)?;
        Ok(Built {
            target: kind,
            output: output.unwrap_or(Output::File(Vec::new())),
            warnings,
        })
    }

    /// Builds `target` (else the file's declared target) and writes it to `path` atomically: a
    /// file, or a directory for a target that makes one. The warnings made on the way.
    pub fn build_into(
        &self,
        target: Option<TargetKind>,
        req: &BuildRequest,
        path: &Path,
        progress: &dyn Progress,
    ) -> Result<Vec<Diagnostic>, Failure> {
        let kind = self.target(target)?;
        let mut req = req.clone();
        if req.output_name.is_none() {
            req.output_name = std::path::absolute(path)
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
        }
        Ok(self.emit(kind, &req, Sink::Path(path), progress)?.1)
    }

    /// Emits, validates and delivers `kind` to `sink`: the artifact when it went to memory,
    /// and the warnings.
    fn emit(
        &self,
        kind: TargetKind,
        req: &BuildRequest,
        sink: Sink,
        progress: &dyn Progress,
    ) -> Result<(Option<Output>, Vec<Diagnostic>), Failure> {
        let m = &self.model;
        let o = self.target_options(kind, req);
        let t = target::get(kind, o.span).map_err(|d| self.fail(vec![*d]))?;
        let refused = t.capable(m, &o);
        if !refused.is_empty() {
            return Err(self.fail(refused));
        }
        let emitted = t.emit(m, &o, progress).map_err(|d| self.fail(d))?;
        let warnings = emitted.warnings;
        progress.phase(crate::progress::Phase::Emit, None);
        let invalid = |a: &Artifact| {
            let problems = t.validate(m, &o, a);
            (!problems.is_empty()).then(|| self.internal(problems))
        };
        let artifact = match (emitted.artifact, &sink) {
            (Artifact::Stream(write), Sink::Path(path)) => {
                return match write_atomic_with(path, |f| write(f)) {
                    Ok(()) => Ok((None, warnings)),
                    Err(e) => Err(self.stream_failed(e, path)),
                };
            }
            (Artifact::Stream(write), Sink::Memory) => {
                let mut text = Vec::new();
                write(&mut text).map_err(|e| self.stream_failed(e, Path::new("")))?;
                Artifact::File(text)
            }
            (a, _) => a,
        };
        if let Some(f) = invalid(&artifact) {
            return Err(f);
        }
        let output = match artifact {
            Artifact::File(bytes) => Output::File(bytes),
            Artifact::Dir { files, mark } => {
                if let Sink::Path(d) = sink {
                    dir::write_dir(d, &files, mark).map_err(|e| self.cannot_write(d, e))?;
                    return Ok((None, warnings));
                }
                Output::Dir(files)
            }
            Artifact::Stream(_) => unreachable!("streams were written above"),
        };
        if let (Sink::Path(p), Output::File(bytes)) = (&sink, &output) {
            write_atomic(p, bytes).map_err(|e| self.cannot_write(p, e))?;
            return Ok((None, warnings));
        }
        Ok((Some(output), warnings))
    }

    /// E0029 for `path` (empty: memory).
    fn cannot_write(&self, path: &Path, e: std::io::Error) -> Failure {
        let mut f = self.fail(Vec::new());
        let shown = path.display().to_string();
        let id = f.files.add("<output>", shown.clone());
        f.diagnostics.push(
            Diagnostic::error(
                Code::Io,
                Span::new(id, 0, shown.len()),
                format!("cannot write `{shown}`: {e}"),
            )
            .label("this output")
            .help("check that the directory exists, is writable and has space"),
        );
        f
    }

    fn stream_failed(&self, e: StreamError, path: &Path) -> Failure {
        match e {
            StreamError::Refused(d) => self.fail(d),
            StreamError::Io(e) => self.cannot_write(path, e),
        }
    }
}

impl From<std::io::Error> for StreamError {
    fn from(e: std::io::Error) -> StreamError {
        StreamError::Io(e)
    }
}
