//! `textDocument/publishDiagnostics`: collc's [`Diagnostic`] as the editor's diagnostic.
//!
//! The same value `collc check` renders for the terminal is converted here, never recomputed:
//! the range is the primary span (UTF-16 columns), the code is the `E0xxx` code, the message is
//! the message followed by the help line and notes (`help: ...`, `note: ...`), and each
//! secondary label becomes related information (or, for clients that do not support related
//! information, a line of the message with its position).
//!
//! A diagnostic whose primary span lies in another file (a standard library generator called
//! with bad arguments, an error in an imported file) is shown at its first label in the
//! document (the call site), else on the `import` that brought the file in, else at the start;
//! its real location is the first related information.
//!
//! Diagnostics are kept as [`DocDiag`]s, with byte offsets into the document, so that they can
//! be moved through later edits: see [`DocDiag::shift`] and the carry-over rule in
//! [`super::super::documents`].

use super::{ClientCaps, location};
use crate::diag::{Code, Diagnostic, Severity, Span};
use crate::lsp::analysis::Analysis;
use crate::lsp::text::LineIndex;
use crate::lsp::uri::StdlibFiles;
use crate::syntax::ast;
use lsp_types::{DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Uri};
use std::path::{Component, Path, PathBuf};

/// Where a piece of a diagnostic points.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    /// A byte range of the document itself.
    Doc(usize, usize),
    /// Somewhere else.
    Other(Location),
}

/// A diagnostic of one document, positioned by byte offsets into the document.
#[derive(Debug, Clone, PartialEq)]
pub struct DocDiag {
    pub start: usize,
    pub end: usize,
    /// `None` only for collc's own internal error.
    pub code: Option<Code>,
    pub severity: Severity,
    pub message: String,
    pub related: Vec<(Place, String)>,
}

impl DocDiag {
    /// The diagnostic after replacing bytes `start..end` of the document by `new_len` bytes:
    /// moved when it lies after the edit, unchanged before it, `None` when the edit touches it
    /// (what it said may no longer hold). Related places in the document move the same way and
    /// are dropped when touched.
    pub fn shift(&self, start: usize, end: usize, new_len: usize) -> Option<DocDiag> {
        let moved = |a: usize, b: usize| -> Option<(usize, usize)> {
            if b < start {
                Some((a, b))
            } else if a > end {
                Some((a - end + start + new_len, b - end + start + new_len))
            } else {
                None
            }
        };
        let (s, e) = moved(self.start, self.end)?;
        let related = self
            .related
            .iter()
            .filter_map(|(p, m)| match p {
                Place::Doc(a, b) => moved(*a, *b).map(|(a, b)| (Place::Doc(a, b), m.clone())),
                Place::Other(_) => Some((p.clone(), m.clone())),
            })
            .collect();
        Some(DocDiag {
            start: s,
            end: e,
            related,
            ..self.clone()
        })
    }

    /// The LSP diagnostic, against the document's current text.
    pub fn to_lsp(
        &self,
        uri: &Uri,
        text: &str,
        lines: &LineIndex,
        caps: &ClientCaps,
    ) -> lsp_types::Diagnostic {
        let mut message = self.message.clone();
        let mut related = Vec::new();
        for (place, msg) in &self.related {
            let loc = match place {
                Place::Doc(a, b) => Location::new(uri.clone(), lines.range(text, *a, *b)),
                Place::Other(l) => l.clone(),
            };
            if caps.related_information {
                related.push(DiagnosticRelatedInformation {
                    location: loc,
                    message: msg.clone(),
                });
            } else {
                let p = loc.range.start;
                let file = if loc.uri == *uri {
                    String::new()
                } else {
                    format!("{} ", short_name(loc.uri.as_str()))
                };
                message.push_str(&format!(
                    "\n{msg} ({file}{}:{})",
                    p.line + 1,
                    p.character + 1
                ));
            }
        }
        lsp_types::Diagnostic {
            range: lines.range(text, self.start, self.end),
            severity: Some(match self.severity {
                Severity::Error => DiagnosticSeverity::ERROR,
                Severity::Warning => DiagnosticSeverity::WARNING,
            }),
            code: self
                .code
                .map(|c| NumberOrString::String(c.as_str().to_string())),
            code_description: None,
            source: Some("collc".to_string()),
            message,
            related_information: (!related.is_empty()).then_some(related),
            tags: None,
            data: None,
        }
    }
}

/// The last path segment of a URI, for messages.
fn short_name(uri: &str) -> &str {
    uri.rsplit('/').next().unwrap_or(uri)
}

/// Converts the analysis's diagnostics for the document `uri`.
pub fn convert(an: &Analysis, uri: &Uri, stdlib: &mut StdlibFiles) -> Vec<DocDiag> {
    let mut out = Vec::new();
    for d in &an.diagnostics {
        out.push(convert_one(an, uri, stdlib, d));
    }
    out
}

fn convert_one(an: &Analysis, uri: &Uri, stdlib: &mut StdlibFiles, d: &Diagnostic) -> DocDiag {
    let mut message = d.message.clone();
    if let Some(h) = &d.help {
        message.push_str(&format!("\nhelp: {h}"));
    }
    for n in &d.notes {
        message.push_str(&format!("\nnote: {n}"));
    }
    let mut related = Vec::new();
    let here = |s: Span| s.file == an.main;
    let (start, end) = if here(d.primary.span) {
        (d.primary.span.start as usize, d.primary.span.end as usize)
    } else {
        // Shown in the document at its first label there, or at the import it came through.
        let label = if d.primary.message.is_empty() {
            d.message.clone()
        } else {
            d.primary.message.clone()
        };
        if let Some(loc) = location(an, uri, stdlib, d.primary.span) {
            related.push((Place::Other(loc), label));
        }
        let at = d
            .secondary
            .iter()
            .find(|l| here(l.span))
            .map(|l| l.span)
            .or_else(|| import_of(an, d.primary.span));
        match at {
            Some(s) => (s.start as usize, s.end as usize),
            None => (0, 0),
        }
    };
    for l in &d.secondary {
        let place = if here(l.span) {
            Place::Doc(l.span.start as usize, l.span.end as usize)
        } else {
            match location(an, uri, stdlib, l.span) {
                Some(loc) => Place::Other(loc),
                None => continue,
            }
        };
        related.push((place, l.message.clone()));
    }
    DocDiag {
        start,
        end,
        code: Some(d.code),
        severity: d.severity,
        message,
        related,
    }
}

/// The `import` of the document that loaded the file of `span` (directly; a file imported by
/// an imported file is attributed to the first import).
fn import_of(an: &Analysis, span: Span) -> Option<Span> {
    let name = &an.sources.get(span.file).name;
    let base = Path::new(&an.sources.get(an.main).name)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut first = None;
    for item in &an.tree().items {
        let ast::Item::Import { path, span } = item else {
            continue;
        };
        first.get_or_insert(*span);
        let hit = match path {
            ast::ImportPath::Std(id) => *name == format!("stdlib/{}.coll", id.name),
            ast::ImportPath::File(p, _) => normalize(&base.join(p)) == normalize(Path::new(name)),
        };
        if hit {
            return Some(*span);
        }
    }
    first
}

/// `a/./b/../c` as `a/c`, lexically.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}
