//! The elaborated model: what the rest of collc (lowering, backends, simulator, language server)
//! consumes. Everything here is evaluated and checked: node and link lists in declaration order,
//! exact bandwidths in bytes per second, latencies in seconds, participants resolved to ranks,
//! schedule parameters decoded. Nothing in here refers back to the AST except spans.

use super::units::Quantity;
use crate::diag::Span;
use num_rational::BigRational;
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::BTreeMap;

/// Index of a node in [`Topology::nodes`] (and of the same node in [`Topology::graph`]).
pub type NodeId = usize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    Compute,
    Switch,
}

#[derive(Debug, Clone)]
pub struct Node {
    /// Full name, e.g. `gpu[1][3]` or `box[2].nic[0]`.
    pub name: String,
    pub kind: NodeKind,
    /// The statement that declared it (maybe in a stdlib file).
    pub span: Span,
}

/// A declared link (one statement execution). `<->` links and `parallel n` become several edges
/// in [`Topology::graph`].
#[derive(Debug, Clone)]
pub struct Link {
    pub from: NodeId,
    pub to: NodeId,
    /// Bytes per second, per direction, per parallel copy.
    pub bandwidth: BigRational,
    /// Seconds.
    pub latency: BigRational,
    pub bidirectional: bool,
    pub parallel: u32,
    pub span: Span,
}

/// One direction of one copy of a link: the edge weight in the graph.
#[derive(Debug, Clone)]
pub struct Edge {
    /// Index into [`Topology::links`].
    pub link: usize,
    pub bandwidth: BigRational,
    pub latency: BigRational,
}

#[derive(Debug, Clone)]
pub struct Topology {
    pub name: String,
    pub span: Span,
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    /// Directed multigraph; node indices equal [`NodeId`]s.
    pub graph: DiGraph<NodeId, Edge>,
}

impl Topology {
    pub fn compute_nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.kind == NodeKind::Compute)
            .map(|(i, _)| i)
    }

    pub fn index(&self, id: NodeId) -> NodeIndex {
        NodeIndex::new(id)
    }

    /// Number of directed edges (each direction and each parallel copy counted).
    pub fn edge_count(&self) -> usize {
        self.graph.edge_count()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CollectiveKind {
    Allreduce,
    Allgather,
    ReduceScatter,
    Broadcast,
    Reduce,
    Barrier,
}

impl CollectiveKind {
    pub const ALL: &'static [(&'static str, CollectiveKind)] = &[
        ("allreduce", CollectiveKind::Allreduce),
        ("allgather", CollectiveKind::Allgather),
        ("reduce_scatter", CollectiveKind::ReduceScatter),
        ("broadcast", CollectiveKind::Broadcast),
        ("reduce", CollectiveKind::Reduce),
        ("barrier", CollectiveKind::Barrier),
    ];

    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }

    pub fn reduces(self) -> bool {
        matches!(
            self,
            CollectiveKind::Allreduce | CollectiveKind::ReduceScatter | CollectiveKind::Reduce
        )
    }

    pub fn has_root(self) -> bool {
        matches!(self, CollectiveKind::Broadcast | CollectiveKind::Reduce)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    I32,
    I64,
    F16,
    Bf16,
    F32,
    F64,
}

impl Dtype {
    pub const ALL: &'static [(&'static str, Dtype)] = &[
        ("i32", Dtype::I32),
        ("i64", Dtype::I64),
        ("f16", Dtype::F16),
        ("bf16", Dtype::Bf16),
        ("f32", Dtype::F32),
        ("f64", Dtype::F64),
    ];

    pub fn bytes(self) -> u64 {
        match self {
            Dtype::F16 | Dtype::Bf16 => 2,
            Dtype::I32 | Dtype::F32 => 4,
            Dtype::I64 | Dtype::F64 => 8,
        }
    }

    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Prod,
    Min,
    Max,
}

impl ReduceOp {
    pub const ALL: &'static [(&'static str, ReduceOp)] = &[
        ("sum", ReduceOp::Sum),
        ("prod", ReduceOp::Prod),
        ("min", ReduceOp::Min),
        ("max", ReduceOp::Max),
    ];

    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }
}

#[derive(Debug, Clone)]
pub struct Collective {
    pub kind: CollectiveKind,
    /// Rank r is the compute node `ranks[r]`.
    pub ranks: Vec<NodeId>,
    /// Number of elements of the collective's buffer: for allreduce, broadcast and reduce each
    /// rank's vector; for allgather the gathered output; for reduce-scatter the input.
    pub count: u64,
    pub dtype: Dtype,
    pub op: ReduceOp,
    /// Rank of the root, for broadcast and reduce.
    pub root: Option<usize>,
    pub span: Span,
}

impl Collective {
    pub fn bytes(&self) -> u64 {
        self.count * self.dtype.bytes()
    }
}

