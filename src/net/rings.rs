//! Rings over channels: the rings NCCL and RCCL lay on a topology, one per channel, each
//! carrying its share of the data, so that together they use every rail (DESIGN.md, "Figures
//! that match the hardware"). [`search`] finds them on the file's network; the ring lowering
//! (`lower::ring`) runs one ring per channel and the simulators run what it lowers.
//!
//! NCCL's own search (src/graph/search.cc) tries ring after ring through the GPUs of a node,
//! entering and leaving it through a NIC, and reserves each ring's bandwidth on the links it
//! crosses, so later rings go through the NICs earlier ones left free. This search does the
//! same on any topology, with collc's routes (minimal-hop ECMP, [`Net::route`]):
//!
//! - **Channel 0** is the ring in node order (what `channels: 1` has always been), unless the
//!   search below finds a cheaper one on the bare links (a torus in row-major order is not a
//!   ring of its links; a snake through it is).
//! - **Each further channel** is the cheapest ring under link weights that grow with what the
//!   channels before it put on each link: a hop `u -> v` costs the sum over its route's links
//!   of `(1 + 1023 r^10) / cap`, `r` being the link's load over its capacity relative to the most
//!   loaded link's. The cheapest ring is a travelling-salesman tour: nearest neighbour from the
//!   channel's first rank, then 2-opt moves (reversing a stretch of the tour; costs are
//!   asymmetric, so the stretch's own hops are re-priced in the other direction) until no move
//!   gains, and or-opt moves (one rank moved elsewhere, which changes where a ring leaves a
//!   box); on up to 64 ranks every rank is tried as the start. Every second channel is
//!   instead the channel before it run backwards when that loads the links no more (on links
//!   alike both ways it uses the other direction of each; a 4x4 torus then gets its two
//!   edge-disjoint Hamiltonian cycles both ways round). The weights use no transcendental
//!   function, so the search gives the same rings on every machine.
//! - **Each channel's ring is then repaired** ([`unclash`]): hops are priced one by one, so
//!   two hops of one ring whose ECMP routes meet on a link (a fat tree's uplinks) are invisible
//!   to the search; exchanging or moving ranks or whole boxes' stretches around such a hop
//!   re-routes it, until no move lowers the most loaded link's load or the number of links at
//!   it.
//! - **Routes** between every pair of ranks are computed once into one table on up to 1,024
//!   ranks (a destination's distances looked up once for all sources).
//! - **The channel count** is the one whose rings bound the time best: with `C` channels each
//!   ring carries `1/C` of the data, so a bandwidth-bound ring collective's time is
//!   proportional to `max over links (hops on the link / capacity) / C` ([`Channels::load`],
//!   exact). Ties go to fewer channels, so a network one ring already saturates (a fat tree, a
//!   torus's single link) keeps one. At most [`MAX_CHANNELS`] (the MSCCL executor's and
//!   NCCL's channel limit), and fewer on large networks, where each channel prices every pair
//!   of ranks ([`PAIR_BUDGET`]).
//!
//! - **A ring that raises the most loaded link** may only have been forced to by the channels
//!   before it: on the DGX fat tree at 256 GPUs (the 1,024-GPU example with `boxes = 32`) the
//!   eighth ring finds one box whose free NICs put it on a NIC an earlier ring uses, so eight
//!   channels reached 100 GB/s of their 200 and `auto` laid 31 (193.75 GB/s, which the flow
//!   engine runs for minutes per size). Then each earlier ring is repaired again against all
//!   the others, kept where that brings the maximum back down. Where any such repair is kept,
//!   the channels are also laid greedily without it, and the repaired ones win only with a
//!   strictly better bound and no more channels: on mi250_2x16 the repair reaches the greedy
//!   search's bound with 15 channels instead of 30, which the tie rule would pick and the
//!   simulation runs 15% slower (the bound does not rank channel counts the way the
//!   simulation does), so there the greedy channels stay.
//!
//! Deviation from NCCL: NCCL also fixes each channel's speed from a table of per-GPU figures
//! and duplicates rings to fill SMs; here the rings' speed is what the simulator gives them
//! on the links, and the GPU runtime's per-channel limits are the cost model's (`net::gpu`).

