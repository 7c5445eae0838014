//! The maxflow oracle every ForestColl stage calls (../shared/seeds/forestcoll.txt, Appendix C:
//! F(x, y; D) and the min-cut theorem). Appendix D assumes a preflow-push solver; we use Dinic's
//! blocking flows, which has the same strongly polynomial bound on these unit-free integer
//! networks, and, for the flows whose callers only read the sink side of the cut, a few blocking
//! flows followed by push-relabel ([`FlowNet::preflow`], in preflow.rs), which is far faster where
//! the paths are long. Capacities are exact `i64` integers: callers scale rational bandwidths to
//! a common denominator first, so no float ever decides a cut.
//!
//! The network is built once and reused: `cap0` holds the capacities, `cap` the residual of the
//! current run. Temporary arcs (the infinite edges of the auxiliary networks) are pushed last and
//! popped after use, and a flow can be capped (`limit`) because every caller only asks whether a
//! maxflow reaches a threshold. A run may also start from a flow a caller kept
//! ([`FlowNet::swap_residual`], the changes undone with [`FlowNet::record`] and
//! [`FlowNet::rollback`]), or run with arcs turned around ([`FlowNet::reversed_flow`]). The
//! source's own arcs are tried last added first, so a capped flow reaches its cap through the
//! callers' temporary infinite arcs before the unit arcs of the roots; removed arcs leave the
//! adjacency ([`FlowNet::detach`]).

mod preflow;

/// Capacity that no cut in our networks can reach.
pub const INF: i64 = i64::MAX / 4;

#[derive(Debug, Clone, Default)]
pub struct FlowNet {
    adj: Vec<Vec<u32>>,
    to: Vec<u32>,
    cap0: Vec<i64>,
    cap: Vec<i64>,
    level: Vec<i32>,
    iter: Vec<usize>,
    queue: Vec<u32>,
    /// While `recording`, each residual capacity changed, with its value before.
    journal: Vec<(u32, i64)>,
    recording: bool,
    labels: preflow::Labels,
}

impl FlowNet {
    pub fn new(n: usize) -> FlowNet {
        FlowNet {
            adj: vec![Vec::new(); n],
            ..FlowNet::default()
        }
    }

    pub fn node_count(&self) -> usize {
        self.adj.len()
    }

    pub fn add_node(&mut self) -> usize {
        self.adj.push(Vec::new());
        self.adj.len() - 1
    }

    /// Adds the arc u -> v (and its zero-capacity reverse); returns the arc's id.
    pub fn add_arc(&mut self, u: usize, v: usize, c: i64) -> usize {
        let id = self.to.len();
        self.to.push(v as u32);
        self.cap0.push(c);
        self.adj[u].push(id as u32);
        self.to.push(u as u32);
        self.cap0.push(0);
        self.adj[v].push(id as u32 + 1);
        id
    }

    /// Removes the most recently added arc, which must be the last arc of both its endpoints.
    pub fn pop_arc(&mut self) {
        let id = self.to.len() - 2;
        let v = self.to[id] as usize;
        let u = self.to[id + 1] as usize;
        debug_assert_eq!(self.adj[v].last(), Some(&(id as u32 + 1)));
        self.adj[v].pop();
        debug_assert_eq!(self.adj[u].last(), Some(&(id as u32)));
        self.adj[u].pop();
        self.to.truncate(id);
        self.cap0.truncate(id);
    }

    /// Takes the arc `arc` (and its reverse) out of the adjacency lists: flows no longer scan
    /// it. Only for an arc whose capacity is zero for good (its reverse is zero too, so no flow
    /// can use either); its id stays allocated. Not while temporary arcs are pushed.
    pub fn detach(&mut self, arc: usize) {
        debug_assert_eq!(self.cap0[arc], 0);
        for a in [arc, arc ^ 1] {
            let u = self.to[a ^ 1] as usize;
            if let Some(i) = self.adj[u].iter().position(|&x| x as usize == a) {
                self.adj[u].swap_remove(i);
            }
        }
    }

    pub fn arc_count(&self) -> usize {
        self.to.len() / 2
    }

    pub fn set_cap(&mut self, arc: usize, c: i64) {
        self.cap0[arc] = c;
    }

    pub fn cap_of(&self, arc: usize) -> i64 {
        self.cap0[arc]
    }

    /// Maxflow from `s` to `t`, stopping once it reaches `limit`; starts from zero flow.
    pub fn max_flow(&mut self, s: usize, t: usize, limit: i64) -> i64 {
        self.restore_capacities();
        self.augment(s, t, limit)
    }

