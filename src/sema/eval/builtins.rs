//! The built-in functions (`min`, `max`, `abs`, `floor`, `ceil`, `pow`, `len`, `first`): argument checks,
//! their evaluation, and the usage line each diagnostic shows.

use super::{MAX_BITS, base_unit, example_unit};
use crate::diag::{Code, Diagnostic, Span};
use crate::sema::elab::Elab;
use crate::sema::units::{Dim, Quantity};
use crate::sema::value::Value;
use crate::syntax::ast::Call;
use num_traits::Signed;

impl Elab<'_> {
    pub(super) fn call_builtin(&mut self, c: &Call) -> Option<Value> {
        let name = c.callee.name.as_str();
        if self.generators.contains_key(name) {
            self.err(
                Diagnostic::error(
                    Code::TypeMismatch,
                    c.span,
                    format!("`{name}` is a generator, not a function"),
                )
                .label("generators build topology")
                .help(format!(
                    "instantiate it with `use {name}(...) as name;` inside a topology, or `topology t = {name}(...);`"
                )),
            );
            return None;
        }
        if !BUILTINS.contains(&name) {
            let message = format!("unknown function `{name}`");
            if self.seen_error(Code::UnknownName, c.callee.span, &message) {
                return None;
            }
            let d = Diagnostic::error(Code::UnknownName, c.callee.span, message)
                .label("no such function or generator");
            let d = match crate::sema::suggest::closest(
                name,
                BUILTINS
                    .iter()
                    .copied()
                    .chain(self.generators.keys().map(|s| s.as_str())),
            ) {
                Some(s) => d.help(format!(
                    "did you mean `{s}`? built-in functions: {}",
                    BUILTINS.join(", ")
                )),
                None => d.help(format!(
                    "built-in functions: {}; generators come from `import`",
                    BUILTINS.join(", ")
                )),
            };
            self.err(d);
            return None;
        }
        if let Some(a) = c.args.iter().find(|a| a.name.is_some()) {
            let span = a.name.as_ref().map(|n| n.span).unwrap_or(c.span);
            self.err(
                Diagnostic::error(
                    Code::BadArguments,
                    span,
                    format!("`{name}` takes no named arguments"),
                )
                .label("named argument")
                .help("pass the values positionally"),
            );
            return None;
        }
        let mut args = Vec::new();
        for a in &c.args {
            args.push((self.eval(&a.value)?, a.value.span));
        }
        let arity_err = |me: &mut Self, want: &str| {
            me.err(
                Diagnostic::error(
                    Code::BadArguments,
                    c.span,
                    format!("`{name}` takes {want}, given {}", args.len()),
                )
                .label("wrong number of arguments")
                .help(format!("call it as {}", builtin_usage(name))),
            );
            None
        };
        let num = |me: &mut Self, v: &Value, span: Span| -> Option<Quantity> {
            match v {
                Value::Num(q) => Some(q.clone()),
                other => {
                    me.err(
                        Diagnostic::error(
                            Code::TypeMismatch,
                            span,
                            format!(
                                "`{name}` needs numbers or quantities, found {}",
                                other.type_name()
                            ),
                        )
                        .label("not a number")
                        .help(format!("call it as {}", builtin_usage(name))),
                    );
                    None
                }
            }
        };
        match name {
            "min" | "max" => {
                if args.is_empty() {
                    return arity_err(self, "at least one argument");
                }
                let mut best = num(self, &args[0].0, args[0].1)?;
                for (v, s) in &args[1..] {
                    let q = num(self, v, *s)?;
                    if q.dim != best.dim {
                        self.err(
                            Diagnostic::error(
                                Code::DimensionMismatch,
                                *s,
                                format!(
                                    "`{name}` cannot compare a {} and a {}",
                                    best.dim.name(),
                                    q.dim.name()
                                ),
                            )
                            .label("different dimension")
                            .help("all arguments must have the same dimension"),
                        );
                        return None;
                    }
                    let better = if name == "min" {
                        q.value < best.value
                    } else {
                        q.value > best.value
                    };
                    if better {
                        best = q;
                    }
                }
                Some(Value::Num(best))
            }
            "abs" | "floor" | "ceil" => {
                if args.len() != 1 {
                    return arity_err(self, "one argument");
                }
                let q = num(self, &args[0].0, args[0].1)?;
                if name != "abs" && q.dim != Dim::NONE {
                    self.err(
                        Diagnostic::error(
                            Code::DimensionMismatch,
                            args[0].1,
                            format!(
                                "`{name}` of a {} would round in base units ({})",
                                q.dim.name(),
                                base_unit(q.dim)
                            ),
                        )
                        .label(format!("this is a {}", q.dim.name()))
                        .help(format!(
                            "divide by the unit to round in first, e.g. `{name}(x / {})`",
                            example_unit(q.dim)
                        )),
                    );
                    return None;
                }
                let value = match name {
                    "abs" => q.value.abs(),
                    "floor" => q.value.floor(),
                    _ => q.value.ceil(),
                };
                Some(Value::Num(Quantity { value, dim: q.dim }))
            }
            "pow" => {
                if args.len() != 2 {
                    return arity_err(self, "two arguments");
                }
                let q = num(self, &args[0].0, args[0].1)?;
                let e = self.expect_int(args[1].0.clone(), args[1].1)?;
                if !(0..=64).contains(&e) || (q.dim != Dim::NONE && e != 1) {
                    self.err(
                        Diagnostic::error(
                            Code::Arithmetic,
                            args[1].1,
                            format!("exponent {e} is not supported"),
                        )
                        .label("exponent out of range")
                        .help("`pow` takes a plain number and an exponent from 0 to 64"),
                    );
                    return None;
                }
                let bits = q.value.numer().bits().max(q.value.denom().bits());
                if bits.saturating_mul(e as u64) > MAX_BITS {
                    self.err(
                        Diagnostic::error(Code::Arithmetic, c.span, "the result of `pow` is too large")
                            .label(format!("more than {MAX_BITS} bits"))
                            .help("numbers in .coll files must stay below 2^65536 in numerator and denominator"),
                    );
                    return None;
                }
                Some(Value::Num(Quantity {
                    value: num_traits::pow(q.value, e as usize),
                    dim: q.dim,
                }))
            }
            "len" => {
                if args.len() != 1 {
                    return arity_err(self, "one argument");
                }
                match &args[0].0 {
                    Value::List(v) => Some(Value::int(v.len() as i64)),
                    Value::Nodes(v) => Some(Value::int(v.len() as i64)),
                    Value::Range(a, b) => {
                        let n = crate::sema::value::range_len(*a, *b);
                        match i64::try_from(n) {
                            Ok(n) => Some(Value::int(n)),
                            Err(_) => {
                                self.err(
                                    Diagnostic::error(
                                        Code::Arithmetic,
                                        args[0].1,
                                        format!("the range holds {n} integers, more than an integer can count"),
                                    )
                                    .label("too long to count")
                                    .help(format!("integers run from {} to {}; use bounds closer together", i64::MIN, i64::MAX)),
                                );
                                None
                            }
                        }
                    }
                    Value::Str(s) => Some(Value::int(s.chars().count() as i64)),
                    other => {
                        self.err(
                            Diagnostic::error(
                                Code::TypeMismatch,
                                args[0].1,
                                format!(
                                    "`len` needs a list, range, string or node array, found {}",
                                    other.type_name()
                                ),
                            )
                            .label("has no length")
                            .help("call it as len(xs)"),
                        );
                        None
                    }
                }
            }
            "first" => {
                if args.len() != 2 {
                    return arity_err(self, "two arguments");
                }
                let n = self.expect_int(args[1].0.clone(), args[1].1)?;
                let len = match &args[0].0 {
                    Value::List(v) => v.len(),
                    Value::Nodes(v) => v.len(),
                    other => {
                        self.err(
                            Diagnostic::error(
                                Code::TypeMismatch,
                                args[0].1,
                                format!(
                                    "`first` takes from a list or node array, found {}",
                                    other.type_name()
                                ),
                            )
                            .label("nothing to take from")
                            .help("call it as first(xs, n), e.g. `first(host, 64)` for the first 64 hosts"),
                        );
                        return None;
                    }
                };
                let Some(n) = usize::try_from(n).ok().filter(|&n| n <= len) else {
                    self.err(
                        Diagnostic::error(
                            Code::BadValue,
                            args[1].1,
                            format!("cannot take the first {n} of {len}"),
                        )
                        .label(format!("not from 0 to {len}"))
                        .help(format!("take from 0 to {len}, e.g. `min(n, {len})`")),
                    );
                    return None;
                };
                let mut taken = args.swap_remove(0).0;
                match &mut taken {
                    Value::List(v) => v.truncate(n),
                    Value::Nodes(v) => v.truncate(n),
                    _ => {}
                }
                Some(taken)
            }
            _ => None,
        }
    }
}

/// Built-in functions usable in expressions.
pub const BUILTINS: &[&str] = &["min", "max", "abs", "floor", "ceil", "pow", "len", "first"];

fn builtin_usage(name: &str) -> &'static str {
    match name {
        "min" => "min(a, b, ...)",
        "max" => "max(a, b, ...)",
        "abs" => "abs(x)",
        "floor" => "floor(x)",
        "ceil" => "ceil(x)",
        "pow" => "pow(x, n)",
        "first" => "first(xs, n)",
        _ => "len(xs)",
    }
}
