//! Quantities as text: the unit help lines and conversion hints of diagnostics, exact rationals
//! written as decimals, and the readable-unit [`Display`](std::fmt::Display) of a [`Quantity`].

use super::scale::{pow2, pow10, unit};
use super::{Dim, Quantity};
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};
use std::fmt;

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
            crate::sema::eval::example_unit(if a == Dim::NONE { b } else { a })
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
