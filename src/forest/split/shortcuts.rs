//! Faster ways to two of Theorem 8's flows in switch removal ([`super`]), with the same values:
//! [`Warm`] keeps one flow into the switch being removed for all of family 1's flows, and
//! [`family_2`] turns family 2's flow around on a balanced graph so that it fans out from u
//! instead of gathering a unit from every root.

use super::{Logical, settle};
use crate::forest::flow::INF;

/// A flow from s into the switch `w` being removed, as residual capacities, kept while w's
/// pairs are split. Every family-1 flow of w ends at w: each starts from this one (a maximum
/// F(s, w), at most D) and only has to find the rest of D + c0 from u and t, which is short,
/// instead of routing the unit from every rank again. Max flow values and the minimal minimum
/// cut of a maximum flow do not depend on where the search starts, so gamma is the same.
/// Splitting lowers c(u, w): flow above the new capacity is sent on from u to w, or back to s
/// ([`warm_split`]). w's outgoing arcs are kept at zero residual: a flow into w never needs
/// them, and the repair then cannot route through w.
pub(super) struct Warm {
    pub(super) w: usize,
    pub(super) res: Vec<i64>,
    pub(super) value: i64,
}

/// Makes [`Warm`] hold a maximum flow s -> w (at most D), unless it already does.
pub(super) fn warm_up(lg: &mut Logical, w: usize) {
    if lg.warm.as_ref().is_some_and(|b| b.w == w) {
        return;
    }
    let value = lg.flow.max_flow(lg.s, w, lg.demand);
    let mut res = lg.flow.snapshot();
    for &a in lg.out[w].values() {
        res[a] = 0;
    }
    lg.warm = Some(Warm { w, res, value });
}

/// Keeps [`Warm`]'s flow feasible after `apply` took `g` units off the arc `e` = (u, w) (and off
/// (w, t), whose residual stays zero) and added them to (u, t).
pub(super) fn warm_split(lg: &mut Logical, u: usize, t: usize, e: usize, g: i64) {
    let Some(mut b) = lg.warm.take() else {
        return;
    };
    let (s, w) = (lg.s, b.w);
    // An arc `apply` created carries no flow yet; one that was there has g more room.
    let have = b.res.len();
    b.res
        .extend((have / 2..lg.flow.arc_count()).flat_map(|a| [lg.cap(2 * a), 0]));
    if u != t
        && let Some(&a) = lg.out[u].get(&t)
        && a < have
    {
        b.res[a] += g;
    }
    let flow = b.res[e ^ 1];
    let excess = flow - lg.cap(e);
    if excess <= 0 {
        b.res[e] = -excess;
    } else {
        // u now receives `excess` more than it can pass on to w: send it to w another way,
        // or back to s (possible: the flow into u came from s).
        b.res[e] = 0;
        b.res[e ^ 1] = lg.cap(e);
        lg.flow.swap_residual(&mut b.res);
        let on = lg.flow.augment(u, w, excess);
        let back = if on < excess {
            lg.flow.augment(u, s, excess - on)
        } else {
            0
        };
        lg.flow.swap_residual(&mut b.res);
        debug_assert_eq!(on + back, excess);
        b.value -= back;
    }
    lg.warm = Some(b);
}

/// Family 2's minimum on a balanced graph G (every node's capacity in equals its capacity out,
/// as with links of equal bandwidth both ways; splitting keeps it so), as a flow that fans out
/// from u instead of one that gathers a unit from every root. For a set X holding s and w, with
/// A = X - s and B its complement, the cut is c(A -> B) + k |roots in B|, and by balance
/// c(A -> B) = c(B -> A). That is the cut of B in G with each root's s-arc turned around
/// (root -> s, k) and w joined to s: the maximum flow from u (with t joined to it) to s in that
/// network, which is the residual network of D_k with every s-arc saturated. The same value
/// then, capped at `limit`; and the sink side of the original's smallest minimum cut is the
/// largest source side here (what cannot reach s). `None` when each rank would have to be tried
/// as an extra sink (the exact pass, and no rank on that side): the caller does it as before.
pub(super) fn family_2(
    lg: &mut Logical,
    u: usize,
    w: usize,
    t: usize,
    limit: i64,
    settled: bool,
) -> Option<i64> {
    let s = lg.s;
    lg.flow.add_arc(w, s, INF);
    let extra = u != t;
    if extra {
        lg.flow.add_arc(u, t, INF);
    }
    let f = lg.flow.reversed_flow(u, s, &lg.root_arcs, limit);
    let answer = settle(lg, f, &[u, t], limit, settled, true);
    if extra {
        lg.flow.pop_arc();
    }
    lg.flow.pop_arc();
    answer
}
