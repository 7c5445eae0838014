//! Analytic cost models for recursive-multiplying schedules, after
//! ../shared/seeds/recursive-multiplying.txt, Section 3: exact costs of stage lists, `b_opt`
//! (eq. 5, [`lambert`]), the `stages: auto` search ([`auto`]) and its human report ([`report()`]).
//!
//! # Models
//!
//! All costs are exact rationals in seconds ([`BigRational`]); `n` below is the number of bytes
//! each message carries (the whole vector: these are small-message algorithms).
//!
//! - **Postal model** (eq. 1-2): one message costs `alpha + n beta + n gamma` and a rank sends one
//!   message at a time, so recursive doubling on `N = 2^k` ranks costs
//!   `(alpha + n beta + n gamma) log2 N` (eq. 1) and, for small `n`, MPICH's collapse/expand adds
//!   two stages: `alpha (floor(log2 N) + {0 | 2})` (eq. 2). A postal model is the pipelining
//!   postal model below with `alpha_p = 0, alpha_r = alpha` (nothing overlaps), which gives exactly
//!   eq. 1 and eq. 2 (tested).
//! - **Pipelining postal model** (eq. 3): a rank that issues `b` overlapping messages finishes the
//!   stage after `alpha_p + b (alpha_r + n beta + n gamma)`.
//! - **Recursive multiplying** with a uniform factor `b + 1` on `N = (b+1)^k` ranks (eq. 4):
//!   `(alpha_p + b alpha_r) log_{b+1} N` for `n = 0`; [`uniform_cost`] keeps the `n` terms, i.e.
//!   `k` times eq. 3. Over an arbitrary factorisation `N = prod (b_i + 1)` the cost is the sum of
//!   eq. 3 over the stages, `alpha_p s + alpha_r sum b_i` for `n = 0` ([`factorisation_cost`]).
//!   The optimum of eq. 4 over real `b` is eq. 5 ([`lambert::b_opt`]).
//!
//! # Cost of one stage
//!
//! The paper only gives eq. 3 for factor stages, where every rank sends and receives `b` messages
//! and folds `b` values. Collapse, expand and the two merge stages are not symmetric, so we
//! count per rank, from the lowering of Algorithms 2-6 (src/lower/recursive.rs and the group
//! semantics of `sema::schedule::stage_problem`): a rank that exchanges `m` messages in a stage
//! (`m` = the larger of the numbers it sends and receives) and folds `r` received values
//! finishes after `alpha_p + m (alpha_r + n beta) + r n gamma`, and a stage costs its slowest
//! rank. Counting the receiving side as well as the sending side is what makes the model
//! symmetric: a rank that absorbs `B - 1` messages is charged like one that issues `B - 1`
//! (alpha_r includes "processing time in the network interface"). For every factor stage
//! `m = r = b` and this is eq. 3 exactly.
//! The other stages, with `u = alpha_r + n beta` and `w = n gamma`:
//!
//! | stage | busiest rank | `m` | `r` | cost |
//! |---|---|---|---|---|
//! | `aB` (Alg. 2) | everyone: `B-1` sends, `B-1` receives | `B-1` | `B-1` | `alpha_p + (B-1)(u + w)` = eq. 3 |
//! | `cTmB` (Alg. 3) | a block's last rank receives `B-1` values and folds them | `B-1` | `B-1` | `alpha_p + (B-1)(u + w)` |
//! | `eTmB` (Alg. 4) | a block's last rank sends the result to `B-1` ranks; nothing is reduced | `B-1` | 0 | `alpha_p + (B-1) u` |
//! | `mRgGaB` (Alg. 5) | a member of first-stage group 0 gets `B-1` peers plus `k = ceil(R/G)` remainders | `B-1+k` | `B-1+k` | `alpha_p + (B-1+k)(u + w)` |
//! | `nRgGaB` (Alg. 6) | a member of last-stage group 0 sends to `B-1` peers and `f` remainders, folds `B-1` | `B-1+f` | `B-1` | `alpha_p + (B-1+f) u + (B-1) w` |
//!
//! The senders of a collapse (`m = 1`), the receivers of an expand (`m = 1`), a merge's remainder
//! ranks (`B` sends in the first stage, `B` receives and `B-1` folds in the last) never exceed the
//! busiest rank shown, since `B >= 2`, `k >= 1` and `f >= 1`. For the inverse merge the remainder
//! `i` is fed by last-stage group `(i mod G) mod L` with `L` = the merge group's size divided by
//! `B`; group 0 is the fullest, so
//! `f = ceil(G/L) floor(R/G) + ceil((R mod G)/L)` (which is `ceil(R/G)` when `G <= L`).
//! With `B = 2` a collapse and an expand cost `alpha_p + alpha_r + n beta (+ n gamma)`: MPICH's
//! "two additional stages" of eq. 2.
//!
//! A schedule costs the sum of its stages (the paper's summation form): stages are taken to be
//! synchronous, so skew between ranks (Section 6.3, Fig. 20) is not modelled. The sum does not
//! depend on the order of the factor stages, which is why [`mod@auto`] searches multisets of
//! factors.
//!
//! Against the built-in simulator's pipelining postal model (src/sim; tests/cost_vs_sim.rs): for
//! schedules of factor stages only (eq. 4 and the sum form) the two agree exactly, since the
//! stage's busiest rank is the one every peer sends to last and its `b` values land together.
//! For collapse/expand and merges the sum is an upper bound: the simulator charges nothing for
//! taking a message in, and ranks outside a collapse go ahead while it runs.
//!
//! # Parameters
//!
//! [`Params`] holds the pipelining postal parameters. A declared model maps to them as follows:
//! pipelining postal directly; postal as above; LogGP (an approximation for ranking schedules,
//! exact LogGP timing is the simulator's job) as `alpha_r = max(g, o)` (the issue rate of
//! back-to-back messages), `alpha_p = max(0, L + 2o - alpha_r)` (the rest of a message's latency:
//! wire plus both overheads), `beta = G + O`, `gamma = 0`; flow and packet models, which have no
//! latency parameters, and no model at all use the paper's Section 6 simulator settings
//! ([`Params::paper_section6`]).

