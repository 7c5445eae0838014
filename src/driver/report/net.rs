//! The report section "cost on the network": for host-based schedules on a file with a
//! topology, the schedule as lowered, costed by the round model on the topology
//! ([`crate::cost::rounds`]) and simulated by the flow-level model ([`crate::sim::fluid`]),
//! with the flow parameters and where they come from, so the report's figure and `collc sim`'s
//! can be read side by side. Forests have their own section (`forest::report`).

use super::Section;
use crate::diag::Diagnostic;
use crate::driver::figures::{gbs, pct};
use crate::net::Net;
use crate::sema::model::{AutoOr, Family, Model, Stage};
use crate::sim::fluid::show_seconds;
use num_traits::ToPrimitive;

/// The section, or None for files without a topology and for forests.
pub(crate) fn section(m: &Model) -> Result<Option<Section>, Vec<Diagnostic>> {
    let (Some(c), Some(topo)) = (&m.collective, &m.topology) else {
        return Ok(None);
    };
    let family = crate::lower::family_of(m, c.kind);
    if matches!(
        family,
        Family::Forest { .. } | Family::Canary(_) | Family::StaticTrees { .. }
    ) {
        return Ok(None);
    }
    let params = crate::net::for_file(m, None);
    let net = Net::new(topo);
    let lowered = crate::sim::fluid::lower(m, &params)?;
    let mut lines = vec![
        format!(
            "{} on `{}`: flow model, {}",
            family.name(),
            topo.name,
            params.describe()
        ),
        format!(
            "routes: minimal hops {}; link bandwidths and latencies as declared",
            if params.spray {
                "spread over equal-cost paths"
            } else {
                "with ECMP"
            }
        ),
    ];
    if let Some(r) = lowered.round_cost(&net, &params) {
        let secs = r.seconds.to_f64().unwrap_or(0.0);
        lines.push(format!(
            "round model: {} in {} rounds (each: slowest start-up + most loaded link + reductions)",
            show_seconds(secs),
            r.rounds.len()
        ));
        if let Some((k, worst)) = r
            .rounds
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total().cmp(&b.1.total()).then(b.0.cmp(&a.0)))
        {
            lines.push(format!(
                "  slowest round {k}: {} messages, start-up {}, transfer {}{}",
                worst.messages,
                show_seconds(worst.startup.to_f64().unwrap_or(0.0)),
                show_seconds(worst.transfer.to_f64().unwrap_or(0.0)),
                worst.busiest.map_or(String::new(), |l| format!(
                    " (busiest link {})",
                    net.link_name(l)
                ))
            ));
        }
        // The figure `collc sim` prints, from the same call.
        if let Ok(o) = crate::driver::sim::flow_run(m) {
            let t = o.seconds;
            lines.push(format!(
                "flow simulation (`collc sim`): {}, algbw {}, busbw {} ({:+.1}% against the round model)",
                show_seconds(t),
                gbs(o.algbw.unwrap_or(0.0)),
                gbs(o.busbw.unwrap_or(0.0)),
                pct(t, secs)
            ));
        }
    }
    Ok(Some(Section {
        title: "cost on the network".into(),
        lines,
        warnings: Vec::new(),
    }))
}

/// The round model's cost of each stage list on the file's topology, stage by stage, as lines
/// for the "modelled cost" section (so the figures a reader compares with `collc sim` include
/// the links that several routes share); lists that do not lower are skipped.
pub(crate) fn stage_lists(m: &Model, lists: &[(&str, Vec<Stage>)]) -> Vec<String> {
    let Some(topo) = &m.topology else {
        return Vec::new();
    };
    let params = crate::net::for_file(m, None);
    let net = Net::new(topo);
    let mut out = vec![
        "  on the topology (round model: each stage's slowest start-up plus its most loaded link, links shared by routes included):".to_string(),
    ];
    // The cheapest list on the topology, to say which figures to trust when the two disagree.
    let mut best: Option<(f64, String)> = None;
    for (label, stages) in lists {
        let family = Family::RecursiveMultiplying {
            stages: AutoOr::Fixed(stages.clone()),
            model: None,
        };
        let bytes = m.collective.as_ref().map_or(0, |c| c.bytes());
        let mm = crate::choose::with_family_and_size(m, &family, bytes);
        let Some(r) = crate::sim::fluid::lower(&mm, &params)
            .ok()
            .and_then(|l| l.round_cost(&net, &params))
        else {
            continue;
        };
        let list: Vec<String> = stages.iter().map(|s| s.to_string()).collect();
        let per: Vec<String> = if r.rounds.len() == stages.len() {
            stages
                .iter()
                .zip(&r.rounds)
                .map(|(s, x)| format!("{s} {}", show_seconds(x.total().to_f64().unwrap_or(0.0))))
                .collect()
        } else {
            vec![format!("{} rounds", r.rounds.len())]
        };
        let secs = r.seconds.to_f64().unwrap_or(0.0);
        out.push(format!(
            "    {label}: [{}] {} ({})",
            list.join(", "),
            show_seconds(secs),
            per.join(", ")
        ));
        if best.as_ref().is_none_or(|b| secs < b.0) {
            best = Some((secs, format!("[{}]", list.join(", "))));
        }
    }
    if let Some((_, list)) = best.filter(|_| out.len() > 2) {
        out.push(format!(
            "  on this topology {list} is the cheapest of these; the topology's figures (this section's, `collc sim`'s) are the ones to go by"
        ));
    }
    out
}
