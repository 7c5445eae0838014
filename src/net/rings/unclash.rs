//! Rings rid of their own collisions: a repair pass after a channel's ring is searched.
//!
//! The ring search ([`super::cheapest_ring`]) prices each hop on its own, under weights from
//! the channels laid before it, so it cannot see two hops of the same ring whose routes meet on
//! one link. On a switched network with hash-based ECMP they do: on a two-level fat tree a
//! ring crosses from leaf to leaf many times, every crossing hashes onto one of the spines, and
//! with a few dozen crossings two of them nearly always share an uplink. A ring goes as fast
//! as its slowest hop, so one shared uplink halves the whole channel (256 DGX A100 GPUs on the
//! 1,024-GPU example's fat tree, four channels: 30 GB/s where the rails allow 100).
//!
//! The repair lowers the rings' own bound, `max over links (hops on the link / capacity)`
//! (what [`super::Channels::load`] divides by the channel count), counting the channels before
//! this one and this ring together. While a link at that maximum carries one of this ring's
//! hops, it tries, in a fixed order, for that hop:
//! - exchanging either end of it with every other rank of the ring (four hops re-routed) and
//!   moving either end between every other pair of neighbours (three);
//! - moving a stretch of up to 64 positions that ends at the hop or begins after it, in its
//!   order, to elsewhere in the ring (or-opt of a stretch, three hops), where both the
//!   stretch's ends and where it goes are hops between boxes: a box's GPUs move together and
//!   the ring crosses between other boxes, which a single exchange cannot change once the free
//!   NICs fix which GPUs may cross;
//! - reversing a stretch of up to 64 positions that begins or ends at the hop (2-opt; every
//!   hop inside it re-routed, since routes need not be alike both ways);
//!
//! and makes the first move that lowers the pair (maximum, links at the maximum),
//! lexicographically; it stops when no move lowers it, after a bounded number of moves, or
//! when the maximum is at its floor: a rank alone on a node with a single link out (or in)
//! puts a hop of every ring on that link, so no ring goes below the most loaded such link
//! (the Canary paper's fat tree: every host link, one hop each; fewer links at the maximum
//! would not lower the bound). Only strict improvements are made, so a ring without
//! collisions is left as it is.
//!
//! Pricing a move is the cost (thousands per hot hop on 1,024 ranks, each reading the routes of
//! its new hops from a table of tens of MB): its changes per link go into an array kept from
//! move to move, removals first, so a link that the additions bring to the maximum stays
//! there, and a move is dropped as soon as it takes a link above the maximum or brings as
//! many links to it as it takes from it.
//!
//! Moves rather than NCCL's own remedy (NCCL does not see inside the fabric; operators give
//! InfiniBand fat trees routes that spread a shift permutation, and RoCE fabrics several queue
//! pairs per connection): collc's routes are the file's minimal-hop ECMP, and which pair of
//! GPUs crosses between two boxes decides the hash.
//! The arithmetic is on `f64` quotients of integers and capacities, compared exactly, so the
//! same rings come out on every machine.

use super::Routes;
use crate::net::{LinkId, NetLink};
use smallvec::SmallVec;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// Moves made at most per ring, as a multiple of its ranks.
const MOVES_PER_RANK: usize = 4;

/// Longest stretch a move shifts or reverses (positions): a few boxes of GPUs.
const STRETCH: usize = 64;

/// Repairs `ring` against `hops` (what the channels before it put on each link) and adds the
/// repaired ring's hops to them.
pub(super) fn unclash(routes: &Routes, hops: &mut [u32], ring: &mut Vec<u32>) {
    let n = ring.len();
    if n < 4 {
        super::add(hops, routes, ring);
        return;
    }
    let first = ring[0];
    let least = floor(routes, hops);
    let mut s = State::new(routes, hops, ring);
    for _ in 0..MOVES_PER_RANK * n {
        if s.top().0 <= least {
            break;
        }
        let Some(m) = s.first_gain(ring) else {
            break;
        };
        s.apply(ring, m);
    }
    hops.copy_from_slice(&s.hops);
    // The ring still begins where the search began it.
    if let Some(p) = ring.iter().position(|&r| r == first) {
        ring.rotate_left(p);
    }
}

/// The least maximum any ring can reach on top of `base` (the channels before): a rank alone
/// on a node with one link out (in) puts a hop of every ring on that link. A ring at it has no
/// collision left to repair, and fewer links at it would not lower the bound.
pub(super) fn floor(routes: &Routes, base: &[u32]) -> u64 {
    let net = routes.net;
    let mut ranks = vec![0u32; net.out.len()];
    for &x in routes.hosts {
        ranks[x] += 1;
    }
    let mut least = 0;
    for &x in routes.hosts.iter().filter(|&&x| ranks[x] == 1) {
        for list in [&net.out[x], &net.into[x]] {
            if let [l] = list.as_slice() {
                let link = &net.links[*l as usize];
                if link.bw > 0.0 {
                    least = least.max(key(base[*l as usize] + 1, link));
                }
            }
        }
    }
    least
}

