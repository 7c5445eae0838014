//! The event queue: a min-heap of [`Ev`]s on (time, ts) with LogGOPSim's tie order, and the
//! entries of the unexpected-message queue ([`Unexpected`]).

/// A heap entry: an op of `host` (`node` is its index in the rank), or a message arriving at
/// `host` from `src` (`node`: the send's index in `src`).
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

/// A 4-ary min-heap on (time, ts) with the events' payloads in a slab: LogGOPSim's priority
/// queue, with small entries for speed.
#[derive(Default)]
pub(super) struct Heap {
    keys: Vec<(u64, u64, u32)>,
    slab: Vec<Ev>,
    free: Vec<u32>,
}

impl Heap {
    pub(super) fn push(&mut self, ev: Ev) {
        let slot = match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = ev;
                i
            }
            None => {
                self.slab.push(ev);
                (self.slab.len() - 1) as u32
            }
        };
        let k = (ev.time, ev.ts, slot);
        let mut i = self.keys.len();
        self.keys.push(k);
        while i > 0 {
            let parent = (i - 1) / 4;
            if (self.keys[parent].0, self.keys[parent].1) <= (k.0, k.1) {
                break;
            }
            self.keys[i] = self.keys[parent];
            i = parent;
        }
        self.keys[i] = k;
    }

    pub(super) fn pop(&mut self) -> Option<Ev> {
        let top = *self.keys.first()?;
        let last = self.keys.pop()?;
        let n = self.keys.len();
        if n > 0 {
            let mut i = 0;
            loop {
                let first = 4 * i + 1;
                if first >= n {
                    break;
                }
                let mut best = first;
                for c in first + 1..(first + 4).min(n) {
                    if (self.keys[c].0, self.keys[c].1) < (self.keys[best].0, self.keys[best].1) {
                        best = c;
                    }
                }
                if (last.0, last.1) <= (self.keys[best].0, self.keys[best].1) {
                    break;
                }
                self.keys[i] = self.keys[best];
                i = best;
            }
            self.keys[i] = last;
        }
        self.free.push(top.2);
        Some(self.slab[top.2 as usize])
    }
}

/// A message waiting in the unexpected queue.
#[derive(Clone, Copy)]
pub(super) struct Unexpected {
    pub(super) src: u32,
    pub(super) node: u32,
    /// The receiving CPU time it was charged (for the trace of the receive that takes it).
    pub(super) o_start: u64,
    pub(super) o_end: u64,
}
