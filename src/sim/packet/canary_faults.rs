//! Canary's fault tolerance in the packet engine (Section 3.3; [`crate::canary::host`] states
//! the rules): workers' retransmission timers and requests, the leader's answer (the result,
//! or a failure of the block's generation sent to every worker), re-issue under the next id,
//! and the host-based fallback after `retries` failures. Armed only where packets can be lost
//! (the model's `loss`); control packets (requests and failure notices) travel with the
//! bypass bit, header-only, and carry the asking or addressed host in the header's `switch`
//! field.
//!
//! **The retransmission timeout.** As the paper says, a worker sets a block's timer "right
//! before transmitting it" (the packet leaves the NIC; [`super::engine`] makes a stream's
//! packets as the NIC serves them). Its length is the paper's 2 RTT (Section 6) only to
//! start with: a fixed timeout of twice the idle round trip is shorter than a large
//! allreduce's results take to come back once the hosts' links are busy (a block's result
//! waits behind every other block's on the way down, and loss adds re-sent blocks, requests
//! and notices to those links), so results that are merely late time out, their blocks fail
//! and are re-sent, which loads the links more: a congestion collapse (1 MiB at 1% loss on
//! examples/canary_small.coll took 150 ms against 106 us lossless, 14 M packets for 22.5 k).
//! With `retransmit: auto` every host therefore does what a real host stack does with its
//! retransmission timer (TCP, RFC 6298), per host ([`Rto`]):
//!
//! - each block's round trip, from sending its packet to its result arriving, is a sample,
//!   unless the block timed out or was re-sent (Karn's rule: such a result cannot be matched
//!   to one send);
//! - the timeout is SRTT + 4 RTTVAR (gains 1/8 and 1/4), never below the `auto` value of
//!   2 RTT on the idle network (Section 6), which is also the timeout before the first sample;
//! - each time a block's timer fires, that block's next timeout doubles (up to 64 times):
//!   exponential back-off, per block as the blocks are independent "segments".
//!
//! A leader fails a generation only when it is older than the leader's own current timeout.
//! A declared `retransmit: T` is used as written, fixed, without estimation or back-off.
//! (The switches' reclaim age stays `retries + 2` times the 2 RTT value, [`super::file`].)

use super::engine::Sim;
use crate::canary::host::Plan;
use crate::canary::protocol::Kind;
use crate::canary::switch::Header;

/// Times a block's timer doubles at most (2^6 = 64 times its host's timeout).
pub(super) const MAX_BACKOFF: u8 = 6;
/// In a (rank, block)'s `timeouts`: the timers fired in its current generation (low bits),
/// and whether one ever fired (Karn's rule).
const COUNT: u8 = 0x7f;
const TIMED_OUT: u8 = 0x80;

/// One host's retransmission timeout (ps), estimated as TCP's (RFC 6298, Section 2) from
/// its blocks' round trips, never below `floor` (the `auto` value, 2 RTT on the idle network).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rto {
    srtt: u64,
    rttvar: u64,
    pub(crate) rto: u64,
    floor: u64,
    sampled: bool,
}

impl Rto {
    pub(crate) fn new(floor: u64) -> Rto {
        Rto {
            srtt: 0,
            rttvar: 0,
            rto: floor,
            floor,
            sampled: false,
        }
    }

    /// A measured round trip `rtt` (ps): RFC 6298's update (alpha 1/8, beta 1/4, K = 4).
    pub(crate) fn sample(&mut self, rtt: u64) {
        if self.sampled {
            self.rttvar = (3 * self.rttvar + self.srtt.abs_diff(rtt)) / 4;
            self.srtt = (7 * self.srtt + rtt) / 8;
        } else {
            self.srtt = rtt;
            self.rttvar = rtt / 2;
            self.sampled = true;
        }
        self.rto = self
            .srtt
            .saturating_add(self.rttvar.saturating_mul(4))
            .max(self.floor);
    }
}

