//! Expression evaluation with exact arithmetic and dimension checking.
//!
//! Every error becomes a diagnostic and evaluation returns `None`; callers skip what depended on
//! the failed value, so one mistake yields one diagnostic, not a cascade. Names resolve to local
//! variables (innermost scope first), then globals (`let` and `param`), then node arrays of the
//! topology being built (see [`super::nodes`]).

mod builtins;
mod typed;

use super::elab::Elab;
use super::units::{Dim, Quantity, unit};
use super::value::Value;
use crate::diag::{Code, Diagnostic, Span};
use crate::syntax::ast::{BinOp, Expr, ExprKind, UnOp};
use num_rational::BigRational;
use num_traits::ToPrimitive;

pub use builtins::BUILTINS;

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
    /// Whether an error of `code` at `span` with `message` was reported already (recorded
    /// now if not). A loop body reports its errors again on every iteration, and the final
    /// list keeps only the first of each (code, span, message): the sites that search for a
    /// "did you mean" ask first, so that the search runs once per error, not once per
    /// iteration (issue 41).
    pub(crate) fn seen_error(&mut self, code: Code, span: Span, message: &str) -> bool {
        let key = (code, span, message.to_string());
        !self.reported.insert(key)
    }

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
}

/// Largest numerator or denominator, in bits, that arithmetic may produce.
pub const MAX_BITS: u64 = 65_536;

fn too_big(v: &BigRational) -> bool {
    v.numer().bits() > MAX_BITS || v.denom().bits() > MAX_BITS
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
