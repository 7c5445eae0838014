//! Canary leaders' own loss detection in the packet engine ([`Leaders`]): a leader fails a
//! block's generation when its own view shows a contribution was lost, instead of when a
//! worker asks (Section 3.3 has the leader fail a generation only when asked). With loss at
//! 1% per link, one block in six fails a generation on examples/canary_small.coll; a leader
//! that fails on a request cannot tell lost contributions from queued ones (a third of such
//! failures on one run had lost nothing), and one that waits for requests waits a worker
//! timeout per failure, serially for blocks that fail more than once. The leader is the one
//! host that sees a generation's counter, so it decides, as a host stack decides a segment is
//! lost (RACK, RFC 8985; the retransmission timer of RFC 6298), per leader and class (first
//! generations, and re-issued ones, which take a notice's trip more):
//!
//! - A first generation **starts** when the leader's own stream passes its block (every host
//!   sends its blocks in order, the leader skipping those it leads) or its first contribution
//!   arrives, whichever is first; a re-issued one when its failure notice leaves the leader.
//! - When a generation completes, the time since its start is a round-trip sample, and every
//!   open generation of the same class that started before it is **lost** once it has been
//!   open that sample plus a reordering window: RACK's rule. The window is a quarter of the
//!   least sample, times a multiplier that grows each time a failed generation turns out to
//!   have been complete after all (its late packets reach the counter), and returns to 1
//!   after 16 failures without that (RFC 8985's `reo_wnd_mult`, `reo_wnd_persist`).
//! - Each class has one **timer**, as a TCP sender has (RFC 6298, Section 5): armed while
//!   generations are open, restarted whenever one completes, doubled each time it fires.
//!   When it fires, nothing completed for a whole timeout, and every open generation older
//!   than it is lost: the tail, where no later generation completes. For first generations
//!   the timeout is the block lifetime on the idle network, 2d(l + t) + r (Section 3.2.2;
//!   half the `auto` retransmission timeout): the streams keep them coming while the network
//!   delivers. Re-issued ones start together once the streams end and wait behind each
//!   other's re-sent contributions, so their timeout is RFC 6298's RTO of their samples,
//!   never below that lifetime, raised by the Eifel response (RFC 4015) when a failure it
//!   caused proves spurious. A declared `retransmit` is used as written for both.
//! - Except a re-issued generation (not fallen back) that got a contribution within the last
//!   quarter of its timeout when the timer fires: its contributions are still arriving, each
//!   worker's re-sent copy leaving after the repair queued at its host. On 1,024 hosts of the
//!   paper's fat tree at 0.01% loss per link (a generation gets through with p = 0.85) those
//!   copies left their hosts over 250 us while the timer, starting at one lifetime and
//!   doubling, spent 3 retries in about 70 us: 643 failed generations and 90 fallbacks, each
//!   adding 1,023 answers to a leader's queue, and 1.21 ms against 96.5 us lossless; now
//!   170 failures (about the genuine ones), 3 fallbacks and 521 us. (Waiting while any
//!   contribution came since the last firing, or within a whole timeout, cost
//!   examples/canary_small.coll 25 to 40 us at 1 MiB: its re-issued generations gather in
//!   well under a timeout, and a lost contribution then waited a further backed-off one.)
//! - A lost generation fails: the next id, a failure notice to every worker (Section 3.3).
//!   After the fallback to the hosts the leader knows who is missing, and tells only them.
//! - A worker's request ([`super::canary_worker`]) for a finished block gets the result; for
//!   an older generation, the current one's notice; for the open one, the result as soon as
//!   the block is done, besides the multicast down the tree.
//!
//! **Repair traffic** (requests, notices, re-issued generations, answers to requests) leaves
//! a switch before everything else ([`super::engine::Class`]), so a recovery does not wait
//! behind the streams' queues. At hosts it goes first too (until the stream lags its pace by
//! half the switch timeout) where the streams are paced
//! ([`super::canary_faults`]: where packets can be lost, the streams leave a share of each
//! host link to repair), and last otherwise, so that it does not push a host's stream behind
//! the others': the switches aggregate a block's packets only within their timeout t of each
//! other, and hosts that re-send different amounts drift apart by more than t (3 us by the
//! end of a 1 MiB stream), after which every block reaches its root as stragglers, the core
//! links carry up to four times the packets, and the run took 2-3 times longer. The paper
//! does not say how its hosts and switches queue repair traffic.
//!
//! With contributor recovery ([`crate::sema::model::Recovery`]) a generation short of
//! contributions is lost after a quiet gap (twice the switch timeout, growing when a failure
//! proves early) once half a block lifetime has passed since it started (a whole one while it
//! lacks half the ranks: the far side's sums come levels later); its notices go only to the
//! ranks still missing, and the re-issued class's timer does not back off (on 1,024 hosts at
//! 1% loss every block's first generation fails, its leader leads one or two blocks, and a
//! doubled wait put 20 us into the last blocks' second direct round). Its direct rounds
//! (the fallback, where the missing ranks' contributions come straight to the leader) have
//! a clock of their own, a third class: a round runs from its last notice's departure, its
//! RTO is that of the direct rounds' own samples and never below the idle round trip of a
//! request and its answer ([`crate::cost::canary::Figures::direct`]), where the re-issued
//! class's floor is a block lifetime, which includes the switches' timeouts that no direct
//! packet waits for; with contributor recovery a contribution still arriving keeps the round
//! open, as for re-issued generations. On the paper's 1,024 hosts at 1% loss a round whose one missing rank lost
//! its notice or contribution waited 10-16 us for the re-issued class's timer (1 MiB,
//! seed 5: the last block done at 170 us). The paper's fallback to the hosts is a direct
//! round too and has the same clock: on examples/canary_small.coll at 1% loss (1 MiB,
//! seed 18) a block that fell back waited 49 us for the re-issued class's backed-off timer
//! (226 us against 106.5 us lossless, now 186 us).
//!
//! A worker's request for a generation that is still open is also a probe of the tail
//! ([`Sim::lead_probe`]): the generation is lost once it has been open longer than its
//! class's smoothed round trip plus the reordering window. Without it, a re-issued generation
//! lost after the streams ended, when no later generation completes, waited for its class's
//! backed-off timer (a block that failed four times took 100 us more on one run). A clock
//! with no completion yet probes with the round trip of a failure it made that proved
//! spurious (the Eifel response's estimate): on 256 hosts of the paper's fat tree at 0.01%
//! loss, a re-issued generation that lost a contribution waited for its leader's timer,
//! backed off to 244 us, while its workers asked 1,020 times (380 us against 94.75 us
//! lossless; now 152 us).

