//! Canary allreduces in the packet engine ([`CanaryJob`]): hosts packetise their blocks as the
//! NIC serves them, every switch a Canary packet reaches runs the protocol's rule table
//! ([`crate::canary::switch::step`]) on its descriptor table, timers fire as events, and the
//! leaders follow [`crate::canary::host`]. Packets a switch or leader creates (a timed-out
//! accumulator, multicast copies, results) wait in its aggregation memory like a switch
//! process's output ([`super::engine`]), and so does a packet a switch forwards (transit,
//! straggler, collision): every Canary packet is consumed by the next switch's pipeline, so it
//! takes no credit of that switch's port buffers, exactly as a static tree's packets to the next
//! switch process (when Canary packets took credit like transit packets, head-of-line blocking
//! behind background packets cut Canary's congested Fig. 7a goodput from 89 to 59 Gb/s while
//! the trees kept their exemption; the paper does not say how its SST switches buffer them).
//! Routing towards the root or the leader is the model's (adaptive by default), per packet and
//! per hop, with the default port chosen by the destination alone (the paper: "a default up port
//! (selected depending on the packet destination)"), so a block's packets meet at the same
//! switches unless congestion diverts them: the dynamic trees of Section 3. Repair traffic
//! (unicast between hosts where packets are lost) hashes its sender too, as ECMP does a flow:
//! by its destination alone, the repair of 1,024 hosts towards one leader queued at one spine
//! port (tens of thousands of packets), and 4 MiB on the paper's network at 1% loss stopped at
//! the packet limit on 2 of 8 seeds. Roots default to the
//! switch above each block's leader ([`crate::sema::model::CanaryRoots::Leader`]), which leaves
//! every leaf of a fat tree the choice of every spine.
//!
//! Faults (src/sim/packet/canary_faults.rs) are modelled where the model's `loss` is above 0.
//!
//! Every run checks the collective's postcondition: each rank gets every block's full
//! reduction (the fingerprint of all H contributions, counter H), the same on every rank; no
//! data packet reaches a host that does not lead its block or a leader after it finished; and
//! no descriptor of the allreduce is left allocated once the run has drained. A violation ends
//! the run with [`super::Stuck`] naming the block, rank or switch.

use super::engine::Sim;
use crate::canary::host::{Lead, Leads, Plan};
use crate::canary::protocol::{Protocol, Trigger};
use crate::canary::switch::{Ctx, Header, Out, step_with};
use crate::net::LinkId;
use rustc_hash::FxHashMap;

/// The `switch` of a leader's result flooded to every host (contributor recovery): switches
/// copy it down the leader's flood tree ([`Sim::canary_flood`]) instead of running their rules.
pub(super) const FLOOD: u32 = u32::MAX;

/// A Canary allreduce to run.
pub struct CanaryJob<'p> {
    pub name: String,
    pub plan: Plan,
    pub protocol: &'p Protocol,
    /// Switch timeout and the leader's delay (ps).
    pub timeout: u64,
    pub leader_delay: u64,
    /// This allreduce's share of every switch's descriptor table: `table_size` descriptors
    /// from `table_base` (all of it, from 0, unless allreduces run concurrently).
    pub table_size: u32,
    pub table_base: u32,
    /// Payload bytes per packet.
    pub payload: u64,
    /// Ports per shard of the children bitmap (restoration packets carry one shard).
    pub shard: u32,
    /// The allreduce's data size (for goodput).
    pub bytes: u64,
    /// Fault tolerance (Section 3.3), on where packets can be lost: hosts' retransmission
    /// timeout (ps), failed generations before the host-based fallback, and the switches'
    /// reclaim age (ps).
    pub faults: bool,
    pub retransmit: u64,
    /// The idle round trip of a request and its answer between the farthest hosts (ps;
    /// [`crate::cost::canary::Figures::direct`]): the least timeout of a direct round.
    pub direct_rtt: u64,
    /// The hops between the two participants farthest apart (the closed forms' d).
    pub diameter: u64,
    /// `retransmit: auto`: each host estimates its timeout from the blocks' round trips and
    /// backs off per block ([`super::canary_faults`]); a declared timeout stays as written.
    pub adaptive: bool,
    pub retries: u32,
    pub reclaim: u64,
    /// `recovery: auto` chose the recovery (`plan.contributors` says which).
    pub recovery_auto: bool,
}