pub mod auto;
pub mod lambert;
pub mod report;

pub use auto::{AutoChoice, auto_stages, auto_with};
pub use lambert::{b_opt, lambert_w0};
pub use report::{report, report_for};

use crate::sema::model::{CostModel, CostModelKind, ModelParam, Stage};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Zero;

/// Pipelining postal model parameters (eq. 3), in seconds and seconds per byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    /// The part of a message's latency that overlaps with later sends.
    pub alpha_p: BigRational,
    /// The part of a message's latency that does not overlap.
    pub alpha_r: BigRational,
    /// Seconds per byte on the wire.
    pub beta: BigRational,
    /// Seconds per byte to reduce.
    pub gamma: BigRational,
}

fn ns(num: i64, den: i64) -> BigRational {
    BigRational::new(
        BigInt::from(num),
        BigInt::from(den) * BigInt::from(1_000_000_000),
    )
}

impl Params {
    /// The paper's Section 6.2 simulator settings: latency 500 ns (`alpha_p`), pipeline latency
    /// 100 ns (`alpha_r`), 0.4 ns per byte (`beta`), and compute tasks of 10 ns. The compute task
    /// is a fixed time per reduction; we map it to `gamma = 10 ns / 8 B = 1.25 ns/B`, so that it
    /// is exactly 10 ns for the paper's messages (a single 8-byte integer, Section 5).
    pub fn paper_section6() -> Params {
        Params {
            alpha_p: ns(500, 1),
            alpha_r: ns(100, 1),
            beta: ns(2, 5),
            gamma: ns(5, 4),
        }
    }

