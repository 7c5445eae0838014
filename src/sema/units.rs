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

thread_local! {
    static UNIT_CACHE: std::cell::RefCell<std::collections::HashMap<String, Option<(BigRational, Dim)>>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Looks a unit up: its factor to base units and its dimension. Memoised, since generated
/// topologies write the same few units hundreds of thousands of times.
pub fn unit(s: &str) -> Option<(BigRational, Dim)> {
    if let Some(hit) = UNIT_CACHE.with(|c| c.borrow().get(s).cloned()) {
        return hit;
    }
    let v = unit_uncached(s);
    UNIT_CACHE.with(|c| c.borrow_mut().insert(s.to_string(), v.clone()));
    v
}

fn unit_uncached(s: &str) -> Option<(BigRational, Dim)> {
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

fn small(v: &BigRational) -> Option<(i128, i128)> {
    Some((v.numer().to_i64()? as i128, v.denom().to_i64()? as i128))
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn from_i128(n: i128, d: i128) -> BigRational {
    let g = gcd(n.unsigned_abs(), d.unsigned_abs()).max(1) as i128;
    let (mut n, mut d) = (n / g, d / g);
    if d < 0 {
        (n, d) = (-n, -d);
    }
    BigRational::new_raw(BigInt::from(n), BigInt::from(d))
}

/// Exact product, with a fast path for the small numbers that are most of every topology.
pub fn rat_mul(a: &BigRational, b: &BigRational) -> BigRational {
    match (small(a), small(b)) {
        (Some((an, ad)), Some((bn, bd))) => from_i128(an * bn, ad * bd),
        _ => a * b,
    }
}

/// Exact quotient (`b` must not be zero), with the same fast path.
pub fn rat_div(a: &BigRational, b: &BigRational) -> BigRational {
    match (small(a), small(b)) {
        (Some((an, ad)), Some((bn, bd))) if bn != 0 => from_i128(an * bd, ad * bn),
        _ => a / b,
    }
}

/// Exact sum, with the same fast path.
pub fn rat_add(a: &BigRational, b: &BigRational) -> BigRational {
    match (small(a), small(b)) {
        (Some((an, ad)), Some((bn, bd))) => from_i128(an * bd + bn * ad, ad * bd),
        _ => a + b,
    }
}

/// Exact remainder with the sign of the divisor (floored division), fast for small integers.
pub fn rat_rem(a: &BigRational, b: &BigRational) -> BigRational {
    match (small(a), small(b)) {
        (Some((an, 1)), Some((bn, 1))) if bn != 0 => {
            let r = an.rem_euclid(bn.abs());
            let r = if bn < 0 && r != 0 { r + bn } else { r };
            BigRational::from_integer(BigInt::from(r))
        }
        _ => a - (a / b).floor() * b,
    }
}

/// Units a user may write, for help lines.
pub const UNIT_HELP: &str = "sizes: B KB MB GB KiB MiB GiB; bandwidths: GB/s MB/s Gbps B/ns; \
times: ps ns us ms s; per-byte times: ns/B us/B";

/// Spellings offered as "did you mean" for an unknown unit.
const COMMON_UNITS: &[&str] = &[
    "B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "bit", "Gb", "s", "ms", "us", "ns",
    "ps", "Mbps", "Gbps", "Tbps", "B/s", "KB/s", "MB/s", "GB/s", "TB/s", "GiB/s", "B/ns", "ns/B",
    "us/B", "ps/B",
];

/// The help line for an unknown unit `u` written after the number `value`.
pub fn unknown_unit_help(value: &str, u: &str) -> String {
    // `100 GB/n` lexes as the unit `GB/n`: the user meant to divide by `n`.
    if let Some((num, den)) = u.split_once('/') {
        if unit(num).is_some() && unit(den).is_none() {
            return format!(
                "`{u}` reads as one unit; to divide by `{den}`, put spaces around `/`: `{value} {num} / {den}`"
            );
        }
    }
    // `25 GBs` for `25 GB/s`.
    let per_second = u
        .strip_suffix('s')
        .map(|n| format!("{n}/s"))
        .filter(|c| unit(c).is_some());
    let close = per_second.or_else(|| {
        crate::sema::suggest::closest(u, COMMON_UNITS.iter().copied()).map(str::to_string)
    });
    match close {
        Some(c) => format!("did you mean `{c}`? known units: {UNIT_HELP}"),
        None => format!("known units: {UNIT_HELP}"),
    }
}

/// How to turn a quantity of dimension `a` into one of `b` (or the other way), for help lines.
pub fn conversion_hint(a: Dim, b: Dim) -> String {
    let pair = |x: Dim, y: Dim| (a == x && b == y) || (a == y && b == x);
    if pair(Dim::SIZE, Dim::TIME) {
        "a size divided by a bandwidth is a time, and a time multiplied by a bandwidth is a size"
            .into()
    } else if pair(Dim::SIZE, Dim::BANDWIDTH) || pair(Dim::TIME, Dim::BANDWIDTH) {
        "a size divided by a time is a bandwidth, and a bandwidth multiplied by a time is a size"
            .into()
    } else if a == Dim::NONE || b == Dim::NONE {
        format!(
            "give the plain number a unit, e.g. `{}`",
            super::eval::example_unit(if a == Dim::NONE { b } else { a })
        )
    } else {
        "convert one side by multiplying or dividing it by a quantity".into()
    }
}

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
        assert_eq!(t.to_string(), "500 ps");
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

#[cfg(test)]
mod fast_path_tests {
    use super::*;

    fn r(n: i64, d: i64) -> BigRational {
        BigRational::new(n.into(), d.into())
    }

    #[test]
    fn fast_paths_agree_with_bigrational() {
        let vals = [
            r(0, 1),
            r(1, 1),
            r(-7, 3),
            r(25, 1),
            r(1, 1_000_000_000),
            r(i64::MAX, 7),
            r(-5, 2),
            r(9, 4),
        ];
        for a in &vals {
            for b in &vals {
                assert_eq!(rat_mul(a, b), a * b);
                assert_eq!(rat_add(a, b), a + b);
                if *b != r(0, 1) {
                    assert_eq!(rat_div(a, b), a / b);
                    assert_eq!(rat_rem(a, b), a - (a / b).floor() * b, "{a} % {b}");
                }
            }
        }
    }
}
