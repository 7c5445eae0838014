//! The table behind [`super::matchq`]'s exact queues: (host, source, tag) to the first and last
//! slot of that channel's list, by open addressing (linear probing, deletion by shifting back)
//! in one array, so that the loop can start loading the entry an upcoming event will look up
//! ([`ChanTable::prefetch`]). A general hash map hides where its entry lives; with millions of
//! hosts every lookup is a trip to main memory, and the receive and unexpected queues make two
//! per message.

/// A key no channel has: hosts are below `u32::MAX`.
const EMPTY: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Entry {
    key: (u32, u32, u32),
    val: (u32, u32),
}

const VACANT: Entry = Entry {
    key: (EMPTY, 0, 0),
    val: (0, 0),
};

pub(super) struct ChanTable {
    entries: Vec<Entry>,
    len: usize,
}

impl Default for ChanTable {
    fn default() -> Self {
        ChanTable {
            entries: vec![VACANT; 16],
            len: 0,
        }
    }
}

impl ChanTable {
    fn home(&self, k: (u32, u32, u32)) -> usize {
        let x = (u64::from(k.0) << 32 | u64::from(k.1)) ^ u64::from(k.2).rotate_left(17);
        let h = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> 32) as usize & (self.entries.len() - 1)
    }

    fn find(&self, k: (u32, u32, u32)) -> Result<usize, usize> {
        let mask = self.entries.len() - 1;
        let mut i = self.home(k);
        loop {
            let e = &self.entries[i];
            if e.key == k {
                return Ok(i);
            }
            if e.key.0 == EMPTY {
                return Err(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Hints that `k` will be looked up soon.
    #[inline]
    pub(super) fn prefetch(&self, k: (u32, u32, u32)) {
        super::prefetch::touch(&self.entries[self.home(k)]);
    }

    pub(super) fn get(&self, k: (u32, u32, u32)) -> Option<(u32, u32)> {
        self.find(k).ok().map(|i| self.entries[i].val)
    }

    pub(super) fn get_mut(&mut self, k: (u32, u32, u32)) -> Option<&mut (u32, u32)> {
        let i = self.find(k).ok()?;
        Some(&mut self.entries[i].val)
    }

    /// Sets `k` to `v` (a new key or not).
    pub(super) fn insert(&mut self, k: (u32, u32, u32), v: (u32, u32)) {
        match self.find(k) {
            Ok(i) => self.entries[i].val = v,
            Err(i) => {
                self.entries[i] = Entry { key: k, val: v };
                self.len += 1;
                if 2 * self.len > self.entries.len() {
                    self.grow();
                }
            }
        }
    }

    fn grow(&mut self) {
        let size = 2 * self.entries.len();
        let old = std::mem::replace(&mut self.entries, vec![VACANT; size]);
        for e in old.into_iter().filter(|e| e.key.0 != EMPTY) {
            if let Err(i) = self.find(e.key) {
                self.entries[i] = e;
            }
        }
    }

    pub(super) fn remove(&mut self, k: (u32, u32, u32)) {
        let Ok(mut hole) = self.find(k) else {
            return;
        };
        self.len -= 1;
        let mask = self.entries.len() - 1;
        // Shift back every entry after the hole that may sit there (its home is not between
        // the hole and it, cyclically), so that lookups never stop at a false gap.
        let mut i = (hole + 1) & mask;
        while self.entries[i].key.0 != EMPTY {
            let home = self.home(self.entries[i].key);
            if (i.wrapping_sub(home) & mask) >= (i.wrapping_sub(hole) & mask) {
                self.entries[hole] = self.entries[i];
                hole = i;
            }
            i = (i + 1) & mask;
        }
        self.entries[hole] = VACANT;
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = ((u32, u32, u32), (u32, u32))> + '_ {
        self.entries
            .iter()
            .filter(|e| e.key.0 != EMPTY)
            .map(|e| (e.key, e.val))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Random inserts, updates, lookups and removals on few hosts (long probe runs, removals
    /// in the middle of them), against a `HashMap`.
    #[test]
    fn agrees_with_a_hash_map() {
        let mut t = ChanTable::default();
        let mut m: HashMap<(u32, u32, u32), (u32, u32)> = HashMap::new();
        let mut seed = 0x853c_49e6_748f_ea9bu64;
        for step in 0..200_000u32 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let k = (
                (seed % 7) as u32,
                (seed >> 8) as u32 % 50,
                (seed >> 16) as u32 % 3,
            );
            match (seed >> 24) % 4 {
                0 | 1 => {
                    t.insert(k, (step, step + 1));
                    m.insert(k, (step, step + 1));
                }
                2 => {
                    t.remove(k);
                    m.remove(&k);
                }
                _ => {
                    if let Some(v) = t.get_mut(k) {
                        v.0 = step;
                    }
                    if let Some(v) = m.get_mut(&k) {
                        v.0 = step;
                    }
                }
            }
            assert_eq!(t.get(k), m.get(&k).copied(), "step {step}");
            assert_eq!(t.len, m.len());
        }
        let mut all: Vec<_> = t.iter().collect();
        all.sort();
        let mut want: Vec<_> = m.into_iter().collect();
        want.sort();
        assert_eq!(all, want);
    }
}
