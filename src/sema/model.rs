//! The elaborated model: what the rest of collc (lowering, backends, simulator, language server)
//! consumes. Everything here is evaluated and checked: node and link lists in declaration order,
//! exact bandwidths in bytes per second, latencies in seconds, participants resolved to ranks,
//! schedule parameters decoded. Nothing in here refers back to the AST except spans.

use super::units::Quantity;
use crate::diag::Span;
use num_rational::BigRational;
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::BTreeMap;

/// Declares an enum whose variants are written as words in `.coll` files: the variants with their
/// words, `ALL` (word and variant, in declaration order) and `name()`.
macro_rules! keyword_enum {
    ($(#[$m:meta])* $vis:vis enum $name:ident { $($(#[$vm:meta])* $var:ident = $word:literal,)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name { $($(#[$vm])* $var,)* }

        impl $name {
            pub const ALL: &'static [(&'static str, $name)] = &[$(($word, $name::$var),)*];

            pub fn name(self) -> &'static str {
                match self { $($name::$var => $word,)* }
            }
        }
    };
}

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
    /// The nodes and links written out in full, for caches of what depends on the network
    /// (two keys are equal only when the topologies are).
    pub fn key(&self) -> String {
        let mut key = format!("{}|", self.nodes.len());
        for n in &self.nodes {
            key.push_str(&format!("{:?}{};", n.kind, n.name));
        }
        for l in &self.links {
            key.push_str(&format!(
                "{}>{}:{}/{}x{}{};",
                l.from, l.to, l.bandwidth, l.latency, l.parallel, l.bidirectional
            ));
        }
        key
    }

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

    /// The graph's edges that can carry data: positive bandwidth, between two distinct nodes
    /// (what the flow problems of ForestColl and the all-to-all optimum are built on).
    pub fn carrying_edges(&self) -> Vec<petgraph::graph::EdgeReference<'_, Edge>> {
        use petgraph::visit::EdgeRef;
        self.graph
            .edge_references()
            .filter(|e| e.weight().bandwidth > BigRational::from_integer(0.into()))
            .filter(|e| e.source() != e.target())
            .collect()
    }

    /// Number of directed edges (each direction and each parallel copy counted).
    pub fn edge_count(&self) -> usize {
        self.graph.edge_count()
    }
}

keyword_enum! {
    pub enum CollectiveKind {
        Allreduce = "allreduce",
        Allgather = "allgather",
        ReduceScatter = "reduce_scatter",
        Broadcast = "broadcast",
        Reduce = "reduce",
        Barrier = "barrier",
        Alltoall = "alltoall",
    }
}

impl CollectiveKind {
    pub fn reduces(self) -> bool {
        matches!(
            self,
            CollectiveKind::Allreduce | CollectiveKind::ReduceScatter | CollectiveKind::Reduce
        )
    }

    /// Every rank sends a distinct block to every rank (all-to-all): nothing is shared or
    /// combined, so input and output are both cut into one part per rank.
    pub fn exchanges(self) -> bool {
        self == CollectiveKind::Alltoall
    }

    pub fn has_root(self) -> bool {
        matches!(self, CollectiveKind::Broadcast | CollectiveKind::Reduce)
    }
}

keyword_enum! {
    pub enum Dtype {
        I32 = "i32",
        I64 = "i64",
        F16 = "f16",
        Bf16 = "bf16",
        F32 = "f32",
        F64 = "f64",
    }
}

impl Dtype {
    pub fn bytes(self) -> u64 {
        match self {
            Dtype::F16 | Dtype::Bf16 => 2,
            Dtype::I32 | Dtype::F32 => 4,
            Dtype::I64 | Dtype::F64 => 8,
        }
    }
}

keyword_enum! {
    pub enum ReduceOp {
        Sum = "sum",
        Prod = "prod",
        Min = "min",
        Max = "max",
    }
}

