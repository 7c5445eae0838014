//! The exact bounds from the float solve, best first: the certified vertex ([`certify`]) when
//! its system solves, else the snapped weights (vertex or interior) with the smallest exact
//! largest load; the lower bound is the best of the complementary-slackness lengths and the
//! snapped interior-point lengths ([`exact::best_dual`]). Both are recomputed exactly from what
//! they certify, so the choice between candidates can only matter for tightness.

use super::master::Relaxed;
use super::net::Network;
use super::tree::Tree;
use super::{McfError, certify, exact, greedy, master};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};

/// Tree weights below this are dropped before the simplex re-solve.
const SUPPORT: f64 = 1e-9;

/// Exact bounds (capacity units) with the lengths and the routing that prove them.
pub struct Bounds {
    pub lower: BigRational,
    pub lengths: Vec<BigRational>,
    pub upper: BigRational,
    /// Trees with positive exact weight, and those weights (each source's sum to 1).
    pub trees: Vec<Tree>,
    pub weights: Vec<BigRational>,
    /// Column-generation rounds (0 when the greedy routing was proved optimal or the network
    /// is too large for the LP).
    pub rounds: usize,
}

/// Column generation runs when ranks * edges is at most this; beyond, the master LP's
/// interior-point solves take seconds each and the greedy routing's bracket is reported.
const LP_LIMIT: usize = 150_000;

/// Greedy routing first; column generation when it is not proved and the network is small
/// enough; the better of each bound.
pub fn solve(net: &Network) -> Result<Bounds, McfError> {
    let g = greedy::route(net);
    let upper = BigRational::new(BigInt::from(g.worst.0), BigInt::from(g.worst.1));
    let (lower, lengths) = match &g.cut {
        Some((inside, _, _)) => {
            let len = cut_lengths(net, inside);
            let b = exact::dual_bound(net, &len).unwrap_or_default();
            (b, len)
        }
        None => (
            BigRational::zero(),
            vec![BigRational::zero(); net.arcs.len()],
        ),
    };
    let weights = vec![BigRational::one(); g.trees.len()];
    let mut best = Bounds {
        lower,
        lengths,
        upper,
        trees: g.trees,
        weights,
        rounds: 0,
    };
    if best.lower == best.upper || net.ranks.len() * net.arcs.len() > LP_LIMIT {
        return Ok(best);
    }
    let relaxed = master::generate(net, &best.trees)?;
    let lp = exact(net, &relaxed)?;
    best.rounds = relaxed.rounds;
    if lp.upper < best.upper {
        best.upper = lp.upper;
        best.trees = lp.trees;
        best.weights = lp.weights;
    }
    if lp.lower > best.lower {
        best.lower = lp.lower;
        best.lengths = lp.lengths;
    }
    Ok(best)
}

/// Length 1 on the edges leaving `inside`, 0 elsewhere.
fn cut_lengths(net: &Network, inside: &[bool]) -> Vec<BigRational> {
    net.arcs
        .iter()
        .map(|a| BigRational::from_integer((inside[a.from] && !inside[a.to]).into()))
        .collect()
}

fn exact(net: &Network, relaxed: &Relaxed) -> Result<Bounds, McfError> {
    let n = net.ranks.len();
    let keep: Vec<usize> = (0..relaxed.trees.len())
        .filter(|&j| relaxed.weights.get(j).is_some_and(|&w| w > SUPPORT))
        .collect();
    let trees: Vec<Tree> = keep.iter().map(|&j| relaxed.trees[j].clone()).collect();
    let interior: Vec<f64> = keep.iter().map(|&j| relaxed.weights[j]).collect();
    let vertex = exact::vertex(net, &trees).ok();
    let mut best: Option<(BigRational, Vec<BigRational>)> = None;
    let mut consider = |q: Vec<BigRational>| {
        let up = exact::primal_bound(net, &trees, &q);
        if best.as_ref().is_none_or(|(b, _)| up < *b) {
            best = Some((up, q));
        }
    };
    if let Some(v) = &vertex {
        let tau = float_max_load(net, &trees, v);
        if let Some(tau) = exact::snap(tau, tau * 1e-9) {
            if let Some(q) = certify::primal(net, &trees, v, &tau) {
                consider(q);
            }
        }
    }
    for w in vertex.iter().chain([&interior]) {
        for tol in [1e-9, 1e-7, 1e-11, 0.0] {
            if let Some(q) = exact::exact_weights(n, &trees, w, tol) {
                consider(q);
            }
        }
    }
    let (upper, weights) =
        best.ok_or_else(|| McfError::Solver("no routing covers every source".into()))?;
    let (mut lower, mut lengths) = exact::best_dual(net, &relaxed.lengths).unwrap_or_else(|| {
        (
            BigRational::zero(),
            vec![BigRational::zero(); net.arcs.len()],
        )
    });
    if let Some(inside) = &relaxed.cut {
        let len = cut_lengths(net, inside);
        if let Some(b) = exact::dual_bound(net, &len) {
            if b > lower {
                lower = b;
                lengths = len;
            }
        }
    }
    if lower < upper {
        if let Some(len) = certify::dual(net, &trees, &weights, &upper, &relaxed.lengths) {
            if let Some(b) = exact::dual_bound(net, &len) {
                if b > lower {
                    lower = b;
                    lengths = len;
                }
            }
        }
    }
    let (trees, weights) = trees
        .into_iter()
        .zip(weights)
        .filter(|(_, w)| !w.is_zero())
        .unzip();
    Ok(Bounds {
        lower,
        lengths,
        upper,
        trees,
        weights,
        rounds: relaxed.rounds,
    })
}

/// Largest load over capacity of float weights.
fn float_max_load(net: &Network, trees: &[Tree], w: &[f64]) -> f64 {
    let mut load = vec![0.0; net.arcs.len()];
    for (t, x) in trees.iter().zip(w) {
        for &(e, k) in &t.load {
            load[e as usize] += x * f64::from(k);
        }
    }
    load.iter()
        .zip(&net.arcs)
        .map(|(l, a)| l / a.cap as f64)
        .fold(0.0, f64::max)
}
