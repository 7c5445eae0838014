//! Expression evaluation with exact arithmetic and dimension checking.
//!
//! Every error becomes a diagnostic and evaluation returns `None`; callers skip what depended on
//! the failed value, so one mistake yields one diagnostic, not a cascade. Names resolve to local
//! variables (innermost scope first), then globals (`let` and `param`), then node arrays of the
//! topology being built (see [`super::nodes`]).

use super::elab::Elab;
use super::units::{Dim, Quantity, unit};
use super::value::Value;
use crate::diag::{Code, Diagnostic, Span};
use crate::syntax::ast::{BinOp, Call, Expr, ExprKind, UnOp};
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive, Zero};

impl Elab<'_> {
    pub(crate) fn lookup_var(&self, name: &str) -> Option<&Value> {
        for scope in self.scopes.iter().rev() {
            if let Some(v) = scope.get(name) {
                return Some(v);
            }
        }
        self.globals.get(name).map(|(v, _)| v)
    }

    /// Records a diagnostic. Inside a generator, a second label points at the outermost call
    /// site, so an error in a library generator also shows where the user instantiated it.
    pub(crate) fn err(&mut self, d: Diagnostic) {
        let mut d = d;
        if let Some((site, name)) = self.sites.first() {
            let inside = site.file == d.primary.span.file
                && site.start <= d.primary.span.start
                && d.primary.span.end <= site.end;
            if !inside && !d.secondary.iter().any(|l| l.span == *site) {
                d = d.secondary(*site, format!("in the `{name}` instantiated here"));
            }
        }
        self.diags.push(d);
    }

    pub(crate) fn eval(&mut self, e: &Expr) -> Option<Value> {
        match &e.kind {
            ExprKind::Number(n) => Some(Value::Num(Quantity::number((**n).clone()))),
            ExprKind::Quantity(lit) => match unit(&lit.unit) {
                Some((factor, dim)) => Some(Value::Num(Quantity {
                    value: super::units::rat_mul(&lit.value, &factor),
                    dim,
                })),
                None => {
                    let d = Diagnostic::error(
                        Code::UnknownUnit,
                        lit.unit_span,
                        format!("unknown unit `{}`", lit.unit),
                    )
                    .label("not a unit collc knows");
                    let d = d.help(super::units::unknown_unit_help(
                        &super::units::fmt_rational(&lit.value),
                        &lit.unit,
                    ));
                    self.err(d);
                    None
                }
            },
            ExprKind::Bool(b) => Some(Value::Bool(*b)),
            ExprKind::Str(s) => Some(Value::Str(s.clone())),
            ExprKind::Auto => Some(Value::Auto),
            ExprKind::Name(n) => {
                if let Some(v) = self.lookup_var(n) {
                    return Some(v.clone());
                }
                self.eval_node_ref(e)
            }
            ExprKind::Index(base, idx) => {
                if self.path_root_is_var(base) {
                    let b = self.eval(base)?;
                    let i = self.eval(idx)?;
                    self.index(b, i, idx.span, e.span)
                } else {
                    self.eval_node_ref(e)
                }
            }
            ExprKind::Field(..) => self.eval_node_ref(e),
            ExprKind::Call(c) => self.call_builtin(c),
            ExprKind::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                let mut ok = true;
                for it in items {
                    match self.eval(it) {
                        Some(v) => out.push(v),
                        None => ok = false,
                    }
                }
                ok.then_some(Value::List(out))
            }
            ExprKind::Range(a, b) => {
                let (a, b) = (self.eval_int(a)?, self.eval_int(b)?);
                Some(Value::Range(a, b))
            }
            ExprKind::Unary(op, inner) => {
                let v = self.eval(inner)?;
                match (op, v) {
                    (UnOp::Neg, Value::Num(q)) => Some(Value::Num(Quantity {
                        value: -q.value,
                        dim: q.dim,
                    })),
                    (UnOp::Not, Value::Bool(b)) => Some(Value::Bool(!b)),
                    (op, v) => {
                        let want = if *op == UnOp::Neg {
                            "a number or quantity"
                        } else {
                            "a bool"
                        };
                        self.err(
                            Diagnostic::error(
                                Code::TypeMismatch,
                                inner.span,
                                format!("expected {want}, found {}", v.type_name()),
                            )
                            .label(format!("this is {}", v.type_name()))
                            .help("check the operand of the unary operator"),
                        );
                        None
                    }
                }
            }
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
                // Short-circuit: the right side is only evaluated when it decides the result.
                let va = self.eval(a)?;
                match (op, &va) {
                    (BinOp::And, Value::Bool(false)) => return Some(Value::Bool(false)),
                    (BinOp::Or, Value::Bool(true)) => return Some(Value::Bool(true)),
                    _ => {}
                }
                let vb = self.eval(b)?;
                self.binary(*op, va, vb, a.span, b.span, e.span)
            }
            ExprKind::Binary(op, a, b) => {
                let va = self.eval(a);
                let vb = self.eval(b);
                self.binary(*op, va?, vb?, a.span, b.span, e.span)
            }
            ExprKind::Error => None,
        }
    }

    fn path_root_is_var(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Name(n) => self.lookup_var(n).is_some(),
            ExprKind::Index(b, _) | ExprKind::Field(b, _) => self.path_root_is_var(b),
            _ => true,
        }
    }

    fn index(&mut self, base: Value, idx: Value, idx_span: Span, span: Span) -> Option<Value> {
        let base = match base {
            // A variable holding nodes indexes like a list of single nodes.
            Value::Nodes(ids) => {
                Value::List(ids.into_iter().map(|i| Value::Nodes(vec![i])).collect())
            }
            other => other,
        };
        match (base, idx) {
            (Value::List(items), Value::Num(q)) if q.is_integer() => {
                let n = items.len();
                match q.as_i64().filter(|i| *i >= 0 && (*i as usize) < n) {
                    Some(i) => Some(items[i as usize].clone()),
                    None => {
                        self.err(
                            Diagnostic::error(
                                Code::BadValue,
                                idx_span,
                                format!(
                                    "index {} is out of range for a list of {n} element{}",
                                    q.value,
                                    if n == 1 { "" } else { "s" }
                                ),
                            )
                            .label("out of range")
                            .help(format!("use an index from 0 to {}", n.saturating_sub(1))),
                        );
                        None
                    }
                }
            }
            (b, i) => {
                self.err(
                    Diagnostic::error(
                        Code::TypeMismatch,
                        span,
                        format!("cannot index {} with {}", b.type_name(), i.type_name()),
                    )
                    .label("indexing needs a list and an integer")
                    .help("index lists with integers, for example `xs[0]`"),
                );
                None
            }
        }
    }

    /// Evaluates to a dimensionless integer.
    pub(crate) fn eval_int(&mut self, e: &Expr) -> Option<i64> {
        let v = self.eval(e)?;
        self.expect_int(v, e.span)
    }

    pub(crate) fn expect_int(&mut self, v: Value, span: Span) -> Option<i64> {
        match &v {
            Value::Num(q) if q.dim == Dim::NONE => match q.as_i64() {
                Some(i) => Some(i),
                None => {
                    self.err(
                        Diagnostic::error(
                            Code::TypeMismatch,
                            span,
                            format!(
                                "expected an integer, found {}",
                                super::units::fmt_rational(&q.value)
                            ),
                        )
                        .label("not a whole number")
                        .help("use `floor(x)` or `ceil(x)` to round"),
                    );
                    None
                }
            },
            Value::Num(q) => {
                self.err(
                    Diagnostic::error(
                        Code::DimensionMismatch,
                        span,
                        format!("expected a plain integer, found a {}", q.dim.name()),
                    )
                    .label(format!("this is a {}", q.dim.name()))
                    .help("counts and indices have no unit; divide by a unit to get a number, e.g. `size / 1 B`"),
                );
                None
            }
            other => {
                self.err(
                    Diagnostic::error(
                        Code::TypeMismatch,
                        span,
                        format!("expected an integer, found {}", other.type_name()),
                    )
                    .label("expected an integer")
                    .help("write a whole number here"),
                );
                None
            }
        }
    }

    /// Evaluates to a quantity of the given dimension.
    pub(crate) fn eval_quantity(&mut self, e: &Expr, dim: Dim, what: &str) -> Option<BigRational> {
        let v = self.eval(e)?;
        match v {
            Value::Num(q) if q.dim == dim => Some(q.value),
            Value::Num(q) if q.dim == Dim::NONE && dim != Dim::NONE => {
                self.err(
                    Diagnostic::error(
                        Code::DimensionMismatch,
                        e.span,
                        format!(
                            "{what} needs a unit: expected a {}, found a plain number",
                            dim.name()
                        ),
                    )
                    .label("this number has no unit")
                    .help(format!("add a unit, for example `{}`", example_unit(dim))),
                );
                None
            }
            Value::Num(q) => {
                self.err(
                    Diagnostic::error(
                        Code::DimensionMismatch,
                        e.span,
                        format!("{what} must be a {}, found a {}", dim.name(), q.dim.name()),
                    )
                    .label(format!("this is a {}", q.dim.name()))
                    .help(format!(
                        "use a {} unit, for example `{}`",
                        dim.name(),
                        example_unit(dim)
                    )),
                );
                None
            }
            other => {
                self.err(
                    Diagnostic::error(
                        Code::TypeMismatch,
                        e.span,
                        format!(
                            "{what} must be a {}, found {}",
                            dim.name(),
                            other.type_name()
                        ),
                    )
                    .label(format!("expected a {}", dim.name()))
                    .help(format!("for example `{}`", example_unit(dim))),
                );
                None
            }
        }
    }

    pub(crate) fn eval_bool(&mut self, e: &Expr) -> Option<bool> {
        match self.eval(e)? {
            Value::Bool(b) => Some(b),
            other => {
                self.err(
                    Diagnostic::error(
                        Code::TypeMismatch,
                        e.span,
                        format!("expected a bool, found {}", other.type_name()),
                    )
                    .label("expected `true` or `false`")
                    .help("compare values with `==`, `<`, ... to get a bool"),
                );
                None
            }
        }
    }

    fn binary(
        &mut self,
        op: BinOp,
        a: Value,
        b: Value,
        sa: Span,
        sb: Span,
        span: Span,
    ) -> Option<Value> {
        use BinOp::*;
        match (op, a, b) {
            (And, Value::Bool(x), Value::Bool(y)) => Some(Value::Bool(x && y)),
            (Or, Value::Bool(x), Value::Bool(y)) => Some(Value::Bool(x || y)),
            (Eq, x, y) if !matches!((&x, &y), (Value::Num(_), Value::Num(_))) => {
                Some(Value::Bool(x == y))
            }
            (Ne, x, y) if !matches!((&x, &y), (Value::Num(_), Value::Num(_))) => {
                Some(Value::Bool(x != y))
            }
            (op, Value::Num(x), Value::Num(y)) => self.arith(op, x, y, sa, sb, span),
            (Add, Value::Str(x), Value::Str(y)) => Some(Value::Str(x + &y)),
            (Add, Value::List(mut x), Value::List(y)) => {
                x.extend(y);
                Some(Value::List(x))
            }
            (op, x, y) => {
                self.err(
                    Diagnostic::error(
                        Code::TypeMismatch,
                        sb,
                        format!(
                            "`{}` cannot combine {} and {}",
                            op.text(),
                            x.type_name(),
                            y.type_name()
                        ),
                    )
                    .label(format!("this is {}", y.type_name()))
                    .secondary(sa, format!("this is {}", x.type_name()))
                    .help(match op {
                        And | Or => "`&&` and `||` combine bools",
                        _ => "arithmetic works on numbers and quantities; comparisons need two values of the same kind",
                    }),
                );
                None
            }
        }
    }

    fn arith(
        &mut self,
        op: BinOp,
        x: Quantity,
        y: Quantity,
        sa: Span,
        sb: Span,
        span: Span,
    ) -> Option<Value> {
        use BinOp::*;
        let same_dim = matches!(op, Add | Sub | Rem | Eq | Ne | Lt | Le | Gt | Ge);
        if same_dim && x.dim != y.dim {
            let verb = match op {
                Add => "add",
                Sub => "subtract",
                Rem => "take the remainder of",
                _ => "compare",
            };
            self.err(
                Diagnostic::error(
                    Code::DimensionMismatch,
                    sb,
                    format!("cannot {verb} a {} and a {}", x.dim.name(), y.dim.name()),
                )
                .label(format!("this is a {}", y.dim.name()))
                .secondary(sa, format!("this is a {}", x.dim.name()))
                .help(format!(
                    "both sides of `{}` must have the same dimension; {}",
                    op.text(),
                    super::units::conversion_hint(x.dim, y.dim)
                )),
            );
            return None;
        }
        if matches!(op, Div | Rem) && y.value.is_zero() {
            self.err(
                Diagnostic::error(Code::Arithmetic, sb, "division by zero")
                    .label("this is zero")
                    .help("the divisor evaluates to 0; check the parameters and values it is computed from"),
            );
            return None;
        }
        let q = |value: BigRational, dim| {
            if too_big(&value) {
                return None;
            }
            Some(Value::Num(Quantity { value, dim }))
        };
        let result = match op {
            Add => q(super::units::rat_add(&x.value, &y.value), x.dim),
            Sub => q(super::units::rat_add(&x.value, &-&y.value), x.dim),
            Mul => q(
                super::units::rat_mul(&x.value, &y.value),
                x.dim.times(y.dim),
            ),
            Div => q(super::units::rat_div(&x.value, &y.value), x.dim.per(y.dim)),
            Rem => q(super::units::rat_rem(&x.value, &y.value), x.dim),
            Eq => Some(Value::Bool(x.value == y.value)),
            Ne => Some(Value::Bool(x.value != y.value)),
            Lt => Some(Value::Bool(x.value < y.value)),
            Le => Some(Value::Bool(x.value <= y.value)),
            Gt => Some(Value::Bool(x.value > y.value)),
            Ge => Some(Value::Bool(x.value >= y.value)),
            And | Or => None,
        };
        if result.is_none() && !matches!(op, And | Or) {
            self.err(
                Diagnostic::error(
                    Code::Arithmetic,
                    span,
                    format!("the result of `{}` is too large", op.text()),
                )
                .label(format!("more than {MAX_BITS} bits"))
                .help(
                    "numbers in .coll files must stay below 2^65536 in numerator and denominator",
                ),
            );
        }
        result
    }

    fn call_builtin(&mut self, c: &Call) -> Option<Value> {
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
            let d = Diagnostic::error(
                Code::UnknownName,
                c.callee.span,
                format!("unknown function `{name}`"),
            )
            .label("no such function or generator");
            let d = match super::suggest::closest(
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
                    Value::Range(a, b) => Some(Value::int((b - a).max(0))),
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
            _ => None,
        }
    }
}

