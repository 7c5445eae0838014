//! Diagnostics: the one error type every stage of collc produces.
//!
//! A [`Diagnostic`] carries a stable code (`E0001`...), a message in the user's terms, a primary
//! label with a [`Span`], optional secondary labels, and a help line. It knows nothing about how it
//! is shown: [`render`] turns it into terminal text (via codespan-reporting) or JSON, and the
//! language server converts the same value into LSP diagnostics. Spans are byte ranges into a file
//! of the [`SourceMap`]; lines and columns exist only when rendering.

pub mod codes;
pub mod render;

pub use codes::Code;

use serde::Serialize;

/// Identifies one source file in a [`SourceMap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Default)]
pub struct FileId(pub u32);

/// A byte range in one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Default)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both (they must be in the same file; otherwise `self`).
    pub fn to(self, other: Span) -> Span {
        if self.file != other.file {
            return self;
        }
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// A labelled span.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// One problem found in the user's input (or in collc itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    pub primary: Label,
    pub secondary: Vec<Label>,
    pub help: Option<String>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// An error with a primary label; add a help line with [`Diagnostic::help`].
    pub fn error(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            severity: Severity::Error,
            message: message.into(),
            primary: Label {
                span,
                message: String::new(),
            },
            secondary: Vec::new(),
            help: None,
            notes: Vec::new(),
        }
    }

    /// A warning: something that builds but is likely not what the user wants.
    pub fn warning(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, span, message)
        }
    }

    /// Text shown under the primary span.
    pub fn label(mut self, message: impl Into<String>) -> Diagnostic {
        self.primary.message = message.into();
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label {
            span,
            message: message.into(),
        });
        self
    }
}

/// A list of diagnostics collected by a stage that keeps going after the first error.
#[derive(Debug, Default, Clone)]
pub struct Diagnostics {
    pub list: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn push(&mut self, d: Diagnostic) {
        self.list.push(d);
    }

    pub fn has_errors(&self) -> bool {
        self.list.iter().any(|d| d.severity == Severity::Error)
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn extend(&mut self, other: impl IntoIterator<Item = Diagnostic>) {
        self.list.extend(other);
    }

    /// Sorts by file and position, keeping the order of diagnostics at the same place, and
    /// drops exact duplicates (the same code at the same span with the same message).
    pub fn sorted(mut self) -> Vec<Diagnostic> {
        self.list
            .sort_by_key(|d| (d.primary.span.file, d.primary.span.start));
        self.list.dedup_by(|a, b| same_cause(a, b));
        self.list
    }
}

/// Whether two diagnostics say the same thing: the same code at the same span with the same
/// message (notes and help may differ, as when two stages find one cause).
pub fn same_cause(a: &Diagnostic, b: &Diagnostic) -> bool {
    a.code == b.code && a.primary.span == b.primary.span && a.message == b.message
}

/// `diags` with each cause once ([`same_cause`]), in the place it first appears, keeping the
/// copy with the most notes (the stage that knew most).
pub fn once_per_cause(diags: &[Diagnostic]) -> Vec<Diagnostic> {
    let mut once: Vec<Diagnostic> = Vec::with_capacity(diags.len());
    for d in diags {
        match once.iter_mut().find(|o| same_cause(o, d)) {
            Some(o) if d.notes.len() > o.notes.len() => *o = d.clone(),
            Some(_) => {}
            None => once.push(d.clone()),
        }
    }
    once
}

/// One loaded source file.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// What the user sees: a path as given on the command line, or `stdlib/ring.coll`.
    pub name: String,
    pub text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    fn new(name: String, text: String) -> SourceFile {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile {
            name,
            text,
            line_starts,
        }
    }

    /// Zero-based line and column (in bytes) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let line = match self.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        (line, offset - self.line_starts[line])
    }
}

/// Every source file collc has read in one run, addressed by [`FileId`].
#[derive(Debug, Default, Clone)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let id = FileId(self.files.len() as u32);
        self.files.push(SourceFile::new(name.into(), text.into()));
        id
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn find(&self, name: &str) -> Option<FileId> {
        self.files
            .iter()
            .position(|f| f.name == name)
            .map(|i| FileId(i as u32))
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// `n` and a noun that agrees with it: `counted(1, "step")` is "1 step", `counted(7, "step")`
/// is "7 steps" (nouns with a regular plural, as in every message that uses this).
pub fn counted(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod counted_tests {
    #[test]
    fn agrees_with_its_number() {
        assert_eq!(super::counted(1u64, "thread block"), "1 thread block");
        assert_eq!(super::counted(0u64, "step"), "0 steps");
        assert_eq!(super::counted(7u32, "element"), "7 elements");
    }
}
