//! The lexer: one logos token enum for the whole language.
//!
//! Design notes:
//! - A number followed (optionally after spaces) by a unit (a word starting with a letter) is one
//!   token, [`Token::Quantity`]:
//!   `300 GB/s`, `0.4 ns/B`, `25Gbps`. The unit is any identifier, optionally `/identifier`; the
//!   elaborator knows which units exist and reports unknown ones (E0006). Because of this, `10 GB/n`
//!   is the unit `GB/n`: write `10 GB / n` to divide by a variable.
//! - Stage encodings such as `a4` or `c8m2` are plain identifiers; the schedule checker decodes them.
//! - Comments are tokens too ([`Token::Comment`]) so the formatter can keep them; the parser facade
//!   filters them out.
//! - Keywords are few; words such as `latency`, `parallel`, `all` are identifiers that only mean
//!   something in their position.

use logos::Logos;

#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n\f]+")]
pub enum Token<'s> {
    #[token("import")]
    Import,
    #[token("param")]
    Param,
    #[token("let")]
    Let,
    #[token("generator")]
    Generator,
    #[token("topology")]
    Topology,
    #[token("compute")]
    Compute,
    #[token("switch")]
    Switch,
    #[token("link")]
    Link,
    #[token("for")]
    For,
    #[token("in")]
    In,
    #[token("if")]
    If,
    #[token("else")]
    Else,
    #[token("use")]
    Use,
    #[token("as")]
    As,
    #[token("collective")]
    Collective,
    #[token("schedule")]
    Schedule,
    #[token("model")]
    Model,
    #[token("target")]
    Target,
    #[token("auto")]
    Auto,
    #[token("true")]
    True,
    #[token("false")]
    False,

    #[regex(r"[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice())]
    Ident(&'s str),
    #[regex(r"[0-9][0-9_]*", |lex| lex.slice())]
    Int(&'s str),
    #[regex(r"[0-9][0-9_]*\.[0-9][0-9_]*", |lex| lex.slice())]
    Decimal(&'s str),
    #[regex(
        r"[0-9][0-9_]*(\.[0-9][0-9_]*)?[ \t]*[A-Za-zµ][A-Za-z0-9_]*(/[A-Za-zµ][A-Za-z0-9_]*)?",
        |lex| lex.slice()
    )]
    Quantity(&'s str),
    #[regex(r#""([^"\\\n]|\\.)*""#, |lex| lex.slice())]
    Str(&'s str),
    #[regex(r"//[^\n]*", |lex| lex.slice(), allow_greedy = true)]
    Comment(&'s str),

    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token(",")]
    Comma,
    #[token(".")]
    Dot,
    #[token("..")]
    DotDot,
    #[token("=")]
    Eq,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,
    #[token("!")]
    Bang,
    #[token("<->")]
    BiArrow,
    #[token("->")]
    Arrow,
}

impl Token<'_> {
    /// How the token is written, for "expected one of ..." messages and the formatter.
    pub fn text(&self) -> &str {
        use Token::*;
        match self {
            Import => "import",
            Param => "param",
            Let => "let",
            Generator => "generator",
            Topology => "topology",
            Compute => "compute",
            Switch => "switch",
            Link => "link",
            For => "for",
            In => "in",
            If => "if",
            Else => "else",
            Use => "use",
            As => "as",
            Collective => "collective",
            Schedule => "schedule",
            Model => "model",
            Target => "target",
            Auto => "auto",
            True => "true",
            False => "false",
            Ident(s) | Int(s) | Decimal(s) | Quantity(s) | Str(s) | Comment(s) => s,
            LBrace => "{",
            RBrace => "}",
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            Semi => ";",
            Colon => ":",
            Comma => ",",
            Dot => ".",
            DotDot => "..",
            Eq => "=",
            EqEq => "==",
            NotEq => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            AndAnd => "&&",
            OrOr => "||",
            Bang => "!",
            BiArrow => "<->",
            Arrow => "->",
        }
    }

    pub fn is_keyword(&self) -> bool {
        use Token::*;
        matches!(
            self,
            Import
                | Param
                | Let
                | Generator
                | Topology
                | Compute
                | Switch
                | Link
                | For
                | In
                | If
                | Else
                | Use
                | As
                | Collective
                | Schedule
                | Model
                | Target
                | Auto
                | True
                | False
        )
    }
}

/// A token with its byte range, or a lexing error at a byte range.
pub type Spanned<'s> = (usize, Result<Token<'s>, ()>, usize);

/// Lexes `src` completely, including comments.
pub fn lex(src: &str) -> Vec<Spanned<'_>> {
    Token::lexer(src)
        .spanned()
        .map(|(t, r)| (r.start, t.map_err(|_| ()), r.end))
        .collect()
}

/// The keywords that open a top-level item, in the order completion offers them (and one of
/// which opens a `.coll` file after its comments).
pub const ITEM_KEYWORDS: &[&str] = &[
    "import",
    "param",
    "let",
    "generator",
    "topology",
    "collective",
    "schedule",
    "model",
    "target",
];

/// All keywords, for completion and documentation.
pub const KEYWORDS: &[&str] = &[
    "import",
    "param",
    "let",
    "generator",
    "topology",
    "compute",
    "switch",
    "link",
    "for",
    "in",
    "if",
    "else",
    "use",
    "as",
    "collective",
    "schedule",
    "model",
    "target",
    "auto",
    "true",
    "false",
];