/// The run-time state of one Canary allreduce.
pub(super) struct CanaryState {
    /// Index among all jobs (programs first).
    pub(super) job: u32,
    /// Where packets can be lost, the hosts' streams leave a share of their link to repair
    /// traffic ([`super::canary_faults`]): when they started, and the share and the repair
    /// traffic expected, per mille (0: unpaced).
    pub(super) pace: (u64, u64, u64),
    /// Where packets can be lost, the chance that a generation gets every contribution up
    /// (per million, [`super::canary_faults::Repair`]).
    pub(super) through: u64,
    /// Where packets can be lost, a floor under the events the run is expected to take
    /// ([`super::canary_faults::Repair`]).
    pub(super) floor: f64,
    pub(super) rank_of: FxHashMap<u32, u32>,
    pub(super) sends: Vec<Vec<u32>>,
    pub(super) leads: Leads,
    expected: Vec<u64>,
    got: Vec<u64>,
    left: Vec<u32>,
    pub(super) finish: Vec<u64>,
    ranks_left: u32,
    pub(super) wrong: Option<String>,
    pub(super) duplicates: u64,
    /// Data packets a leader dropped with contributor recovery: every rank they held, or
    /// one of them, was in its sum already.
    pub(super) dropped: u64,
    /// With contributor recovery, per finished block the requests for it since its last
    /// flood and when that left; and how many floods left in all.
    pub(super) asked_done: FxHashMap<u32, (u32, u64)>,
    pub(super) floods: u64,
    /// With contributor recovery, the most missing contributions a failed generation takes
    /// straight to its leader instead of re-issuing them through the switches: as many as a
    /// host link carries in a block lifetime, the time a re-issue takes through the switches.
    pub(super) direct: u32,
    /// Per (rank, block) re-sent after a failure: the generation it last sent, and whether
    /// that copy still waits at its host ([`super::canary_faults`]).
    resent: FxHashMap<(u32, u32), (u32, bool)>,
    /// The workers' loss detection ([`super::canary_worker`]), where faults are on.
    pub(super) workers: Option<super::canary_worker::Workers>,
    /// Blocks that fell back to the hosts.
    pub(super) fallbacks: u64,
    /// A reduce's root rank: only it must hold the results.
    reduce_root: Option<u32>,
    /// The leaders' loss detection ([`super::canary_leader`]), where faults are on.
    pub(super) leaders: Option<super::canary_leader::Leaders>,
}

/// Marks a message owner as a Canary job's host stream.
pub(super) const CANARY: u32 = 1 << 30;

pub(super) fn is_canary(owner: u32) -> bool {
    owner != super::port::BG && owner & CANARY != 0
}

impl CanaryState {
    /// The generation rank `r` last sent of block `b` (0: only the first).
    pub(super) fn sent_gen(&self, r: u32, b: u32) -> u32 {
        self.resent.get(&(r, b)).map_or(0, |x| x.0)
    }

    /// Rank `r` re-sends block `b` under generation `g`: the copy waits at its host.
    pub(super) fn resend(&mut self, r: u32, b: u32, g: u32) {
        self.resent.insert((r, b), (g, true));
    }

    /// Whether rank `r`'s copy of generation `g` of block `b` still waits at its host.
    pub(super) fn waiting(&self, r: u32, b: u32, g: u32) -> bool {
        self.resent.get(&(r, b)) == Some(&(g, true))
    }

    /// Rank `r`'s copy of generation `g` of block `b` left its host.
    pub(super) fn resent_left(&mut self, r: u32, b: u32, g: u32) {
        if let Some(x) = self.resent.get_mut(&(r, b)).filter(|x| x.0 == g) {
            x.1 = false;
        }
    }

