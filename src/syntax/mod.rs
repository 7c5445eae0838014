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
    #[allow(clippy::all, clippy::pedantic, unused)]
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
            Err(()) => diags.push(lex_error(file, src, l, r)),
        }
    }
    let end = src.len();
    if let Some(d) = too_deep(file, &tokens) {
        diags.push(d);
        return (ast::File::default(), diags);
    }
    let mut recovered: Vec<ErrorRecovery<usize, Token<'_>, ()>> = Vec::new();
    let result =
        grammar::FileParser::new().parse(file, &mut recovered, tokens.into_iter().map(Ok::<_, ()>));
    for e in recovered {
        diags.push(parse_error(file, end, e.error));
    }
    let tree = match result {
        Ok(tree) => tree,
        Err(e) => {
            diags.push(parse_error(file, end, e));
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
                        Diagnostic::error(Code::Syntax, Span::new(file, *l, *r), format!("more than {MAX_OPERATORS} operators in one statement"))
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
    Diagnostic::error(
        Code::InvalidToken,
        span,
        format!("unexpected character `{}`", shown.escape_debug()),
    )
    .label("not part of the .coll language")
    .help("remove it; comments start with `//`")
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

fn expected_list(expected: &[String]) -> String {
    let shown: Vec<String> = expected
        .iter()
        .take(8)
        .map(|e| {
            let e = e.trim_matches('"');
            match e {
                "IDENT" => "a name".to_string(),
                "INT" | "DECIMAL" => "a number".to_string(),
                "QUANTITY" => "a quantity".to_string(),
                "STR" => "a string".to_string(),
                other => format!("`{}`", other.trim_start_matches('\\').trim_matches('"')),
            }
        })
        .collect();
    let mut seen = Vec::new();
    for s in shown {
        if !seen.contains(&s) {
            seen.push(s);
        }
    }
    let more = if expected.len() > 8 { ", ..." } else { "" };
    format!("{}{more}", seen.join(", "))
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
            let help = if expected.iter().any(|x| x == "\";\"") {
                "a `;` may be missing at the end of the previous statement"
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
