//! ForestColl (../shared/seeds/forestcoll.txt): provably optimal spanning-tree schedules on any
//! topology. This module owns the optimum search, switch removal, tree packing and fixed-k
//! construction; [`types`] holds the data every stage and consumer (lowering, reports, the flow
//! simulator, the language server) shares.

pub mod types;

/// The report on a solved forest (`collc build --emit report`).
pub mod report;

pub use types::{Cut, Direction, Forest, ForestEdge, ForestError, KChoice, Roots, Tree};

// The entry point the solver provides (implemented in `solve`):
//
//     pub fn solve(topo: &Topology, ranks: &[NodeId], roots: Roots, k: KChoice, dir: Direction)
//         -> Result<Forest, ForestError>
//
// `ranks` are the collective's compute nodes in rank order; switches and compute nodes not in
// `ranks` may relay. For Direction::In the trees are in-trees (computed on the transpose graph).
