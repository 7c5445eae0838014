//! Canary's fault tolerance in the packet engine (Section 3.3; [`crate::canary::host`] states
//! the rules): what a host does with a control packet (a worker's request at the leader, a
//! failure notice at a worker), re-issue under the next id, the host-based fallback after
//! `retries` failures, and the round-trip estimator ([`Rto`]). Armed only where packets can
//! be lost (the model's `loss`); control packets travel with the bypass bit, header-only, and
//! carry the asking or addressed host in the header's `switch` field. When a worker asks and
//! when a leader fails a generation are the business of [`super::canary_worker`] and
//! [`super::canary_leader`].
//!
//! History, for the figures in older notes: workers first had the paper's timer per block
//! from its send, fixed at 2 RTT (1 MiB at 1% loss on examples/canary_small.coll took 150 ms
//! against 106 us lossless: late results timed out, failed their blocks and were re-sent, a
//! congestion collapse), then RFC 6298's estimate with back-off per block (786 us), with the
//! leader failing a generation whenever asked after its own timeout. (The switches' reclaim
//! age stays `retries + 2` times the `auto` value, [`super::file`].)

use super::engine::Sim;
use crate::canary::protocol::Kind;
use crate::canary::switch::Header;

/// Times a timer doubles at most (2^6 = 64 times its timeout).
pub(super) const MAX_BACKOFF: u8 = 6;

/// A retransmission timeout (ps) estimated as TCP's (RFC 6298, Section 2) from round-trip
/// samples, never below `floor` (the P4 hosts' program keeps the same estimator).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rto {
    pub(crate) srtt: u64,
    rttvar: u64,
    pub(crate) rto: u64,
    pub(crate) floor: u64,
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

impl Rto {
    /// A timeout turned out spurious, the round trip being `rtt` after all: the Eifel
    /// response (RFC 4015, Section 3.1): SRTT and RTTVAR at least that round trip and half
    /// of it, so the timeout is at least three times it.
    pub(crate) fn spurious(&mut self, rtt: u64) {
        self.srtt = self.srtt.max(rtt);
        self.rttvar = self.rttvar.max(rtt / 2);
        self.sampled = true;
        self.rto = self
            .srtt
            .saturating_add(self.rttvar.saturating_mul(4))
            .max(self.floor);
    }
}

impl Sim<'_> {
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
                let st = &mut self.canary[c as usize];
                if r != leader {
                    st.fail(format!(
                        "a retransmission request for block {b} reached rank {r}, not its leader"
                    ));
                    return;
                }
                let Some(lead) = st.leads.get(&b) else {
                    return;
                };
                let asker = h.switch;
                if lead.done {
                    let reply = lead.unicast(plan, b, asker);
                    self.canary_emit(at, reply, asker, None);
                    return;
                }
                let current = plan.gen_of(h.id) == lead.generation;
                // A worker behind (its notice was lost) gets the current generation's notice,
                // after the fallback so does one whose contribution is missing; the rest is
                // the leader's own decision ([`super::canary_leader`]).
                if !current || (lead.fallen && !lead.from.contains(&asker)) {
                    let id = plan.id_gen(b, lead.generation);
                    self.canary_notice(at, id, asker);
                } else if !lead.fallen {
                    // The request shows the block is underway; the leader answers it when
                    // the block is done.
                    if let Some(l) = st.leaders.as_mut() {
                        let a = l.askers.entry(b).or_default();
                        if !a.contains(&asker) {
                            a.push(asker);
                        }
                    }
                    self.lead_start(c, b);
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
                self.worker_sent(c, r, b);
            }
            Kind::Data => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Rto;

    #[test]
    fn a_spurious_timeout_raises_the_estimate_to_the_late_round_trip() {
        let mut r = Rto::new(30);
        r.sample(40);
        assert_eq!(r.rto, 40 + 4 * 20);
        // The Eifel response (RFC 4015): SRTT and RTTVAR at least the late sample and half.
        r.spurious(200);
        assert_eq!((r.srtt, r.rttvar, r.rto), (200, 100, 600));
        // A shorter late sample lowers nothing.
        r.spurious(50);
        assert_eq!(r.rto, 600);
    }

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
