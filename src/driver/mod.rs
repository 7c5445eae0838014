//! The library driver: one entry point per job of collc, typed inputs and typed results, and no
//! printing. The command line (`crate::cli`), the language server (`crate::lsp`) and the Python
//! package (`python/`) are layers over it: they parse their arguments into the options here,
//! call the job, and render what comes back (a terminal, LSP messages, Python objects).
//!
//! A job starts from an [`Input`] (a path, or text with a name) and [`LoadOptions`] (`param`
//! overrides, limits, a cancel flag):
//! - [`check`] checks a file of any kind collc reads (`.coll`, MSCCL XML, `.ir`, `.goal`) and
//!   returns its diagnostics as values;
//! - [`load`] checks a `.coll` file and resolves `schedule auto` into a [`Session`], or fails
//!   with a [`Failure`] that carries the diagnostics and the sources they point into;
//! - a session then gives the model's text, the lowered IR, the report ([`report`]), a target's
//!   artifacts ([`build`]), a simulation ([`sim`]) and a comparison over sizes ([`compare`]);
//!   a calibration fits a flow model to an nccl-tests log measured on the file's machine
//!   ([`calibrate`]).
//!
//! Files an output is written to are written atomically ([`write`]); temporaries a signal
//! interrupts are removed ([`temps`]).

mod build;
pub mod calibrate;
mod checked;
pub mod compare;
pub(crate) mod dir;
pub(crate) mod figures;
mod flag;
pub(crate) mod inputs;
mod records;
pub mod report;
pub mod sim;
pub(crate) mod source;
pub(crate) mod temps;
mod windows;
mod write;

pub use build::{BuildRequest, Built, MscclOverrides, Output, declared, file_name, several};
pub use records::{Record, records, render};
pub use report::{Report, Section};
pub use sim::{Engine, LogGPOverrides, SimOutcome, SimRequest, sim_goal};
pub use windows::Windows;
pub(crate) use write::{write_atomic, write_atomic_with};

use crate::choose::AutoPick;
use crate::diag::{Code, Diagnostic, FileId, Severity, SourceMap};
use crate::progress::Progress;
use crate::sema::{self, elab::Limits, model::Model};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// What a job reads: a file, or text under a name (the name is what diagnostics show).
#[derive(Clone, Debug)]
pub enum Input {
    Path(PathBuf),
    Text { name: String, text: String },
}

impl Input {
    pub fn path(p: impl Into<PathBuf>) -> Input {
        Input::Path(p.into())
    }

    pub fn text(name: impl Into<String>, text: impl Into<String>) -> Input {
        Input::Text {
            name: name.into(),
            text: text.into(),
        }
    }

    /// The name diagnostics show for it.
    pub fn name(&self) -> String {
        match self {
            Input::Path(p) => p.display().to_string(),
            Input::Text { name, .. } => name.clone(),
        }
    }

    /// The path it was read from, or its name as one (for telling its kind by extension).
    fn as_path(&self) -> PathBuf {
        match self {
            Input::Path(p) => p.clone(),
            Input::Text { name, .. } => PathBuf::from(name),
        }
    }
}

/// How a file is loaded: `param` overrides (`NAME`, `VALUE` in the language's syntax), limits,
/// and a flag another thread may set to stop a check that is no longer wanted.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    pub params: Vec<(String, String)>,
    pub limits: Limits,
    /// Most bytes of an input read whole.
    pub max_input_bytes: u64,
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Default for LoadOptions {
    fn default() -> LoadOptions {
        LoadOptions {
            params: Vec::new(),
            limits: Limits::default(),
            max_input_bytes: source::MAX_INPUT_BYTES,
            cancel: None,
        }
    }
}

/// E0061: a job stopped by its cancel flag, at the start of the file it was working on.
fn cancelled(files: SourceMap, id: FileId) -> Failure {
    let d = Diagnostic::error(
        Code::Cancelled,
        crate::diag::Span::new(id, 0, 0),
        "the job was cancelled before it finished",
    )
    .label("working on this file")
    .help("the caller asked it to stop (Ctrl-C from Python); run it again for the result");
    Failure::new(vec![d], files)
}

