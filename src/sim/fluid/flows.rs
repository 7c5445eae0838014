//! The flows in the network during a flow-level run ([`super::engine`]) and their rates.
//!
//! Max-min fair rates decompose over the connected components of the graph whose edges are
//! "flow f crosses link l": a flow's rate depends only on the flows it shares a link with,
//! and theirs, and so on. So when flows start or end, only the components of the links they
//! touched are filled again (by a [`crate::net::Filler`] kept from fill to fill, on those
//! flows alone, in start order, which gives the very rates a fill over every flow gives them),
//! and only the flows there are brought up to date. Each flow keeps the bytes it had left at
//! its last update and its rate since.
//!
//! **Finishing times.** Each flow has one live entry in a min-heap of packed integers (a
//! time's [`Total::key`], the flow's start order, its slot), at a time never later than the
//! flow's finishing time:
//!
//! - when a fill speeds a flow up, it gets a new entry at its earlier time (the old one is
//!   dead from then on);
//! - when a fill slows it down (a flow starting beside it), it keeps its entry, now early,
//!   instead of pushing one more;
//! - an early entry that reaches the top is moved to its flow's time, in place.
//!
//! So the top, once it is live and on time, is the flow that finishes first (every other
//! entry, and every other flow's time, is at or after it), and flows leave in the order of
//! (finishing time, start order), as with one entry per rate change. Dead entries (an
//! earlier entry of a flow that sped up, or of a flow that ended, whose slot may hold
//! another flow now) are skipped at the top and dropped all at once when they outnumber the
//! live ones four to one.
//!
//! On a network where most flows share no link with the flows that change (the rings of
//! separate boxes, channels on separate rails), a start or an end costs the size of its own
//! component instead of every flow in flight. Each touched component is filled on its own: a
//! fat tree's ring step, whose 1,024 flows (one per host, sharing no link) end and start at
//! one instant, is 1,024 components of one flow, each rated without a fill
//! ([`Filler`]'s one-flow way), where one fill over all of them sorted and queued every link.
//! The rates are the same bits either way: a fill does a link's arithmetic only with the
//! flows of its component, in start order, and takes its component's links in the same order
//! whether other components' links come between them or not.

use crate::net::{Filler, LinkId, Total};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A send in flight: whose op it is, where it goes, on which route and since when.
#[derive(Clone, Copy)]
pub(super) struct Sent {
    pub rank: u32,
    /// The op, by its place in the engine's layout ([`super::layout`]).
    pub op: u32,
    pub to: u32,
    /// The route's index (into the engine's route table).
    pub route: usize,
    /// When the send started.
    pub start: f64,
}

/// One flow: a send in flight and its progress.
struct Flow {
    sent: Sent,
    /// Bytes left at `since`, and the rate since then.
    left: f64,
    since: f64,
    rate: f64,
    /// When it finishes at `rate`.
    end: f64,
    /// The time key of its live heap entry ([`Total::key`]; `u64::MAX` before it has one):
    /// never later than `end`'s (see the module doc).
    key: u64,
    /// Start order: ties and fills go by it. A run starts fewer flows than it has ops, whose
    /// indices are `u32`.
    order: u32,
    rated: bool,
    alive: bool,
    mark: u32,
}

/// The flows in flight, per-link lists of them, and their finishing times.
pub(super) struct Flows {
    slab: Vec<Flow>,
    free: Vec<u32>,
    on_link: Vec<Vec<u32>>,
    link_mark: Vec<u32>,
    stamp: u32,
    touched: Vec<LinkId>,
    /// The links left to visit in a component search (scratch).
    stack: Vec<LinkId>,
    /// Finishing times: [`entry`]s.
    heap: BinaryHeap<Reverse<u128>>,
    next_order: u32,
    live: usize,
    filler: Filler,
    /// Scratch space kept from one refill, or one end, to the next.
    members: Vec<u64>,
    ended: Vec<u64>,
}

/// A route's links as the fill sees them: each with its share of the flow.
pub(super) trait Paths {
    fn links(&self, route: usize) -> &[(LinkId, f64)];
    fn plain(&self, route: usize) -> &[LinkId];
    fn spray(&self) -> bool;
}

impl Flows {
    pub fn new(links: usize) -> Flows {
        Flows {
            slab: Vec::new(),
            free: Vec::new(),
            on_link: vec![Vec::new(); links],
            link_mark: vec![0; links],
            stamp: 0,
            touched: Vec::new(),
            stack: Vec::new(),
            heap: BinaryHeap::new(),
            next_order: 0,
            live: 0,
            filler: Filler::default(),
            members: Vec::new(),
            ended: Vec::new(),
        }
    }

    /// Starts `sent` (at `sent.start`), `bytes` over its route's `links`.
    pub fn add(&mut self, sent: Sent, bytes: f64, links: &[(LinkId, f64)]) {
        let now = sent.start;
        let flow = Flow {
            sent,
            left: bytes,
            since: now,
            rate: 0.0,
            end: f64::INFINITY,
            key: u64::MAX,
            order: self.next_order,
            rated: false,
            alive: true,
            mark: 0,
        };
        self.next_order = self.next_order.wrapping_add(1);
        let id = match self.free.pop() {
            Some(id) => {
                self.slab[id as usize] = flow;
                id
            }
            None => {
                self.slab.push(flow);
                (self.slab.len() - 1) as u32
            }
        };
        for &(l, _) in links {
            self.on_link[l as usize].push(id);
            self.touched.push(l);
        }
        self.live += 1;
    }

