//! The document store: the text of every open document by URI, its version, its latest
//! analysis, and the diagnostics last published for it.
//!
//! # What is published while the user types
//!
//! Every change is followed by a full new set of diagnostics for the new text (never an empty
//! set because something failed):
//!
//! - The checker's diagnostics for the new text always go out, syntax errors included. While the
//!   text has syntax errors, the checker hides the problems a hole in the tree would cause
//!   (`sema::HIDDEN_AFTER_SYNTAX_ERRORS`: unknown names, missing declarations, ...). So that
//!   typing half a statement does not blank those diagnostics elsewhere in the file, the ones of
//!   the last version without syntax errors are *carried*: moved through every edit since
//!   ([`DocDiag::shift`]) and published along with the new ones, except where an edit touched
//!   them or touched a name they mention (renaming a declaration back can make "unknown name"
//!   false: a carried diagnostic must never be older than the text). Once the text parses
//!   again, the checker's own set replaces them.
//! - If the checker panics (a bug in collc), one diagnostic E0048 (internal compiler error) at
//!   the top of the file is published in place of the others, which may no longer be true.

use super::analysis::Analysis;
use super::requests::diagnostics::DocDiag;
use super::text::LineIndex;
use lsp_types::{Position, Range, TextDocumentContentChangeEvent, Uri};
use std::collections::BTreeMap;
use std::rc::Rc;

/// One open document.
pub struct Document {
    pub uri: Uri,
    pub text: String,
    pub lines: LineIndex,
    /// The client's version number.
    pub version: i32,
    /// A new number (from the engine's clock) on every change; analyses are tagged with it.
    pub revision: u64,
    /// The analysis of the current revision, once made.
    pub analysis: Option<(u64, Rc<Analysis>)>,
    /// The revision whose analysis panicked, so that requests do not retry it.
    pub failed: Option<u64>,
    /// What was published last, moved through the edits since.
    pub published: Vec<DocDiag>,
    /// Carried diagnostics (see the module doc), moved through the edits since.
    pub carried: Vec<DocDiag>,
    /// The current revision's diagnostics have not been published yet.
    pub dirty: bool,
    /// The rank count of the last analysis that had a collective (for completing stages while
    /// the text does not check).
    pub last_ranks: Option<usize>,
}

impl Document {
    pub fn new(uri: Uri, text: String, version: i32) -> Document {
        Document {
            uri,
            lines: LineIndex::new(&text),
            text,
            version,
            revision: 0,
            analysis: None,
            failed: None,
            published: Vec::new(),
            carried: Vec::new(),
            dirty: true,
            last_ranks: None,
        }
    }

    /// Applies the client's changes in order (ranged edits, or whole-text replacements).
    pub fn apply(&mut self, version: i32, changes: Vec<TextDocumentContentChangeEvent>) {
        for c in changes {
            let (start, end) = match c.range {
                Some(r) => {
                    let a = self.lines.offset(&self.text, r.start);
                    let b = self.lines.offset(&self.text, r.end);
                    (a.min(b), a.max(b))
                }
                None => diff_bounds(&self.text, &c.text),
            };
            let new_text = match c.range {
                Some(_) => c.text,
                None => c.text[start..c.text.len() - (self.text.len() - end)].to_string(),
            };
            let mut touched = words_in(&self.text, start, end);
            self.text.replace_range(start..end, &new_text);
            self.lines = LineIndex::new(&self.text);
            let n = new_text.len();
            touched.extend(words_in(&self.text, start, start + n));
            self.published = shift_all(&self.published, start, end, n);
            self.carried = shift_all(&self.carried, start, end, n);
            self.carried.retain(|d| still_true(d, &touched));
        }
        self.version = version;
        self.revision += 1;
        self.dirty = true;
    }

    /// The range of the whole text.
    pub fn full_range(&self) -> Range {
        Range::new(Position::new(0, 0), self.lines.end(&self.text))
    }
}

/// The identifiers of `text[a..b]`, the region widened to whole words.
fn words_in(text: &str, a: usize, b: usize) -> Vec<String> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let a = text[..a]
        .char_indices()
        .rev()
        .take_while(|(_, c)| word(*c))
        .last()
        .map_or(a, |(i, _)| i);
    let b = b + text[b..]
        .chars()
        .take_while(|c| word(*c))
        .map(char::len_utf8)
        .sum::<usize>();
    text[a..b]
        .split(|c: char| !word(c))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether a carried diagnostic can still be true after an edit that touched the identifiers
/// `touched`: not when it names (in backticks) one of them (renaming `hostz` back to `hosts`
/// makes "unknown name `hosts`" false), nor when it names nothing, so nothing tells.
fn still_true(d: &DocDiag, touched: &[String]) -> bool {
    if touched.is_empty() {
        return true;
    }
    // The message's first line names what it is about; help lines name keywords too.
    let first = d.message.lines().next().unwrap_or("");
    let named: Vec<&str> = first.split('`').skip(1).step_by(2).collect();
    !named.is_empty()
        && !named.iter().any(|n| {
            n.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| touched.iter().any(|t| t == w))
        })
}

fn shift_all(diags: &[DocDiag], start: usize, end: usize, new_len: usize) -> Vec<DocDiag> {
    diags
        .iter()
        .filter_map(|d| d.shift(start, end, new_len))
        .collect()
}

/// The changed region between two texts: (start, end in `old`) such that `new` is `old` with
/// `old[start..end]` replaced (common prefix and suffix removed, on character boundaries).
fn diff_bounds(old: &str, new: &str) -> (usize, usize) {
    let mut p = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !(old.is_char_boundary(p) && new.is_char_boundary(p)) {
        p -= 1;
    }
    let max_suffix = old.len().min(new.len()) - p;
    let mut s = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    while !(old.is_char_boundary(old.len() - s) && new.is_char_boundary(new.len() - s)) {
        s -= 1;
    }
    (p, old.len() - s)
}

/// Open documents by URI (as the client spells it).
#[derive(Default)]
pub struct Documents {
    docs: BTreeMap<String, Document>,
}

impl Documents {
    pub fn open(&mut self, doc: Document) {
        self.docs.insert(doc.uri.as_str().to_string(), doc);
    }

    pub fn close(&mut self, uri: &Uri) -> Option<Document> {
        self.docs.remove(uri.as_str())
    }

    pub fn get(&self, uri: &Uri) -> Option<&Document> {
        self.docs.get(uri.as_str())
    }

    pub fn get_mut(&mut self, uri: &Uri) -> Option<&mut Document> {
        self.docs.get_mut(uri.as_str())
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Document> {
        self.docs.values_mut()
    }

    /// URIs of documents whose diagnostics are not published yet.
    pub fn dirty(&self) -> Vec<Uri> {
        self.docs
            .values()
            .filter(|d| d.dirty)
            .map(|d| d.uri.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff() {
        assert_eq!(diff_bounds("abcdef", "abXdef"), (2, 3));
        assert_eq!(diff_bounds("abc", "abc"), (3, 3));
        assert_eq!(diff_bounds("aaa", "aaaa"), (3, 3));
        assert_eq!(diff_bounds("", "x"), (0, 0));
        assert_eq!(diff_bounds("\u{e9}", "\u{e8}"), (0, 2));
    }
}