/// A utilisation as an ordered key (non-negative `f64`s order as their bits).
fn key(hops: u32, l: &NetLink) -> u64 {
    (f64::from(hops) / l.bw).to_bits()
}

/// A change of the ring: the hops (by position) it removes, the hops (rank pairs) it adds,
/// and how to make it.
struct Move {
    removed: SmallVec<[usize; 4]>,
    added: SmallVec<[(u32, u32); 4]>,
    kind: Kind,
}

enum Kind {
    /// Exchanging the ranks at two positions.
    Exchange(usize, usize),
    /// Moving the rank at a position to after another rank.
    Relocate(usize, u32),
    /// Reversing the stretch of positions `i + 1 ..= j`.
    Reverse(usize, usize),
    /// Moving the stretch of positions `s ..= e`, in its order, to after a rank.
    Shift(usize, usize, u32),
}

/// Moving the stretch `s ..= e` (`s <= e`, shorter than the ring less one), in its order, to
/// between the ranks at `j` and `j + 1` (`j` neither in it nor just before it): or-opt of a
/// stretch, which changes the ranks either side of it (a box's GPUs moved together change the
/// boxes the ring crosses between) without re-routing its own hops.
fn shift(ring: &[u32], s: usize, e: usize, j: usize) -> Move {
    let n = ring.len();
    let before = (s + n - 1) % n;
    Move {
        removed: SmallVec::from_slice(&[before, e, j]),
        added: SmallVec::from_slice(&[
            (ring[before], ring[(e + 1) % n]),
            (ring[j], ring[s]),
            (ring[e], ring[(j + 1) % n]),
        ]),
        kind: Kind::Shift(s, e, ring[j]),
    }
}

/// Exchanging the ranks at positions `i` and `j`.
fn exchange(ring: &[u32], i: usize, j: usize) -> Move {
    let n = ring.len();
    let mut removed: SmallVec<[usize; 4]> =
        SmallVec::from_slice(&[(i + n - 1) % n, i, (j + n - 1) % n, j]);
    removed.sort_unstable();
    removed.dedup();
    let at = |p: usize| {
        ring[if p == i {
            j
        } else if p == j {
            i
        } else {
            p
        }]
    };
    let added = removed.iter().map(|&h| (at(h), at((h + 1) % n))).collect();
    Move {
        removed,
        added,
        kind: Kind::Exchange(i, j),
    }
}

/// Moving the rank at position `i` to between the ranks at `j` and `j + 1` (neither `i` nor
/// its predecessor).
fn relocate(ring: &[u32], i: usize, j: usize) -> Move {
    let n = ring.len();
    let (p, x, q) = (ring[(i + n - 1) % n], ring[i], ring[(i + 1) % n]);
    let (a, b) = (ring[j], ring[(j + 1) % n]);
    Move {
        removed: SmallVec::from_slice(&[(i + n - 1) % n, i, j]),
        added: SmallVec::from_slice(&[(p, q), (a, x), (x, b)]),
        kind: Kind::Relocate(i, a),
    }
}

/// Reversing the stretch `i + 1 ..= j` (`i + 2 <= j < n`): 2-opt, which sends the ring from
/// `ring[i]` to `ring[j]` and from `ring[i + 1]` to `ring[j + 1]`, and every hop between them the
/// other way round (each re-routed: routes need not be alike both ways).
fn reverse(ring: &[u32], i: usize, j: usize) -> Move {
    let n = ring.len();
    let mut added: SmallVec<[(u32, u32); 4]> = SmallVec::new();
    added.push((ring[i], ring[j]));
    added.extend((i + 1..j).map(|k| (ring[k + 1], ring[k])));
    added.push((ring[i + 1], ring[(j + 1) % n]));
    Move {
        removed: (i..=j).collect(),
        added,
        kind: Kind::Reverse(i, j),
    }
}

impl Move {
    fn make(&self, ring: &mut Vec<u32>) {
        match self.kind {
            Kind::Reverse(i, j) => ring[i + 1..=j].reverse(),
            Kind::Shift(s, e, a) => {
                let stretch: Vec<u32> = ring.drain(s..=e).collect();
                let at = ring.iter().position(|&r| r == a).map_or(0, |k| k + 1);
                ring.splice(at..at, stretch);
            }
            Kind::Exchange(i, j) => ring.swap(i, j),
            Kind::Relocate(i, a) => {
                let x = ring.remove(i);
                let at = ring.iter().position(|&r| r == a).map_or(0, |k| k + 1);
                ring.insert(at, x);
            }
        }
    }
}

