//! Every host's receive (or unexpected-message) queue, as the loop uses them: LogGOPSim's
//! matching ([`crate::backend::goal::matching::Queue`], the oldest compatible entry wins).
//!
//! A schedule without wildcards only ever asks for an exact (source, tag) at a host, and holds
//! few entries at once however many hosts it has. Such schedules share one map from (host,
//! source, tag) to a list of entries ([`Exact`]), so an idle host costs nothing; a queue per
//! host (two allocations each once used) was a third of the memory of a 65,536-rank run.
//! Schedules with wildcards keep a [`Queue`] per host, which can answer wildcard queries.

use super::chantab::ChanTable;
use crate::backend::goal::matching::Queue;

pub(super) enum Queues<T> {
    PerHost(Vec<Queue<T>>),
    Exact(Exact<T>),
}

pub(super) struct Exact<T> {
    /// (host, source, tag) -> (first, last) slot of its list, oldest first.
    lists: ChanTable,
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
    /// Insertion counter, for the order of [`Queues::items`].
    seq: u64,
}

struct Slot<T> {
    seq: u64,
    next: u32,
    item: Option<T>,
}

const NIL: u32 = u32::MAX;

impl<T> Queues<T> {
    /// Queues for `hosts` hosts; `wild` when the schedule has a wildcard source or tag.
    pub(super) fn new(hosts: usize, wild: bool) -> Self {
        if wild {
            Queues::PerHost((0..hosts).map(|_| Queue::default()).collect())
        } else {
            Queues::Exact(Exact {
                lists: ChanTable::default(),
                slots: Vec::new(),
                free: Vec::new(),
                seq: 0,
            })
        }
    }

    pub(super) fn push(&mut self, host: u32, src: u32, tag: u32, item: T) {
        let q = match self {
            Queues::PerHost(q) => return q[host as usize].push(src, tag, item),
            Queues::Exact(q) => q,
        };
        let slot = Slot {
            seq: q.seq,
            next: NIL,
            item: Some(item),
        };
        q.seq += 1;
        let i = match q.free.pop() {
            Some(i) => {
                q.slots[i as usize] = slot;
                i
            }
            None => {
                q.slots.push(slot);
                (q.slots.len() - 1) as u32
            }
        };
        match q.lists.get_mut((host, src, tag)) {
            Some((_, last)) => {
                q.slots[*last as usize].next = i;
                *last = i;
            }
            None => {
                q.lists.insert((host, src, tag), (i, i));
            }
        }
    }

    /// Hints that (`host`, `src`, `tag`) will be looked up soon (exact queues only).
    #[inline]
    pub(super) fn prefetch(&self, host: u32, src: u32, tag: u32) {
        if let Queues::Exact(q) = self {
            q.lists.prefetch((host, src, tag));
        }
    }

    /// Hints that the oldest entry of (`host`, `src`, `tag`) will be read soon (exact queues
    /// only); the channel's table entry should be in cache ([`Queues::prefetch`] before).
    #[inline]
    pub(super) fn prefetch_oldest(&self, host: u32, src: u32, tag: u32) {
        if let Queues::Exact(q) = self
            && let Some(s) = q
                .lists
                .get((host, src, tag))
                .and_then(|(first, _)| q.slots.get(first as usize))
        {
            super::prefetch::touch(s);
        }
    }

    /// The oldest entry of (`host`, `src`, `tag`), left in place: what [`Queues::take`] would
    /// return now, for a cache hint (exact queues only; None for per-host queues).
    #[inline]
    pub(super) fn peek(&self, host: u32, src: u32, tag: u32) -> Option<&T> {
        let Queues::Exact(q) = self else { return None };
        let (first, _) = q.lists.get((host, src, tag))?;
        q.slots.get(first as usize)?.item.as_ref()
    }

    /// Removes and returns the oldest entry of `host` compatible with (`src`, `tag`).
    pub(super) fn take(&mut self, host: u32, src: u32, tag: u32) -> Option<T> {
        let q = match self {
            Queues::PerHost(q) => return q[host as usize].take(src, tag),
            Queues::Exact(q) => q,
        };
        let k = (host, src, tag);
        let (first, last) = q.lists.get(k)?;
        let slot = &mut q.slots[first as usize];
        let item = slot.item.take();
        let next = slot.next;
        q.free.push(first);
        if first == last {
            q.lists.remove(k);
        } else if let Some(e) = q.lists.get_mut(k) {
            e.0 = next;
        }
        item
    }

    /// Every entry left as (host, source, tag, entry): hosts ascending, each host's in the
    /// order they came.
    pub(super) fn items(&self) -> Vec<(u32, u32, u32, &T)> {
        match self {
            Queues::PerHost(q) => q
                .iter()
                .enumerate()
                .flat_map(|(h, q)| {
                    q.items()
                        .into_iter()
                        .map(move |(s, t, x)| (h as u32, s, t, x))
                })
                .collect(),
            Queues::Exact(q) => {
                let mut all = Vec::new();
                for ((h, s, t), (first, _)) in q.lists.iter() {
                    let mut i = first;
                    while i != NIL {
                        let slot = &q.slots[i as usize];
                        if let Some(x) = &slot.item {
                            all.push(((h, slot.seq), s, t, x));
                        }
                        i = slot.next;
                    }
                }
                all.sort_by_key(|x| x.0);
                all.into_iter()
                    .map(|((h, _), s, t, x)| (h, s, t, x))
                    .collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both kinds answer exact queries alike and list what is left in the same order.
    #[test]
    fn exact_queues_match_per_host_queues() {
        let ops: [(bool, u32, u32, u32); 9] = [
            (true, 1, 0, 5),
            (true, 0, 2, 5),
            (true, 1, 0, 5),
            (false, 1, 0, 5),
            (true, 1, 3, 7),
            (false, 0, 2, 9),
            (true, 0, 2, 5),
            (false, 0, 2, 5),
            (true, 2, 1, 1),
        ];
        let mut a: Queues<usize> = Queues::new(3, true);
        let mut b: Queues<usize> = Queues::new(3, false);
        for (i, &(push, h, s, t)) in ops.iter().enumerate() {
            if push {
                a.push(h, s, t, i);
                b.push(h, s, t, i);
            } else {
                assert_eq!(a.take(h, s, t), b.take(h, s, t), "op {i}");
            }
        }
        assert_eq!(a.items(), b.items());
        // Hosts ascending (0, 1, 1, 2), each host's entries in the order they came.
        assert_eq!(
            b.items().iter().map(|x| *x.3).collect::<Vec<_>>(),
            vec![6, 2, 4, 8]
        );
    }
}