mod unclash;

use super::{LinkId, Net};
use crate::lower::kept::Kept;
use crate::sema::model::{NodeId, Topology};
use num_rational::BigRational;
use num_traits::Zero;
use std::sync::Arc;

/// The most channels the search lays (NCCL's MAXCHANNELS and the MSCCL executor's limit).
pub const MAX_CHANNELS: usize = 32;

/// Rank pairs priced over all channels at most (N^2 per channel): keeps large networks to a
/// few channels (1,024 ranks: 8, one per NIC rail on the 1,024-GPU DGX fat tree; each channel
/// is a million messages per size to simulate there).
pub const PAIR_BUDGET: usize = 8 << 20;

/// Rings, one per channel: each a visiting order of the ranks (ring position to rank).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channels {
    pub rings: Vec<Vec<u32>>,
    /// `max over links (ring hops crossing the link / capacity) / channels`, in seconds per
    /// byte per ring step's share: the bandwidth term the rings bound a collective by.
    pub load: BigRational,
}

/// The ring in node order: rank r runs on `hosts[r]`, ties by rank.
pub fn node_order(hosts: &[NodeId]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..hosts.len() as u32).collect();
    order.sort_by_key(|&r| (hosts[r as usize], r));
    order
}

/// Searches already made in this process, by network, ranks and channel count: a sweep over
/// sizes (`collc compare`, `schedule auto`) lowers the same rings at every size. Costed by
/// their ranks times rings, within a budget (about 1,000 searches of 1,024 ranks and 8
/// channels), so a long-lived process does not keep every network it saw.
static SEARCHES: Kept<String, Channels> = Kept::new(8 << 20);

/// [`search`] on `topo`'s network (`fixed`: exactly `channels` rings, else at most), cached.
pub fn cached(topo: &Topology, hosts: &[NodeId], channels: usize, fixed: bool) -> Channels {
    let key = format!("{channels}|{fixed}|{hosts:?}|{}", topo.key());
    SEARCHES.made(
        key,
        || {
            let net = Net::new(topo);
            let table = (hosts.len() <= TABLE_RANKS).then(|| {
                let key = format!("{hosts:?}|{}", topo.key());
                TABLES.made(
                    key,
                    || Arc::new(Table::new(&net, hosts)),
                    |t| t.links.len() * 4 + t.start.len() * 4,
                )
            });
            lay(&net, hosts, channels, fixed, table)
        },
        |c| hosts.len() * c.rings.len().max(1),
    )
}

/// The most channels [`search`] lays for `n` ranks: [`MAX_CHANNELS`], fewer where that many
/// would price more than [`PAIR_BUDGET`] pairs. A search for more finds what one for this many
/// does, so callers that key searches or programs by a channel count clamp it here first.
pub fn auto_limit(n: usize) -> usize {
    MAX_CHANNELS.min((PAIR_BUDGET / n.saturating_mul(n).max(1)).max(1))
}

/// Exactly `channels` rings (at least one), laid as [`search`] lays them.
pub fn search_exactly(net: &Net, hosts: &[NodeId], channels: usize) -> Channels {
    lay(net, hosts, channels, true, None)
}

/// Rings for ranks on `hosts`, at most `max` channels (see the module doc).
pub fn search(net: &Net, hosts: &[NodeId], max: usize) -> Channels {
    lay(net, hosts, max, false, None)
}