use super::canary_faults::{MAX_BACKOFF, Rto};
use super::engine::Sim;
use crate::canary::host::Plan;
use crate::canary::protocol::Kind;
use crate::canary::switch::Header;
use rustc_hash::FxHashMap;
use std::collections::BTreeSet;

/// Failures by RACK without a spurious one before the window multiplier returns to 1.
const PERSIST: u32 = 16;

/// One leader's round trips and open generations.
struct Clock {
    rtt: Rto,
    min_rtt: u64,
    /// The reordering window in quarters of `min_rtt`, and failures by RACK since it grew.
    mult: u64,
    persist: u32,
    /// This leader's open generations, by (start, block).
    open: BTreeSet<(u64, u32)>,
    /// When the timer is due (u64::MAX: not armed), and how often it fired since the last
    /// completion (its back-off).
    timer: u64,
    backoff: u8,
}

/// A failed generation whose packets may still come: to tell a spurious failure.
struct Late {
    generation: u32,
    counter: u32,
    start: u64,
    /// Failed by RACK's rule (else by the timer).
    rack: bool,
    heard: u64,
}

/// The leaders' state of one Canary allreduce where faults are on.
pub(super) struct Leaders {
    /// Per rank, the blocks it leads in order, and how many of them its stream has passed.
    led: Vec<Vec<u32>>,
    passed: Vec<usize>,
    /// Per block: when its current generation started (u64::MAX: not yet), and the earliest
    /// RACK check armed for it.
    start: Vec<u64>,
    due: Vec<u64>,
    /// Per block whose last generation failed: that generation and its counter since, to
    /// tell a spurious failure (and when its last contribution had come).
    late: FxHashMap<u32, Late>,
    clock: Vec<Clock>,
    /// Per block, the workers that asked for its result while its current generation was
    /// open: the leader answers them when it is done.
    pub(super) askers: FxHashMap<u32, Vec<u32>>,
    /// Per block, when the leader last got a contribution of its open generation (u64::MAX:
    /// none yet, [`Sim::lead_heard`]), what a re-issued generation's patience reads
    /// ([`Sim::lead_clock`]).
    last: Vec<u64>,
    /// With contributor recovery, how long a generation that is short of contributions may
    /// go without one before the rest is lost ([`Sim::lead_arrived`]): twice the switch
    /// timeout at first (a switch sends what it has a timeout after its first packet, so a
    /// block's sums reach the leader that far apart at each level), and once a failure
    /// proves early (a contribution of the failed generation comes after all), a quarter
    /// more than the gap that contribution came after, up to the block lifetime.
    pub(super) quiet: u64,
    quiet_max: u64,
    /// A declared timeout, used as written.
    fixed: Option<u64>,
    /// The first generation that is a direct round (the fallback: the missing ranks'
    /// contributions come straight to the leader).
    direct_from: u32,
    /// Failures decided by RACK, by the timer, and found spurious.
    pub(super) by_rack: u64,
    pub(super) by_timer: u64,
    pub(super) spurious: u64,
}