    /// Fills the components of the links touched since the last call again, at `now`, each
    /// on its own (see the module doc).
    pub fn refill(&mut self, now: f64, caps: &[f64], paths: &impl Paths) {
        if self.touched.is_empty() {
            return;
        }
        self.stamp = self.stamp.wrapping_add(1).max(1);
        let touched = std::mem::take(&mut self.touched);
        let mut stack = std::mem::take(&mut self.stack);
        for &l in &touched {
            if self.link_mark[l as usize] == self.stamp {
                continue;
            }
            if self.on_link[l as usize].is_empty() {
                // No flow left on it (the flows that ended there): nothing to fill.
                self.link_mark[l as usize] = self.stamp;
                continue;
            }
            stack.push(l);
            self.component(now, caps, paths, &mut stack);
        }
        self.touched = touched;
        self.touched.clear();
        self.stack = stack;
        // Entries made stale by later rate changes wait in the heap until they reach its top;
        // when they outnumber the live ones, drop them all at once (the live entries' order
        // is total, so the pops that follow are the same).
        if self.heap.len() > 4 * self.live + 1024 {
            let slab = &self.slab;
            self.heap.retain(|&Reverse(e)| live(slab, e).is_some());
        }
    }

    /// Fills the component of the link on `stack` (every flow reachable from it through
    /// shared links) and brings its flows' rates up to date.
    fn component(&mut self, now: f64, caps: &[f64], paths: &impl Paths, stack: &mut Vec<LinkId>) {
        let stamp = self.stamp;
        // Members as (start order, slot) packed in one integer: sorted, they are in start
        // order without a look into the slab per comparison.
        let mut members: Vec<u64> = std::mem::take(&mut self.members);
        members.clear();
        while let Some(l) = stack.pop() {
            if self.link_mark[l as usize] == stamp {
                continue;
            }
            self.link_mark[l as usize] = stamp;
            for &f in &self.on_link[l as usize] {
                let flow = &mut self.slab[f as usize];
                if flow.mark == stamp {
                    continue;
                }
                flow.mark = stamp;
                members.push(in_order(flow.order, f));
                for &(m, _) in paths.links(flow.sent.route) {
                    if self.link_mark[m as usize] != stamp {
                        stack.push(m);
                    }
                }
            }
        }
        if members.is_empty() {
            self.members = members;
            return;
        }
        members.sort_unstable();
        let slab = &self.slab;
        let route = |i: usize| slab[members[i] as u32 as usize].sent.route;
        let rates = if paths.spray() {
            self.filler.fill(caps, members.len(), |i| {
                paths.links(route(i)).iter().copied()
            })
        } else {
            self.filler.fill(caps, members.len(), |i| {
                paths.plain(route(i)).iter().map(|&l| (l, 1.0))
            })
        };
        for (&m, &r) in members.iter().zip(rates) {
            let f = m as u32;
            let flow = &mut self.slab[f as usize];
            if flow.rate == r && flow.rated {
                continue;
            }
            flow.rated = true;
            flow.left -= flow.rate * (now - flow.since);
            flow.since = now;
            flow.rate = r;
            flow.end = now + flow.left / r;
            // A flow that slowed down keeps its earlier entry (see the module doc).
            let key = Total(flow.end).key();
            if key < flow.key {
                flow.key = key;
                self.heap.push(Reverse(entry(key, flow.order, f)));
            }
        }
        self.members = members;
    }

    /// When the next flow finishes (infinity when none is in flight).
    pub fn next_end(&mut self) -> f64 {
        self.exact_top().map_or(f64::INFINITY, |f| self.slab[f].end)
    }

    /// The flow of the heap's top entry once that entry is live and holds its flow's own
    /// finishing time: dead entries on the way are dropped, and a live entry earlier than
    /// its flow's time (the flow slowed down since) is put back at that time.
    fn exact_top(&mut self) -> Option<usize> {
        while let Some(&Reverse(e)) = self.heap.peek() {
            let Some(f) = live(&self.slab, e) else {
                self.heap.pop();
                continue;
            };
            let flow = &mut self.slab[f];
            let key = Total(flow.end).key();
            if key == flow.key {
                return Some(f);
            }
            flow.key = key;
            let again = entry(key, flow.order, f as u32);
            if let Some(mut top) = self.heap.peek_mut() {
                *top = Reverse(again);
            }
        }
        None
    }