/// [`search`] (`fixed`: [`search_exactly`]), on `table`'s routes when given (made for these
/// ranks on this network).
fn lay(
    net: &Net,
    hosts: &[NodeId],
    max: usize,
    fixed: bool,
    table: Option<Arc<Table>>,
) -> Channels {
    let n = hosts.len();
    let first = node_order(hosts);
    if n < 3 && !fixed || n == 0 {
        return Channels {
            load: load(net, hosts, std::slice::from_ref(&first)),
            rings: vec![first],
        };
    }
    let max = if fixed {
        max.max(1)
    } else {
        max.min(auto_limit(n)).max(1)
    };
    let routes = Routes::new(net, hosts, table);
    // Laid with the earlier channels repaired where a ring raised the most loaded link (see
    // the module doc). Only where a repair was kept do the greedy channels differ; they are
    // laid then too, and the repaired ones win only with a strictly better bound and no more
    // channels.
    let (with_repairs, repaired) = lay_on(net, &routes, first.clone(), max, fixed, true);
    if !repaired {
        return with_repairs;
    }
    let (greedy, _) = lay_on(net, &routes, first, max, fixed, false);
    if with_repairs.load < greedy.load && with_repairs.rings.len() <= greedy.rings.len() {
        with_repairs
    } else {
        greedy
    }
}

/// The channels laid on `routes`, at most `max` (`fixed`: exactly), the first searched from
/// `first` (the node-order ring); with `repair`, earlier rings are repaired again when a ring
/// raises the most loaded link, kept where that brings the maximum back. Also whether any
/// such repair was kept.
fn lay_on(
    net: &Net,
    routes: &Routes,
    first: Vec<u32>,
    max: usize,
    fixed: bool,
    repair: bool,
) -> (Channels, bool) {
    let n = first.len();
    let mut repaired = false;
    let mut hops = vec![0u32; net.links.len()];
    // Channel 0: the node-order ring, unless a searched ring is cheaper on the bare links.
    let unit = weights(net, &hops);
    let searched = cheapest_ring(routes, &unit, first[0]);
    let mut first = if gains(
        tour_cost(routes, &None, &unit, &searched),
        tour_cost(routes, &None, &unit, &first),
    ) {
        searched
    } else {
        first
    };
    unclash::unclash(routes, &mut hops, &mut first);
    let mut rings = vec![first];
    let mut best = (load_of(net, &hops, 1), 1usize);
    while rings.len() < max {
        let weights = weights(net, &hops);
        let start = rings.len() % n;
        let mut ring = if n < 3 {
            rings[0].clone()
        } else if rings.len() % 2 == 1 {
            // The ring before, backwards: on links that are alike both ways it loads the
            // other direction of every link the ring before loaded, which any search of the
            // weights would also seek; taking it outright keeps a torus's channels in
            // edge-disjoint pairs.
            let mut back = rings[rings.len() - 1].clone();
            back.reverse();
            let mut trial = hops.clone();
            add(&mut trial, routes, &back);
            let other = cheapest_ring(routes, &weights, start as u32);
            let mut trial2 = hops.clone();
            add(&mut trial2, routes, &other);
            if load_of(net, &trial2, rings.len() + 1) < load_of(net, &trial, rings.len() + 1) {
                other
            } else {
                back
            }
        } else {
            cheapest_ring(routes, &weights, start as u32)
        };
        let before = load_of(net, &hops, 1);
        unclash::unclash(routes, &mut hops, &mut ring);
        rings.push(ring);
        if repair && load_of(net, &hops, 1) > before {
            let (kept_rings, kept_hops) = (rings.clone(), hops.clone());
            for k in 0..rings.len() - 1 {
                sub(&mut hops, routes, &rings[k]);
                unclash::unclash(routes, &mut hops, &mut rings[k]);
            }
            if load_of(net, &hops, 1) > before {
                (rings, hops) = (kept_rings, kept_hops);
            } else {
                repaired = true;
            }
        }
        let l = load_of(net, &hops, rings.len());
        if l < best.0 || fixed {
            best = (l, rings.len());
        }
    }
    rings.truncate(best.1);
    let laid = Channels {
        rings,
        load: best.0,
    };
    (laid, repaired)
}

