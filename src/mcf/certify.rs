//! Exact optimality certificates from the float vertex. Primal: the weights of the trees the
//! simplex's vertex uses solve, exactly, the system "each source's weights sum to 1, every edge
//! the vertex saturates carries exactly c_e * tau" for the snapped tau ([`linear::solve_near`]);
//! when that solution is nonnegative it is a routing whose exact largest load is checked, not
//! assumed. Dual: complementary slackness with that routing: lengths only on saturated edges,
//! every used tree a cheapest tree of its source (its cost equals the source's potential mu_s),
//! and sum c_e l_e = 1, solved near the interior point's duals; its exact shortest-path bound is
//! then computed like any other lengths', so a wrong guess only weakens the bound.

use super::linear::{Row, nonnegative, solve_near};
use super::net::Network;
use super::tree::Tree;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};

/// Exact weights (aligned with `trees`) that put exactly `tau` (units) on every edge the float
/// weights `w` saturate, or None.
pub fn primal(
    net: &Network,
    trees: &[Tree],
    w: &[f64],
    tau: &BigRational,
) -> Option<Vec<BigRational>> {
    let tau_f = tau.to_f64()?;
    let support: Vec<usize> = (0..trees.len()).filter(|&j| w[j] > 1e-12).collect();
    let mut load = vec![0.0; net.arcs.len()];
    let mut by_edge: Vec<Row> = vec![Vec::new(); net.arcs.len()];
    let mut by_source: Vec<Row> = vec![Vec::new(); net.ranks.len()];
    for (col, &j) in support.iter().enumerate() {
        by_source[trees[j].source].push((col, BigRational::one()));
        for &(e, k) in &trees[j].load {
            load[e as usize] += w[j] * f64::from(k);
            by_edge[e as usize].push((col, BigRational::from_integer(BigInt::from(k))));
        }
    }
    let mut rows: Vec<(Row, BigRational)> = by_source
        .into_iter()
        .map(|r| (r, BigRational::one()))
        .collect();
    for (e, row) in by_edge.into_iter().enumerate() {
        let cap = net.arcs[e].cap;
        if load[e] >= cap as f64 * tau_f * (1.0 - 1e-7) {
            rows.push((row, tau * BigRational::from_integer(BigInt::from(cap))));
        }
    }
    let guess: Vec<f64> = support.iter().map(|&j| w[j]).collect();
    let x = solve_near(rows, &guess)?;
    if !nonnegative(&x) {
        return None;
    }
    let mut full = vec![BigRational::zero(); trees.len()];
    for (col, &j) in support.iter().enumerate() {
        full[j] = x[col].clone();
    }
    Some(full)
}

/// Lengths (by arc) in complementary slackness with the exact routing `weights` at `tau`,
/// near the float lengths `y`, or None.
pub fn dual(
    net: &Network,
    trees: &[Tree],
    weights: &[BigRational],
    tau: &BigRational,
    y: &[f64],
) -> Option<Vec<BigRational>> {
    let lcm = weights.iter().fold(BigInt::one(), |l, q| {
        num_integer::Integer::lcm(&l, q.denom())
    });
    let mut load = vec![BigInt::zero(); net.arcs.len()];
    for (t, w) in trees.iter().zip(weights) {
        let w = w.numer() * (&lcm / w.denom());
        for &(e, k) in &t.load {
            load[e as usize] += &w * BigInt::from(k);
        }
    }
    // Unknowns: one length per saturated edge, then mu_s per source.
    let tight: Vec<usize> = (0..net.arcs.len())
        .filter(|&e| {
            BigRational::new(load[e].clone(), &lcm * BigInt::from(net.arcs[e].cap)) == *tau
        })
        .collect();
    let mut col_of = vec![usize::MAX; net.arcs.len()];
    for (i, &e) in tight.iter().enumerate() {
        col_of[e] = i;
    }
    let k = tight.len();
    let mut rows: Vec<(Row, BigRational)> = Vec::new();
    let mut mu = vec![f64::INFINITY; net.ranks.len()];
    for (t, w) in trees.iter().zip(weights) {
        let cost = t.cost(y);
        mu[t.source] = mu[t.source].min(cost);
        if w.is_zero() {
            continue;
        }
        let mut row: Row = t
            .load
            .iter()
            .filter(|(e, _)| col_of[*e as usize] != usize::MAX)
            .map(|&(e, c)| {
                (
                    col_of[e as usize],
                    BigRational::from_integer(BigInt::from(c)),
                )
            })
            .collect();
        row.sort_by_key(|e| e.0);
        row.push((k + t.source, -BigRational::one()));
        rows.push((row, BigRational::zero()));
    }
    let norm: Row = tight
        .iter()
        .enumerate()
        .map(|(i, &e)| (i, BigRational::from_integer(BigInt::from(net.arcs[e].cap))))
        .collect();
    rows.push((norm, BigRational::one()));
    let mut guess: Vec<f64> = tight.iter().map(|&e| y[e]).collect();
    guess.extend(mu.iter().map(|m| if m.is_finite() { *m } else { 0.0 }));
    let x = solve_near(rows, &guess)?;
    if !nonnegative(&x[..k]) {
        return None;
    }
    let mut len = vec![BigRational::zero(); net.arcs.len()];
    for (i, &e) in tight.iter().enumerate() {
        len[e] = x[i].clone();
    }
    Some(len)
}