impl Leaders {
    /// For `plan`; `floor` is the least RTO (the block lifetime), `fixed` a declared timeout,
    /// `direct` the least RTO of a direct round (the idle round trip of a request and its
    /// answer) and `retries` the failed generations before one.
    pub(super) fn new(
        plan: &Plan,
        floor: u64,
        fixed: Option<u64>,
        direct: u64,
        retries: u32,
    ) -> Leaders {
        let h = plan.ranks() as usize;
        let mut led = vec![Vec::new(); h];
        for b in 0..plan.blocks {
            led[plan.leader(b) as usize].push(b);
        }
        Leaders {
            led,
            passed: vec![0; h],
            start: vec![u64::MAX; plan.blocks as usize],
            due: vec![u64::MAX; plan.blocks as usize],
            late: FxHashMap::default(),
            askers: FxHashMap::default(),
            last: vec![u64::MAX; plan.blocks as usize],
            quiet: 0,
            quiet_max: floor,
            clock: (0..3 * h)
                .map(|k| Clock {
                    rtt: Rto::new(if k % 3 == 2 { direct } else { floor }),
                    min_rtt: u64::MAX,
                    mult: 1,
                    persist: 0,
                    open: BTreeSet::new(),
                    timer: u64::MAX,
                    backoff: 0,
                })
                .collect(),
            fixed,
            direct_from: retries.saturating_add(1),
            by_rack: 0,
            by_timer: 0,
            spurious: 0,
        }
    }

    /// The clock of leader `r`'s generations like `g`: first generations, which start with
    /// the streams; re-issued ones, which start with a notice and so take a leg more; and
    /// direct rounds, whose contributions come straight to the leader (a request's round
    /// trip, no switch waiting for others).
    fn slot(&self, r: u32, g: u32) -> usize {
        let class = if g >= self.direct_from {
            2
        } else {
            usize::from(g > 0)
        };
        3 * r as usize + class
    }

