//! Diagnostics as plain values for front ends that are not a terminal (Python, tests): each
//! one's code, severity, message, place (file, 1-based line and column of its start and end),
//! label, help and notes, and the text the command line prints for it.

use crate::diag::{Diagnostic, Severity, SourceMap, render::to_text};

/// One diagnostic, its place resolved to lines and columns (1-based; 0 when the place is in no
/// known file).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Record {
    /// `E0014`.
    pub code: String,
    /// `error` or `warning`.
    pub severity: String,
    pub message: String,
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    /// What the primary label says at the place.
    pub label: String,
    pub help: Option<String>,
    pub notes: Vec<String>,
    /// The diagnostic as `collc check` prints it (no colour).
    pub rendered: String,
}

/// `diags` as records, each once per cause (as the command line prints them).
pub fn records(diags: &[Diagnostic], files: &SourceMap) -> Vec<Record> {
    crate::diag::once_per_cause(diags)
        .iter()
        .map(|d| one(d, files))
        .collect()
}

/// `diags` as the command line prints them, without colour: each once per cause.
pub fn render(diags: &[Diagnostic], files: &SourceMap) -> String {
    to_text(&crate::diag::once_per_cause(diags), files)
}

fn one(d: &Diagnostic, files: &SourceMap) -> Record {
    let span = d.primary.span;
    let (file, start, end) = match files.try_get(span.file) {
        Ok(f) => {
            let at = |o: u32| {
                let (l, c) = f.line_col((o as usize).min(f.text.len()));
                (l + 1, c + 1)
            };
            (f.name.clone(), at(span.start), at(span.end))
        }
        Err(_) => (String::new(), (0, 0), (0, 0)),
    };
    Record {
        code: d.code.as_str().to_string(),
        severity: match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
        .to_string(),
        message: d.message.clone(),
        file,
        line: start.0,
        column: start.1,
        end_line: end.0,
        end_column: end.1,
        label: d.primary.message.clone(),
        help: d.help.clone(),
        notes: d.notes.clone(),
        rendered: to_text(std::slice::from_ref(d), files),
    }
}
