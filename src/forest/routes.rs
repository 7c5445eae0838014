//! Mapping packed trees back to the physical topology (../shared/seeds/forestcoll.txt, Appendix
//! C.3, last part: "one needs to use the routing in Algorithm 4 to recover the paths in G").
//!
//! Every unit of a logical edge's capacity carries one physical path
//! ([`Piece`](super::split::Piece)); a batch of m trees takes m units of each of its edges. When
//! those units come from different paths the batch is split further, so that every [`Tree`] uses
//! one route per edge; each piece is used by at most as many trees as it has units, so the trees'
//! load on every physical edge stays within floor(U b_e) trees, i.e. within the link's bandwidth
//! at rate y per tree.
//!
//! Capacities are per merged edge (parallel copies of a link summed, see [`super::plan`]): each
//! copy holds the floor(U b) whole trees it can carry alone, and the few units by which floor(U B)
//! exceeds their sum sit on a piece that names the merged edge by a placeholder
//! ([`Net::token`]). [`spread`] then fills the copies' leftover bandwidth, b - floor(U b) y, one
//! copy after the other in a fixed order (trees in output order, each tree's edges and hops in
//! order): a tree's use of the edge goes to the current copy while its leftover lasts, and a
//! tree that would overfill it is split into two trees of the same shape whose rates add up to
//! the original, the first taking what is left of the copy. The placeholder carries at most
//! (floor(U B) - sum floor(U b)) y <= the summed leftovers, so every copy stays within its
//! bandwidth; each copy that fills splits at most one tree. Without parallel copies, or when
//! every copy's U b is whole, nothing is split and the routes are those of the copies' pieces.

use super::net::Net;
use super::pack::Batch;
use super::split::Logical;
use super::types::{ForestEdge, Tree};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Zero;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One tree's share of a batch: how many trees, and each edge's route in the batch's edge order.
type Sub = (i64, Vec<Arc<[usize]>>);

/// Turns batches into trees with routes; `y` is the rate of one tree (bytes per second) and
/// `rank_of` orders the output by root rank. Tree edges that take the same piece share its route
/// (one allocation per piece, not per edge: a forest on thousands of ranks has millions of
/// edges); the trees are built in parallel once the pieces are handed out.
pub fn trees(
    net: &Net,
    copy_caps: &[i64],
    lg: &Logical,
    batches: &[Batch],
    y: &BigRational,
    rank_of: &BTreeMap<usize, usize>,
) -> Vec<Tree> {
    // Each logical arc's pieces as (units left, route), the route shared by every tree edge
    // that takes it; handed out from the end, as `split` left them.
    let mut pieces: Vec<Vec<(i64, Arc<[usize]>)>> = lg
        .pieces
        .iter()
        .map(|list| {
            list.iter()
                .map(|p| (p.units, p.path.iter().map(|&e| e as usize).collect()))
                .collect()
        })
        .collect();
    let mut split: Vec<Vec<Sub>> = Vec::with_capacity(batches.len());
    for b in batches {
        let mut subs: Vec<Sub> = vec![(b.m, Vec::with_capacity(b.edges.len()))];
        for &(_, _, arc) in &b.edges {
            let list = &mut pieces[arc / 2];
            let mut next = Vec::with_capacity(subs.len());
            for (m, mut taken) in subs {
                let mut need = m;
                loop {
                    let (units, route) =
                        list.last_mut().expect("the packing stays within capacity");
                    let t = (*units).min(need);
                    need -= t;
                    *units -= t;
                    let route = route.clone();
                    if *units == 0 {
                        list.pop();
                    }
                    if need == 0 {
                        // The last piece takes the routes so far along; only splits copy them.
                        taken.push(route);
                        next.push((t, taken));
                        break;
                    }
                    let mut r = taken.clone();
                    r.push(route);
                    next.push((t, r));
                }
            }
            subs = next;
        }
        split.push(subs);
    }
    let mut out: Vec<(usize, Tree)> = batches
        .par_iter()
        .zip(split)
        .map_init(
            || vec![0u32; net.n],
            |depth, (b, subs)| {
                let order = bfs_order(b, depth);
                subs.into_iter()
                    .map(|(m, routes)| {
                        let edges = order
                            .iter()
                            .map(|&i| {
                                let (from, to, _) = b.edges[i];
                                ForestEdge {
                                    from,
                                    to,
                                    route: routes[i].clone(),
                                }
                            })
                            .collect();
                        let tree = Tree {
                            root: b.root,
                            rate: y * BigRational::from_integer(BigInt::from(m)),
                            edges,
                        };
                        (rank_of[&b.root], tree)
                    })
                    .collect::<Vec<_>>()
            },
        )
        .flatten()
        .collect();
    out.sort_by_key(|(r, _)| *r);
    let mut trees: Vec<Tree> = out.into_iter().map(|(_, t)| t).collect();
    for i in 0..net.copies.len() {
        if net.copies[i].len() > 1 {
            spread(net, copy_caps, y, i, &mut trees);
        }
    }
    trees
}

/// Replaces the placeholder of merged edge `i` in every route by its physical copies; see the
/// module doc.
fn spread(net: &Net, copy_caps: &[i64], y: &BigRational, i: usize, trees: &mut Vec<Tree>) {
    let token = net.token(i) as usize;
    let copies = &net.copies[i];
    let int = |v: i64| BigRational::from_integer(BigInt::from(v));
    let cap = |c: usize| {
        let p = copies[c];
        &net.unit * int(net.phys[p].bw) - y * int(copy_caps[p])
    };
    let (mut at, mut left) = (0, cap(0));
    let mut t = 0;
    while t < trees.len() {
        // The first hop of this tree still on the placeholder.
        let hop = trees[t]
            .edges
            .iter()
            .enumerate()
            .find_map(|(e, fe)| fe.route.iter().position(|&g| g == token).map(|h| (e, h)));
        let Some((e, h)) = hop else {
            t += 1;
            continue;
        };
        // Skip copies that are full (only possible past the last tree that fits exactly).
        while left.is_zero() && at + 1 < copies.len() {
            at += 1;
            left = cap(at);
        }
        let rate = trees[t].rate.clone();
        if rate > left && at + 1 < copies.len() {
            // Split: this tree takes what the copy has left, a twin the rest.
            let mut twin = trees[t].clone();
            twin.rate = &rate - &left;
            trees[t].rate = left.clone();
            trees.insert(t + 1, twin);
            left = BigRational::zero();
        } else {
            // Fits (the last copy takes the rest; the plan's capacities keep it within).
            left = if rate > left {
                BigRational::zero()
            } else {
                &left - &rate
            };
        }
        let mut route = trees[t].edges[e].route.to_vec();
        route[h] = net.phys[copies[at]].edge;
        trees[t].edges[e].route = route.into();
    }
}

/// Edge indices of a batch sorted by the depth of their child (stable), so parents come first.
/// `depth` is scratch indexed by node: each entry is written before it is read.
fn bfs_order(b: &Batch, depth: &mut [u32]) -> Vec<usize> {
    depth[b.root] = 0;
    let mut keyed = Vec::with_capacity(b.edges.len());
    for (i, &(x, y, _)) in b.edges.iter().enumerate() {
        let d = depth[x] + 1;
        depth[y] = d;
        keyed.push((d, i as u32));
    }
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, i)| i as usize).collect()
}
