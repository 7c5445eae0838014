//! Canary's fault tolerance in the packet engine (Section 3.3; [`crate::canary::host`] states
//! the rules): what a host does with a control packet (a worker's request at the leader, a
//! failure notice at a worker), re-issue under the next id, the host-based fallback after
//! `retries` failures, and the round-trip estimator ([`Rto`]). Armed only where packets can
//! be lost (the model's `loss`); control packets travel with the bypass bit, header-only, and
//! carry the asking or addressed host in the header's `switch` field. When a worker asks and
//! when a leader fails a generation are the business of [`super::canary_worker`] and
//! [`super::canary_leader`].
//!
//! **Pacing for repair** ([`Repair`]): where packets can be lost, every host sends
//! its stream at a common pace below its line rate and repair traffic (requests, notices,
//! re-sent contributions, answers) goes out first in the gaps, and ahead of a stream packet
//! that is due only while the stream is less than half the switch timeout behind its pace:
//! repair moves a host's stream by at most that, within which the switches still aggregate
//! its packets with the others'. (A stream that is due always first, as built before, caught
//! up at full line rate after any burst and held all repair meanwhile: a leader's 255
//! header-only failure notices on 256 hosts of the paper's fat tree took 13 us to leave one
//! per gap, so the re-issued contributions left over 13 us, reached the switches 1 us apart
//! as stragglers and crossed the root's link one by one, where they delayed the next
//! blocks past the leaders' timers; a host whose stream caught up after its notices held
//! its own re-sent contribution 10 us. At 0.01% loss per link, 1 MiB, `retries: 3`, seed 1,
//! that took 7.02 ms against 94.75 us lossless, 1,710 failed generations and 213 fallbacks;
//! now 380 us and 29 failures. Notices down the failed generation's tree instead, one packet
//! copied by the switches, measured worse: 515 us, and examples/canary_small.coll 232 us at
//! 1 MiB, since a worker whose contribution was lost is not in that tree and waits for its
//! own timer.) Repair ahead of due stream packets without a bound, as first built, let a
//! leader's burst of answers
//! after a fallback, 63 packets on 64 hosts, push its stream 5 us behind the others', past
//! the switches' 1 us timeout: its contributions reached the root as stragglers, the core
//! links carried each of them, and round trips grew from 2.6 to 28 us within 50 us. At 1%
//! loss on a 64-host fat tree of the paper's kind at 1 MiB with `retries: 0` that took
//! 707 us, now 376 us (78,647 straggler rules run, now 1,006); 128 hosts 11.09 ms, now
//! 963 us; examples/canary_small.coll at 1 MiB a median of 203 us over seeds 1-7, now
//! 159 us.) Held back behind the streams
//! instead, every repair waited for the end of its host's stream and then came in one burst
//! (1,200 failed generations at 4 MiB, 14,000 contributions reaching the switches as
//! stragglers, so the core links carried each of them); sent first beside unpaced streams,
//! hosts that re-send different amounts drift apart by more than the switch timeout and lose
//! aggregation. A common pace keeps the streams in step (a host that sent repair catches up
//! within its slack) as long as each host's repair fits in the share left. The share is
//! twice the repair traffic expected on each host link, at most a half: per block, the
//! re-sent contribution of a failed generation (a generation fails with probability q = 1 -
//! (1 - loss)^U over the U links its contributions climb, and is re-issued until it gets
//! through, q / (1 - q) times on average), and the answers a leader sends for results lost on
//! their way down (1 - (1 - loss)^D over the D links down to each worker), from the routes of
//! the first blocks; header-only requests and notices are left out. Twice, because repair
//! comes in bursts (a failure makes every worker re-send at once) and repairs are lost too;
//! a host whose repair outgrows its share falls behind the others, and at 1% loss on
//! examples/canary_small.coll a share of 25% against the expected 15% already lost the
//! aggregation at 4 MiB on some seeds. The paper does not say how hosts schedule repair.
//!
//! History, for the figures in older notes: workers first had the paper's timer per block
//! from its send, fixed at 2 RTT (1 MiB at 1% loss on examples/canary_small.coll took 150 ms
//! against 106 us lossless: late results timed out, failed their blocks and were re-sent, a
//! congestion collapse), then RFC 6298's estimate with back-off per block (786 us), with the
//! leader failing a generation whenever asked after its own timeout. (The switches' reclaim
//! age stays `retries + 2` times the `auto` value, [`super::file`].)

use super::engine::Sim;
use super::{Stuck, StuckKind};
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

