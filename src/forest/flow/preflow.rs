//! A maximum preflow by push-relabel (Goldberg and Tarjan; highest label first, with global
//! relabelling and the gap rule), the solver Appendix D of ../shared/seeds/forestcoll.txt
//! assumes. [`FlowNet::max_preflow`] is for the questions where Dinic's phases are many: a
//! flow that gathers a unit from thousands of batches into one vertex over a sparse graph needs
//! a phase per path length (about 2,000 on a 4,160-host dragonfly after switch removal), where
//! push-relabel labels every vertex with its distance once and moves the units together. There,
//! tight.rs's probes went from about 0.45 s to 5 ms each, and family 2's flows in switch removal
//! from 2.2 s to 0.8 s in all (2-core machine, release build).
//!
//! It starts from whatever flow the residual network holds (after a few blocking flows, see
//! [`DINIC_PHASES`]), and only push-relabel's first phase runs: excess that cannot reach the sink
//! stays where it is. That is enough for both answers the callers want. Let T be what can still
//! reach t in the residual network once no vertex of T other than t holds excess. Every arc from
//! the rest S into T is saturated and none from T into S carries flow (its reverse would put the S
//! end in T), so the excess at t equals the capacity of the cut (S, T): it is the maximum flow, and
//! T is the smallest sink side of a minimum cut. Returning the stranded excess to s only changes
//! flow on arcs inside S (a path of flow from s to a vertex of S never enters T, for the same
//! reason), so T is the set [`FlowNet::sink_side`] gives after a maximum flow too. The proof needs
//! T to hold no excess, which a preflow that started from a flow (no excess anywhere but s) and ran
//! to the end gives; it says nothing of [`FlowNet::source_side`].

use super::FlowNet;

/// Global relabelling runs again after this much work per vertex and arc (pushes and arc
/// scans counted together): the usual heuristic.
const RELABEL_EVERY: usize = 6;

/// Blocking flows [`FlowNet::preflow`] tries before it turns to push-relabel. Where paths
/// are short (fat trees), Dinic's searches stop as soon as they reach the sink and a few
/// phases finish the flow, while push-relabel labels the whole network first and then
/// scans the switches' long arc lists; where paths are long, the phases are many.
const DINIC_PHASES: usize = 8;

/// Push-relabel's working state, kept on the [`FlowNet`] so repeated flows reuse it.
#[derive(Debug, Clone, Default)]
pub(super) struct Labels {
    height: Vec<usize>,
    excess: Vec<i64>,
    /// Per vertex, the position of its current arc.
    current: Vec<usize>,
    /// Active vertices (excess, height below n) by height, each a stack; entries whose vertex
    /// has since moved or emptied are skipped when popped.
    active: Vec<Vec<u32>>,
    /// Every vertex with a height below n, in a doubly linked list per height (for the gap
    /// rule): `first` per height, `next` and `prev` per vertex (`NONE` ends a list).
    first: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    /// The highest height that may hold an active vertex.
    top: usize,
    /// The highest height below n that any vertex may have (where the gap rule's walk ends).
    highest: usize,
}

const NONE: u32 = u32::MAX;

impl Labels {
    /// Sizes the buffers for `n` vertices with no excess; [`FlowNet::relabel_all`] sets the
    /// heights, lists and buckets.
    fn reset(&mut self, n: usize) {
        self.excess.clear();
        self.excess.resize(n, 0);
        self.height.resize(n, n);
        self.current.resize(n, 0);
        self.active.resize(n, Vec::new());
        self.first.resize(n, NONE);
        self.next.resize(n, NONE);
        self.prev.resize(n, NONE);
    }

    /// Gives `v` (height n, in no list) the height `h` below n.
    fn place(&mut self, v: usize, h: usize) {
        self.height[v] = h;
        self.prev[v] = NONE;
        self.next[v] = self.first[h];
        if self.first[h] != NONE {
            self.prev[self.first[h] as usize] = v as u32;
        }
        self.first[h] = v as u32;
        self.highest = self.highest.max(h);
    }

    /// Takes `v` out of its height's list (its height stays as it was).
    fn unlink(&mut self, v: usize) {
        let (p, q) = (self.prev[v], self.next[v]);
        if p == NONE {
            self.first[self.height[v]] = q;
        } else {
            self.next[p as usize] = q;
        }
        if q != NONE {
            self.prev[q as usize] = p;
        }
    }
}

impl FlowNet {
    /// The maximum flow from `s` to `t` from zero flow, up to `limit`, as a maximum preflow
    /// ([`FlowNet::preflow`]).
    pub fn max_preflow(&mut self, s: usize, t: usize, limit: i64) -> i64 {
        self.restore_capacities();
        self.preflow(s, t, limit)
    }

