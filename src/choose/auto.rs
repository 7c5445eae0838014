//! `schedule auto` on a file with a topology: every family that implements the collective
//! ([`super::candidates`]) is simulated on the topology at the file's size
//! ([`super::evaluate`], the flow-level model), and the fastest is built (a forest from the
//! forests it was weighed with, [`crate::sema::model::Model::solved`]). Ties go to the
//! earlier candidate, so the choice is the same on every run. Without a topology the static
//! rule of [`crate::lower::family_of`] applies.

use crate::diag::Diagnostic;
use crate::sema::model::{Family, Model};

/// What `schedule auto` chose, and the simulated time of every candidate (seconds), in
/// candidate order; candidates that could not be built carry their reason.
#[derive(Debug, Clone)]
pub struct AutoPick {
    pub family: Family,
    pub times: Vec<(Family, Result<f64, String>)>,
    pub bytes: u64,
    pub params: String,
}

impl AutoPick {
    /// One line for people: the choice, its time and the others'.
    pub fn describe(&self) -> String {
        let show = crate::compare::short;
        let others: Vec<String> = self
            .times
            .iter()
            .map(|(f, t)| match t {
                Ok(t) => format!("{} {}", show(f), crate::sim::fluid::show_seconds(*t)),
                Err(e) => format!("{} not built ({e})", show(f)),
            })
            .collect();
        format!(
            "schedule auto chose {} for {} B: fastest simulated on the topology (flow model, {}); {}",
            show(&self.family),
            self.bytes,
            self.params,
            others.join(", ")
        )
    }
}

impl AutoPick {
    /// The report section: every candidate's simulated time, the chosen one marked.
    pub fn section(&self) -> String {
        let mut out = format!(
            "== schedule auto ==\nfastest family on the topology for {} B (flow model, {}):\n",
            self.bytes, self.params
        );
        for (f, t) in &self.times {
            let mark = if *f == self.family { " <- built" } else { "" };
            match t {
                Ok(t) => out.push_str(&format!(
                    "  {:<24} {}{mark}\n",
                    crate::compare::short(f),
                    crate::sim::fluid::show_seconds(*t)
                )),
                Err(e) => out.push_str(&format!(
                    "  {:<24} not built: {e}\n",
                    crate::compare::short(f)
                )),
            }
        }
        out
    }
}

/// `m` with `schedule auto` (or no schedule) replaced by the fastest family on its topology,
/// and what was weighed; `m` unchanged and None when the schedule is not `auto` or there is no
/// topology.
pub fn resolve(m: &Model) -> Result<(Model, Option<AutoPick>), Vec<Diagnostic>> {
    let is_auto = m
        .schedule
        .as_ref()
        .is_none_or(|s| matches!(s.family, Family::Auto));
    let (Some(c), Some(_)) = (&m.collective, &m.topology) else {
        return Ok((m.clone(), None));
    };
    if !is_auto {
        return Ok((m.clone(), None));
    }
    let params = crate::net::for_file(m, None);
    let bytes = c.bytes();
    let cands = super::candidates(m);
    let times: Vec<(Family, Result<f64, String>)> = cands
        .into_iter()
        .map(|f| {
            let t = super::evaluate(m, &f, bytes, &params)
                .map(|r| r.seconds())
                .map_err(|d| d.first().map_or_else(String::new, |d| d.message.clone()));
            (f, t)
        })
        .collect();
    let best = times
        .iter()
        .filter_map(|(f, t)| t.as_ref().ok().map(|t| (f, *t)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let Some((family, _)) = best else {
        return Ok((m.clone(), None));
    };
    let family = family.clone();
    let mut out = m.clone();
    // A forest is lowered from the forests it was weighed with, not solved again.
    if let Family::Forest { k, .. } = &family {
        out.solved = super::eval::solved(m, *k);
    }
    let span = m.schedule.as_ref().map_or(c.span, |s| s.span);
    out.schedule = Some(crate::sema::model::Schedule {
        family: family.clone(),
        span,
        props: Vec::new(),
    });
    Ok((
        out,
        Some(AutoPick {
            family,
            times,
            bytes,
            params: params.describe(),
        }),
    ))
}
