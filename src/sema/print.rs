//! The readable text form of a [`Model`] (`collc build FILE --emit model`): nodes, links with
//! exact bandwidths, the collective with its ranks, the schedule, cost models and targets. The
//! output is deterministic (declaration order throughout, sorted maps).

use super::model::{AutoOr, Family, Model, ModelParam, NodeKind};
use super::units::{Dim, Quantity};
use std::fmt::Write;

fn bw(v: &num_rational::BigRational) -> Quantity {
    Quantity {
        value: v.clone(),
        dim: Dim::BANDWIDTH,
    }
}

fn time(v: &num_rational::BigRational) -> Quantity {
    Quantity {
        value: v.clone(),
        dim: Dim::TIME,
    }
}

fn param(p: &ModelParam) -> String {
    match p {
        ModelParam::Quantity(q) => q.to_string(),
        ModelParam::Word(w) => w.clone(),
    }
}

/// Renders the model as text.
pub fn model_text(m: &Model) -> String {
    let mut s = String::new();
    if !m.params.is_empty() {
        let _ = writeln!(s, "params");
        for (k, v) in &m.params {
            let _ = writeln!(s, "  {k} = {v}");
        }
    }
    if let Some(t) = &m.topology {
        let compute = t
            .nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Compute)
            .count();
        let _ = writeln!(
            s,
            "topology {}: {} nodes ({} compute, {} switch), {} links ({} directed edges)",
            t.name,
            t.nodes.len(),
            compute,
            t.nodes.len() - compute,
            t.links.len(),
            t.edge_count()
        );
        for n in &t.nodes {
            let kind = match n.kind {
                NodeKind::Compute => "compute",
                NodeKind::Switch => "switch ",
            };
            let _ = writeln!(s, "  {kind} {}", n.name);
        }
        for l in &t.links {
            let arrow = if l.bidirectional { "<->" } else { "->" };
            let _ = write!(
                s,
                "  link {} {arrow} {} : {}",
                t.nodes[l.from].name,
                t.nodes[l.to].name,
                bw(&l.bandwidth)
            );
            if l.latency != num_rational::BigRational::from_integer(0.into()) {
                let _ = write!(s, ", latency {}", time(&l.latency));
            }
            if l.parallel > 1 {
                let _ = write!(s, ", parallel {}", l.parallel);
            }
            s.push('\n');
        }
    }
    if let (Some(c), Some(t)) = (&m.collective, &m.topology) {
        let _ = writeln!(s, "collective {}", c.kind.name());
        if c.kind == crate::sema::model::CollectiveKind::Barrier {
            let _ = write!(s, "  no data (a barrier only synchronizes)");
        } else {
            let _ = write!(
                s,
                "  {} elements of {} ({})",
                c.count,
                c.dtype.name(),
                Quantity {
                    value: num_rational::BigRational::from_integer(c.bytes().into()),
                    dim: Dim::SIZE
                },
            );
        }
        // Only a reduction has an op: allgather, broadcast and barrier combine nothing.
        if c.kind.reduces() {
            let _ = write!(s, ", op {}", c.op.name());
        }
        s.push('\n');
        if let Some(r) = c.root {
            let _ = writeln!(s, "  root rank {r} ({})", t.nodes[c.ranks[r]].name);
        }
        let _ = writeln!(s, "  {} ranks", c.ranks.len());
        for (r, id) in c.ranks.iter().enumerate() {
            let _ = writeln!(s, "    rank {r}: {}", t.nodes[*id].name);
        }
    }
    if let Some(sch) = &m.schedule {
        let _ = write!(s, "schedule {}", sch.family.name());
        match &sch.family {
            Family::RecursiveMultiplying { stages, model } => {
                match stages {
                    AutoOr::Auto => s.push_str(" stages auto"),
                    AutoOr::Fixed(st) => {
                        let list: Vec<String> = st.iter().map(|x| x.to_string()).collect();
                        let _ = write!(s, " stages [{}]", list.join(", "));
                    }
                }
                if let Some(m) = model {
                    let _ = write!(s, " model {m}");
                }
            }
            Family::NcclTree { chunks } => {
                if let AutoOr::Fixed(c) = chunks {
                    let _ = write!(s, " chunks {c}");
                }
            }
            Family::Forest { k, chunks } => {
                match k {
                    AutoOr::Auto => s.push_str(" k auto"),
                    AutoOr::Fixed(k) => {
                        let _ = write!(s, " k {k}");
                    }
                }
                match chunks {
                    AutoOr::Auto => s.push_str(" chunks auto"),
                    AutoOr::Fixed(c) => {
                        let _ = write!(s, " chunks {c}");
                    }
                }
            }
            Family::Canary(c) => {
                let _ = write!(
                    s,
                    " timeout {} table_size {} elements_per_packet {} shards {} (of {} ports) leader {}",
                    time(&c.timeout),
                    c.table_size,
                    c.elements_per_packet,
                    c.shards,
                    c.ports,
                    c.leader.name()
                );
                match &c.roots {
                    crate::sema::model::CanaryRoots::RoundRobin => s.push_str(" root round_robin"),
                    crate::sema::model::CanaryRoots::Leader => s.push_str(" root leader"),
                    crate::sema::model::CanaryRoots::Named(names) => {
                        let _ = write!(s, " root [{}]", names.join(", "));
                    }
                }
                match &c.retransmit {
                    AutoOr::Auto => s.push_str(" retransmit auto"),
                    AutoOr::Fixed(t) => {
                        let _ = write!(s, " retransmit {}", time(t));
                    }
                }
                let _ = write!(
                    s,
                    " retries {} leader_delay {}",
                    c.retries,
                    time(&c.leader_delay)
                );
                if let Some(f) = c.fixed_point {
                    let _ = write!(s, " fixed_point {f}");
                }
                if c.recovery != crate::sema::model::Recovery::Auto {
                    let _ = write!(s, " recovery {}", c.recovery.name());
                }
            }
            Family::StaticTrees {
                trees,
                roots,
                slots,
            } => {
                let _ = write!(s, " trees {trees} slots {slots}");
                match roots {
                    crate::sema::model::TreeRoots::Random { seed } => {
                        let _ = write!(s, " roots random seed {seed}");
                    }
                    crate::sema::model::TreeRoots::Named(names) => {
                        let _ = write!(s, " roots [{}]", names.join(", "));
                    }
                }
            }
            Family::Ring { slices, channels } => {
                if let AutoOr::Fixed(n) = slices {
                    let _ = write!(s, " slices {n}");
                }
                match channels {
                    AutoOr::Auto => s.push_str(" channels auto"),
                    AutoOr::Fixed(1) => {}
                    AutoOr::Fixed(n) => {
                        let _ = write!(s, " channels {n}");
                    }
                }
            }
            Family::Pairwise { concurrent } => {
                if *concurrent {
                    s.push_str(" concurrent");
                }
            }
            Family::Bruck { radix } => {
                let _ = write!(s, " radix {radix}");
            }
            Family::Mcf { chunks } => {
                if let AutoOr::Fixed(c) = chunks {
                    let _ = write!(s, " chunks {c}");
                }
            }
            Family::RecursiveDoubling | Family::Binomial | Family::Hierarchical | Family::Auto => {}
        }
        s.push('\n');
    }
    for md in &m.models {
        let _ = write!(s, "model {}: {}", md.name, md.kind.name());
        for (k, v) in &md.params {
            let _ = write!(s, " {k}={}", param(v));
        }
        s.push('\n');
    }
    for t in &m.targets {
        let _ = write!(s, "target {}", t.kind.name());
        for (k, v) in &t.options {
            let _ = write!(s, " {k}={}", param(v));
        }
        s.push('\n');
    }
    s
}
