//! collc's GOAL reader. It follows `txt2bin`'s scanner (the re2c state machine in LogGOPSim's
//! `txt2bin.re`) token for token, so it accepts what `txt2bin` accepts and rejects what it
//! rejects, with a coded diagnostic instead of a crash or an endless loop:
//!
//! - E0037 (malformed text; `txt2bin` stops with "Expected: ..."): a token the state does not
//!   allow, a comment after an op (comments must be on their own line), `nic` on a calc, a
//!   keyword (`send`, `recv`, `calc`, `rank`, `num_ranks`) as a label, `to` on a recv or `from`
//!   on a send, `-1` as a send's peer, an unterminated `/*` comment, and (stricter than
//!   `txt2bin`, which misattributes them) ops outside a rank block, a `}` with no open block, a
//!   `rank` or `num_ranks` inside a block and an unclosed block.
//! - E0038 (the text scans, but the schedule is invalid; `txt2bin` aborts, loops or writes a
//!   schedule LogGOPSim cannot finish): `num_ranks` missing, repeated or after the first rank;
//!   ranks missing, repeated, out of order or beyond `num_ranks`; duplicate labels; a dependency
//!   on an undefined label or on a label defined further down (`txt2bin` resolves labels as it
//!   reads); numbers too large for their field (`txt2bin` silently truncates them); and
//!   everything [`super::validate`] finds (peers out of range, unmatched sends and receives,
//!   deadlocks, dependency cycles).
//!
//! Diagnostics of the first kind are all reported (the scanner skips to the next line after
//! each); the second kind is checked only when the text scans cleanly.

use super::validate::At;
use super::{DepKind, GoalSchedule, KEYWORDS, OpKind};
use crate::diag::{Code, Diagnostic, FileId, Span};
use std::collections::HashMap;

mod assemble;
mod op;
mod scan;

use scan::is_ident_start;

/// Where each part of a parsed schedule is in the text.
#[derive(Debug, Clone, Default)]
pub struct GoalSpans {
    pub num_ranks: Span,
    /// The `rank N {` of each rank.
    pub ranks: Vec<Span>,
    /// Each op's line (label included).
    pub ops: Vec<Vec<Span>>,
    /// Each dependency line.
    pub deps: Vec<Vec<Span>>,
}

impl GoalSpans {
    /// The span of a location in the schedule.
    pub fn at(&self, at: At) -> Span {
        let get = |v: Option<&Span>| v.copied().unwrap_or(self.num_ranks);
        match at {
            At::Schedule => self.num_ranks,
            At::Rank(r) => get(self.ranks.get(r as usize)),
            At::Op(r, i) => get(self.ops.get(r as usize).and_then(|o| o.get(i as usize))),
            At::Dep(r, d) => get(self.deps.get(r as usize).and_then(|o| o.get(d))),
        }
    }
}

/// Parses GOAL text; see the module doc.
pub fn parse(file: FileId, src: &str) -> Result<GoalSchedule, Vec<Diagnostic>> {
    parse_spanned(file, src).map(|(s, _)| s)
}

/// Parses GOAL text and also returns where everything is.
pub fn parse_spanned(
    file: FileId,
    src: &str,
) -> Result<(GoalSchedule, GoalSpans), Vec<Diagnostic>> {
    let mut p = Parser {
        file,
        s: src.as_bytes(),
        pos: 0,
        syntax: Vec::new(),
        semantic: Vec::new(),
        blocks: Vec::new(),
        open: None,
        num_ranks: Vec::new(),
    };
    p.run();
    if !p.syntax.is_empty() {
        return Err(p.syntax);
    }
    p.assemble()
}

struct RawOp {
    label: Option<(String, Span)>,
    kind: OpKind,
    cpu: u8,
    nic: u8,
    span: Span,
}

struct RawDep {
    op: u32,
    on: u32,
    kind: DepKind,
    span: Span,
}

struct Block {
    number: u64,
    head: Span,
    ops: Vec<RawOp>,
    deps: Vec<RawDep>,
    labels: HashMap<String, (u32, Span)>,
    /// Dependencies waiting for the end of the block to say whether a missing label is
    /// defined further down (a forward reference) or nowhere.
    missing: Vec<(String, Span, Span)>,
}