/// [`Channels::load`] of `rings` (ring positions to ranks on `hosts`).
pub fn load(net: &Net, hosts: &[NodeId], rings: &[Vec<u32>]) -> BigRational {
    let routes = Routes::direct(net, hosts);
    let mut hops = vec![0u32; net.links.len()];
    for r in rings {
        add(&mut hops, &routes, r);
    }
    load_of(net, &hops, rings.len())
}

fn load_of(net: &Net, hops: &[u32], channels: usize) -> BigRational {
    let worst = hops
        .iter()
        .zip(&net.links)
        .filter(|(h, l)| **h > 0 && !l.bandwidth.is_zero())
        .map(|(h, l)| BigRational::from_integer((*h).into()) / &l.bandwidth)
        .max()
        .unwrap_or_else(BigRational::zero);
    worst / BigRational::from_integer(channels.max(1).into())
}

/// Routes between ranks: on up to [`TABLE_RANKS`] ranks all computed at once into one table
/// (a destination's distances looked up once for every source), else per call.
struct Routes<'a> {
    net: &'a Net,
    hosts: &'a [NodeId],
    /// Every pair's route, up to [`TABLE_RANKS`] ranks.
    table: Option<Arc<Table>>,
}

/// Every pair's route: per pair (destination-major: `b * n + a`), where its links start in
/// `links`.
struct Table {
    start: Vec<u32>,
    links: Vec<LinkId>,
}

/// Ranks up to which every pair's route is kept (1,024 ranks: about 30 MB on a fat tree).
const TABLE_RANKS: usize = 1024;

/// Route tables already made, by ranks and network: a sweep searches rings for several
/// channel counts on one network. Up to 64 MiB of tables are kept (the newest always).
static TABLES: Kept<String, Arc<Table>> = Kept::new(64 << 20);

impl Table {
    fn new(net: &Net, hosts: &[NodeId]) -> Table {
        let n = hosts.len();
        let mut start = Vec::with_capacity(n * n + 1);
        let mut links = Vec::new();
        for &b in hosts {
            net.routes_to(b, hosts, |_, r| {
                start.push(links.len() as u32);
                links.extend_from_slice(r);
            });
        }
        start.push(links.len() as u32);
        Table { start, links }
    }
}

impl<'a> Routes<'a> {
    /// Routes looked up per call, for a few rings' hops.
    fn direct(net: &'a Net, hosts: &'a [NodeId]) -> Routes<'a> {
        Routes {
            net,
            hosts,
            table: None,
        }
    }

    /// Routes from a table up to [`TABLE_RANKS`] ranks (`table`, when given, is the table of
    /// these ranks on this network), else looked up per call.
    fn new(net: &'a Net, hosts: &'a [NodeId], table: Option<Arc<Table>>) -> Routes<'a> {
        let table = (hosts.len() <= TABLE_RANKS)
            .then(|| table.unwrap_or_else(|| Arc::new(Table::new(net, hosts))));
        Routes { net, hosts, table }
    }

    fn with<T>(&self, a: u32, b: u32, f: impl FnOnce(&[LinkId]) -> T) -> T {
        if let Some(t) = &self.table {
            let i = b as usize * self.hosts.len() + a as usize;
            return f(&t.links[t.start[i] as usize..t.start[i + 1] as usize]);
        }
        f(&self
            .net
            .route(self.hosts[a as usize], self.hosts[b as usize]))
    }

    /// Whether ranks `a` and `b` are in different boxes.
    fn crosses(&self, a: u32, b: u32) -> bool {
        self.net
            .crosses(self.hosts[a as usize], self.hosts[b as usize])
    }

    fn cost(&self, w: &[f64], a: u32, b: u32) -> f64 {
        self.with(a, b, |r| r.iter().map(|&l| w[l as usize]).sum())
    }
}

