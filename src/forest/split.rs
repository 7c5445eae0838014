//! Switch removal by edge splitting (../shared/seeds/forestcoll.txt, Section 4.3, Algorithm 2,
//! Appendix C.2, Algorithm 4, Theorem 8), keeping the routing table as explicit paths.
//!
//! The working graph is D = G(floor(U b_e)) plus the source s with a k-capacity arc to every root
//! (D_k). For each switch w and each egress f = (w, t), the ingress edges e = (u, w) are paired in
//! turn and gamma (Theorem 8) units of (u, w), (w, t) are replaced by (u, t):
//!
//!   gamma = min{ c(u,w), c(w,t), min_v F(u, w; D^_(u,w),v) - D, min_v F(w, t; D^_(w,t),v) - D }
//!
//! where D = |R| k, D^_(u,w),v forces s, u, t to the source side and v, w to the sink side, and
//! D^_(w,t),v forces s, w to the source side and u, t, v to the sink side. Evaluating it as written
//! costs 2N maxflows per pair; we get the same value with far fewer:
//! - both minima only matter below c0 = min(c(u,w), c(w,t)), so every flow is capped at D + c0;
//! - min_v F(X, {w, v}) >= F(X, w), with equality as soon as some rank v lies on the sink side of a
//!   minimum X-w cut; one maxflow X -> w and one residual search settle that (and when u or t is a
//!   rank, v = u or v = t makes the second family a single flow);
//! - only otherwise is each v tried, by augmenting the residual network of that one flow towards v
//!   (F(X, {w, v}) = F(X, w) + the extra flow that reaches v), again capped, and only once per
//!   class of twin ranks (identical arcs to identical neighbours, e.g. the GPUs of one box).
//!
//! Switches with at most two neighbours (NICs, PCIe switches) are spliced without any flow: the
//! full split preserves every cut (see `remove_switch`).
//!
//! Two more ways to the same flow values (our additions, for switches among thousands of ranks,
//! where a flow from s gathers a unit from every root and costs a path per root):
//! - family 1 always ends at w: its flows start from one flow s -> w kept while w's pairs are
//!   split and repaired after each split ([`Warm`]), so each only finds the extra c0 from u, t;
//! - family 2 on a balanced graph (equal capacity in and out at every node, which ForestColl's
//!   symmetric-bandwidth rule gives and splitting keeps) is a flow that fans out from u to the
//!   s-arcs turned around ([`family_2`]).
//!
//! A test runs both beside the plain flows on every evaluation (`Flows::Checked`).
//!
//! Optimistic pass first (our addition; the paper always evaluates (2) in full). The per-rank
//! minima above are what makes large switches expensive (one flow per class of ranks, per pair).
//! The optimistic pass skips them: where one flow leaves every rank on the source side, that
//! family is taken not to bind. Every other term is computed exactly, so the optimistic gamma is
//! never below Theorem 8's. Splitting and dropping never raise a cut of D_k (an (u,w),(w,t) split
//! lowers d-(T) by gamma or 0 for every T), so a step that split more than Theorem 8's maximum
//! would leave some cut below |R| k for good. Hence, if the switch-free result meets Theorem 10
//! (F(s, v) >= |R| k for every rank v, [`holds`]), or if k trees per root pack into it, the
//! optimistic pass made exactly Algorithm 4's splits. The caller (`forest::solve`) packs the
//! optimistic result and only if that fails checks [`holds`] and, if needed, reruns the exact pass.
//!
//! Leaping (our addition, [`Pass::Leap`]). On large networks almost every gamma is c0: on a
//! 4,160-host dragonfly only the last 4 of 1,040 switches had a binding cut, on a 1,024-GPU fat
//! tree the last 32 of 1,216. A leaping pass takes gamma = c0 without any flow for every switch
//! but the last max(64, n/8) of its n switches ([`leap_tail`]), and runs the optimistic pass on
//! those. By the same argument, a split above Theorem 8's gamma leaves a cut below |R| k for
//! good, so if the result meets Theorem 10 (or k trees per root pack into it) every leap was
//! Theorem 8's gamma and the result is the optimistic pass's, arc for arc; otherwise the caller
//! runs the optimistic pass. The tail's size only decides how often that happens, never the
//! result.
//!
//! Pairs are tried with u != t first (u == t would only drop capacity as a self-loop) and in
//! rotated order starting after t, which pairs neighbours into rings as in Figure 13.
//! Switches are removed smallest current degree first, which keeps the graph from filling in.
//!
//! Every unit of capacity carries the physical path it stands for ([`Piece`]): splitting
//! concatenates the paths of the two edges it consumes, so a tree edge maps back to graph edges.

