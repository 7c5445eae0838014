//! Exact rational arithmetic with a fast path: when both operands fit in `i64` the result is
//! computed in `i128` and only then made a `BigRational`; otherwise the big-number path.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;

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
