//! The syntax stage: source text to [`ast::File`] with spans, plus syntax diagnostics.
//!
//! This module is the facade over the lalrpop parser generated from `grammar/coll.lalrpop`: the
//! rest of collc calls [`parse`] and never sees lalrpop's types. Lexing errors (E0002) and syntax
//! errors (E0001) are all collected; the parser recovers at item, statement and property
//! boundaries, so the returned tree is always usable, with `Error` nodes where input was skipped.

pub mod ast;
pub mod lexer;

use crate::diag::{Code, Diagnostic, FileId, Span};
use lalrpop_util::{ErrorRecovery, ParseError};
use lexer::Token;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, clippy::unwrap_used, unused)]
    grammar,
    "/coll.rs"
);

/// Parses one file. Always returns a tree; `diags` holds every lexical and syntax error.
pub fn parse(file: FileId, src: &str) -> (ast::File, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let mut tokens = Vec::new();
    for (l, tok, r) in lexer::lex(src) {
        match tok {
            Ok(Token::Comment(_)) => {}
            Ok(t) => tokens.push((l, t, r)),
            Err(()) => {
                diags.push(lex_error(file, src, l, r));
                // An unterminated string still stands for a string, so the parser does not
                // report the hole it would leave.
                if let Some(text) = src.get(l..r).filter(|t| t.starts_with('"')) {
                    tokens.push((l, Token::Str(text), r));
                }
            }
        }
    }
    let toks = tokens.clone();
    let lex_ends: Vec<usize> = diags.iter().map(|d| d.primary.span.end as usize).collect();
    if let Some(d) = too_deep(file, &tokens) {
        diags.push(d);
        return (ast::File::default(), diags);
    }
    let mut recovered: Vec<ErrorRecovery<usize, Token<'_>, ()>> = Vec::new();
    let result =
        grammar::FileParser::new().parse(file, &mut recovered, tokens.into_iter().map(Ok::<_, ()>));
    let ctx = Context {
        file,
        src,
        toks: &toks,
        lex_ends: &lex_ends,
    };
    for e in recovered {
        diags.extend(ctx.syntax_error(e.error));
    }
    let tree = match result {
        Ok(tree) => tree,
        Err(e) => {
            diags.extend(ctx.syntax_error(e));
            ast::File::default()
        }
    };
    (tree, diags)
}

/// Brackets may nest at most this deep; deeper input is rejected before parsing so that no later
/// stage recurses without bound.
pub const MAX_NESTING: usize = 256;

/// Most operators in one statement (the AST of a long chain is as deep as the chain).
pub const MAX_OPERATORS: usize = 4096;