/// Largest numerator or denominator, in bits, that arithmetic may produce.
pub const MAX_BITS: u64 = 65_536;

fn too_big(v: &BigRational) -> bool {
    v.numer().bits() > MAX_BITS || v.denom().bits() > MAX_BITS
}

/// Built-in functions usable in expressions.
pub const BUILTINS: &[&str] = &["min", "max", "abs", "floor", "ceil", "pow", "len"];

fn builtin_usage(name: &str) -> &'static str {
    match name {
        "min" => "min(a, b, ...)",
        "max" => "max(a, b, ...)",
        "abs" => "abs(x)",
        "floor" => "floor(x)",
        "ceil" => "ceil(x)",
        "pow" => "pow(x, n)",
        _ => "len(xs)",
    }
}

fn base_unit(dim: Dim) -> &'static str {
    match dim {
        Dim::SIZE => "bytes",
        Dim::TIME => "seconds",
        Dim::BANDWIDTH => "bytes per second",
        Dim::INV_BANDWIDTH => "seconds per byte",
        _ => "base units",
    }
}

pub(crate) fn example_unit(dim: Dim) -> &'static str {
    match dim {
        Dim::SIZE => "4 MiB",
        Dim::TIME => "500 ns",
        Dim::BANDWIDTH => "25 GB/s",
        Dim::INV_BANDWIDTH => "0.4 ns/B",
        _ => "8",
    }
}

/// Converts a positive exact integer quantity to u64 if it fits.
pub(crate) fn to_u64(v: &BigRational) -> Option<u64> {
    if v.is_integer() {
        v.to_integer().to_u64()
    } else {
        None
    }
}
