//! The printer: lays the classified token stream out as lines.
//!
//! Style rules (horizontal spacing is in `spacing.rs`):
//! - 4 spaces per brace level; `{` ends its header line after one space; `}` stands on its own
//!   line, except `{}` for an empty block and `} else` for an `if` chain.
//! - A line break after every `;`, `{` and `}`; so one statement or property per line.
//! - Blank lines: one where the source had one or more between two statements or items (or
//!   comments standing between them); none at the start or end of a block, or of the file.
//! - Comments: one that followed code on its line stays at the end of that line, after one space;
//!   one that stood on its own line stays on its own line, indented like the code around it. The
//!   text is kept verbatim except trailing whitespace.
//! - A comment in the middle of a statement breaks the line after it; the statement continues on
//!   the next line, indented one more level.
//! - A `(...)` or `[...]` group with a comment inside is printed one element per line (the
//!   elements one level deeper than the line that opened it, the closing bracket back on that
//!   level); every other group stays on one line, however long.
//! - The file ends with exactly one newline (an empty file stays empty).

use super::Tok;
use super::spacing::{Role, roles, space_between, vertical_groups};
use crate::syntax::lexer::Token;

const INDENT: &str = "    ";

/// What separates the last printed token from the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
    /// Decided by [`space_between`].
    Pair,
    /// Exactly one space (`} else`).
    Space,
    /// Nothing (`{}`).
    Nothing,
    /// A line break.
    Newline,
}

/// An open `(` or `[` of the current statement.
#[derive(Debug, Clone, Copy)]
struct Group {
    /// Printed one element per line.
    vertical: bool,
    /// Indent level of the line where the group opened (and where it closes, if vertical).
    indent: usize,
    /// Just after the opening bracket or a `,` of this group.
    boundary: bool,
}

struct Printer<'a, 's> {
    src: &'a str,
    toks: &'a [Tok<'s>],
    roles: Vec<Role>,
    vertical: Vec<bool>,
    out: String,
    /// Brace depth.
    depth: usize,
    /// Open brackets of the current statement, innermost last.
    groups: Vec<Group>,
    /// Just after `;`, `{` or `}` (or at the start of the file).
    stmt_boundary: bool,
    pending: Pending,
    /// Index of the last non-comment token printed.
    last_sig: Option<usize>,
    /// An own-line comment was printed after `last_sig`.
    own_comment_since_sig: bool,
    /// Indent level of the current output line.
    line_indent: usize,
}

