//! The optimum 1/x* = max over cuts S (S not containing every compute node) of |S ∩ R| / B+(S)
//! (../shared/seeds/forestcoll.txt, Section 4.2, Algorithm 1, Appendix C.1, Theorem 1), exactly.
//!
//! The paper bisects on 1/x with the auxiliary network G_x (a source s with an x-capacity edge to
//! every root; x <= x* iff every compute node v receives maxflow F(s, v) >= |R| x). We ask the same
//! oracle but move by Dinkelbach/Newton steps instead of halving: with the current ratio a/b (the
//! ratio of a known cut), scale G_x by a so all capacities are integers (a * b_e, and b on the
//! source edges). If every F(s, v) >= |R| b the ratio is optimal; otherwise the minimum cut of the
//! smallest flow is a cut S with a strictly larger ratio (its capacity a B+(S) + b |R \ S| is below
//! |R| b), which becomes the next ratio. The ratio only ever takes values of actual cuts, so the
//! answer is exact, is the same as Algorithm 1's, and comes with its bottleneck cut; the number of
//! rounds is small (superlinear convergence) instead of log(N B^2) bisection steps.
//!
//! Roots generalise R = Vc: for broadcast and reduce R is the one root (Edmonds' rooted case).

use super::flow::{FlowNet, INF};
use super::net::Net;

/// The exact optimum with its cut, in integer units of [`Net::unit`].
#[derive(Debug, Clone)]
pub struct Optimum {
    /// |S* ∩ R| / gcd.
    pub p: i64,
    /// B+(S*) / gcd: 1/x* = p / q (time per unit of data, in units).
    pub q: i64,
    /// S*, indexed by node.
    pub cut: Vec<bool>,
}

/// The flow network G: nodes of the topology plus the source s (last), one arc per merged
/// edge (capacities set per query) and one arc s -> root per root.
pub struct Oracle<'a> {
    net: &'a Net,
    flow: FlowNet,
    s: usize,
    edge_arcs: Vec<usize>,
    root_arcs: Vec<usize>,
    /// Every node has the same capacity in and out (ForestColl's symmetric-bandwidth rule), so
    /// each F(s, v) is computed turned around (see [`Oracle::violated`]).
    balanced: bool,
    /// Ranks ordered by ingress, smallest first: the likeliest violators are tried first. One
    /// rank per class of twins ([`twins_dropped`]).
    sinks: Vec<usize>,
}

