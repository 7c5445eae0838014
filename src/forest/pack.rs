//! Spanning out-tree packing in batches (../shared/seeds/forestcoll.txt, Section 4.4, Appendix
//! C.3, Algorithm 5, Theorems 11-12; Bérczi & Frank's strongly polynomial packing).
//!
//! A batch is m identical out-trees with root set R (its vertices so far) and edge list. Each
//! batch grows by edges (x, y), x in R, y not in R, taken with multiplicity
//!
//!   mu = min{ g(x,y), m(R1), F(x, y; D-bar) - sum_{i != 1} m(R_i) }           (5)
//!
//! where D-bar is the remaining capacity graph g plus a node s_i per other batch, an arc x -> s_i
//! of capacity m(R_i) and infinite arcs s_i -> R_i. If mu < m the batch splits in two (m - mu
//! copies stay behind), so the number of batches, and the run time, do not grow with k.
//!
//! One persistent flow network serves every query: the arcs x -> s_i come from a super source
//! sigma (sigma -> s_i with capacity m(R_i), plus a temporary infinite sigma -> x), which is the
//! same cut function. Batches that already span every rank, or already contain y, add exactly
//! m(R_i) to the flow and to the subtracted sum, so they are left out of both. Edges are tried in
//! breadth-first order from the root, which keeps trees shallow.
//!
//! Speculation (our addition, for large topologies where (5) costs a flow per tree edge). Most
//! edges take mu = min(g(x,y), m(R_i)): a flow only confirms it. A speculative run computes (5)
//! for the first batch and, afterwards, only for an edge (x, y) that crosses a cut learned from an
//! earlier short mu (the sink side of its minimum cut holds y and a vertex of R_i, but not x);
//! every other edge is taken min(g, m) times without a flow. That is exactly the exact run's
//! choice whenever the run completes: Theorem 11's condition (3) is necessary for the remaining
//! trees to exist, and the completed run is such a completion from every state it passed, so
//! (5), the largest mu keeping (3), was min(g, m) at each speculated step. A run that stalls is
//! dropped and the exact run (every mu computed) starts over. On a fat tree of DGX boxes the
//! learned cuts are the boxes (a tree may enter each box once), so only the edges into a box the
//! tree already reached need a flow.

use super::flow::{FlowNet, INF};
use super::split::Logical;
use std::collections::BTreeMap;

/// m identical out-trees rooted at `root` (topology node ids).
#[derive(Debug, Clone)]
pub struct Batch {
    pub root: usize,
    pub m: i64,
    /// Vertices in the order they joined.
    pub members: Vec<usize>,
    /// (parent, child, arc of the logical graph), in the order they joined.
    pub edges: Vec<(usize, usize, usize)>,
    pub(super) inside: Vec<bool>,
    /// Node s_i and its arc from sigma in the packing network.
    node: usize,
    sigma_arc: usize,
}

impl Batch {
    /// k trees rooted at `r` that hold only their root, in a graph of `n` vertices.
    pub(super) fn seed(r: usize, k: i64, n: usize) -> Batch {
        Batch {
            root: r,
            m: k,
            members: vec![r],
            edges: Vec::new(),
            inside: (0..n).map(|v| v == r).collect(),
            node: 0,
            sigma_arc: 0,
        }
    }
}

/// Cuts learned from the exact queries of the speculative run: the sink sides (graph nodes only)
/// of the minimum cuts that made some mu fall short of min(g, m).
struct Learned {
    /// Per node, the learned sets containing it.
    of: Vec<Vec<u32>>,
    sets: std::collections::BTreeSet<Vec<usize>>,
    /// Per set, how many members of the batch being grown it holds.
    hit: Vec<u32>,
}

impl Learned {
    fn new(n: usize) -> Learned {
        Learned {
            of: vec![Vec::new(); n],
            sets: Default::default(),
            hit: Vec::new(),
        }
    }

    fn add(&mut self, set: Vec<usize>, members: &[usize]) {
        if self.sets.contains(&set) {
            return;
        }
        let id = self.hit.len() as u32;
        for &v in &set {
            self.of[v].push(id);
        }
        self.hit.push(0);
        for &v in members {
            if self.of[v].last() == Some(&id) {
                self.hit[id as usize] += 1;
            }
        }
        self.sets.insert(set);
    }

    fn start(&mut self, members: &[usize]) {
        self.hit.iter_mut().for_each(|h| *h = 0);
        for &v in members {
            self.joined(v);
        }
    }

    fn joined(&mut self, v: usize) {
        for &l in &self.of[v] {
            self.hit[l as usize] += 1;
        }
    }

    /// A learned set holds y and a member of the batch but not x: adding (x, y) may cross it.
    fn suspects(&self, x: usize, y: usize) -> bool {
        self.of[y]
            .iter()
            .any(|&l| self.hit[l as usize] > 0 && !self.of[x].contains(&l))
    }
}

