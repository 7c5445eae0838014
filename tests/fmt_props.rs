//! Property tests of the formatter (`collc::fmt`) on generated programs.
//!
//! The generator builds random valid .coll programs from the grammar (every item and statement
//! kind, expressions of every precedence level with the parentheses they need, link attributes,
//! `if`/`else if` chains, trailing commas), as a list of token texts, then renders them with
//! random whitespace and comments (trailing and on their own lines) between tokens.
//!
//! Properties: the formatted output parses, has the same tokens (quantities compared in their
//! normalised spelling) and the same comments in the same order, is a fixed point of the
//! formatter, does not depend on the original spacing, and keeps the basic layout invariants.

use collc::diag::FileId;
use collc::fmt::{format_source, normalize_quantity};
use collc::syntax::lexer::{Token, lex};
use collc::syntax::parse;
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;

const IDENTS: &[&str] = &[
    "a", "b", "gpu", "n", "i", "x1", "latency", "parallel", "c8m2", "ring", "_t",
];
const LEAVES: &[&str] = &[
    "a",
    "gpu",
    "n",
    "latency",
    "0",
    "1",
    "42",
    "1_000",
    "2.5",
    "0.25",
    "25 GB/s",
    "25GB/s",
    "1 us",
    "0.4 ns/B",
    "300  Gbps",
    "8\tns",
    "\"x.coll\"",
    "\"a b\"",
    "\"q\\\"q\"",
    "true",
    "false",
    "auto",
];
const BINOPS: &[&str] = &[
    "||", "&&", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%",
];
const COMMENTS: &[&str] = &[
    "// c",
    "//",
    "// x // y",
    "// trailing   ",
    "//\ttab",
    "// ünï {",
];

