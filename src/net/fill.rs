//! Max-min fair rates by progressive filling ([`Filler`]), with the scratch space kept from one
//! fill to the next: the flow engine fills small components millions of times a run, and a
//! fill that allocates a dozen vectors each time spends more on the allocator than on the
//! arithmetic. [`super::fair_rates`] and [`super::fair_rates_spread`] are one-off fills.
//!
//! The arithmetic is done in one fixed order (links by index, flows in the order given), so a
//! fill gives the same bits whether its scratch space is fresh or reused. A fill of one flow
//! takes a short way to the same bits (`Filler::alone`).

use super::{LinkId, Total};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Scratch space for fills; see the module doc.
#[derive(Default)]
pub struct Filler {
    /// The links the flows use, ascending, and each one's place in that list (by link id).
    used: Vec<LinkId>,
    slot_of: Vec<u32>,
    /// Per link: the fill that last listed it in `used`.
    seen: Vec<u32>,
    stamp: u32,
    /// Per used link: capacity left, unfrozen crossings and their summed shares, and where
    /// its crossings start in `through` (CSR).
    left: Vec<f64>,
    count: Vec<u32>,
    weight: Vec<f64>,
    start: Vec<usize>,
    next: Vec<usize>,
    through: Vec<usize>,
    /// Per flow: where its crossings start in `slots`, which hold (used link, share).
    first: Vec<usize>,
    slots: Vec<(usize, f64)>,
    frozen: Vec<bool>,
    /// The links' first shares, sorted, and the shares queued again since (see `fill`).
    sorted: Vec<u128>,
    later: BinaryHeap<Reverse<u128>>,
    rate: Vec<f64>,
}