/// Adds one crossing per ring hop's link to `hops`.
fn add(hops: &mut [u32], routes: &Routes, ring: &[u32]) {
    each_link(routes, ring, |l| hops[l as usize] += 1);
}

/// Takes `ring`'s hops off `hops` (what [`add`] put on).
fn sub(hops: &mut [u32], routes: &Routes, ring: &[u32]) {
    each_link(routes, ring, |l| hops[l as usize] -= 1);
}

/// Calls `f` with each link of each of `ring`'s hops, in order.
fn each_link(routes: &Routes, ring: &[u32], mut f: impl FnMut(LinkId)) {
    let n = ring.len();
    for i in 0..n {
        let (a, b) = (ring[i], ring[(i + 1) % n]);
        routes.with(a, b, |r| r.iter().for_each(|&l| f(l)));
    }
}

/// Per link: `(1 + 1023 r^10) / cap`, `r` its load over capacity relative to the most loaded.
fn weights(net: &Net, hops: &[u32]) -> Vec<f64> {
    let util: Vec<f64> = hops
        .iter()
        .zip(&net.links)
        .map(|(&h, l)| if l.bw > 0.0 { f64::from(h) / l.bw } else { 0.0 })
        .collect();
    let top = util.iter().copied().fold(0.0f64, f64::max);
    util.iter()
        .zip(&net.links)
        .map(|(&u, l)| {
            let r = if top > 0.0 { u / top } else { 0.0 };
            let r2 = r * r;
            let r8 = r2 * r2 * r2 * r2;
            let cap = if l.bw > 0.0 { l.bw } else { 1.0 };
            (1.0 + 1023.0 * r8 * r2) / cap
        })
        .collect()
}

/// Ranks up to which every rank is tried as a channel's first (the cheapest tour is kept),
/// and up to which tours are improved by local search (each pass prices N^2 moves).
const ALL_STARTS: usize = 64;
const LOCAL_RANKS: usize = 256;
const PASSES: usize = 16;

/// A cheap ring under `w`: nearest neighbour from `start` (from every rank on small networks),
/// then local search; the cheapest tour, rotated to begin at `start`.
fn cheapest_ring(routes: &Routes, w: &[f64], start: u32) -> Vec<u32> {
    let n = routes.hosts.len();
    let cost = Costs::new(routes, w);
    let starts: Vec<u32> = if n <= ALL_STARTS {
        (0..n as u32).map(|i| (start + i) % n as u32).collect()
    } else {
        vec![start]
    };
    let mut best: Option<(f64, Vec<u32>)> = None;
    for s in starts {
        let mut tour = nearest_neighbour(routes, &cost, w, s);
        if let Some(c) = &cost {
            improve(c, &mut tour);
        }
        let total = tour_cost(routes, &cost, w, &tour);
        if best.as_ref().is_none_or(|b| total < b.0) {
            best = Some((total, tour));
        }
    }
    let mut tour = best.map(|b| b.1).unwrap_or_default();
    if let Some(i) = tour.iter().position(|&r| r == start) {
        tour.rotate_left(i);
    }
    tour
}

/// Hop costs between every pair of ranks, on networks small enough for local search.
struct Costs(Vec<Vec<f64>>);

impl Costs {
    fn new(routes: &Routes, w: &[f64]) -> Option<Costs> {
        let n = routes.hosts.len();
        if !(4..=LOCAL_RANKS).contains(&n) {
            return None;
        }
        let mut m = vec![vec![0.0f64; n]; n];
        for (a, row) in m.iter_mut().enumerate() {
            for (b, c) in row.iter_mut().enumerate() {
                if a != b {
                    *c = routes.cost(w, a as u32, b as u32);
                }
            }
        }
        Some(Costs(m))
    }

    fn c(&self, a: u32, b: u32) -> f64 {
        self.0[a as usize][b as usize]
    }
}

