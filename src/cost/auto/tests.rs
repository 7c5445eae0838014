//! Unit tests of the automatic stage choice: brute force over small rank counts, exact paths, counts.

use super::super::{schedule_cost_with, stage_lins};
use super::search::{Search, Weights, lex, next_prime};
use super::*;
use crate::sema::schedule::stage_problem;
use num_bigint::BigInt;
use num_traits::Zero;
use std::cmp::Ordering;

fn ns(x: i64) -> BigRational {
    BigRational::new(x.into(), 1_000_000_000.into())
}

fn params(ap: i64, ar: i64, beta_ps: i64, gamma_ps: i64) -> Params {
    Params {
        alpha_p: ns(ap),
        alpha_r: ns(ar),
        beta: BigRational::new(beta_ps.into(), 1_000_000_000_000i64.into()),
        gamma: BigRational::new(gamma_ps.into(), 1_000_000_000_000i64.into()),
    }
}

/// Every multiset of factors `>= min` multiplying to `x`, descending.
fn multisets(x: u64, min: u64) -> Vec<Vec<u64>> {
    if x == 1 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for f in (min.max(2)..=x).filter(|f| x % f == 0) {
        for mut rest in multisets(x / f, f) {
            rest.push(f);
            rest.sort_unstable_by(|a, b| b.cmp(a));
            out.push(rest);
        }
    }
    out
}

/// The search space of the module doc, listed explicitly.
fn space(n: u64) -> Vec<Vec<Stage>> {
    let mut out: Vec<Vec<Stage>> = multisets(n, 2).iter().map(|f| factor_stages(f)).collect();
    let smooth = smooth_numbers(n);
    for b in COLLAPSE_BASES {
        for m in collapse_inners(n, b, &smooth) {
            let t = (n - m) / (b - 1) * b;
            for inner in multisets(m, 2) {
                let mut st = vec![Stage::Collapse {
                    threshold: t,
                    base: b,
                }];
                st.extend(factor_stages(&inner));
                st.push(Stage::Expand {
                    threshold: t,
                    base: b,
                });
                out.push(st);
            }
        }
    }
    for r in 1..=MAX_REMAINDER.min(n.saturating_sub(4)) {
        let m = n - r;
        for b in (2..m).filter(|b| m % b == 0) {
            for bs in (2..=m / b).filter(|d| (m / b) % d == 0) {
                for g in 1..=r.min(m / b) {
                    for mid in multisets(m / b / bs, 2) {
                        let mut st = vec![Stage::Merge {
                            remainder: r,
                            groups: g,
                            base: b,
                        }];
                        st.extend(factor_stages(&mid));
                        st.push(Stage::InvMerge {
                            remainder: r,
                            groups: g,
                            base: bs,
                        });
                        out.push(st);
                    }
                }
            }
        }
    }
    out
}

/// The memoised search finds the same optimum (with the same tie-break) as listing the whole
/// space, counts it right, and every candidate is valid.
#[test]
fn search_matches_brute_force() {
    let models = [
        params(500, 100, 400, 1250),
        params(1340, 340, 0, 0),
        params(1000, 1000, 0, 0),
        params(0, 100, 0, 0),
        params(3000, 100, 0, 0),
        params(0, 0, 0, 0),
    ];
    for n in 2..=72u64 {
        let all = space(n);
        for st in &all {
            assert_eq!(stage_problem(st, n), None, "{n}: {st:?}");
        }
        for (mi, p) in models.iter().enumerate() {
            let w = Weights::new(p, 8);
            let mut best: Option<(Lin, &Vec<Stage>)> = None;
            for st in &all {
                let lin = stage_lins(st, n).into_iter().fold(Lin::ZERO, |a, b| a + b);
                let better = match &best {
                    None => true,
                    Some((c, l)) => match w.cmp(&lin, c) {
                        Ordering::Less => true,
                        Ordering::Greater => false,
                        Ordering::Equal => lex(st, l) == Ordering::Less,
                    },
                };
                if better {
                    best = Some((lin, st));
                }
            }
            let (lin, want) = best.unwrap();
            let got = auto_with(n, p, 8);
            assert_eq!(&got.stages, want, "n = {n}, model {mi}");
            assert_eq!(got.cost, lin.seconds(p, 8));
            assert_eq!(got.cost, schedule_cost_with(&got.stages, n, p, 8));
            assert_eq!(got.candidates, all.len(), "n = {n}");
            assert!(got.cost <= got.recursive_doubling_cost);
        }
    }
}

