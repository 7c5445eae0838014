//! Whole-topology checks that need the finished graph: every participant can reach every other
//! (E0012), and, for ForestColl schedules, every node's total ingress bandwidth equals its egress
//! (E0013; ForestColl's edge splitting and tree packing assume it, Section 4.3 of the paper).

use super::model::{NodeId, Topology};
use super::units::{Dim, Quantity};
use crate::diag::{Code, Diagnostic, Span};
use num_rational::BigRational;
use num_traits::Zero;
use petgraph::visit::{Bfs, Reversed};

/// Reports participants that cannot reach, or be reached from, the first participant.
pub fn connectivity(topo: &Topology, ranks: &[NodeId], span: Span) -> Option<Diagnostic> {
    let first = *ranks.first()?;
    let start = topo.index(first);
    let mut fwd = vec![false; topo.nodes.len()];
    let mut bfs = Bfs::new(&topo.graph, start);
    while let Some(n) = bfs.next(&topo.graph) {
        fwd[n.index()] = true;
    }
    let mut bwd = vec![false; topo.nodes.len()];
    let rev = Reversed(&topo.graph);
    let mut bfs = Bfs::new(rev, start);
    while let Some(n) = bfs.next(rev) {
        bwd[n.index()] = true;
    }
    let bad: Vec<NodeId> = ranks
        .iter()
        .copied()
        .filter(|r| !fwd[*r] || !bwd[*r])
        .collect();
    let b = *bad.first()?;
    let a = &topo.nodes[first].name;
    let name = &topo.nodes[b].name;
    let message = match (fwd[b], bwd[b]) {
        (false, false) => format!("`{name}` and `{a}` cannot reach each other"),
        (false, true) => format!("`{a}` cannot reach `{name}`"),
        _ => format!("`{name}` cannot reach `{a}`"),
    };
    let d = Diagnostic::error(
        Code::Unreachable,
        span,
        format!("compute nodes are not connected: {message}"),
    )
    .label("every participant must reach every other")
    .secondary(topo.nodes[b].span, format!("`{name}` declared here"))
    .help(format!(
        "add links that connect `{name}` to the rest; a `->` link goes one way, `<->` both ways"
    ));
    Some(if bad.len() > 1 {
        let shown: Vec<String> = bad
            .iter()
            .take(4)
            .map(|i| format!("`{}`", topo.nodes[*i].name))
            .collect();
        let more = if bad.len() > 4 { ", ..." } else { "" };
        d.note(format!(
            "{} participants are cut off from `{a}`: {}{more}",
            bad.len(),
            shown.join(", ")
        ))
    } else {
        d
    })
}

/// Reports the first node whose total ingress bandwidth differs from its egress.
pub fn symmetry(topo: &Topology, span: Span) -> Option<Diagnostic> {
    let n = topo.nodes.len();
    let mut inb = vec![BigRational::zero(); n];
    let mut out = vec![BigRational::zero(); n];
    for l in &topo.links {
        let bw = &l.bandwidth * BigRational::from_integer(l.parallel.into());
        out[l.from] += &bw;
        inb[l.to] += &bw;
        if l.bidirectional {
            out[l.to] += &bw;
            inb[l.from] += &bw;
        }
    }
    let i = (0..n).find(|&i| inb[i] != out[i])?;
    let q = |v: &BigRational| Quantity {
        value: v.clone(),
        dim: Dim::BANDWIDTH,
    };
    let node = &topo.nodes[i];
    Some(
        Diagnostic::error(
            Code::AsymmetricBandwidth,
            span,
            format!(
                "forest schedules need symmetric bandwidth, but `{}` receives {} and sends {}",
                node.name,
                q(&inb[i]),
                q(&out[i])
            ),
        )
        .label("ForestColl requires every node's ingress bandwidth to equal its egress")
        .secondary(node.span, format!("`{}` declared here", node.name))
        .help(format!("balance the links of `{}` (use `<->` links, or add the missing direction), or choose another schedule", node.name)),
    )
}

/// True if the topology has at least one switch.
pub fn has_switch(topo: &Topology) -> bool {
    topo.nodes
        .iter()
        .any(|n| n.kind == super::model::NodeKind::Switch)
}