mod shortcuts;

use super::flow::{FlowNet, INF};
use super::net::Net;
use super::plan::Plan;
use shortcuts::{Warm, family_2, warm_split, warm_up};
use std::collections::BTreeMap;

/// `units` units of a logical edge travel along `path` (graph edge indices).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub path: Vec<u32>,
    pub units: i64,
}

/// The working graph: arcs of the flow network D_k with their pieces.
pub struct Logical {
    pub flow: FlowNet,
    pub s: usize,
    pub out: Vec<BTreeMap<usize, usize>>,
    pub inn: Vec<BTreeMap<usize, usize>>,
    /// Pieces per forward arc (arc id / 2).
    pub pieces: Vec<Vec<Piece>>,
    is_rank: Vec<bool>,
    is_root: Vec<bool>,
    demand: i64,
    /// Optimistic pass: Theorem 8's per-rank minima are assumed not to bind (see the module doc).
    optimistic: bool,
    /// The switch being removed is leapt over: every gamma is taken to be c0 ([`Pass::Leap`]).
    leaping: bool,
    /// Some switch was leapt over.
    leapt: bool,
    /// The flow into the switch being removed that family 1's flows start from ([`Warm`]).
    warm: Option<Warm>,
    /// The arcs s -> root.
    root_arcs: Vec<usize>,
    /// Every node of the graph (without s) has equal capacity in and out ([`family_2`]).
    balanced: bool,
    flows: Flows,
}

impl Logical {
    /// Whether [`Pass::Leap`] took some gamma without a flow (else the pass was the
    /// optimistic one).
    pub fn leapt(&self) -> bool {
        self.leapt
    }

    pub fn cap(&self, arc: usize) -> i64 {
        self.flow.cap_of(arc)
    }

    fn arc(&mut self, u: usize, v: usize) -> usize {
        if let Some(&a) = self.out[u].get(&v) {
            return a;
        }
        let a = self.flow.add_arc(u, v, 0);
        self.out[u].insert(v, a);
        self.inn[v].insert(u, a);
        self.pieces.resize(a / 2 + 1, Vec::new());
        a
    }

    fn add(&mut self, arc: usize, delta: i64) {
        let c = self.flow.cap_of(arc) + delta;
        self.flow.set_cap(arc, c);
    }

    fn drop_if_empty(&mut self, u: usize, v: usize) {
        if let Some(&a) = self.out[u].get(&v)
            && self.flow.cap_of(a) == 0
        {
            self.out[u].remove(&v);
            self.inn[v].remove(&u);
            self.pieces[a / 2].clear();
            self.flow.detach(a);
        }
    }
}

/// How switch removal finds each gamma (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Algorithm 4 with Theorem 8's gamma as written.
    Exact,
    /// Theorem 8's per-rank minima assumed not to bind; check the result with [`holds`] or by
    /// packing it.
    Optimistic,
    /// Gamma = c0 without flows but for the last this many switches, which get the optimistic
    /// pass ([`leap_tail`] for the default); check the result the same way.
    Leap(usize),
}

/// The switches [`Pass::Leap`] leaves to the optimistic pass by default: the last
/// max(64, n/8) of the n a net has.
pub fn leap_tail(net: &Net) -> usize {
    let switches = (0..net.n).filter(|&v| !net.is_rank[v]).count();
    (switches / 8).max(64)
}

/// Builds D_k from the plan's capacities and removes every non-rank node by `pass`.
pub fn remove_switches(net: &Net, plan: &Plan, pass: Pass) -> Logical {
    remove_switches_with(net, plan, pass, Flows::Shortcuts)
}

/// How Theorem 8's flows are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flows {
    /// [`Warm`] for family 1, [`family_2`] on balanced graphs.
    Shortcuts,
    /// Each from zero flow on D_k, as the module doc describes.
    Plain,
    /// Both, asserting they agree (tests).
    #[cfg_attr(not(test), allow(dead_code))]
    Checked,
}