#[test]
fn single_rank_and_zero_costs() {
    let p = params(500, 100, 0, 0);
    let one = auto_with(1, &p, 8);
    assert!(one.stages.is_empty() && one.cost.is_zero() && one.candidates == 1);
    // With everything free the fewest stages win: one stage of everyone.
    let free = auto_with(48, &params(0, 0, 0, 0), 8);
    assert_eq!(free.stages, vec![Stage::Factor { base: 48 }]);
}

/// Parameters too large for the integer fast path compare exactly as rationals: scaling
/// every parameter by 3^70 changes no choice and scales every cost.
#[test]
fn huge_parameters_use_the_exact_path() {
    let p = params(500, 100, 400, 1250);
    let k = BigRational::from_integer(BigInt::from(3).pow(70u32));
    let big = Params {
        alpha_p: &p.alpha_p * &k,
        alpha_r: &p.alpha_r * &k,
        beta: &p.beta * &k,
        gamma: &p.gamma * &k,
    };
    assert!(Weights::new(&big, 8).fast.is_none());
    assert!(Weights::new(&p, 8).fast.is_some());
    for n in [7u64, 48, 96, 1000, 1023] {
        let (a, b) = (auto_with(n, &p, 8), auto_with(n, &big, 8));
        assert_eq!(a.stages, b.stages, "{n}");
        assert_eq!(&a.cost * &k, b.cost);
        assert_eq!(a.candidates, b.candidates);
    }
}

#[test]
fn smooth_and_divisors() {
    let s = smooth_numbers(30);
    assert_eq!(
        s,
        vec![
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 21, 22, 24, 25, 26, 27,
            28, 30
        ]
    );
    assert_eq!(divisors_of(36), vec![1, 2, 3, 4, 6, 9, 12, 18, 36]);
    assert_eq!(divisors_of(97), vec![1, 97]);
    assert_eq!(next_prime(7), 11);
}

#[test]
fn counts_multiplicative_partitions() {
    let w = Weights::new(&params(1, 1, 0, 0), 0);
    let mut s = Search::new(&w, None);
    // OEIS A001055: 1, 1, 1, 2, 1, 2, 1, 3, 2, 2, 1, 4 (n = 1..12); 16 -> 5, 24 -> 7,
    // 36 -> 9, 48 -> 12, 64 -> 11, 96 -> 19.
    let want = [1u128, 1, 1, 2, 1, 2, 1, 3, 2, 2, 1, 4];
    for (i, c) in want.iter().enumerate() {
        assert_eq!(s.count(i as u64 + 1), *c, "{}", i + 1);
    }
    for (x, c) in [
        (16u64, 5u128),
        (24, 7),
        (36, 9),
        (48, 12),
        (64, 11),
        (96, 19),
    ] {
        assert_eq!(s.count(x), c, "{x}");
        assert_eq!(s.count(x), multisets(x, 2).len() as u128);
    }
}

/// A cap bounds every base of the choice (merges and collapses included), a cap no list
/// reaches changes nothing, and with every divisor of a group over the cap the search still
/// finds a list (around the largest power of two) rather than taking the group whole.
#[test]
fn capped_choices_keep_their_bases_under_the_cap() {
    // alpha_p dominant: wide factors are cheapest, so the cap decides.
    let p = params(1000, 1, 0, 0);
    for n in [12u64, 97, 100, 2048, 2039, 100_000] {
        let free = auto_with(n, &p, 8);
        assert_eq!(auto_capped(n, &p, 8, Some(n)), free, "{n}");
        for cap in [2u64, 3, 5, 16] {
            let c = auto_capped(n, &p, 8, Some(cap));
            assert!(!c.stages.is_empty(), "{n} under {cap}");
            assert!(
                stage_problem(&c.stages, n).is_none(),
                "{n} under {cap}: {:?}",
                c.stages
            );
            for s in &c.stages {
                assert!(s.base() <= cap, "{n} under {cap}: {:?}", c.stages);
            }
            assert!(c.cost >= free.cost, "{n} under {cap}");
        }
    }
}
