//! LogGOPSim's message matching, with an index. LogGOPSim keeps each host's posted receives
//! and unexpected messages in lists and takes the *first* entry, in insertion order, whose
//! source and tag are compatible with the one looked for; [`ANY_SOURCE`](super::ANY_SOURCE)
//! and [`ANY_TAG`](super::ANY_TAG) on either side are compatible with everything. [`Queue`]
//! gives exactly that answer without scanning: exact entries are kept per (source, tag) in
//! insertion order, wildcard entries in one list, and the oldest compatible entry wins.

use super::{ANY_SOURCE, ANY_TAG};
use std::collections::{HashMap, VecDeque};

use std::hash::{BuildHasherDefault, Hasher};

/// A fast hasher for the (source, tag) keys (multiply-shift; keys are not adversarial).
#[derive(Default, Clone, Copy)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29);
    }
}

type Map<V> = HashMap<u64, V, BuildHasherDefault<KeyHasher>>;

/// A hash map with [`KeyHasher`], for integer keys.
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

fn key(src: u32, tag: u32) -> u64 {
    (u64::from(src) << 32) | u64::from(tag)
}

fn compatible(a: u32, b: u32, any: u32) -> bool {
    a == any || b == any || a == b
}

/// A matching queue of items `T`, each under a source and a tag.
///
/// Exact entries live in a slab of singly linked lists, one list per (source, tag), so pushing
/// and taking allocate nothing once the slab has grown.
#[derive(Debug, Clone)]
pub struct Queue<T> {
    /// (source, tag) -> (first, last) slab index of its list.
    exact: Map<(u32, u32)>,
    slab: Vec<Slot<T>>,
    free: Vec<u32>,
    wild: VecDeque<(u64, u32, u32, T)>,
    seq: u64,
    len: usize,
}

#[derive(Debug, Clone)]
struct Slot<T> {
    seq: u64,
    next: u32,
    item: Option<T>,
}

const NIL: u32 = u32::MAX;

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue {
            exact: Map::default(),
            slab: Vec::new(),
            free: Vec::new(),
            wild: VecDeque::new(),
            seq: 0,
            len: 0,
        }
    }
}

impl<T> Queue<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends an item.
    pub fn push(&mut self, src: u32, tag: u32, item: T) {
        let s = self.seq;
        self.seq += 1;
        self.len += 1;
        if src == ANY_SOURCE || tag == ANY_TAG {
            self.wild.push_back((s, src, tag, item));
            return;
        }
        let slot = Slot {
            seq: s,
            next: NIL,
            item: Some(item),
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = slot;
                i
            }
            None => {
                self.slab.push(slot);
                (self.slab.len() - 1) as u32
            }
        };
        match self.exact.get_mut(&key(src, tag)) {
            Some((_, last)) => {
                self.slab[*last as usize].next = i;
                *last = i;
            }
            None => {
                self.exact.insert(key(src, tag), (i, i));
            }
        }
    }

    fn front_seq(&self, k: u64) -> Option<u64> {
        self.exact.get(&k).map(|(f, _)| self.slab[*f as usize].seq)
    }

    fn pop_exact(&mut self, k: u64) -> Option<T> {
        let (first, last) = *self.exact.get(&k)?;
        let slot = &mut self.slab[first as usize];
        let item = slot.item.take();
        let next = slot.next;
        self.free.push(first);
        if first == last {
            self.exact.remove(&k);
        } else if let Some(e) = self.exact.get_mut(&k) {
            e.0 = next;
        }
        item
    }

    /// Removes and returns the oldest item compatible with (`src`, `tag`).
    pub fn take(&mut self, src: u32, tag: u32) -> Option<T> {
        let wild_pos = if self.wild.is_empty() {
            None
        } else {
            self.wild.iter().position(|(_, s, t, _)| {
                compatible(*s, src, ANY_SOURCE) && compatible(*t, tag, ANY_TAG)
            })
        };
        let wild_seq = wild_pos.and_then(|i| self.wild.get(i)).map(|w| w.0);
        let exact = if src == ANY_SOURCE || tag == ANY_TAG {
            // A wildcard query: the oldest front among all compatible exact keys.
            self.exact
                .iter()
                .filter(|(k, _)| {
                    let (s, t) = ((**k >> 32) as u32, **k as u32);
                    compatible(s, src, ANY_SOURCE) && compatible(t, tag, ANY_TAG)
                })
                .map(|(k, (f, _))| (self.slab[*f as usize].seq, *k))
                .min()
        } else {
            let k = key(src, tag);
            self.front_seq(k).map(|s| (s, k))
        };
        let use_wild = match (exact, wild_seq) {
            (Some((es, _)), Some(ws)) => ws < es,
            (None, Some(_)) => true,
            _ => false,
        };
        let item = if use_wild {
            wild_pos
                .and_then(|i| self.wild.remove(i))
                .map(|(_, _, _, t)| t)
        } else {
            self.pop_exact(exact?.1)
        };
        if item.is_some() {
            self.len -= 1;
        }
        item
    }

    /// Every item with its source and tag, in insertion order.
    pub fn items(&self) -> Vec<(u32, u32, &T)> {
        let mut all: Vec<(u64, u32, u32, &T)> = Vec::new();
        for (k, (first, _)) in &self.exact {
            let mut i = *first;
            while i != NIL {
                let slot = &self.slab[i as usize];
                if let Some(t) = &slot.item {
                    all.push((slot.seq, (*k >> 32) as u32, *k as u32, t));
                }
                i = slot.next;
            }
        }
        all.extend(self.wild.iter().map(|(s, a, b, t)| (*s, *a, *b, t)));
        all.sort_by_key(|x| x.0);
        all.into_iter().map(|(_, s, t, x)| (s, t, x)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oldest_compatible_wins() {
        let mut q = Queue::default();
        q.push(1, 5, "a");
        q.push(ANY_SOURCE, 5, "b");
        q.push(1, 5, "c");
        q.push(2, ANY_TAG, "d");
        assert_eq!(q.take(1, 5), Some("a"));
        assert_eq!(q.take(1, 5), Some("b"));
        assert_eq!(q.take(2, 9), Some("d"));
        assert_eq!(q.take(2, 9), None);
        assert_eq!(q.take(ANY_SOURCE, ANY_TAG), Some("c"));
        assert!(q.is_empty());
    }
}