fn remove_switches_with(net: &Net, plan: &Plan, pass: Pass, flows: Flows) -> Logical {
    let n = net.n;
    let mut lg = Logical {
        flow: FlowNet::new(n + 1),
        s: n,
        out: vec![BTreeMap::new(); n + 1],
        inn: vec![BTreeMap::new(); n + 1],
        pieces: Vec::new(),
        is_rank: net.is_rank.clone(),
        is_root: (0..=n).map(|v| net.roots.contains(&v)).collect(),
        demand: net.roots.len() as i64 * plan.k as i64,
        optimistic: pass != Pass::Exact,
        leaping: false,
        leapt: false,
        warm: None,
        root_arcs: Vec::new(),
        balanced: false,
        flows,
    };
    // One arc per merged edge, with floor(U b) units on each physical copy and the rest of the
    // merged edge's floor(U B) on a piece that names the merged edge: `routes::trees` spreads
    // its trees over the copies' leftover bandwidth.
    let copy_caps = plan.copy_caps(net);
    for (ph, &c) in net.phys.iter().zip(&copy_caps) {
        if c > 0 {
            let a = lg.arc(ph.from, ph.to);
            lg.add(a, c);
            lg.pieces[a / 2].push(Piece {
                path: vec![ph.edge as u32],
                units: c,
            });
        }
    }
    for (i, (&(from, to), &c)) in net.merged.keys().zip(&plan.caps).enumerate() {
        let whole: i64 = net.copies[i].iter().map(|&p| copy_caps[p]).sum();
        if c > whole {
            let a = lg.arc(from, to);
            lg.add(a, c - whole);
            lg.pieces[a / 2].push(Piece {
                path: vec![net.token(i)],
                units: c - whole,
            });
        }
    }
    lg.balanced = lg.flow.balanced(lg.s);
    for &r in &net.roots {
        let a = lg.flow.add_arc(lg.s, r, plan.k as i64);
        lg.pieces.resize(a / 2 + 1, Vec::new());
        lg.root_arcs.push(a);
    }
    let pending: Vec<usize> = (0..n)
        .filter(|&v| !net.is_rank[v] && (!lg.out[v].is_empty() || !lg.inn[v].is_empty()))
        .collect();
    let tail = match pass {
        Pass::Leap(tail) => tail,
        _ => usize::MAX,
    };
    remove_all(&mut lg, pending, tail);
    lg
}

/// Removes the switches `pending`, smallest current degree first; all but the last `tail` of
/// them without flows ([`Pass::Leap`]).
fn remove_all(lg: &mut Logical, mut pending: Vec<usize>, tail: usize) {
    while !pending.is_empty() {
        lg.leaping = pending.len() > tail;
        lg.leapt |= lg.leaping;
        let (i, _) = pending
            .iter()
            .enumerate()
            .min_by_key(|&(_, &w)| (lg.out[w].len() + lg.inn[w].len(), w))
            .expect("non-empty");
        let w = pending.swap_remove(i);
        remove_switch(lg, w);
    }
}

/// Theorem 10's condition on the switch-free result: every rank v receives F(s, v) >= |R| k.
/// One rank per class of twins (an automorphism fixing s swaps them, so they have the same
/// flow); on a balanced graph each flow is computed turned around ([`FlowNet::rooted_flow`]).
pub fn holds(lg: &mut Logical) -> bool {
    let (s, d) = (lg.s, lg.demand);
    let mut seen = std::collections::BTreeSet::new();
    for v in 0..lg.is_rank.len() {
        if !lg.is_rank[v] || !seen.insert(signature(lg, v)) {
            continue;
        }
        if lg.flow.rooted_flow(s, v, &lg.root_arcs, lg.balanced, d) < d {
            return false;
        }
    }
    true
}

/// What makes ranks twins: root status and the arcs (with capacities) to and from each
/// neighbour.
type Signature = (bool, Vec<(usize, i64)>, Vec<(usize, i64)>);

fn signature(lg: &Logical, v: usize) -> Signature {
    let arcs = |m: &BTreeMap<usize, usize>| m.iter().map(|(&x, &a)| (x, lg.cap(a))).collect();
    (lg.is_root[v], arcs(&lg.out[v]), arcs(&lg.inn[v]))
}

