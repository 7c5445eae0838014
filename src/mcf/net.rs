//! The integer network the all-to-all LP works on: every directed edge of the topology with a
//! positive bandwidth, parallel copies between the same ordered pair merged into one edge whose
//! capacity is their sum, and every bandwidth divided by `unit`, the rational greatest common
//! divisor of all of them ([`crate::ratio::in_units`]), so capacities are the smallest integers
//! with the same ratios. Self-loops carry nothing and are dropped. Every node relays, compute
//! nodes included. Capacities above 2^52 units (ratios the float LP could not hold exactly) are
//! refused with an error rather than clamped.

use super::McfError;
use crate::sema::model::{NodeId, Topology};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use petgraph::visit::EdgeRef;
use std::collections::BTreeMap;

/// Largest capacity in units: f64 holds every integer up to here exactly.
const MAX_CAP: i64 = 1 << 52;

/// One merged directed edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arc {
    pub from: NodeId,
    pub to: NodeId,
    /// Capacity in units of [`Network::unit`] bytes per second.
    pub cap: i64,
}

#[derive(Debug, Clone)]
pub struct Network {
    /// Number of topology nodes (node ids are topology ids).
    pub n: usize,
    /// The ranks' nodes in rank order.
    pub ranks: Vec<NodeId>,
    /// `rank_of[v]`: the rank of node `v`, if it is one.
    pub rank_of: Vec<Option<usize>>,
    /// Bytes per second of one capacity unit.
    pub unit: BigRational,
    /// Merged edges, sorted by (from, to).
    pub arcs: Vec<Arc>,
    /// Indices into `arcs` of the edges leaving each node, in order.
    pub out: Vec<Vec<usize>>,
}

impl Network {
    pub fn build(topo: &Topology, ranks: &[NodeId]) -> Result<Network, McfError> {
        let n = topo.nodes.len();
        let mut rank_of = vec![None; n];
        for (i, &r) in ranks.iter().enumerate() {
            let slot = rank_of.get_mut(r).ok_or(McfError::UnknownNode(r))?;
            if slot.is_some() {
                return Err(McfError::DuplicateRank(r));
            }
            *slot = Some(i);
        }
        let edges = topo.carrying_edges();
        let units = crate::ratio::in_units(edges.iter().map(|e| &e.weight().bandwidth));
        let mut merged: BTreeMap<(NodeId, NodeId), BigInt> = BTreeMap::new();
        for (e, count) in edges.iter().zip(&units.counts) {
            *merged
                .entry((e.source().index(), e.target().index()))
                .or_insert_with(BigInt::zero) += count;
        }
        let mut arcs = Vec::with_capacity(merged.len());
        let mut out = vec![Vec::new(); n];
        for ((from, to), cap) in merged {
            let cap = cap
                .to_i64()
                .filter(|c| *c <= MAX_CAP)
                .ok_or(McfError::CapacityRange)?;
            out[from].push(arcs.len());
            arcs.push(Arc { from, to, cap });
        }
        let net = Network {
            n,
            ranks: ranks.to_vec(),
            rank_of,
            unit: units.unit,
            arcs,
            out,
        };
        net.check_reachable()?;
        Ok(net)
    }

    /// Every rank reaches every other: rank 0 reaches all and all reach rank 0.
    fn check_reachable(&self) -> Result<(), McfError> {
        let Some(&r0) = self.ranks.first() else {
            return Ok(());
        };
        let mut back = vec![Vec::new(); self.n];
        for a in &self.arcs {
            back[a.to].push(a.from);
        }
        let fwd: Vec<Vec<NodeId>> = self
            .out
            .iter()
            .map(|es| es.iter().map(|&e| self.arcs[e].to).collect())
            .collect();
        let down = reach(&fwd, r0);
        let up = reach(&back, r0);
        for &r in &self.ranks {
            if !down[r] {
                return Err(McfError::Unreachable { from: r0, to: r });
            }
            if !up[r] {
                return Err(McfError::Unreachable { from: r, to: r0 });
            }
        }
        Ok(())
    }
}

/// The nodes reachable from `s` along `adj`.
pub fn reach(adj: &[Vec<NodeId>], s: NodeId) -> Vec<bool> {
    let mut seen = vec![false; adj.len()];
    let mut stack = vec![s];
    seen[s] = true;
    while let Some(u) = stack.pop() {
        for &v in &adj[u] {
            if !seen[v] {
                seen[v] = true;
                stack.push(v);
            }
        }
    }
    seen
}
