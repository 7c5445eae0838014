//! The shared vocabulary of ForestColl: a solved [`Forest`] (trees with exact capacities, each
//! tree edge carrying the physical route it takes through switches), the optimum it attains and
//! the bottleneck [`Cut`] that proves it. Producers live in the sibling modules; consumers are
//! the lowering (`lower::forest`), reports and the flow-level simulator.

use crate::sema::model::NodeId;
use num_rational::BigRational;

/// One edge of a spanning tree between two compute nodes, with the physical route it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForestEdge {
    /// Parent (closer to the root), a compute node.
    pub from: NodeId,
    /// Child, a compute node.
    pub to: NodeId,
    /// The directed graph edges (indices into `Topology::graph`'s edges) from `from` to `to`, in
    /// order; more than one when the route passes through switches.
    pub route: std::sync::Arc<[usize]>,
}

/// A spanning out-tree over the compute nodes (in-tree when the forest is reversed for
/// reduce-scatter: data then flows from `to` to `from` along the reversed route).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    /// The compute node at the root.
    pub root: NodeId,
    /// Bytes per second this tree carries (the paper's y times the tree's multiplicity).
    pub rate: BigRational,
    /// Edges in breadth-first order from the root: a parent always appears before its children.
    pub edges: Vec<ForestEdge>,
}

/// The bottleneck cut: the set S whose ratio |S ∩ Vc| / B+(S) is the optimum 1/x*.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// Nodes in S (compute and switch), ascending.
    pub nodes: Vec<NodeId>,
    /// |S ∩ Vc| (with one root, |S ∩ {root}| = 1: the ratio counts the roots inside S, so that
    /// `compute / bandwidth` is always the optimum).
    pub compute: usize,
    /// Total bandwidth leaving S, bytes per second (B+(S); for in-trees, the bandwidth entering).
    pub bandwidth: BigRational,
}

/// Which way the data of a forest flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Out-trees: each root's data spreads to everyone (allgather, broadcast).
    Out,
    /// In-trees: everyone's data gathers at each root (reduce-scatter, reduce).
    In,
}

/// A solved forest: `k` trees rooted at every root, optimal for the topology (or for the fixed k).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forest {
    pub direction: Direction,
    /// Compute nodes in rank order (rank r is `ranks[r]`).
    pub ranks: Vec<NodeId>,
    /// Trees per root.
    pub k: u64,
    /// Time per byte of each root's data at the optimum (1/x*, seconds per byte): an allgather
    /// where every rank contributes M bytes takes M * inv_rate.
    pub inv_rate: BigRational,
    /// The optimum the topology allows with any k (equal to `inv_rate` when k is optimal).
    pub optimum: BigRational,
    /// The cut that proves `optimum`.
    pub bottleneck: Cut,
    /// Trees grouped by root in rank order, `k` per root for allgather-like forests (one root for
    /// broadcast and reduce). Each root's trees together carry rate 1/inv_rate.
    pub trees: Vec<Tree>,
}

/// Whose data the trees carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Roots {
    /// Every rank is a root (allgather, reduce-scatter, and the two halves of allreduce).
    All,
    /// One root (broadcast, reduce).
    One(NodeId),
}

/// How many trees per root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KChoice {
    /// The optimal k when it is small, else the best k below 10 (the paper's practical rule).
    Auto,
    /// Exactly this many trees per root (Section 4.5).
    Fixed(u64),
}

/// Why no forest could be built. The lowering turns these into coded diagnostics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForestError {
    /// Some rank cannot reach (or, for in-trees, be reached from) another: no spanning tree exists.
    Unreachable { from: NodeId, to: NodeId },
    /// Fixed k is zero, or larger than the solver supports.
    BadK { k: u64, max: u64 },
}

impl std::fmt::Display for ForestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ForestError::Unreachable { from, to } => {
                write!(f, "node {to} cannot be reached from node {from}")
            }
            ForestError::BadK { k, max } => write!(f, "k = {k} is not between 1 and {max}"),
        }
    }
}