    /// Pushes up to `limit` more from `s` to `t` on the current residual network: first up to
    /// [`DINIC_PHASES`] blocking flows, then, if paths remain, a maximum preflow (see the module
    /// doc) in which `s` starts with what is left of `limit` as excess, as if fed by an arc of
    /// that capacity. The value is min(`limit`, the maximum flow), as with
    /// [`FlowNet::augment`]. Afterwards [`FlowNet::sink_side`] of `t` is what it is after a
    /// maximum flow (when the value is below `limit`); [`FlowNet::source_side`] is not, since
    /// excess that cannot reach `t` stays where it is.
    pub fn preflow(&mut self, s: usize, t: usize, limit: i64) -> i64 {
        let (f, cut_short) = self.dinic(s, t, limit, DINIC_PHASES);
        if !cut_short {
            return f;
        }
        f + self.push_relabel(s, t, limit - f)
    }

    /// The push-relabel part of [`FlowNet::preflow`].
    pub(super) fn push_relabel(&mut self, s: usize, t: usize, limit: i64) -> i64 {
        let n = self.adj.len();
        let mut lb = std::mem::take(&mut self.labels);
        lb.reset(n);
        lb.excess[s] = limit;
        let budget = RELABEL_EVERY * (n + self.to.len());
        self.relabel_all(&mut lb, t);
        let mut work = 0usize;
        loop {
            while lb.top > 0 && lb.active[lb.top].is_empty() {
                lb.top -= 1;
            }
            let Some(u) = lb.active[lb.top].pop() else {
                break;
            };
            let u = u as usize;
            if lb.height[u] != lb.top || lb.excess[u] == 0 {
                continue;
            }
            work += self.discharge(&mut lb, u, t);
            if work > budget {
                work = 0;
                self.relabel_all(&mut lb, t);
            }
        }
        let value = lb.excess[t];
        self.labels = lb;
        value
    }

    /// Exact distances to `t` in the residual network (n where `t` is out of reach), and the
    /// active vertices bucketed again.
    fn relabel_all(&mut self, lb: &mut Labels, t: usize) {
        let n = self.adj.len();
        lb.height.iter_mut().for_each(|h| *h = n);
        lb.first.iter_mut().for_each(|f| *f = NONE);
        lb.active.iter_mut().for_each(Vec::clear);
        lb.top = 0;
        lb.highest = 0;
        lb.place(t, 0);
        self.queue.clear();
        self.queue.push(t as u32);
        let mut head = 0;
        while head < self.queue.len() {
            let v = self.queue[head] as usize;
            head += 1;
            for &a in &self.adj[v] {
                let u = self.to[a as usize] as usize;
                if lb.height[u] == n && self.cap[a as usize ^ 1] > 0 {
                    let h = lb.height[v] + 1;
                    lb.place(u, h);
                    self.queue.push(u as u32);
                    if lb.excess[u] > 0 {
                        lb.active[h].push(u as u32);
                        lb.top = lb.top.max(h);
                    }
                }
            }
        }
        lb.current.iter_mut().for_each(|c| *c = 0);
    }

    /// Pushes `u`'s excess down admissible arcs, relabelling it when none is left; returns the
    /// work done.
    fn discharge(&mut self, lb: &mut Labels, u: usize, t: usize) -> usize {
        let n = self.adj.len();
        let mut work = 0;
        while lb.excess[u] > 0 {
            if lb.current[u] == self.adj[u].len() {
                work += self.adj[u].len() + 1;
                if !self.relabel(lb, u) {
                    return work;
                }
                continue;
            }
            let a = self.adj[u][lb.current[u]] as usize;
            let v = self.to[a] as usize;
            work += 1;
            if self.cap[a] > 0 && lb.height[v] + 1 == lb.height[u] {
                let d = lb.excess[u].min(self.cap[a]);
                self.push(a, d);
                lb.excess[u] -= d;
                if lb.excess[v] == 0 && v != t && lb.height[v] < n {
                    lb.active[lb.height[v]].push(v as u32);
                }
                lb.excess[v] += d;
                if lb.excess[u] == 0 {
                    break;
                }
            }
            lb.current[u] += 1;
        }
        work
    }

    /// Lifts `u` to one above its lowest residual neighbour (it stays the highest active vertex
    /// and goes on discharging); false if it leaves the vertices that can reach the sink
    /// (height n, directly or by the gap rule).
    fn relabel(&mut self, lb: &mut Labels, u: usize) -> bool {
        let n = self.adj.len();
        let old = lb.height[u];
        let mut h = n;
        for &a in &self.adj[u] {
            if self.cap[a as usize] > 0 {
                h = h.min(lb.height[self.to[a as usize] as usize] + 1);
            }
        }
        lb.unlink(u);
        lb.height[u] = n;
        lb.current[u] = 0;
        if lb.first[old] == NONE {
            // The gap rule: no vertex is left at `old`, so nothing above it reaches the sink.
            for g in old + 1..=lb.highest {
                let mut x = std::mem::replace(&mut lb.first[g], NONE);
                while x != NONE {
                    lb.height[x as usize] = n;
                    x = lb.next[x as usize];
                }
            }
            lb.highest = old.saturating_sub(1);
            return false;
        }
        if h >= n {
            return false;
        }
        lb.place(u, h);
        lb.top = lb.top.max(h);
        true
    }
}
