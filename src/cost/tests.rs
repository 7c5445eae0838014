//! Unit tests of the stage costs against the paper's equations and closed forms.

use super::*;
use crate::sema::model::Stage;
use crate::sema::schedule::{decode_stage, stage_problem};

fn list(s: &str) -> Vec<Stage> {
    s.split(',')
        .map(|x| decode_stage(x.trim()).unwrap().unwrap())
        .collect()
}

fn r(n: i64, d: i64) -> BigRational {
    BigRational::new(n.into(), d.into())
}

fn simple(ap: i64, ar: i64) -> Params {
    Params {
        alpha_p: int(ap as u64),
        alpha_r: int(ar as u64),
        beta: BigRational::zero(),
        gamma: BigRational::zero(),
    }
}

#[test]
fn factor_stage_is_eq3() {
    let p = Params {
        alpha_p: r(5, 1),
        alpha_r: r(1, 1),
        beta: r(1, 10),
        gamma: r(1, 100),
    };
    // alpha_p + b (alpha_r + n beta + n gamma), b = 3, n = 8.
    let want = r(5, 1) + r(3, 1) * (r(1, 1) + r(8, 10) + r(8, 100));
    assert_eq!(pipelined_stage(&p, 3, 8), want);
    assert_eq!(schedule_cost_with(&list("a4"), 4, &p, 8), want);
}

#[test]
fn eq4_closed_form_matches_sum_form() {
    let p = simple(4, 1);
    for b in 1..=7u64 {
        let mut n = 1u64;
        for k in 0..=5u32 {
            // (alpha_p + b alpha_r) k
            let want = int((4 + b) * u64::from(k));
            assert_eq!(uniform_cost(&p, b, n, 0), Some(want.clone()));
            let factors = vec![b + 1; k as usize];
            assert_eq!(factorisation_cost(&p, &factors, 0), want);
            let stages: Vec<Stage> = factors.iter().map(|&f| Stage::Factor { base: f }).collect();
            assert_eq!(schedule_cost_with(&stages, n, &p, 0), want);
            n *= b + 1;
        }
    }
    assert_eq!(uniform_cost(&p, 2, 10, 0), None);
    // alpha_p s + alpha_r sum b_i for a8, a3, a4 (s = 3, sum b_i = 7 + 2 + 3).
    assert_eq!(factorisation_cost(&p, &[8, 3, 4], 0), int(4 * 3 + 12));
}

#[test]
fn postal_gives_eq1_and_eq2() {
    let alpha = r(3, 1_000_000);
    let (beta, gamma) = (r(1, 1_000_000_000), r(1, 4_000_000_000));
    let p = Params::postal(alpha.clone(), beta.clone(), gamma.clone());
    for n in 2..=300u64 {
        let rd = doubling_stages(n);
        assert_eq!(stage_problem(&rd, n), None, "{n}");
        let zero = BigRational::zero();
        let small = Params::postal(alpha.clone(), zero.clone(), zero);
        assert_eq!(
            schedule_cost_with(&rd, n, &small, 64),
            eq2_doubling(&alpha, n)
        );
        if n.is_power_of_two() {
            let eq1 =
                postal_message(&alpha, &beta, &gamma, 64) * int(u64::from(n.trailing_zeros()));
            assert_eq!(schedule_cost_with(&rd, n, &p, 64), eq1);
        }
    }
}

#[test]
fn asymmetric_stages() {
    let p = Params {
        alpha_p: r(10, 1),
        alpha_r: r(1, 1),
        beta: r(1, 2),
        gamma: r(1, 4),
    };
    // n = 4: u = alpha_r + n beta = 3, w = n gamma = 1.
    let c = stage_costs(&list("c8m4, a2, a2, a2, e8m4"), 12, &p, 4);
    assert_eq!(c[0], r(10 + 3 * 4, 1)); // collapse: alpha_p + 3 (u + w)
    assert_eq!(c[4], r(10 + 3 * 3, 1)); // expand: alpha_p + 3 u
    // 7 ranks, m1g1a3 n1g1a2: merge k = 1, inverse merge L = 3, f = 1.
    let c = stage_costs(&list("m1g1a3, n1g1a2"), 7, &p, 4);
    assert_eq!(c[0], r(10 + 3 * 4, 1)); // alpha_p + (2 + 1)(u + w)
    assert_eq!(c[1], r(10 + 2 * 3 + 1, 1)); // alpha_p + (1 + 1) u + 1 w
    // 3 remainders into 1 group: k = 3; L = 12 / 2 = 6 last groups, f = 3.
    let c = stage_costs(&list("m3g1a3, a2, n3g1a2"), 15, &p, 4);
    assert_eq!(c[0], r(10 + 5 * 4, 1));
    assert_eq!(c[2], r(10 + 4 * 3 + 1, 1));
}

/// The closed form of the inverse merge's fan-out against counting.
#[test]
fn fanout_closed_form() {
    for rem in 1..=20u64 {
        for g in 1..=12u64 {
            for l in 1..=12u64 {
                let mut count = vec![0u64; l as usize];
                for i in 0..rem {
                    count[((i % g) % l) as usize] += 1;
                }
                let want = count.into_iter().max().unwrap();
                assert_eq!(inv_merge_fanout(rem, g, l), want, "R={rem} G={g} L={l}");
            }
        }
    }
}

#[test]
fn exact_logs() {
    assert_eq!(exact_log(1, 2), Some(0));
    assert_eq!(exact_log(64, 4), Some(3));
    assert_eq!(exact_log(96, 2), None);
    assert_eq!(exact_log(5, 1), None);
}
