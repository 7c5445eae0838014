//! The event queue: [`Ev`]s in LogGOPSim's order, ascending (time, ts), and the entries of the
//! unexpected-message queue ([`Unexpected`]).
//!
//! LogGOPSim keeps one binary heap. On lowered schedules that heap holds hundreds of thousands of
//! events (six per rank at 65,536 ranks) spread over a few dozen distinct times, and every pop
//! walked a path of cache misses through it. Here events are grouped by time ([`Events`]): an
//! ordered map from each pending time to a bucket, and in a bucket the events in ts order. ts is
//! a counter, so events given their ts in the event being handled arrive in order and are
//! appended to a plain FIFO (`run`). An event pushed behind a younger one (a busy op or message
//! put back with its old ts) goes to a second FIFO (`late_run`) while such events come in ts
//! order, which most do, and to a small per-time heap (`late`) otherwise. A pop takes the
//! earliest of the three fronts of the earliest time. The order is exactly the heap's: ts is
//! unique, so (time, ts) orders all events totally.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

/// A queue entry: an op of `host` (`node` is its index in the graph, see
/// [`super::graph::Graph`]), or a message arriving at `host` from `src` (`node`: the send's).
#[derive(Clone, Copy)]
pub(super) struct Ev {
    pub(super) time: u64,
    pub(super) ts: u64,
    pub(super) host: u32,
    pub(super) node: u32,
    pub(super) src: u32,
    pub(super) start: u64,
    pub(super) ty: u8,
}

/// An event in a `late` heap: the smallest ts on top.
struct Late(Ev);

impl PartialEq for Late {
    fn eq(&self, other: &Self) -> bool {
        self.0.ts == other.0.ts
    }
}
impl Eq for Late {}
impl PartialOrd for Late {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Late {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.ts.cmp(&self.0.ts)
    }
}

/// The events of one time.
#[derive(Default)]
struct Bucket {
    /// Ascending ts.
    run: VecDeque<Ev>,
    /// Events whose ts was smaller than the back of `run` when they came, in ascending ts
    /// while they come in that order (events put back by a busy CPU mostly do) ...
    late_run: VecDeque<Ev>,
    /// ... and the others.
    late: BinaryHeap<Late>,
}

impl Bucket {
    fn push(&mut self, ev: Ev) {
        if self.run.back().is_none_or(|b| b.ts < ev.ts) {
            self.run.push_back(ev);
        } else if self.late_run.back().is_none_or(|b| b.ts < ev.ts) {
            self.late_run.push_back(ev);
        } else {
            self.late.push(Late(ev));
        }
    }

    fn pop(&mut self) -> Option<Ev> {
        let ts = |e: Option<&Ev>| e.map_or(u64::MAX, |e| e.ts);
        let (r, lr, l) = (
            ts(self.run.front()),
            ts(self.late_run.front()),
            ts(self.late.peek().map(|l| &l.0)),
        );
        if r <= lr && r <= l {
            self.run.pop_front()
        } else if lr <= l {
            self.late_run.pop_front()
        } else {
            self.late.pop().map(|l| l.0)
        }
    }

    fn is_empty(&self) -> bool {
        self.run.is_empty() && self.late_run.is_empty() && self.late.is_empty()
    }
}

/// LogGOPSim's priority queue: pops the event with the smallest (time, ts).
#[derive(Default)]
pub(super) struct Events {
    /// Every time that has events, with its bucket in `buckets`.
    times: BTreeMap<u64, u32>,
    buckets: Vec<Bucket>,
    /// Buckets no time uses (empty, their memory kept).
    spare: Vec<u32>,
    /// The earliest entry of `times`, when known.
    first: Option<(u64, u32)>,
}

impl Events {
    pub(super) fn push(&mut self, ev: Ev) {
        let b = match self.first {
            Some((t, b)) if t == ev.time => b,
            _ => match self.times.get(&ev.time) {
                Some(&b) => b,
                None => {
                    let b = self.spare.pop().unwrap_or_else(|| {
                        self.buckets.push(Bucket::default());
                        (self.buckets.len() - 1) as u32
                    });
                    self.times.insert(ev.time, b);
                    if self.first.is_some_and(|(t, _)| ev.time < t) {
                        self.first = Some((ev.time, b));
                    }
                    b
                }
            },
        };
        self.buckets[b as usize].push(ev);
    }

