//! How many trees per root (k) and how much bandwidth each carries (y = 1/U): the optimal k of
//! Proposition 3 (../shared/seeds/forestcoll.txt, Section 4.2 "Determine k", Appendix C.1), the
//! best schedule for a fixed k (Section 4.5, Algorithm 3, Appendix C.4, Theorems 13-15) and the
//! practical rule of Section 4.5: when the optimal k is large, scan k below 10 and keep the best.
//!
//! Fixed k. Theorem 14 makes feasibility of U (k edge-disjoint out-trees per root in
//! G(floor(U b_e))) monotone in U, and floor only changes at U = m / b_e, so U* is such a
//! breakpoint. Theorem 15 brackets it: k/x* <= U* <= max_e ceil(k b_e / x*) / b_e. Algorithm 3
//! bisects the reals and recovers the fraction at the end; we bisect over the breakpoints m / b
//! directly, separately for each distinct bandwidth b, which needs the same oracle (Theorem 5's
//! maxflows, [`Oracle`]) and stays exact throughout.
//!
//! Every b_e here is a merged edge's (`Net::merged`): parallel copies of a link are one edge of
//! their summed bandwidth, as in the paper's graph, so floor(U b_e) counts the trees all copies
//! carry together. `routes::trees` later spreads each merged edge's trees over its copies.

use super::net::Net;
use super::optimum::{Optimum, Oracle};

/// Trees per root and the integer capacities (trees per physical edge) they are packed into.
#[derive(Debug, Clone)]
pub struct Plan {
    pub k: u64,
    /// U = u_num / u_den: one tree carries 1/U units of bandwidth.
    pub u_num: i128,
    pub u_den: i128,
    /// floor(U * b_e) for each merged edge (aligned with `Net::merged`): parallel copies of a
    /// link count as one edge of their summed bandwidth.
    pub caps: Vec<i64>,
}

/// Largest k the solver accepts.
pub const MAX_K: u64 = 1 << 20;
/// The practical rule's bound: the optimal k is used when it is at most this, else k in
/// 1..=AUTO_SCAN is scanned.
pub const AUTO_SCAN: u64 = 9;

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

impl Plan {
    fn new(net: &Net, k: u64, u_num: i128, u_den: i128) -> Plan {
        let caps = floor_caps(net, u_num, u_den);
        Plan {
            k,
            u_num,
            u_den,
            caps,
        }
    }

    /// floor(U b) for each physical copy (aligned with `Net::phys`): the whole trees a copy can
    /// carry alone. A merged edge's capacity exceeds the sum of its copies' by less than its
    /// number of copies; those trees are spread over the copies' leftover bandwidth.
    pub fn copy_caps(&self, net: &Net) -> Vec<i64> {
        net.phys
            .iter()
            .map(|p| i64::try_from(self.u_num * p.bw as i128 / self.u_den).unwrap_or(i64::MAX / 8))
            .collect()
    }
}

/// floor(U b_e) per merged edge. Flooring each physical copy instead would lose up to one tree
/// per copy: two 1-unit copies at U = 1/2 carry one tree together, none alone.
fn floor_caps(net: &Net, u_num: i128, u_den: i128) -> Vec<i64> {
    net.merged
        .values()
        .map(|&b| i64::try_from(u_num * b as i128 / u_den).unwrap_or(i64::MAX / 8))
        .collect()
}

/// Proposition 3: U = p / gcd(q, {b_e}), k = q / gcd(q, {b_e}), over the merged edges.
pub fn optimal(net: &Net, opt: &Optimum) -> Plan {
    let g = net
        .merged
        .values()
        .fold(opt.q as i128, |g, &b| gcd(g, b as i128));
    let g = g.max(1);
    Plan::new(net, (opt.q as i128 / g) as u64, opt.p as i128, g)
}

/// The smallest U for which k trees per root fit (Theorem 14), as a plan.
pub fn fixed(net: &Net, opt: &Optimum, k: u64) -> Plan {
    let (p, q, k128) = (opt.p as i128, opt.q as i128, k as i128);
    let roots = net.roots.len() as i64;
    let mut oracle = Oracle::new(net);
    let mut feasible = |num: i128, den: i128| {
        oracle.set(&floor_caps(net, num, den), k as i64);
        oracle.violated(roots * k as i64, true).is_none()
    };
    // Theorem 15's feasible U: max_e ceil(k b_e p / q) / b_e.
    let (mut best_num, mut best_den) = (0i128, 1i128);
    for &bw in net.merged.values() {
        let b = bw as i128;
        let m = (k128 * b * p + q - 1) / q;
        if best_num == 0 || m * best_den > best_num * b {
            (best_num, best_den) = (m, b);
        }
    }
    let mut betas: Vec<i128> = net.merged.values().map(|&b| b as i128).collect();
    betas.sort_unstable();
    betas.dedup();
    for &b in &betas {
        // Breakpoints m / b in [k p / q, best): m from ceil(k p b / q).
        let lo = (k128 * p * b + q - 1) / q;
        // Largest m with m / b < best_num / best_den.
        let hi = (best_num * b - 1).div_euclid(best_den);
        if lo > hi {
            continue;
        }
        if !feasible(hi, b) {
            continue;
        }
        let (mut l, mut r) = (lo, hi); // r feasible
        while l < r {
            let mid = l + (r - l) / 2;
            if feasible(mid, b) {
                r = mid;
            } else {
                l = mid + 1;
            }
        }
        (best_num, best_den) = (r, b);
    }
    let g = gcd(best_num, best_den).max(1);
    Plan::new(net, k, best_num / g, best_den / g)
}

/// The practical rule: the optimal k if it is at most [`AUTO_SCAN`], else the best fixed k in
/// 1..=AUTO_SCAN (the smallest k among equals).
pub fn auto(net: &Net, opt: &Optimum) -> Plan {
    let best = optimal(net, opt);
    if best.k <= AUTO_SCAN {
        return best;
    }
    let mut chosen: Option<Plan> = None;
    for k in 1..=AUTO_SCAN {
        let plan = fixed(net, opt, k);
        // Compare U/k: smaller is faster.
        let better = chosen.as_ref().is_none_or(|c| {
            plan.u_num * c.u_den * (c.k as i128) < c.u_num * plan.u_den * (plan.k as i128)
        });
        if better {
            chosen = Some(plan);
        }
    }
    chosen.expect("AUTO_SCAN >= 1")
}
