//! Values made once per key and kept for later calls in this process, within a budget
//! ([`Kept`]): what a sweep over sizes reuses (lowered programs, `lower::reuse`; their GOAL
//! conversions, `sim::fluid::lowered`; solved forests, `choose::eval`), so a long-lived process
//! (the language server, a Python session) does not grow with every file it sees.
//!
//! The most recently used value is kept last; the oldest go first when the values' summed cost
//! is over the budget, and the newest always stays. A failure is not kept (a thread waiting on
//! it makes the value for itself).
//!
//! A key being made by one thread is waited for by the others that ask for it, never made
//! twice at once, with one exception that keeps waiting from ever closing a cycle: a thread
//! that is itself making a value never waits. A make may run rayon work (a forest's solve
//! does), and a thread waiting in rayon runs other queued jobs on its own stack, one of which
//! may ask for the very key that thread is making, or for a key whose maker waits on it. Such
//! a nested ask makes the value itself and does not keep it (it is rare: two cells of a sweep
//! that start while the first one's value is being made). So only threads that make nothing
//! wait, a maker never does, and every maker finishes.

use std::cell::Cell;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

thread_local! {
    /// How many makes this thread is inside (nested through rayon's work-stealing).
    static MAKING: Cell<u32> = const { Cell::new(0) };
}

enum State<V> {
    Making,
    Made(V),
    /// The make failed or panicked; the entry is gone.
    Failed,
}

struct Slot<V> {
    state: Mutex<State<V>>,
    ready: Condvar,
}

impl<V: Clone> Slot<V> {
    fn lock(&self) -> MutexGuard<'_, State<V>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The value once made; `None` when it failed, or while it is being made and this thread
    /// may not wait (it is making a value itself; see the module doc).
    fn wait(&self) -> Option<V> {
        let mut state = self.lock();
        loop {
            match &*state {
                State::Made(v) => return Some(v.clone()),
                State::Making if MAKING.with(Cell::get) == 0 => {
                    state = self.ready.wait(state).unwrap_or_else(|e| e.into_inner());
                }
                _ => return None,
            }
        }
    }

    fn settle(&self, to: State<V>) {
        *self.lock() = to;
        self.ready.notify_all();
    }
}

struct Entry<K, V> {
    key: K,
    slot: Arc<Slot<V>>,
    cost: usize,
}

/// A cache of values by key; see the module doc.
pub struct Kept<K, V> {
    entries: Mutex<Vec<Entry<K, V>>>,
    budget: usize,
}

/// Marks this thread as making a value while it lives; if the make unwinds, settles the slot
/// as failed and forgets its entry, so waiters make the value themselves.
struct Making<'a, K, V: Clone> {
    kept: &'a Kept<K, V>,
    slot: &'a Arc<Slot<V>>,
    done: bool,
}

impl<K, V: Clone> Drop for Making<'_, K, V> {
    fn drop(&mut self) {
        MAKING.with(|m| m.set(m.get().saturating_sub(1)));
        if !self.done {
            self.kept.forget(self.slot);
        }
    }
}

impl<K: PartialEq, V: Clone> Kept<K, V> {
    /// An empty cache whose values may cost `budget` in all (the newest one whatever it costs).
    pub const fn new(budget: usize) -> Kept<K, V> {
        Kept {
            entries: Mutex::new(Vec::new()),
            budget,
        }
    }