impl super::canary::CanaryState {
    /// Rank `r`'s result `h` of block `b` arrived at `now` (before it is recorded): a
    /// round-trip sample when it came down the tree (not a leader's answer to a request) for
    /// the generation the rank last sent, and no timer fired in that generation (Karn's rule:
    /// a result is matched to exactly one send; the generation in its id tells re-sent
    /// generations apart, as TCP's timestamps do).
    pub(super) fn sample(&mut self, r: u32, b: u32, h: &Header, plan: &Plan, now: u64) {
        let k = (u64::from(r) * u64::from(plan.blocks) + u64::from(b)) as usize;
        let Some(&sent) = self.sent_at.get(k) else {
            return;
        };
        let gen_sent = self.sent_gen.get(&(r, b)).copied().unwrap_or(0);
        if sent == u64::MAX
            || h.bypass
            || self.timeouts[k] & COUNT > 0
            || plan.gen_of(h.id) != gen_sent
            || self.has(r, b)
        {
            return;
        }
        self.rto[r as usize].sample(now.saturating_sub(sent));
    }
}

impl Sim<'_> {
    /// Arms rank `r`'s retransmission timer for block `b` of job `c` (when faults are on), as
    /// it `sends` the block (or asks for its result): its host's timeout, doubled for every
    /// time this block's timer fired in its generation (`auto`), or the declared one.
    pub(super) fn arm_retry(&mut self, c: u32, r: u32, b: u32, sends: bool) {
        let job = &self.cjobs[c as usize];
        if !job.faults {
            return;
        }
        let st = &mut self.canary[c as usize];
        let k = (u64::from(r) * u64::from(job.plan.blocks) + u64::from(b)) as usize;
        if sends {
            st.sent_at[k] = self.now;
        }
        let wait = if job.adaptive {
            st.rto[r as usize].rto << (st.timeouts[k] & COUNT).min(MAX_BACKOFF)
        } else {
            job.retransmit
        };
        let at = self.now.saturating_add(wait);
        if st.armed.insert((r, b), at).is_none() {
            self.canary_live += 1;
            self.push_retry(c, r, b, at);
        }
    }

    /// Rank `r`'s timer for block `b` fired: without the result, it asks the leader again.
    pub(super) fn canary_retry(&mut self, c: u32, r: u32, b: u32) {
        self.canary_live -= 1;
        let st = &mut self.canary[c as usize];
        match st.armed.get(&(r, b)) {
            Some(&due) if due > self.now => {
                // Restarted by a later send: wait until it is due.
                self.canary_live += 1;
                self.push_retry(c, r, b, due);
                return;
            }
            _ => {
                st.armed.remove(&(r, b));
            }
        }
        if st.has(r, b) {
            return;
        }
        let k =
            (u64::from(r) * u64::from(self.cjobs[c as usize].plan.blocks) + u64::from(b)) as usize;
        if st.timeouts[k] & COUNT < COUNT {
            st.timeouts[k] += 1;
        }
        st.timeouts[k] |= TIMED_OUT;
        let g0 = st.sent_gen.get(&(r, b)).copied().unwrap_or(0);
        let job = &self.cjobs[c as usize];
        let plan = &job.plan;
        let leader = plan.hosts[plan.leader(b) as usize];
        let me = plan.hosts[r as usize];

        let h = Header {
            dst: leader,
            id: plan.id_gen(b, g0),
            counter: 0,
            hosts: plan.ranks(),
            children: 0,
            switch: me,
            bypass: true,
            multicast: false,
            kind: Kind::Retransmit,
            data: 0,
        };
        self.canary_emit(me, h, leader, None);
        self.arm_retry(c, r, b, false);
    }

    /// A control packet `h` for block `b` of job `c` reached host `at`.
    pub(super) fn canary_control(&mut self, c: u32, at: u32, b: u32, h: Header) {
        let job = &self.cjobs[c as usize];
        let plan = &job.plan;
        let Some(&r) = self.canary[c as usize].rank_of.get(&at) else {
            return;
        };
        match h.kind {
            Kind::Retransmit => {
                let leader = plan.leader(b);
                let own = plan.value(leader, b);
                let st = &mut self.canary[c as usize];
                if r != leader {
                    st.fail(format!(
                        "a retransmission request for block {b} reached rank {r}, not its leader"
                    ));
                    return;
                }
                let Some(lead) = st.leads.get_mut(&b) else {
                    return;
                };
                let asker = h.switch;
                // The leader's own timeout: how long a generation's packets may take.
                let wait = if job.adaptive {
                    st.rto[leader as usize].rto
                } else {
                    job.retransmit
                };
                if !lead.done && lead.counter >= plan.ranks() {
                    // Complete, the result leaves after the leader's delay.
                    return;
                }
                if lead.done {
                    let reply = lead.unicast(plan, b, asker);
                    self.canary_emit(at, reply, asker, None);
                    return;
                }
                let current = plan.gen_of(h.id) == lead.generation;
                let tell: Vec<u32> = if lead.fallen && current {
                    // After a fallback the leader knows who is missing: only they resend.
                    if lead.from.contains(&asker) {
                        Vec::new()
                    } else {
                        vec![asker]
                    }
                } else if current && self.now < lead.since + wait {
                    // The generation is younger than a retransmission timeout: its packets may
                    // still be on their way (a worker whose notice was lost resends later).
                    Vec::new()
                } else if current {
                    lead.fail(own, job.retries);
                    lead.since = self.now;
                    st.failures += 1;
                    st.fallbacks += u64::from(lead.fallen && lead.generation == job.retries + 1);
                    (0..plan.ranks())
                        .filter(|&w| w != leader)
                        .map(|w| plan.hosts[w as usize])
                        .collect()
                } else {
                    vec![asker]
                };
                let id = plan.id_gen(b, lead.generation);
                for to in tell {
                    let notice = Header {
                        dst: to,
                        id,
                        counter: 0,
                        hosts: plan.ranks(),
                        children: 0,
                        switch: to,
                        bypass: true,
                        multicast: false,
                        kind: Kind::Failure,
                        data: 0,
                    };
                    self.canary_emit(at, notice, to, None);
                }
            }
            Kind::Failure => {
                let g = plan.gen_of(h.id);
                let st = &mut self.canary[c as usize];
                let fallen = g > job.retries;
                // A notice for a generation already re-sent is a duplicate, except after a
                // fallback, where it asks for this host's contribution again.
                if st.has(r, b)
                    || st
                        .sent_gen
                        .get(&(r, b))
                        .is_some_and(|&s| s > g || (s == g && !fallen))
                {
                    return;
                }
                st.sent_gen.insert((r, b), g);
                // A new generation is a new send: its back-off starts again.
                let k = (u64::from(r) * u64::from(plan.blocks) + u64::from(b)) as usize;
                st.timeouts[k] &= TIMED_OUT;
                let p = plan.packet_gen(r, b, g, fallen);
                let to = if fallen { p.dst } else { p.switch };
                self.canary_emit(at, p, to, None);
                self.arm_retry(c, r, b, true);
            }
            Kind::Data => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Rto;

    #[test]
    fn the_timeout_follows_rfc_6298_above_its_floor() {
        let mut r = Rto::new(30);
        assert_eq!(r.rto, 30, "before any sample: the floor (2 RTT)");
        r.sample(100);
        // First sample: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR.
        assert_eq!((r.srtt, r.rttvar, r.rto), (100, 50, 300));
        r.sample(100);
        // RTTVAR = 3/4 x 50 + 1/4 x 0, SRTT unchanged.
        assert_eq!((r.srtt, r.rttvar, r.rto), (100, 37, 248));
        for _ in 0..200 {
            r.sample(4);
        }
        assert_eq!(
            r.rto, 30,
            "a short round trip never takes it below the floor"
        );
        for _ in 0..200 {
            r.sample(1_000);
        }
        assert!(
            (1_000..1_100).contains(&r.rto),
            "a steady round trip of 1000: {}",
            r.rto
        );
    }
}
