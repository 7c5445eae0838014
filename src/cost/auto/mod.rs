//! `stages: auto`: the cheapest recursive-multiplying stage list for `N` ranks under a cost model
//! (../shared/seeds/recursive-multiplying.txt, Section 4.1: "combine small factors ... find all
//! possible schedules ... use the models of Section 3 to predict the required time").
//!
//! # Search space
//!
//! Every candidate passes `sema::schedule::stage_problem` (tested), and is one of
//! - a factor list `aB1, ..., aBs` with `prod Bi = N`, all `Bi >= 2`;
//! - a collapse `cTmB <factor list of M> eTmB` with `B` in 2..=8, `T = jB <= N` and
//!   `M = T/B + N - T = N - j(B-1)`, where `M` is 13-smooth (no prime factor above 13: those are
//!   the group sizes with cheap factorisations) or among the 32 largest reachable sizes
//!   (`j <= 32`). MPICH's power of two (`B = 2`, `M = 2^floor(log2 N)`) is always included, so
//!   the choice is never dearer than recursive doubling; for `N <= 64` every `T` is tried;
//! - a merge `mRgGaB <factors> nRgGaB'` with `R` in 1..=8, `1 <= G <= min(R, (N-R)/B)` and
//!   `B * (factors) * B' = N - R`.
//!
//! The cost of a schedule is the sum of its stage costs (see [`crate::cost`]), which does not
//! depend on the order of the factor stages, so factor lists are searched as multisets: the best
//! multiset for each group size is memoised over its divisors (`best(x) = min over f | x of
//! cost(af) + best(x/f)`), and shared between the top level, every collapse's inner group and
//! every merge. Factor lists are returned in descending order, like the paper's "a8,a4,a4";
//! a merge keeps its own first and last factor in place and sorts the ones between.
//!
//! Costs are compared exactly: every stage cost is `a alpha_p + b (alpha_r + n beta) + c n gamma`
//! with whole `a, b, c` ([`Lin`]), so a schedule's cost is three integers and comparing two
//! costs is integer arithmetic over a common denominator (`i128`, or big integers when the
//! parameters are too large for it).
//! Ties are broken by fewer stages, then lexicographically on the stage list: factor stages
//! before collapse before merge, larger bases first (so that among equally cheap lists the
//! factors read in descending order, also across a merge group: `m1g1a13, a7, ..., n1g1a4`),
//! smaller thresholds, remainders and group counts first.
//!
//! `candidates` counts the distinct stage lists of this space (as multisets of factors), which
//! the memoised search covers without listing them. For 65,536 ranks the search takes a few
//! milliseconds (see tests/cost.rs).

mod search;
#[cfg(test)]
mod tests;

use super::{Lin, Params, doubling_stages, expand_lin, factor_lin, inv_merge_lin, merge_lin};
use crate::sema::model::{CostModel, Stage};
use num_rational::BigRational;
use search::{Search, Top, Weights};
use std::collections::BTreeSet;

/// Collapse bases tried.
const COLLAPSE_BASES: std::ops::RangeInclusive<u64> = 2..=8;
/// Collapsed group sizes with only these prime factors are always tried.
const SMOOTH_PRIMES: &[u64] = &[2, 3, 5, 7, 11, 13];
/// The largest collapsed group sizes (`j <= NEAREST`) are tried whatever their factors.
const NEAREST: u64 = 32;
/// Merge remainders tried.
const MAX_REMAINDER: u64 = 8;

/// The result of [`auto_stages`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoChoice {
    /// The cheapest stage list (empty for a single rank).
    pub stages: Vec<Stage>,
    /// Its modelled cost in seconds.
    pub cost: BigRational,
    /// The modelled cost of MPICH's recursive doubling (collapse/expand around the largest power
    /// of two) under the same model.
    pub recursive_doubling_cost: BigRational,
    /// How many distinct stage lists the search covered.
    pub candidates: usize,
}

/// The cheapest stage list for `n` ranks and `bytes`-byte messages under `model`
/// (`None`: the paper's Section 6 parameters, [`Params::paper_section6`]).
pub fn auto_stages(n: u64, model: Option<&CostModel>, bytes: u64) -> AutoChoice {
    auto_with(n, &Params::for_model(model), bytes)
}

/// [`auto_stages`] with explicit parameters.
pub fn auto_with(n: u64, params: &Params, bytes: u64) -> AutoChoice {
    auto_capped(n, params, bytes, None)
}