impl<'a> Oracle<'a> {
    pub fn new(net: &'a Net) -> Oracle<'a> {
        let mut flow = FlowNet::new(net.n + 1);
        let s = net.n;
        let edge_arcs = net
            .merged
            .keys()
            .map(|&(a, b)| flow.add_arc(a, b, 0))
            .collect();
        let root_arcs = net.roots.iter().map(|&r| flow.add_arc(s, r, 0)).collect();
        let mut sinks = net.ranks.clone();
        let ingress = net.ingress();
        sinks.sort_by_key(|&v| (ingress[v], v));
        let sinks = twins_dropped(net, sinks);
        Oracle {
            net,
            balanced: false,
            flow,
            s,
            edge_arcs,
            root_arcs,
            sinks,
        }
    }

    /// Sets the capacities: `caps` aligned with `net.merged`, `root` on every s -> root arc.
    pub fn set(&mut self, caps: &[i64], root: i64) {
        for (&a, &c) in self.edge_arcs.iter().zip(caps) {
            self.flow.set_cap(a, c);
        }
        self.balanced = self.flow.balanced(self.s);
        for &a in &self.root_arcs {
            self.flow.set_cap(a, root);
        }
    }

    /// Checks min over ranks v of F(s, v) >= `demand`. On failure returns the smallest flow
    /// found and the source side (without s) of its minimum cut; with `first` it stops at the
    /// first violation instead of looking for the smallest.
    ///
    /// F(s, v) gathers a unit from every root; on a balanced graph it is computed turned
    /// around, fanning out from v ([`FlowNet::rooted_flow`]).
    pub fn violated(&mut self, demand: i64, first: bool) -> Option<(i64, Vec<bool>)> {
        let mut worst: Option<(i64, Vec<bool>)> = None;
        for i in 0..self.sinks.len() {
            let v = self.sinks[i];
            let f = self
                .flow
                .rooted_flow(self.s, v, &self.root_arcs, self.balanced, demand);
            if f < demand && worst.as_ref().is_none_or(|(w, _)| f < *w) {
                let mut side = self.flow.rooted_cut(self.s, self.balanced);
                side.truncate(self.net.n);
                worst = Some((f, side));
                if first {
                    break;
                }
            }
        }
        worst
    }
}

/// `ranks` without their twins: of the ranks with the same root status and the same arcs (same
/// capacities) to and from the same neighbours, such as the hosts under one switch, only the
/// first in `ranks`' order is kept. Swapping two twins is an automorphism of G_x that fixes s, so they have
/// the same F(s, v) at every x, and a twin's minimum cut is the kept one's with the two swapped:
/// checking one of each class finds a violation whenever there is one, the same smallest flow.
fn twins_dropped(net: &Net, ranks: Vec<usize>) -> Vec<usize> {
    let mut out: Vec<Vec<(usize, i64)>> = vec![Vec::new(); net.n];
    let mut inn: Vec<Vec<(usize, i64)>> = vec![Vec::new(); net.n];
    for (&(a, b), &c) in &net.merged {
        out[a].push((b, c));
        inn[b].push((a, c));
    }
    let is_root: std::collections::BTreeSet<usize> = net.roots.iter().copied().collect();
    let mut seen = std::collections::BTreeSet::new();
    ranks
        .into_iter()
        .filter(|&v| {
            // `merged` is ordered by (from, to), so both lists come out sorted.
            seen.insert((is_root.contains(&v), out[v].clone(), inn[v].clone()))
        })
        .collect()
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

/// Computes 1/x* and a bottleneck cut.
pub fn optimum(net: &Net) -> Optimum {
    let roots = net.roots.len() as i64;
    let mut is_root = vec![false; net.n];
    for &r in &net.roots {
        is_root[r] = true;
    }
    // Start from the best single-node cut S = V - {v} (Algorithm 1's lower bound).
    let ingress = net.ingress();
    let mut best: Option<(i64, i64, usize)> = None;
    for &v in &net.ranks {
        let a = roots - i64::from(is_root[v]);
        let b = ingress[v];
        if a == 0 || b == 0 {
            continue;
        }
        if best.is_none_or(|(ba, bb, _)| (a as i128) * (bb as i128) > (ba as i128) * (b as i128)) {
            best = Some((a, b, v));
        }
    }
    let Some((mut a, mut b, v0)) = best else {
        // A single rank: nothing to send; any ratio works.
        return Optimum {
            p: 0,
            q: 1,
            cut: vec![false; net.n],
        };
    };
    let mut cut: Vec<bool> = (0..net.n).map(|u| u != v0).collect();
    let mut oracle = Oracle::new(net);
    let base: Vec<i64> = net.merged.values().copied().collect();
    loop {
        let g = gcd(a, b);
        (a, b) = (a / g, b / g);
        let caps: Vec<i64> = base.iter().map(|&c| c.saturating_mul(a).min(INF)).collect();
        oracle.set(&caps, b);
        let Some((_, side)) = oracle.violated(roots * b, false) else {
            break;
        };
        let na = net.roots.iter().filter(|&&r| side[r]).count() as i64;
        let nb = net.exiting(&side);
        debug_assert!((na as i128) * (b as i128) > (a as i128) * (nb as i128));
        (a, b, cut) = (na, nb, side);
    }
    Optimum { p: a, q: b, cut }
}
