//! Column generation in floating point: the restricted master LP over out-trees (columns
//! [`Tree`]) solved by the interior-point solver clarabel, priced by one shortest-path tree per
//! source under the master's edge duals.
//!
//! Master: minimise tau subject to, for each source s, sum of its trees' weights = 1, and for
//! each edge e, sum over trees of load_T(e) / c_e * weight_T <= tau. The capacity rows' duals
//! z_e sum to 1 (the dual constraint of tau), so the lengths y_e = z_e / c_e satisfy
//! sum c_e y_e = 1 and every pricing round yields the Lagrangian (LP dual) lower bound
//! sum_s cost of s's shortest-path tree under y. Rows exist only for edges some tree uses (an
//! edge no tree loads cannot be violated; its length is 0 until a tree uses it). Pricing adds,
//! per source, its shortest-path tree when it is cheaper than all that source's trees. The
//! interior point's duals are central in the optimal face, which keeps the pricing stable and,
//! on symmetric networks, symmetric (easy to snap to small rationals in `exact`). Shortest paths
//! are taken under y plus a tiny multiple of 1/c_e so that ties between zero-length routes
//! prefer few, wide hops.

use super::net::Network;
use super::tree::{Tree, shortest_tree};
use super::{McfError, cut};
use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus, ZeroConeT,
};

/// Relative gap at which column generation stops.
const GAP: f64 = 1e-10;
/// Most pricing rounds.
const ROUNDS: usize = 400;

/// The float optimum: trees with weights, the master's tau, and the best dual lengths seen.
#[derive(Debug, Clone)]
pub struct Relaxed {
    pub trees: Vec<Tree>,
    pub weights: Vec<f64>,
    /// The master's optimum (a feasible primal's max load over capacity, in units).
    pub tau: f64,
    /// Edge lengths (by arc) with sum c_e y_e = 1 that gave `lower`.
    pub lengths: Vec<f64>,
    /// The best Lagrangian lower bound seen.
    pub lower: f64,
    pub rounds: usize,
    /// The nodes inside the strongest cut found among the saturated edges' candidates.
    pub cut: Option<Vec<bool>>,
}

/// The master's solution: tau, tree weights and the edge lengths y (sum c y = 1).
struct Master {
    tau: f64,
    weights: Vec<f64>,
    lengths: Vec<f64>,
}

pub fn generate(net: &Network, seeds: &[Tree]) -> Result<Relaxed, McfError> {
    let m = net.arcs.len();
    let cmax = net.arcs.iter().map(|a| a.cap).max().unwrap_or(1) as f64;
    // Tie-breaking lengths: a hop costs 1/c (relative to the widest edge).
    let tie: Vec<f64> = net.arcs.iter().map(|a| cmax / a.cap as f64).collect();
    let mut trees: Vec<Tree> = seeds.to_vec();
    for s in 0..net.ranks.len() {
        let t = shortest_tree(net, s, &tie);
        if !trees.contains(&t) {
            trees.push(t);
        }
    }
    let mut best = Relaxed {
        trees: Vec::new(),
        weights: Vec::new(),
        tau: f64::INFINITY,
        lengths: vec![0.0; m],
        lower: 0.0,
        rounds: 0,
        cut: None,
    };
    for round in 1..=ROUNDS {
        let master = solve_master(net, &trees)?;
        let scale = master
            .lengths
            .iter()
            .copied()
            .fold(0.0f64, f64::max)
            .max(1e-300)
            * 1e-9;
        let priced: Vec<f64> = master
            .lengths
            .iter()
            .zip(&tie)
            .map(|(y, t)| y + scale * t)
            .collect();
        let mut cheapest = vec![f64::INFINITY; net.ranks.len()];
        for t in &trees {
            let c = t.cost(&master.lengths);
            cheapest[t.source] = cheapest[t.source].min(c);
        }
        let mut lower = 0.0;
        let mut added = Vec::new();
        for (s, &have) in cheapest.iter().enumerate() {
            let tree = shortest_tree(net, s, &priced);
            let cost = tree.cost(&master.lengths);
            lower += cost;
            if cost < have * (1.0 - 1e-11) && !trees.contains(&tree) {
                added.push(tree);
            }
        }
        if lower > best.lower {
            best.lower = lower;
            best.lengths = master.lengths.clone();
        }
        // A cut among the saturated edges may prove the primal optimal long before the
        // Lagrangian bound gets there (the interior duals spread over the restricted face).
        let mut load = vec![0.0; m];
        for (t, w) in trees.iter().zip(&master.weights) {
            for &(e, k) in &t.load {
                load[e as usize] += w * f64::from(k);
            }
        }
        let saturated: Vec<bool> = load
            .iter()
            .zip(&net.arcs)
            .map(|(l, a)| *l >= a.cap as f64 * master.tau * (1.0 - 1e-6))
            .collect();
        if let Some(c) = cut::strongest(net, &saturated) {
            let bound = c.demand as f64 / c.capacity as f64;
            if bound > best.lower {
                best.lower = bound;
                let mut inside = vec![false; net.n];
                c.nodes.iter().for_each(|&v| inside[v] = true);
                best.cut = Some(inside);
            }
        }
        best.tau = master.tau;
        best.weights = master.weights;
        best.rounds = round;
        let gap = (master.tau - best.lower) / master.tau.max(1e-300);
        if added.is_empty() || gap < GAP {
            break;
        }
        trees.extend(added);
    }
    best.trees = trees;
    Ok(best)
}