fn too_deep(file: FileId, tokens: &[(usize, Token<'_>, usize)]) -> Option<Diagnostic> {
    // Brackets nest; so does each `else if` of a chain (the AST nests the rest of the chain).
    let mut depth = 0usize;
    let mut chain: Vec<usize> = vec![0];
    let mut ops = 0usize;
    for (i, (l, t, r)) in tokens.iter().enumerate() {
        let next = tokens.get(i + 1).map(|x| &x.1);
        match t {
            Token::LBrace | Token::LParen | Token::LBracket => {
                depth += 1;
                if chain.len() <= depth {
                    chain.push(0);
                }
                chain[depth] = 0;
            }
            Token::RBrace | Token::RParen | Token::RBracket => {
                depth = depth.saturating_sub(1);
                if next != Some(&Token::Else) {
                    chain[depth] = 0;
                }
            }
            Token::Else if next == Some(&Token::If) => chain[depth] += 1,
            Token::Semi => ops = 0,
            Token::Plus
            | Token::Minus
            | Token::Star
            | Token::Slash
            | Token::Percent
            | Token::AndAnd
            | Token::OrOr
            | Token::Bang
            | Token::EqEq
            | Token::NotEq
            | Token::Lt
            | Token::Le
            | Token::Gt
            | Token::Ge => {
                ops += 1;
                if ops > MAX_OPERATORS {
                    return Some(
                        Diagnostic::error(
                            Code::Syntax,
                            Span::new(file, *l, *r),
                            format!("more than {MAX_OPERATORS} operators in one statement"),
                        )
                        .label("statement too long")
                        .help("split the computation into several `let` statements"),
                    );
                }
            }
            _ => {}
        }
        if depth + chain[depth] > MAX_NESTING {
            return Some(
                Diagnostic::error(Code::Syntax, Span::new(file, *l, *r), format!("nesting deeper than {MAX_NESTING} levels"))
                    .label("too deeply nested")
                    .help("split the expression or block into smaller pieces with `let`, generators or separate `if` statements"),
            );
        }
    }
    None
}

fn lex_error(file: FileId, src: &str, l: usize, r: usize) -> Diagnostic {
    let text = src.get(l..r).unwrap_or("");
    let span = Span::new(file, l, r);
    if text.starts_with('"') {
        return Diagnostic::error(Code::InvalidToken, span, "unterminated string literal")
            .label("this string has no closing quote on its line")
            .help("close the string with `\"`; strings cannot span lines");
    }
    let shown: String = text.chars().take(12).collect();
    let help = if text.starts_with('#') {
        "`#` does not start a comment; comments start with `//`"
    } else {
        "remove it; comments start with `//`"
    };
    Diagnostic::error(
        Code::InvalidToken,
        span,
        format!("unexpected character `{}`", shown.escape_debug()),
    )
    .label("not part of the .coll language")
    .help(help)
}

fn describe(tok: &Token<'_>) -> String {
    match tok {
        Token::Ident(s) => format!("identifier `{s}`"),
        Token::Int(s) | Token::Decimal(s) => format!("number `{s}`"),
        Token::Quantity(s) => format!("quantity `{s}`"),
        Token::Str(s) => format!("string {s}"),
        t if t.is_keyword() => format!("keyword `{}`", t.text()),
        t => format!("`{}`", t.text()),
    }
}

/// Tokens that can start an expression, as lalrpop names them in `expected` lists.
const EXPR_START: &[&str] = &[
    "IDENT",
    "INT",
    "DECIMAL",
    "QUANTITY",
    "STR",
    "\"true\"",
    "\"false\"",
    "\"auto\"",
    "\"(\"",
    "\"[\"",
    "\"-\"",
    "\"!\"",
];

/// True when `expected` is the set of tokens that start an expression: a value is missing.
fn expects_value(expected: &[String]) -> bool {
    ["INT", "QUANTITY", "IDENT"]
        .iter()
        .all(|t| expected.iter().any(|e| e == t))
}

fn expected_list(expected: &[String]) -> String {
    let value = expects_value(expected);
    let rest: Vec<&String> = expected
        .iter()
        .filter(|e| !value || !EXPR_START.contains(&e.as_str()))
        .collect();
    let shown: Vec<String> = (value.then(|| "a value".to_string()))
        .into_iter()
        .chain(rest.iter().take(8).map(|e| {
            let e = e.trim_matches('"');
            match e {
                "IDENT" => "a name".to_string(),
                "INT" | "DECIMAL" => "a number".to_string(),
                "QUANTITY" => "a quantity".to_string(),
                "STR" => "a string".to_string(),
                other => format!("`{}`", other.trim_start_matches('\\').trim_matches('"')),
            }
        }))
        .collect();
    let mut seen = Vec::new();
    for s in shown {
        if !seen.contains(&s) {
            seen.push(s);
        }
    }
    let more = if rest.len() > 8 { ", ..." } else { "" };
    let list = format!("{}{more}", seen.join(", "));
    // "a, b, c" reads better as "a, b or c".
    match list.rfind(", ") {
        Some(i) if more.is_empty() => format!("{} or {}", &list[..i], &list[i + 2..]),
        _ => list,
    }
}

/// What syntax errors are reported against: the file, its tokens and where lexing failed.
struct Context<'c, 's> {
    file: FileId,
    src: &'c str,
    toks: &'c [(usize, Token<'s>, usize)],
    lex_ends: &'c [usize],
}

impl Context<'_, '_> {
    /// End of the last token that ends at or before `at`.
    fn prev_end(&self, at: usize) -> Option<usize> {
        let i = self.toks.partition_point(|t| t.2 <= at);
        i.checked_sub(1).map(|i| self.toks[i].2)
    }

