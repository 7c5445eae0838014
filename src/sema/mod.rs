//! Semantic analysis: from parsed files to a checked [`model::Model`].
//!
//! [`check`] loads the main file and its imports (the standard library is embedded, see
//! [`stdlib`]), registers generators and evaluates top-level `let`/`param` (command-line
//! overrides win), elaborates the topology, then the collective, schedule, cost models and
//! targets, and finally runs whole-model checks. Every stage keeps going after an error, so one
//! run reports every independent problem; a value that failed is skipped by what depends on it.

pub mod checks;
pub mod collective;
pub mod decls;
pub mod elab;
pub mod eval;
pub mod model;
pub mod nodes;
pub mod print;
pub mod props;
pub mod schedule;
pub mod stdlib;
pub mod suggest;
pub mod units;
pub mod value;

mod cross;
mod load;
mod run;

use load::load;
use run::run;

use crate::diag::{Code, Diagnostic, FileId, SourceMap, Span};
use crate::syntax::ast;
use elab::{Elab, Limits};
use model::Model;

/// What a check run may be told from outside the file.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub limits: Limits,
    /// `--param name=value` overrides, the value in the language's expression syntax.
    pub params: Vec<(String, String)>,
    /// Set from another thread to stop a check whose result is no longer wanted (the language
    /// server's superseded versions): elaboration polls it at every loop iteration and stops
    /// quietly; the caller must then discard the result.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// The result of checking one file: the model when there were no errors, and every diagnostic.
pub struct Checked {
    pub model: Option<Model>,
    pub diagnostics: Vec<Diagnostic>,
}

struct Loaded {
    file: FileId,
    ast: ast::File,
}

/// After a syntax error the parser skips to the end of the item, statement or property, and the
/// tree has a hole there. These codes are what a hole causes (a skipped `compute` makes every
/// link to its nodes "undeclared", a skipped `size: ...;` is "missing"), so they are not reported
/// while there are syntax errors; every other problem still is.
pub const HIDDEN_AFTER_SYNTAX_ERRORS: &[Code] = &[
    Code::UnknownName,
    Code::ImportNotFound,
    Code::UndeclaredNode,
    Code::NotComputeNode,
    Code::Unreachable,
    Code::AsymmetricBandwidth,
    Code::MissingDeclaration,
    Code::BadProperty,
    Code::BadArguments,
    Code::BadRoot,
];

/// The model of `src` (a file named `t.coll`) under the default options, for unit tests;
/// panics with the diagnostics when it does not check.
#[cfg(test)]
pub(crate) fn checked(src: &str) -> Model {
    let mut files = SourceMap::new();
    let id = files.add("t.coll", src.to_string());
    let c = check(&mut files, id, &Options::default());
    assert!(c.diagnostics.is_empty(), "{:#?}", c.diagnostics);
    c.model.expect("a model")
}

/// Checks the file `main` (already in `sources`), loading imports into `sources`.
pub fn check(sources: &mut SourceMap, main: FileId, opts: &Options) -> Checked {
    let mut diags = Vec::new();
    let mut loaded: Vec<Loaded> = Vec::new();
    let mut loading: Vec<FileId> = Vec::new();
    load(sources, main, &mut loaded, &mut loading, &mut diags);
    let syntax_errors = diags
        .iter()
        .any(|d| matches!(d.code, Code::Syntax | Code::InvalidToken));
    let mut elab = Elab::new(opts.limits);
    elab.cancel = opts.cancel.clone();
    elab.diags.extend(diags);
    let overrides = command_line(sources, &opts.params);
    let model = run(&mut elab, sources, &loaded, main, &overrides);
    let mut diagnostics = std::mem::take(&mut elab.diags).sorted();
    if syntax_errors {
        diagnostics.retain(|d| !HIDDEN_AFTER_SYNTAX_ERRORS.contains(&d.code));
    }
    let model = if diagnostics
        .iter()
        .any(|d| d.severity == crate::diag::Severity::Error)
    {
        None
    } else {
        model
    };
    Checked { model, diagnostics }
}

/// A `--param NAME=VALUE` override, kept as a "<command line>" file of its own so that its
/// diagnostics (an unknown name, an unknown value, a type mismatch) point at the command line.
pub(crate) struct CmdParam {
    pub name: String,
    /// The whole line, `--param NAME=VALUE`.
    pub line: String,
    pub file: FileId,
    pub name_span: Span,
    pub value_span: Span,
}

impl CmdParam {
    /// The value's text with the line's prefix blanked, so parsed spans index the whole line.
    pub fn padded_value(&self) -> String {
        let start = self.value_span.start as usize;
        format!("{}{}", " ".repeat(start), &self.line[start..])
    }
}

fn command_line(sources: &mut SourceMap, params: &[(String, String)]) -> Vec<CmdParam> {
    params
        .iter()
        .map(|(name, value)| {
            let line = format!("--param {name}={value}");
            let file = sources.add("<command line>", line.clone());
            let value_start = line.len() - value.len();
            CmdParam {
                name: name.clone(),
                name_span: Span::new(file, 8, 8 + name.len()),
                value_span: Span::new(file, value_start, line.len()),
                line,
                file,
            }
        })
        .collect()
}

/// The head of a declaration, from its keyword to its name (`schedule ring`, `target msccl`):
/// where diagnostics about a whole declaration point, so that a long block is not underlined.
pub(crate) fn head(item: Span, name: Span) -> Span {
    if item.file == name.file && name.end >= item.start {
        Span::new(item.file, item.start as usize, name.end as usize)
    } else {
        item
    }
}
