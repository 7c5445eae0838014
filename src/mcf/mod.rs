//! The topology-optimal all-to-all time: the maximum concurrent multicommodity flow with a unit
//! demand between every ordered pair of ranks, solved exactly where the proof closes.
//!
//! All-to-all sends a distinct block of B bytes from every rank to every other; in the fluid
//! model (any routing and splitting, relaying through switches and other compute nodes) its
//! optimal bandwidth time is T* = B * tau, tau the optimum of
//!
//!   minimise tau  s.t.  per source s a flow of one unit to each other rank,
//!                       per directed edge e  sum_s flow_s(e) <= c_e * tau,
//!
//! whose LP dual is: lengths l >= 0 with sum_e c_e l_e = 1, maximise sum_{s != t} dist_l(s, t).
//! Any lengths give a lower bound, any routing an upper bound.
//!
//! Algorithm. Demands are uniform, so a source's flow is a convex combination of out-trees
//! rooted at it, each carrying one unit to every other rank ([`tree`]). Three steps, each
//! giving exact bounds, stopping as soon as they meet:
//! 1. [`greedy`]: one tree per source by rip-up and reroute under exponential congestion
//!    lengths; integer loads give an exact upper bound, and the strongest cut among its
//!    saturated edges an exact lower bound. On hierarchical networks (DGX boxes on a fat tree,
//!    up to 1,024 GPUs) this already proves the optimum.
//! 2. [`master`]: column generation over trees when ranks * edges <= 150,000: the restricted
//!    master LP solved in floating point by an interior-point method (clarabel), new columns
//!    one shortest-path tree per source under the master's edge duals (Dijkstra); each round
//!    yields the Lagrangian dual bound and the strongest cut among the saturated edges, and it
//!    stops when the bounds meet (relative gap 1e-10) or no tree improves.
//! 3. Exactness ([`bounds`], [`certify`], [`exact`]): the weighted trees are re-solved by the
//!    simplex (microlp) for a vertex; tau is snapped to the simplest nearby rational and the
//!    vertex's weights solved exactly (rational elimination, [`linear`]) so that its saturated
//!    edges carry exactly c_e * tau; the dual lengths come from complementary slackness with
//!    that routing (or the snapped interior duals, or the cut), and the lower bound is computed
//!    with exact integer shortest paths. Fallbacks snap the weights directly.
//!
//! Every bound returned is recomputed exactly from its certificate (loads of the returned
//! routing; shortest paths under the returned lengths), so snapping can only cost tightness.
//! Equal bounds prove the optimum ([`Optimum::proved`]); otherwise both are exact (a bracket),
//! which is what larger networks that step 1 does not settle get.
//!
//! Deviations from the math as stated: parallel edges between the same ordered pair are one edge
//! of summed capacity ([`net`]); tau is in seconds per byte of one block; the per-pair routing is
//! kept as weighted trees per source and expanded on request ([`Optimum::routes`]); the
//! bottleneck cut is reported whenever one cut alone proves the lower bound ([`cut`]), a little
//! wider than "the dual lengths are exactly that cut's".

mod bounds;
mod certify;
mod cut;
mod exact;
mod greedy;
mod linear;
mod master;
mod net;
mod text;
mod tree;

use crate::lower::kept::Kept;
use crate::sema::model::{NodeId, Topology};
use net::Network;
pub(crate) use net::reach;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use std::collections::BTreeMap;
use std::fmt;
use tree::{NONE, Tree};

/// Why no optimum could be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McfError {
    /// A rank names no node of the topology.
    UnknownNode(NodeId),
    /// A node appears twice among the ranks.
    DuplicateRank(NodeId),
    /// Some rank cannot reach another.
    Unreachable { from: NodeId, to: NodeId },
    /// Bandwidth ratios beyond 2^52: too wide for the float LP.
    CapacityRange,
    /// The LP solvers failed.
    Solver(String),
}

impl fmt::Display for McfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McfError::UnknownNode(v) => write!(f, "rank node {v} is not in the topology"),
            McfError::DuplicateRank(v) => write!(f, "node {v} is a rank twice"),
            McfError::Unreachable { from, to } => write!(f, "node {from} cannot reach node {to}"),
            McfError::CapacityRange => write!(f, "link bandwidth ratios beyond 2^52"),
            McfError::Solver(m) => write!(f, "LP solver failed: {m}"),
        }
    }
}

impl std::error::Error for McfError {}

/// A cut that alone proves the lower bound: `nodes` (S) and the edges leaving it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// The nodes of S, in id order.
    pub nodes: Vec<NodeId>,
    /// Bytes per second leaving S.
    pub capacity: BigRational,
    /// Ranks inside S.
    pub ranks_inside: usize,
    /// Blocks that must cross: |S ∩ R| * |R \ S|.
    pub demand: u128,
}

/// One route of a pair: a path of nodes from the source rank's node to the destination's, and
/// the fraction of the pair's block it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub path: Vec<NodeId>,
    pub fraction: BigRational,
}

/// The optimum (or an exact bracket of it) with a routing that attains the upper bound.
#[derive(Debug, Clone)]
pub struct Optimum {
    /// The ranks' nodes in rank order.
    pub ranks: Vec<NodeId>,
    /// Exact lower bound on tau, seconds per byte of one block.
    pub tau_lower: BigRational,
    /// Exact upper bound on tau: the routing's largest load over bandwidth.
    pub tau_upper: BigRational,
    /// A tight cut when one proves `tau_lower`.
    pub cut: Option<Cut>,
    /// Column-generation rounds the float solve took.
    pub rounds: usize,
    arcs: Vec<(NodeId, NodeId)>,
    trees: Vec<(Tree, BigRational)>,
}