    pub(super) fn new(job: u32, c: &CanaryJob) -> CanaryState {
        let p = &c.plan;
        let h = p.ranks();
        let sends: Vec<Vec<u32>> = (0..h).map(|r| p.sends(r)).collect();
        let mut leads = Leads::default();
        for b in 0..p.blocks {
            let (me, own) = (p.leader(b), p.value(p.leader(b), b));
            let lead = if p.contributors {
                Lead::with_contributors(own, me, h)
            } else {
                Lead::new(own)
            };
            leads.insert(b, lead);
        }
        let words = (u64::from(h) * u64::from(p.blocks)).div_ceil(64) as usize;
        CanaryState {
            job,
            rank_of: p
                .hosts
                .iter()
                .enumerate()
                .map(|(r, &n)| (n, r as u32))
                .collect(),
            sends,
            leads,
            expected: (0..p.blocks).map(|b| p.expected(b)).collect(),
            got: vec![0; words],
            left: vec![p.blocks; h as usize],
            finish: vec![0; h as usize],
            ranks_left: if p.blocks == 0 { 0 } else { h },
            pace: (0, 0, 0),
            through: 1_000_000,
            floor: 0.0,
            wrong: None,
            duplicates: 0,
            dropped: 0,
            asked_done: FxHashMap::default(),
            floods: 0,
            direct: 0,
            resent: FxHashMap::default(),
            workers: c.faults.then(|| super::canary_worker::Workers::new(p)),
            fallbacks: 0,
            reduce_root: p.reduce_root,
            leaders: c.faults.then(|| {
                let fixed = (!c.adaptive).then_some(c.retransmit);
                // `auto` is twice the block lifetime on the idle network.
                let mut l = super::canary_leader::Leaders::new(
                    p,
                    c.retransmit / 2,
                    fixed,
                    c.direct_rtt,
                    c.retries,
                );
                if p.contributors {
                    l.quiet = c.timeout.saturating_mul(2).max(1);
                }
                l
            }),
        }
    }

    pub(super) fn fail(&mut self, why: String) {
        self.wrong.get_or_insert(why);
    }

    /// The word and bit of (rank `r`, block `b`) in `got`.
    fn bit(&self, r: u32, b: u32) -> (usize, u64) {
        let i = u64::from(r) * self.expected.len() as u64 + u64::from(b);
        ((i / 64) as usize, 1u64 << (i % 64))
    }

    /// Whether rank `r` has block `b`'s result.
    pub(super) fn has(&self, r: u32, b: u32) -> bool {
        let (w, m) = self.bit(r, b);
        self.got[w] & m != 0
    }

    /// Rank `r` holds block `b`'s result `h` at `now`; true when the allreduce is complete.
    pub(super) fn result(&mut self, r: u32, b: u32, h: &Header, hosts: u32, now: u64) -> bool {
        // A reduce's other ranks get a release, not the result.
        let released = self.reduce_root.is_some_and(|root| root != r);
        if !released && (h.data != self.expected[b as usize] || h.counter != hosts) {
            self.fail(format!(
                "rank {r} got block {b} with {} of {hosts} contributions and a different sum",
                h.counter
            ));
        }
        let (w, m) = self.bit(r, b);
        if self.got[w] & m != 0 {
            self.duplicates += 1;
            return false;
        }
        self.got[w] |= m;
        let left = &mut self.left[r as usize];
        *left -= 1;
        if *left == 0 {
            self.finish[r as usize] = now;
            self.ranks_left -= 1;
            return self.ranks_left == 0;
        }
        false
    }
}