impl LoadOptions {
    /// Whether another thread has set the cancel flag.
    pub fn is_cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    }

    fn sema(&self) -> sema::Options {
        sema::Options {
            limits: self.limits,
            params: self.params.clone(),
            cancel: self.cancel.clone(),
        }
    }
}

/// A job that stopped: its diagnostics (at least one error, or an output that could not be
/// written) and the sources they point into.
pub struct Failure {
    pub diagnostics: Vec<Diagnostic>,
    pub files: SourceMap,
    /// collc failed, not the input: an artifact failed its own validation (exit code 2).
    pub internal: bool,
}

impl Failure {
    /// A failure on the input: `diagnostics` in `files`.
    pub fn new(diagnostics: Vec<Diagnostic>, files: SourceMap) -> Failure {
        Failure {
            diagnostics,
            files,
            internal: false,
        }
    }

    /// The command line's exit code for it: 2 when collc failed or could not write an output,
    /// else 1.
    pub fn exit_code(&self) -> i32 {
        if self.internal || self.is_io() { 2 } else { 1 }
    }

    /// The diagnostics as plain records (code, place as line and column, message, help).
    pub fn records(&self) -> Vec<Record> {
        records(&self.diagnostics, &self.files)
    }

    /// The diagnostics as the command line prints them, without colour.
    pub fn render(&self) -> String {
        render(&self.diagnostics, &self.files)
    }

    /// True when the job failed writing an output (E0029), not on its input: exit code 2.
    pub fn is_io(&self) -> bool {
        self.diagnostics.iter().any(|d| d.code == Code::Io)
    }
}

impl std::fmt::Debug for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for Failure {}

/// The kinds of file collc reads.
pub use inputs::Kind;

/// What [`check`] found in one file.
pub struct Checked {
    /// The kind the file was read as (by extension, else by content); `None` when it could not
    /// be read or is of no kind collc knows.
    pub kind: Option<Kind>,
    pub diagnostics: Vec<Diagnostic>,
    pub files: SourceMap,
}

impl Checked {
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }

    pub fn records(&self) -> Vec<Record> {
        records(&self.diagnostics, &self.files)
    }
}

/// Reads `input` into `files`; the diagnostic when it cannot be read, is too large, binary or
/// not UTF-8.
pub(crate) fn read(
    input: &Input,
    files: &mut SourceMap,
    limit: u64,
) -> Result<FileId, Box<Diagnostic>> {
    match input {
        Input::Text { name, text } => {
            if text.len() as u64 > limit || text.contains('\0') {
                // The same refusals as a file: read it through the same checks.
                let bytes = text.as_bytes();
                return source::check_bytes(Path::new(name), bytes, files, limit)
                    .map(|()| files.add(name.clone(), text.clone()));
            }
            Ok(files.add(name.clone(), text.clone()))
        }
        Input::Path(path) => {
            let bytes = source::read(path, files, limit)?;
            match String::from_utf8(bytes) {
                Ok(text) => Ok(files.add(path.display().to_string(), text)),
                Err(e) => Err(Box::new(source::not_utf8(
                    files,
                    path,
                    e.as_bytes(),
                    e.utf8_error(),
                ))),
            }
        }
    }
}

