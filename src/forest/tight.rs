//! Algorithm 5 of ../shared/seeds/forestcoll.txt (Appendix C.3) with few maxflows: the
//! speculative tree packing this module owns learns the vertex sets that bind and computes mu from
//! them, and its result is exactly what Algorithm 5 gives in the same edge order ([`Order`]): in
//! breadth-first order, the packing of [`super::pack::pack`]'s exact run.
//!
//! Slack. Theorem 11's condition (3), read on the complement X of S, asks of every non-empty
//! vertex set X in the state (g, batches) that
//!
//!   slack(X) = g-capacity entering X - sum{ m(R_j) : R_j disjoint from X } >= 0.
//!
//! When batch i takes mu copies of (x, y) (x in R_i, y not), splitting off m(R_i) - mu copies
//! if needed, slack(X) drops by exactly mu if X holds y and a vertex of R_i but not x, and is
//! unchanged otherwise (if X misses R_i, the capacity into X and the disjoint sum both lose mu).
//! So slack never grows as the packing proceeds, and equation (5)'s mu is the largest value
//! that keeps (3): min{g(x, y), m(R_i), slack(X) over those X}.
//!
//! Speculation. We keep a family F of sets with their slacks updated step by step and take
//! mu_F = min{g(x, y), m(R_i), slack(X) over the sets X of F as above}, no flow needed. F holds
//! true constraints only, so mu_F >= mu at every step. If a run reaches the end (every batch
//! spans), the trees it built complete every state it passed through, and Tarjan's theorem
//! (Theorem 9) says (3) held in each of them; so no step took more than the largest mu that
//! keeps (3): mu_F = mu at every step, edges are tried in the same order as the exact run, and
//! the result is the exact run's, batch for batch and edge for edge.
//!
//! Learning. A state that keeps (3) always lets the batch being grown take an edge (a tree that
//! completes it has an edge leaving R_i), and mu_F >= mu, so a stalled batch proves a broken
//! set; some vertex v then has less flow from sigma than the live batches' total in the network
//! of (3) (sigma -> s_j of capacity m(R_j), s_j -> R_j infinite, plus g), and the sink side of
//! its minimum cut is such a set. Stalls come late, so we also probe one vertex this way after a
//! batch completes, after 1, 2, 4, ... batches without finding anything (back to every batch
//! after a find). F starts with every pair of vertices joined by an edge. A broken set X joins
//! F; we undo the steps back to the last state where slack(X) was still >= 0 (slacks only fall,
//! so every earlier state keeps it too, as it keeps every set learned before) and resume there,
//! at the same place in the loop. The sets of F never break afterwards, so no set is learned
//! twice. After [`MAX_RESTARTS`] restarts per rank (or anything unexpected) we return `None` and
//! the caller runs Algorithm 5 with a flow per step.
//!
//! On tori the sets that break are bands of rows or columns early on, bands with holes and small
//! clusters later: about 140 restarts on a 20 x 20 torus in breadth-first order, over a thousand
//! on 24 x 24, and each restart costs flows over a network of every live batch. The caller gives
//! breadth-first [`BREADTH_RESTARTS`] restarts, then packs in [`Order::Widest`], which on such
//! bipartite graphs restarts rarely: 24 x 24 in 0.3 s, 40 x 50 in 2.3 s, a hypercube of
//! dimension 10 in 2.3 s (switch removal and packing; 2-core machine, release build).

use super::flow::{FlowNet, INF};
use super::pack::Batch;
use super::split::Logical;
use std::collections::BTreeSet;

/// Restarts per rank before giving up (the caller then computes every mu by a flow).
const MAX_RESTARTS: usize = 4;

/// Restarts after which the breadth-first order gives up, so that the caller can try the
/// widest-first order ([`Order`]). Fat trees of DGX boxes and odd tori need a few; even tori
/// need about 140 (20 x 20) to over a thousand (24 x 24, 31 s), hypercubes of dimension 9 and
/// more too many to finish, and each restart costs more the larger the network. With 256
/// here a 30 x 30 torus spent 19 s before switching; with 32, 0.3 s.
pub const BREADTH_RESTARTS: usize = 32;

