//! Exact rationals as machine integers ([`in_units`]): a set of rationals written as integer
//! multiples of one common unit, so that hot loops add and compare integers instead of big
//! rationals and convert back exactly. ForestColl's flow networks and ring bound (bandwidths)
//! and the chunk model (latencies) use it. (The cost search's `Weights` keeps its own common
//! denominator without dividing by the gcd, so that huge parameters take its exact path.)

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Zero};

/// Rationals as integer multiples of `unit`: the i-th is `counts[i] * unit`, exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Units {
    pub unit: BigRational,
    pub counts: Vec<BigInt>,
}

/// `qs` in their largest common unit: the greatest common divisor of all of them (`g / L`,
/// with `L` the least common multiple of the denominators and `g` the greatest common divisor
/// of the numerators over `L`), so the counts are the smallest integers with the same ratios;
/// unit 1 when every one is zero.
pub fn in_units<'a>(qs: impl IntoIterator<Item = &'a BigRational>) -> Units {
    let qs: Vec<&BigRational> = qs.into_iter().collect();
    let lcm = qs.iter().fold(BigInt::one(), |l, q| l.lcm(q.denom()));
    let over: Vec<BigInt> = qs.iter().map(|q| q.numer() * (&lcm / q.denom())).collect();
    let g = over.iter().fold(BigInt::zero(), |g, x| g.gcd(x));
    if g.is_zero() {
        return Units {
            unit: BigRational::one(),
            counts: over,
        };
    }
    Units {
        counts: over.iter().map(|x| x / &g).collect(),
        unit: BigRational::new(g, lcm),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(n: i64, d: i64) -> BigRational {
        BigRational::new(n.into(), d.into())
    }

    #[test]
    fn counts_times_the_unit_are_the_rationals() {
        let qs = [q(25, 2), q(100, 1), q(5, 3), q(0, 1), q(-5, 6)];
        let u = in_units(&qs);
        assert_eq!(u.unit, q(5, 6));
        let back: Vec<BigRational> = u
            .counts
            .iter()
            .map(|c| BigRational::from_integer(c.clone()) * &u.unit)
            .collect();
        assert_eq!(back, qs);
        let zeros = in_units(&[q(0, 1), q(0, 7)]);
        assert_eq!(zeros.unit, q(1, 1));
        assert!(zeros.counts.iter().all(Zero::is_zero));
        assert_eq!(in_units(&[]).counts, Vec::<BigInt>::new());
    }
}