#[derive(Debug, Clone)]
pub struct Collective {
    pub kind: CollectiveKind,
    /// Rank r is the compute node `ranks[r]`.
    pub ranks: Vec<NodeId>,
    /// Number of elements of the collective's buffer: for allreduce, broadcast and reduce each
    /// rank's vector; for allgather the gathered output; for reduce-scatter the input; for
    /// all-to-all each rank's send buffer (N blocks, as nccl-tests' `size` counts it).
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

impl Stage {
    /// The stage's base B (its group size: `aB`, `cTmB`, `mRgGaB`, ...).
    pub fn base(&self) -> u64 {
        match *self {
            Stage::Factor { base }
            | Stage::Collapse { base, .. }
            | Stage::Expand { base, .. }
            | Stage::Merge { base, .. }
            | Stage::InvMerge { base, .. } => base,
        }
    }
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

keyword_enum! {
    /// How a Canary leader recovers a block whose contributions were lost (`recovery`).
    pub enum Recovery {
        /// Every sum carries a bitmap of the ranks whose data it holds (switches join them as
        /// they add the data; a host's own contribution is named by its source), so a leader
        /// re-asks only the ranks missing from its partial sum: a departure from the paper
        /// (its Section 3.3 rejects per-host bitmaps as growing with the hosts), which every
        /// packet a switch or leader sends pays for with ceil(ranks / 8) header bytes.
        Contributors = "contributors",
        /// The paper's Section 3.3: a failed block is re-issued by every host under a fresh
        /// id, and after `retries` failures reduced by the hosts.
        Paper = "paper",
        /// The default: contributor recovery where a generation is more likely to lose a
        /// contribution than not ([`Recovery::contributors`]), else the paper's.
        Auto = "auto",
    }
}

impl Recovery {
    /// Whether packets carry contributor sets on `ranks` ranks with `loss` per link. `auto`
    /// chooses them where even the ranks' own links get a generation's contributions up with
    /// less than even odds, (1 - loss)^ranks < 1/2: the paper's recovery then re-sends each
    /// contribution more than once on average (1/p - 1 re-sends for a chance p), and
    /// contributor recovery only the lost ones (the other links a generation climbs lower p
    /// further, so the bound errs towards the paper's recovery).
    pub fn contributors(self, loss: f64, ranks: u32) -> bool {
        match self {
            Recovery::Contributors => true,
            Recovery::Paper => false,
            Recovery::Auto => loss > 0.0 && Recovery::own_links(loss, ranks) < 0.5,
        }
    }

    /// (1 - loss)^n: the chance that a packet crosses n lossy links, or that n packets each
    /// cross one; `auto` weighs n = ranks (every contribution of a generation crossing its
    /// own host link).
    pub fn own_links(loss: f64, ranks: u32) -> f64 {
        (1.0 - loss.clamp(0.0, 1.0)).powi(ranks as i32)
    }
}

keyword_enum! {
    pub enum LeaderPolicy {
        /// The lowest-ranked contributor of a block leads it.
        First = "first",
        /// The leader is chosen by hashing the block id.
        Hash = "hash",
        /// A fixed rotation over hosts.
        RoundRobin = "round_robin",
    }
}

/// The parameters of `schedule canary` (../shared/seeds/canary.txt, Sections 3 to 4), defaults
/// filled in and checked by `sema::schedule::canary`. Times in seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanaryParams {
    /// How long a switch waits for more children of a block (t, Section 3.1.1).
    pub timeout: BigRational,
    /// Entries of each switch's descriptor table (Section 3.2).
    pub table_size: u64,
    /// Elements per packet (Section 5.1).
    pub elements_per_packet: u64,
    /// Shards of the children bitmap (Section 4.2); divides [`CanaryParams::ports`].
    pub shards: u64,
    /// Ports of the topology's largest switch: the width of the children bitmap.
    pub ports: u64,
    pub leader: LeaderPolicy,
    /// Root switches, blocks taking them in turn (Section 3.1.3).
    pub roots: CanaryRoots,
    /// A host's retransmission timeout (Section 3.3); `auto` is 2 RTT (Section 6).
    pub retransmit: AutoOr<BigRational>,
    /// Failed re-issues of a block before it falls back to a host-based reduction.
    pub retries: u64,
    /// How a leader recovers lost contributions (`auto` by default).
    pub recovery: Recovery,
    /// The leader's time to aggregate a block (r, Section 3.2.2).
    pub leader_delay: BigRational,
    /// Fractional bits of the 32-bit fixed-point numbers float data travels as (Section 6);
    /// None for integer data.
    pub fixed_point: Option<u32>,
    /// Bytes of one element on the wire: the dtype's for integers, 4 for fixed point.
    pub wire_bytes: u64,
}

impl CanaryParams {
    /// The 19-byte Canary header of Section 4.1.
    pub const HEADER: u64 = 19;

