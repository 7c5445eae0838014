//! The link-load bound of a lowered program on the network it runs on: every message's bytes
//! counted on every link of its route ([`crate::net::Net::route`]), summed per directed link.
//! However messages are timed, the program cannot finish before its most loaded link has carried
//! its bytes, so `max over links of bytes / bandwidth` is a lower bound on its time (no latency,
//! start-up or queueing in it; exact rationals). For in-network schedules, where each tree edge
//! carries a block once each way, it is the bandwidth term the Canary paper's 2x over ring comes
//! from.
//!
//! Placement: rank `r` runs on compute node `collective.ranks[r]`, a switch process on the
//! topology node of its name.

use crate::ir::{OpKind, ProcKind, Program};
use crate::net::{LinkId, Net};
use crate::sema::model::{Collective, NodeId, Topology};
use num_bigint::BigInt;
use num_rational::BigRational;
use std::collections::BTreeMap;

/// What the links of a network carry for one program.
#[derive(Debug, Clone)]
pub struct Load {
    /// Bytes per directed link ([`Net::links`] order).
    pub bytes: Vec<u64>,
    /// The most loaded link's bytes over its bandwidth (seconds), and that link.
    pub bound: BigRational,
    pub busiest: Option<LinkId>,
}

/// The node each process of `p` runs on, or None if a switch process names no node.
pub fn placement(p: &Program, c: &Collective, topo: &Topology) -> Option<Vec<NodeId>> {
    let by_name: BTreeMap<&str, NodeId> = topo
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i))
        .collect();
    p.procs
        .iter()
        .enumerate()
        .map(|(i, proc)| match &proc.kind {
            ProcKind::Rank => c.ranks.get(i).copied(),
            ProcKind::Switch(name) => by_name.get(name.as_str()).copied(),
        })
        .collect()
}

/// The load of `p` on `net`, with processes on the nodes `at` ([`placement`]).
pub fn load(p: &Program, at: &[NodeId], net: &Net) -> Load {
    let mut bytes = vec![0u64; net.links.len()];
    let mut routes: BTreeMap<(NodeId, NodeId), Vec<LinkId>> = BTreeMap::new();
    for (i, proc) in p.procs.iter().enumerate() {
        for op in &proc.ops {
            if let OpKind::Send { peer, src, .. } = op.kind {
                let (a, b) = (at[i], at[peer as usize]);
                let n = p.slice_bytes(src);
                let route = routes.entry((a, b)).or_insert_with(|| net.route(a, b));
                for &l in route.iter() {
                    bytes[l as usize] = bytes[l as usize].saturating_add(n);
                }
            }
        }
    }
    let mut bound = BigRational::default();
    let mut busiest = None;
    for (l, &b) in bytes.iter().enumerate() {
        if b == 0 {
            continue;
        }
        let t = BigRational::from_integer(BigInt::from(b)) / net.links[l].bandwidth.clone();
        if t > bound {
            bound = t;
            busiest = Some(l as LinkId);
        }
    }
    Load {
        bytes,
        bound,
        busiest,
    }
}
