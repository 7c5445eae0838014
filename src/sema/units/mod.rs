//! Exact quantities with dimensions.
//!
//! A [`Quantity`] is an exact rational in base units (bytes and seconds) with a [`Dim`]: the
//! exponents of bytes and seconds. Sizes are B^1, times s^1, bandwidths B^1 s^-1, inverse
//! bandwidths (the cost models' beta, gamma, G) s^1 B^-1, and plain numbers have no dimension.
//! Addition and comparison demand equal dimensions (E0005); multiplication and division combine
//! them. Decimal units are powers of ten (KB = 1000 B), binary ones powers of two (KiB = 1024 B),
//! and `Gbps` is 10^9 bits, so 1/8 * 10^9 B/s: all exact.

mod arith;
mod scale;
mod text;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;

pub use arith::{rat_add, rat_div, rat_mul, rat_rem};
pub use scale::unit;
pub use text::{UNIT_HELP, conversion_hint, fmt_rational, unknown_unit_help};

/// Exponents of bytes and seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Dim {
    pub bytes: i8,
    pub secs: i8,
}

impl Dim {
    pub const NONE: Dim = Dim { bytes: 0, secs: 0 };
    pub const SIZE: Dim = Dim { bytes: 1, secs: 0 };
    pub const TIME: Dim = Dim { bytes: 0, secs: 1 };
    pub const BANDWIDTH: Dim = Dim { bytes: 1, secs: -1 };
    pub const INV_BANDWIDTH: Dim = Dim { bytes: -1, secs: 1 };

    pub fn times(self, o: Dim) -> Dim {
        Dim {
            bytes: self.bytes.saturating_add(o.bytes),
            secs: self.secs.saturating_add(o.secs),
        }
    }

    pub fn per(self, o: Dim) -> Dim {
        Dim {
            bytes: self.bytes.saturating_sub(o.bytes),
            secs: self.secs.saturating_sub(o.secs),
        }
    }

    /// The user's word for this dimension: `size`, `bandwidth`, `time`, `number`...
    pub fn name(self) -> String {
        match (self.bytes, self.secs) {
            (0, 0) => "number".into(),
            (1, 0) => "size".into(),
            (0, 1) => "time".into(),
            (1, -1) => "bandwidth".into(),
            (-1, 1) => "time per byte".into(),
            (b, s) => format!("B^{b}·s^{s}"),
        }
    }

    /// Parses a type name used in parameter declarations.
    pub fn from_type_name(s: &str) -> Option<Dim> {
        Some(match s {
            "int" | "number" => Dim::NONE,
            "size" => Dim::SIZE,
            "time" => Dim::TIME,
            "bandwidth" => Dim::BANDWIDTH,
            "inverse_bandwidth" => Dim::INV_BANDWIDTH,
            _ => return None,
        })
    }
}

/// An exact value in base units.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Quantity {
    pub value: BigRational,
    pub dim: Dim,
}

impl Quantity {
    pub fn number(value: BigRational) -> Quantity {
        Quantity {
            value,
            dim: Dim::NONE,
        }
    }

    pub fn int(n: i64) -> Quantity {
        Quantity::number(BigRational::from_integer(BigInt::from(n)))
    }

    pub fn is_integer(&self) -> bool {
        self.dim == Dim::NONE && self.value.is_integer()
    }

    /// The value as an i64 when it is a dimensionless integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        if self.is_integer() {
            self.value.to_integer().to_i64()
        } else {
            None
        }
    }
}