    /// The `N` events that the next `N` pops return, unless events are pushed at the
    /// earliest time meanwhile or some wait in its `late` heap (left out): the earliest time's
    /// in-order run and late run, merged by ts. A hint for [`super::prefetch`].
    pub(super) fn coming<const N: usize>(&self) -> [Option<&Ev>; N] {
        let mut out = [None; N];
        let Some((_, b)) = self.first else { return out };
        let bk = &self.buckets[b as usize];
        let (mut i, mut j) = (0, 0);
        for slot in &mut out {
            let (a, z) = (bk.run.get(i), bk.late_run.get(j));
            *slot = match (a, z) {
                (Some(x), Some(y)) if y.ts < x.ts => {
                    j += 1;
                    z
                }
                (Some(_), _) => {
                    i += 1;
                    a
                }
                (None, Some(_)) => {
                    j += 1;
                    z
                }
                (None, None) => break,
            };
        }
        out
    }

    pub(super) fn pop(&mut self) -> Option<Ev> {
        let (t, b) = match self.first {
            Some(f) => f,
            None => {
                let (&t, &b) = self.times.first_key_value()?;
                self.first = Some((t, b));
                (t, b)
            }
        };
        let bucket = &mut self.buckets[b as usize];
        let ev = bucket.pop();
        if bucket.is_empty() {
            self.times.remove(&t);
            self.spare.push(b);
            self.first = None;
        }
        ev
    }
}

/// A message waiting in the unexpected queue.
#[derive(Clone, Copy)]
pub(super) struct Unexpected {
    pub(super) src: u32,
    /// The send's index in the graph.
    pub(super) node: u32,
    /// The receiving CPU time it was charged (for the trace of the receive that takes it).
    pub(super) o_start: u64,
    pub(super) o_end: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `coming` names the events the next pops return, put-back ones included, in order.
    #[test]
    fn coming_events_are_the_next_pops() {
        let ev = |time, ts| Ev {
            time,
            ts,
            host: 0,
            node: ts as u32,
            src: 0,
            start: 0,
            ty: 0,
        };
        let mut q = Events::default();
        // Events of time 0 and 5 in ts order, then events put back to time 5 with older ts.
        for ts in 0..3 {
            q.push(ev(0, ts));
        }
        for ts in 10..16 {
            q.push(ev(5, ts));
        }
        for ts in [3, 7, 9] {
            q.push(ev(5, ts));
        }
        let ts = |c: &[Option<&Ev>]| c.iter().map(|e| e.map(|e| e.ts)).collect::<Vec<_>>();
        // Before the first pop the earliest time is not known yet: no hint.
        assert_eq!(ts(&q.coming::<2>()), vec![None, None]);
        assert_eq!(q.pop().map(|e| e.ts), Some(0));
        assert_eq!(ts(&q.coming::<3>()), vec![Some(1), Some(2), None]);
        q.pop();
        q.pop();
        q.pop();
        let want: Vec<u64> = vec![7, 9, 10, 11, 12, 13, 14, 15];
        assert_eq!(
            ts(&q.coming::<8>()),
            want.iter().map(|&t| Some(t)).collect::<Vec<_>>()
        );
        let popped: Vec<u64> = std::iter::from_fn(|| q.pop().map(|e| e.ts)).collect();
        assert_eq!(popped, want);
    }

    /// Pushes and pops interleaved as the engine does them (times earlier than the last pop,
    /// events put back with their old ts, many ties), against a sorted set of (time, ts).
    #[test]
    fn pops_in_time_then_ts_order() {
        let mut q = Events::default();
        let mut model = std::collections::BTreeSet::new();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut ts = 0u64;
        let mut now = 0u64;
        let ev = |time, ts| Ev {
            time,
            ts,
            host: 0,
            node: 0,
            src: 0,
            start: 0,
            ty: 0,
        };
        for step in 0..300_000u32 {
            let r = next();
            if r % 3 != 0 || model.is_empty() {
                // A new event at now or shortly after; sometimes before (LogGOPSim queues an op
                // at its CPU's free time).
                let time = (now + r % 7).saturating_sub(if r % 11 == 0 { 3 } else { 0 });
                q.push(ev(time, ts));
                model.insert((time, ts));
                ts += 1;
            } else {
                let want = model.pop_first();
                let got = q.pop().map(|e| (e.time, e.ts));
                assert_eq!(got, want, "step {step}");
                if let Some((time, old)) = got {
                    now = time;
                    if r % 4 == 0 {
                        // Busy: put back later with its ts.
                        let later = time + 1 + next() % 5;
                        q.push(ev(later, old));
                        model.insert((later, old));
                    }
                }
            }
        }
        while let Some(want) = model.pop_first() {
            assert_eq!(q.pop().map(|e| (e.time, e.ts)), Some(want));
        }
        assert!(q.pop().is_none());
    }
}