/// One stage of a recursive-multiplying schedule, in the paper's encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// `aB`: exchange with B-1 peers in groups of B.
    Factor { base: u64 },
    /// `cTmB`: ranks below T collapse in groups of B.
    Collapse { threshold: u64, base: u64 },
    /// `eTmB`: the inverse of the matching collapse.
    Expand { threshold: u64, base: u64 },
    /// `mRgGaB`: R remainder ranks merged into G groups of a factor-B first stage.
    Merge {
        remainder: u64,
        groups: u64,
        base: u64,
    },
    /// `nRgGaB`: the inverse merge in the last stage.
    InvMerge {
        remainder: u64,
        groups: u64,
        base: u64,
    },
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Stage::Factor { base } => write!(f, "a{base}"),
            Stage::Collapse { threshold, base } => write!(f, "c{threshold}m{base}"),
            Stage::Expand { threshold, base } => write!(f, "e{threshold}m{base}"),
            Stage::Merge {
                remainder,
                groups,
                base,
            } => write!(f, "m{remainder}g{groups}a{base}"),
            Stage::InvMerge {
                remainder,
                groups,
                base,
            } => write!(f, "n{remainder}g{groups}a{base}"),
        }
    }
}

/// `k: auto` or `k: 3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoOr<T> {
    Auto,
    Fixed(T),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaderPolicy {
    /// The lowest-ranked contributor of a block leads it.
    First,
    /// The leader is chosen by hashing the block id.
    Hash,
    /// A fixed rotation over hosts.
    RoundRobin,
}

impl LeaderPolicy {
    pub const ALL: &'static [(&'static str, LeaderPolicy)] = &[
        ("first", LeaderPolicy::First),
        ("hash", LeaderPolicy::Hash),
        ("round_robin", LeaderPolicy::RoundRobin),
    ];

    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Family {
    /// `stages: auto` picks the cheapest under `model`.
    RecursiveMultiplying {
        stages: AutoOr<Vec<Stage>>,
        model: Option<String>,
    },
    RecursiveDoubling,
    Ring,
    Binomial,
    Forest {
        k: AutoOr<u64>,
        chunks: u64,
    },
    Canary {
        timeout: BigRational,
        table_size: u64,
        elements_per_packet: u64,
        shards: u64,
        leader: LeaderPolicy,
    },
    StaticTrees {
        trees: u64,
    },
    /// Let collc choose the family.
    Auto,
}

impl Family {
    pub fn name(&self) -> &'static str {
        match self {
            Family::RecursiveMultiplying { .. } => "recursive_multiplying",
            Family::RecursiveDoubling => "recursive_doubling",
            Family::Ring => "ring",
            Family::Binomial => "binomial",
            Family::Forest { .. } => "forest",
            Family::Canary { .. } => "canary",
            Family::StaticTrees { .. } => "static_trees",
            Family::Auto => "auto",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Schedule {
    pub family: Family,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CostModelKind {
    Postal,
    PipeliningPostal,
    LogGP,
    Flow,
    Packet,
}

impl CostModelKind {
    pub const ALL: &'static [(&'static str, CostModelKind)] = &[
        ("postal", CostModelKind::Postal),
        ("pipelining_postal", CostModelKind::PipeliningPostal),
        ("loggp", CostModelKind::LogGP),
        ("flow", CostModelKind::Flow),
        ("packet", CostModelKind::Packet),
    ];

    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }
}

/// A declared cost or network model; parameters by name, in base units.
#[derive(Debug, Clone)]
pub struct CostModel {
    pub name: String,
    pub kind: CostModelKind,
    pub params: BTreeMap<String, ModelParam>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelParam {
    Quantity(Quantity),
    Word(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TargetKind {
    Msccl,
    Mpi,
    P4,
    Goal,
    Sim,
}

impl TargetKind {
    pub const ALL: &'static [(&'static str, TargetKind)] = &[
        ("msccl", TargetKind::Msccl),
        ("mpi", TargetKind::Mpi),
        ("p4", TargetKind::P4),
        ("goal", TargetKind::Goal),
        ("sim", TargetKind::Sim),
    ];

    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }
}

#[derive(Debug, Clone)]
pub struct Target {
    pub kind: TargetKind,
    pub options: BTreeMap<String, ModelParam>,
    pub span: Span,
}

/// A whole checked `.coll` file.
#[derive(Debug, Clone)]
pub struct Model {
    /// Absent only in files that declare nothing to build (libraries of generators).
    pub topology: Option<Topology>,
    pub collective: Option<Collective>,
    /// `auto` when a collective is declared without a schedule.
    pub schedule: Option<Schedule>,
    pub models: Vec<CostModel>,
    pub targets: Vec<Target>,
    /// Top-level parameters with their final values (after command-line overrides).
    pub params: BTreeMap<String, String>,
}
