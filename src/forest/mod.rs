//! ForestColl (../shared/seeds/forestcoll.txt): provably optimal spanning-tree schedules on any
//! topology. This module owns the optimum search, switch removal, tree packing and fixed-k
//! construction; [`types`] holds the data every stage and consumer (lowering, reports, the flow
//! simulator, the language server) shares.
//!
//! The pipeline of [`solve`] (Section 4.1):
//! 1. [`net`]: exact integer capacities (Appendix C's scaling), transposed for in-trees (4.6);
//! 2. [`optimum`]: 1/x* and the bottleneck cut (4.2, Algorithm 1);
//! 3. [`plan`]: k and y, optimal (Proposition 3) or for a fixed k (4.5, Algorithm 3);
//! 4. [`split`]: switch removal by edge splitting with routes (4.3, Algorithm 2, Theorem 8);
//! 5. [`pack`]: spanning out-tree packing in batches (4.4, Algorithm 5, equation (5)), with
//!    [`tight`]'s learned binding sets as its fast path;
//! 6. [`routes`]: trees mapped back to physical paths.

pub mod chunking;
pub mod flow;
pub mod net;
pub mod optimum;
pub mod pack;
pub mod plan;
pub mod routes;
pub mod split;
pub mod tight;
pub mod types;
pub mod validate;

/// The report on a solved forest (`collc build --emit report`).
pub mod report;

pub use types::{Cut, Direction, Forest, ForestEdge, ForestError, KChoice, Roots, Tree};

use crate::progress::{Phase, Progress};
use crate::sema::model::{NodeId, Topology};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Zero;
use std::collections::BTreeMap;

/// Builds the forest for `ranks` (the collective's compute nodes in rank order) on `topo`.
///
/// Switches and compute nodes not in `ranks` may relay. For [`Direction::In`] the trees are
/// in-trees, computed as out-trees on the transpose graph. [`Roots::One`] gives the single-root
/// forests of broadcast (out) and reduce (in).
pub fn solve(
    topo: &Topology,
    ranks: &[NodeId],
    roots: Roots,
    k: KChoice,
    dir: Direction,
) -> Result<Forest, ForestError> {
    solve_with(topo, ranks, roots, k, dir, &crate::progress::Quiet)
}

/// [`solve`], telling `progress` as each step begins ([`Phase::SolveCapacities`] to
/// [`Phase::SolveRoutes`]), so that `collc build -v` and the benchmarks report the time of
/// each.
pub fn solve_with(
    topo: &Topology,
    ranks: &[NodeId],
    roots: Roots,
    k: KChoice,
    dir: Direction,
    progress: &dyn Progress,
) -> Result<Forest, ForestError> {
    progress.phase(Phase::SolveCapacities, None);
    if let KChoice::Fixed(k) = k
        && (k == 0 || k > plan::MAX_K)
    {
        return Err(ForestError::BadK {
            k,
            max: plan::MAX_K,
        });
    }
    let net = net::Net::build(topo, ranks, roots, dir)?;
    let rank_of: BTreeMap<usize, usize> =
        net.ranks.iter().enumerate().map(|(i, &v)| (v, i)).collect();
    if net.ranks.len() < 2 {
        return Ok(trivial(&net));
    }
    progress.phase(Phase::SolveOptimum, None);
    let opt = optimum::optimum(&net);
    progress.phase(Phase::SolvePlan, None);
    let mut plan = match k {
        KChoice::Auto => plan::auto(&net, &opt),
        KChoice::Fixed(k) => plan::fixed(&net, &opt, k),
    };
    progress.phase(Phase::SolvePacking, None);
    let tail = split::leap_tail(&net);
    let (lg, batches) = match switch_free_forest(&net, &plan, tail) {
        Some(found) => found,
        None => {
            // floor(U b_e) can unbalance a relay node of a topology with one-way links (Section
            // 4.5: "G({floor(U* b_e)}) is not necessarily Eulerian"), and edge splitting then
            // cannot route all of it. The optimal plan's U b_e are exact, hence Eulerian.
            plan = plan::optimal(&net, &opt);
            switch_free_forest(&net, &plan, tail)
                .expect("an Eulerian D_k always packs (Theorems 7 and 10)")
        }
    };
    let int = |v: i128| BigRational::from_integer(BigInt::from(v));
    // One tree carries 1/U units: unit * u_den / u_num bytes per second.
    let y = &net.unit * int(plan.u_den) / int(plan.u_num);
    progress.phase(Phase::SolveRoutes, None);
    let trees = routes::trees(&net, &plan.copy_caps(&net), &lg, &batches, &y, &rank_of);
    let inv_rate = int(plan.u_num) / (int(plan.u_den) * int(plan.k as i128) * &net.unit);
    let optimum = int(opt.p as i128) / (int(opt.q as i128) * &net.unit);
    Ok(Forest {
        direction: dir,
        ranks: ranks.to_vec(),
        k: plan.k,
        inv_rate,
        optimum,
        bottleneck: cut(&net, &opt),
        trees,
    })
}

