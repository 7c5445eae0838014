//! Values made once per key and kept for later calls in this process, within a budget
//! ([`Kept`]): what a sweep over sizes reuses (lowered programs, `lower::reuse`; their GOAL
//! conversions, `sim::fluid::lowered`; ring searches, solved forests and all-to-all optima),
//! so a long-lived process (the language server, a Python session) does not grow with every
//! file it sees.
//!
//! The most recently used value is kept last; the oldest go first when the values' summed cost
//! is over the budget, and the newest always stays. A key being made by one thread is waited
//! for by the others that ask for it, never made twice at once; a failure is not kept (a
//! thread waiting on it makes the value for itself).
//!
//! A make must not run rayon work (`par`'s scoped threads are fine). A thread waiting in rayon
//! runs other queued jobs on its own stack; one of them may ask for a key whose maker needs
//! that very thread's unfinished work, or the key that thread is making, and the wait never
//! ends. Nothing kept here does: lowering and proving, GOAL conversions, the ring searches and
//! their route tables, all-to-all optima (`mcf`) and a forest's time model. A forest's solve
//! does (its trees' routes are made in parallel), so solved forests are made apart and kept
//! with [`Kept::put`], without a wait (`choose::eval`): two threads may both solve one.

use std::sync::{Arc, Mutex};

type Slot<V> = Arc<Mutex<Option<V>>>;

struct Entry<K, V> {
    key: K,
    slot: Slot<V>,
    cost: usize,
    /// The slot holds the value (it is never locked for long again).
    made: bool,
}

/// A cache of values by key; see the module doc.
pub struct Kept<K, V> {
    entries: Mutex<Vec<Entry<K, V>>>,
    budget: usize,
}

impl<K: PartialEq, V: Clone> Kept<K, V> {
    /// An empty cache whose values may cost `budget` in all (the newest one whatever it costs).
    pub const fn new(budget: usize) -> Kept<K, V> {
        Kept {
            entries: Mutex::new(Vec::new()),
            budget,
        }
    }

    /// The value of `key`: kept from an earlier call, else made by `make` and kept (at the
    /// cost `cost` gives it) when it succeeds.
    pub fn get<E>(
        &self,
        key: K,
        make: impl FnOnce() -> Result<V, E>,
        cost: impl FnOnce(&V) -> usize,
    ) -> Result<V, E> {
        let slot = {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            match entries.iter().position(|e| e.key == key) {
                Some(i) => used(&mut entries, i),
                None => {
                    let slot = Arc::new(Mutex::new(None));
                    entries.push(Entry {
                        key,
                        slot: slot.clone(),
                        cost: 0,
                        made: false,
                    });
                    slot
                }
            }
        };
        // Held while making: another thread with the same key waits here for the result.
        let mut held = slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = held.as_ref() {
            return Ok(v.clone());
        }
        let made = make();
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let value = match made {
            Ok(v) => v,
            Err(e) => {
                entries.retain(|e| !Arc::ptr_eq(&e.slot, &slot));
                return Err(e);
            }
        };
        *held = Some(value.clone());
        if let Some(e) = entries.iter_mut().find(|e| Arc::ptr_eq(&e.slot, &slot)) {
            e.cost = cost(&value);
            e.made = true;
        }
        self.trim(&mut entries);
        Ok(value)
    }

    /// Drops the oldest values while their costs are over the budget, keeping the newest.
    fn trim(&self, entries: &mut Vec<Entry<K, V>>) {
        while entries.len() > 1 && entries.iter().map(|e| e.cost).sum::<usize>() > self.budget {
            entries.remove(0);
        }
    }