    /// Maxflow from `s` to `t` (up to `limit`) in the network with each arc of `reversed` turned
    /// around (its capacity on its reverse), starting from zero flow. Afterwards
    /// [`FlowNet::sink_side`] is what can still reach `t`. Computed as a maximum preflow
    /// ([`FlowNet::preflow`]): these flows fan out from one node to many, where Dinic needs a
    /// phase per path length.
    pub fn reversed_flow(&mut self, s: usize, t: usize, reversed: &[usize], limit: i64) -> i64 {
        self.restore_capacities();
        for &a in reversed {
            self.cap[a ^ 1] += self.cap[a];
            self.cap[a] = 0;
        }
        self.preflow(s, t, limit)
    }

    /// F(s, v) up to `limit`, where `root_arcs` are the only arcs at s (s -> root). On a
    /// `balanced` network (every node but s with equal capacity in and out) it is computed turned
    /// around, fanning out from v instead of gathering a unit from every root: for a set X
    /// holding s but not v, with A = X - s and B the rest, the cut is c(A -> B) + the root arcs
    /// into B, and c(A -> B) = c(B -> A) by balance, which is the cut of B in the network with
    /// each root arc reversed (root -> s). The flow v -> s there has the same value. Afterwards
    /// [`FlowNet::rooted_cut`] gives the smallest minimum cut's X either way.
    pub fn rooted_flow(
        &mut self,
        s: usize,
        v: usize,
        root_arcs: &[usize],
        balanced: bool,
        limit: i64,
    ) -> i64 {
        if balanced {
            self.reversed_flow(v, s, root_arcs, limit)
        } else {
            self.max_flow(s, v, limit)
        }
    }

    /// The source side of the smallest minimum cut of the last [`FlowNet::rooted_flow`] (with
    /// the same `balanced`): what s reaches, or, turned around, what can still reach s.
    pub fn rooted_cut(&self, s: usize, balanced: bool) -> Vec<bool> {
        if balanced {
            self.sink_side(s)
        } else {
            self.source_side(s)
        }
    }

    /// Whether every node other than `except` has as much capacity in as out (arcs at `except`
    /// left out), with every capacity below [`INF`].
    pub fn balanced(&self, except: usize) -> bool {
        let mut net = vec![0i128; self.adj.len()];
        for a in (0..self.to.len()).step_by(2) {
            let (u, v, c) = (self.to[a + 1] as usize, self.to[a] as usize, self.cap0[a]);
            if u == except || v == except {
                continue;
            }
            if c >= INF {
                return false;
            }
            net[u] += i128::from(c);
            net[v] -= i128::from(c);
        }
        net.iter().all(|&x| x == 0)
    }

    fn restore_capacities(&mut self) {
        self.cap.clear();
        self.cap.extend_from_slice(&self.cap0);
    }

    /// Pushes more flow from `s` to `t` on the current residual network (after `max_flow`).
    pub fn augment(&mut self, s: usize, t: usize, limit: i64) -> i64 {
        self.dinic(s, t, limit, usize::MAX).0
    }

    /// [`FlowNet::augment`] for at most `phases` blocking flows; also says whether it stopped
    /// for that reason (the flow may then be short of maximum).
    fn dinic(&mut self, s: usize, t: usize, limit: i64, phases: usize) -> (i64, bool) {
        if s == t {
            return (INF, false);
        }
        let n = self.adj.len();
        self.level.resize(n, 0);
        self.iter.resize(n, 0);
        let mut total = 0i64;
        let mut phase = 0;
        while total < limit && self.bfs(s, t) {
            if phase == phases {
                return (total, true);
            }
            phase += 1;
            self.iter.iter_mut().for_each(|i| *i = 0);
            // The source's arcs are tried last added first: callers add their temporary
            // (infinite) source arcs last, and a flow that only has to reach `limit` gets there
            // with a few wide paths from those instead of a unit path per rank. The order
            // changes which flow is found, not its value (nor the minimum cut of a maximum one).
            for i in (0..self.adj[s].len()).rev() {
                let a = self.adj[s][i] as usize;
                let v = self.to[a] as usize;
                if self.cap[a] <= 0 || self.level[v] != 1 {
                    continue;
                }
                let f = self.dfs(v, t, (limit - total).min(self.cap[a]));
                if f > 0 {
                    self.push(a, f);
                    total += f;
                    if total >= limit {
                        break;
                    }
                }
            }
        }
        (total, false)
    }

    /// Sends `f` more along arc `a`.
    fn push(&mut self, a: usize, f: i64) {
        if self.recording {
            self.journal.push((a as u32, self.cap[a]));
            self.journal.push((a as u32 ^ 1, self.cap[a ^ 1]));
        }
        self.cap[a] -= f;
        self.cap[a ^ 1] += f;
    }

