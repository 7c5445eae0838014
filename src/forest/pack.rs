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
    let mut batches: Vec<Batch> = roots
        .iter()
        .map(|&r| Batch {
            root: r,
            m: k,
            members: vec![r],
            edges: Vec::new(),
            inside: (0..n).map(|v| v == r).collect(),
            node: 0,
            sigma_arc: 0,
        })
        .collect();
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
        if !grow(&mut net, sigma, nr, &mut batches, i, &mut g) {
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

#[allow(clippy::too_many_arguments)]
fn grow(
    net: &mut FlowNet,
    sigma: usize,
    nr: usize,
    batches: &mut Vec<Batch>,
    i: usize,
    g: &mut BTreeMap<(usize, usize), (i64, usize, usize)>,
) -> bool {
    while batches[i].members.len() < nr {
        let mut progressed = false;
        let mut pos = 0;
        while pos < batches[i].members.len() && batches[i].members.len() < nr {
            let x = batches[i].members[pos];
            let outs: Vec<(usize, i64, usize, usize)> = g
                .range((x, 0)..(x + 1, 0))
                .map(|(&(_, y), &(c, logical, arc))| (y, c, logical, arc))
                .collect();
            for (y, _, logical, arc) in outs {
                if batches[i].inside[y] {
                    continue;
                }
                let gxy = g[&(x, y)].0;
                if gxy == 0 {
                    continue;
                }
                let mu = mu(net, sigma, batches, i, x, y, gxy);
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
                    attach(net, sigma, &mut copy);
                    batches.push(copy);
                    batches[i].m = mu;
                    net.set_cap(batches[i].sigma_arc, mu);
                }
                let b = &mut batches[i];
                b.edges.push((x, y, logical));
                b.members.push(y);
                b.inside[y] = true;
                net.add_arc(b.node, y, INF);
                net.set_cap(arc, gxy - mu);
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
    let f = net.max_flow(sigma, y, others + want);
    net.pop_arc();
    (f - others).clamp(0, want)
}