impl Filler {
    /// Max-min fair rates of `flows` flows, flow i crossing `links(i)` (link, share) pairs, on
    /// links of bandwidth `caps[l]`; see [`super::fair_rates`]. The rates are flow by flow.
    pub fn fill<I>(&mut self, caps: &[f64], flows: usize, links: impl Fn(usize) -> I) -> &[f64]
    where
        I: Iterator<Item = (LinkId, f64)>,
    {
        // The distinct links, each listed once when first seen (a flow crosses a link many
        // times in a forest's tree), then sorted.
        if self.slot_of.len() < caps.len() {
            self.slot_of.resize(caps.len(), 0);
            self.seen.resize(caps.len(), 0);
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.seen.fill(0);
            self.stamp = 1;
        }
        if flows == 1 {
            return self.alone(caps, links(0));
        }
        self.used.clear();
        for f in 0..flows {
            for (l, _) in links(f) {
                let seen = &mut self.seen[l as usize];
                if *seen != self.stamp {
                    *seen = self.stamp;
                    self.used.push(l);
                }
            }
        }
        self.used.sort_unstable();
        for (k, &l) in self.used.iter().enumerate() {
            self.slot_of[l as usize] = k as u32;
        }
        let n = self.used.len();
        self.left.clear();
        self.left
            .extend(self.used.iter().map(|&l| caps[l as usize]));
        reset(&mut self.count, n, 0);
        reset(&mut self.weight, n, 0.0);
        reset(&mut self.start, n + 1, 0);
        self.first.clear();
        self.slots.clear();
        for f in 0..flows {
            self.first.push(self.slots.len());
            for (l, w) in links(f) {
                let k = self.slot_of[l as usize] as usize;
                self.slots.push((k, w));
                self.count[k] += 1;
                self.weight[k] += w;
                self.start[k + 1] += 1;
            }
        }
        self.first.push(self.slots.len());
        for k in 0..n {
            self.start[k + 1] += self.start[k];
        }
        self.next.clear();
        self.next.extend_from_slice(&self.start);
        reset(&mut self.through, self.start[n], 0);
        for f in 0..flows {
            for &(k, _) in &self.slots[self.first[f]..self.first[f + 1]] {
                self.through[self.next[k]] = f;
                self.next[k] += 1;
            }
        }
        // Progressive filling over link shares in increasing order: freezing flows at the
        // smallest share only raises the other links' shares, so an entry whose share is out
        // of date is queued again with its current value. The first shares are sorted once
        // (`sorted`, read from `cursor`); the shares queued again go to a heap (`later`); the
        // next entry is the lesser of the two heads, which is the order one heap of both
        // would pop. Entries pack a share's [`Total::key`] above its link's slot. Once every
        // flow is frozen, every entry left would be skipped: it stops.
        let share = |k: usize, left: &[f64], weight: &[f64]| left[k].max(0.0) / weight[k];
        let entry = |s: f64, k: usize| (u128::from(Total(s).key()) << 64) | k as u128;
        self.sorted.clear();
        self.sorted.extend(
            (0..n)
                .filter(|&k| self.count[k] > 0)
                .map(|k| entry(share(k, &self.left, &self.weight), k)),
        );
        self.sorted.sort_unstable();
        self.later.clear();
        let mut cursor = 0;
        reset(&mut self.frozen, flows, false);
        reset(&mut self.rate, flows, f64::INFINITY);
        let mut left_unfrozen = flows;
        while left_unfrozen > 0 {
            let first = self.sorted.get(cursor).copied();
            let e = match (first, self.later.peek()) {
                (Some(a), Some(&Reverse(b))) if b < a => {
                    self.later.pop();
                    b
                }
                (Some(a), _) => {
                    cursor += 1;
                    a
                }
                (None, Some(_)) => self.later.pop().map_or(0, |Reverse(b)| b),
                (None, None) => break,
            };
            let (s, k) = (Total::from_key((e >> 64) as u64), e as u64 as usize);
            if self.count[k] == 0 {
                continue;
            }
            let now = share(k, &self.left, &self.weight);
            if now != s {
                self.later.push(Reverse(entry(now, k)));
                continue;
            }
            for &f in &self.through[self.start[k]..self.start[k + 1]] {
                if self.frozen[f] {
                    continue;
                }
                self.frozen[f] = true;
                left_unfrozen -= 1;
                self.rate[f] = s;
                for &(m, w) in &self.slots[self.first[f]..self.first[f + 1]] {
                    self.left[m] -= s * w;
                    self.count[m] -= 1;
                    // The last crossing leaves no share behind (no rounding residue).
                    self.weight[m] = if self.count[m] == 0 {
                        0.0
                    } else {
                        self.weight[m] - w
                    };
                }
            }
        }
        &self.rate
    }

    /// The rate of one flow alone, crossing `links` (a flow engine's components are mostly
    /// one flow: a ring over channels). What the progressive filling gives it, without its
    /// lists and queue: per distinct link, its bandwidth over the flow's summed shares of it
    /// (summed in route order, as the filling sums them); the least of those in total order,
    /// the share the filling freezes the flow at. No link: unbounded.
    fn alone(&mut self, caps: &[f64], links: impl Iterator<Item = (LinkId, f64)>) -> &[f64] {
        self.used.clear();
        self.weight.clear();
        for (l, w) in links {
            let seen = &mut self.seen[l as usize];
            if *seen != self.stamp {
                *seen = self.stamp;
                self.slot_of[l as usize] = self.used.len() as u32;
                self.used.push(l);
                self.weight.push(0.0);
            }
            self.weight[self.slot_of[l as usize] as usize] += w;
        }
        let least = self
            .used
            .iter()
            .zip(&self.weight)
            .map(|(&l, &w)| Total(caps[l as usize].max(0.0) / w))
            .min();
        reset(&mut self.rate, 1, least.map_or(f64::INFINITY, |t| t.0));
        &self.rate
    }
}

/// `v` as `n` copies of `x`, keeping its allocation.
fn reset<T: Copy>(v: &mut Vec<T>, n: usize, x: T) {
    v.clear();
    v.resize(n, x);
}
