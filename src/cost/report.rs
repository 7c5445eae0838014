//! Human text for `stages: auto` (for `collc build --emit report`): the chosen stage list, its
//! modelled cost stage by stage, recursive doubling's cost beside it, `b_opt` (eq. 5) and how
//! many candidates the search covered. Pure functions returning `String`; deterministic.

use super::{AutoChoice, Params, b_opt, doubling_stages, stage_costs};
use crate::sema::model::{CostModel, CostModelKind, Stage};
use crate::sema::units::{Dim, Quantity};
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use std::fmt::Write;

fn time(v: &BigRational) -> String {
    Quantity {
        value: v.clone(),
        dim: Dim::TIME,
    }
    .to_string()
}

fn per_byte(v: &BigRational) -> String {
    Quantity {
        value: v.clone(),
        dim: Dim::INV_BANDWIDTH,
    }
    .to_string()
}

fn list(stages: &[Stage]) -> String {
    let s: Vec<String> = stages.iter().map(|s| s.to_string()).collect();
    format!("[{}]", s.join(", "))
}

/// The parameters stage lists are costed under, and one line saying where they come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Basis {
    pub params: Params,
    pub text: String,
    /// The widest base `stages: auto` may use ([`super::auto_capped`]): set when the cheapest
    /// list would lower to more ops than the limit allows (`lower::auto_basis`); `text` says so.
    pub max_base: Option<u64>,
}

impl Basis {
    /// What `stages: auto` picks under this basis ([`super::auto_capped`] with `max_base`).
    pub fn auto(&self, n: u64, bytes: u64) -> super::AutoChoice {
        super::auto_capped(n, &self.params, bytes, self.max_base)
    }

    /// A declared model's parameters (`None`: the paper's Section 6 settings).
    pub fn declared(model: Option<&CostModel>) -> Basis {
        let params = Params::for_model(model);
        let text = basis(model, &params);
        Basis {
            params,
            text,
            max_base: None,
        }
    }

    /// Parameters derived from a topology, described by `from`.
    pub fn derived(params: Params, from: &str) -> Basis {
        let text = format!(
            "pipelining postal parameters derived from {from} (alpha_p = {}, alpha_r = {}, beta = {}, gamma = {})",
            time(&params.alpha_p),
            time(&params.alpha_r),
            per_byte(&params.beta),
            per_byte(&params.gamma)
        );
        Basis {
            params,
            text,
            max_base: None,
        }
    }
}

/// Which model the costs are under, and the pipelining postal parameters it stands for.
fn basis(model: Option<&CostModel>, p: &Params) -> String {
    let params = format!(
        "alpha_p = {}, alpha_r = {}, beta = {}, gamma = {}",
        time(&p.alpha_p),
        time(&p.alpha_r),
        per_byte(&p.beta),
        per_byte(&p.gamma)
    );
    match model {
        None => format!("the paper's Section 6 pipelining postal settings ({params})"),
        Some(m) => match m.kind {
            CostModelKind::PipeliningPostal => {
                format!("pipelining postal model `{}` ({params})", m.name)
            }
            CostModelKind::Postal => format!(
                "postal model `{}` (alpha = {}, beta = {}, gamma = {}; no overlap)",
                m.name,
                time(&p.alpha_r),
                per_byte(&p.beta),
                per_byte(&p.gamma)
            ),
            CostModelKind::LogGP => format!(
                "LogGP model `{}`, approximated as pipelining postal ({params})",
                m.name
            ),
            k => format!(
                "{} model `{}` has no closed form; ranked under the paper's Section 6 pipelining postal settings ({params})",
                k.name(),
                m.name
            ),
        },
    }
}

/// Runs [`auto_stages`] and describes the result.
pub fn report(n: u64, model: Option<&CostModel>, bytes: u64) -> String {
    report_basis(n, &Basis::declared(model), bytes)
}

/// [`report`] under any [`Basis`] (a declared model or the file's topology).
pub fn report_basis(n: u64, b: &Basis, bytes: u64) -> String {
    report_for_basis(&b.auto(n, bytes), n, b, bytes)
}

fn stages_word(k: usize) -> &'static str {
    if k == 1 { "stage" } else { "stages" }
}

fn header(out: &mut String, what: &str, n: u64, bytes: u64, b: &Basis) {
    let _ = writeln!(
        out,
        "{what}, for {n} rank{} and {bytes} B messages",
        if n == 1 { "" } else { "s" }
    );
    let _ = writeln!(out, "  model: {}", b.text);
}

/// `label: [list]  k stages, cost` and, with `per_stage`, one line per stage with its cost.
fn stage_lines(
    out: &mut String,
    label: &str,
    stages: &[Stage],
    cost: &BigRational,
    per_stage: Option<(u64, &Params, u64)>,
) {
    let _ = writeln!(
        out,
        "  {label}: {}  {} {}, {}",
        list(stages),
        stages.len(),
        stages_word(stages.len()),
        time(cost)
    );
    if let Some((n, p, bytes)) = per_stage {
        for (s, c) in stages.iter().zip(stage_costs(stages, n, p, bytes)) {
            let _ = writeln!(out, "    {:<12} {}", s.to_string(), time(&c));
        }
    }
}

/// The ratio `other / cost` and the share of `other` that `cost` saves, when `other` is larger.
fn saving(other: &BigRational, cost: &BigRational) -> Option<(f64, f64)> {
    if cost.is_zero() || other <= cost {
        return None;
    }
    let ratio = (other / cost).to_f64()?;
    let saved = (BigRational::from_integer(1.into()) - cost / other).to_f64()?;
    Some((ratio, 100.0 * saved))
}

