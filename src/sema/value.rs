//! Values of the elaboration-time language: exact quantities, booleans, strings, lists, integer
//! ranges, `auto`, and sets of nodes. [`Value::type_name`] gives the user's word for each.

use super::model::NodeId;
use super::units::{Dim, Quantity};

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Num(Quantity),
    Bool(bool),
    Str(String),
    List(Vec<Value>),
    /// `a..b`, half open.
    Range(i64, i64),
    Auto,
    /// One or more nodes (a single reference such as `gpu[0]` gives one).
    Nodes(Vec<NodeId>),
}

impl Value {
    /// The user's word for the value's kind, with its article: `an integer`, `a size`,
    /// `a string`, ... so that messages read "expected a bool, found an integer".
    pub fn type_name(&self) -> String {
        match self {
            Value::Num(q) if q.dim == Dim::NONE && q.value.is_integer() => "an integer".into(),
            Value::Num(q) => format!("a {}", q.dim.name()),
            Value::Bool(_) => "a bool".into(),
            Value::Str(_) => "a string".into(),
            Value::List(_) => "a list".into(),
            Value::Range(..) => "a range".into(),
            Value::Auto => "`auto`".into(),
            Value::Nodes(n) if n.len() == 1 => "a node".into(),
            Value::Nodes(_) => "a set of nodes".into(),
        }
    }

    pub fn int(n: i64) -> Value {
        Value::Num(Quantity::int(n))
    }
}

/// How many integers the half-open range `a..b` holds (0 when `b <= a`), computed without
/// overflow: `-9223372036854775808..2` holds 2^63 + 2 of them, more than an `i64` counts.
pub fn range_len(a: i64, b: i64) -> u64 {
    (i128::from(b) - i128::from(a)).max(0) as u64
}