    /// With contributor recovery, when block `b`'s open generation is lost unless another
    /// contribution comes: a quiet gap after the last one, and no earlier than half a block
    /// lifetime after it started (a lifetime is a round trip, and the sums of the far side
    /// of the tree reach the leader levels after those of its own side), a whole one while
    /// the sum lacks half the ranks (`short`).
    fn quiet_due(&self, b: u32, short: bool) -> u64 {
        let gap = self.last[b as usize].saturating_add(self.quiet);
        let start = self.start[b as usize];
        if start == u64::MAX {
            return gap;
        }
        let wait = if short {
            self.quiet_max
        } else {
            self.quiet_max / 2
        };
        gap.max(start.saturating_add(wait))
    }

    /// Clock `k`'s timeout, before its back-off (see the module doc).
    fn timeout(&self, k: usize) -> u64 {
        let x = &self.clock[k].rtt;
        let first = k % 3 == 0;
        self.fixed.unwrap_or(if first { x.floor } else { x.rto })
    }

    /// RACK's reordering window of clock `k`.
    fn window(&self, k: usize) -> u64 {
        let c = &self.clock[k];
        if c.min_rtt == u64::MAX {
            return 0;
        }
        (c.min_rtt / 4)
            .saturating_mul(c.mult)
            .min(c.rtt.srtt.max(c.min_rtt / 4))
    }
}

