//! The canonical formatter (`collc fmt`): the public entry point [`format_source`] and the token
//! preparation it needs.
//!
//! The formatter is a token-stream pretty printer, not an AST printer: the AST drops parentheses
//! and comments, the token stream keeps both. It works in three steps:
//!
//! 1. refuse files with lexical or syntax errors (the diagnostics of [`crate::syntax::parse`]);
//! 2. lex the file again *with* comments ([`crate::syntax::lexer::lex`]) and classify tokens
//!    ([`spacing`]: unary `-`, link attribute keys, the `:` of a link, bracket groups that must be
//!    laid out one element per line because a comment sits inside them);
//! 3. print ([`printer`]): spaces from the pair (previous token, next token), line breaks from
//!    `;`, `{`, `}` and comments, indentation from brace depth.
//!
//! The output depends only on the token sequence, the comments (and whether each one ended a line
//! of code or stood on its own line) and where blank lines separated statements, so formatting is
//! idempotent. The style rules are listed at the top of `printer.rs`.

mod printer;
mod spacing;

use crate::diag::{Diagnostic, FileId};
use crate::syntax::lexer::{Token, lex};

/// One token of the file (comments included) with its byte range.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tok<'s> {
    pub tok: Token<'s>,
    pub start: usize,
    pub end: usize,
}

/// Formats a file; refuses (with the syntax diagnostics) when it does not lex or parse.
pub fn format_source(file: FileId, src: &str) -> Result<String, Vec<Diagnostic>> {
    let (_, diags) = crate::syntax::parse(file, src);
    if !diags.is_empty() {
        return Err(diags);
    }
    // The file parsed, so every token lexed; a lexing error here would already be a diagnostic.
    let toks: Vec<Tok<'_>> = lex(src)
        .into_iter()
        .filter_map(|(start, tok, end)| tok.ok().map(|tok| Tok { tok, start, end }))
        .collect();
    Ok(printer::print(src, &toks))
}

/// The canonical spelling of a quantity token: the number, one space, the unit
/// (`25GB/s` and `25 \t GB/s` both become `25 GB/s`). Other tokens are written as lexed.
///
/// The split is the one `ast::split_quantity` makes. A token with no unit left after the number
/// (the lexer reads `1_000` as the number `1` with the unit `_000`) is kept as written.
pub fn normalize_quantity(text: &str) -> String {
    let num_end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '_' || c == '.'))
        .unwrap_or(text.len());
    let (num, unit) = text.split_at(num_end);
    let unit = unit.trim_start();
    if unit.is_empty() {
        return text.to_string();
    }
    format!("{num} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(src: &str) -> String {
        format_source(FileId(0), src).expect("parses")
    }

    #[test]
    fn quantities_are_normalised() {
        assert_eq!(normalize_quantity("25GB/s"), "25 GB/s");
        assert_eq!(normalize_quantity("0.4 \t ns/B"), "0.4 ns/B");
        assert_eq!(normalize_quantity("1_000 us"), "1_000 us");
        assert_eq!(normalize_quantity("1_000"), "1_000");
        assert_eq!(normalize_quantity("1_ns"), "1_ ns");
    }

    #[test]
    fn refuses_syntax_errors() {
        assert!(format_source(FileId(0), "let x = ;").is_err());
        assert!(format_source(FileId(0), "let x = 1 $;").is_err());
    }

    #[test]
    fn empty_and_comment_only_files() {
        assert_eq!(fmt(""), "");
        assert_eq!(fmt("  \n\n"), "");
        assert_eq!(fmt("// a  \n\n\n// b\n"), "// a\n\n// b\n");
    }

    #[test]
    fn basic_layout() {
        assert_eq!(
            fmt("import ring;let x=-1;param n:int=8 ;"),
            "import ring;\nlet x = -1;\nparam n: int = 8;\n"
        );
        assert_eq!(
            fmt("topology t{for i in 0 .. n{link a [i]<->b . c[ j ]:25GB/s,latency 1 us;}}"),
            "topology t {\n    for i in 0..n {\n        link a[i] <-> b.c[j] : 25 GB/s, latency 1 us;\n    }\n}\n"
        );
    }

    #[test]
    fn unary_and_binary_minus() {
        assert_eq!(fmt("let x=a- -b;"), "let x = a - -b;\n");
        assert_eq!(fmt("let x=f(-1,!done)[0];"), "let x = f(-1, !done)[0];\n");
        assert_eq!(
            fmt("let x=gpu[c][(i+1)%8];"),
            "let x = gpu[c][(i + 1) % 8];\n"
        );
    }

    #[test]
    fn link_attribute_values_start_expressions() {
        assert_eq!(
            fmt("topology t { link a->b:1 GB/s,latency -1 us,parallel (2),x [1]; }"),
            "topology t {\n    link a -> b : 1 GB/s, latency -1 us, parallel (2), x [1];\n}\n"
        );
    }

    #[test]
    fn else_chains_and_empty_blocks() {
        assert_eq!(
            fmt("generator g(){if a{}else if b{let x=1;}\nelse{}}"),
            "generator g() {\n    if a {} else if b {\n        let x = 1;\n    } else {}\n}\n"
        );
    }

    #[test]
    fn comments_stay_in_place() {
        let src = "let x = 1; // one\n\n\n   // own line\nschedule ring { // open\n\n  stages: [a2]; // s\n\n}\n";
        assert_eq!(
            fmt(src),
            "let x = 1; // one\n\n// own line\nschedule ring { // open\n    stages: [a2]; // s\n}\n"
        );
    }

    #[test]
    fn comment_inside_a_list_breaks_it() {
        let src = "let s = [a2, // first\n a4];";
        assert_eq!(fmt(src), "let s = [\n    a2, // first\n    a4\n];\n");
    }

    #[test]
    fn comment_inside_an_expression_continues_the_line() {
        let src = "let s = 1 + // first\n 2;";
        assert_eq!(fmt(src), "let s = 1 + // first\n    2;\n");
    }
}