    /// The value of `key` if it is kept, without waiting for one being made (None then).
    pub fn peek(&self, key: &K) -> Option<V> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let i = entries.iter().position(|e| &e.key == key && e.made)?;
        let slot = used(&mut entries, i);
        drop(entries);
        // Made: held only while another caller clones the value.
        let held = slot.lock().unwrap_or_else(|e| e.into_inner());
        held.clone()
    }

    /// Keeps `value`, made by the caller without asking the cache, as `key`'s (at `cost`),
    /// in place of what was kept for it: for values whose make may not wait (see the module
    /// doc), looked up with [`Kept::peek`].
    pub fn put(&self, key: K, value: V, cost: usize) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.retain(|e| e.key != key);
        entries.push(Entry {
            key,
            slot: Arc::new(Mutex::new(Some(value))),
            cost,
            made: true,
        });
        self.trim(&mut entries);
    }

    /// [`Kept::get`] for a make that cannot fail.
    pub fn made(&self, key: K, make: impl FnOnce() -> V, cost: impl FnOnce(&V) -> usize) -> V {
        let Ok(v) = self.get(key, || Ok::<V, std::convert::Infallible>(make()), cost);
        v
    }
}

/// Entry `i` as the most recently used (last): its slot.
fn used<K, V>(entries: &mut Vec<Entry<K, V>>, i: usize) -> Slot<V> {
    let entry = entries.remove(i);
    let slot = entry.slot.clone();
    entries.push(entry);
    slot
}

#[cfg(test)]
mod tests {
    use super::Kept;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_key_asked_for_by_two_threads_at_once_is_made_once_and_a_failure_is_not_kept() {
        let kept: Kept<u32, u64> = Kept::new(10);
        let makes = AtomicUsize::new(0);
        let make = || {
            makes.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(50));
            Ok::<u64, ()>(49)
        };
        std::thread::scope(|s| {
            let a = s.spawn(|| kept.get(7, make, |_| 1));
            let b = s.spawn(|| kept.get(7, make, |_| 1));
            assert_eq!(a.join().ok(), Some(Ok(49)));
            assert_eq!(b.join().ok(), Some(Ok(49)));
        });
        assert_eq!(makes.load(Ordering::SeqCst), 1);
        assert_eq!(kept.get(8, || Err::<u64, ()>(()), |_| 1), Err(()));
        assert_eq!(kept.get(8, || Ok::<u64, ()>(64), |_| 1), Ok(64));
        assert_eq!(kept.get(8, || Ok::<u64, ()>(0), |_| 1), Ok(64));
    }

    #[test]
    fn values_are_peeked_without_waiting_for_one_being_made_and_the_oldest_go_first() {
        let kept: Kept<u32, u64> = Kept::new(2);
        assert_eq!(kept.peek(&1), None);
        kept.put(1, 10, 1);
        kept.put(2, 20, 1);
        // Peeking 1 makes it the most recently used: 2 is the oldest when 3 comes.
        assert_eq!(kept.peek(&1), Some(10));
        kept.put(3, 30, 1);
        assert_eq!(
            (kept.peek(&1), kept.peek(&2), kept.peek(&3)),
            (Some(10), None, Some(30))
        );
        // A key put again replaces its value; one over the budget alone is still kept.
        kept.put(3, 31, 5);
        assert_eq!((kept.peek(&1), kept.peek(&3)), (None, Some(31)));
        // A value being made is not waited for.
        let (started, done) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|s| {
            s.spawn(|| {
                kept.made(
                    4,
                    || {
                        started.store(1, Ordering::SeqCst);
                        // Bounded, so that a peek that waits fails below rather than hangs.
                        let start = std::time::Instant::now();
                        while done.load(Ordering::SeqCst) == 0
                            && start.elapsed() < std::time::Duration::from_secs(10)
                        {
                            std::thread::yield_now();
                        }
                        40
                    },
                    |_| 1,
                )
            });
            while started.load(Ordering::SeqCst) == 0 {
                std::thread::yield_now();
            }
            assert_eq!(kept.peek(&4), None);
            done.store(1, Ordering::SeqCst);
        });
        assert_eq!(kept.peek(&4), Some(40));
    }
}