    fn bfs(&mut self, s: usize, t: usize) -> bool {
        self.level.iter_mut().for_each(|l| *l = -1);
        self.queue.clear();
        self.level[s] = 0;
        // The source's arcs last added first, as the blocking flow takes them (see `augment`):
        // the search may stop at `t` before it has looked at the other nodes of level 1.
        for i in (0..self.adj[s].len()).rev() {
            let a = self.adj[s][i] as usize;
            let v = self.to[a] as usize;
            if self.cap[a] > 0 && self.level[v] < 0 {
                self.level[v] = 1;
                if v == t {
                    return true;
                }
                self.queue.push(v as u32);
            }
        }
        let mut head = 0;
        while head < self.queue.len() {
            let u = self.queue[head] as usize;
            head += 1;
            for &a in &self.adj[u] {
                let a = a as usize;
                let v = self.to[a] as usize;
                if self.cap[a] > 0 && self.level[v] < 0 {
                    self.level[v] = self.level[u] + 1;
                    if v == t {
                        return true;
                    }
                    self.queue.push(v as u32);
                }
            }
        }
        self.level[t] >= 0
    }

    /// Pushes up to `f` from `u` towards `t` along the level graph, as much as possible per call.
    fn dfs(&mut self, u: usize, t: usize, f: i64) -> i64 {
        if u == t {
            return f;
        }
        let mut pushed = 0;
        while self.iter[u] < self.adj[u].len() {
            let a = self.adj[u][self.iter[u]] as usize;
            let v = self.to[a] as usize;
            if self.cap[a] > 0 && self.level[v] == self.level[u] + 1 {
                let d = self.dfs(v, t, (f - pushed).min(self.cap[a]));
                if d > 0 {
                    self.push(a, d);
                    pushed += d;
                    if pushed == f {
                        return pushed;
                    }
                }
            }
            self.iter[u] += 1;
        }
        self.level[u] = -1;
        pushed
    }

    /// Nodes reachable from `s` in the residual network of the last run: the source side of a
    /// minimum cut (the smallest one) once the flow is maximum.
    pub fn source_side(&self, s: usize) -> Vec<bool> {
        let mut seen = vec![false; self.adj.len()];
        let mut stack = vec![s];
        seen[s] = true;
        while let Some(u) = stack.pop() {
            for &a in &self.adj[u] {
                let a = a as usize;
                let v = self.to[a] as usize;
                if self.cap[a] > 0 && !seen[v] {
                    seen[v] = true;
                    stack.push(v);
                }
            }
        }
        seen
    }

    /// Nodes that can still reach `t` in the residual network: the complement is the source side
    /// of the largest minimum cut.
    pub fn sink_side(&self, t: usize) -> Vec<bool> {
        let mut seen = vec![false; self.adj.len()];
        let mut stack = vec![t];
        seen[t] = true;
        while let Some(v) = stack.pop() {
            for &a in &self.adj[v] {
                // a is an arc leaving v; its reverse a^1 enters v from to[a].
                let u = self.to[a as usize] as usize;
                if self.cap[a as usize ^ 1] > 0 && !seen[u] {
                    seen[u] = true;
                    stack.push(u);
                }
            }
        }
        seen
    }

    /// The residual capacities of the last run, to resume from with [`FlowNet::restore`].
    pub fn snapshot(&self) -> Vec<i64> {
        self.cap.clone()
    }

    pub fn restore(&mut self, saved: &[i64]) {
        self.cap.clear();
        self.cap.extend_from_slice(saved);
    }

    /// Exchanges the residual capacities with `other`: a caller keeps a flow of its own between
    /// runs without copying it.
    pub fn swap_residual(&mut self, other: &mut Vec<i64>) {
        std::mem::swap(&mut self.cap, other);
    }

    /// From now on records every change of a residual capacity, for [`FlowNet::rollback`].
    pub fn record(&mut self) {
        self.journal.clear();
        self.recording = true;
    }

    /// Undoes the changes since [`FlowNet::record`] and stops recording.
    pub fn rollback(&mut self) {
        while let Some((a, c)) = self.journal.pop() {
            self.cap[a as usize] = c;
        }
        self.recording = false;
    }

    /// Keeps the first `len` residual capacities (drops those of arcs popped since).
    pub fn truncate_residual(&mut self, len: usize) {
        self.cap.truncate(len);
    }

