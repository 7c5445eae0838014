//! The event queue of the packet simulator: a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan),
//! a monotone priority queue. Keys are (time, sequence number) packed into a `u128`; events are
//! only ever scheduled at or after the current time with a growing sequence number, so keys
//! pushed are never below the last key popped, which is all a radix heap needs. It pops in
//! exactly the order a binary heap of the same keys would (keys are unique), several times
//! faster: an element moves down at most 128 buckets over its life, and popping is a `Vec` pop.

/// A monotone min-queue of `(key, value)`; see the module doc.
pub struct RadixHeap<T> {
    last: u128,
    buckets: Vec<Vec<(u128, T)>>,
    len: usize,
}

impl<T> Default for RadixHeap<T> {
    fn default() -> Self {
        RadixHeap {
            last: 0,
            buckets: (0..129).map(|_| Vec::new()).collect(),
            len: 0,
        }
    }
}

impl<T> RadixHeap<T> {
    fn bucket(last: u128, k: u128) -> usize {
        128 - (k ^ last).leading_zeros() as usize
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds `v` at key `k`, which must not be below the last key popped (it is then clamped,
    /// which keeps the queue sound but is a bug in the caller).
    pub fn push(&mut self, k: u128, v: T) {
        debug_assert!(k >= self.last, "radix heap keys must be monotone");
        let k = k.max(self.last);
        self.buckets[Self::bucket(self.last, k)].push((k, v));
        self.len += 1;
    }

    /// Removes and returns the entry with the smallest key.
    pub fn pop(&mut self) -> Option<(u128, T)> {
        if self.len == 0 {
            return None;
        }
        if self.buckets[0].is_empty() {
            let i = (1..self.buckets.len()).find(|&i| !self.buckets[i].is_empty())?;
            let moved = std::mem::take(&mut self.buckets[i]);
            let min = moved.iter().map(|e| e.0).min()?;
            self.last = min;
            for e in moved {
                self.buckets[Self::bucket(min, e.0)].push(e);
            }
        }
        self.len -= 1;
        self.buckets[0].pop()
    }
}

#[cfg(test)]
mod tests {
    use super::RadixHeap;
    use crate::sim::packet::traffic::Rng;

    #[test]
    fn pops_in_key_order_like_a_binary_heap() {
        let mut rng = Rng::new(11);
        let mut q = RadixHeap::default();
        let mut reference = std::collections::BinaryHeap::new();
        let mut now = 0u128;
        let mut seq = 0u128;
        for round in 0..2000 {
            for _ in 0..(round % 5) {
                seq += 1;
                let k = ((now >> 64) + u128::from(rng.below(1000))) << 64 | seq;
                q.push(k, seq);
                reference.push(std::cmp::Reverse((k, seq)));
            }
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
}