/// [`auto_with`] among stage lists whose factor, merge and collapse bases are at most `cap`
/// (`cap >= 2`; factors of 2 around the largest power of two always qualify): the cheapest
/// list whose program stays small enough to lower (see `lower::auto_basis`). `candidates`
/// still counts the whole space.
pub fn auto_capped(n: u64, params: &Params, bytes: u64, cap: Option<u64>) -> AutoChoice {
    let within = |b: u64| cap.is_none_or(|c| b <= c);
    let w = Weights::new(params, bytes);
    let rd = doubling_stages(n);
    let rd_cost = super::schedule_cost_with(&rd, n, params, bytes);
    if n <= 1 {
        return AutoChoice {
            stages: Vec::new(),
            cost: rd_cost.clone(),
            recursive_doubling_cost: rd_cost,
            candidates: 1,
        };
    }
    let mut s = Search::new(&w, cap);
    let mut top = Top::default();
    let mut count: u128 = 0;

    // Plain factor lists.
    let lin = s.best(n);
    count = count.saturating_add(s.count(n));
    top.offer(&w, lin, || factor_stages(&s.list(n)));

    // Collapse / expand around a smaller group.
    let smooth = smooth_numbers(n);
    for b in COLLAPSE_BASES.filter(|&b| within(b)) {
        for m in collapse_inners(n, b, &smooth) {
            let t = (n - m) / (b - 1) * b;
            let lin = factor_lin(b) + expand_lin(b) + s.best(m);
            count = count.saturating_add(s.count(m));
            top.offer(&w, lin, || {
                let mut st = vec![Stage::Collapse {
                    threshold: t,
                    base: b,
                }];
                st.extend(factor_stages(&s.list(m)));
                st.push(Stage::Expand {
                    threshold: t,
                    base: b,
                });
                st
            });
        }
    }

    // Merges of a few remainder ranks.
    for r in 1..=MAX_REMAINDER.min(n.saturating_sub(4)) {
        let m = n - r;
        let divs = s.divisors(m);
        for &b in divs.iter().filter(|&&b| b >= 2 && b < m && within(b)) {
            let rest = m / b;
            for &bs in divs
                .iter()
                .filter(|&&d| d >= 2 && rest % d == 0 && within(d))
            {
                let mid = rest / bs;
                let inner = s.best(mid);
                let ways = s.count(mid);
                for g in 1..=r.min(rest) {
                    let lin = merge_lin(r, g, b) + inv_merge_lin(r, g, bs, m) + inner;
                    count = count.saturating_add(ways);
                    top.offer(&w, lin, || {
                        let mut st = vec![Stage::Merge {
                            remainder: r,
                            groups: g,
                            base: b,
                        }];
                        st.extend(factor_stages(&s.list(mid)));
                        st.push(Stage::InvMerge {
                            remainder: r,
                            groups: g,
                            base: bs,
                        });
                        st
                    });
                }
            }
        }
    }

    let (lin, stages) = top.best.unwrap_or_else(|| (Lin::ZERO, Vec::new()));
    AutoChoice {
        stages,
        cost: lin.seconds(params, bytes),
        recursive_doubling_cost: rd_cost,
        candidates: usize::try_from(count).unwrap_or(usize::MAX),
    }
}

fn factor_stages(factors: &[u64]) -> Vec<Stage> {
    factors.iter().map(|&base| Stage::Factor { base }).collect()
}

/// The inner group sizes tried for collapses with base `b` on `n` ranks, largest first:
/// `M = n - j(b-1)` with `1 <= j`, `jb <= n`, and `M` smooth or `j <= NEAREST`.
pub(crate) fn collapse_inners(n: u64, b: u64, smooth: &[u64]) -> Vec<u64> {
    if b < 2 || b > n {
        return Vec::new();
    }
    let (step, jmax) = (b - 1, n / b);
    let mut set: BTreeSet<u64> = (1..=jmax.min(NEAREST)).map(|j| n - j * step).collect();
    for &m in smooth {
        if m < n && (n - m) % step == 0 && (n - m) / step <= jmax {
            set.insert(m);
        }
    }
    set.into_iter().rev().collect()
}

/// Every number up to `limit` whose prime factors are all in [`SMOOTH_PRIMES`] (with 1).
pub(crate) fn smooth_numbers(limit: u64) -> Vec<u64> {
    let mut out = vec![1u64];
    for &p in SMOOTH_PRIMES {
        let mut i = 0;
        // Multiply every number found so far (including new ones) by p while it fits.
        while i < out.len() {
            if let Some(x) = out[i].checked_mul(p).filter(|x| *x <= limit) {
                out.push(x);
            }
            i += 1;
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Divisors of `x` in increasing order (trial division).
fn divisors_of(x: u64) -> Vec<u64> {
    let mut primes: Vec<(u64, u32)> = Vec::new();
    let mut y = x;
    let mut p = 2u64;
    while p.saturating_mul(p) <= y {
        if y % p == 0 {
            let mut e = 0;
            while y % p == 0 {
                y /= p;
                e += 1;
            }
            primes.push((p, e));
        }
        p += if p == 2 { 1 } else { 2 };
    }
    if y > 1 {
        primes.push((y, 1));
    }
    let mut out = vec![1u64];
    for (p, e) in primes {
        let len = out.len();
        let mut pk = 1u64;
        for _ in 0..e {
            pk *= p;
            for i in 0..len {
                out.push(out[i] * pk);
            }
        }
    }
    out.sort_unstable();
    out
}