    /// Data bytes per packet.
    pub fn payload(&self) -> u64 {
        self.elements_per_packet * self.wire_bytes
    }
}

/// Which switches root Canary's blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CanaryRoots {
    /// The switch each block's leader hangs from (the paper's Fig. 3: root S4 above leaders H2
    /// and H3): packets route towards the leader, so every minimal up port is a choice and the
    /// tree forms where adaptive routing sends them. The default.
    Leader,
    /// The most central switches (smallest largest hop distance to the compute nodes), in turn.
    RoundRobin,
    /// These switches, by node name, in turn.
    Named(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Family {
    /// `stages: auto` picks the cheapest under `model`.
    RecursiveMultiplying {
        stages: AutoOr<Vec<Stage>>,
        model: Option<String>,
    },
    RecursiveDoubling,
    /// `slices: auto` (the default) is one message per step, except in the packet simulator
    /// ([`crate::lower::ring_slices`]).
    /// `channels: auto` lays as many rings as bound the time best
    /// ([`crate::net::rings::search`]); a fixed count lays that many (one unless declared).
    Ring {
        slices: AutoOr<u64>,
        channels: AutoOr<u64>,
    },
    Binomial,
    /// NCCL's tree allreduce: two binary trees over the boxes, a chain inside each
    /// ([`crate::lower::nccl_tree`]); `chunks` pipelined chunks per tree (`auto`:
    /// [`crate::lower::nccl_tree_chunks`]).
    NcclTree {
        chunks: AutoOr<u64>,
    },
    /// `chunks: auto` (the default) is resolved by [`crate::forest::chunking::choose`].
    Forest {
        k: AutoOr<u64>,
        chunks: AutoOr<u64>,
    },
    /// Canary's dynamic in-network trees ([`CanaryParams`]).
    Canary(Box<CanaryParams>),
    /// In-network reduction trees rooted at switches, blocks assigned round robin; each switch
    /// reserves `slots` aggregation slots for the collective (a power of two), so an allreduce's
    /// hosts keep at most that many blocks in flight ([`DEFAULT_SLOTS`] unless declared).
    StaticTrees {
        trees: u64,
        roots: TreeRoots,
        slots: u64,
    },
    /// All-to-all by direct exchange: each block goes straight from its source to its
    /// destination ([`crate::lower::alltoall`]). `concurrent: false` (the default) runs N-1
    /// shifted steps (in step k rank r sends to r+k and receives from r-k); `concurrent: true`
    /// posts every exchange at once.
    Pairwise {
        concurrent: bool,
    },
    /// Bruck's all-to-all: ceil(log_radix N) rounds, round i sending together every block whose
    /// i-th base-`radix` digit of its distance is d to the rank d radix^i ahead.
    Bruck {
        radix: u64,
    },
    /// The two-level all-to-all of GPU clusters: gather inside each box to one rank per peer
    /// box, one exchange per box pair over the network, scatter inside the box.
    Hierarchical,
    /// The topology-optimal all-to-all: every block routed over the paths of the maximum
    /// concurrent flow of the N(N-1) demands on the file's network ([`crate::mcf`]), each block
    /// cut into `chunks` chunks shared among its source's trees by their weights (`auto`: the
    /// fewest that give every tree its exact share, at most [`crate::lower::MCF_MAX_CHUNKS`]).
    Mcf {
        chunks: AutoOr<u64>,
    },
    /// Let collc choose the family.
    Auto,
}

/// Static trees' aggregation slots per switch when the schedule does not say: 64 blocks, 64 KiB
/// of switch memory at 1 KiB per packet (docs/figures/canary-fig7.md, "Reserved slots").
pub const DEFAULT_SLOTS: u64 = 64;

impl Family {
    /// Static trees with their slots and random roots left to collc.
    pub fn static_trees(trees: u64) -> Family {
        Family::StaticTrees {
            trees,
            roots: TreeRoots::Random { seed: 0 },
            slots: DEFAULT_SLOTS,
        }
    }

    /// One ring in node order, its slices left to collc (what `schedule ring;` declares).
    pub fn ring() -> Family {
        Family::Ring {
            slices: AutoOr::Auto,
            channels: AutoOr::Fixed(1),
        }
    }

    /// The ring as NCCL and RCCL run it: one ring per channel, as many channels as bound the
    /// time best ([`crate::net::rings`]), what `collc compare` and `schedule auto` weigh.
    pub fn channel_rings() -> Family {
        Family::Ring {
            slices: AutoOr::Auto,
            channels: AutoOr::Auto,
        }
    }

    /// True for the runtimes' own algorithms (NCCL's and RCCL's ring over channels and NCCL's
    /// tree), whose protocol the runtime's tuner picks per call; every other family runs as a
    /// schedule handed to the runtime (MSCCL XML), whose protocol the XML fixes.
    pub fn is_runtime_own(&self) -> bool {
        matches!(
            self,
            Family::NcclTree { .. }
                | Family::Ring {
                    channels: AutoOr::Auto,
                    ..
                }
        )
    }

    pub fn name(&self) -> &'static str {
        match self {
            Family::RecursiveMultiplying { .. } => "recursive_multiplying",
            Family::RecursiveDoubling => "recursive_doubling",
            Family::Ring { .. } => "ring",
            Family::Binomial => "binomial",
            Family::NcclTree { .. } => "nccl_tree",
            Family::Forest { .. } => "forest",
            Family::Canary(_) => "canary",
            Family::StaticTrees { .. } => "static_trees",
            Family::Pairwise { .. } => "pairwise",
            Family::Bruck { .. } => "bruck",
            Family::Hierarchical => "hierarchical",
            Family::Mcf { .. } => "mcf",
            Family::Auto => "auto",
        }
    }

    /// Whether the family aggregates in switches (switch processes in the IR).
    pub fn in_network(&self) -> bool {
        matches!(self, Family::Canary(_) | Family::StaticTrees { .. })
    }

    /// Where schedules of this family can go, for a target that cannot express it.
    pub fn target_help(&self) -> &'static str {
        if self.in_network() {
            "in-network schedules go to `p4`, `goal` or `sim`; for MSCCL or MPI use `ring`, `recursive_doubling` or `forest`"
        } else {
            "host-based schedules go to `msccl`, `mpi`, `goal` or `sim`; for P4 use `canary` or `static_trees`"
        }
    }
}