impl Sim<'_> {
    /// Posts every rank's stream of packets, and finishes blocks the leader holds alone.
    pub(super) fn canary_start(&mut self, c: u32) {
        let job = &self.cjobs[c as usize];
        let (h, blocks) = (job.plan.ranks(), job.plan.blocks);
        if job.faults && self.params.loss > 0.0 {
            let r = self.repair_share(c);
            let lifetime = self.cjobs[c as usize].retransmit / 2;
            let wire = self.canary_wire(c);
            let host = self.cjobs[c as usize].plan.hosts[0];
            let ser = self.out_links[host as usize]
                .first()
                .map_or(1, |&l| self.ports[l as usize].ser(wire).max(1));
            let job = &self.cjobs[c as usize];
            let (rtt, adaptive, d) = (job.direct_rtt, job.adaptive, job.diameter);
            let loss = self.params.loss;
            let st = &mut self.canary[c as usize];
            st.direct = u32::try_from(lifetime / ser).unwrap_or(u32::MAX);
            // With `retransmit: auto` (a declared one is used as written).
            if let Some(ws) = st.workers.as_mut().filter(|_| adaptive) {
                ws.set_tail(rtt, ser, lifetime, loss, d);
            }
            st.pace = (self.now, r.share, r.expected);
            st.through = r.through;
            st.floor = r.floor;
        }
        for r in 0..h {
            let n = self.canary[c as usize].sends[r as usize].len() as u32;
            if n == 0 {
                self.lead_pass(c, r, None);
                continue;
            }
            let first = self.canary[c as usize].sends[r as usize][0];
            let job = &self.cjobs[c as usize];
            // A broadcast's contributions are header-only: the trees carry only the root's data.
            let up = if job.plan.broadcast_root.is_some() {
                0
            } else {
                job.payload
            };
            let (src, dst, payload) = (job.plan.hosts[r as usize], job.plan.root(first), up);
            let m = self.new_msg(src, dst, u64::from(n) * payload, CANARY | c, r, true);
            self.msgs[m as usize].npk = n;
            self.canary_streams += 1;
            self.post(m);
        }
        if h == 1 {
            for b in 0..blocks {
                self.canary_live += 1;
                self.push_lead(c, b, self.now);
            }
        }
    }

    /// The header of packet `idx` of rank `r`'s stream in Canary job `c` (arming its
    /// retransmission timer where faults are on).
    pub(super) fn canary_stream_header(&mut self, c: u32, r: u32, idx: u32) -> (Header, u32) {
        let sends = &self.canary[c as usize].sends[r as usize];
        let (b, last) = (sends[idx as usize], idx as usize + 1 == sends.len());
        let h = self.cjobs[c as usize].plan.packet(r, b);
        self.worker_sent(c, r, b);
        self.lead_pass(c, r, (!last).then_some(b));
        (h, h.switch)
    }

    /// When packet `sent` of the stream of Canary job owner `owner` may leave on link `l`: a
    /// paced stream's packet i no earlier than its start plus i packet times of the link at
    /// the pace (see [`CanaryState::pace`]).
    pub(super) fn canary_due(&self, owner: u32, sent: u32, l: LinkId) -> u64 {
        let (t0, share, _) = self.canary[(owner & !CANARY) as usize].pace;
        if share == 0 {
            return 0;
        }
        let wire = self.canary_wire(owner & !CANARY);
        let slot = self.ports[l as usize].ser(wire) * 1000 / (1000 - share);
        t0.saturating_add(u64::from(sent).saturating_mul(slot))
    }

    /// Wire bytes of a Canary packet of job `c` that a switch or leader sends, the largest
    /// (with contributor recovery it carries the bitmap; a host's own contribution is named
    /// by its source and carries none: `msg_wire` in the engine). Streams are paced by it:
    /// the links above the hosts carry one sum per block at the streams' packet rate, so a
    /// stream paced by its own smaller packets would fill them (on the paper's 1,024 hosts
    /// at 4 MiB and 1% loss that stopped at the packet limit).
    pub(super) fn canary_wire(&self, c: u32) -> u64 {
        let plan = &self.cjobs[c as usize].plan;
        let bitmap = if plan.contributors {
            u64::from(plan.ranks().div_ceil(8))
        } else {
            0
        };
        self.cjobs[c as usize].payload + self.params.header + bitmap
    }

    /// The next hop at `at` towards `to` for a Canary packet (adaptive per packet). The
    /// default port of the allreduce's own packets depends on the destination only, as the
    /// paper's simulations choose it; that of repair traffic ([`Sim::repair`], `origin` its
    /// sender, else NONE) on its sender too, as ECMP hashes a unicast flow's addresses: the
    /// requests, notices, re-sent contributions and answers of many hosts to one leader then
    /// spread over every spine instead of queueing at the one its address hashes to.
    fn canary_port(&mut self, at: u32, to: u32, origin: u32) -> Option<LinkId> {
        let queued = &self.queued;
        let flow = if origin == super::port::NONE {
            u64::from(to)
        } else {
            u64::from(to) | u64::from(origin) << 32
        };
        let pick = super::route::mix(flow, 0x43_414e);
        let l = self
            .router
            .next_from(at as usize, to as usize, pick, |l| queued[l as usize]);
        if l.is_none() {
            if self.failed.is_some() {
                // Every minimal route runs through the failed switch (a restoration packet
                // for it, say): the packet is lost.
                self.drops += 1;
            } else {
                self.unroutable = Some((at, to));
            }
        }
        l
    }

    /// A new packet `h` (for `to`) leaving node `at` from its aggregation memory.
    pub(super) fn canary_emit(&mut self, at: u32, h: Header, to: u32, via: Option<LinkId>) {
        let origin = if self.repair(&h) {
            at
        } else {
            super::port::NONE
        };
        let Some(l) = via.or_else(|| self.canary_port(at, to, origin)) else {
            return;
        };
        let c = Plan::app_of(h.id);
        // A reduce sends nothing down the tree but header-only releases, a broadcast nothing
        // up it but header-only packets (Section 6).
        // Retransmission requests and failure notices are header-only too (Section 3.3).
        let release = h.kind != crate::canary::protocol::Kind::Data
            || self.cjobs.get(c as usize).is_some_and(|j| {
                (h.multicast && j.plan.reduce_root.is_some())
                    || (!h.multicast && j.plan.broadcast_root.is_some())
            });
        // Header-only packets carry no contributor set (contributor recovery is for
        // allreduce, whose releases are requests and notices, which name their host).
        let wire = if release {
            self.params.header
        } else {
            self.canary_wire(c)
        };
        let pid = self.new_canary_pkt(h, to, wire);
        // A Canary packet has no message and no flow key of its own: the key holds the sender
        // of repair traffic (NONE else), so that the switches on its way hash the same flow.
        self.pkts[pid as usize].key = u64::from(origin);
        let class = self.class_of(at, &h);
        self.queue_out(at, pid, l, class);
    }

    /// Whether `h` is repair traffic, which travels in the ports' strict-priority class
    /// ([`super::canary_leader`]): where packets can be lost, requests and notices, every
    /// packet of a re-issued generation, and a leader's answer to a request.
    fn repair(&self, h: &Header) -> bool {
        let Some(job) = self.cjobs.get(Plan::app_of(h.id) as usize) else {
            return false;
        };
        job.faults
            && (h.kind != crate::canary::protocol::Kind::Data
                || job.plan.gen_of(h.id) > 0
                || (h.multicast && h.bypass && !self.switch[h.dst as usize]))
    }

    /// The class `h` leaves node `at` in: repair traffic first at switches, and at hosts
    /// first beside paced streams, else last ([`super::canary_leader`]).
    fn class_of(&self, at: u32, h: &Header) -> super::engine::Class {
        use super::engine::Class;
        let paced = || {
            self.canary
                .get(Plan::app_of(h.id) as usize)
                .is_some_and(|st| st.pace.1 > 0)
        };
        match (self.repair(h), self.switch[at as usize]) {
            (false, _) => Class::Normal,
            (true, true) => Class::First,
            (true, false) if paced() => Class::First,
            (true, false) => Class::Last,
        }
    }

    /// Runs switch `at`'s rule table for `on` (a packet `h` from port `port`, or a timer of
    /// block `h.id`); what leaves, in a buffer to hand back to `self.outs`. None when the id
    /// belongs to no job.
    fn switch_step(
        &mut self,
        on: Trigger,
        at: u32,
        port: Option<u32>,
        h: Header,
    ) -> Option<Vec<Out>> {
        let job = self.cjobs.get(Plan::app_of(h.id) as usize)?;
        let ctx = Ctx {
            me: at,
            port,
            now: self.now,
            timeout: job.timeout,
            table_size: job.table_size,
            table_base: job.table_base,
            reclaim: job.reclaim,
        };
        let mut out = std::mem::take(&mut self.outs);
        out.clear();
        if let Some(r) = step_with(
            job.protocol,
            on,
            &mut self.tables,
            &mut self.sets,
            &ctx,
            h,
            &mut out,
        ) {
            *self.rule_hits.entry(r).or_insert(0) += 1;
        }
        Some(out)
    }

    /// Canary packet `pid` reached the far end of link `l`.
    pub(super) fn canary_arrive(&mut self, pid: u32, l: LinkId) {
        let at = self.ports[l as usize].to;
        let p = self.pkts[pid as usize];
        let (h, _) = self.hdrs[p.ch() as usize];
        if self.armed
            && self
                .params
                .failure
                .as_ref()
                .is_some_and(|f| f.among.binary_search(&at).is_ok())
        {
            self.fail(at);
        }
        if self.failed == Some(at) {
            // It was on the wire when the switch failed.
            self.drops += 1;
            self.canary_release(pid);
            return;
        }
        if !self.switch[at as usize] {
            let busy = self.ports[l as usize].ser(u64::from(p.wire));
            self.worker_link(at, &h, busy);
            self.canary_release(pid);
            self.canary_host(at, h);
            return;
        }
        if h.switch == FLOOD {
            self.canary_release(pid);
            self.canary_flood(at, h);
            return;
        }
        let port = self
            .port_in
            .get(l as usize)
            .copied()
            .filter(|&k| k != u32::MAX);
        let Some(mut out) = self.switch_step(Trigger::Packet, at, port, h) else {
            self.canary_release(pid);
            return;
        };
        let mut kept = false;
        for o in out.drain(..) {
            match o {
                Out::Forward(h2, to) if !kept => {
                    // The packet itself goes on, re-emitted from the pipeline (unless no
                    // route is left: then it is lost and released below).
                    let origin = match u32::try_from(p.key) {
                        Ok(o) if self.repair(&h2) => o,
                        _ => super::port::NONE,
                    };
                    let Some(next) = self.canary_port(at, to, origin) else {
                        continue;
                    };
                    kept = true;
                    self.hdrs[p.ch() as usize] = (h2, to);
                    let pk = &mut self.pkts[pid as usize];
                    pk.hop = 0;
                    pk.msg = super::port::NONE;
                    let class = self.class_of(at, &h2);
                    self.queue_out(at, pid, next, class);
                }
                o => self.canary_out(at, o),
            }
        }
        self.outs = out;
        if !kept {
            self.canary_release(pid);
        }
    }

    /// Carries out what a switch emits (besides forwarding the packet it got).
    fn canary_out(&mut self, at: u32, o: Out) {
        match o {
            Out::Forward(h, to) => self.canary_emit(at, h, to, None),
            Out::Multicast(h, ports) => {
                let mut rest = ports;
                while rest != 0 {
                    let k = rest.trailing_zeros();
                    rest &= rest - 1;
                    let Some(&l) = self.out_links[at as usize].get(k as usize) else {
                        continue;
                    };
                    let to = self.ports[l as usize].to;
                    self.canary_emit(at, h, to, Some(l));
                }
            }
            Out::Arm(id, slot, t) => {
                self.canary_live += 1;
                self.push_timer(at, slot, id, t);
            }
            Out::Reclaim(id, slot, t) => {
                self.canary_live += 1;
                self.push_reclaim(at, slot, id, t);
            }
        }
    }

    /// A switch's timer (`on`: timeout or reclaim) for block `id` in `slot` fired.
    pub(super) fn canary_timer(&mut self, on: Trigger, at: u32, slot: u32, id: u32) {
        self.canary_live -= 1;
        let Some(job) = self.cjobs.get(Plan::app_of(id) as usize) else {
            return;
        };
        if self.failed == Some(at) {
            return;
        }
        debug_assert_eq!(
            slot,
            job.table_base + crate::canary::switch::slot(id, job.table_size)
        );
        let blank = Header {
            id,
            ..job.plan.packet(0, job.plan.block_of(id))
        };
        let Some(mut out) = self.switch_step(on, at, None, blank) else {
            return;
        };
        for o in out.drain(..) {
            self.canary_out(at, o);
        }
        self.outs = out;
    }

    /// Makes the flood tree of leader host `leader` in `floods` unless it is there: every
    /// node's parent link on a breadth-first tree of the network from it (hosts and a failed
    /// switch forward nothing), once per leader (again after a switch fails).
    fn flood_tree(&mut self, leader: u32) {
        let (ports, out_links, switch) = (&self.ports, &self.out_links, self.switch);
        let failed = self.failed;
        self.floods.entry(leader).or_insert_with(|| {
            let mut parent = vec![u32::MAX; out_links.len()];
            let mut seen = vec![false; out_links.len()];
            seen[leader as usize] = true;
            let mut queue = std::collections::VecDeque::from([leader]);
            while let Some(n) = queue.pop_front() {
                if n != leader && !switch[n as usize] {
                    continue;
                }
                for &l in &out_links[n as usize] {
                    let to = ports[l as usize].to;
                    if !seen[to as usize] && failed != Some(to) {
                        seen[to as usize] = true;
                        parent[to as usize] = l;
                        queue.push_back(to);
                    }
                }
            }
            parent
        });
    }

    /// Flood packet `h` (a leader's result for every host, [`FLOOD`]) at node `at`: a copy
    /// down every link of its leader's flood tree that leaves `at`.
    pub(super) fn canary_flood(&mut self, at: u32, h: Header) {
        self.flood_tree(h.dst);
        let (parent, ports) = (&self.floods[&h.dst], &self.ports);
        let st = self.canary.get(Plan::app_of(h.id) as usize);
        // Down the tree's links from here; hosts that take no part in the allreduce get no
        // copy.
        let copies: Vec<(LinkId, u32)> = self.out_links[at as usize]
            .iter()
            .map(|&l| (l, ports[l as usize].to))
            .filter(|&(l, to)| parent[to as usize] == l)
            .filter(|&(_, to)| {
                self.switch[to as usize] || st.is_some_and(|st| st.rank_of.contains_key(&to))
            })
            .collect();
        for (l, to) in copies {
            self.canary_emit(at, h, to, Some(l));
        }
    }

    /// Drops the answers (unicast results of block id `id`) still queued at host `at`: a
    /// flood of that result is on its way to every host, and answers it supersedes would
    /// only hold the flood and the host's other repair traffic back (on the paper's 1,024
    /// hosts at 1% loss a flood waited about 11 us behind 127 answers; dropping them took
    /// the median of 1 MiB over seeds 1-5 from 212.5 to 203.5 us).
    pub(super) fn canary_purge(&mut self, at: u32, id: u32) {
        for k in 0..self.out_links[at as usize].len() {
            let l = self.out_links[at as usize][k] as usize;
            let (pkts, hdrs, port) = (&self.pkts, &self.hdrs, &mut self.ports[l]);
            let mut dropped = Vec::new();
            port.prio.retain(|&pid| {
                let p = pkts[pid as usize];
                let h = hdrs[p.ch() as usize].0;
                let answer = h.id == id
                    && h.bypass
                    && h.multicast
                    && h.switch != FLOOD
                    && h.kind == crate::canary::protocol::Kind::Data;
                if answer {
                    port.npk -= 1;
                    port.held -= u64::from(p.wire);
                    dropped.push(pid);
                }
                !answer
            });
            for pid in dropped {
                self.canary_release(pid);
            }
        }
    }

    /// Frees packet `pid` (absorbed or delivered), returning its buffer credit.
    pub(super) fn canary_release(&mut self, pid: u32) {
        let p = self.pkts[pid as usize];
        if p.held != super::port::NONE {
            self.ports[p.held as usize].credit += u64::from(p.wire);
            self.try_start(p.held);
        }
        self.free_hdrs.push(p.ch());
        self.free.push(pid);
        self.canary_live -= 1;
    }

    /// Packet `h` reached host `at`.
    fn canary_host(&mut self, at: u32, h: Header) {
        let c = Plan::app_of(h.id) as usize;
        let Some(job) = self.cjobs.get(c) else {
            return;
        };
        let b = job.plan.block_of(h.id);
        if h.kind != crate::canary::protocol::Kind::Data {
            self.canary_control(c as u32, at, b, h);
            return;
        }
        let hosts = job.plan.ranks();
        let leader = job.plan.leader(b);
        let now = self.now;
        let st = &mut self.canary[c];
        let Some(&r) = st.rank_of.get(&at) else {
            st.fail(format!(
                "block {b} reached node {at}, which does not take part"
            ));
            return;
        };
        if b >= job.plan.blocks {
            st.fail(format!(
                "rank {r} got a packet of block {b}, which does not exist"
            ));
            return;
        }
        if h.multicast {
            if job.faults {
                self.worker_result(c as u32, r, b, &h);
            }
            let done = self.canary[c].result(r, b, &h, hosts, now);
            if done {
                self.canary_done(c as u32);
            }
            return;
        }
        if r != leader {
            st.fail(format!(
                "a data packet of block {b} reached rank {r}, not its leader (rank {leader})"
            ));
            return;
        }
        let Some(lead) = st.leads.get_mut(&b) else {
            return;
        };
        let g = job.plan.gen_of(h.id);
        let contributors = job.plan.contributors;
        if job.faults && g != lead.generation {
            // A packet of a failed generation: its contribution is re-sent under the new id
            // (with contributor recovery, only where the sum lacks it: the ranks it holds
            // that are still missing count below).
            self.lead_late(c as u32, b, g, h.counter);
            if !contributors {
                return;
            }
        }
        let st = &mut self.canary[c];
        let Some(lead) = st.leads.get_mut(&b) else {
            return;
        };
        if lead.done && lead.fallen && g == lead.generation {
            // A fallen-back contribution sent again: its result was lost; send it again.
            let reply = lead.unicast(&job.plan, b, h.switch);
            self.canary_emit(at, reply, h.switch, None);
            return;
        }
        if lead.done && contributors {
            // Data the sum already holds, late or re-sent.
            st.dropped += 1;
            return;
        }
        if lead.done {
            st.fail(format!(
                "a data packet of block {b} reached its leader (rank {r}) after it had all {hosts} contributions"
            ));
            return;
        }
        // A contribution of the open generation (with contributor recovery, of a direct
        // round too: its clock keeps a round whose contributions still arrive open).
        if job.faults && (!lead.fallen || contributors) && g == lead.generation {
            self.lead_heard(c as u32, b);
        }
        let mut ranks = std::mem::take(&mut self.members);
        ranks.clear();
        if contributors {
            self.sets.members(h.from, &mut ranks);
        }
        let job = &self.cjobs[c];
        let st = &mut self.canary[c];
        let got = st.leads.get_mut(&b).and_then(|l| l.receive(&h, g, &ranks));
        self.members = ranks;
        match got {
            None => st.dropped += 1,
            Some(true) => {
                if job.faults {
                    self.lead_complete(c as u32, b);
                }
                let t = now + self.cjobs[c].leader_delay;
                self.canary_live += 1;
                self.push_lead(c as u32, b, t);
            }
            Some(false) => {
                let lead = &self.canary[c].leads[&b];
                if contributors && job.faults && !lead.fallen && g == lead.generation {
                    self.lead_arrived(c as u32, b);
                }
            }
        }
    }

    /// The leader of block `b` of job `c` sends the result and the restoration packets.
    pub(super) fn canary_lead(&mut self, c: u32, b: u32) {
        self.canary_live -= 1;
        let job = &self.cjobs[c as usize];
        let (plan, shard) = (&job.plan, job.shard);
        let r = plan.leader(b);
        let at = plan.hosts[r as usize];
        let hosts = plan.ranks();
        let Some(lead) = self.canary[c as usize].leads.get_mut(&b) else {
            return;
        };
        // After a fallback the paper's leader answers every worker anyway.
        let fallen = lead.fallen && !lead.contributors();
        let (own, mut outs) = lead.finish(plan, b, shard);
        if let Some(askers) = self.canary[c as usize]
            .leaders
            .as_mut()
            .and_then(|l| l.askers.remove(&b))
            .filter(|_| !fallen)
        {
            // Workers that asked while the generation was open get the result at once too.
            let lead = &self.canary[c as usize].leads[&b];
            outs.extend(askers.into_iter().map(|a| (lead.unicast(plan, b, a), a)));
        }
        if self.canary[c as usize].result(r, b, &own, hosts, self.now) {
            self.canary_done(c);
        }
        if hosts > 1 {
            for (h, to) in outs {
                self.canary_emit(at, h, to, None);
            }
        }
    }

    /// True when a Canary allreduce is unfinished and every program job has finished.
    pub(super) fn canary_stuck(&self) -> bool {
        let unfinished = self
            .canary
            .iter()
            .filter(|st| self.job_end[st.job as usize] == u64::MAX)
            .count();
        unfinished > 0 && unfinished == self.jobs_left
    }

    fn canary_done(&mut self, c: u32) {
        let j = self.canary[c as usize].job;
        if self.job_end[j as usize] == u64::MAX {
            self.job_end[j as usize] = self.now;
            self.jobs_left -= 1;
        }
    }

    /// Why Canary job `c` did not meet its postcondition, if it did not.
    pub(super) fn canary_check(&self, c: u32) -> Option<String> {
        let st = &self.canary[c as usize];
        if let Some(w) = &st.wrong {
            return Some(w.clone());
        }
        if st.ranks_left > 0 {
            let (r, left) = st
                .left
                .iter()
                .enumerate()
                .find(|(_, l)| **l > 0)
                .map(|(r, &l)| (r, l))
                .unwrap_or((0, 0));
            return Some(format!(
                "{} ranks never got every result (rank {r} misses {left} blocks)",
                st.ranks_left
            ));
        }
        let mut left: Vec<(u32, u32)> = self
            .tables
            .iter()
            .filter(|(_, d)| Plan::app_of(d.id) == c)
            .map(|(&(s, _), d)| (s, self.cjobs[c as usize].plan.block_of(d.id)))
            .collect();
        left.sort_unstable();
        left.first().map(|&(s, b)| {
            format!(
                "{} descriptors are left allocated after the run (block {b} at `{}`)",
                left.len(),
                self.router.node_name(s as usize)
            )
        })
    }
}