/// Solves the restricted master over `trees` (which cover every source).
fn solve_master(net: &Network, trees: &[Tree]) -> Result<Master, McfError> {
    let n = net.ranks.len();
    // Rows: n convexity rows, one row per used edge, one bound row per tree.
    let mut row_of = vec![usize::MAX; net.arcs.len()];
    let mut used = Vec::new();
    for t in trees {
        for &(e, _) in &t.load {
            if row_of[e as usize] == usize::MAX {
                row_of[e as usize] = 0;
                used.push(e as usize);
            }
        }
    }
    used.sort_unstable();
    for (i, &e) in used.iter().enumerate() {
        row_of[e] = n + i;
    }
    let rows = n + used.len() + trees.len();
    let cols = 1 + trees.len();
    let mut colptr = Vec::with_capacity(cols + 1);
    let mut rowval = Vec::new();
    let mut nzval = Vec::new();
    colptr.push(0);
    for i in 0..used.len() {
        rowval.push(n + i);
        nzval.push(-1.0);
    }
    colptr.push(rowval.len());
    for (j, t) in trees.iter().enumerate() {
        rowval.push(t.source);
        nzval.push(1.0);
        for &(e, k) in &t.load {
            rowval.push(row_of[e as usize]);
            nzval.push(f64::from(k) / net.arcs[e as usize].cap as f64);
        }
        rowval.push(n + used.len() + j);
        nzval.push(-1.0);
        colptr.push(rowval.len());
    }
    let a = CscMatrix::new(rows, cols, colptr, rowval, nzval);
    let p = CscMatrix::<f64>::zeros((cols, cols));
    let mut q = vec![0.0; cols];
    q[0] = 1.0;
    let mut b = vec![0.0; rows];
    b[..n].fill(1.0);
    let cones = [ZeroConeT(n), NonnegativeConeT(used.len() + trees.len())];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .max_iter(200)
        .tol_gap_abs(1e-11)
        .tol_gap_rel(1e-11)
        .tol_feas(1e-11)
        .build()
        .map_err(|e| McfError::Solver(format!("settings: {e:?}")))?;
    let mut solver = DefaultSolver::new(&p, &q, &a, &b, &cones, settings)
        .map_err(|e| McfError::Solver(format!("{e}")))?;
    solver.solve();
    let sol = &solver.solution;
    if !matches!(
        sol.status,
        SolverStatus::Solved | SolverStatus::AlmostSolved
    ) {
        return Err(McfError::Solver(format!("master LP: {:?}", sol.status)));
    }
    let mut lengths = vec![0.0; net.arcs.len()];
    let mut total = 0.0;
    for (i, &e) in used.iter().enumerate() {
        let z = sol.z[n + i].max(0.0);
        total += z;
        lengths[e] = z / net.arcs[e].cap as f64;
    }
    if total > 0.0 {
        lengths.iter_mut().for_each(|y| *y /= total);
    }
    Ok(Master {
        tau: sol.x[0],
        weights: sol.x[1..].iter().map(|w| w.max(0.0)).collect(),
        lengths,
    })
}