struct State<'a> {
    routes: &'a Routes<'a>,
    /// Hops per link: the channels before and this ring.
    hops: Vec<u32>,
    /// Utilisation keys of links with hops, and how many links have each.
    levels: BTreeMap<u64, u32>,
    /// The route of each of this ring's hops (position i: ring[i] -> ring[i + 1]).
    hop_routes: Vec<Vec<LinkId>>,
    /// [`State::score`]'s working space, kept from move to move (it prices thousands).
    scratch: RefCell<Scratch>,
}

/// A move's change of hops per link (zero outside a scoring), the links it touched (a link
/// may be listed twice) and the old utilisation keys of the links it changes.
struct Scratch {
    delta: Vec<i32>,
    touched: Vec<LinkId>,
    gone: Vec<u64>,
}

impl<'a> State<'a> {
    fn new(routes: &'a Routes<'a>, base: &[u32], ring: &[u32]) -> State<'a> {
        let mut s = State {
            routes,
            hops: base.to_vec(),
            levels: BTreeMap::new(),
            hop_routes: hop_routes(routes, ring),
            scratch: RefCell::new(Scratch {
                delta: vec![0; base.len()],
                touched: Vec::new(),
                gone: Vec::new(),
            }),
        };
        for r in &s.hop_routes {
            for &l in r {
                s.hops[l as usize] += 1;
            }
        }
        for (l, &h) in routes.net.links.iter().zip(&s.hops) {
            if h > 0 && l.bw > 0.0 {
                *s.levels.entry(key(h, l)).or_insert(0) += 1;
            }
        }
        s
    }

    fn top(&self) -> (u64, u32) {
        self.levels
            .last_key_value()
            .map_or((0, 0), |(&k, &c)| (k, c))
    }

    /// Positions whose hop crosses a link at the maximum.
    fn hot_hops(&self) -> Vec<usize> {
        let (max, _) = self.top();
        let hot = |l: LinkId| {
            let link = &self.routes.net.links[l as usize];
            link.bw > 0.0 && key(self.hops[l as usize], link) == max
        };
        (0..self.hop_routes.len())
            .filter(|&i| self.hop_routes[i].iter().any(|&l| hot(l)))
            .collect()
    }

    /// (maximum, links at it) after `m`, against `now` (the ring's before it): a move that
    /// cannot lower it is cut short as `(u64::MAX, 0)`. Removals come first, so a link that
    /// additions bring to the maximum ends there or above; the links at the maximum must lose
    /// more than the additions bring to it, and a link above it loses the move outright.
    fn score(&self, m: &Move, now: (u64, u32)) -> (u64, u32) {
        let max = now.0;
        let mut guard = self.scratch.borrow_mut();
        let Scratch {
            delta,
            touched,
            gone,
        } = &mut *guard;
        for &h in &m.removed {
            for &l in &self.hop_routes[h] {
                if delta[l as usize] == 0 {
                    touched.push(l);
                }
                delta[l as usize] -= 1;
            }
        }
        let links = &self.routes.net.links;
        let at_max = |l: LinkId, h: u32| {
            let link = &links[l as usize];
            link.bw > 0.0 && h > 0 && key(h, link) == max
        };
        let lowered = touched
            .iter()
            .filter(|&&l| delta[l as usize] < 0 && at_max(l, self.hops[l as usize]))
            .count();
        let mut reached = 0usize;
        let mut lost = lowered == 0;
        for &(a, b) in &m.added {
            if lost {
                break;
            }
            self.routes.with(a, b, |r| {
                for &l in r {
                    let d = &mut delta[l as usize];
                    if *d == 0 {
                        touched.push(l);
                    }
                    let before = (i64::from(self.hops[l as usize]) + i64::from(*d)) as u32;
                    *d += 1;
                    let link = &links[l as usize];
                    if link.bw > 0.0 {
                        let k = key(before + 1, link);
                        if k > max {
                            lost = true;
                        } else if k == max && (before == 0 || key(before, link) < max) {
                            reached += 1;
                            lost |= reached >= lowered;
                        }
                    }
                }
            });
        }
        if lost {
            for &l in touched.iter() {
                delta[l as usize] = 0;
            }
            touched.clear();
            return (u64::MAX, 0);
        }
        // Old levels of the changed links, which the unchanged links' top must not count,
        // and the highest of their new ones with how many links reach it.
        let (mut top, mut at_top) = (0u64, 0u32);
        for &l in touched.iter() {
            let d = std::mem::take(&mut delta[l as usize]);
            let link = &self.routes.net.links[l as usize];
            if d == 0 || link.bw <= 0.0 {
                continue;
            }
            let h = self.hops[l as usize];
            if h > 0 {
                gone.push(key(h, link));
            }
            let nh = (i64::from(h) + i64::from(d)) as u32;
            if nh > 0 {
                let k = key(nh, link);
                if k > top {
                    (top, at_top) = (k, 1);
                } else if k == top {
                    at_top += 1;
                }
            }
        }
        let kept = self.levels.iter().rev().find_map(|(&k, &c)| {
            let left = c - gone.iter().filter(|&&g| g == k).count() as u32;
            (left > 0).then_some((k, left))
        });
        touched.clear();
        gone.clear();
        let max = kept.map_or(0, |k| k.0).max(top);
        let count = kept.filter(|k| k.0 == max).map_or(0, |k| k.1)
            + if top == max && top > 0 { at_top } else { 0 };
        (max, count)
    }

    /// The first move, in a fixed order, that lowers (maximum, links at it): for each end of
    /// each hot hop, exchanges with every other position, then moves between every other
    /// pair of neighbours.
    fn first_gain(&self, ring: &[u32]) -> Option<Move> {
        let n = ring.len();
        let now = self.top();
        let cross: Vec<bool> = (0..n)
            .map(|k| self.routes.crosses(ring[k], ring[(k + 1) % n]))
            .collect();
        for h in self.hot_hops() {
            for i in [h, (h + 1) % n] {
                let swaps = (0..n).filter(|&j| j != i).map(|j| exchange(ring, i, j));
                let moves = (0..n)
                    .filter(|&j| j != i && j != (i + n - 1) % n)
                    .map(|j| relocate(ring, i, j));
                for m in swaps.chain(moves) {
                    if self.score(&m, now) < now {
                        return Some(m);
                    }
                }
            }
            // Stretches ending at the hot hop or starting after it, moved anywhere else; both
            // their ends and where they go at hops between boxes (a box's GPUs move together).
            let edge = |k: usize| cross[k % n];
            let ending = (h.saturating_sub(STRETCH - 1)..=h).map(|s| (s, h));
            let starting = (h + 1..n.min(h + 1 + STRETCH)).map(|e| (h + 1, e));
            for (s, e) in ending.chain(starting) {
                if e + 2 >= n + s || !edge(s + n - 1) || !edge(e) {
                    continue;
                }
                let outside = (0..n).filter(|&j| (j + 1 < s || j > e) && edge(j));
                let outside = outside.filter(|&j| !(s == 0 && j == n - 1));
                for j in outside {
                    let m = shift(ring, s, e, j);
                    if self.score(&m, now) < now {
                        return Some(m);
                    }
                }
            }
            // 2-opt with the hot hop at either end of the reversed stretch.
            let after = (h + 2..n.min(h + STRETCH + 1)).map(|j| (h, j));
            let before = (h.saturating_sub(STRETCH)..h.saturating_sub(1)).map(|i| (i, h));
            for (i, j) in after.chain(before) {
                if ring[(j + 1) % n] == ring[i] {
                    continue;
                }
                let m = reverse(ring, i, j);
                if self.score(&m, now) < now {
                    return Some(m);
                }
            }
        }
        None
    }

    fn apply(&mut self, ring: &mut Vec<u32>, m: Move) {
        for &h in &m.removed {
            for l in self.hop_routes[h].clone() {
                self.bump(l, -1);
            }
        }
        for &(a, b) in &m.added {
            for l in self.routes.with(a, b, <[LinkId]>::to_vec) {
                self.bump(l, 1);
            }
        }
        m.make(ring);
        self.hop_routes = hop_routes(self.routes, ring);
    }

    fn bump(&mut self, l: LinkId, d: i32) {
        let link = &self.routes.net.links[l as usize];
        let h = self.hops[l as usize];
        if link.bw > 0.0 && h > 0 {
            let k = key(h, link);
            if let Some(c) = self.levels.get_mut(&k) {
                *c -= 1;
                if *c == 0 {
                    self.levels.remove(&k);
                }
            }
        }
        let nh = (i64::from(h) + i64::from(d)) as u32;
        self.hops[l as usize] = nh;
        if link.bw > 0.0 && nh > 0 {
            *self.levels.entry(key(nh, link)).or_insert(0) += 1;
        }
    }
}

/// The route of each hop of `ring`, by position.
fn hop_routes(routes: &Routes, ring: &[u32]) -> Vec<Vec<LinkId>> {
    let n = ring.len();
    (0..n)
        .map(|i| routes.with(ring[i], ring[(i + 1) % n], <[LinkId]>::to_vec))
        .collect()
}
