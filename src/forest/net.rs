//! The integer network ForestColl works on (../shared/seeds/forestcoll.txt, Appendix C: "all link
//! bandwidths are integers ... one can always scale them up"). [`Net`] turns a checked
//! [`Topology`] into exact integer capacities: every bandwidth is divided by `unit`, the greatest
//! common divisor of all the topology's edge bandwidths (as rationals), so the smallest
//! integers that keep every ratio exact. For in-trees (reduce-scatter, reduce) the graph is
//! transposed (Section 4.6) and everything downstream builds out-trees on it.
//!
//! Nodes keep their topology ids; the compute nodes of the collective (`ranks`) are the paper's
//! Vc, every other node (switches, and compute nodes outside the collective) only relays and is
//! removed by edge splitting.

use super::types::{Direction, ForestError, Roots};
use crate::sema::model::{NodeId, Topology};
use num_rational::BigRational;
use num_traits::ToPrimitive;
use petgraph::visit::EdgeRef;
use std::collections::BTreeMap;

/// One physical edge of the topology in working direction, with its integer bandwidth.
#[derive(Debug, Clone, Copy)]
pub struct Phys {
    pub from: usize,
    pub to: usize,
    /// Index into `Topology::graph`'s edges.
    pub edge: usize,
    pub bw: i64,
}

#[derive(Debug, Clone)]
pub struct Net {
    pub n: usize,
    pub direction: Direction,
    /// Vc: the collective's compute nodes in rank order.
    pub ranks: Vec<NodeId>,
    pub is_rank: Vec<bool>,
    /// The roots of the trees (all ranks, or one).
    pub roots: Vec<NodeId>,
    /// Bytes per second of one unit of integer bandwidth.
    pub unit: BigRational,
    /// Physical edges (transposed for in-trees), bandwidth in units.
    pub phys: Vec<Phys>,
    /// Parallel physical edges merged: (from, to) -> total units. Parallel copies of a link
    /// (`parallel N`, or several `link` lines between the same pair) are one edge of summed
    /// bandwidth for every capacity computation: tree counts are floored per merged edge.
    pub merged: BTreeMap<(usize, usize), i64>,
    /// The physical edges (indices into `phys`) of each merged edge, aligned with `merged`.
    pub copies: Vec<Vec<usize>>,
    /// Number of the topology's graph edges: route ids from here on name a merged edge of
    /// several copies ([`Net::token`]) until the routes are resolved to physical copies.
    pub graph_edges: usize,
}

impl Net {
    pub fn build(
        topo: &Topology,
        ranks: &[NodeId],
        roots: Roots,
        dir: Direction,
    ) -> Result<Net, ForestError> {
        let n = topo.nodes.len();
        let mut ranks = ranks.to_vec();
        let roots = match roots {
            Roots::All => ranks.clone(),
            Roots::One(r) => {
                if !ranks.contains(&r) {
                    ranks.push(r);
                }
                vec![r]
            }
        };
        let mut is_rank = vec![false; n];
        for &r in &ranks {
            is_rank[r] = true;
        }
        // unit = gcd of all bandwidths, every bandwidth an integer count of it.
        let edges = topo.carrying_edges();
        let crate::ratio::Units { unit, counts } =
            crate::ratio::in_units(edges.iter().map(|e| &e.weight().bandwidth));
        let mut phys = Vec::with_capacity(edges.len());
        let mut merged = BTreeMap::new();
        for (e, units) in edges.iter().zip(&counts) {
            // Bandwidth ratios beyond 2^40 would overflow the flow networks' i64 arithmetic;
            // such links are clamped (they are never the bottleneck next to the small ones).
            let bw = units.to_i64().unwrap_or(i64::MAX).min(1 << 40);
            let (a, b) = (e.source().index(), e.target().index());
            let (from, to) = match dir {
                Direction::Out => (a, b),
                Direction::In => (b, a),
            };
            phys.push(Phys {
                from,
                to,
                edge: e.id().index(),
                bw,
            });
            *merged.entry((from, to)).or_insert(0) += bw;
        }
        let index: BTreeMap<(usize, usize), usize> =
            merged.keys().enumerate().map(|(i, &k)| (k, i)).collect();
        let mut copies = vec![Vec::new(); merged.len()];
        for (i, p) in phys.iter().enumerate() {
            copies[index[&(p.from, p.to)]].push(i);
        }
        let net = Net {
            n,
            direction: dir,
            ranks,
            is_rank,
            roots,
            unit,
            phys,
            merged,
            copies,
            graph_edges: topo.graph.edge_count(),
        };
        net.check_reachable()?;
        Ok(net)
    }

    /// Every rank must be reachable from every root (in the working direction).
    fn check_reachable(&self) -> Result<(), ForestError> {
        let mut fwd = vec![Vec::new(); self.n];
        let mut bwd = vec![Vec::new(); self.n];
        for &(a, b) in self.merged.keys() {
            fwd[a].push(b);
            bwd[b].push(a);
        }
        let reach = crate::mcf::reach;
        let Some(&r0) = self.roots.first() else {
            return Ok(());
        };
        let down = reach(&fwd, r0);
        let up = reach(&bwd, r0);
        let err = |from, to| match self.direction {
            Direction::Out => ForestError::Unreachable { from, to },
            Direction::In => ForestError::Unreachable { from: to, to: from },
        };
        for &v in &self.ranks {
            if !down[v] {
                return Err(err(r0, v));
            }
        }
        if self.roots.len() > 1 {
            // Every rank reaches r0 and r0 reaches every rank: all ranks are mutually reachable.
            for &v in &self.roots {
                if !up[v] {
                    return Err(err(v, r0));
                }
            }
        }
        Ok(())
    }

    /// The route id standing for merged edge `i` (of `merged`) in a piece's path: its graph
    /// edge when it has one copy, else a placeholder beyond the graph's edges that
    /// `routes::trees` replaces by physical copies.
    pub fn token(&self, i: usize) -> u32 {
        match self.copies[i].as_slice() {
            [one] => self.phys[*one].edge as u32,
            _ => (self.graph_edges + i) as u32,
        }
    }

    /// Total units entering each node, by node.
    pub fn ingress(&self) -> Vec<i64> {
        let mut into = vec![0i64; self.n];
        for (&(_, b), &c) in &self.merged {
            into[b] += c;
        }
        into
    }

    /// B+(S): units leaving the node set `inside`.
    pub fn exiting(&self, inside: &[bool]) -> i64 {
        self.merged
            .iter()
            .filter(|((a, b), _)| inside[*a] && !inside[*b])
            .map(|(_, c)| c)
            .sum()
    }

    /// Converts `units` per unit of time into bytes per second.
    pub fn bytes_per_second(&self, units: &BigRational) -> BigRational {
        units * &self.unit
    }
}
