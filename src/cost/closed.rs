//! Closed forms from the paper: eq. 3 (one pipelined stage), the postal message, eq. 2
//! (recursive doubling), uniform and general factorisations, exact logarithms, and MPICH's
//! recursive-doubling stage list.

use super::Params;
use super::int;
use super::lin::{Lin, factor_lin};
use crate::sema::model::Stage;
use num_rational::BigRational;
use num_traits::Zero;

/// Eq. 3: `alpha_p + b (alpha_r + n beta + n gamma)`, one stage in which each rank exchanges
/// `b` messages of `bytes` bytes (and folds `b` values).
pub fn pipelined_stage(p: &Params, b: u64, bytes: u64) -> BigRational {
    Lin::stage(b, b).seconds(p, bytes)
}

/// Eq. 1 term: one postal-model message, `alpha + n beta + n gamma`.
pub fn postal_message(
    alpha: &BigRational,
    beta: &BigRational,
    gamma: &BigRational,
    bytes: u64,
) -> BigRational {
    alpha + (beta + gamma) * int(bytes)
}

/// `k` when `n = base^k` exactly (`base >= 2`, `n >= 1`).
pub fn exact_log(n: u64, base: u64) -> Option<u32> {
    if base < 2 || n == 0 {
        return None;
    }
    let (mut x, mut k) = (n, 0u32);
    while x % base == 0 {
        x /= base;
        k += 1;
    }
    (x == 1).then_some(k)
}

/// Eq. 4 (with the `n` terms of eq. 3 kept): `(alpha_p + b (alpha_r + n beta + n gamma))
/// log_{b+1} N`, for `N = (b+1)^k`; `None` when `N` is not a power of `b + 1`. With `bytes = 0`
/// this is the paper's `(alpha_p + b alpha_r) log_{b+1} N`.
pub fn uniform_cost(p: &Params, b: u64, ranks: u64, bytes: u64) -> Option<BigRational> {
    let k = exact_log(ranks, b.checked_add(1)?)?;
    Some(pipelined_stage(p, b, bytes) * int(u64::from(k)))
}

/// The summation form: the factor stages `a(b_1+1), ..., a(b_s+1)` (given as the factors
/// `b_i + 1`) cost `sum (alpha_p + b_i (alpha_r + n beta + n gamma))`, i.e.
/// `alpha_p s + alpha_r sum b_i` for `n = 0`.
pub fn factorisation_cost(p: &Params, factors: &[u64], bytes: u64) -> BigRational {
    factors
        .iter()
        .fold(Lin::ZERO, |acc, f| acc + factor_lin(*f))
        .seconds(p, bytes)
}

/// Eq. 2: `alpha (floor(log2 N) + {0 if N is a power of two, else 2})`, MPICH's recursive
/// doubling for small messages in the postal model.
pub fn eq2_doubling(alpha: &BigRational, ranks: u64) -> BigRational {
    if ranks <= 1 {
        return BigRational::zero();
    }
    let floor = u64::from(63 - ranks.leading_zeros());
    let extra = if ranks.is_power_of_two() { 0 } else { 2 };
    alpha * int(floor + extra)
}

/// MPICH's recursive doubling (Algorithm 1) as a stage list: `[c(2r)m2, a2, ..., a2, e(2r)m2]`
/// with `r = N - 2^floor(log2 N)`, without the collapse when `r = 0`.
pub fn doubling_stages(n: u64) -> Vec<Stage> {
    if n <= 1 {
        return Vec::new();
    }
    let p = 1u64 << (63 - n.leading_zeros());
    let mut out: Vec<Stage> = (0..p.trailing_zeros())
        .map(|_| Stage::Factor { base: 2 })
        .collect();
    let r = n - p;
    if r > 0 {
        let t = 2 * r;
        out.insert(
            0,
            Stage::Collapse {
                threshold: t,
                base: 2,
            },
        );
        out.push(Stage::Expand {
            threshold: t,
            base: 2,
        });
    }
    out
}
