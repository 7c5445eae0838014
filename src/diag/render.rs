//! Rendering diagnostics for people (codespan-reporting, coloured only when asked) and for tools
//! (one JSON object per diagnostic, with file names, byte ranges and 1-based lines/columns).

use super::{Diagnostic, Severity, SourceMap};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term;
use serde::Serialize;
use std::ops::Range;

impl<'a> Files<'a> for SourceMap {
    type FileId = super::FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: Self::FileId) -> Result<&'a str, FilesError> {
        self.try_get(id).map(|f| f.name.as_str())
    }

    fn source(&'a self, id: Self::FileId) -> Result<&'a str, FilesError> {
        self.try_get(id).map(|f| f.text.as_str())
    }

    fn line_index(&'a self, id: Self::FileId, byte_index: usize) -> Result<usize, FilesError> {
        let f = self.try_get(id)?;
        Ok(f.line_col(byte_index.min(f.text.len())).0)
    }

    fn line_range(
        &'a self,
        id: Self::FileId,
        line_index: usize,
    ) -> Result<Range<usize>, FilesError> {
        let f = self.try_get(id)?;
        let starts = &f.line_starts;
        if line_index >= starts.len() {
            if line_index == starts.len() {
                return Ok(f.text.len()..f.text.len());
            }
            return Err(FilesError::LineTooLarge {
                given: line_index,
                max: starts.len() - 1,
            });
        }
        let start = starts[line_index];
        let end = starts.get(line_index + 1).copied().unwrap_or(f.text.len());
        Ok(start..end)
    }
}

/// Source lines longer than this (in bytes) are shown as a window around the labels: a
/// diagnostic on a 20 MB one-line file must not echo the whole line.
const MAX_SHOWN: usize = 300;
/// Bytes shown on each side of the labels in such a window.
const CONTEXT: usize = 60;

/// A [`SourceMap`] whose long labelled lines end and begin around one diagnostic's labels;
/// columns are still counted from the real start of the line.
struct Windowed<'m> {
    map: &'m SourceMap,
    /// (file, line index, the bytes shown).
    windows: Vec<(super::FileId, usize, Range<usize>)>,
}

impl<'m> Windowed<'m> {
    fn new(map: &'m SourceMap, labels: &[(super::FileId, Range<usize>)]) -> Windowed<'m> {
        let mut windows: Vec<(super::FileId, usize, Range<usize>)> = Vec::new();
        for (file, r) in labels {
            let (Ok(f), Ok(line)) = (map.try_get(*file), map.line_index(*file, r.start)) else {
                continue;
            };
            let Ok(full) = map.line_range(*file, line) else {
                continue;
            };
            if full.len() <= MAX_SHOWN {
                continue;
            }
            let floor = |mut i: usize| {
                while !f.text.is_char_boundary(i) {
                    i -= 1;
                }
                i
            };
            let lo = floor(r.start.saturating_sub(CONTEXT).max(full.start));
            let hi = floor((r.end.min(r.start + MAX_SHOWN) + CONTEXT).min(full.end));
            match windows.iter_mut().find(|w| w.0 == *file && w.1 == line) {
                Some(w) => w.2 = w.2.start.min(lo)..w.2.end.max(hi),
                None => windows.push((*file, line, lo..hi)),
            }
        }
        Windowed { map, windows }
    }

    /// `r` cut to the window of its line, if the line has one.
    fn clip(&self, file: super::FileId, r: Range<usize>) -> Range<usize> {
        let Ok(line) = self.map.line_index(file, r.start) else {
            return r;
        };
        match self.windows.iter().find(|w| w.0 == file && w.1 == line) {
            Some((_, _, w)) => {
                let start = r.start.clamp(w.start, w.end);
                start..r.end.clamp(start, w.end)
            }
            None => r,
        }
    }
}

impl<'a, 'm: 'a> Files<'a> for Windowed<'m> {
    type FileId = super::FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: Self::FileId) -> Result<&'a str, FilesError> {
        self.map.name(id)
    }

    fn source(&'a self, id: Self::FileId) -> Result<&'a str, FilesError> {
        self.map.source(id)
    }

    fn line_index(&'a self, id: Self::FileId, byte_index: usize) -> Result<usize, FilesError> {
        self.map.line_index(id, byte_index)
    }

    fn line_range(
        &'a self,
        id: Self::FileId,
        line_index: usize,
    ) -> Result<Range<usize>, FilesError> {
        match self.windows.iter().find(|w| w.0 == id && w.1 == line_index) {
            Some((_, _, w)) => Ok(w.clone()),
            None => self.map.line_range(id, line_index),
        }
    }

    fn column_number(
        &'a self,
        id: Self::FileId,
        line_index: usize,
        byte_index: usize,
    ) -> Result<usize, FilesError> {
        let full = self.map.line_range(id, line_index)?;
        let text = self.map.source(id)?;
        let end = byte_index.clamp(full.start, full.end);
        Ok(text.get(full.start..end).map_or(0, |t| t.chars().count()) + 1)
    }
}

impl SourceMap {
    pub(crate) fn try_get(&self, id: super::FileId) -> Result<&super::SourceFile, FilesError> {
        self.files.get(id.0 as usize).ok_or(FilesError::FileMissing)
    }
}

