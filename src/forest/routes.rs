//! Mapping packed trees back to the physical topology (../shared/seeds/forestcoll.txt, Appendix
//! C.3, last part: "one needs to use the routing in Algorithm 4 to recover the paths in G").
//!
//! Every unit of a logical edge's capacity carries one physical path ([`Piece`]); a batch of m
//! trees takes m units of each of its edges. When those units come from different paths the batch
//! is split further, so that every [`Tree`] uses one route per edge; each piece is used by at most
//! as many trees as it has units, so the trees' load on every physical edge stays within
//! floor(U b_e) trees, i.e. within the link's bandwidth at rate y per tree.

use super::pack::Batch;
use super::split::{Logical, Piece};
use super::types::{ForestEdge, Tree};
use num_bigint::BigInt;
use num_rational::BigRational;
use std::collections::BTreeMap;

/// Turns batches into trees with routes; `y` is the rate of one tree (bytes per second) and
/// `rank_of` orders the output by root rank.
pub fn trees(
    lg: &mut Logical,
    batches: &[Batch],
    y: &BigRational,
    rank_of: &BTreeMap<usize, usize>,
) -> Vec<Tree> {
    let mut out: Vec<(usize, Tree)> = Vec::new();
    for b in batches {
        let mut subs: Vec<(i64, Vec<Vec<u32>>)> = vec![(b.m, Vec::new())];
        for &(_, _, arc) in &b.edges {
            let list = &mut lg.pieces[arc / 2];
            let mut next = Vec::with_capacity(subs.len());
            for (m, mut routes) in subs {
                let mut need = m;
                loop {
                    let piece: &mut Piece =
                        list.last_mut().expect("the packing stays within capacity");
                    let t = piece.units.min(need);
                    need -= t;
                    let path = piece.path.clone();
                    piece.units -= t;
                    if piece.units == 0 {
                        list.pop();
                    }
                    if need == 0 {
                        // The last piece takes the routes so far along; only splits copy them.
                        routes.push(path);
                        next.push((t, routes));
                        break;
                    }
                    let mut r = routes.clone();
                    r.push(path);
                    next.push((t, r));
                }
            }
            subs = next;
        }
        let order = bfs_order(b);
        for (m, routes) in subs {
            let edges = order
                .iter()
                .map(|&i| {
                    let (from, to, _) = b.edges[i];
                    ForestEdge {
                        from,
                        to,
                        route: routes[i].iter().map(|&e| e as usize).collect(),
                    }
                })
                .collect();
            let tree = Tree {
                root: b.root,
                rate: y * BigRational::from_integer(BigInt::from(m)),
                edges,
            };
            out.push((rank_of[&b.root], tree));
        }
    }
    out.sort_by_key(|(r, _)| *r);
    out.into_iter().map(|(_, t)| t).collect()
}

/// Edge indices of a batch sorted by the depth of their child (stable), so parents come first.
fn bfs_order(b: &Batch) -> Vec<usize> {
    let mut depth: BTreeMap<usize, usize> = BTreeMap::new();
    depth.insert(b.root, 0);
    let mut keyed = Vec::with_capacity(b.edges.len());
    for (i, &(x, y, _)) in b.edges.iter().enumerate() {
        let d = depth[&x] + 1;
        depth.insert(y, d);
        keyed.push((d, i));
    }
    keyed.sort();
    keyed.into_iter().map(|(_, i)| i).collect()
}