fn hop(routes: &Routes, cost: &Option<Costs>, w: &[f64], a: u32, b: u32) -> f64 {
    match cost {
        Some(c) => c.c(a, b),
        None => routes.cost(w, a, b),
    }
}

fn tour_cost(routes: &Routes, cost: &Option<Costs>, w: &[f64], tour: &[u32]) -> f64 {
    let n = tour.len();
    (0..n)
        .map(|i| hop(routes, cost, w, tour[i], tour[(i + 1) % n]))
        .sum()
}

fn nearest_neighbour(routes: &Routes, cost: &Option<Costs>, w: &[f64], start: u32) -> Vec<u32> {
    let n = routes.hosts.len() as u32;
    let mut left: Vec<u32> = (0..n).filter(|&r| r != start).collect();
    let mut tour = vec![start];
    let mut at = start;
    while !left.is_empty() {
        let mut pick = 0;
        let mut best = f64::INFINITY;
        for (i, &v) in left.iter().enumerate() {
            let c = hop(routes, cost, w, at, v);
            if c < best {
                best = c;
                pick = i;
            }
        }
        at = left.remove(pick);
        tour.push(at);
    }
    tour
}

/// Whether `new` is cheaper than `old` by more than rounding.
fn gains(new: f64, old: f64) -> bool {
    new < old - 1e-12 * old.abs()
}

/// Local search: 2-opt (reverse a stretch; costs are asymmetric, so the stretch's own hops are
/// re-priced in the other direction) and or-opt (move one rank elsewhere), first improvement,
/// until a pass gains nothing.
fn improve(cost: &Costs, tour: &mut Vec<u32>) {
    let n = tour.len();
    let c = |a: u32, b: u32| cost.c(a, b);
    // fwd[k] / bwd[k]: the hops t0->t1 .. t(k-1)->tk, forward and reversed.
    let prefix = |tour: &[u32], fwd: &mut [f64], bwd: &mut [f64]| {
        for k in 1..n {
            fwd[k] = fwd[k - 1] + c(tour[k - 1], tour[k]);
            bwd[k] = bwd[k - 1] + c(tour[k], tour[k - 1]);
        }
    };
    let mut fwd = vec![0.0f64; n];
    let mut bwd = vec![0.0f64; n];
    prefix(tour, &mut fwd, &mut bwd);
    for _ in 0..PASSES {
        let mut improved = false;
        for i in 0..n - 2 {
            for j in i + 2..n {
                let next = tour[(j + 1) % n];
                if next == tour[i] {
                    continue;
                }
                let old = c(tour[i], tour[i + 1]) + c(tour[j], next) + (fwd[j] - fwd[i + 1]);
                let new = c(tour[i], tour[j]) + c(tour[i + 1], next) + (bwd[j] - bwd[i + 1]);
                if gains(new, old) {
                    tour[i + 1..=j].reverse();
                    prefix(tour, &mut fwd, &mut bwd);
                    improved = true;
                }
            }
        }
        // Or-opt: take the rank at i out and put it between j and j + 1.
        for i in 0..n {
            let (p, x, q) = (tour[(i + n - 1) % n], tour[i], tour[(i + 1) % n]);
            let removed = c(p, x) + c(x, q) - c(p, q);
            let mut pick = None;
            let mut gain = 0.0f64;
            for j in 0..n {
                let (a, b) = (tour[j], tour[(j + 1) % n]);
                if a == x || b == x {
                    continue;
                }
                let added = c(a, x) + c(x, b) - c(a, b);
                if gains(added, removed) && removed - added > gain {
                    gain = removed - added;
                    pick = Some(b);
                }
            }
            if let Some(b) = pick {
                tour.remove(i);
                let at = tour.iter().position(|&r| r == b).unwrap_or(0);
                tour.insert(at, x);
                prefix(tour, &mut fwd, &mut bwd);
                improved = true;
            }
        }
        if !improved {
            break;
        }
    }
}

#[cfg(test)]
mod tests;