/// The diagnostic for codespan, and the view of the files to render it with.
fn to_codespan<'m>(
    d: &Diagnostic,
    files: &'m SourceMap,
) -> (cs::Diagnostic<super::FileId>, Windowed<'m>) {
    let severity = match d.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
    };
    let raw = |span: super::Span| {
        let len = files.try_get(span.file).map(|f| f.text.len()).unwrap_or(0);
        let start = (span.start as usize).min(len);
        let end = (span.end as usize).clamp(start, len);
        start..end
    };
    let spans: Vec<(super::FileId, Range<usize>)> = std::iter::once(d.primary.span)
        .chain(d.secondary.iter().map(|s| s.span))
        .map(|s| (s.file, raw(s)))
        .collect();
    let view = Windowed::new(files, &spans);
    let clamp = |span: super::Span| view.clip(span.file, raw(span));
    // A label in a file with no text (one that could not be read, or an empty file) would show
    // an empty source line with a caret: it becomes a note naming the file instead, or nothing
    // when the message names the file already.
    let mut notes: Vec<String> = Vec::new();
    let mut labels = Vec::new();
    let mut label = |span: super::Span, primary: bool, message: &str| {
        let file = files.try_get(span.file).ok();
        match file.filter(|f| f.text.is_empty()) {
            Some(f) if d.message.contains(f.name.as_str()) => {}
            Some(f) => notes.push(format!("note: `{}` (empty): {message}", f.name)),
            None if primary => {
                labels.push(cs::Label::primary(span.file, clamp(span)).with_message(message))
            }
            None => labels.push(cs::Label::secondary(span.file, clamp(span)).with_message(message)),
        }
    };
    label(d.primary.span, true, &d.primary.message);
    for s in &d.secondary {
        label(s.span, false, &s.message);
    }
    notes.extend(d.notes.iter().map(|n| format!("note: {n}")));
    if let Some(h) = &d.help {
        notes.push(format!("help: {h}"));
    }
    let diag = cs::Diagnostic::new(severity)
        .with_code(d.code.as_str())
        .with_message(&d.message)
        .with_labels(labels)
        .with_notes(notes);
    (diag, view)
}

/// Renders diagnostics as plain text (no colour), as shown in snapshots.
pub fn to_text(diags: &[Diagnostic], files: &SourceMap) -> String {
    let config = term::Config::default();
    let mut out = String::new();
    for d in diags {
        // Rendering only fails if a span points outside its file, which `clamp` prevents.
        let (diag, view) = to_codespan(d, files);
        if term::emit_to_string(&mut out, &config, &view, &diag).is_err() {
            out.push_str(&format!("error[{}]: {}\n", d.code, d.message));
        }
    }
    out
}

/// The human rendering of `diags`, with ANSI colours when `color` is set, in memory: printing
/// it is one write (a file with many diagnostics used to take a system call per fragment).
pub fn to_bytes(diags: &[Diagnostic], files: &SourceMap, color: bool) -> Vec<u8> {
    use term::termcolor::Buffer;
    let mut buf = if color {
        Buffer::ansi()
    } else {
        Buffer::no_color()
    };
    let config = term::Config::default();
    for d in diags {
        let (diag, view) = to_codespan(d, files);
        if term::emit_to_write_style(&mut buf, &config, &view, &diag).is_err() {
            let line = format!("error[{}]: {}\n", d.code, d.message);
            let _ = std::io::Write::write_all(&mut buf, line.as_bytes());
        }
    }
    buf.into_inner()
}

#[derive(Serialize)]
struct JsonLabel<'a> {
    file: &'a str,
    start: u32,
    end: u32,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    message: &'a str,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    code: &'static str,
    severity: Severity,
    message: &'a str,
    primary: JsonLabel<'a>,
    secondary: Vec<JsonLabel<'a>>,
    help: Option<&'a str>,
    notes: &'a [String],
}

fn json_label<'a>(l: &'a super::Label, files: &'a SourceMap) -> JsonLabel<'a> {
    let (name, (line, column), (end_line, end_column)) = match files.try_get(l.span.file) {
        Ok(f) => (
            f.name.as_str(),
            f.line_col((l.span.start as usize).min(f.text.len())),
            f.line_col((l.span.end as usize).min(f.text.len())),
        ),
        Err(_) => ("<unknown>", (0, 0), (0, 0)),
    };
    JsonLabel {
        file: name,
        start: l.span.start,
        end: l.span.end,
        line: line + 1,
        column: column + 1,
        end_line: end_line + 1,
        end_column: end_column + 1,
        message: &l.message,
    }
}

/// One JSON object per line, one line per diagnostic.
pub fn to_json_lines(diags: &[Diagnostic], files: &SourceMap) -> String {
    let mut out = String::new();
    for d in diags {
        let j = JsonDiagnostic {
            code: d.code.as_str(),
            severity: d.severity,
            message: &d.message,
            primary: json_label(&d.primary, files),
            secondary: d.secondary.iter().map(|l| json_label(l, files)).collect(),
            help: d.help.as_deref(),
            notes: &d.notes,
        };
        if let Ok(s) = serde_json::to_string(&j) {
            out.push_str(&s);
            out.push('\n');
        }
    }
    out
}