struct Parser<'a> {
    file: FileId,
    s: &'a [u8],
    pos: usize,
    syntax: Vec<Diagnostic>,
    semantic: Vec<Diagnostic>,
    blocks: Vec<Block>,
    open: Option<usize>,
    num_ranks: Vec<(u64, Span)>,
}

/// What a failed state expected (txt2bin's "Expected: ..." lists).
type Expected = &'static str;

impl Parser<'_> {
    fn run(&mut self) {
        // s_0
        while let Some(b) = self.peek() {
            let start = self.pos;
            match b {
                b' ' | b'\t' => self.skip_ws(),
                b'\n' | b'\r' => {
                    if !self.nl() {
                        self.fail(
                            "an op, a dependency, `rank`, `num_ranks`, `}` or a new line",
                            "a carriage return must be followed by a line feed",
                        );
                    }
                }
                b'/' if self.s.get(self.pos + 1) == Some(&b'/') => {
                    while let Some(b) = self.peek() {
                        self.pos += 1;
                        if b == b'\n' {
                            break;
                        }
                    }
                }
                b'/' if self.s.get(self.pos + 1) == Some(&b'*') => {
                    match self.s[self.pos + 2..].windows(2).position(|w| w == b"*/") {
                        Some(i) => self.pos += 2 + i + 2,
                        None => {
                            let at = self.span(start, start + 2);
                            self.syntax.push(
                                Diagnostic::error(
                                    Code::GoalSyntax,
                                    at,
                                    "this comment is never closed",
                                )
                                .label("`/*` without `*/`")
                                .help("close the comment with `*/`"),
                            );
                            self.pos = self.s.len();
                        }
                    }
                }
                b'}' => {
                    self.pos += 1;
                    if self.open.take().is_none() {
                        let at = self.span(start, start + 1);
                        self.syntax.push(
                            Diagnostic::error(Code::GoalSyntax, at, "`}` closes no rank block")
                                .label("no `rank N {` is open here")
                                .help("remove the `}` or open the block with `rank N {`"),
                        );
                    }
                }
                _ if is_ident_start(b) => {
                    let n = self.ident_len();
                    let word = String::from_utf8_lossy(&self.s[start..start + n]).into_owned();
                    if KEYWORDS.contains(&word.as_str()) && self.keyword_label(&word, start) {
                        continue;
                    }
                    self.pos += n;
                    match word.as_str() {
                        "send" | "recv" | "calc" => self.op(&word, None, start),
                        "rank" => self.rank(start),
                        "num_ranks" => self.num_ranks_line(start),
                        _ => self.labelled(word, start),
                    }
                }
                _ => self.fail(
                    "an op, a dependency, `rank`, `num_ranks`, `}` or a new line",
                    "lines hold `num_ranks N`, `rank N {`, `}`, an op (`[label:] send|recv|calc ...`), `a requires b` or a comment",
                ),
            }
        }
        if let Some(i) = self.open {
            let head = self.blocks[i].head;
            self.syntax.push(
                Diagnostic::error(
                    Code::GoalSyntax,
                    head,
                    format!("rank {} is never closed", self.blocks[i].number),
                )
                .label("this block has no `}`")
                .help("close the block with `}` (txt2bin loops forever on a missing one)"),
            );
        }
    }

    /// `send: ...`: a keyword used as a label. Reports it and returns true.
    fn keyword_label(&mut self, word: &str, start: usize) -> bool {
        let mut i = start + word.len();
        while matches!(self.s.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        if self.s.get(i) != Some(&b':') {
            return false;
        }
        let at = self.span(start, start + word.len());
        self.syntax.push(
            Diagnostic::error(
                Code::GoalSyntax,
                at,
                format!("`{word}` is a keyword and cannot be a label"),
            )
            .label("txt2bin reads this as a keyword")
            .help(format!(
                "rename the label, e.g. `{word}1`; {} are keywords",
                KEYWORDS.join(", ")
            )),
        );
        self.pos = start;
        while let Some(b) = self.peek() {
            self.pos += 1;
            if b == b'\n' {
                break;
            }
        }
        true
    }

    fn block(&mut self) -> Option<usize> {
        self.open
    }

    fn rank(&mut self, start: usize) {
        // s_20, s_21
        self.skip_ws();
        let Some((v, at)) = self.int() else {
            return self.fail("a rank number", "write `rank N {`");
        };
        self.skip_ws();
        if !self.lit("{") {
            return self.fail("`{`", "write `rank N {`");
        }
        let head = self.span(start, self.pos);
        if let Some(i) = self.open {
            let n = self.blocks[i].number;
            self.syntax.push(
                Diagnostic::error(
                    Code::GoalSyntax,
                    head,
                    format!("a rank block starts inside the block of rank {n}"),
                )
                .label("rank blocks cannot nest")
                .help(format!("close rank {n} with `}}` first")),
            );
        }
        let number = self.num(v, at, "rank number", u64::from(u32::MAX) - 1);
        self.blocks.push(Block {
            number,
            head,
            ops: Vec::new(),
            deps: Vec::new(),
            labels: HashMap::new(),
            missing: Vec::new(),
        });
        self.open = Some(self.blocks.len() - 1);
    }

    fn num_ranks_line(&mut self, start: usize) {
        // s_22
        self.skip_ws();
        let Some((v, at)) = self.int() else {
            return self.fail(
                "the number of ranks",
                "write `num_ranks N` first in the file",
            );
        };
        let span = self.span(start, self.pos);
        if self.open.is_some() {
            self.syntax.push(
                Diagnostic::error(Code::GoalSyntax, span, "`num_ranks` inside a rank block")
                    .label("inside a block")
                    .help("write `num_ranks N` once, before the first rank"),
            );
            return;
        }
        let n = self.num(v, at, "number of ranks", u64::from(u32::MAX) - 1);
        self.num_ranks.push((n, span));
    }

    /// A line starting with an identifier: `label: op` or `a requires b`.
    fn labelled(&mut self, word: String, start: usize) {
        let lspan = self.span(start, self.pos);
        // s_1
        self.skip_ws();
        if self.lit(":") {
            // s_4
            self.skip_ws();
            for kw in ["calc", "send", "recv"] {
                if self.lit(kw) {
                    return self.op(kw, Some((word, lspan)), start);
                }
            }
            return self.fail("`calc`, `send` or `recv`", "a label is followed by an op");
        }
        let kind = if self.lit("requires") {
            DepKind::Requires
        } else if self.lit("irequires") {
            DepKind::IRequires
        } else {
            let help = format!(
                "`{word}` is read as a label: write `{word}: op` or `{word} requires b`; ops start with `send`, `recv` or `calc`"
            );
            return self.fail("`:`, `requires` or `irequires`", &help);
        };
        // s_5
        self.skip_ws();
        let n = self.ident_len();
        if n == 0 {
            return self.fail(
                "a label",
                "write `a requires b` with two labels of this rank",
            );
        }
        let other = String::from_utf8_lossy(&self.s[self.pos..self.pos + n]).into_owned();
        let ospan = self.span(self.pos, self.pos + n);
        self.pos += n;
        // s_6
        self.skip_ws();
        let end = self.pos;
        if !self.nl() {
            return self.fail("the end of the line", "a dependency is a line of its own");
        }
        let span = self.span(start, end);
        let Some(b) = self.block() else {
            return self.outside(span);
        };
        let mut ids = [0u32; 2];
        for (k, (name, at)) in [(&word, lspan), (&other, ospan)].into_iter().enumerate() {
            match self.blocks[b].labels.get(name.as_str()) {
                Some((id, _)) => ids[k] = *id,
                None => {
                    self.blocks[b].missing.push((name.clone(), at, span));
                    return;
                }
            }
        }
        self.blocks[b].deps.push(RawDep {
            op: ids[0],
            on: ids[1],
            kind,
            span,
        });
    }

    fn outside(&mut self, span: Span) {
        self.syntax.push(
            Diagnostic::error(
                Code::GoalSyntax,
                span,
                "this line is outside every rank block",
            )
            .label("not inside `rank N { ... }`")
            .help("put ops and dependencies inside the block of the rank they belong to"),
        );
    }
}
