//! The reader's scanner primitives, as `txt2bin`'s re2c states use them: blanks, newlines,
//! literals, integers and identifiers, and the E0037 "Expected: ..." diagnostics.

use super::{Expected, Parser};
use crate::diag::{Code, Diagnostic, Span};

pub(super) fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic()
}

pub(super) fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl Parser<'_> {
    pub(super) fn span(&self, a: usize, b: usize) -> Span {
        Span::new(self.file, a, b.min(self.s.len()))
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    pub(super) fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    /// NL (`\r?\n`), or the end of the file (txt2bin appends a newline there).
    pub(super) fn nl(&mut self) -> bool {
        match self.peek() {
            None => true,
            Some(b'\n') => {
                self.pos += 1;
                true
            }
            Some(b'\r') if self.s.get(self.pos + 1) == Some(&b'\n') => {
                self.pos += 2;
                true
            }
            _ => false,
        }
    }

    pub(super) fn lit(&mut self, w: &str) -> bool {
        if self.s[self.pos..].starts_with(w.as_bytes()) {
            self.pos += w.len();
            true
        } else {
            false
        }
    }

    /// `[0-9]+` as (value, span); None when there are no digits. Overflow gives u64::MAX+
    /// as None in the value and is reported by the caller.
    pub(super) fn int(&mut self) -> Option<(Option<u64>, Span)> {
        let start = self.pos;
        let mut v: Option<u64> = Some(0);
        while let Some(b) = self.peek().filter(u8::is_ascii_digit) {
            v = v
                .and_then(|x| x.checked_mul(10))
                .and_then(|x| x.checked_add(u64::from(b - b'0')));
            self.pos += 1;
        }
        (self.pos > start).then(|| (v, self.span(start, self.pos)))
    }

    pub(super) fn ident_len(&self) -> usize {
        match self.peek() {
            Some(b) if is_ident_start(b) => self.s[self.pos..]
                .iter()
                .take_while(|b| is_ident(**b))
                .count(),
            _ => 0,
        }
    }

    /// Text of the token at the cursor, for messages.
    pub(super) fn found(&self) -> String {
        let rest = &self.s[self.pos..];
        if rest.is_empty() {
            return "the end of the file".into();
        }
        if rest.starts_with(b"\n") || rest.starts_with(b"\r\n") {
            return "the end of the line".into();
        }
        let n = self.ident_len().max(
            rest.iter()
                .take_while(|b| b.is_ascii_digit() || **b == b'-')
                .count(),
        );
        let n = if n == 0 {
            std::str::from_utf8(rest)
                .ok()
                .and_then(|s| s.chars().next())
                .map(char::len_utf8)
                .unwrap_or(1)
        } else {
            n
        };
        format!("`{}`", String::from_utf8_lossy(&rest[..n.min(rest.len())]))
    }

    pub(super) fn token_end(&self) -> usize {
        let rest = &self.s[self.pos..];
        let num = rest
            .iter()
            .take_while(|b| b.is_ascii_digit() || **b == b'-')
            .count();
        let n = self.ident_len().max(num).max(1);
        let mut end = (self.pos + n).min(self.s.len());
        while end < self.s.len() && (self.s[end] & 0xC0) == 0x80 {
            end += 1;
        }
        end
    }

    /// Reports a syntax error at the cursor and skips to the next line.
    pub(super) fn fail(&mut self, expected: Expected, help: &str) {
        let found = self.found();
        let at = self.span(self.pos, self.token_end());
        let rest = &self.s[self.pos..];
        let mut help = help.to_string();
        if rest.starts_with(b"//") || rest.starts_with(b"/*") {
            help = "put the comment on a line of its own: txt2bin rejects a comment after an op or a dependency".into();
        }
        self.syntax.push(
            Diagnostic::error(
                Code::GoalSyntax,
                at,
                format!("expected {expected}, found {found}"),
            )
            .label(format!("expected {expected}"))
            .help(help),
        );
        while let Some(b) = self.peek() {
            self.pos += 1;
            if b == b'\n' {
                break;
            }
        }
    }

    pub(super) fn too_large(&mut self, what: &str, at: Span, max: u64) {
        self.semantic.push(
            Diagnostic::error(
                Code::GoalInvalid,
                at,
                format!("this {what} does not fit its field (at most {max})"),
            )
            .label("too large")
            .help("txt2bin silently truncates numbers that do not fit; use a smaller value"),
        );
    }

    pub(super) fn num(&mut self, v: Option<u64>, at: Span, what: &str, max: u64) -> u64 {
        match v {
            Some(x) if x <= max => x,
            _ => {
                self.too_large(what, at, max);
                0
            }
        }
    }
}