/// Switch removal and packing for `plan`, fast paths first (see the module docs of [`split`],
/// [`tight`] and [`pack`]): the leaping and the optimistic switch removal and the speculative
/// packings give exactly the exact algorithms' results whenever the packing completes, which it
/// checks by itself. The breadth-first speculative packing gets [`tight::BREADTH_RESTARTS`]
/// restarts; then the same packing trying the widest edge first (a different but equally valid
/// edge order of Algorithm 5, [`tight::Order`]). A leaping removal that neither took is checked
/// against Theorem 10 and, failing it, redone by the optimistic pass (a graph that leapt too
/// far has a set short of capacity from the start, where both packings give up at once).
/// Otherwise the exact algorithms run: switch removal again only if its result fails Theorem 10.
fn switch_free_forest(
    net: &net::Net,
    plan: &plan::Plan,
    leap_tail: usize,
) -> Option<(split::Logical, Vec<pack::Batch>)> {
    let k = plan.k as i64;
    let (ranks, roots) = (&net.ranks, &net.roots);
    let speculate = |lg: &split::Logical| {
        tight::pack(
            lg,
            ranks,
            roots,
            k,
            tight::Order::Breadth,
            tight::BREADTH_RESTARTS,
        )
        .or_else(|| tight::pack(lg, ranks, roots, k, tight::Order::Widest, usize::MAX))
    };
    let mut lg = split::remove_switches(net, plan, split::Pass::Leap(leap_tail));
    if let Some(b) = speculate(&lg) {
        return Some((lg, b));
    }
    // Theorem 10 on the result, once known.
    let mut holds = None;
    if lg.leapt() {
        if split::holds(&mut lg) {
            holds = Some(true);
        } else {
            lg = split::remove_switches(net, plan, split::Pass::Optimistic);
            if let Some(b) = speculate(&lg) {
                return Some((lg, b));
            }
        }
    }
    if let Some(b) = pack::pack(&lg, &net.ranks, &net.roots, k, true) {
        return Some((lg, b));
    }
    if !holds.unwrap_or_else(|| split::holds(&mut lg)) {
        lg = split::remove_switches(net, plan, split::Pass::Exact);
    }
    let b = pack::pack(&lg, &net.ranks, &net.roots, k, false)?;
    Some((lg, b))
}

fn cut(net: &net::Net, opt: &optimum::Optimum) -> Cut {
    let nodes: Vec<NodeId> = (0..net.n).filter(|&v| opt.cut[v]).collect();
    Cut {
        compute: net.roots.iter().filter(|&&r| opt.cut[r]).count(),
        bandwidth: net.bytes_per_second(&BigRational::from_integer(BigInt::from(
            net.exiting(&opt.cut),
        ))),
        nodes,
    }
}

/// One rank: nothing moves; a single empty tree.
fn trivial(net: &net::Net) -> Forest {
    Forest {
        direction: net.direction,
        ranks: net.ranks.clone(),
        k: 1,
        inv_rate: BigRational::zero(),
        optimum: BigRational::zero(),
        bottleneck: Cut {
            nodes: Vec::new(),
            compute: 0,
            bandwidth: BigRational::zero(),
        },
        trees: net
            .roots
            .iter()
            .map(|&root| Tree {
                root,
                rate: BigRational::zero(),
                edges: Vec::new(),
            })
            .collect(),
    }
}
