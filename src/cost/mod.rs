//! Analytic cost models for recursive-multiplying schedules, after
//! ../shared/seeds/recursive-multiplying.txt, Section 3: exact costs of stage lists, `b_opt`
//! (eq. 5, [`lambert`]), the `stages: auto` search ([`auto`]) and its human report ([`report()`]).
//! Canary's closed forms (descriptor memory, multicast entries, goodput ceiling) are in [`canary`].
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
//! count per rank, from the lowering of Algorithms 2-6 (src/lower/recursive/ and the group
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
pub mod canary;
mod closed;
pub mod derived;
pub mod lambert;
mod lin;
pub mod load;
pub mod report;
pub mod rounds;
#[cfg(test)]
mod tests;

pub use auto::{AutoChoice, auto_capped, auto_stages, auto_with};
pub use closed::{
    doubling_stages, eq2_doubling, exact_log, factorisation_cost, pipelined_stage, postal_message,
    uniform_cost,
};
pub use lambert::{b_opt, lambert_w0};
pub use lin::{Lin, inv_merge_fanout, schedule_cost, schedule_cost_with, stage_costs, stage_lins};
pub use report::{report, report_fixed, report_for};

use lin::{expand_lin, factor_lin, inv_merge_lin, merge_lin};

use crate::sema::model::{CostModel, CostModelKind, ModelParam};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Zero;

/// The declared model a recursive-multiplying or recursive-doubling schedule is costed under: the
/// one it names with `model:`, else the only declared postal, pipelining postal or LogGP model,
/// else none (the paper's Section 6 parameters, as `collc sim` also falls back). `stages: auto`,
/// `--emit report` and the editor's hover all use this rule, so they agree on the choice.
pub fn schedule_model<'a>(models: &'a [CostModel], named: Option<&str>) -> Option<&'a CostModel> {
    if let Some(name) = named {
        return models.iter().find(|m| m.name == name);
    }
    let mut latency = models.iter().filter(|m| {
        matches!(
            m.kind,
            CostModelKind::Postal | CostModelKind::PipeliningPostal | CostModelKind::LogGP
        )
    });
    match (latency.next(), latency.next()) {
        (Some(m), None) => Some(m),
        _ => None,
    }
}

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
