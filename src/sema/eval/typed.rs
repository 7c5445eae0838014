//! Typed evaluation: expressions that must be an integer, a quantity of a given dimension or a
//! boolean, and the unary/binary operators with exact, dimension-checked arithmetic (bounded by
//! [`MAX_BITS`](super::MAX_BITS)).

use super::{MAX_BITS, example_unit, too_big};
use crate::diag::{Code, Diagnostic, Span};
use crate::sema::elab::Elab;
use crate::sema::units::{Dim, Quantity};
use crate::sema::value::Value;
use crate::syntax::ast::{BinOp, Expr};
use num_rational::BigRational;
use num_traits::Zero;

impl Elab<'_> {
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
                                crate::sema::units::fmt_rational(&q.value)
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

    pub(super) fn binary(
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
                    crate::sema::units::conversion_hint(x.dim, y.dim)
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
            Add => q(crate::sema::units::rat_add(&x.value, &y.value), x.dim),
            Sub => q(crate::sema::units::rat_add(&x.value, &-&y.value), x.dim),
            Mul => q(
                crate::sema::units::rat_mul(&x.value, &y.value),
                x.dim.times(y.dim),
            ),
            Div => q(
                crate::sema::units::rat_div(&x.value, &y.value),
                x.dim.per(y.dim),
            ),
            Rem => q(crate::sema::units::rat_rem(&x.value, &y.value), x.dim),
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
}