impl Sim<'_> {
    fn leaders(&mut self, c: u32) -> Option<&mut Leaders> {
        self.canary[c as usize].leaders.as_mut()
    }

    /// Rank `r`'s stream of job `c` serves its packet for block `next` (None: its stream has
    /// ended): the blocks it leads before that start their first generation.
    pub(super) fn lead_pass(&mut self, c: u32, r: u32, next: Option<u32>) {
        let Some(l) = self.leaders(c) else {
            return;
        };
        let mut go = Vec::new();
        let led = &l.led[r as usize];
        while let Some(&b) = led.get(l.passed[r as usize]) {
            if next.is_some_and(|n| b > n) {
                break;
            }
            l.passed[r as usize] += 1;
            go.push(b);
        }
        for b in go {
            self.lead_start(c, b);
        }
    }

    /// Block `b`'s current generation is underway (no-op when it already started): it opens,
    /// and its clock's timer is armed if it is not.
    pub(super) fn lead_start(&mut self, c: u32, b: u32) {
        let plan = &self.cjobs[c as usize].plan;
        let (r, ranks) = (plan.leader(b), plan.ranks());
        let now = self.now;
        let st = &mut self.canary[c as usize];
        let open = |l: &&crate::canary::host::Lead| !l.done && l.counter < ranks;
        let Some(g) = st.leads.get(&b).filter(open).map(|l| l.generation) else {
            return;
        };
        let Some(l) = st.leaders.as_mut() else {
            return;
        };
        if l.start[b as usize] != u64::MAX {
            return;
        }
        l.start[b as usize] = now;
        let k = l.slot(r, g);
        l.clock[k].open.insert((now, b));
        if l.clock[k].timer == u64::MAX {
            self.arm_clock(c, k);
        }
    }

    /// A contribution of block `b`'s open generation (not fallen back) reached its leader:
    /// the generation is underway, and this is its latest contribution.
    pub(super) fn lead_heard(&mut self, c: u32, b: u32) {
        self.lead_start(c, b);
        let now = self.now;
        if let Some(l) = self.leaders(c) {
            l.last[b as usize] = now;
        }
    }

    /// Arms clock `k`'s timer a (backed-off) timeout from now.
    fn arm_clock(&mut self, c: u32, k: usize) {
        let now = self.now;
        let Some(l) = self.leaders(c) else {
            return;
        };
        // With contributor recovery a re-issued generation's notice goes only to the ranks
        // still missing, whose few packets come straight: no back-off.
        let backoff = if l.quiet > 0 && k % 3 != 0 {
            0
        } else {
            l.clock[k].backoff.min(MAX_BACKOFF)
        };
        let wait = l.timeout(k) << backoff;
        let at = now.saturating_add(wait);
        l.clock[k].timer = at;
        self.canary_live += 1;
        self.push_clock(c, k as u32, at);
    }

    /// Clock `k`'s timer event for `at`: unless restarted since, every open generation of the
    /// clock older than its timeout is lost; the timer backs off.
    pub(super) fn lead_clock(&mut self, c: u32, k: u32, at: u64) {
        self.canary_live -= 1;
        let k = k as usize;
        let now = self.now;
        let Some(l) = self.leaders(c) else {
            return;
        };
        if l.clock[k].timer != at {
            return;
        }
        l.clock[k].timer = u64::MAX;
        let age = l.timeout(k);
        // A re-issued generation that got a contribution within the last quarter timeout is
        // still arriving (see the module doc): it stays open.
        let reissued = k % 3 != 0;
        let lost: Vec<u32> = l.clock[k]
            .open
            .iter()
            .take_while(|&&(s, _)| s.saturating_add(age) <= now)
            .map(|&(_, b)| b)
            .filter(|b| {
                !reissued
                    || l.last[*b as usize] == u64::MAX
                    || l.last[*b as usize].saturating_add(age / 4) <= now
            })
            .collect();
        l.clock[k].backoff = l.clock[k].backoff.saturating_add(1);
        l.by_timer += lost.len() as u64;
        for b in lost {
            self.lead_lost(c, b, false);
        }
        if self
            .leaders(c)
            .is_some_and(|l| !l.clock[k].open.is_empty() && l.clock[k].timer == u64::MAX)
        {
            self.arm_clock(c, k);
        }
    }

    /// Block `b`'s current generation has every contribution (at `now`): a round-trip
    /// sample, and RACK's rule for the leader's older open generations.
    pub(super) fn lead_complete(&mut self, c: u32, b: u32) {
        let r = self.cjobs[c as usize].plan.leader(b);
        let now = self.now;
        let st = &mut self.canary[c as usize];
        let g = st.leads.get(&b).map_or(0, |x| x.generation);
        let Some(l) = st.leaders.as_mut() else {
            return;
        };
        let s = std::mem::replace(&mut l.start[b as usize], u64::MAX);
        if s == u64::MAX {
            return;
        }
        let k = l.slot(r, g);
        let clock = &mut l.clock[k];
        clock.open.remove(&(s, b));
        let rtt = now - s;
        clock.rtt.sample(rtt);
        clock.min_rtt = clock.min_rtt.min(rtt);
        // Progress: the timer restarts, without back-off (or stops with nothing open).
        clock.backoff = 0;
        clock.timer = u64::MAX;
        let rearm = !clock.open.is_empty();
        let reo = l.window(k);
        let older: Vec<(u64, u32)> = l.clock[k].open.range(..(s, 0)).copied().collect();
        let mut checks = Vec::new();
        for (s2, b2) in older {
            let due = s2.saturating_add(rtt).saturating_add(reo).max(now);
            if due < l.due[b2 as usize] {
                l.due[b2 as usize] = due;
                checks.push((b2, due));
            }
        }
        for (b2, due) in checks {
            let Some(g) = self.canary[c as usize].leads.get(&b2).map(|x| x.generation) else {
                continue;
            };
            self.canary_live += 1;
            self.push_check(c, b2, g, due);
        }
        if rearm {
            self.arm_clock(c, k);
        }
    }

    /// With contributor recovery, a contribution of block `b`'s open generation reached the
    /// leader and the sum is still short: the generation is lost once no contribution has
    /// come for the quiet gap ([`Leaders::quiet`]); a check is armed if none is.
    pub(super) fn lead_arrived(&mut self, c: u32, b: u32) {
        let Some(lead) = self.canary[c as usize].leads.get(&b) else {
            return;
        };
        let (g, short) = (lead.generation, lead.counter * 2 < lead.total);
        let Some(l) = self.leaders(c) else {
            return;
        };
        if l.due[b as usize] != u64::MAX {
            return;
        }
        let due = l.quiet_due(b, short);
        l.due[b as usize] = due;
        self.canary_live += 1;
        self.push_check(c, b, g, due);
    }

    /// A data packet of generation `g` of block `b`, older than the current one, reached the
    /// leader with `counter` contributions: when the failed generation gathers all of them
    /// after all, its failure was spurious and the reordering window grows.
    pub(super) fn lead_late(&mut self, c: u32, b: u32, g: u32, counter: u32) {
        let (r, hosts) = {
            let p = &self.cjobs[c as usize].plan;
            (p.leader(b), p.ranks())
        };
        let now = self.now;
        let Some(l) = self.leaders(c) else {
            return;
        };
        let Some(e) = l.late.get_mut(&b).filter(|e| e.generation == g) else {
            return;
        };
        if l.quiet > 0 && e.heard != u64::MAX {
            // With contributor recovery: the quiet gap was too short.
            let gap = now.saturating_sub(e.heard);
            l.quiet = l.quiet.max(gap + gap / 4).min(l.quiet_max.max(l.quiet));
        }
        e.counter += counter;
        if e.counter < hosts {
            return;
        }
        if let Some(e) = l.late.remove(&b) {
            l.spurious += 1;
            let k = l.slot(r, g);
            let clock = &mut l.clock[k];
            if e.rack {
                clock.mult = (clock.mult + 1).min(64);
                clock.persist = 0;
            } else {
                // A timer that fired too early: the Eifel response (RFC 4015).
                clock.rtt.spurious(now.saturating_sub(e.start));
            }
        }
    }

    /// A worker asked for block `b`'s result while its generation is open, a probe of the
    /// tail: the generation is lost when it has been open longer than its class's smoothed
    /// round trip plus the reordering window (RACK's rule, with the estimate standing in for
    /// a later completion, which the tail lacks; RFC 8985's tail loss probe has the sender
    /// probe, here the workers do).
    pub(super) fn lead_probe(&mut self, c: u32, b: u32) {
        let now = self.now;
        let leader = self.cjobs[c as usize].plan.leader(b);
        let g = self.canary[c as usize]
            .leads
            .get(&b)
            .map_or(0, |x| x.generation);
        let Some(l) = self.leaders(c) else {
            return;
        };
        let k = l.slot(leader, g);
        let (s, x) = (l.start[b as usize], &l.clock[k]);
        // A clock whose only estimate is a spurious failure's round trip (the Eifel response)
        // probes with that.
        let rtt = match (x.min_rtt, x.rtt.srtt) {
            (u64::MAX, 0) => return,
            (u64::MAX, srtt) => srtt,
            (min, srtt) => srtt.max(min),
        };
        if s == u64::MAX {
            return;
        }
        if s.saturating_add(rtt).saturating_add(l.window(k)) > now {
            return;
        }
        l.by_rack += 1;
        self.lead_lost(c, b, true);
    }

    /// RACK's check of generation `g` of block `b` is due: a generation still open is lost.
    pub(super) fn lead_check(&mut self, c: u32, b: u32, g: u32) {
        self.canary_live -= 1;
        let now = self.now;
        let leader = self.cjobs[c as usize].plan.leader(b);
        let st = &self.canary[c as usize];
        let Some(short) = st
            .leads
            .get(&b)
            .filter(|x| x.generation == g)
            .map(|x| x.counter * 2 < x.total)
        else {
            return;
        };
        let Some(l) = self.leaders(c) else {
            return;
        };
        if l.start[b as usize] == u64::MAX || l.due[b as usize] > now {
            return;
        }
        let heard = l.last[b as usize];
        let due = l.quiet_due(b, short);
        if l.quiet > 0 && heard != u64::MAX && due > now {
            // With contributor recovery: contributions still come.
            l.due[b as usize] = due;
            self.canary_live += 1;
            self.push_check(c, b, g, due);
            return;
        }
        l.by_rack += 1;
        let k = l.slot(leader, g);
        let clock = &mut l.clock[k];
        clock.persist += 1;
        if clock.persist >= PERSIST {
            clock.mult = 1;
            clock.persist = 0;
        }
        self.lead_lost(c, b, true);
    }

    /// Block `b`'s open generation is lost (by RACK's rule when `rack`, else by the timer):
    /// it fails, or after the fallback the workers still missing are asked again.
    fn lead_lost(&mut self, c: u32, b: u32, rack: bool) {
        let ranks = self.cjobs[c as usize].plan.ranks();
        let st = &mut self.canary[c as usize];
        let Some(lead) = st.leads.get(&b) else {
            return;
        };
        if lead.done || lead.counter >= ranks {
            return;
        }
        if lead.fallen {
            let (leader, g) = (self.cjobs[c as usize].plan.leader(b), lead.generation);
            if let Some(l) = st.leaders.as_mut() {
                let k = l.slot(leader, g);
                let s = std::mem::replace(&mut l.start[b as usize], u64::MAX);
                l.clock[k].open.remove(&(s, b));
                l.due[b as usize] = u64::MAX;
            }
            self.lead_missing(c, b);
            return;
        }
        self.lead_fail(c, b, rack);
    }

    /// The leader of block `b` of job `c` fails its current generation, tells every worker
    /// (Section 3.3), and opens the next one.
    fn lead_fail(&mut self, c: u32, b: u32, rack: bool) {
        let job = &self.cjobs[c as usize];
        let plan = &job.plan;
        let leader = plan.leader(b);
        let own = plan.value(leader, b);
        let st = &mut self.canary[c as usize];
        let Some(lead) = st.leads.get_mut(&b) else {
            return;
        };
        let (g, counter) = (lead.generation, lead.counter);
        lead.fail(own, job.retries, st.direct);
        st.fallbacks += u64::from(lead.fallen && lead.generation == job.retries + 1);
        if let Some(l) = st.leaders.as_mut() {
            let s = std::mem::replace(&mut l.start[b as usize], u64::MAX);
            let k = l.slot(leader, g);
            l.clock[k].open.remove(&(s, b));
            l.due[b as usize] = u64::MAX;
            l.askers.remove(&b);
            l.last[b as usize] = u64::MAX;
            l.late.insert(
                b,
                Late {
                    generation: g,
                    counter,
                    start: s,
                    rack,
                    heard: l.last[b as usize],
                },
            );
        }
        self.lead_missing(c, b);
    }

    /// Canary packet `h` left host `at`: when it is a re-sent contribution, it no longer
    /// waits there; when it is its leader's failure notice, the generation
    /// it announces starts (a leader's notices may wait behind its stream,
    /// `class_of` in [`super::canary`]; the generation is underway once they are out).
    pub(super) fn canary_left_host(&mut self, at: u32, h: &Header) {
        let c = Plan::app_of(h.id);
        let Some(job) = self.cjobs.get(c as usize) else {
            return;
        };
        let (b, g) = (job.plan.block_of(h.id), job.plan.gen_of(h.id));
        if h.kind == Kind::Data && !h.multicast {
            // A re-sent contribution: a further notice queues another copy.
            let st = &mut self.canary[c as usize];
            if let Some(&r) = st.rank_of.get(&at) {
                st.resent_left(r, b, g);
            }
            return;
        }
        if h.kind == Kind::Retransmit {
            // A worker's request: its wait for the answer starts.
            if let Some(&r) = self.canary[c as usize].rank_of.get(&h.switch) {
                self.worker_asked(c, r, b, g);
            }
            return;
        }
        if h.kind != Kind::Failure {
            return;
        }
        if self.canary[c as usize]
            .leads
            .get(&b)
            .is_some_and(|l| l.generation == g)
        {
            self.lead_start(c, b);
            self.lead_restart(c, b, g);
        }
    }

    /// A notice of direct round `g` of block `b` left its leader: the round's clock runs from
    /// its last notice (they leave one by one behind the leader's other traffic, and each
    /// missing rank's contribution comes a request's round trip after its own).
    fn lead_restart(&mut self, c: u32, b: u32, g: u32) {
        let r = self.cjobs[c as usize].plan.leader(b);
        let now = self.now;
        let Some(l) = self.leaders(c) else {
            return;
        };
        let k = l.slot(r, g);
        let s = l.start[b as usize];
        if g < l.direct_from || s == u64::MAX || s == now {
            return;
        }
        l.clock[k].open.remove(&(s, b));
        l.clock[k].open.insert((now, b));
        l.start[b as usize] = now;
    }

    /// Block `b`'s leader sends its current generation's failure notice to every worker
    /// (after the fallback, or with contributor recovery, to those whose contribution it
    /// lacks).
    fn lead_missing(&mut self, c: u32, b: u32) {
        let plan = &self.cjobs[c as usize].plan;
        let leader = plan.leader(b);
        let Some(lead) = self.canary[c as usize].leads.get(&b) else {
            return;
        };
        let id = plan.id_gen(b, lead.generation);
        let at = plan.hosts[leader as usize];
        let tell: Vec<u32> = if lead.contributors() {
            // The leader's own data is in its sum from the start.
            lead.missing(plan.ranks())
                .into_iter()
                .map(|w| plan.hosts[w as usize])
                .collect()
        } else {
            (0..plan.ranks())
                .filter(|&w| w != leader)
                .map(|w| plan.hosts[w as usize])
                .filter(|h| !(lead.fallen && lead.from.contains(h)))
                .collect()
        };
        if tell.is_empty() {
            // No notice to wait for.
            self.lead_start(c, b);
        }
        for to in tell {
            self.canary_notice(at, id, to);
        }
    }

    /// What the loss recovery of every Canary job did (None where no job has faults on).
    pub(super) fn canary_recovery(&self) -> Option<super::report::Recovery> {
        let mut out: Option<super::report::Recovery> = None;
        for (st, job) in self.canary.iter().zip(self.cjobs) {
            let (Some(l), Some(w)) = (&st.leaders, &st.workers) else {
                continue;
            };
            let r = out.get_or_insert_with(|| super::report::Recovery {
                through: 1_000_000,
                ..Default::default()
            });
            r.through = r.through.min(st.through);
            r.retries = r.retries.max(job.retries);
            r.failed_rack += l.by_rack;
            r.failed_timer += l.by_timer;
            r.failed_spurious += l.spurious;
            r.fallbacks += st.fallbacks;
            r.asked_rack += w.by_rack;
            r.asked_timer += w.by_timer;
            r.asked_spurious += w.spurious;
            r.repair_share = r.repair_share.max(st.pace.1);
            r.repair_expected = r.repair_expected.max(st.pace.2);
            r.contributors |= job.plan.contributors;
            r.auto |= job.recovery_auto;
            r.ranks = r.ranks.max(job.plan.ranks());
            r.dropped += st.dropped;
            r.floods += st.floods;
        }
        out
    }

    /// Sends the failure notice of block id `id` from host `at` to host `to` (with
    /// contributor recovery it carries how many hosts the generation asks, the leader
    /// included, for the root's early completion).
    pub(super) fn canary_notice(&mut self, at: u32, id: u32, to: u32) {
        let c = Plan::app_of(id) as usize;
        let plan = &self.cjobs[c].plan;
        let mut notice = plan.control(Kind::Failure, id, to, to);
        if let Some(l) = self.canary[c]
            .leads
            .get(&plan.block_of(id))
            .filter(|l| l.contributors())
        {
            notice.hosts = l.gen_hosts;
        }
        self.canary_emit(at, notice, to, None);
    }
}