/// Checks one file of any kind collc reads: a `.coll` file, an MSCCL XML (its warnings errors
/// when `strict`), a `.ir` program or a `.goal` schedule.
pub fn check(input: &Input, opts: &LoadOptions, strict: bool) -> Checked {
    let mut files = SourceMap::new();
    let mut diagnostics = Vec::new();
    let mut kind = None;
    match read(input, &mut files, opts.max_input_bytes) {
        Ok(id) => {
            let text = files.get(id).text.clone();
            kind = inputs::kind(&input.as_path(), &text);
            match kind {
                Some(Kind::Goal) => diagnostics.extend(
                    crate::backend::goal::parse(id, &text)
                        .err()
                        .unwrap_or_default(),
                ),
                Some(Kind::Xml) => diagnostics.extend(crate::backend::msccl::check_with(
                    id,
                    &text,
                    opts.limits.max_slots,
                    strict,
                )),
                Some(Kind::Ir) => {
                    diagnostics.extend(crate::ir::check_text_with(id, &text, opts.limits.max_slots))
                }
                Some(Kind::Coll) => {
                    diagnostics.extend(sema::check(&mut files, id, &opts.sema()).diagnostics)
                }
                None => diagnostics.push(inputs::unknown(&files, id)),
            }
        }
        Err(d) => diagnostics.push(*d),
    }
    Checked {
        kind,
        diagnostics,
        files,
    }
}

/// A checked `.coll` file whose `schedule auto` (if any) is resolved: the jobs that need a
/// model start here.
pub struct Session {
    name: String,
    files: SourceMap,
    model: Model,
    pick: Option<AutoPick>,
    opts: LoadOptions,
}

/// Checks the `.coll` file `input` and resolves `schedule auto`; a [`Failure`] when the file
/// has any problem.
pub fn load(input: &Input, opts: &LoadOptions) -> Result<Session, Failure> {
    let mut files = SourceMap::new();
    let id = match read(input, &mut files, opts.max_input_bytes) {
        Ok(id) => id,
        Err(d) => {
            return Err(Failure::new(vec![*d], files));
        }
    };
    let checked = sema::check(&mut files, id, &opts.sema());
    if opts.is_cancelled() {
        return Err(cancelled(files, id));
    }
    let model = match checked.model {
        Some(m) if checked.diagnostics.is_empty() => m,
        _ => {
            return Err(Failure::new(checked.diagnostics, files));
        }
    };
    let (model, pick) = match crate::choose::resolve(&model) {
        Ok(x) => x,
        Err(diagnostics) => return Err(Failure::new(diagnostics, files)),
    };
    Ok(Session {
        name: input.name(),
        files,
        model,
        pick,
        opts: opts.clone(),
    })
}

impl Session {
    /// The name of the file it was loaded from.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The checked model, `schedule auto` resolved.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The sources diagnostics point into.
    pub fn files(&self) -> &SourceMap {
        &self.files
    }

    /// The options it was loaded with.
    pub fn options(&self) -> &LoadOptions {
        &self.opts
    }

    /// What `schedule auto` chose and why, when the file asked for it.
    pub fn auto_pick(&self) -> Option<&AutoPick> {
        self.pick.as_ref()
    }

    /// The failure of a job on this session: `diagnostics` with the session's sources.
    pub fn fail(&self, diagnostics: Vec<Diagnostic>) -> Failure {
        Failure::new(diagnostics, self.files.clone())
    }

    /// A failure of collc itself on this session (exit code 2).
    pub(crate) fn internal(&self, diagnostics: Vec<Diagnostic>) -> Failure {
        Failure {
            internal: true,
            ..self.fail(diagnostics)
        }
    }

    /// The elaborated model as text (`collc build --emit model`), with what `schedule auto`
    /// chose as a last comment.
    pub fn model_text(&self) -> String {
        let mut text = sema::print::model_text(&self.model);
        if let Some(p) = &self.pick {
            text.push_str(&format!("// {}\n", p.describe()));
        }
        text
    }

    /// The lowered and verified program as IR text (`collc build --emit ir`) and the warnings
    /// lowering made.
    pub fn ir_text(&self, progress: &dyn Progress) -> Result<(String, Vec<Diagnostic>), Failure> {
        match crate::lower::lower_and_verify_with(&self.model, progress) {
            Ok((program, _, warnings)) => Ok((crate::ir::text::print(&program), warnings)),
            Err(d) => Err(self.fail(d)),
        }
    }
}

#[cfg(test)]
mod tests;