/// Packs k trees per root into the switch-free graph `lg` (ranks only). `None` if the packing
/// stalls, which Theorems 7 and 10 rule out whenever the capacities were Eulerian.
///
/// With `speculative`, mu is only computed for the first batch and for the edges that a cut
/// learned so far suspects; every other edge is taken min(g, m) times (see the module doc). A
/// speculative run that completes is exactly the exact run; one that stalls proves nothing.
pub fn pack(
    lg: &Logical,
    ranks: &[usize],
    roots: &[usize],
    k: i64,
    speculative: bool,
) -> Option<Vec<Batch>> {
    let n = lg.out.len();
    let nr = ranks.len();
    // Remaining capacity g: (x, y) -> (g, logical arc, arc in the current packing network).
    let mut g: BTreeMap<(usize, usize), (i64, usize, usize)> = BTreeMap::new();
    for &x in ranks {
        for (&y, &a) in &lg.out[x] {
            let c = lg.cap(a);
            if c > 0 {
                g.insert((x, y), (c, a, 0));
            }
        }
    }
    let mut batches: Vec<Batch> = roots.iter().map(|&r| Batch::seed(r, k, n)).collect();
    let mut learned = Learned::new(n);
    let mut i = 0;
    while i < batches.len() {
        // A fresh packing network per batch: complete batches drop out (they contain every y),
        // which keeps each query's network to the live batches.
        let mut net = FlowNet::new(n + 1);
        let sigma = n;
        for (&(x, y), entry) in g.iter_mut() {
            entry.2 = net.add_arc(x, y, entry.0);
        }
        for b in &mut batches[i..] {
            attach(&mut net, sigma, b);
        }
        let mut st = Grow {
            net: &mut net,
            sigma,
            nr,
            exact: !speculative || i == 0,
            learned: &mut learned,
        };
        if !grow(&mut st, &mut batches, i, &mut g) {
            return None;
        }
        i += 1;
    }
    Some(batches)
}

/// Adds batch `b`'s node s_i, its arc from sigma and its infinite arcs to its members.
fn attach(net: &mut FlowNet, sigma: usize, b: &mut Batch) {
    b.node = net.add_node();
    b.sigma_arc = net.add_arc(sigma, b.node, b.m);
    for &v in &b.members {
        net.add_arc(b.node, v, INF);
    }
}

/// The state one batch grows in.
struct Grow<'a> {
    net: &'a mut FlowNet,
    sigma: usize,
    nr: usize,
    /// Compute (5) for every edge (else only for the suspects of `learned`).
    exact: bool,
    learned: &'a mut Learned,
}

fn grow(
    st: &mut Grow,
    batches: &mut Vec<Batch>,
    i: usize,
    g: &mut BTreeMap<(usize, usize), (i64, usize, usize)>,
) -> bool {
    let (sigma, nr) = (st.sigma, st.nr);
    st.learned.start(&batches[i].members);
    let mut outs: Vec<(usize, usize, usize)> = Vec::new();
    while batches[i].members.len() < nr {
        let mut progressed = false;
        let mut pos = 0;
        while pos < batches[i].members.len() && batches[i].members.len() < nr {
            let x = batches[i].members[pos];
            outs.clear();
            outs.extend(
                g.range((x, 0)..(x + 1, 0))
                    .map(|(&(_, y), &(_, logical, arc))| (y, logical, arc)),
            );
            for &(y, logical, arc) in &outs {
                if batches[i].inside[y] {
                    continue;
                }
                let gxy = g[&(x, y)].0;
                if gxy == 0 {
                    continue;
                }
                let want = gxy.min(batches[i].m);
                let mu = if st.exact || st.learned.suspects(x, y) {
                    let (mu, cut) = mu(st.net, sigma, batches, i, x, y, gxy);
                    if let Some(cut) = cut {
                        st.learned.add(cut, &batches[i].members);
                    }
                    mu
                } else {
                    want
                };
                if mu == 0 {
                    continue;
                }
                if mu < batches[i].m {
                    let b = &batches[i];
                    let (root, rest, members, edges) =
                        (b.root, b.m - mu, b.members.clone(), b.edges.clone());
                    let mut copy = Batch {
                        root,
                        m: rest,
                        members,
                        edges,
                        inside: batches[i].inside.clone(),
                        node: 0,
                        sigma_arc: 0,
                    };
                    attach(st.net, sigma, &mut copy);
                    batches.push(copy);
                    batches[i].m = mu;
                    st.net.set_cap(batches[i].sigma_arc, mu);
                }
                let b = &mut batches[i];
                b.edges.push((x, y, logical));
                b.members.push(y);
                b.inside[y] = true;
                st.learned.joined(y);
                st.net.add_arc(b.node, y, INF);
                st.net.set_cap(arc, gxy - mu);
                g.get_mut(&(x, y)).expect("edge").0 = gxy - mu;
                progressed = true;
            }
            pos += 1;
        }
        if !progressed {
            return false;
        }
    }
    true
}

/// Equation (5) for adding (x, y) to batch i, whose remaining capacity on (x, y) is `g`; when
/// mu < min(g, m), also the nodes on the sink side of the minimum cut that limits it.
fn mu(
    net: &mut FlowNet,
    sigma: usize,
    batches: &[Batch],
    i: usize,
    x: usize,
    y: usize,
    g: i64,
) -> (i64, Option<Vec<usize>>) {
    let mut others = 0i64;
    // Batches before i are complete (they contain y) and are not in this network.
    for (j, b) in batches.iter().enumerate().skip(i) {
        // Batches containing y add exactly m to both sides of (5).
        let counted = j != i && !b.inside[y];
        net.set_cap(b.sigma_arc, if counted { b.m } else { 0 });
        if counted {
            others += b.m;
        }
    }
    let want = g.min(batches[i].m);
    net.add_arc(sigma, x, INF);
    let f = net.max_preflow(sigma, y, others + want);
    let cut = (f < others + want).then(|| {
        let side = net.sink_side(y);
        (0..sigma).filter(|&v| side[v]).collect()
    });
    net.pop_arc();
    ((f - others).clamp(0, want), cut)
}
