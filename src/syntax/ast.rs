//! The abstract syntax tree. Every node carries a [`Span`]; nothing here is evaluated. Error
//! recovery leaves [`Item::Error`], [`Stmt::Error`] and [`ExprKind::Error`] nodes where the parser
//! skipped input, so a partial tree survives for the editor server.

use crate::diag::Span;
use num_bigint::BigInt;
use num_rational::BigRational;

/// A name as written, with where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// One parsed file.
#[derive(Debug, Clone, Default)]
pub struct File {
    pub items: Vec<Item>,
}

/// What an `import` names: a standard library module (`import fat_tree;`) or a file relative to
/// the importing file (`import "lib/my.coll";`).
#[derive(Debug, Clone)]
pub enum ImportPath {
    Std(Ident),
    File(String, Span),
}

/// A top-level declaration.
#[derive(Debug, Clone)]
pub enum Item {
    Import {
        path: ImportPath,
        span: Span,
    },
    /// `param n: int = 8;` a value the command line may override.
    Param {
        name: Ident,
        ty: Option<Ident>,
        default: Expr,
        span: Span,
    },
    /// `let bw = 25 GB/s;`
    Let {
        name: Ident,
        value: Expr,
        span: Span,
    },
    /// `generator ring(n: int, bw: bandwidth = 25 GB/s) { ... }`
    Generator {
        name: Ident,
        params: Vec<ParamDecl>,
        body: Vec<Stmt>,
        span: Span,
    },
    /// `topology t { ... }` or `topology t = dgx_a100(clusters: 2);`
    Topology {
        name: Ident,
        body: TopologyBody,
        span: Span,
    },
    /// `collective allreduce { count: 1024; dtype: f32; op: sum; }`
    Collective {
        kind: Ident,
        props: Vec<Prop>,
        span: Span,
    },
    /// `schedule recursive_multiplying { stages: [a3, a4]; }` or `schedule ring;`
    Schedule {
        family: Ident,
        props: Vec<Prop>,
        span: Span,
    },
    /// `model net: loggp { L: 2500 ns; ... }`
    Model {
        name: Ident,
        kind: Ident,
        props: Vec<Prop>,
        span: Span,
    },
    /// `target msccl { channels: 2; }` or `target goal;`
    Target {
        kind: Ident,
        props: Vec<Prop>,
        span: Span,
    },
    /// Input the parser skipped.
    Error(Span),
}

impl Item {
    pub fn span(&self) -> Span {
        match self {
            Item::Import { span, .. }
            | Item::Param { span, .. }
            | Item::Let { span, .. }
            | Item::Generator { span, .. }
            | Item::Topology { span, .. }
            | Item::Collective { span, .. }
            | Item::Schedule { span, .. }
            | Item::Model { span, .. }
            | Item::Target { span, .. } => *span,
            Item::Error(span) => *span,
        }
    }
}

#[derive(Debug, Clone)]
pub enum TopologyBody {
    Block(Vec<Stmt>),
    Call(Call),
}

/// A generator parameter: `n: int`, `bw: bandwidth = 25 GB/s`.
#[derive(Debug, Clone)]
pub struct ParamDecl {
    pub name: Ident,
    pub ty: Option<Ident>,
    pub default: Option<Expr>,
    pub span: Span,
}

