//! The report section "static trees": the trees `schedule static_trees` lowered to (roots, how
//! they were chosen, switches and hosts per tree, the blocks, the reserved slots), and the
//! link-load bound of the lowered program on the topology ([`crate::cost::load`]) beside ring
//! allreduce's on the same links, with what the figure leaves out.

use super::Section;
use crate::cost::load::{load, placement};
use crate::diag::Diagnostic;
use crate::driver::figures::gbs;
use crate::ir::{OpKind, ProcKind, Program};
use crate::net::Net;
use crate::sema::model::{CollectiveKind, Family, Model, TreeRoots};
use crate::sim::fluid::show_seconds;
use num_traits::ToPrimitive;
use std::collections::BTreeSet;

/// The section, or None for other families.
pub(crate) fn section(m: &Model) -> Result<Option<Section>, Vec<Diagnostic>> {
    let (Some(c), Some(topo), Some(s)) = (&m.collective, &m.topology, &m.schedule) else {
        return Ok(None);
    };
    let Family::StaticTrees { roots, slots, .. } = &s.family else {
        return Ok(None);
    };
    let (p, _) = crate::lower::lower_with(m, &crate::progress::Quiet)?;
    let trees = p.spec.chunks_per_part as usize;
    let block = p.slice_bytes(crate::ir::Slice::one(crate::ir::Buf::Input, 0));
    let names: Vec<String> = tree_roots(&p);
    let how = match roots {
        TreeRoots::Random { seed } => {
            format!("random among the most central switches, seed {seed}")
        }
        TreeRoots::Named(_) => "named".to_string(),
    };
    let mut lines = vec![format!(
        "{trees} tree{} on `{}`, roots {} ({how}); block b on tree b mod {trees}, {trees} block{} of about {block} B",
        if trees == 1 { "" } else { "s" },
        topo.name,
        names.join(", "),
        if trees == 1 { "" } else { "s" },
    )];
    for t in 0..trees.min(8) {
        let switches = procs_of_tree(&p, t as u32, true);
        let hosts = procs_of_tree(&p, t as u32, false);
        lines.push(format!(
            "  tree {t} (root {}): {switches} switch{} aggregate for {hosts} rank{}",
            names.get(t).map_or("?", String::as_str),
            if switches == 1 { "" } else { "es" },
            if hosts == 1 { "" } else { "s" },
        ));
    }
    if trees > 8 {
        lines.push(format!("  ... and {} more trees", trees - 8));
    }
    lines.push(if c.kind == CollectiveKind::Allreduce {
        format!(
            "slots: {slots} per switch (`slots`), so each host keeps at most {slots} packets in flight and a tree moves at most {slots} packets per round trip (its `packet` model simulates the round trip)"
        )
    } else {
        format!("slots: {slots} per switch (`slots`); a {} frees each slot as its data moves on, so the slots hold no host back", c.kind.name())
    });
    let net = Net::new(topo);
    let Some(at) = placement(&p, c, topo) else {
        return Ok(Some(Section {
            title: "static trees".into(),
            lines,
            warnings: Vec::new(),
        }));
    };
    let l = load(&p, &at, &net);
    let secs = l.bound.to_f64().unwrap_or(0.0);
    let bytes = c.bytes() as f64;
    let busiest = l.busiest.map_or(String::new(), |b| {
        format!(
            " (busiest link {}: {} B at {})",
            net.link_name(b),
            l.bytes[b as usize],
            gbs(net.links[b as usize].bw)
        )
    });
    lines.push(format!(
        "link-load bound: {}{busiest}; algbw at most {}",
        show_seconds(secs),
        gbs(if secs > 0.0 { bytes / secs } else { 0.0 })
    ));
    if c.kind == CollectiveKind::Allreduce && c.ranks.len() > 1 {
        let mut ring = m.clone();
        if let Some(s) = ring.schedule.as_mut() {
            s.family = Family::ring();
        }
        if let Ok((rp, _)) = crate::lower::lower_with(&ring, &crate::progress::Quiet)
            && let Some(rat) = placement(&rp, c, topo)
        {
            let r = load(&rp, &rat, &net);
            let rs = r.bound.to_f64().unwrap_or(0.0);
            lines.push(format!(
                "  ring allreduce on the same links: {} (algbw at most {}): the trees' bound is {:.2}x ring's",
                show_seconds(rs),
                gbs(if rs > 0.0 { bytes / rs } else { 0.0 }),
                if secs > 0.0 { rs / secs } else { 0.0 }
            ));
        }
    }
    lines.push(
        "the bound counts bytes per link only: no latency, start-up, queueing or other traffic; a `packet` model simulates those"
            .to_string(),
    );
    Ok(Some(Section {
        title: "static trees".into(),
        lines,
        warnings: Vec::new(),
    }))
}

/// The root switch of each tree, from the program's name (`static_trees N roots [a, b]`).
fn tree_roots(p: &Program) -> Vec<String> {
    p.name
        .split_once('[')
        .and_then(|(_, rest)| rest.rsplit_once(']'))
        .map(|(list, _)| list.split(", ").map(str::to_string).collect())
        .unwrap_or_default()
}

/// How many switch (or rank) processes take part in block `t`'s tree.
fn procs_of_tree(p: &Program, t: u32, switches: bool) -> usize {
    let ids: BTreeSet<usize> = p
        .procs
        .iter()
        .enumerate()
        .filter(|(_, x)| matches!(x.kind, ProcKind::Switch(_)) == switches)
        .filter(|(_, x)| {
            x.ops.iter().any(|o| {
                matches!(o.kind, OpKind::Send { tag, .. } | OpKind::Recv { tag, .. } | OpKind::RecvReduce { tag, .. } if tag == t)
            })
        })
        .map(|(i, _)| i)
        .collect();
    ids.len()
}
