//! The event queue of the packet simulator ([`crate::sim::packet`], times in picoseconds) and
//! of the flow-level one ([`crate::sim::fluid`], times the bits of non-negative f64 seconds,
//! which order as the numbers do): a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan), a
//! monotone priority queue on times (`u64`), first in first out among equal times. Events are
//! only ever scheduled at or after the current time, which is all a radix heap needs, and ties
//! pop in the order they were pushed, so it pops in exactly the order of a binary heap on
//! (time, push sequence number).
//!
//! Why FIFO holds: a bucket only ever receives entries in push order. A push appends; and a
//! bucket is only redistributed when every bucket below it is empty, into those buckets, in
//! its own order; every later push has a later sequence number. Bucket 0 holds the entries at
//! exactly the last time popped and is read from the front. Keeping the sequence number out of
//! the key keeps entries small and their moves few: an entry moves down at most 64 buckets
//! over its life, and in practice about as many as the bits of how far ahead it was pushed.

/// A monotone min-queue of `(time, value)`, FIFO among equal times; see the module doc.
pub struct RadixHeap<T> {
    last: u64,
    buckets: Vec<Vec<(u64, T)>>,
    /// How many entries at the front of bucket 0 were popped.
    head: usize,
    len: usize,
    /// The least time queued, once [`RadixHeap::min_key`] found it with bucket 0 read out.
    min: Option<u64>,
}

impl<T> Default for RadixHeap<T> {
    fn default() -> Self {
        RadixHeap {
            last: 0,
            buckets: (0..65).map(|_| Vec::new()).collect(),
            head: 0,
            len: 0,
            min: None,
        }
    }
}