fn remove_switch(lg: &mut Logical, w: usize) {
    let outs: Vec<usize> = lg.out[w].keys().copied().collect();
    // A switch with at most two neighbours a, b: splitting a->w->b and b->w->a by the full
    // min(c(e), c(f)) gives a->b exactly the value min(c(a,w), c(w,b)) that every cut separating
    // a from b already had (w on its cheaper side), so all of D_k's cuts keep their capacity and
    // Theorem 8's gamma equals c0 without any flow.
    let mut nb: Vec<usize> = outs.iter().chain(lg.inn[w].keys()).copied().collect();
    nb.sort_unstable();
    nb.dedup();
    let exact = nb.len() <= 2;
    for t in outs {
        let ins: Vec<usize> = lg.inn[w].keys().copied().collect();
        let order = ins
            .iter()
            .filter(|&&u| u > t)
            .chain(ins.iter().filter(|&&u| u < t))
            .chain(ins.iter().filter(|&&u| u == t));
        for &u in order {
            let Some(&f) = lg.out[w].get(&t) else { break };
            let Some(&e) = lg.inn[w].get(&u) else {
                continue;
            };
            let c0 = lg.cap(e).min(lg.cap(f));
            let g = match (exact, u == t) {
                (true, false) => c0,
                (true, true) => 0,
                (false, _) => gamma(lg, u, w, t, c0),
            };
            if g > 0 {
                apply(lg, u, w, t, g);
                if !exact {
                    warm_split(lg, u, t, e, g);
                }
            }
        }
    }
    lg.warm = None;
    // With an Eulerian D every edge of w is used up now (Theorems 6-8). Capacity left over (only
    // possible when floor(U b_e) broke the balance) cannot be routed through w and is dropped.
    // A neighbour x stays balanced when it loses as much in as out: c(x, w) = c(w, x) left.
    // Otherwise `family_2` is not used from here on.
    let left = |m: &BTreeMap<usize, usize>, x: usize| m.get(&x).map_or(0, |&a| lg.cap(a));
    if lg.out[w]
        .keys()
        .chain(lg.inn[w].keys())
        .any(|&x| left(&lg.out[w], x) != left(&lg.inn[w], x))
    {
        lg.balanced = false;
    }
    for t in lg.out[w].keys().copied().collect::<Vec<_>>() {
        let a = lg.out[w][&t];
        lg.flow.set_cap(a, 0);
        lg.drop_if_empty(w, t);
    }
    for u in lg.inn[w].keys().copied().collect::<Vec<_>>() {
        let a = lg.inn[w][&u];
        lg.flow.set_cap(a, 0);
        lg.drop_if_empty(u, w);
    }
}

/// Theorem 8's gamma, capped at `c0` = min(c(u,w), c(w,t)).
fn gamma(lg: &mut Logical, u: usize, w: usize, t: usize, c0: i64) -> i64 {
    if c0 <= 0 {
        return 0;
    }
    if lg.leaping {
        return c0;
    }
    let s = lg.s;
    let d = lg.demand;
    // Family 1: s, u, t on the source side; w, v on the sink side.
    if lg.flows != Flows::Plain {
        warm_up(lg, w);
    }
    lg.flow.add_arc(s, u, INF);
    lg.flow.add_arc(s, t, INF);
    let f1 = min_over_sinks(lg, w, &[u, t], d + c0, false);
    if lg.flows == Flows::Checked {
        let warm = lg.warm.take();
        assert_eq!(f1, min_over_sinks(lg, w, &[u, t], d + c0, false));
        lg.warm = warm;
    }
    lg.flow.pop_arc();
    lg.flow.pop_arc();
    let g = c0.min(f1 - d);
    if g <= 0 {
        return 0;
    }
    // Family 2: s, w on the source side; u, t, v on the sink side.
    let either_rank = lg.is_rank[u] || lg.is_rank[t];
    let short = if lg.flows == Flows::Shortcuts && lg.balanced {
        family_2(lg, u, w, t, d + g, either_rank)
    } else {
        None
    };
    if let Some(f2) = short {
        return g.min(f2 - d).max(0);
    }
    lg.flow.add_arc(s, w, INF);
    let extra = u != t;
    if extra {
        lg.flow.add_arc(t, u, INF);
    }
    let f2 = min_over_sinks(lg, u, &[u, t], d + g, either_rank);
    if extra {
        lg.flow.pop_arc();
    }
    lg.flow.pop_arc();
    if lg.flows == Flows::Checked
        && lg.balanced
        && let Some(f) = family_2(lg, u, w, t, d + g, either_rank)
    {
        assert_eq!(f, f2);
    }
    g.min(f2 - d).max(0)
}

