//! Human text for `stages: auto` (for `collc build --emit report`): the chosen stage list, its
//! modelled cost stage by stage, recursive doubling's cost beside it, `b_opt` (eq. 5) and how
//! many candidates the search covered. Pure functions returning `String`; deterministic.

use super::{AutoChoice, Params, auto_stages, b_opt, doubling_stages, stage_costs};
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
    report_for(&auto_stages(n, model, bytes), n, model, bytes)
}

/// Describes an [`AutoChoice`] made for `n` ranks, `bytes`-byte messages and `model`.
pub fn report_for(choice: &AutoChoice, n: u64, model: Option<&CostModel>, bytes: u64) -> String {
    let p = Params::for_model(model);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "recursive multiplying, stages: auto, for {n} rank{} and {bytes} B messages",
        if n == 1 { "" } else { "s" }
    );
    let _ = writeln!(out, "  model: {}", basis(model, &p));
    let stages_word = |k: usize| if k == 1 { "stage" } else { "stages" };
    let _ = writeln!(
        out,
        "  chosen: {}  {} {}, {}",
        list(&choice.stages),
        choice.stages.len(),
        stages_word(choice.stages.len()),
        time(&choice.cost)
    );
    for (s, c) in choice
        .stages
        .iter()
        .zip(stage_costs(&choice.stages, n, &p, bytes))
    {
        let _ = writeln!(out, "    {:<12} {}", s.to_string(), time(&c));
    }
    let rd = doubling_stages(n);
    let _ = writeln!(
        out,
        "  recursive doubling: {}  {} {}, {}",
        list(&rd),
        rd.len(),
        stages_word(rd.len()),
        time(&choice.recursive_doubling_cost)
    );
    if !choice.cost.is_zero() && choice.recursive_doubling_cost > choice.cost {
        let ratio = (&choice.recursive_doubling_cost / &choice.cost).to_f64();
        let saved = (BigRational::from_integer(1.into())
            - &choice.cost / &choice.recursive_doubling_cost)
            .to_f64();
        if let (Some(r), Some(s)) = (ratio, saved) {
            let _ = writeln!(
                out,
                "  recursive doubling is {r:.2}x the chosen cost ({:.1}% saved)",
                100.0 * s
            );
        }
    }
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
    let _ = writeln!(
        out,
        "  candidates: {} stage lists (factorisations, collapse/expand, merges)",
        choice.candidates
    );
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
}
