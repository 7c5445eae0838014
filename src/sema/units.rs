//! Exact quantities with dimensions.
//!
//! A [`Quantity`] is an exact rational in base units (bytes and seconds) with a [`Dim`]: the
//! exponents of bytes and seconds. Sizes are B^1, times s^1, bandwidths B^1 s^-1, inverse
//! bandwidths (the cost models' beta, gamma, G) s^1 B^-1, and plain numbers have no dimension.
//! Addition and comparison demand equal dimensions (E0005); multiplication and division combine
//! them. Decimal units are powers of ten (KB = 1000 B), binary ones powers of two (KiB = 1024 B),
//! and `Gbps` is 10^9 bits, so 1/8 * 10^9 B/s: all exact.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::fmt;

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

    pub fn mul(self, o: Dim) -> Dim {
        Dim {
            bytes: self.bytes.saturating_add(o.bytes),
            secs: self.secs.saturating_add(o.secs),
        }
    }

    pub fn div(self, o: Dim) -> Dim {
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

fn pow10(e: u32) -> BigRational {
    BigRational::from_integer(num_traits::pow(BigInt::from(10), e as usize))
}

fn pow2(e: u32) -> BigRational {
    BigRational::from_integer(num_traits::pow(BigInt::from(2), e as usize))
}

fn size_unit(s: &str) -> Option<BigRational> {
    Some(match s {
        "B" => BigRational::one(),
        "KB" | "kB" => pow10(3),
        "MB" => pow10(6),
        "GB" => pow10(9),
        "TB" => pow10(12),
        "KiB" => pow2(10),
        "MiB" => pow2(20),
        "GiB" => pow2(30),
        "TiB" => pow2(40),
        "b" | "bit" => BigRational::new(1.into(), 8.into()),
        "Kb" | "kb" => pow10(3) / BigRational::from_integer(8.into()),
        "Mb" => pow10(6) / BigRational::from_integer(8.into()),
        "Gb" => pow10(9) / BigRational::from_integer(8.into()),
        "Tb" => pow10(12) / BigRational::from_integer(8.into()),
        _ => return None,
    })
}

fn time_unit(s: &str) -> Option<BigRational> {
    let one = BigRational::one();
    Some(match s {
        "s" => one,
        "ms" => one / pow10(3),
        "us" | "µs" => one / pow10(6),
        "ns" => one / pow10(9),
        "ps" => one / pow10(12),
        _ => return None,
    })
}

/// Looks a unit up: its factor to base units and its dimension.
pub fn unit(s: &str) -> Option<(BigRational, Dim)> {
    if let Some(f) = size_unit(s) {
        return Some((f, Dim::SIZE));
    }
    if let Some(f) = time_unit(s) {
        return Some((f, Dim::TIME));
    }
    // Bit rates: bps, Kbps, Mbps, Gbps, Tbps.
    if let Some(prefix) = s.strip_suffix("bps") {
        let f = match prefix {
            "" => BigRational::one(),
            "K" | "k" => pow10(3),
            "M" => pow10(6),
            "G" => pow10(9),
            "T" => pow10(12),
            _ => return None,
        };
        return Some((f / BigRational::from_integer(8.into()), Dim::BANDWIDTH));
    }
    let (num, den) = s.split_once('/')?;
    if let (Some(a), Some(b)) = (size_unit(num), time_unit(den)) {
        return Some((a / b, Dim::BANDWIDTH));
    }
    if let (Some(a), Some(b)) = (time_unit(num), size_unit(den)) {
        return Some((a / b, Dim::INV_BANDWIDTH));
    }
    None
}

/// Units a user may write, for help lines.
pub const UNIT_HELP: &str = "sizes: B KB MB GB KiB MiB GiB; bandwidths: GB/s MB/s Gbps B/ns; \
times: ps ns us ms s; per-byte times: ns/B us/B";

/// Formats an exact rational: integers plainly, otherwise as a decimal when it terminates within
/// a few digits, otherwise as `p/q`.
pub fn fmt_rational(v: &BigRational) -> String {
    if v.is_integer() {
        return v.to_integer().to_string();
    }
    let neg = v.is_negative();
    let a = v.abs();
    for digits in 1..=6u32 {
        let scaled = &a * pow10(digits);
        if scaled.is_integer() {
            let n = scaled.to_integer();
            let s = format!("{:0>width$}", n.to_string(), width = digits as usize + 1);
            let (i, f) = s.split_at(s.len() - digits as usize);
            return format!("{}{i}.{f}", if neg { "-" } else { "" });
        }
    }
    // Non-terminating or long: round to 6 significant decimals but mark as approximate.
    let approx = (&a * pow10(6)).round() / pow10(6);
    let n = (&approx * pow10(6)).to_integer();
    let s = format!("{:0>7}", n.to_string());
    let (i, f) = s.split_at(s.len() - 6);
    let f = f.trim_end_matches('0');
    format!(
        "{}~{i}.{}",
        if neg { "-" } else { "" },
        if f.is_empty() { "0" } else { f }
    )
}

fn pick(value: &BigRational, scales: &[(&str, BigRational)]) -> String {
    // Largest unit in which the value is at least 1, else the smallest.
    let abs = value.abs();
    let mut chosen = &scales[0];
    for s in scales {
        if abs >= s.1 {
            chosen = s;
        }
    }
    if abs.is_zero() {
        chosen = &scales[0];
    }
    format!("{} {}", fmt_rational(&(value / &chosen.1)), chosen.0)
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = &self.value;
        let s = match self.dim {
            Dim::NONE => fmt_rational(v),
            Dim::SIZE => pick(
                v,
                &[
                    ("B", BigRational::one()),
                    ("KiB", pow2(10)),
                    ("MiB", pow2(20)),
                    ("GiB", pow2(30)),
                ],
            ),
            Dim::TIME => pick(
                v,
                &[
                    ("ps", BigRational::one() / pow10(12)),
                    ("ns", BigRational::one() / pow10(9)),
                    ("us", BigRational::one() / pow10(6)),
                    ("ms", BigRational::one() / pow10(3)),
                    ("s", BigRational::one()),
                ],
            ),
            Dim::BANDWIDTH => pick(
                v,
                &[
                    ("B/s", BigRational::one()),
                    ("KB/s", pow10(3)),
                    ("MB/s", pow10(6)),
                    ("GB/s", pow10(9)),
                ],
            ),
            Dim::INV_BANDWIDTH => format!("{} ns/B", fmt_rational(&(v * pow10(9)))),
            d => format!("{} {}", fmt_rational(v), d.name()),
        };
        f.write_str(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gbps_is_an_eighth_of_gb_per_s() {
        let (g, d) = unit("Gbps").unwrap();
        assert_eq!(d, Dim::BANDWIDTH);
        assert_eq!(
            g * BigRational::from_integer(8.into()),
            unit("GB/s").unwrap().0
        );
    }

    #[test]
    fn display_picks_readable_units() {
        let q = Quantity {
            value: BigRational::from_integer(300_000_000_000i64.into()),
            dim: Dim::BANDWIDTH,
        };
        assert_eq!(q.to_string(), "300 GB/s");
        let t = Quantity {
            value: BigRational::new(1.into(), 2_000_000_000i64.into()),
            dim: Dim::TIME,
        };
        assert_eq!(t.to_string(), "0.5 ns");
        let b = Quantity {
            value: BigRational::new(4.into(), 10_000_000_000i64.into()),
            dim: Dim::INV_BANDWIDTH,
        };
        assert_eq!(b.to_string(), "0.4 ns/B");
        assert_eq!(
            fmt_rational(&BigRational::new(1040.into(), 3.into())),
            "~346.666667"
        );
    }
}
