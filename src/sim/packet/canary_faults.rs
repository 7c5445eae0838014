//! Canary's fault tolerance in the packet engine (Section 3.3; [`crate::canary::host`] states
//! the rules): workers' retransmission timers and requests, the leader's answer (the result,
//! or a failure of the block's generation sent to every worker), re-issue under the next id,
//! and the host-based fallback after `retries` failures. Armed only where packets can be lost
//! (the model's `loss`); control packets travel with the bypass bit, and carry the asking or
//! addressed host in the header's `switch` field. They are sent at the data packets' size (a
//! simplification: they would be header-only), which only matters in lossy runs.

use super::engine::Sim;
use crate::canary::protocol::Kind;
use crate::canary::switch::Header;

impl Sim<'_> {
    /// Arms rank `r`'s retransmission timer for block `b` of job `c` (when faults are on).
    pub(super) fn arm_retry(&mut self, c: u32, r: u32, b: u32) {
        let job = &self.cjobs[c as usize];
        if !job.faults {
            return;
        }
        let at = self.now + job.retransmit;
        if self.canary[c as usize].armed.insert((r, b), at).is_none() {
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
        self.arm_retry(c, r, b);
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
                } else if current && self.now < lead.since + job.retransmit {
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
                let p = plan.packet_gen(r, b, g, fallen);
                let to = if fallen { p.dst } else { p.switch };
                self.canary_emit(at, p, to, None);
                self.arm_retry(c, r, b);
            }
            Kind::Data => {}
        }
    }
}