/// The order in which a batch tries the edges leaving it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Breadth-first from the root, each member's out-edges in turn: the order of
    /// [`super::pack::pack`], whose exact run this then reproduces; trees stay shallow.
    Breadth,
    /// The edge with the most remaining capacity first (ties to the lower (x, y)), our
    /// addition. It spreads each batch over the capacity that is left, where breadth-first
    /// always prefers the first members' edges. On bipartite graphs (even tori, hypercubes)
    /// breadth-first's choices at the many equidistant vertices use up the same edges batch
    /// after batch and the packing restarts over a thousand times; widest-first packs a
    /// 24 x 24 torus with next to none. Its trees are deeper (about 70 hops on a 20 x 20
    /// torus against 20 to 30), which costs latency, not bandwidth.
    Widest,
}

/// The switch-free graph's edges with capacity, per tail in the order `pack::pack` tries them.
struct Graph {
    from: Vec<u32>,
    to: Vec<u32>,
    logical: Vec<usize>,
    out: Vec<Vec<u32>>,
}

/// The learned family F: the sets, each with its slack in the current state.
struct Family {
    sets: Vec<Vec<u32>>,
    known: BTreeSet<Vec<u32>>,
    words: usize,
    /// Membership bits, `words` per set.
    bits: Vec<u64>,
    /// Per vertex, the sets holding it.
    of: Vec<Vec<u32>>,
    slack: Vec<i64>,
    /// Length of the log when each slack was last computed from scratch.
    since: Vec<usize>,
    /// Per set, how many members of the batch being grown it holds.
    hit: Vec<u32>,
}

impl Family {
    fn holds(&self, set: u32, v: usize) -> bool {
        self.bits[set as usize * self.words + v / 64] >> (v % 64) & 1 == 1
    }

    fn count_hits(&mut self, members: &[usize]) {
        self.hit.iter_mut().for_each(|h| *h = 0);
        for &v in members {
            for &l in &self.of[v] {
                self.hit[l as usize] += 1;
            }
        }
    }

    /// Adds `set` with its slack in the current state; false if it is known or broken.
    fn learn(&mut self, st: &State, gr: &Graph, set: Vec<u32>) -> bool {
        let s = slack(st, gr, &set);
        if s < 0 || !self.known.insert(set.clone()) {
            return false;
        }
        let id = self.sets.len();
        self.bits.resize(self.bits.len() + self.words, 0);
        for &v in &set {
            self.bits[id * self.words + v as usize / 64] |= 1 << (v % 64);
            self.of[v as usize].push(id as u32);
        }
        self.sets.push(set);
        self.slack.push(s);
        self.since.push(st.log.len());
        self.hit.push(0);
        true
    }
}

/// One step taken, with what undoing it and resuming before it need.
struct Step {
    batch: u32,
    edge: u32,
    mu: i64,
    /// The step split the batch: its copy is the last batch.
    split: bool,
    /// End of the step's sets (their slack fell by mu) in `State::touched`.
    touched: u32,
    /// Where the loop of [`grow`] stood: member position, out-edge index, and whether an edge
    /// had been taken earlier in the same sweep.
    pos: u32,
    k: u32,
    progressed: bool,
}

struct State {
    g: Vec<i64>,
    batches: Vec<Batch>,
    log: Vec<Step>,
    touched: Vec<u32>,
}

/// Where [`grow`] starts: a batch, and the loop position within it (zero at its start).
#[derive(Clone, Copy)]
struct Cursor {
    batch: usize,
    pos: usize,
    k: usize,
    progressed: bool,
}

impl Cursor {
    fn start(batch: usize) -> Cursor {
        Cursor {
            batch,
            pos: 0,
            k: 0,
            progressed: false,
        }
    }
}