/// Prints a file that lexed and parsed without errors.
pub(super) fn print(src: &str, toks: &[Tok<'_>]) -> String {
    let mut p = Printer {
        src,
        toks,
        roles: roles(toks),
        vertical: vertical_groups(toks),
        out: String::with_capacity(src.len() + src.len() / 8),
        depth: 0,
        groups: Vec::new(),
        stmt_boundary: true,
        pending: Pending::Nothing,
        last_sig: None,
        own_comment_since_sig: false,
        line_indent: 0,
    };
    for i in 0..toks.len() {
        p.token(i);
    }
    if !p.out.is_empty() {
        p.out.push('\n');
    }
    p.out
}

impl Printer<'_, '_> {
    /// How many line breaks the source has between token `i - 1` and token `i`.
    fn newlines_before(&self, i: usize) -> usize {
        let start = if i == 0 { 0 } else { self.toks[i - 1].end };
        self.src
            .get(start..self.toks[i].start)
            .map_or(0, |gap| gap.matches('\n').count())
    }

    fn token(&mut self, i: usize) {
        match self.toks[i].tok {
            Token::Comment(text) => self.comment(i, text),
            tok => self.significant(i, tok),
        }
    }

    fn comment(&mut self, i: usize, text: &str) {
        let text = text.trim_end();
        let trailing = i > 0 && self.newlines_before(i) == 0;
        if trailing {
            self.out.push(' ');
        } else {
            let indent = self.content_indent();
            self.start_line(i, indent, true);
            self.own_comment_since_sig = true;
        }
        self.out.push_str(text);
        self.pending = Pending::Newline;
    }

    fn significant(&mut self, i: usize, tok: Token<'_>) {
        let role = self.roles[i];
        let closes_vertical = matches!(tok, Token::RParen | Token::RBracket)
            && self.groups.last().is_some_and(|g| g.vertical);
        if tok == Token::RBrace {
            self.depth = self.depth.saturating_sub(1);
        }
        let after_open_brace = i > 0 && self.toks[i - 1].tok == Token::LBrace;
        let newline = self.pending == Pending::Newline
            || closes_vertical
            || (tok == Token::RBrace && !after_open_brace);
        if newline {
            let indent = if tok == Token::RBrace {
                self.depth
            } else if closes_vertical {
                self.groups.last().map_or(self.depth, |g| g.indent)
            } else {
                self.content_indent()
            };
            let blank_ok = !matches!(tok, Token::RBrace | Token::Else);
            self.start_line(i, indent, blank_ok);
        } else if !self.out.is_empty() {
            let space = match self.pending {
                Pending::Space => true,
                Pending::Nothing | Pending::Newline => false,
                Pending::Pair => self
                    .last_sig
                    .is_some_and(|l| space_between(self.toks[l].tok, self.roles[l], tok, role)),
            };
            if space {
                self.out.push(' ');
            }
        }
        match tok {
            Token::Quantity(q) => self.out.push_str(&super::normalize_quantity(q)),
            t => self.out.push_str(t.text()),
        }
        self.after(i, tok);
        self.last_sig = Some(i);
        self.own_comment_since_sig = false;
    }

    /// Updates the layout state after printing token `i` and decides what follows it.
    fn after(&mut self, i: usize, tok: Token<'_>) {
        let next = self.toks.get(i + 1).map(|t| t.tok);
        self.pending = Pending::Pair;
        match tok {
            Token::Semi => {
                self.stmt_boundary = true;
                self.groups.clear();
                self.pending = Pending::Newline;
            }
            Token::LBrace => {
                self.depth += 1;
                self.stmt_boundary = true;
                self.groups.clear();
                self.pending = if next == Some(Token::RBrace) {
                    Pending::Nothing
                } else {
                    Pending::Newline
                };
            }
            Token::RBrace => {
                self.stmt_boundary = true;
                self.groups.clear();
                self.pending = if next == Some(Token::Else) {
                    Pending::Space
                } else {
                    Pending::Newline
                };
            }
            Token::LParen | Token::LBracket => {
                self.stmt_boundary = false;
                let vertical = self.vertical[i];
                self.groups.push(Group {
                    vertical,
                    indent: self.line_indent,
                    boundary: true,
                });
                if vertical {
                    self.pending = Pending::Newline;
                }
            }
            Token::RParen | Token::RBracket => {
                self.groups.pop();
                self.clear_group_boundary();
            }
            Token::Comma => {
                if let Some(g) = self.groups.last_mut() {
                    g.boundary = true;
                    if g.vertical {
                        self.pending = Pending::Newline;
                    }
                }
            }
            _ => {
                self.stmt_boundary = false;
                self.clear_group_boundary();
            }
        }
    }

    fn clear_group_boundary(&mut self) {
        if let Some(g) = self.groups.last_mut() {
            g.boundary = false;
        }
    }

    /// The indent level of a line that starts with code or an own-line comment (not a closer).
    fn content_indent(&self) -> usize {
        match self.groups.last() {
            Some(g) if g.vertical => g.indent + 1 + usize::from(!g.boundary),
            // A line break inside a one-line group cannot happen (it would be vertical); keep
            // the statement's continuation indent for safety.
            _ => self.depth + usize::from(!self.stmt_boundary),
        }
    }

    /// Starts a new output line for token `i` at `indent`, with a blank line before it when the
    /// source had one and a blank line is allowed here.
    fn start_line(&mut self, i: usize, indent: usize, blank_ok: bool) {
        if !self.out.is_empty() {
            // No blank line right under a `{` line (`{` possibly followed by a comment).
            let after_open = !self.own_comment_since_sig
                && self
                    .last_sig
                    .is_some_and(|l| self.toks[l].tok == Token::LBrace);
            let blank = blank_ok
                && self.stmt_boundary
                && self.groups.is_empty()
                && !after_open
                && self.newlines_before(i) >= 2;
            self.out.push('\n');
            if blank {
                self.out.push('\n');
            }
        }
        for _ in 0..indent {
            self.out.push_str(INDENT);
        }
        self.line_indent = indent;
    }
}
