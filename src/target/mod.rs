//! Targets: the one seam through which `collc build` turns a checked model into what a real
//! system runs. A target ([`Target`]) has
//!
//! - a **name** (its [`TargetKind`], the word in `target NAME { ... }` and `--target NAME`);
//! - **options** ([`Options`]): the file's `target` block, overridden by command-line flags;
//!   each target reads the ones it knows into its backend's typed options;
//! - a **capability check** ([`Target::capable`]) that runs on the model before anything is
//!   lowered, so a schedule the target cannot express, a collective it has no operation for or a
//!   limit that cannot be met is refused at once, however large the system;
//! - an **emitter** ([`Target::emit`]): lower, prove and turn the program into an
//!   [`Artifact`] (one file, one file streamed as it is made, or a directory of files);
//! - a **validator** ([`Target::validate`]) that reads the artifact back as its consumer would
//!   and checks it against the consumer's rules before anything is written.
//!
//! The command line dispatches through [`get`]; adding a target is one module here and one line
//! in [`REGISTRY`]. `sim` is run by `collc sim` (it reports, it writes nothing a system loads):
//! it is refused by [`get`]'s callers with a coded error
//! ([`TargetKind::cannot_express`] holds which families each target can express, for the
//! checker and for here).

mod goal;
mod mpi;
pub mod msccl;
pub(crate) mod p4;

use crate::diag::{Code, Diagnostic, Span};
use crate::progress::Progress;
use crate::sema::model::{Model, ModelParam, TargetKind};
use std::collections::BTreeMap;

/// A target's options: the file's `target` block with the command line's overrides on top.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub values: BTreeMap<String, ModelParam>,
    /// The `target` block, or the schedule when the file has none: where problems point.
    pub span: Span,
    /// The name of the file or directory the artifact goes to, for targets that name what
    /// they make after it (the MPI project's package).
    pub output_name: Option<String>,
}

impl Options {
    /// `m`'s `target kind` block (empty options if it declares none).
    pub fn from_model(m: &Model, kind: TargetKind) -> Options {
        let block = m.targets.iter().find(|t| t.kind == kind);
        Options {
            values: block.map(|t| t.options.clone()).unwrap_or_default(),
            span: m.build_span(Some(kind)),
            output_name: None,
        }
    }

    /// Overrides option `name` (a command-line flag).
    pub fn set(&mut self, name: &str, value: ModelParam) {
        self.values.insert(name.to_string(), value);
    }

    /// Option `name` as a whole number, if it is one.
    pub fn count(&self, name: &str) -> Option<u64> {
        match self.values.get(name) {
            Some(ModelParam::Quantity(q)) => q.as_i64().and_then(|v| u64::try_from(v).ok()),
            _ => None,
        }
    }

    /// Option `name` as a word, if it is one.
    pub fn word(&self, name: &str) -> Option<&str> {
        match self.values.get(name) {
            Some(ModelParam::Word(w)) => Some(w),
            _ => None,
        }
    }
}

/// What an emitter made.
pub enum Artifact<'a> {
    /// One file's bytes.
    File(Vec<u8>),
    /// One file too large to hold: written as it is made, proved while it is written (the
    /// writer fails, and the caller discards what was written, unless the proof holds).
    Stream(Box<Streamer<'a>>),
    /// A directory: paths relative to it (with `/`) and their bytes, in a fixed order. An
    /// existing directory is replaced only if its file `mark.0` starts with `mark.1`.
    Dir {
        files: Vec<(String, Vec<u8>)>,
        mark: (&'static str, &'static str),
    },
}

/// Writes a streamed artifact: `Ok` once all of it is written and proved.
pub type Streamer<'a> =
    dyn FnOnce(&mut (dyn std::io::Write + Send)) -> Result<(), StreamError> + 'a;

/// Why a streamed artifact failed: the writer's error, or problems with the schedule.
pub enum StreamError {
    Io(std::io::Error),
    Refused(Vec<Diagnostic>),
}

/// An artifact and the warnings made on the way (E0045 and friends).
pub struct Emitted<'a> {
    pub artifact: Artifact<'a>,
    pub warnings: Vec<Diagnostic>,
}

/// One target: see the module doc.
pub trait Target: Sync {
    fn kind(&self) -> TargetKind;
    /// One line for `--help` and messages.
    fn about(&self) -> &'static str;
    /// Whether the artifact is a directory (`-o DIR` is then required).
    fn directory(&self) -> bool {
        false
    }
    /// Problems that need no lowering. Empty when the target can try to build `m`.
    fn capable(&self, m: &Model, o: &Options) -> Vec<Diagnostic>;
    /// Lowers, proves and emits `m` (which passed [`Target::capable`]).
    fn emit<'a>(
        &self,
        m: &'a Model,
        o: &Options,
        progress: &dyn Progress,
    ) -> Result<Emitted<'a>, Vec<Diagnostic>>;
    /// Reads `a` back as the consumer would and checks it (a streamed artifact is checked
    /// while it is written, by its proof).
    fn validate(&self, m: &Model, o: &Options, a: &Artifact) -> Vec<Diagnostic>;
}

/// Every target collc builds, in `--help` order.
pub const REGISTRY: &[&dyn Target] = &[&msccl::Msccl, &mpi::Mpi, &p4::P4, &goal::Goal];

/// The target named `kind`, or why there is none.
pub fn get(kind: TargetKind, at: Span) -> Result<&'static dyn Target, Box<Diagnostic>> {
    if let Some(t) = REGISTRY.iter().find(|t| t.kind() == kind) {
        return Ok(*t);
    }
    let built: Vec<&str> = REGISTRY.iter().map(|t| t.kind().name()).collect();
    let (label, help) = match kind {
        TargetKind::Sim => (
            "`sim` is simulated, not built".to_string(),
            "run `collc sim FILE`; the `target sim` block chooses its model".to_string(),
        ),
        _ => (
            format!("collc has no `{}` backend yet", kind.name()),
            format!("targets collc builds today: {}", built.join(", ")),
        ),
    };
    Err(Box::new(
        Diagnostic::error(
            Code::TargetUnsupported,
            at,
            format!("`collc build` cannot build the `{}` target", kind.name()),
        )
        .label(label)
        .help(help),
    ))
}

/// The capability check every target shares: the family must be one it can express.
fn family_check(m: &Model, kind: TargetKind, o: &Options) -> Vec<Diagnostic> {
    let Some(s) = &m.schedule else {
        return vec![
            Diagnostic::error(
                Code::LowerUnsupported,
                o.span,
                "the file declares no collective to build",
            )
            .label("nothing to lower")
            .help("declare a `collective` (and a `schedule`, or let it default to `auto`)"),
        ];
    };
    match kind.cannot_express(&s.family) {
        Some(why) => vec![
            Diagnostic::error(
                Code::TargetUnsupported,
                o.span,
                format!(
                    "target `{}` cannot express a `{}` schedule",
                    kind.name(),
                    s.family.name()
                ),
            )
            .label(why)
            .help(s.family.target_help()),
        ],
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
