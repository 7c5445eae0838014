//! Events waiting for a busy CPU or NIC, parked per resource instead of put back one by one
//! (issue 41: an op with N dependencies, or any N ops ready at once on one CPU, cost N^2 pops:
//! every time one of them ran, each of the others was popped, found the CPU busy and was put
//! back).
//!
//! LogGOPSim puts an event whose CPU (a send: CPU and NIC; a message: the receiving CPU and
//! NIC) is busy back into its queue at the resource's next free time, with its old ts. Here
//! such an event joins the *group* of its resources (one per set of clocks an event checks: a
//! calc's CPU, a send's CPU and NIC, a message's CPU and receiving NIC). A group's members all
//! sit at one time, the group's, in ts order; only the first is represented in the event queue,
//! by a marker at exactly the (time, ts) it would have there ([`PARKED`]). When the marker pops,
//! its member is handled as the event itself would be, and the next member's marker is queued.
//!
//! The saving is when the first member finds its resources busy until `X`: in LogGOPSim every
//! other member, at (time, ts) later, would pop, find them busy until the same `X` and move to
//! `X`; here the whole group moves at once. That is exact when every clock of the group is
//! later than the group's time `G`: every event popped before the members' turns is at a time
//! of at most `G`, an event runs only when its clocks are at most its time, and what else
//! writes a clock (a rendezvous completion) only raises it to that time, so none of the group's
//! clocks changes before the members would pop. When one of the clocks is still free at `G` (a
//! send whose NIC is busy but whose CPU is not), another event could run on that clock in
//! between and change what later members would see; the event is then put back alone, as in
//! LogGOPSim. An event that finds its resources busy until a time other than its group's
//! (under the same condition, later: the group moves; else alone) is put back alone too.
//!
//! Markers go stale (the group moved, its first member changed); each names the one it stands
//! for by a number, and a stale one is dropped when it pops, before anything else happens.

use super::graph::PARKED;
use super::queue::{Ev, Events};
use std::collections::BTreeMap;

/// One set of clocks' waiting events.
#[derive(Default)]
struct Group {
    /// The time every member is at.
    time: u64,
    /// By ts.
    members: BTreeMap<u64, Ev>,
    /// The number of the marker in the queue standing for the first member; 0 for none.
    marker: u64,
    /// The (time, ts) that marker stands at.
    at: (u64, u64),
}

/// The groups; see the module doc. Disabled, every event is put back alone (LogGOPSim's own
/// way, which the tests compare against).
pub(super) struct Parking {
    enabled: bool,
    /// A group per set of clocks (two indices into the clocks; the same twice for one clock).
    keys: rustc_hash::FxHashMap<(u32, u32), u32>,
    groups: Vec<Group>,
    /// The last marker number given.
    last: u64,
}

impl Parking {
    pub(super) fn new(enabled: bool) -> Self {
        Parking {
            enabled,
            keys: Default::default(),
            groups: Vec::new(),
            last: 0,
        }
    }

    /// `ev` found the clocks `res` (indices into `clocks`) busy until `ev.time`: queued to pop
    /// where LogGOPSim would pop it.
    pub(super) fn put_back(
        &mut self,
        aq: &mut Events,
        ev: Ev,
        res: (usize, usize),
        clocks: &[u64],
    ) {
        let key = match (u32::try_from(res.0), u32::try_from(res.1)) {
            (Ok(a), Ok(b)) if self.enabled => (a, b),
            _ => return aq.push(ev),
        };
        let next = self.groups.len() as u32;
        let id = *self.keys.entry(key).or_insert(next);
        if id == next {
            self.groups.push(Group::default());
        }
        let g = &mut self.groups[id as usize];
        if g.members.is_empty() {
            g.time = ev.time;
        } else if g.time != ev.time {
            let frozen = g.time < ev.time && clocks[res.0] > g.time && clocks[res.1] > g.time;
            if !frozen {
                return aq.push(ev);
            }
            g.time = ev.time;
        }
        g.members.insert(ev.ts, ev);
        self.mark(aq, id);
    }

    /// Queues a marker for group `id`'s first member unless the one queued stands there.
    fn mark(&mut self, aq: &mut Events, id: u32) {
        let g = &mut self.groups[id as usize];
        let Some((&ts, first)) = g.members.first_key_value() else {
            g.marker = 0;
            return;
        };
        if g.marker != 0 && g.at == (g.time, ts) {
            return;
        }
        self.last += 1;
        g.marker = self.last;
        g.at = (g.time, ts);
        aq.push(Ev {
            time: g.time,
            ts,
            host: first.host,
            node: first.node,
            src: id,
            start: self.last,
            ty: PARKED,
        });
    }

    /// The event a marker popped from the queue stands for, at the group's time (taken out of
    /// its group, the next member's marker queued); None for a stale marker.
    pub(super) fn take(&mut self, aq: &mut Events, marker: &Ev) -> Option<Ev> {
        let g = self.groups.get_mut(marker.src as usize)?;
        if g.marker != marker.start {
            return None;
        }
        let (_, mut ev) = g.members.pop_first()?;
        ev.time = g.time;
        g.marker = 0;
        self.mark(aq, marker.src);
        Some(ev)
    }
}