    /// Removes every flow that has finished by `now` (its bytes left within rounding of zero)
    /// and puts them in `out`, in start order.
    pub fn end_at(&mut self, now: f64, paths: &impl Paths, out: &mut Vec<Sent>) {
        out.clear();
        let mut ended = std::mem::take(&mut self.ended);
        ended.clear();
        while let Some(f) = self.exact_top() {
            let flow = &mut self.slab[f];
            let left = flow.left - flow.rate * (now - flow.since);
            if left > flow.rate * now * 1e-12 + 1e-9 {
                break;
            }
            self.heap.pop();
            // Ended: its entries left in the heap are dead.
            flow.alive = false;
            ended.push(in_order(flow.order, f as u32));
        }
        ended.sort_unstable();
        for &x in &ended {
            let f = x as u32;
            let flow = &self.slab[f as usize];
            out.push(flow.sent);
            for &(l, _) in paths.links(flow.sent.route) {
                let list = &mut self.on_link[l as usize];
                if let Some(i) = list.iter().position(|&x| x == f) {
                    list.swap_remove(i);
                }
                self.touched.push(l);
            }
            self.free.push(f);
            self.live -= 1;
        }
        self.ended = ended;
    }

    /// Flows in flight.
    pub fn len(&self) -> usize {
        self.live
    }
}

/// A heap entry: flow `f` (its slot), started `order`-th, at the time whose [`Total::key`] is
/// `key`. Ordered by time, then start order.
fn entry(key: u64, order: u32, f: u32) -> u128 {
    (u128::from(key) << 64) | u128::from(in_order(order, f))
}

/// Flow slot `f` with its start order `order` in one integer that sorts by start order; its
/// low 32 bits are the slot.
fn in_order(order: u32, f: u32) -> u64 {
    (u64::from(order) << 32) | u64::from(f)
}

/// The slot of the flow entry `e` names, if that flow is still in flight, the entry is its
/// live one (the time its `key` holds) and it is the flow that was in the slot then (the
/// start order tells).
fn live(slab: &[Flow], e: u128) -> Option<usize> {
    let f = e as u32 as usize;
    let flow = &slab[f];
    let matches = flow.alive && flow.order == (e >> 32) as u32 && flow.key == (e >> 64) as u64;
    matches.then_some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Routes for the test: each a list of (link, share).
    struct Table {
        routes: Vec<Vec<(LinkId, f64)>>,
        plain: Vec<Vec<LinkId>>,
        spray: bool,
    }

    impl Paths for Table {
        fn links(&self, route: usize) -> &[(LinkId, f64)] {
            &self.routes[route]
        }
        fn plain(&self, route: usize) -> &[LinkId] {
            &self.plain[route]
        }
        fn spray(&self) -> bool {
            self.spray
        }
    }

    /// A fixed pseudo-random sequence (64-bit LCG), so the test is the same every run.
    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    /// Flows starting and ending at random on random routes over 16 links: after every
    /// refill, each flow in flight has the very bits one fill over every flow in flight, in
    /// start order, gives it (the components filled one by one, many of one flow, many
    /// touched at once).
    #[test]
    fn components_filled_apart_give_the_rates_of_one_fill_over_all() {
        for spray in [false, true] {
            let mut rng = Lcg(if spray { 7 } else { 3 });
            let links = 16u32;
            let caps: Vec<f64> = (0..links).map(|l| 1e9 * f64::from(1 + l % 5)).collect();
            let mut table = Table {
                routes: Vec::new(),
                plain: Vec::new(),
                spray,
            };
            for _ in 0..40 {
                let hops = 1 + rng.below(3) as usize;
                let plain: Vec<LinkId> = (0..hops).map(|_| rng.below(16) as LinkId).collect();
                let routes = plain
                    .iter()
                    .map(|&l| {
                        (
                            l,
                            if spray {
                                0.25 * (1 + rng.below(4)) as f64
                            } else {
                                1.0
                            },
                        )
                    })
                    .collect();
                table.plain.push(plain);
                table.routes.push(routes);
            }
            let mut flows = Flows::new(links as usize);
            let mut ended = Vec::new();
            let (mut now, mut op) = (0.0, 0u32);
            for step in 0..400 {
                if step % 3 != 2 || flows.len() == 0 {
                    // One to five flows start at once (several components touched together).
                    for _ in 0..1 + rng.below(5) {
                        let route = rng.below(40) as usize;
                        let sent = Sent {
                            rank: 0,
                            op,
                            to: 1,
                            route,
                            start: now,
                        };
                        op += 1;
                        let bytes = 1e3 * (1 + rng.below(1000)) as f64;
                        flows.add(sent, bytes, &table.routes[route]);
                    }
                } else {
                    now = flows.next_end();
                    flows.end_at(now, &table, &mut ended);
                    assert!(!ended.is_empty());
                }
                flows.refill(now, &caps, &table);
                let mut live: Vec<&Flow> = flows.slab.iter().filter(|f| f.alive).collect();
                live.sort_by_key(|f| f.order);
                let routes: Vec<&[(LinkId, f64)]> = live
                    .iter()
                    .map(|f| &table.routes[f.sent.route][..])
                    .collect();
                let want = crate::net::fair_rates_spread(&caps, &routes);
                for (f, w) in live.iter().zip(want) {
                    assert_eq!(f.rate.to_bits(), w.to_bits(), "step {step}, spray {spray}");
                }
            }
        }
    }
}