    /// Extends the residual array after arcs were added since the last run (new arcs unused).
    pub fn sync_new_arcs(&mut self) {
        let have = self.cap.len();
        self.cap.extend_from_slice(&self.cap0[have..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_network() {
        // CLRS Figure 26.6: maxflow 23.
        let mut f = FlowNet::new(6);
        for (u, v, c) in [
            (0, 1, 16),
            (0, 2, 13),
            (1, 3, 12),
            (2, 1, 4),
            (2, 4, 14),
            (3, 2, 9),
            (3, 5, 20),
            (4, 3, 7),
            (4, 5, 4),
        ] {
            f.add_arc(u, v, c);
        }
        assert_eq!(f.max_flow(0, 5, INF), 23);
        assert_eq!(f.max_flow(0, 5, 10), 10);
        assert_eq!(f.max_flow(0, 5, INF), 23);
        let side = f.source_side(0);
        let cut: i64 = (0..f.arc_count())
            .map(|a| 2 * a)
            .filter(|&a| side[f.to[a ^ 1] as usize] && !side[f.to[a] as usize])
            .map(|a| f.cap0[a])
            .sum();
        assert_eq!(cut, 23);
        f.add_arc(0, 5, 5);
        assert_eq!(f.max_flow(0, 5, INF), 28);
        f.pop_arc();
        assert_eq!(f.max_flow(0, 5, INF), 23);
    }

    #[test]
    fn balance_and_turned_arcs() {
        // A two-way ring 0 <-> 1 <-> 2 <-> 0 of capacity 2, and a source 3 with arcs to 0 and 1.
        let mut f = FlowNet::new(4);
        for (u, v) in [(0, 1), (1, 2), (2, 0)] {
            f.add_arc(u, v, 2);
            f.add_arc(v, u, 2);
        }
        let roots = [f.add_arc(3, 0, 1), f.add_arc(3, 1, 1)];
        assert!(f.balanced(3));
        assert!(!f.balanced(0));
        // F(3 -> 2) = 2; turned around, 2 -> 3 through the reversed arcs is 2 as well, and
        // what can still reach 3 there is the smallest minimum cut's source side here.
        assert_eq!(f.max_flow(3, 2, INF), 2);
        let side = f.source_side(3);
        assert_eq!(f.reversed_flow(2, 3, &roots, INF), 2);
        assert_eq!(f.sink_side(3), side);
        // With 3 -> 0 of capacity 3, the smallest minimum cut is still {3} (4 leaves it, as
        // {3, 0, 1}), and the source's arcs do not count towards balance.
        f.set_cap(roots[0], 3);
        assert!(f.balanced(3));
        assert_eq!(f.max_flow(3, 2, INF), 4);
        let side = f.source_side(3);
        assert_eq!(f.reversed_flow(2, 3, &roots, INF), 4);
        assert_eq!(f.sink_side(3), side);
        // A ring arc of capacity 3 unbalances nodes 0 and 1.
        f.set_cap(0, 3);
        assert!(!f.balanced(3));
    }

    proptest::proptest! {
        /// The preflow's value (capped or not) and sink side are the maximum flow's, on random
        /// networks with a many-source gathering like tight.rs's probes (a source with finite
        /// arcs to batch nodes, infinite arcs from those into the graph), whether push-relabel
        /// starts from zero flow or from a blocking flow's.
        #[test]
        fn preflow_is_the_maximum_flow(
            n in 2usize..14,
            arcs in proptest::collection::vec((0usize..14, 0usize..14, 0i64..6), 0..50),
            batches in proptest::collection::vec((1i64..4, 0usize..14), 1..6),
            t in 0usize..14,
        ) {
            let t = t % n;
            let mut f = FlowNet::new(n);
            for (u, v, c) in arcs {
                f.add_arc(u % n, v % n, c);
            }
            let s = f.add_node();
            for (m, r) in batches {
                let b = f.add_node();
                f.add_arc(s, b, m);
                f.add_arc(b, r % n, INF);
            }
            for limit in [INF, 3] {
                let want = f.max_flow(s, t, limit);
                let side = f.sink_side(t);
                // As used (blocking flows first, which finish these small networks), then push-
                // relabel alone, and push-relabel after one blocking flow.
                for phases in [None, Some(0), Some(1)] {
                    let got = match phases {
                        None => f.max_preflow(s, t, limit),
                        Some(p) => {
                            f.restore_capacities();
                            let (first, _) = f.dinic(s, t, limit, p);
                            first + f.push_relabel(s, t, limit - first)
                        }
                    };
                    proptest::prop_assert_eq!(got, want);
                    if want < limit {
                        proptest::prop_assert_eq!(f.sink_side(t), side.clone());
                    }
                }
            }
        }
    }
}