/// min over ranks v (not in `excluded`) of F(s, {sink, v}), capped at `limit`. With `settled`
/// the plain F(s, sink) is the answer (a rank is already forced to the sink side).
fn min_over_sinks(
    lg: &mut Logical,
    sink: usize,
    excluded: &[usize],
    limit: i64,
    settled: bool,
) -> i64 {
    let s = lg.s;
    if let Some(mut b) = lg.warm.take_if(|b| b.w == sink) {
        // Start from the kept flow into w and undo the search afterwards.
        let len = b.res.len();
        lg.flow.swap_residual(&mut b.res);
        lg.flow.sync_new_arcs();
        lg.flow.record();
        let f = b.value + lg.flow.augment(s, sink, limit - b.value);
        let answer = settle(lg, f, excluded, limit, settled, false);
        lg.flow.rollback();
        lg.flow.truncate_residual(len);
        lg.flow.swap_residual(&mut b.res);
        lg.warm = Some(b);
        if let Some(f) = answer {
            return f;
        }
    }
    let f = lg.flow.max_flow(s, sink, limit);
    if let Some(f) = settle(lg, f, excluded, limit, settled, false) {
        return f;
    }
    let n = lg.is_rank.len();
    // Every rank sits on the source side of every minimum cut: try each one as an extra sink.
    let saved = lg.flow.snapshot();
    let mut best = limit;
    // Twins (same root status, same arcs to the same neighbours with the same capacities) are
    // swapped by an automorphism that fixes s, u, t and w, so they give the same flow: one each.
    let mut seen = std::collections::BTreeSet::new();
    for v in 0..n {
        if !lg.is_rank[v] || excluded.contains(&v) {
            continue;
        }
        if !seen.insert(signature(lg, v)) {
            continue;
        }
        lg.flow.add_arc(v, sink, INF);
        lg.flow.sync_new_arcs();
        let more = lg.flow.augment(s, sink, best - f);
        lg.flow.pop_arc();
        lg.flow.restore(&saved);
        best = best.min(f + more);
        if best == f {
            break;
        }
    }
    best
}

/// The answer of [`min_over_sinks`] once the flow to its sink is `f` (a maximum flow when below
/// `limit`), unless each rank must be tried as an extra sink. `turned`: the flow ran turned
/// around ([`shortcuts::family_2`]), so the original sink side is what cannot reach s.
fn settle(
    lg: &Logical,
    f: i64,
    excluded: &[usize],
    limit: i64,
    settled: bool,
    turned: bool,
) -> Option<i64> {
    if f >= limit || settled {
        return Some(f);
    }
    let side = lg.flow.rooted_cut(lg.s, turned);
    let n = lg.is_rank.len();
    if (0..n).any(|v| lg.is_rank[v] && !side[v] && !excluded.contains(&v)) {
        return Some(f);
    }
    lg.optimistic.then_some(limit)
}

fn apply(lg: &mut Logical, u: usize, w: usize, t: usize, g: i64) {
    let e = lg.inn[w][&u];
    let f = lg.out[w][&t];
    lg.add(e, -g);
    lg.add(f, -g);
    let pe = take(&mut lg.pieces[e / 2], g);
    let pf = take(&mut lg.pieces[f / 2], g);
    lg.drop_if_empty(u, w);
    lg.drop_if_empty(w, t);
    if u == t {
        return;
    }
    let a = lg.arc(u, t);
    lg.add(a, g);
    let joined = join(pe, pf);
    let list = &mut lg.pieces[a / 2];
    for p in joined {
        match list.iter_mut().find(|q| q.path == p.path) {
            Some(q) => q.units += p.units,
            None => list.push(p),
        }
    }
}

/// Takes `g` units off the end of a piece list.
fn take(list: &mut Vec<Piece>, mut g: i64) -> Vec<Piece> {
    let mut got = Vec::new();
    while g > 0 {
        let last = list.last_mut().expect("pieces cover the capacity");
        let m = last.units.min(g);
        got.push(Piece {
            path: last.path.clone(),
            units: m,
        });
        last.units -= m;
        if last.units == 0 {
            list.pop();
        }
        g -= m;
    }
    got
}

/// Pairs the units of two equally long piece lists into concatenated paths.
fn join(mut a: Vec<Piece>, mut b: Vec<Piece>) -> Vec<Piece> {
    let mut out = Vec::new();
    while let (Some(x), Some(y)) = (a.last_mut(), b.last_mut()) {
        let m = x.units.min(y.units);
        let mut path = x.path.clone();
        path.extend_from_slice(&y.path);
        out.push(Piece { path, units: m });
        x.units -= m;
        y.units -= m;
        if x.units == 0 {
            a.pop();
        }
        if y.units == 0 {
            b.pop();
        }
    }
    out
}

#[cfg(test)]
mod tests;