    /// A postal model (eq. 1): nothing overlaps, so `alpha_p = 0` and `alpha_r = alpha`.
    pub fn postal(alpha: BigRational, beta: BigRational, gamma: BigRational) -> Params {
        Params {
            alpha_p: BigRational::zero(),
            alpha_r: alpha,
            beta,
            gamma,
        }
    }

    /// The parameters a declared model stands for (see the module doc for the mapping); `None`
    /// and models without latency parameters give [`Params::paper_section6`]. A parameter the
    /// model lacks (sema fills defaults, so only hand-built models) takes the Section 6 value.
    pub fn for_model(model: Option<&CostModel>) -> Params {
        let d = Params::paper_section6();
        let Some(m) = model else {
            return d;
        };
        let get = |k: &str, default: &BigRational| -> BigRational {
            match m.params.get(k) {
                Some(ModelParam::Quantity(q)) => q.value.clone(),
                _ => default.clone(),
            }
        };
        let zero = BigRational::zero();
        match m.kind {
            CostModelKind::PipeliningPostal => Params {
                alpha_p: get("alpha_p", &d.alpha_p),
                alpha_r: get("alpha_r", &d.alpha_r),
                beta: get("beta", &d.beta),
                gamma: get("gamma", &zero),
            },
            CostModelKind::Postal => Params::postal(
                get("alpha", &(&d.alpha_p + &d.alpha_r)),
                get("beta", &d.beta),
                get("gamma", &zero),
            ),
            CostModelKind::LogGP => {
                let l = get("L", &ns(2500, 1));
                let o = get("o", &ns(1500, 1));
                let g = get("g", &ns(1000, 1));
                let alpha_r = if g > o { g } else { o.clone() };
                let p = l + &o + &o - &alpha_r;
                Params {
                    alpha_p: if p > zero { p } else { zero.clone() },
                    alpha_r,
                    beta: get("G", &ns(6, 1)) + get("O", &zero),
                    gamma: zero,
                }
            }
            CostModelKind::Flow | CostModelKind::Packet => d,
        }
    }

    /// `alpha_r + n beta`: what one message costs its busiest endpoint, besides `alpha_p`.
    fn per_message(&self, bytes: u64) -> BigRational {
        &self.alpha_r + &self.beta * int(bytes)
    }

    /// `n gamma`: one reduction.
    fn per_reduce(&self, bytes: u64) -> BigRational {
        &self.gamma * int(bytes)
    }
}

fn int(x: u64) -> BigRational {
    BigRational::from_integer(BigInt::from(x))
}

/// A cost as whole multiples of `alpha_p`, of one message (`alpha_r + n beta`) and of one
/// reduction (`n gamma`). Every stage cost in this module has this form, so a schedule's cost
/// is three integers; `stages` is also the number of stages (each stage pays `alpha_p` once).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Lin {
    pub stages: u64,
    pub msgs: u64,
    pub reduces: u64,
}

impl Lin {
    pub const ZERO: Lin = Lin {
        stages: 0,
        msgs: 0,
        reduces: 0,
    };

    fn stage(msgs: u64, reduces: u64) -> Lin {
        Lin {
            stages: 1,
            msgs,
            reduces,
        }
    }

    /// The exact cost in seconds.
    pub fn seconds(&self, p: &Params, bytes: u64) -> BigRational {
        &p.alpha_p * int(self.stages)
            + p.per_message(bytes) * int(self.msgs)
            + p.per_reduce(bytes) * int(self.reduces)
    }
}

impl std::ops::Add for Lin {
    type Output = Lin;
    fn add(self, o: Lin) -> Lin {
        Lin {
            stages: self.stages.saturating_add(o.stages),
            msgs: self.msgs.saturating_add(o.msgs),
            reduces: self.reduces.saturating_add(o.reduces),
        }
    }
}

/// `aB` (eq. 3 with `b = B - 1`); also the collapse `cTmB`.
fn factor_lin(base: u64) -> Lin {
    let b = base.saturating_sub(1);
    Lin::stage(b, b)
}