    /// A syntax error with the context of the whole file, or `None` when it is only a
    /// consequence of a lexical error just before it (an unterminated string swallows the rest of
    /// its line, a stray character leaves a hole).
    fn syntax_error(&self, e: ParseError<usize, Token<'_>, ()>) -> Option<Diagnostic> {
        let file = self.file;
        let at = match &e {
            ParseError::UnrecognizedToken { token, .. } | ParseError::ExtraToken { token } => {
                token.0
            }
            ParseError::UnrecognizedEof { location, .. } => *location,
            _ => usize::MAX,
        };
        let after_lex_error = self
            .lex_ends
            .iter()
            .any(|&e| e <= at && self.prev_end(at).is_none_or(|p| p <= e));
        if after_lex_error {
            return None;
        }
        match &e {
            ParseError::UnrecognizedToken {
                token: (l, tok, r),
                expected,
            } if expected.iter().any(|x| x == "\";\"") => {
                // A missing `;` at the end of a line: point where it belongs.
                let prev = self
                    .prev_end(*l)
                    .filter(|p| self.src.get(*p..*l).is_some_and(|gap| gap.contains('\n')));
                if let Some(prev) = prev {
                    return Some(
                        Diagnostic::error(
                            Code::Syntax,
                            Span::new(file, prev, prev),
                            format!("expected `;`, found {}", describe(tok)),
                        )
                        .label("`;` missing here")
                        .secondary(
                            Span::new(file, *l, *r),
                            if matches!(tok, Token::RBrace) {
                                "the block ends here"
                            } else {
                                "the next statement starts here"
                            },
                        )
                        .help("end every statement and declaration with `;`"),
                    );
                }
            }
            ParseError::UnrecognizedEof { location, expected } => {
                // Point at the end of the text and at the bracket that is still open.
                let mut open: Vec<(usize, usize)> = Vec::new();
                for (l, t, r) in self.toks {
                    match t {
                        Token::LBrace | Token::LParen | Token::LBracket => open.push((*l, *r)),
                        Token::RBrace | Token::RParen | Token::RBracket => {
                            open.pop();
                        }
                        _ => {}
                    }
                }
                let end = (*location).min(self.src.len());
                let d = Diagnostic::error(
                    Code::Syntax,
                    Span::new(file, end, end),
                    "unexpected end of file",
                )
                .label(format!("expected {}", expected_list(expected)));
                return Some(match open.last() {
                    Some(&(l, r)) => {
                        let b = self.src.get(l..r).unwrap_or("{");
                        let close = match b {
                            "(" => ")",
                            "[" => "]",
                            _ => "}",
                        };
                        d.secondary(Span::new(file, l, r), format!("this `{b}` is never closed"))
                            .help(format!("add the missing `{close}`"))
                    }
                    None => d.help(
                        "the file ends in the middle of a declaration; end it with `;` or its `{ ... }` block",
                    ),
                });
            }
            _ => {}
        }
        Some(parse_error(file, self.src.len(), e))
    }
}

fn parse_error(file: FileId, end: usize, e: ParseError<usize, Token<'_>, ()>) -> Diagnostic {
    match e {
        ParseError::UnrecognizedToken {
            token: (l, tok, r),
            expected,
        } => {
            let d = Diagnostic::error(
                Code::Syntax,
                Span::new(file, l, r),
                format!("unexpected {}", describe(&tok)),
            )
            .label(format!("expected {}", expected_list(&expected)));
            let has = |t: &str| expected.iter().any(|x| x.trim_matches('"') == t);
            let help = if expects_value(&expected) {
                "a value is missing here: write a number, a quantity such as `25 GB/s`, a name or a list"
            } else if has(";") {
                "a `;` may be missing at the end of the previous statement"
            } else if has(":") && has(".") {
                "a `:` may be missing: a link is written `link a <-> b : bandwidth;`"
            } else if has(":") {
                "a `:` may be missing: properties are written `name: value;`"
            } else {
                "see docs/language.md for the syntax of this construct"
            };
            d.help(help)
        }
        ParseError::UnrecognizedEof { location, expected } => Diagnostic::error(
            Code::Syntax,
            Span::new(file, location.min(end), end),
            "unexpected end of file",
        )
        .label(format!("expected {}", expected_list(&expected)))
        .help("the file ends in the middle of a declaration; close every `{` and end statements with `;`"),
        ParseError::InvalidToken { location } => Diagnostic::error(
            Code::InvalidToken,
            Span::new(file, location, location + 1),
            "invalid token",
        )
        .help("remove it"),
        ParseError::ExtraToken { token: (l, tok, r) } => Diagnostic::error(
            Code::Syntax,
            Span::new(file, l, r),
            format!("unexpected {}", describe(&tok)),
        )
        .help("remove it"),
        ParseError::User { .. } => Diagnostic::error(
            Code::Syntax,
            Span::new(file, end, end),
            "syntax error",
        )
        .help("see docs/language.md"),
    }
}

/// Parses a lone expression (for `--param name=value`); the error is a short message.
pub fn parse_expr(file: FileId, src: &str) -> Result<ast::Expr, String> {
    let mut tokens = Vec::new();
    for (l, tok, r) in lexer::lex(src) {
        match tok {
            Ok(Token::Comment(_)) => {}
            Ok(t) => tokens.push((l, t, r)),
            Err(()) => return Err(format!("unexpected character at byte {l}")),
        }
    }
    let mut recovered = Vec::new();
    let e = grammar::ExprParser::new()
        .parse(file, &mut recovered, tokens.into_iter().map(Ok::<_, ()>))
        .map_err(|e| parse_error(file, src.len(), e).message)?;
    if !recovered.is_empty() {
        return Err("syntax error".into());
    }
    Ok(e)
}
