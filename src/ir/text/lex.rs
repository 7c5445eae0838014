//! The IR text's line scanner: one line split into words with their byte offsets, and readers
//! for the words, numbers and slices an op line is made of; every error is a coded diagnostic at
//! the word (or the line end) where the text went wrong.

use super::super::{Buf, Slice};
use crate::diag::{Code, Diagnostic, FileId, Span};

pub(super) struct Lexer<'a> {
    file: FileId,
    line_start: usize,
    words: Vec<(usize, &'a str)>,
    /// The next word; the parser steps back over a word it peeked at, or over one it skips.
    pub(super) pos: usize,
    line_end: usize,
}

impl<'a> Lexer<'a> {
    pub(super) fn new(file: FileId, line_start: usize, line: &'a str) -> Lexer<'a> {
        let mut words = Vec::new();
        let mut i = 0;
        let b = line.as_bytes();
        while i < b.len() {
            if b[i].is_ascii_whitespace() || b[i] == b',' {
                i += 1;
                continue;
            }
            let start = i;
            if b[i] == b'"' {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i = (i + 1).min(b.len());
            } else {
                while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b',' {
                    i += 1;
                }
            }
            words.push((start, &line[start..i]));
        }
        Lexer {
            file,
            line_start,
            words,
            pos: 0,
            line_end: line_start + line.len(),
        }
    }

    pub(super) fn span_here(&self) -> Span {
        match self.words.get(self.pos) {
            Some((o, w)) => Span::new(
                self.file,
                self.line_start + o,
                self.line_start + o + w.len(),
            ),
            None => Span::new(self.file, self.line_end, self.line_end),
        }
    }

    pub(super) fn err(&self, what: &str) -> Diagnostic {
        let found = self
            .words
            .get(self.pos)
            .map(|w| format!("`{}`", w.1))
            .unwrap_or_else(|| "the end of the line".into());
        Diagnostic::error(
            Code::IrSyntax,
            self.span_here(),
            format!("expected {what}, found {found}"),
        )
        .label(format!("expected {what}"))
        .help("see the IR text format in the documentation of `collc build --emit ir`")
    }

    pub(super) fn word(&mut self, what: &str) -> Result<&'a str, Diagnostic> {
        match self.words.get(self.pos) {
            Some((_, w)) => {
                self.pos += 1;
                Ok(w)
            }
            None => Err(self.err(what)),
        }
    }

    pub(super) fn keyword(&mut self, kw: &str) -> Result<(), Diagnostic> {
        match self.words.get(self.pos) {
            Some((_, w)) if *w == kw => {
                self.pos += 1;
                Ok(())
            }
            _ => Err(self.err(&format!("`{kw}`"))),
        }
    }

    pub(super) fn peek(&self) -> Option<&'a str> {
        self.words.get(self.pos).map(|w| w.1)
    }

    pub(super) fn int<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, Diagnostic> {
        let here = self.pos;
        let w = self.word(what)?;
        w.trim_end_matches(':').parse().map_err(|_| {
            self.pos = here;
            self.err(what)
        })
    }

    pub(super) fn string(&mut self, what: &str) -> Result<String, Diagnostic> {
        let here = self.pos;
        let w = self.word(what)?;
        match w.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
            Some(inner) => Ok(crate::syntax::ast::unquote(&format!("\"{inner}\""))),
            None => {
                self.pos = here;
                Err(self.err(what))
            }
        }
    }

    pub(super) fn slice(&mut self) -> Result<Slice, Diagnostic> {
        let here = self.pos;
        let w = self.word("a slice such as `in[0]`")?;
        let bad = |me: &mut Self| {
            me.pos = here;
            me.err("a slice such as `in[0]` or `scratch[2..4]`")
        };
        let Some((name, rest)) = w.split_once('[') else {
            return Err(bad(self));
        };
        let Some(inner) = rest.strip_suffix(']') else {
            return Err(bad(self));
        };
        let buf = match name {
            "in" => Buf::Input,
            "out" => Buf::Output,
            "scratch" => Buf::Scratch,
            _ => return Err(bad(self)),
        };
        let (a, b) = match inner.split_once("..") {
            Some((a, b)) => match (a.parse::<u32>(), b.parse::<u32>()) {
                (Ok(a), Ok(b)) if b > a => (a, b),
                _ => return Err(bad(self)),
            },
            None => match inner.parse::<u32>() {
                Ok(a) => (a, a.saturating_add(1)),
                Err(_) => return Err(bad(self)),
            },
        };
        Ok(Slice::new(buf, a, b - a))
    }

    pub(super) fn end(&self) -> Result<(), Diagnostic> {
        if self.pos < self.words.len() {
            return Err(self.err("the end of the line"));
        }
        Ok(())
    }
}