/// `eTmB`: `B - 1` sends, no reduction.
fn expand_lin(base: u64) -> Lin {
    Lin::stage(base.saturating_sub(1), 0)
}

/// `mRgGaB`: group 0 of the first stage also receives `ceil(R/G)` remainders.
fn merge_lin(remainder: u64, groups: u64, base: u64) -> Lin {
    let k = remainder.div_ceil(groups.max(1));
    let m = base.saturating_sub(1).saturating_add(k);
    Lin::stage(m, m)
}

/// How many remainder ranks the fullest last-stage group of an inverse merge feeds: remainder
/// `i` is fed by group `(i mod G) mod L`.
pub fn inv_merge_fanout(remainder: u64, groups: u64, last_groups: u64) -> u64 {
    let (g, l) = (groups.max(1), last_groups.max(1));
    g.div_ceil(l)
        .saturating_mul(remainder / g)
        .saturating_add((remainder % g).div_ceil(l))
}

/// `nRgGaB` in a merge group of `size` ranks (so `L = size / B` last-stage groups).
fn inv_merge_lin(remainder: u64, groups: u64, base: u64, size: u64) -> Lin {
    let f = inv_merge_fanout(remainder, groups, size / base.max(1));
    let b = base.saturating_sub(1);
    Lin::stage(b.saturating_add(f), b)
}

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

/// The cost of each stage of a list for `n` ranks, as [`Lin`]s (see the module doc's table).
/// The list should pass `sema::schedule::stage_problem`; for one that does not, each stage is
/// still costed (group sizes are tracked as well as they can be) and nothing panics.
pub fn stage_lins(stages: &[Stage], n: u64) -> Vec<Lin> {
    // Group sizes, innermost last, as `stage_problem` tracks them.
    let mut size = n;
    let mut stack: Vec<u64> = Vec::new();
    stages
        .iter()
        .map(|s| match *s {
            Stage::Factor { base } => factor_lin(base),
            Stage::Collapse { threshold, base } => {
                stack.push(size);
                let t = threshold.min(size);
                size = (t / base.max(1)).saturating_add(size - t);
                factor_lin(base)
            }
            Stage::Expand { base, .. } => {
                size = stack.pop().unwrap_or(size);
                expand_lin(base)
            }
            Stage::Merge {
                remainder,
                groups,
                base,
            } => {
                stack.push(size);
                size = size.saturating_sub(remainder);
                merge_lin(remainder, groups, base)
            }
            Stage::InvMerge {
                remainder,
                groups,
                base,
            } => {
                let l = inv_merge_lin(remainder, groups, base, size);
                size = stack.pop().unwrap_or(size);
                l
            }
        })
        .collect()
}

/// The cost in seconds of each stage of `stages` on `n` ranks under `p`, for `bytes`-byte
/// messages.
pub fn stage_costs(stages: &[Stage], n: u64, p: &Params, bytes: u64) -> Vec<BigRational> {
    stage_lins(stages, n)
        .iter()
        .map(|l| l.seconds(p, bytes))
        .collect()
}

/// The modelled cost of an explicit stage list on `n` ranks with `bytes`-byte messages: the sum
/// of its stages' costs (module doc) under `model`'s parameters ([`Params::for_model`]).
pub fn schedule_cost(stages: &[Stage], n: u64, model: &CostModel, bytes: u64) -> BigRational {
    schedule_cost_with(stages, n, &Params::for_model(Some(model)), bytes)
}

/// [`schedule_cost`] with explicit parameters.
pub fn schedule_cost_with(stages: &[Stage], n: u64, p: &Params, bytes: u64) -> BigRational {
    stage_lins(stages, n)
        .into_iter()
        .fold(Lin::ZERO, |a, b| a + b)
        .seconds(p, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
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
                let stages: Vec<Stage> =
                    factors.iter().map(|&f| Stage::Factor { base: f }).collect();
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
}
