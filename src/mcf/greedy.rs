//! A first routing with one tree per source, found by rip-up and reroute: each source in turn
//! drops its tree and takes the shortest-path tree under lengths exp(alpha * load_e / (c_e *
//! tau)) / c_e (tau the current largest load over capacity), a few passes, keeping the best
//! pass. Loads are integers, so its bound is exact at once; when the strongest cut among its
//! saturated edges is as tight, the optimum is proved without any LP (the DGX fat trees: every
//! GPU's off-box blocks leave through its own NIC). Otherwise its trees seed the column
//! generation.

use super::cut;
use super::net::Network;
use super::tree::{Tree, shortest_tree};

const PASSES: usize = 6;
const ALPHA: f64 = 10.0;

/// The best pass: its trees and largest load over capacity as (load, capacity).
pub struct Greedy {
    pub trees: Vec<Tree>,
    pub worst: (u64, i64),
    /// Inside the strongest cut among the saturated edges, with its (demand, capacity).
    pub cut: Option<(Vec<bool>, u128, i128)>,
}

fn worst(net: &Network, load: &[u64]) -> (u64, i64) {
    let mut best = (0u64, 1i64);
    for (l, a) in load.iter().zip(&net.arcs) {
        if u128::from(*l) * best.1 as u128 > u128::from(best.0) * a.cap as u128 {
            best = (*l, a.cap);
        }
    }
    best
}

fn apply(load: &mut [u64], t: &Tree, add: bool) {
    for &(e, k) in &t.load {
        let l = &mut load[e as usize];
        *l = if add {
            l.saturating_add(u64::from(k))
        } else {
            l.saturating_sub(u64::from(k))
        };
    }
}

pub fn route(net: &Network) -> Greedy {
    let m = net.arcs.len();
    let inv: Vec<f64> = net.arcs.iter().map(|a| 1.0 / a.cap as f64).collect();
    let mut load = vec![0u64; m];
    let mut trees: Vec<Tree> = Vec::with_capacity(net.ranks.len());
    let mut best: Option<(Vec<Tree>, (u64, i64))> = None;
    for pass in 0..PASSES {
        for s in 0..net.ranks.len() {
            if pass > 0 {
                apply(&mut load, &trees[s], false);
            }
            let (wl, wc) = worst(net, &load);
            let tau = (wl as f64 / wc as f64).max(1e-9);
            let len: Vec<f64> = load
                .iter()
                .zip(&inv)
                .map(|(&l, &i)| i * (ALPHA * (l as f64 * i / tau).min(5.0)).exp())
                .collect();
            let t = shortest_tree(net, s, &len);
            apply(&mut load, &t, true);
            if pass == 0 {
                trees.push(t);
            } else {
                trees[s] = t;
            }
        }
        let w = worst(net, &load);
        let better = best
            .as_ref()
            .is_none_or(|(_, b)| u128::from(w.0) * (b.1 as u128) < u128::from(b.0) * (w.1 as u128));
        if better {
            best = Some((trees.clone(), w));
        }
    }
    let (trees, worst) = best.unwrap_or_default();
    let mut load = vec![0u64; m];
    trees.iter().for_each(|t| apply(&mut load, t, true));
    let saturated: Vec<bool> = load
        .iter()
        .zip(&net.arcs)
        .map(|(&l, a)| u128::from(l) * worst.1 as u128 == u128::from(worst.0) * a.cap as u128)
        .collect();
    let cut = cut::strongest(net, &saturated).map(|c| {
        let mut inside = vec![false; net.n];
        c.nodes.iter().for_each(|&v| inside[v] = true);
        (inside, c.demand, c.capacity)
    });
    Greedy { trees, worst, cut }
}