/// Packs k trees per root into `lg`, trying edges in `order`, or `None` after `restarts`
/// restarts (at most [`MAX_RESTARTS`] per rank). In [`Order::Breadth`] the result is exactly
/// that of `pack::pack(lg, ranks, roots, k, false)` (see the module doc); in [`Order::Widest`]
/// it is what Algorithm 5 gives when it tries edges in that order, by the same argument.
pub fn pack(
    lg: &Logical,
    ranks: &[usize],
    roots: &[usize],
    k: i64,
    order: Order,
    restarts: usize,
) -> Option<Vec<Batch>> {
    let n = lg.out.len();
    let mut gr = Graph {
        from: Vec::new(),
        to: Vec::new(),
        logical: Vec::new(),
        out: vec![Vec::new(); n],
    };
    let mut g = Vec::new();
    for &x in ranks {
        for (&y, &a) in &lg.out[x] {
            let c = lg.cap(a);
            if c > 0 {
                gr.out[x].push(gr.from.len() as u32);
                gr.from.push(x as u32);
                gr.to.push(y as u32);
                gr.logical.push(a);
                g.push(c);
            }
        }
    }
    let mut st = State {
        g,
        batches: roots.iter().map(|&r| Batch::seed(r, k, n)).collect(),
        log: Vec::new(),
        touched: Vec::new(),
    };
    let mut f = Family {
        sets: Vec::new(),
        known: BTreeSet::new(),
        words: n.div_ceil(64),
        bits: Vec::new(),
        of: vec![Vec::new(); n],
        slack: Vec::new(),
        since: Vec::new(),
        hit: Vec::new(),
    };
    let nr = ranks.len();
    // Pairs joined by an edge break often and are hard to hit with a probe: F starts with them.
    for e in 0..gr.from.len() {
        let (u, v) = (gr.from[e], gr.to[e]);
        f.learn(&st, &gr, vec![u.min(v), u.max(v)]);
    }
    let mut cur = Cursor::start(0);
    let mut probes = 0u64;
    let (mut gap, mut next_probe) = (1, 0);
    for _ in 0..restarts.min(MAX_RESTARTS * nr + 64) {
        let broken = loop {
            if cur.batch == st.batches.len() {
                return Some(st.batches);
            }
            let grown = match order {
                Order::Breadth => grow(&mut st, &gr, nr, &mut f, cur),
                Order::Widest => grow_widest(&mut st, &gr, nr, &mut f, cur.batch),
            };
            if let Err(i) = grown {
                break broken_set(&st, &gr, ranks, i)?;
            }
            if cur.batch >= next_probe {
                // Fibonacci hashing walks the ranks in a scattered order.
                probes += 1;
                let v = ranks[(probes.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize % nr];
                if let Some(set) = Check::new(&st, &gr, nr).deficient(v) {
                    break set;
                }
                gap *= 2;
                next_probe = cur.batch + gap;
            }
            cur = Cursor::start(cur.batch + 1);
        };
        gap = 1;
        let t = last_intact(&st, &gr, &broken)?;
        cur = rollback(&mut st, &gr, &mut f, t);
        for l in 0..f.sets.len() {
            if f.since[l] > st.log.len() {
                f.slack[l] = slack(&st, &gr, &f.sets[l]);
                f.since[l] = st.log.len();
            }
        }
        if !f.learn(&st, &gr, broken) {
            return None;
        }
    }
    None
}

/// Grows the cursor's batch until it spans; `Err(i)` if batch i stalls.
fn grow(st: &mut State, gr: &Graph, nr: usize, f: &mut Family, cur: Cursor) -> Result<(), usize> {
    let i = cur.batch;
    f.count_hits(&st.batches[i].members);
    let mut resume = Some(cur);
    while st.batches[i].members.len() < nr {
        let c = resume.take().unwrap_or(Cursor::start(i));
        let (mut pos, mut k0, mut progressed) = (c.pos, c.k, c.progressed);
        while pos < st.batches[i].members.len() && st.batches[i].members.len() < nr {
            let x = st.batches[i].members[pos];
            for k in k0..gr.out[x].len() {
                let e = gr.out[x][k] as usize;
                let mu = mu_f(st, gr, f, i, e);
                if mu > 0 {
                    take(st, gr, f, e, mu, (i, pos, k, progressed));
                    progressed = true;
                }
            }
            k0 = 0;
            pos += 1;
        }
        if !progressed {
            return Err(i);
        }
    }
    Ok(())
}

/// mu_F of edge e for batch i (see the module doc): min{g(e), m(R_i), slack(X) over the
/// learned X that hold e's head and a member of R_i but not its tail}; 0 if the head is in
/// R_i already or e is full.
fn mu_f(st: &State, gr: &Graph, f: &Family, i: usize, e: usize) -> i64 {
    let (x, y) = (gr.from[e] as usize, gr.to[e] as usize);
    if st.batches[i].inside[y] || st.g[e] == 0 {
        return 0;
    }
    let mut mu = st.g[e].min(st.batches[i].m);
    for &l in &f.of[y] {
        if f.hit[l as usize] > 0 && !f.holds(l, x) {
            mu = mu.min(f.slack[l as usize]);
        }
    }
    mu
}

/// [`grow`] in [`Order::Widest`]: batch i takes, of the edges leaving it, the one with the
/// most remaining capacity (ties to the lower (x, y)) among those whose mu is positive. The
/// choice depends on the state alone, so a batch resumes after a rollback by starting over
/// from its members. An edge's capacity only changes when the batch takes it, and mu never
/// rises while a batch grows (slacks only fall), so each edge is looked at once.
fn grow_widest(
    st: &mut State,
    gr: &Graph,
    nr: usize,
    f: &mut Family,
    i: usize,
) -> Result<(), usize> {
    use std::cmp::Reverse;
    f.count_hits(&st.batches[i].members);
    let key = |g: &[i64], e: u32| {
        let e = e as usize;
        (g[e], Reverse((gr.from[e], gr.to[e])), e)
    };
    let mut heap = std::collections::BinaryHeap::new();
    for &x in &st.batches[i].members {
        heap.extend(gr.out[x].iter().map(|&e| key(&st.g, e)));
    }
    while st.batches[i].members.len() < nr {
        let Some((_, _, e)) = heap.pop() else {
            return Err(i);
        };
        let y = gr.to[e] as usize;
        let mu = mu_f(st, gr, f, i, e);
        if mu == 0 {
            continue;
        }
        // The loop position is not needed to resume (see above).
        take(st, gr, f, e, mu, (i, 0, 0, false));
        heap.extend(gr.out[y].iter().map(|&e| key(&st.g, e)));
    }
    Ok(())
}

/// Adds mu copies of edge e to batch `at.0` (splitting it if mu < m), updates the slacks and
/// logs the step with its loop position `at`.
fn take(
    st: &mut State,
    gr: &Graph,
    f: &mut Family,
    e: usize,
    mu: i64,
    at: (usize, usize, usize, bool),
) {
    let (i, pos, k, progressed) = at;
    let (x, y) = (gr.from[e] as usize, gr.to[e] as usize);
    let split = mu < st.batches[i].m;
    if split {
        let mut copy = st.batches[i].clone();
        copy.m -= mu;
        st.batches.push(copy);
        st.batches[i].m = mu;
    }
    for &l in &f.of[y] {
        let li = l as usize;
        if f.hit[li] > 0 && !f.holds(l, x) {
            f.slack[li] -= mu;
            st.touched.push(l);
        }
        f.hit[li] += 1;
    }
    st.g[e] -= mu;
    let b = &mut st.batches[i];
    b.edges.push((x, y, gr.logical[e]));
    b.members.push(y);
    b.inside[y] = true;
    st.log.push(Step {
        batch: i as u32,
        edge: e as u32,
        mu,
        split,
        touched: st.touched.len() as u32,
        pos: pos as u32,
        k: k as u32,
        progressed,
    });
}

/// Undoes the logged steps from step t on; returns where to resume (before step t). Slacks of
/// sets learned after step t are stale: the caller recomputes them (`Family::since`).
fn rollback(st: &mut State, gr: &Graph, f: &mut Family, t: usize) -> Cursor {
    let first = &st.log[t];
    let cur = Cursor {
        batch: first.batch as usize,
        pos: first.pos as usize,
        k: first.k as usize,
        progressed: first.progressed,
    };
    while st.log.len() > t {
        let s = st.log.pop().expect("a step");
        let e = s.edge as usize;
        let j = s.batch as usize;
        let b = &mut st.batches[j];
        b.members.pop();
        b.edges.pop();
        b.inside[gr.to[e] as usize] = false;
        st.g[e] += s.mu;
        if s.split {
            let copy = st.batches.pop().expect("the split's copy");
            st.batches[j].m += copy.m;
        }
        let start = st.log.last().map_or(0, |p| p.touched as usize);
        for &l in &st.touched[start..] {
            f.slack[l as usize] += s.mu;
        }
        st.touched.truncate(start);
    }
    cur
}

fn in_set(n: usize, set: &[u32]) -> Vec<bool> {
    let mut x = vec![false; n];
    for &v in set {
        x[v as usize] = true;
    }
    x
}

/// slack(X) in the current state.
fn slack(st: &State, gr: &Graph, set: &[u32]) -> i64 {
    let x = in_set(st.batches[0].inside.len(), set);
    let rho: i64 = (0..st.g.len())
        .filter(|&e| x[gr.to[e] as usize] && !x[gr.from[e] as usize])
        .map(|e| st.g[e])
        .sum();
    let disjoint: i64 = st
        .batches
        .iter()
        .filter(|b| !set.iter().any(|&v| b.inside[v as usize]))
        .map(|b| b.m)
        .sum();
    rho - disjoint
}

/// The logged step before which the broken `set` last had slack >= 0 (walking the log back, a
/// step adds its mu back to slack(X) if it entered X from outside after its batch reached X).
fn last_intact(st: &State, gr: &Graph, set: &[u32]) -> Option<usize> {
    let x = in_set(st.batches[0].inside.len(), set);
    let mut s = slack(st, gr, set);
    let mut hits: Vec<u32> = st
        .batches
        .iter()
        .map(|b| set.iter().filter(|&&v| b.inside[v as usize]).count() as u32)
        .collect();
    for t in (0..st.log.len()).rev() {
        let step = &st.log[t];
        let e = step.edge as usize;
        let j = step.batch as usize;
        if x[gr.to[e] as usize] {
            hits[j] -= 1;
            if !x[gr.from[e] as usize] && hits[j] > 0 {
                s += step.mu;
            }
        }
        if s >= 0 {
            return Some(t);
        }
    }
    None
}

/// The network of (3): the remaining capacities g, a source sigma and per live batch j a node
/// s_j with an arc sigma -> s_j of capacity m(R_j) and infinite arcs s_j -> R_j. The flow from
/// sigma to v falls short of the total m exactly when some set X holding v has slack(X) < 0.
struct Check {
    net: FlowNet,
    sigma: usize,
    total: i64,
}

impl Check {
    fn new(st: &State, gr: &Graph, nr: usize) -> Check {
        let sigma = st.batches[0].inside.len();
        let mut net = FlowNet::new(sigma + 1);
        for e in 0..st.g.len() {
            if st.g[e] > 0 {
                net.add_arc(gr.from[e] as usize, gr.to[e] as usize, st.g[e]);
            }
        }
        let mut total = 0i64;
        for b in st.batches.iter().filter(|b| b.members.len() < nr) {
            let s = net.add_node();
            net.add_arc(sigma, s, b.m);
            total += b.m;
            for &v in &b.members {
                net.add_arc(s, v, INF);
            }
        }
        Check { net, sigma, total }
    }

    /// A broken set holding v (the smallest sink side of a minimum cut), if any.
    fn deficient(&mut self, v: usize) -> Option<Vec<u32>> {
        if self.net.max_preflow(self.sigma, v, self.total) >= self.total {
            return None;
        }
        let side = self.net.sink_side(v);
        Some(
            (0..self.sigma as u32)
                .filter(|&u| side[u as usize])
                .collect(),
        )
    }
}

/// A broken set in the state where batch i stalled: V - R_i if no capacity is left to enter it,
/// else one found by flows, tried first at the heads of the edges leaving R_i.
fn broken_set(st: &State, gr: &Graph, ranks: &[usize], i: usize) -> Option<Vec<u32>> {
    let b = &st.batches[i];
    let outside: Vec<u32> = ranks
        .iter()
        .filter(|&&v| !b.inside[v])
        .map(|&v| v as u32)
        .collect();
    if slack(st, gr, &outside) < 0 {
        return Some(outside);
    }
    let mut heads: Vec<usize> = b
        .members
        .iter()
        .flat_map(|&x| gr.out[x].iter().map(|&e| e as usize))
        .filter(|&e| st.g[e] > 0 && !b.inside[gr.to[e] as usize])
        .map(|e| gr.to[e] as usize)
        .collect();
    heads.sort_unstable();
    heads.dedup();
    let rest = ranks.iter().filter(|&&v| !b.inside[v]);
    let mut chk = Check::new(st, gr, ranks.len());
    (heads.iter().chain(rest).chain(ranks.iter())).find_map(|&v| chk.deficient(v))
}