impl<T: Copy> RadixHeap<T> {
    fn bucket(last: u64, k: u64) -> usize {
        64 - (k ^ last).leading_zeros() as usize
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds `v` at time `k`, which must not be below the last time popped (it is then
    /// clamped, which keeps the queue sound but is a bug in the caller).
    pub fn push(&mut self, k: u64, v: T) {
        debug_assert!(k >= self.last, "radix heap keys must be monotone");
        let k = k.max(self.last);
        let b = Self::bucket(self.last, k);
        self.buckets[b].push((k, v));
        self.len += 1;
        if b > 0
            && let Some(m) = &mut self.min
        {
            // (An entry at the last time goes to bucket 0, which `min_key` reads first.)
            *m = (*m).min(k);
        }
    }

    /// The earliest time queued, without taking anything out: unlike a pop, it leaves the
    /// last time popped where it was, so times from there on may still be pushed (a caller
    /// that compares the queue's next time with another clock's first).
    pub fn min_key(&mut self) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        if self.head < self.buckets[0].len() {
            return Some(self.last);
        }
        if self.min.is_none() {
            // Bucket 0 is read out: the least time is in the first bucket that holds any
            // (a lower bucket holds only earlier times than a higher one).
            let i = (1..self.buckets.len()).find(|&i| !self.buckets[i].is_empty())?;
            self.min = self.buckets[i].iter().map(|e| e.0).min();
        }
        self.min
    }

    /// The entry `ahead` pops from now returns (0: the next pop), when that is known without
    /// moving any entry: it is at the time last popped. In a packet run nearly every next
    /// entry is, since events fall on a lattice of times; the engine reads its records early.
    pub fn peek_ready(&self, ahead: usize) -> Option<&T> {
        self.buckets[0].get(self.head + ahead).map(|e| &e.1)
    }

    /// Removes and returns the earliest entry (of those at the earliest time, the first
    /// pushed).
    pub fn pop(&mut self) -> Option<(u64, T)> {
        if self.len == 0 {
            return None;
        }
        if self.head == self.buckets[0].len() {
            self.buckets[0].clear();
            self.head = 0;
            let i = (1..self.buckets.len()).find(|&i| !self.buckets[i].is_empty())?;
            let mut moved = std::mem::take(&mut self.buckets[i]);
            let min = moved.iter().map(|e| e.0).min()?;
            self.last = min;
            self.min = None;
            for &e in &moved {
                self.buckets[Self::bucket(min, e.0)].push(e);
            }
            // Hand the emptied allocation back, so buckets keep their capacity.
            moved.clear();
            self.buckets[i] = moved;
        }
        let e = self.buckets[0][self.head];
        self.head += 1;
        self.len -= 1;
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::RadixHeap;
    use crate::sim::packet::traffic::Rng;

    #[test]
    fn the_least_time_is_seen_without_popping_whatever_comes_between() {
        // Pushes, looks and pops in any order, as the flow engine does (it looks at the next
        // time, lets an earlier flow end, pushes what that sends, and only then pops).
        let mut rng = Rng::new(5);
        let mut q = RadixHeap::default();
        let mut reference = std::collections::BinaryHeap::new();
        let (mut now, mut seq) = (0u64, 0u64);
        for _ in 0..200_000 {
            match rng.below(3) {
                0 => {
                    seq += 1;
                    let k = now + [0, 1, 7, 1000][rng.below(4) as usize];
                    q.push(k, seq);
                    reference.push(std::cmp::Reverse((k, seq)));
                }
                1 => {
                    let peeked = reference.peek().map(|std::cmp::Reverse((k, _))| *k);
                    assert_eq!(q.min_key(), peeked);
                }
                _ => {
                    let popped = reference.pop().map(|std::cmp::Reverse(e)| e);
                    assert_eq!(q.pop(), popped);
                    if let Some((k, _)) = popped {
                        now = k;
                    }
                }
            }
        }
    }

    #[test]
    fn pops_in_key_order_like_a_binary_heap() {
        let mut rng = Rng::new(11);
        let mut q = RadixHeap::default();
        let mut reference = std::collections::BinaryHeap::new();
        let mut now = 0u64;
        let mut seq = 0u64;
        for round in 0..20_000 {
            for _ in 0..(round % 5) {
                seq += 1;
                // Many ties (the same time pushed again) and some far-ahead times.
                let ahead = match rng.below(4) {
                    0 => 0,
                    1 => rng.below(4),
                    2 => rng.below(1000),
                    _ => rng.below(1 << 40),
                };
                let k = now + ahead;
                q.push(k, seq);
                reference.push(std::cmp::Reverse((k, seq)));
            }
            let peeked = reference.peek().map(|std::cmp::Reverse((k, _))| *k);
            assert_eq!(q.min_key(), peeked);
            if let Some((k, v)) = q.pop() {
                let std::cmp::Reverse(r) = reference.pop().unwrap();
                assert_eq!((k, v), r);
                now = k;
            }
        }
        assert_eq!(q.len(), reference.len());
        while let Some(e) = q.pop() {
            assert_eq!(e, reference.pop().unwrap().0);
        }
        assert!(q.is_empty());
    }

    #[test]
    fn what_it_peeks_is_what_the_pops_return() {
        // Whatever `peek_ready` shows, k pops later is popped; it shows nothing it is not sure of.
        let mut rng = Rng::new(3);
        let mut q = RadixHeap::default();
        let mut now = 0u64;
        let (mut shown, mut seq) = (0, 0u64);
        for _ in 0..50_000 {
            for _ in 0..rng.below(4) {
                seq += 1;
                q.push(now + [0, 0, 1, 50][rng.below(4) as usize], seq);
            }
            let ahead = rng.below(4) as usize;
            let peeked = q.peek_ready(ahead).copied();
            let mut popped = None;
            for _ in 0..=ahead {
                popped = q.pop();
                if let Some((k, _)) = popped {
                    now = k;
                }
            }
            if let Some((_, v)) = popped {
                if let Some(p) = peeked {
                    assert_eq!(p, v);
                    shown += 1;
                }
            } else {
                assert_eq!(peeked, None);
            }
        }
        assert!(shown > 10_000, "peeked only {shown} times");
    }
}
