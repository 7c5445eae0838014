//! From the float optimum to exact bounds. Lower: the dual lengths are snapped to simple
//! rationals (each to the simplest rational within a tolerance, several tolerances tried), made
//! integers by their common denominator, and the bound sum_{s != t} dist(s, t) / sum_e c_e l_e
//! is computed with exact integer shortest paths: valid for any nonnegative lengths, so snapping
//! can only weaken it, never make it wrong. Upper: the trees that carry weight are re-solved by
//! the simplex (microlp), whose basic solution is a vertex with small denominators, its weights
//! snapped to simple rationals and divided by their exact sum per source (so each source's
//! weights sum to exactly 1 and the routing stays feasible), and the bound is the exact largest
//! load over capacity. Either bound is exact for what it states; equality proves the optimum.

use super::McfError;
use super::net::Network;
use super::tree::{Tree, big_distance_sum, exact_distance_sum};
use microlp::{ComparisonOp, OptimizationDirection, Problem};
use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

/// The simplest rational (smallest denominator, then numerator) in `[lo, hi]`, `0 <= lo <= hi`.
pub fn simplest_between(lo: &BigRational, hi: &BigRational) -> BigRational {
    let fl = lo.floor();
    if lo.is_integer() || &fl + BigRational::one() <= *hi {
        return lo.ceil();
    }
    // Both ends lie strictly between fl and fl + 1: recurse on the reciprocals.
    let inner = simplest_between(
        &(BigRational::one() / (hi - &fl)),
        &(BigRational::one() / (lo - &fl)),
    );
    fl + BigRational::one() / inner
}

/// The simplest rational within `tol` of `x >= 0` (0 when `x <= tol`).
pub fn snap(x: f64, tol: f64) -> Option<BigRational> {
    if !x.is_finite() {
        return None;
    }
    if x <= tol {
        return Some(BigRational::zero());
    }
    let lo = BigRational::from_float(x - tol)?;
    let hi = BigRational::from_float(x + tol)?;
    Some(simplest_between(&lo, &hi))
}

/// The exact dual bound (in capacity units) of the lengths `len` (by arc), or None when the
/// lengths are all zero.
pub fn dual_bound(net: &Network, len: &[BigRational]) -> Option<BigRational> {
    let lcm = len.iter().fold(BigInt::one(), |l, q| l.lcm(q.denom()));
    let ints: Vec<BigInt> = len.iter().map(|q| q.numer() * (&lcm / q.denom())).collect();
    let weight: BigInt = ints
        .iter()
        .zip(&net.arcs)
        .map(|(l, a)| l * BigInt::from(a.cap))
        .sum();
    if weight.is_zero() {
        return None;
    }
    let mut dist = BigInt::zero();
    let small: Option<Vec<u64>> = ints.iter().map(|i| i.to_u64()).collect();
    for s in 0..net.ranks.len() {
        let fast = small
            .as_ref()
            .and_then(|l| exact_distance_sum(net, s, l))
            .map(BigInt::from);
        dist += match fast {
            Some(d) => d,
            None => big_distance_sum(net, s, &ints)?,
        };
    }
    Some(BigRational::new(dist, weight))
}

/// The best exact dual bound over several snappings of the float lengths `y`, with its lengths.
pub fn best_dual(net: &Network, y: &[f64]) -> Option<(BigRational, Vec<BigRational>)> {
    let top = y.iter().copied().fold(0.0f64, f64::max);
    if top <= 0.0 || !top.is_finite() {
        return None;
    }
    let mut best: Option<(BigRational, Vec<BigRational>)> = None;
    for tol in [1e-7, 1e-9, 1e-5, 1e-3, 1e-11] {
        let Some(len) = y
            .iter()
            .map(|v| snap(v / top, tol))
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        if let Some(b) = dual_bound(net, &len) {
            if best.as_ref().is_none_or(|(old, _)| b > *old) {
                best = Some((b, len));
            }
        }
    }
    best
}

/// Exact largest load over capacity (in capacity units) of `trees` with `weights`.
pub fn primal_bound(net: &Network, trees: &[Tree], weights: &[BigRational]) -> BigRational {
    let lcm = weights.iter().fold(BigInt::one(), |l, q| l.lcm(q.denom()));
    let mut load = vec![BigInt::zero(); net.arcs.len()];
    for (t, w) in trees.iter().zip(weights) {
        if w.is_zero() {
            continue;
        }
        let w = w.numer() * (&lcm / w.denom());
        for &(e, k) in &t.load {
            load[e as usize] += &w * BigInt::from(k);
        }
    }
    let mut best = BigRational::zero();
    for (l, a) in load.into_iter().zip(&net.arcs) {
        let r = BigRational::new(l, BigInt::from(a.cap) * &lcm);
        if r > best {
            best = r;
        }
    }
    best
}

/// Float weights snapped within `tol` and scaled so each source's sum is exactly 1.
pub fn exact_weights(n: usize, trees: &[Tree], w: &[f64], tol: f64) -> Option<Vec<BigRational>> {
    let mut q: Vec<BigRational> = w
        .iter()
        .map(|&x| snap(x.clamp(0.0, 1.0), tol))
        .collect::<Option<_>>()?;
    let mut sum = vec![BigRational::zero(); n];
    for (t, x) in trees.iter().zip(&q) {
        sum[t.source] += x;
    }
    if sum.iter().any(|s| !s.is_positive()) {
        return None;
    }
    for (t, x) in trees.iter().zip(q.iter_mut()) {
        *x = &*x / &sum[t.source];
    }
    Some(q)
}

/// A vertex of the master LP over `trees` (the simplex's basic solution): tree weights.
pub fn vertex(net: &Network, trees: &[Tree]) -> Result<Vec<f64>, McfError> {
    let mut p = Problem::new(OptimizationDirection::Minimize);
    let tau = p.add_var(1.0, (0.0, f64::INFINITY));
    let vars: Vec<_> = trees
        .iter()
        .map(|_| p.add_var(0.0, (0.0, f64::INFINITY)))
        .collect();
    let mut by_source = vec![Vec::new(); net.ranks.len()];
    let mut by_edge = vec![Vec::new(); net.arcs.len()];
    for (t, &v) in trees.iter().zip(&vars) {
        by_source[t.source].push((v, 1.0));
        for &(e, k) in &t.load {
            let cap = net.arcs[e as usize].cap as f64;
            by_edge[e as usize].push((v, f64::from(k) / cap));
        }
    }
    for row in by_source {
        p.add_constraint(row.as_slice(), ComparisonOp::Eq, 1.0);
    }
    for mut row in by_edge.into_iter().filter(|r| !r.is_empty()) {
        row.push((tau, -1.0));
        p.add_constraint(row.as_slice(), ComparisonOp::Le, 0.0);
    }
    let sol = p
        .solve()
        .map_err(|e| McfError::Solver(format!("simplex: {e}")))?
        .into_solution()
        .map_err(|_| McfError::Solver("simplex: interrupted".into()))?;
    Ok(vars.iter().map(|&v| sol.var_value(v)).collect())
}