/// What a Canary job's routes say about its repair where packets can be lost
/// ([`Sim::repair_share`], from the routes of up to 64 blocks).
pub(super) struct Repair {
    /// The repair traffic expected on a host link, and the share of it the streams leave
    /// (see the module doc), per mille.
    pub(super) expected: u64,
    pub(super) share: u64,
    /// The chance that a generation gets every contribution up, per million.
    pub(super) through: u64,
    /// A floor under the events the run is expected to take after the fallback alone: a
    /// block falls back unless one of its `retries + 1` generations gets through (so with
    /// probability at least 1 - (retries + 1) p), and a fallen-back contribution reaches the
    /// leader only in a try that crosses all d links of its route, (1 - loss)^-d tries on
    /// average, each at least one event.
    pub(super) floor: f64,
}

impl Sim<'_> {
    /// Canary job `c`'s [`Repair`].
    pub(super) fn repair_share(&mut self, c: u32) -> Repair {
        let keep = 1.0 - self.params.loss.clamp(0.0, 1.0);
        let plan = &self.cjobs[c as usize].plan;
        let n = plan.ranks();
        let blocks: Vec<(u32, u32)> = (0..plan.blocks.min(64))
            .map(|b| (plan.root(b), plan.hosts[plan.leader(b) as usize]))
            .collect();
        let hosts = plan.hosts.clone();
        if n < 2 || blocks.is_empty() {
            return Repair {
                expected: 0,
                share: 0,
                through: 1_000_000,
                floor: 0.0,
            };
        }
        let tries = f64::from(self.cjobs[c as usize].retries) + 1.0;
        let contributors = plan.contributors;
        // Re-sends per contribution that gets through with chance `1 - q`.
        let resends = |q: f64| {
            if q >= 1.0 {
                f64::INFINITY
            } else {
                q / (1.0 - q)
            }
        };
        let (mut sum, mut through, mut floor) = (0.0, 0.0, 0.0);
        for &(root, leader) in &blocks {
            let mut up = rustc_hash::FxHashSet::default();
            let (mut lost, mut fallback, mut own) = (0.0, 0.0, 0.0);
            let p = self.router.path(root, leader);
            let back = self.router.path_links(p).len();
            up.extend(self.router.path_links(p).iter().copied());
            for &w in hosts.iter().filter(|&&w| w != leader) {
                let p = self.router.path(w, root);
                let climb = back + self.router.path_links(p).len();
                up.extend(self.router.path_links(p).iter().copied());
                let q = self.router.path(root, w);
                let down = back + self.router.path_links(q).len();
                lost += 1.0 - keep.powi(down as i32);
                let f = self.router.path(w, leader);
                let d = self.router.path_links(f).len();
                if contributors {
                    // Only a contribution lost on its own climb is asked again, and only
                    // one lost in every try falls back.
                    let q = 1.0 - keep.powi(climb as i32);
                    own += resends(q);
                    floor += q.powf(tries) * keep.powi(-(d as i32));
                } else {
                    fallback += keep.powi(-(d as i32));
                }
            }
            let fail = 1.0 - keep.powi(up.len() as i32);
            through += 1.0 - fail;
            floor += (1.0 - tries * (1.0 - fail)).max(0.0) * fallback;
            // Each worker re-sends its contribution per failure (with contributor recovery,
            // per loss of its own); the leader answers the lost results, one block in n per
            // host.
            let resent = if contributors {
                own / f64::from(n - 1)
            } else {
                resends(fail)
            };
            sum += resent + lost / f64::from(n);
        }
        let expected = sum / blocks.len() as f64;
        let per_mille = |x: f64| (x * 1000.0).round().min(1000.0) as u64;
        Repair {
            expected: per_mille(expected),
            share: per_mille((2.0 * expected).min(0.5)),
            through: (through / blocks.len() as f64 * 1e6).round() as u64,
            floor: floor * f64::from(plan.blocks) / blocks.len() as f64,
        }
    }

    /// Why the run is refused before it starts, if it is: its lossy Canary jobs are expected
    /// to need more than twice `--max-events` tries after the fallback alone
    /// ([`Repair::floor`]; twice, since the floor is an average).
    pub(super) fn canary_hopeless(&self) -> Option<Stuck> {
        let floor = self.canary.iter().map(|st| st.floor).sum::<f64>();
        let limit = self.params.max_events;
        (limit > 0 && floor > 2.0 * limit as f64).then(|| Stuck {
            job: 0,
            ops_left: 0,
            why: format!(
                "at {} loss per link, its Canary blocks fall back to the hosts, whose contributions are expected to need at least {floor:.3e} tries to cross their routes whole, more than twice the limit of {limit} events",
                self.params.loss
            ),
            kind: StuckKind::Limit("--max-events", limit, floor.min(u64::MAX as f64) as u64),
        })
    }

    /// Why a run that reached a limit took so much, where a lossy Canary job explains it:
    /// the chance that a generation gets every contribution up, and what the recovery did
    /// so far (appended to the limit's message).
    pub(super) fn canary_limit_why(&self) -> Option<String> {
        if self.params.loss <= 0.0 {
            // Faults from a switch failure alone lose no generation to the links.
            return None;
        }
        let (st, job) = self
            .canary
            .iter()
            .zip(self.cjobs)
            .filter(|(st, _)| st.leaders.is_some())
            .min_by_key(|(st, _)| st.through)?;
        let l = st.leaders.as_ref()?;
        let p = if st.through == 0 {
            "< 1e-6".to_string()
        } else {
            format!("{:.3e}", st.through as f64 / 1e6)
        };
        let how = if job.plan.contributors {
            "contributor recovery asks only the missing ranks".to_string()
        } else {
            format!(
                "whose leaders answer each of {} workers (Section 3.3's recovery re-sends a failed block from every rank, so its traffic grows with the ranks)",
                job.plan.ranks().saturating_sub(1)
            )
        };
        Some(format!(
            "; at {} loss per link a generation of Canary's {} blocks on {} ranks gets every contribution up with p = {p}, so far {} generations failed and {} blocks fell back to the hosts, {how}",
            self.params.loss,
            job.plan.blocks,
            job.plan.ranks(),
            l.by_rack + l.by_timer,
            st.fallbacks,
        ))
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
                    if lead.contributors() {
                        // Many askers of one block lost its result high in its tree: one
                        // flood answers them all, and what they asked before it reaches them
                        // is not answered again: a request that reaches the leader within an
                        // idle round trip of the flood (the flood's way to the asker and the
                        // request's back) left before the flood could reach its asker. One
                        // that comes later was sent by an asker the flood missed.
                        let (now, hold) = (self.now, job.direct_rtt);
                        let many = (plan.ranks() / 8).max(2);
                        let e = st.asked_done.entry(b).or_insert((0, u64::MAX));
                        if e.1 != u64::MAX && now < e.1.saturating_add(hold) {
                            return;
                        }
                        e.0 += 1;
                        if e.0 >= many {
                            *e = (0, now);
                            st.floods += 1;
                            let flood = Header {
                                switch: super::canary::FLOOD,
                                ..lead.unicast(plan, b, at)
                            };
                            self.canary_purge(at, flood.id);
                            self.canary_flood(at, flood);
                            return;
                        }
                    }
                    let reply = lead.unicast(plan, b, asker);
                    self.canary_emit(at, reply, asker, None);
                    return;
                }
                let current = plan.gen_of(h.id) == lead.generation;
                // A worker behind (its notice was lost) gets the current generation's notice,
                // after the fallback so does one whose contribution is missing; with
                // contributor recovery, exactly those whose contribution is missing do. The
                // rest is the leader's own decision ([`super::canary_leader`]).
                let behind = if lead.contributors() {
                    let rank = st.rank_of.get(&asker).copied();
                    !rank.is_some_and(|a| lead.has(a))
                } else {
                    !current || (lead.fallen && !lead.from.contains(&asker))
                };
                if behind {
                    let id = plan.id_gen(b, lead.generation);
                    self.canary_notice(at, id, asker);
                } else if !lead.fallen || lead.contributors() {
                    // The request shows the block is underway; the leader answers it when
                    // the block is done (with contributor recovery the asker's data is in, so
                    // the result comes down its tree; if that is lost it asks again).
                    if let Some(l) = st.leaders.as_mut().filter(|_| !lead.contributors()) {
                        let a = l.askers.entry(b).or_default();
                        if !a.contains(&asker) {
                            a.push(asker);
                        }
                    }
                    self.lead_start(c, b);
                    self.lead_probe(c, b);
                }
            }
            Kind::Failure => {
                let g = plan.gen_of(h.id);
                let st = &mut self.canary[c as usize];
                let fallen = g > job.retries;
                // A notice for a generation already re-sent is a duplicate, except after a
                // fallback, where it asks for this host's contribution again.
                let s = st.sent_gen(r, b);
                if st.has(r, b) || (s > 0 && (s > g || (s == g && !fallen))) {
                    return;
                }
                // A copy of this generation still waiting at this host answers this notice
                // too: a leader that asks again after the fallback, while the contributions
                // it asked for wait behind the streams, does not queue a copy per ask.
                if st.waiting(r, b, g) {
                    return;
                }
                st.resend(r, b, g);
                let mut p = plan.packet_gen(r, b, g, fallen);
                // The generation's host count (all of them, but with contributor recovery).
                p.hosts = h.hosts;
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