    /// The value of `key`: kept from an earlier call (or waited for while another thread makes
    /// it), else made by `make` and kept (at the cost `cost` gives it) when it succeeds.
    pub fn get<E>(
        &self,
        key: K,
        make: impl FnOnce() -> Result<V, E>,
        cost: impl FnOnce(&V) -> usize,
    ) -> Result<V, E> {
        let (slot, mine) = {
            let mut entries = self.lock();
            match entries.iter().position(|e| e.key == key) {
                Some(i) => {
                    let entry = entries.remove(i);
                    let slot = entry.slot.clone();
                    entries.push(entry);
                    (slot, false)
                }
                None => {
                    let slot = Arc::new(Slot {
                        state: Mutex::new(State::Making),
                        ready: Condvar::new(),
                    });
                    entries.push(Entry {
                        key,
                        slot: slot.clone(),
                        cost: 0,
                    });
                    (slot, true)
                }
            }
        };
        if !mine {
            return match slot.wait() {
                Some(v) => Ok(v),
                None => make(),
            };
        }
        MAKING.with(|m| m.set(m.get() + 1));
        let mut making = Making {
            kept: self,
            slot: &slot,
            done: false,
        };
        let value = make()?;
        making.done = true;
        drop(making);
        let mut entries = self.lock();
        if let Some(e) = entries.iter_mut().find(|e| Arc::ptr_eq(&e.slot, &slot)) {
            e.cost = cost(&value);
        }
        slot.settle(State::Made(value.clone()));
        while entries.len() > 1 && entries.iter().map(|e| e.cost).sum::<usize>() > self.budget {
            entries.remove(0);
        }
        Ok(value)
    }

    /// The value of `key` if it was made (waiting for a thread making it, as [`Kept::get`]
    /// does), without making it.
    pub fn peek(&self, key: &K) -> Option<V> {
        let slot = self.lock().iter().find(|e| &e.key == key)?.slot.clone();
        slot.wait()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Entry<K, V>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<K, V: Clone> Kept<K, V> {
    /// Forgets a slot whose make failed, and wakes its waiters.
    fn forget(&self, slot: &Arc<Slot<V>>) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.retain(|e| !Arc::ptr_eq(&e.slot, slot));
        slot.settle(State::Failed);
    }
}

#[cfg(test)]
mod tests {
    use super::Kept;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_key_asked_for_at_once_is_made_once_and_peeked_only_once_made() {
        let kept: Kept<u32, u64> = Kept::new(10);
        assert_eq!(kept.peek(&7), None);
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
        assert_eq!(kept.peek(&7), Some(49));
        // A failure is not kept: peeking finds nothing, and the next ask makes it.
        assert_eq!(kept.get(8, || Err::<u64, ()>(()), |_| 1), Err(()));
        assert_eq!(kept.peek(&8), None);
        assert_eq!(kept.get(8, || Ok::<u64, ()>(64), |_| 1), Ok(64));
        assert_eq!(kept.peek(&8), Some(64));
    }

    #[test]
    fn a_thread_making_a_value_never_waits_so_nested_and_crossed_asks_finish() {
        // Nested: the make asks for its own key (as a stolen rayon job may).
        let kept: Kept<u32, u64> = Kept::new(10);
        let outer = kept.get(
            1,
            || kept.get(1, || Ok::<u64, ()>(5), |_| 1).map(|v| v + 1),
            |_| 1,
        );
        assert_eq!(outer, Ok(6));
        assert_eq!(kept.peek(&1), Some(6));
        // Crossed: each maker asks for the key the other is making.
        let both = std::sync::Barrier::new(2);
        let ask = |mine: u32, theirs: u32| {
            kept.get(
                mine,
                || {
                    both.wait();
                    let other = kept.get(theirs, || Ok::<u64, ()>(u64::from(theirs)), |_| 1);
                    other.map(|o| 100 * u64::from(mine) + o)
                },
                |_| 1,
            )
        };
        // Each either makes the other's value itself (203, 302) or finds it made by the other,
        // which then finished first (502, 503); never both find.
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| ask(2, 3));
            let b = s.spawn(|| ask(3, 2));
            (a.join().ok(), b.join().ok())
        });
        match (a, b) {
            (Some(Ok(203)), Some(Ok(302 | 503))) | (Some(Ok(502)), Some(Ok(302))) => {}
            other => panic!("crossed asks gave {other:?}"),
        }
    }
}