/// `key: value;` inside a collective, schedule, model or target block.
#[derive(Debug, Clone)]
pub struct Prop {
    pub key: Ident,
    pub value: Expr,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Compute,
    Switch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkDir {
    /// `<->`: one link each way.
    Both,
    /// `->`: one way only.
    Forward,
}

/// A statement inside a topology or generator body.
#[derive(Debug, Clone)]
pub enum Stmt {
    /// `compute gpu[8];`, `switch ib[2][4];`
    Node {
        kind: NodeKind,
        name: Ident,
        dims: Vec<Expr>,
        span: Span,
    },
    /// `link a <-> b : 25 GB/s, latency 1 us, parallel 2;`
    Link {
        from: Expr,
        dir: LinkDir,
        to: Expr,
        bandwidth: Expr,
        attrs: Vec<Attr>,
        span: Span,
    },
    For {
        var: Ident,
        iter: Expr,
        body: Vec<Stmt>,
        span: Span,
    },
    If {
        cond: Expr,
        then: Vec<Stmt>,
        els: Option<Vec<Stmt>>,
        span: Span,
    },
    Let {
        name: Ident,
        value: Expr,
        span: Span,
    },
    /// `use ring(8, 25 GB/s) as r;` instantiates a generator; its nodes are `r.<name>`.
    Use {
        call: Call,
        alias: Expr,
        span: Span,
    },
    Error(Span),
}

impl Stmt {
    pub fn span(&self) -> Span {
        match self {
            Stmt::Node { span, .. }
            | Stmt::Link { span, .. }
            | Stmt::For { span, .. }
            | Stmt::If { span, .. }
            | Stmt::Let { span, .. }
            | Stmt::Use { span, .. } => *span,
            Stmt::Error(span) => *span,
        }
    }
}

/// `latency 1 us` after a link's bandwidth.
#[derive(Debug, Clone)]
pub struct Attr {
    pub key: Ident,
    pub value: Expr,
    pub span: Span,
}

/// A call of a generator or built-in function.
#[derive(Debug, Clone)]
pub struct Call {
    pub callee: Ident,
    pub args: Vec<Arg>,
    pub span: Span,
}

/// A positional (`8`) or named (`n: 8`) argument.
#[derive(Debug, Clone)]
pub struct Arg {
    pub name: Option<Ident>,
    pub value: Expr,
}

#[derive(Debug, Clone)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    pub fn text(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Debug, Clone)]
pub enum ExprKind {
    /// An integer or decimal literal, exact (boxed to keep [`Expr`] small).
    Number(Box<BigRational>),
    /// `300 GB/s`: the number and the unit as written.
    Quantity(Box<QuantityLit>),
    Bool(bool),
    Str(String),
    Auto,
    Name(String),
    Index(Box<Expr>, Box<Expr>),
    Field(Box<Expr>, Ident),
    Call(Box<Call>),
    List(Vec<Expr>),
    /// `a..b`, half open.
    Range(Box<Expr>, Box<Expr>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Error,
}

/// A quantity literal: `300 GB/s` is the value 300 and the unit `GB/s`.
#[derive(Debug, Clone)]
pub struct QuantityLit {
    pub value: BigRational,
    pub unit: String,
    pub unit_span: Span,
}

/// Parses an integer or decimal literal (underscores allowed) exactly.
pub fn parse_number(text: &str) -> BigRational {
    if let Ok(n) = text.parse::<i64>() {
        return BigRational::from_integer(BigInt::from(n));
    }
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    let (int, frac) = match clean.split_once('.') {
        Some((i, f)) => (i.to_string(), f.to_string()),
        None => (clean, String::new()),
    };
    let digits = format!("{int}{frac}");
    let numer: BigInt = digits.parse().unwrap_or_default();
    let denom = num_traits::pow(BigInt::from(10), frac.len());
    BigRational::new(numer, denom)
}

/// Splits a quantity token (`300 GB/s`, `25Gbps`) into its number and unit parts; the unit's
/// byte offset within the token is returned too.
pub fn split_quantity(text: &str) -> (BigRational, &str, usize) {
    let num_end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '_' || c == '.'))
        .unwrap_or(text.len());
    let rest = &text[num_end..];
    let unit_start = num_end + (rest.len() - rest.trim_start().len());
    (
        parse_number(&text[..num_end]),
        &text[unit_start..],
        unit_start,
    )
}

/// The contents of a string literal token (quotes removed, `\"` and `\\` unescaped).
pub fn unquote(tok: &str) -> String {
    let inner = tok
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(tok);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(o) => out.push(o),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Builds a binary expression node (used by the grammar).
pub fn bin(file: crate::diag::FileId, l: usize, r: usize, op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr {
        kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
        span: Span::new(file, l, r),
    }
}