/// How the roots of static in-network trees are chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeRoots {
    /// Distinct switches at random (by `seed`) among the most central ones.
    Random { seed: u64 },
    /// These switches, by node name, one per tree.
    Named(Vec<String>),
}

#[derive(Debug, Clone)]
pub struct Schedule {
    pub family: Family,
    pub span: Span,
    /// Where each property was written (`chunks: 4` ...), for diagnostics about one of them.
    pub props: Vec<(String, Span)>,
}

impl Schedule {
    /// The span of property `name` as written, else the whole schedule's.
    pub fn prop_span(&self, name: &str) -> Span {
        self.props
            .iter()
            .find(|(n, _)| n == name)
            .map_or(self.span, |(_, s)| *s)
    }
}

keyword_enum! {
    pub enum CostModelKind {
        Postal = "postal",
        PipeliningPostal = "pipelining_postal",
        LogGP = "loggp",
        Flow = "flow",
        Packet = "packet",
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

keyword_enum! {
    pub enum TargetKind {
        Msccl = "msccl",
        Mpi = "mpi",
        P4 = "p4",
        Goal = "goal",
        Sim = "sim",
    }
}

impl TargetKind {
    /// Why this target cannot express a `f` schedule, or None if it can.
    pub fn cannot_express(self, f: &Family) -> Option<&'static str> {
        use TargetKind::*;
        match (self, f.in_network()) {
            (Msccl, true) => Some("MSCCL runs on GPUs and cannot program switches"),
            (Mpi, true) => Some("MPI programs run on hosts and cannot program switches"),
            (P4, false) if *f != Family::Auto => Some(
                "the P4 target emits in-network aggregation; host-based schedules have nothing to put in a switch",
            ),
            _ => None,
        }
    }

    /// Whether `collc build` has a backend for this target (`crate::target::REGISTRY`; a test
    /// keeps the two in step). `sim` is run by `collc sim`, not built.
    pub fn has_backend(self) -> bool {
        matches!(
            self,
            TargetKind::Msccl | TargetKind::Mpi | TargetKind::Goal | TargetKind::P4
        )
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
    /// The limits the file was checked under; lowering and simulation keep to them too.
    pub limits: crate::sema::elab::Limits,
    /// Forests already solved for this model's topology and collective, which a forest
    /// lowering takes instead of solving again (see [`crate::lower::forest::Solved`]); `None`
    /// from the checker.
    pub solved: Option<std::sync::Arc<crate::lower::forest::Solved>>,
}

impl Model {
    /// A model with only a collective and its schedule: `kind` on ranks `0..n` (rank r on
    /// compute node r), `count` elements of `dtype` reduced by `op`, scheduled by `family`; no
    /// topology, cost model or target, and empty spans. What the lowerings need, for tests,
    /// benchmarks and tools that build schedules without a `.coll` file.
    pub fn bare(
        kind: CollectiveKind,
        n: usize,
        count: u64,
        dtype: Dtype,
        op: ReduceOp,
        root: Option<usize>,
        family: Family,
    ) -> Model {
        let span = Span::default();
        Model {
            topology: None,
            collective: Some(Collective {
                kind,
                ranks: (0..n).collect(),
                count,
                dtype,
                op,
                root,
                span,
            }),
            schedule: Some(Schedule {
                family,
                span,
                props: Vec::new(),
            }),
            models: Vec::new(),
            targets: Vec::new(),
            params: BTreeMap::new(),
            limits: crate::sema::elab::Limits::default(),
            solved: None,
        }
    }

    /// The `model` option of the file's `target sim` block, if any.
    pub fn sim_target_model(&self) -> Option<&str> {
        self.targets
            .iter()
            .filter(|t| t.kind == TargetKind::Sim)
            .find_map(|t| match t.options.get("model") {
                Some(ModelParam::Word(w)) => Some(w.as_str()),
                _ => None,
            })
    }

    /// Where a problem with building this file is reported: the `target` declaration of
    /// `kind` if there is one, else the schedule, else the collective.
    pub fn build_span(&self, kind: Option<TargetKind>) -> Span {
        self.targets
            .iter()
            .find(|t| Some(t.kind) == kind)
            .map(|t| t.span)
            .or(self.schedule.as_ref().map(|s| s.span))
            .or(self.collective.as_ref().map(|c| c.span))
            .unwrap_or_default()
    }
}