#[derive(Debug, Clone)]
enum E {
    Leaf(&'static str),
    Un(&'static str, Box<E>),
    Bin(&'static str, Box<E>, Box<E>),
    Range(Box<E>, Box<E>),
    Index(Box<E>, Box<E>),
    Field(Box<E>, &'static str),
    Call(&'static str, Vec<(Option<&'static str>, E)>, bool),
    List(Vec<E>, bool),
    Paren(Box<E>),
}

fn op_level(op: &str) -> u8 {
    match op {
        "||" => 1,
        "&&" => 2,
        "==" | "!=" | "<" | "<=" | ">" | ">=" => 3,
        "+" | "-" => 5,
        _ => 6,
    }
}

/// Precedence level of an expression: 1 `||` .. 4 range .. 7 unary, 8 postfix, 9 atom.
fn level(e: &E) -> u8 {
    match e {
        E::Bin(op, ..) => op_level(op),
        E::Range(..) => 4,
        E::Un(..) => 7,
        E::Index(..) | E::Field(..) => 8,
        _ => 9,
    }
}

fn render_at(e: &E, min: u8, out: &mut Vec<String>) {
    if level(e) < min {
        out.push("(".into());
        render(e, out);
        out.push(")".into());
    } else {
        render(e, out);
    }
}

fn render(e: &E, out: &mut Vec<String>) {
    match e {
        E::Leaf(s) => out.push((*s).into()),
        E::Un(op, a) => {
            out.push((*op).into());
            render_at(a, 7, out);
        }
        E::Bin(op, a, b) => {
            let p = op_level(op);
            render_at(a, if p == 3 { p + 1 } else { p }, out);
            out.push((*op).into());
            render_at(b, p + 1, out);
        }
        E::Range(a, b) => {
            render_at(a, 5, out);
            out.push("..".into());
            render_at(b, 5, out);
        }
        E::Index(a, i) => {
            render_at(a, 8, out);
            out.push("[".into());
            render(i, out);
            out.push("]".into());
        }
        E::Field(a, f) => {
            render_at(a, 8, out);
            out.push(".".into());
            out.push((*f).into());
        }
        E::Call(f, args, trailing) => {
            out.push((*f).into());
            out.push("(".into());
            for (k, (name, v)) in args.iter().enumerate() {
                if k > 0 {
                    out.push(",".into());
                }
                if let Some(n) = name {
                    out.push((*n).into());
                    out.push(":".into());
                }
                render(v, out);
            }
            if *trailing && !args.is_empty() {
                out.push(",".into());
            }
            out.push(")".into());
        }
        E::List(items, trailing) => {
            out.push("[".into());
            for (k, v) in items.iter().enumerate() {
                if k > 0 {
                    out.push(",".into());
                }
                render(v, out);
            }
            if *trailing && !items.is_empty() {
                out.push(",".into());
            }
            out.push("]".into());
        }
        E::Paren(a) => {
            out.push("(".into());
            render(a, out);
            out.push(")".into());
        }
    }
}

fn ident() -> impl Strategy<Value = &'static str> {
    select(IDENTS)
}

fn expr_tree() -> BoxedStrategy<E> {
    select(LEAVES)
        .prop_map(E::Leaf)
        .prop_recursive(3, 20, 3, |inner| {
            let b = |e: E| Box::new(e);
            prop_oneof![
                (select(&["-", "!"][..]), inner.clone()).prop_map(move |(o, e)| E::Un(o, b(e))),
                (select(BINOPS), inner.clone(), inner.clone()).prop_map(move |(o, x, y)| E::Bin(
                    o,
                    b(x),
                    b(y)
                )),
                (inner.clone(), inner.clone()).prop_map(move |(x, y)| E::Range(b(x), b(y))),
                (inner.clone(), inner.clone()).prop_map(move |(x, y)| E::Index(b(x), b(y))),
                (inner.clone(), ident()).prop_map(move |(x, f)| E::Field(b(x), f)),
                (
                    ident(),
                    vec((option::of(ident()), inner.clone()), 0..3),
                    any::<bool>()
                )
                    .prop_map(|(f, a, t)| E::Call(f, a, t)),
                (vec(inner.clone(), 0..4), any::<bool>()).prop_map(|(v, t)| E::List(v, t)),
                inner.prop_map(move |e| E::Paren(b(e))),
            ]
        })
        .boxed()
}

/// Tokens of an expression at least at precedence level `min`.
fn expr_at(min: u8) -> BoxedStrategy<Vec<String>> {
    expr_tree()
        .prop_map(move |e| {
            let mut out = Vec::new();
            render_at(&e, min, &mut out);
            out
        })
        .boxed()
}

fn expr() -> BoxedStrategy<Vec<String>> {
    expr_at(0)
}

fn call() -> BoxedStrategy<Vec<String>> {
    (
        ident(),
        vec((option::of(ident()), expr()), 0..3),
        any::<bool>(),
    )
        .prop_map(|(f, args, trailing)| {
            let mut out = vec![f.to_string(), "(".into()];
            for (k, (name, v)) in args.iter().enumerate() {
                if k > 0 {
                    out.push(",".into());
                }
                if let Some(n) = name {
                    out.extend([n.to_string(), ":".into()]);
                }
                out.extend(v.iter().cloned());
            }
            if trailing && !args.is_empty() {
                out.push(",".into());
            }
            out.push(")".into());
            out
        })
        .boxed()
}

fn toks(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

fn braced(inner: Vec<Vec<String>>) -> Vec<String> {
    let mut out = vec!["{".to_string()];
    out.extend(inner.into_iter().flatten());
    out.push("}".into());
    out
}

fn simple_stmt() -> BoxedStrategy<Vec<String>> {
    let node = (
        select(&["compute", "switch"][..]),
        ident(),
        vec(expr(), 0..3),
    )
        .prop_map(|(kw, name, dims)| {
            let mut out = toks(&[kw, name]);
            for d in dims {
                out.push("[".into());
                out.extend(d);
                out.push("]".into());
            }
            out.push(";".into());
            out
        });
    let attrs = vec((ident(), expr()), 0..3);
    let link = (
        expr_at(8),
        select(&["<->", "->"][..]),
        expr_at(8),
        expr(),
        attrs,
    )
        .prop_map(|(from, dir, to, bw, attrs)| {
            let mut out = vec!["link".to_string()];
            out.extend(from);
            out.push(dir.into());
            out.extend(to);
            out.push(":".into());
            out.extend(bw);
            for (k, v) in attrs {
                out.extend([",".to_string(), k.to_string()]);
                out.extend(v);
            }
            out.push(";".into());
            out
        });
    let let_ = (ident(), expr()).prop_map(|(n, v)| {
        let mut out = toks(&["let", n, "="]);
        out.extend(v);
        out.push(";".into());
        out
    });
    let use_ = (call(), expr_at(8)).prop_map(|(c, alias)| {
        let mut out = vec!["use".to_string()];
        out.extend(c);
        out.push("as".into());
        out.extend(alias);
        out.push(";".into());
        out
    });
    prop_oneof![node, link, let_, use_].boxed()
}

fn stmt() -> BoxedStrategy<Vec<String>> {
    simple_stmt()
        .prop_recursive(3, 12, 3, |inner| {
            let block = vec(inner.clone(), 0..3).prop_map(braced);
            let for_ = (ident(), expr(), block.clone()).prop_map(|(v, it, body)| {
                let mut out = toks(&["for", v, "in"]);
                out.extend(it);
                out.extend(body);
                out
            });
            let if_ = (
                expr(),
                block.clone(),
                vec((expr(), block.clone()), 0..2),
                option::of(block),
            )
                .prop_map(|(c, then, elifs, els)| {
                    let mut out = vec!["if".to_string()];
                    out.extend(c);
                    out.extend(then);
                    for (c, b) in elifs {
                        out.extend(toks(&["else", "if"]));
                        out.extend(c);
                        out.extend(b);
                    }
                    if let Some(b) = els {
                        out.push("else".into());
                        out.extend(b);
                    }
                    out
                });
            prop_oneof![inner, for_, if_]
        })
        .boxed()
}

fn props() -> BoxedStrategy<Vec<String>> {
    prop_oneof![
        Just(toks(&[";"])),
        // `model` is a keyword that is also a property name (`model: m;`).
        vec((prop_oneof![ident(), Just("model")], expr()), 0..3).prop_map(|ps| {
            braced(
                ps.into_iter()
                    .map(|(k, v)| {
                        let mut out = toks(&[k, ":"]);
                        out.extend(v);
                        out.push(";".into());
                        out
                    })
                    .collect(),
            )
        }),
    ]
    .boxed()
}

fn item() -> BoxedStrategy<Vec<String>> {
    let body = || vec(stmt(), 0..4).prop_map(braced);
    let param_decl = (ident(), option::of(ident()), option::of(expr())).prop_map(|(n, t, d)| {
        let mut out = vec![n.to_string()];
        if let Some(t) = t {
            out.extend(toks(&[":", t]));
        }
        if let Some(d) = d {
            out.push("=".into());
            out.extend(d);
        }
        out
    });
    prop_oneof![
        ident().prop_map(|n| toks(&["import", n, ";"])),
        Just(toks(&["import", "\"lib/x.coll\"", ";"])),
        (ident(), option::of(ident()), expr()).prop_map(|(n, t, v)| {
            let mut out = toks(&["param", n]);
            if let Some(t) = t {
                out.extend(toks(&[":", t]));
            }
            out.push("=".into());
            out.extend(v);
            out.push(";".into());
            out
        }),
        (ident(), expr()).prop_map(|(n, v)| {
            let mut out = toks(&["let", n, "="]);
            out.extend(v);
            out.push(";".into());
            out
        }),
        (ident(), vec(param_decl, 0..3), any::<bool>(), body()).prop_map(|(n, ps, t, b)| {
            let mut out = toks(&["generator", n, "("]);
            let count = ps.len();
            for (k, p) in ps.into_iter().enumerate() {
                if k > 0 {
                    out.push(",".into());
                }
                out.extend(p);
            }
            if t && count > 0 {
                out.push(",".into());
            }
            out.push(")".into());
            out.extend(b);
            out
        }),
        (ident(), body()).prop_map(|(n, b)| {
            let mut out = toks(&["topology", n]);
            out.extend(b);
            out
        }),
        (ident(), call()).prop_map(|(n, c)| {
            let mut out = toks(&["topology", n, "="]);
            out.extend(c);
            out.push(";".into());
            out
        }),
        (ident(), props()).prop_map(|(k, p)| [toks(&["collective", k]), p].concat()),
        (select(&["ring", "auto", "c8m2"][..]), props()).prop_map(|(f, p)| [
            toks(&["schedule", f]),
            p
        ]
        .concat()),
        (ident(), ident(), props()).prop_map(|(n, k, p)| [toks(&["model", n, ":", k]), p].concat()),
        (ident(), props()).prop_map(|(k, p)| [toks(&["target", k]), p].concat()),
    ]
    .boxed()
}

fn program() -> BoxedStrategy<Vec<String>> {
    vec(item(), 0..6)
        .prop_map(|items| items.into_iter().flatten().collect())
        .boxed()
}

/// A separator between two tokens: whitespace, or whitespace with a comment.
fn separator() -> BoxedStrategy<String> {
    let ws = select(
        &[
            "", " ", "  ", "\n", "\n\n", "\n\n\n  ", "\t", "\r\n", " \n \n ",
        ][..],
    );
    let comment = (
        select(&["", " ", "\n", "\n\n  ", "   "][..]),
        select(COMMENTS),
        select(&["\n", "\n\n", "\r\n", "\n    "][..]),
    )
        .prop_map(|(a, c, b)| format!("{a}{c}{b}"));
    prop_oneof![6 => ws.prop_map(String::from), 1 => comment].boxed()
}

/// Whitespace-only separators without blank lines (layout-neutral for the formatter).
fn plain_separator() -> BoxedStrategy<String> {
    select(&["", " ", "\n", "\t", "   ", " \r\n "][..])
        .prop_map(String::from)
        .boxed()
}

/// The comparable form of the non-comment tokens of `src`.
fn sig(src: &str) -> Vec<String> {
    lex(src)
        .into_iter()
        .filter_map(|(_, t, _)| match t {
            Ok(Token::Comment(_)) => None,
            Ok(Token::Quantity(q)) => Some(format!("Quantity({})", normalize_quantity(q))),
            Ok(t) => Some(format!("{t:?}")),
            Err(()) => Some("<error>".into()),
        })
        .collect()
}

fn comments(src: &str) -> Vec<String> {
    lex(src)
        .into_iter()
        .filter_map(|(_, t, _)| match t {
            Ok(Token::Comment(c)) => Some(c.trim_end().to_string()),
            _ => None,
        })
        .collect()
}

/// Joins tokens with separators; an empty separator (or one starting with a comment) that
/// would change the tokens is widened to a space.
fn join(tokens: &[String], seps: &[String]) -> String {
    let expected = sig(&tokens.join(" "));
    let build = |widen: bool| {
        let mut s = String::new();
        for (k, t) in tokens.iter().enumerate() {
            let sep = &seps[k % seps.len()];
            if k > 0 && widen && (sep.is_empty() || sep.starts_with("//")) {
                s.push(' ');
            }
            s.push_str(sep);
            s.push_str(t);
        }
        if let Some(last) = seps.last() {
            s.push_str(last);
        }
        s
    };
    let tight = build(false);
    if sig(&tight) == expected {
        tight
    } else {
        build(true)
    }
}

fn program_with(sep: fn() -> BoxedStrategy<String>) -> BoxedStrategy<(Vec<String>, String)> {
    program()
        .prop_flat_map(move |t| {
            let n = t.len() + 1;
            (Just(t), vec(sep(), n))
        })
        .prop_map(|(t, seps)| {
            let src = join(&t, &seps);
            (t, src)
        })
        .boxed()
}

fn fmt(src: &str) -> String {
    match format_source(FileId(0), src) {
        Ok(s) => s,
        Err(d) => panic!("formatter refused:\n{src}\n{d:?}"),
    }
}

/// 256 cases by default; `FMT_PROPTEST_CASES=10000` for a longer run.
fn config() -> ProptestConfig {
    let cases = std::env::var("FMT_PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(256);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// Formatting twice changes nothing, and the result parses.
    #[test]
    fn idempotent_and_parses((_t, src) in program_with(separator)) {
        let (_, d) = parse(FileId(0), &src);
        prop_assert!(d.is_empty(), "generator produced an invalid program:\n{}\n{:?}", src, d);
        let once = fmt(&src);
        let (_, d) = parse(FileId(0), &once);
        prop_assert!(d.is_empty(), "formatted output does not parse:\n{}\n{:?}", once, d);
        let twice = fmt(&once);
        prop_assert_eq!(&twice, &once, "not idempotent; input:\n{}", src);
    }

    /// Tokens (quantities normalised) and comment texts are kept, in order.
    #[test]
    fn keeps_tokens_and_comments((t, src) in program_with(separator)) {
        let out = fmt(&src);
        prop_assert_eq!(sig(&out), sig(&t.join(" ")));
        prop_assert_eq!(comments(&out), comments(&src));
        // Layout invariants.
        prop_assert!(out.is_empty() || out.ends_with('\n') && !out.ends_with("\n\n"));
        prop_assert!(!out.starts_with('\n'));
        prop_assert!(!out.contains("\n\n\n"), "two blank lines:\n{}", out);
        prop_assert!(out.lines().all(|l| l == l.trim_end()), "trailing whitespace:\n{}", out);
        prop_assert!(!out.contains('\r'));
    }

    /// Without comments or blank lines, the output depends only on the tokens.
    #[test]
    fn ignores_original_spacing(
        (t, seps_a, seps_b) in program().prop_flat_map(|t| {
            let n = t.len() + 1;
            (Just(t), vec(plain_separator(), n), vec(plain_separator(), n))
        })
    ) {
        let a = fmt(&join(&t, &seps_a));
        let b = fmt(&join(&t, &seps_b));
        prop_assert_eq!(a, b);
    }
}
