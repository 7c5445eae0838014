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

use super::flow::{FlowNet, INF};
use super::split::Logical;

/// m identical out-trees rooted at `root` (topology node ids).
#[derive(Debug, Clone)]
pub struct Batch {
    pub root: usize,
    pub m: i64,
    /// Vertices in the order they joined.
    pub members: Vec<usize>,
    /// (parent, child, arc of the logical graph), in the order they joined.
    pub edges: Vec<(usize, usize, usize)>,
    inside: Vec<bool>,
    /// Node s_i and its arc from sigma in the packing network.
    node: usize,
    sigma_arc: usize,
}

/// Packs k trees per root into the switch-free graph `lg` (ranks only). `None` if the packing
/// stalls, which Theorems 7 and 10 rule out whenever the capacities were Eulerian.
pub fn pack(lg: &Logical, ranks: &[usize], roots: &[usize], k: i64) -> Option<Vec<Batch>> {
    let n = lg.out.len();
    let nr = ranks.len();
    // Packing network: topology node ids (only ranks have arcs), then sigma, then s_i.
    let mut net = FlowNet::new(n + 1);
    let sigma = n;
    // Remaining capacity g lives in the packing network's arc capacities.
    let mut arc_of = std::collections::BTreeMap::new();
    for &x in ranks {
        for (&y, &a) in &lg.out[x] {
            let c = lg.cap(a);
            if c > 0 {
                arc_of.insert((x, y), (net.add_arc(x, y, c), a));
            }
        }
    }
    let mut batches: Vec<Batch> = Vec::new();
    for &r in roots {
        let b = new_batch(&mut net, sigma, n, r, k, vec![r], Vec::new());
        batches.push(b);
    }
    let mut i = 0;
    while i < batches.len() {
        if !grow(&mut net, sigma, n, nr, &mut batches, i, lg, &arc_of) {
            return None;
        }
        net.set_cap(batches[i].sigma_arc, 0);
        i += 1;
    }
    Some(batches)
}

fn new_batch(
    net: &mut FlowNet,
    sigma: usize,
    n: usize,
    root: usize,
    m: i64,
    members: Vec<usize>,
    edges: Vec<(usize, usize, usize)>,
) -> Batch {
    let node = net.add_node();
    let sigma_arc = net.add_arc(sigma, node, m);
    let mut inside = vec![false; n];
    for &v in &members {
        inside[v] = true;
        net.add_arc(node, v, INF);
    }
    Batch {
        root,
        m,
        members,
        edges,
        inside,
        node,
        sigma_arc,
    }
}

#[allow(clippy::too_many_arguments)]
fn grow(
    net: &mut FlowNet,
    sigma: usize,
    n: usize,
    nr: usize,
    batches: &mut Vec<Batch>,
    i: usize,
    lg: &Logical,
    arc_of: &std::collections::BTreeMap<(usize, usize), (usize, usize)>,
) -> bool {
    while batches[i].members.len() < nr {
        let mut progressed = false;
        let mut pos = 0;
        while pos < batches[i].members.len() && batches[i].members.len() < nr {
            let x = batches[i].members[pos];
            for &y in lg.out[x].keys() {
                if batches[i].inside[y] {
                    continue;
                }
                let Some(&(arc, logical)) = arc_of.get(&(x, y)) else {
                    continue;
                };
                let g = net.cap_of(arc);
                if g == 0 {
                    continue;
                }
                let mu = mu(net, sigma, batches, i, x, y, g);
                if mu == 0 {
                    continue;
                }
                if mu < batches[i].m {
                    let b = &batches[i];
                    let (root, rest, members, edges) =
                        (b.root, b.m - mu, b.members.clone(), b.edges.clone());
                    let copy = new_batch(net, sigma, n, root, rest, members, edges);
                    batches.push(copy);
                    batches[i].m = mu;
                    net.set_cap(batches[i].sigma_arc, mu);
                }
                let b = &mut batches[i];
                b.edges.push((x, y, logical));
                b.members.push(y);
                b.inside[y] = true;
                net.add_arc(b.node, y, INF);
                net.set_cap(arc, g - mu);
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

/// Equation (5) for adding (x, y) to batch i, whose remaining capacity on (x, y) is `g`.
fn mu(
    net: &mut FlowNet,
    sigma: usize,
    batches: &[Batch],
    i: usize,
    x: usize,
    y: usize,
    g: i64,
) -> i64 {
    let mut others = 0i64;
    for (j, b) in batches.iter().enumerate() {
        // Batches containing y (complete ones included) add exactly m to both sides.
        let counted = j != i && !b.inside[y];
        net.set_cap(b.sigma_arc, if counted { b.m } else { 0 });
        if counted {
            others += b.m;
        }
    }
    let want = g.min(batches[i].m);
    net.add_arc(sigma, x, INF);
    let f = net.max_flow(sigma, y, others + want);
    net.pop_arc();
    (f - others).clamp(0, want)
}