/// Eq. 5's optimal factor for these parameters, or why it does not apply.
fn b_opt_line(out: &mut String, p: &Params, bytes: u64) {
    let per_msg = &p.alpha_r + (&p.beta + &p.gamma) * BigRational::from_integer(bytes.into());
    let ratio = if per_msg.is_zero() {
        None
    } else {
        (&p.alpha_p / &per_msg).to_f64()
    };
    match ratio.and_then(|r| Some((r, b_opt(r)?))) {
        Some((ratio, b)) if ratio >= 1.0 => {
            let _ = writeln!(
                out,
                "  b_opt (eq. 5) = {b:.2} for alpha_p / (alpha_r + n beta + n gamma) = {ratio:.2}: factors near {:.1} are cheapest",
                b + 1.0
            );
        }
        Some((ratio, _)) => {
            let _ = writeln!(
                out,
                "  alpha_p / (alpha_r + n beta + n gamma) = {ratio:.2} is below 1: little overlaps, so small factors are cheapest (eq. 5 needs a ratio of at least 1)"
            );
        }
        None => {}
    }
}

/// Describes an [`AutoChoice`] made for `n` ranks, `bytes`-byte messages and `model`.
pub fn report_for(choice: &AutoChoice, n: u64, model: Option<&CostModel>, bytes: u64) -> String {
    report_for_basis(choice, n, &Basis::declared(model), bytes)
}

/// [`report_for`] under any [`Basis`].
pub fn report_for_basis(choice: &AutoChoice, n: u64, b: &Basis, bytes: u64) -> String {
    let p = &b.params;
    let mut out = String::new();
    header(&mut out, "recursive multiplying, stages: auto", n, bytes, b);
    stage_lines(
        &mut out,
        "chosen",
        &choice.stages,
        &choice.cost,
        Some((n, p, bytes)),
    );
    let rd = doubling_stages(n);
    stage_lines(
        &mut out,
        "recursive doubling",
        &rd,
        &choice.recursive_doubling_cost,
        None,
    );
    if let Some((r, s)) = saving(&choice.recursive_doubling_cost, &choice.cost) {
        let _ = writeln!(
            out,
            "  recursive doubling is {r:.2}x the chosen cost ({s:.1}% saved)"
        );
    }
    b_opt_line(&mut out, p, bytes);
    let _ = writeln!(
        out,
        "  candidates: {} stage lists (factorisations, collapse/expand, merges)",
        choice.candidates
    );
    out
}

/// Describes a fixed stage list (`what` names the schedule, e.g. `recursive doubling`): its cost
/// stage by stage, recursive doubling's beside it (unless the list is recursive doubling), and
/// what `stages: auto` would choose under the same model.
pub fn report_fixed(
    what: &str,
    stages: &[Stage],
    n: u64,
    model: Option<&CostModel>,
    bytes: u64,
) -> String {
    report_fixed_basis(what, stages, n, &Basis::declared(model), bytes)
}

/// [`report_fixed`] under any [`Basis`].
pub fn report_fixed_basis(what: &str, stages: &[Stage], n: u64, b: &Basis, bytes: u64) -> String {
    let p = &b.params;
    let mut out = String::new();
    header(&mut out, what, n, bytes, b);
    let cost = super::schedule_cost_with(stages, n, p, bytes);
    stage_lines(&mut out, "stages", stages, &cost, Some((n, p, bytes)));
    let choice = b.auto(n, bytes);
    let rd = doubling_stages(n);
    if rd != stages {
        stage_lines(
            &mut out,
            "recursive doubling",
            &rd,
            &choice.recursive_doubling_cost,
            None,
        );
    }
    stage_lines(
        &mut out,
        "auto would choose",
        &choice.stages,
        &choice.cost,
        None,
    );
    if let Some((r, s)) = saving(&cost, &choice.cost) {
        let _ = writeln!(
            out,
            "  this schedule costs {r:.2}x the auto choice (`stages: auto` saves {s:.1}%)"
        );
    }
    b_opt_line(&mut out, p, bytes);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_report_for_48() {
        let text = report(48, None, 8);
        assert!(text.contains("48 ranks"), "{text}");
        assert!(text.contains("chosen: ["), "{text}");
        assert!(
            text.contains("recursive doubling: [c32m2, a2, a2, a2, a2, a2, e32m2]"),
            "{text}"
        );
        assert!(text.contains("b_opt (eq. 5)"), "{text}");
        assert!(text.contains("candidates: "), "{text}");
        // Deterministic.
        assert_eq!(text, report(48, None, 8));
    }

    #[test]
    fn single_rank() {
        let text = report(1, None, 8);
        assert!(text.contains("chosen: []  0 stages"), "{text}");
    }

    #[test]
    fn fixed_list_beside_doubling_and_auto() {
        let stages: Vec<Stage> = doubling_stages(8);
        let text = report_fixed("recursive doubling", &stages, 8, None, 8);
        // Section 6 settings: each a2 stage is 500 + 100 + 3.2 + 10 ns.
        assert!(
            text.contains("stages: [a2, a2, a2]  3 stages, 1.8396 us"),
            "{text}"
        );
        assert!(text.contains("    a2           613.2 ns"), "{text}");
        assert!(!text.contains("recursive doubling: ["), "{text}");
        assert!(text.contains("auto would choose: [a8]"), "{text}");
        assert!(text.contains("this schedule costs "), "{text}");
        let m = report_fixed(
            "recursive multiplying",
            &[Stage::Factor { base: 8 }],
            8,
            None,
            8,
        );
        assert!(m.contains("recursive doubling: [a2, a2, a2]"), "{m}");
        assert!(!m.contains("this schedule costs "), "{m}");
    }
}