impl Optimum {
    /// True when the bounds meet: tau is proved optimal.
    pub fn proved(&self) -> bool {
        self.tau_lower == self.tau_upper
    }

    /// The optimal time bounds (lower, upper) in seconds for blocks of `block_bytes`.
    pub fn time(&self, block_bytes: u64) -> (BigRational, BigRational) {
        let b = BigRational::from_integer(BigInt::from(block_bytes));
        (&self.tau_lower * &b, &self.tau_upper * &b)
    }

    /// The routes of the block from rank `s` to rank `t` (empty when s == t or out of range),
    /// equal paths merged, in path order; the fractions sum to exactly 1.
    pub fn routes(&self, s: usize, t: usize) -> Vec<Route> {
        let (Some(_), Some(&to)) = (self.ranks.get(s), self.ranks.get(t)) else {
            return Vec::new();
        };
        if s == t {
            return Vec::new();
        }
        let mut merged: BTreeMap<Vec<NodeId>, BigRational> = BTreeMap::new();
        for (tree, w) in self.trees.iter().filter(|(tr, _)| tr.source == s) {
            *merged
                .entry(self.path(tree, to))
                .or_insert_with(BigRational::zero) += w;
        }
        merged
            .into_iter()
            .map(|(path, fraction)| Route { path, fraction })
            .collect()
    }

    /// Rank `s`'s weighted trees: each tree's weight (the weights of a source sum to exactly 1)
    /// and its path to every rank's node in rank order (empty for `s` itself).
    pub fn source_trees(&self, s: usize) -> Vec<(BigRational, Vec<Vec<NodeId>>)> {
        self.trees
            .iter()
            .filter(|(tr, _)| tr.source == s)
            .map(|(tree, w)| {
                let paths = (self.ranks.iter().enumerate())
                    .map(|(t, &to)| {
                        if t == s {
                            Vec::new()
                        } else {
                            self.path(tree, to)
                        }
                    })
                    .collect();
                (w.clone(), paths)
            })
            .collect()
    }

    /// The path of `tree` from its source to `to`, nodes in order.
    fn path(&self, tree: &Tree, to: NodeId) -> Vec<NodeId> {
        let mut path = vec![to];
        let mut v = to;
        while tree.parent[v] != NONE && path.len() <= tree.parent.len() {
            v = self.arcs[tree.parent[v] as usize].0;
            path.push(v);
        }
        path.reverse();
        path
    }

    /// Number of weighted trees in the routing.
    pub fn tree_count(&self) -> usize {
        self.trees.len()
    }

    /// One plain line: the time for `block_bytes` blocks and what bounds it.
    pub fn describe(&self, topo: &Topology, block_bytes: u64) -> String {
        text::describe(self, topo, block_bytes)
    }
}

/// Optima already solved in this process, by network and ranks; the last [`KEPT_OPTIMA`], so a
/// long-lived process does not keep every network it saw.
static SOLVED: Kept<String, std::sync::Arc<Optimum>> = Kept::new(KEPT_OPTIMA);

/// How many optima a process keeps ([`SOLVED`]): a sweep uses one.
const KEPT_OPTIMA: usize = 8;

/// [`solve`], cached per network and ranks (a comparison lowers the same all-to-all at every
/// size).
pub fn cached(topo: &Topology, ranks: &[NodeId]) -> Result<std::sync::Arc<Optimum>, McfError> {
    let key = format!("{ranks:?}|{}", topo.key());
    SOLVED.get(key, || solve(topo, ranks).map(std::sync::Arc::new), |_| 1)
}

/// The all-to-all optimum on `topo` between `ranks` (node ids in rank order).
pub fn solve(topo: &Topology, ranks: &[NodeId]) -> Result<Optimum, McfError> {
    let net = Network::build(topo, ranks)?;
    let arcs = net.arcs.iter().map(|a| (a.from, a.to)).collect();
    if ranks.len() < 2 {
        return Ok(Optimum {
            ranks: ranks.to_vec(),
            tau_lower: BigRational::zero(),
            tau_upper: BigRational::zero(),
            cut: None,
            rounds: 0,
            arcs,
            trees: Vec::new(),
        });
    }
    let bounds::Bounds {
        lower,
        lengths,
        upper,
        trees,
        weights,
        rounds,
    } = bounds::solve(&net)?;
    if upper < lower {
        return Err(McfError::Solver(format!(
            "exact bounds crossed: {lower} > {upper}"
        )));
    }
    let cut = if lower.is_zero() {
        None
    } else {
        cut::find(&net, &lengths, &lower)
    };
    let per_byte = |units: &BigRational| units / &net.unit;
    let cut = cut.map(|c| Cut {
        nodes: c.nodes,
        capacity: BigRational::from_integer(BigInt::from(c.capacity)) * &net.unit,
        ranks_inside: c.inside,
        demand: c.demand,
    });
    Ok(Optimum {
        ranks: ranks.to_vec(),
        tau_lower: per_byte(&lower),
        tau_upper: per_byte(&upper),
        cut,
        rounds,
        arcs,
        trees: trees.into_iter().zip(weights).collect(),
    })
}

/// A float view of an exact quantity (for printing and tests).
pub fn approx(q: &BigRational) -> f64 {
    q.to_f64().unwrap_or(f64::NAN)
}
