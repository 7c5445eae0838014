//! The discrete-event loop of the packet simulator ([`simulate`]): integer picoseconds, one
//! event queue ordered by time, first in first out among equal times ([`crate::sim::radix`]),
//! so a run is a function of its inputs and seed.
//!
//! - **Packets.** A message of n bytes is `ceil(n / payload)` packets (at least one); each
//!   carries its share of the payload plus the header on the wire. A host posts a message
//!   `overhead` after its send starts, to the NIC port of its first hop; the port packetises it
//!   lazily, one packet per transmission, and the send completes when the last packet has left.
//! - **Links.** Each directed link has one output port: packets to forward queue per input
//!   (each incoming link, and the switch's own process) and the port serves the inputs round
//!   robin, a packet each, as a switch crossbar arbitrates fairly between input ports (so a
//!   tree's stream gets one input's share of a link that background traffic from many inputs
//!   also wants); transit packets and the host's own messages take turns; serialising one packet at a time at the
//!   link's bandwidth (rounded up to whole picoseconds per packet). Messages queued at a port
//!   are served round robin, one packet each in turn. A packet reaches the far end
//!   the link latency after its last bit left (store and forward: a switch forwards a packet
//!   only once it has all of it), plus `switch_delay` when the far end is a switch or forwards
//!   the packet (a compute node of a direct network). There it is routed ([`super::route`]) into
//!   the next output port, or consumed by its destination (a rank, or a switch process).
//! - **Flow control: lossless, credit based** (InfiniBand, HPC fabrics, SST merlin). Each link
//!   has `queue` bytes of credit for its far end's buffer: a port may start sending a packet that
//!   the far end will forward only while it holds credit for the whole packet; the credit comes
//!   back when the packet has completely left that far end. A port whose head packet lacks
//!   credit *stalls* (head-of-line blocking, so congestion spreads back toward its sources, as in
//!   real lossless networks); packets are never dropped, and the report counts stalls and their
//!   time instead of drops. Credit returns without delay (no credit latency), and packets bound
//!   for the far end itself need no credit (hosts and switch processes consume at line rate).
//!   Packets a switch process emits (aggregated results) enter its output queues without
//!   credit: the switch's aggregation memory holds them (so they do not count as the port's
//!   buffer occupancy that adaptive routing reads, either), so a congested tree link does not
//!   push back on the hosts feeding the tree through credit; a static-trees allreduce's window
//!   (below) is what holds its hosts back.
//!   Only switches' buffers are flow controlled: a compute node that forwards (a ring, torus or
//!   hypercube of hosts, a direct network) keeps transit packets in host memory, so direct
//!   networks cannot deadlock on their cyclic routes. Lossless switched networks can deadlock
//!   on cyclic routes (a ring or torus of switches under heavy load) without virtual channels,
//!   which this model does not have: such a run ends with [`Stuck`]. Fat trees route up then
//!   down and cannot.
//! - **Ops** follow [`super::job`]: ranks run the IR at message level; switch processes stream
//!   per packet. Host reductions take `gamma` per byte on the host's CPU, one after another;
//!   switch reductions take `aggregation_delay` per packet.
//! - **Windows.** A job with a `window` (a static-trees allreduce: the aggregation slots each
//!   switch reserves for it, as SHARP, SwitchML, ATP and PANAMA reserve memory before they run,
//!   the Canary paper's Section 2.2) lets each of its hosts have at most that many packets sent
//!   into switch processes whose results have not come back: a host's next packet waits for a
//!   result, as SwitchML's hosts reuse a slot only once its result is in (and as collc's P4
//!   static trees do, src/backend/p4/trees.rs). So a tree runs at the rate of its round trip,
//!   which queueing on any of its links lengthens. The hosts post their blocks in the same
//!   order and take turns among them packet by packet, so the oldest packet in flight is the
//!   same block on every host and its result can always complete: the window cannot deadlock.
//!   Canary reserves nothing (its descriptors are allocated on demand and its hosts send at
//!   line rate): no window.
//! - **Background traffic** ([`super::traffic`]) runs until the last collective has finished;
//!   the run ends there.

use super::bounds::CLOCK_MAX;
use super::canary::{CANARY, CanaryJob, CanaryState, is_canary};
use super::job::{JobState, Kind};
use super::params::{PacketParams, Routing};
use super::port::{BG, Inputs, Msg, NONE, Pkt, Port};
use super::report::{JobRun, PacketRun};
use super::route::{Router, mix};
use super::traffic::Rng;
use super::{Setup, Stuck, StuckKind};
use crate::canary::protocol::Trigger;
use crate::canary::switch::{Header, Out, Sets, Tables};
use crate::net::{LinkId, Net};
use crate::sim::prefetch::prefetch;
use crate::sim::radix::RadixHeap;

/// The service class of a packet at a port ([`Sim::queue_out`]): Canary's repair traffic
/// goes first at switches, and at hosts first beside paced streams (until the stream lags
/// its pace by half the switch timeout: [`super::canary_faults`]) and last beside unpaced
/// ones ([`super::canary_leader`] says why).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    /// Before everything else (strict priority, first in first out).
    First,
    /// Round robin over the inputs, and turns with the host's own messages.
    Normal,
    /// Only when nothing else waits.
    Last,
}

/// The input index that stands for [`Port::low`] in the port's choice.
const LOW: usize = usize::MAX - 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A port finished serialising its packet.
    TxEnd(u32),
    /// A packet reached the far end of a link: (packet, link).
    Arrive(u32, u32),
    /// A delayed unit of an op is done: (job, op, unit).
    Unit(u32, u32, u32),
    /// A host posts a message to its NIC.
    Inject(u32),
    /// A Canary descriptor's timer: (switch, slot, block id).
    Timer(u32, u32, u32),
    /// A Canary leader has waited `leader_delay` after completing a block: (job, block).
    Lead(u32, u32),
    /// A Canary descriptor's reclaim: (switch, slot, block id).
    Reclaim(u32, u32, u32),
    /// A port with a paced Canary stream may send its next packet: (link).
    Wake(u32),
    /// A Canary worker's retransmission timer: (job, rank).
    Retry(u32, u32),
    /// A Canary leader's check of a generation: (job, block, generation).
    Check(u32, u32, u32),
    /// A Canary leader's timer: (job, clock).
    Clock(u32, u32),
    /// The model's `failure` happens (its one switch fails, or the failure is armed).
    Fail,
    /// A host's packet held back by noise joins its port again: (link, packet).
    Noisy(u32, u32),
}

pub(super) struct Sim<'a> {
    pub(super) params: &'a PacketParams,
    pub(super) switch: &'a [bool],
    pub(super) now: u64,
    heap: RadixHeap<Ev>,
    pub(super) ports: Vec<Port>,
    /// Per port, the bytes waiting in its buffer and its host's own messages (what adaptive
    /// routing compares; apart from [`Port`] so that comparing candidates reads one array).
    pub(super) queued: Vec<u64>,
    pub(super) inputs: Inputs,
    pub(super) router: Router<'a>,
    pub(super) msgs: Vec<Msg>,
    pub(super) pkts: Vec<Pkt>,
    /// Per packet, the next packet in the port input queue it waits in ([`Port::inq`]).
    pub(super) next: Vec<u32>,
    pub(super) free: Vec<u32>,
    /// Message slots whose packets have all arrived, for reuse.
    pub(super) free_msgs: Vec<u32>,
    pub(super) job_messages: u64,
    pub(super) jobs: Vec<JobState>,
    /// Per job its window (0: none); per node the packets it has in flight under its job's
    /// window (empty when no job has one).
    windows: Vec<u32>,
    flight: Vec<u32>,
    pub(super) job_end: Vec<u64>,
    pub(super) jobs_left: usize,
    pub(super) ready: Vec<(u32, u32)>,
    pub(super) bg_hosts: Vec<u32>,
    /// Where background messages may go (all compute nodes under `background_peers: all`,
    /// else empty: the other congesting hosts).
    pub(super) peers: Vec<u32>,
    pub(super) rng: Rng,
    /// Host noise's own draws, so that a model without noise runs exactly as before.
    noise_rng: Rng,
    /// The switch that has failed, once it has; whether a failure is armed (the next switch
    /// of the model's `failure.among` that a Canary packet reaches fails).
    pub(super) failed: Option<u32>,
    pub(super) armed: bool,
    pub(super) events: u64,
    pub(super) packets: u64,
    pub(super) stalls: u64,
    /// Canary packets lost on links.
    pub(super) drops: u64,
    pub(super) stall_ps: u64,
    pub(super) bg_messages: u64,
    pub(super) bg_bytes: u64,
    pub(super) unroutable: Option<(u32, u32)>,
    /// Canary allreduces (after the programs among the jobs), their packets' headers and
    /// routing targets (by `Pkt::ch`), every switch's descriptor table, per directed link the
    /// port index of its reverse at its far end, per node its out-links in port order, what is
    /// still in flight (packets, timers, leaders' delays), and how often each rule ran.
    pub(super) cjobs: &'a [CanaryJob<'a>],
    pub(super) canary: Vec<CanaryState>,
    pub(super) hdrs: Vec<(Header, u32)>,
    pub(super) free_hdrs: Vec<u32>,
    pub(super) tables: Tables,
    pub(super) port_in: Vec<u32>,
    pub(super) out_links: Vec<Vec<LinkId>>,
    pub(super) canary_live: u64,
    /// Hosts' Canary streams with packets still to send.
    pub(super) canary_streams: u64,
    pub(super) rule_hits: std::collections::BTreeMap<&'static str, u64>,
    pub(super) outs: Vec<Out>,
    /// Contributor sets of the packets (`recovery: contributors`), and a buffer for a set's
    /// ranks.
    pub(super) sets: Sets,
    pub(super) members: Vec<u32>,
    /// Per leader host, the parent link of every node in its flood tree ([`super::canary`]).
    pub(super) floods: rustc_hash::FxHashMap<u32, Vec<u32>>,
    /// Link bytes and time when the last job finished (the run drains Canary packets after).
    end_bytes: Option<(Vec<u64>, u64)>,
    /// The latest event time refused for being beyond [`CLOCK_MAX`] (0: none).
    beyond: u64,
}

/// Runs `setup` on `net`; `switch[n]` says whether node n is a switch.
pub fn simulate(
    net: &Net,
    switch: &[bool],
    params: &PacketParams,
    setup: &Setup,
) -> Result<PacketRun, Stuck> {
    let ports = super::port::ports(net, params);
    super::bounds::check(&ports, params, setup)?;
    let names: std::collections::BTreeMap<&str, u32> = net
        .names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i as u32))
        .collect();
    let mut jobs = Vec::with_capacity(setup.jobs.len());
    for (j, job) in setup.jobs.iter().enumerate() {
        jobs.push(
            JobState::new(job.program, &job.hosts, &names, params).map_err(|why| Stuck {
                job: j as u32,
                ops_left: job.program.op_count(),
                why,
                kind: StuckKind::Stuck,
            })?,
        );
    }
    let jobs_n = jobs.len();
    let (port_in, out_links) = canary_ports(net);
    let mut sim = Sim {
        params,
        switch,
        now: 0,
        heap: RadixHeap::default(),
        queued: vec![0; ports.len()],
        ports,
        inputs: Inputs::new(net),
        router: Router::new(net, params.routing, params.queue),
        msgs: Vec::new(),
        pkts: Vec::new(),
        next: Vec::new(),
        free: Vec::new(),
        free_msgs: Vec::new(),
        job_messages: 0,
        job_end: vec![u64::MAX; jobs.len() + setup.canary.len()],
        jobs_left: jobs.len() + setup.canary.len(),
        jobs,
        windows: setup.jobs.iter().map(|j| j.window).collect(),
        flight: if setup.jobs.iter().any(|j| j.window > 0) {
            vec![0; switch.len()]
        } else {
            Vec::new()
        },
        ready: Vec::new(),
        bg_hosts: setup.background.clone(),
        peers: if params.background_to_all {
            (0..switch.len() as u32)
                .filter(|&n| !switch[n as usize])
                .collect()
        } else {
            Vec::new()
        },
        rng: Rng::new(setup.seed),
        noise_rng: Rng::new(setup.seed ^ 0x6e6f_6973_6521),
        failed: None,
        armed: false,
        events: 0,
        packets: 0,
        stalls: 0,
        drops: 0,
        stall_ps: 0,
        bg_messages: 0,
        bg_bytes: 0,
        unroutable: None,
        cjobs: &setup.canary,
        canary: setup
            .canary
            .iter()
            .enumerate()
            .map(|(c, cj)| CanaryState::new((jobs_n + c) as u32, cj))
            .collect(),
        hdrs: Vec::new(),
        free_hdrs: Vec::new(),
        tables: Tables::default(),
        port_in,
        out_links,
        canary_live: 0,
        canary_streams: 0,
        rule_hits: Default::default(),
        outs: Vec::new(),
        sets: Sets::default(),
        members: Vec::new(),
        floods: Default::default(),
        end_bytes: None,
        beyond: 0,
    };
    for j in 0..sim.jobs.len() {
        sim.jobs[j].initial(&mut sim.ready);
        if sim.jobs[j].left == 0 {
            sim.job_end[j] = 0;
            sim.jobs_left -= 1;
        }
        sim.drain(j as u32);
    }
    for c in 0..sim.canary.len() {
        if sim.cjobs[c].plan.blocks == 0 || sim.cjobs[c].plan.hosts.is_empty() {
            sim.job_end[jobs_n + c] = 0;
            sim.jobs_left -= 1;
        } else {
            sim.canary_start(c as u32);
        }
    }
    if let Some(s) = sim.canary_hopeless() {
        return Err(s);
    }
    if sim.bg_hosts.len() >= 2 || (!sim.bg_hosts.is_empty() && sim.peers.len() >= 2) {
        for k in 0..sim.bg_hosts.len() {
            sim.next_background(k as u32);
        }
    }
    if let Some(f) = &params.failure {
        sim.push(f.at, Ev::Fail);
    }
    while sim.jobs_left > 0 || sim.canary_live > 0 {
        let Some((at, ev)) = sim.heap.pop() else {
            break;
        };
        sim.now = at;
        sim.events += 1;
        sim.prefetch_ahead();

        match ev {
            Ev::TxEnd(l) => sim.tx_end(l),
            Ev::Arrive(p, l) => sim.arrive(p, l),
            Ev::Unit(j, g, i) => {
                sim.unit_done(j, g, i);
                sim.drain(j);
            }
            Ev::Inject(m) => sim.inject(m),
            Ev::Timer(n, slot, id) => sim.canary_timer(Trigger::Timer, n, slot, id),
            Ev::Reclaim(n, slot, id) => sim.canary_timer(Trigger::Reclaim, n, slot, id),
            Ev::Retry(c, r) => sim.canary_retry(c, r, at),
            Ev::Wake(l) => sim.try_start(l),
            Ev::Check(c, b, g) => sim.lead_check(c, b, g),
            Ev::Clock(c, k) => sim.lead_clock(c, k, at),
            Ev::Lead(c, b) => sim.canary_lead(c, b),
            Ev::Noisy(l, pid) => sim.queue_local(sim.router.link_from(l), pid, l),
            Ev::Fail => match params.failure.as_ref().map(|f| f.among.as_slice()) {
                Some(&[one]) => sim.fail(one),
                _ => sim.armed = true,
            },
        }
        if sim.canary_live == 0 && sim.canary_streams == 0 && sim.canary_stuck() {
            // Nothing of a Canary allreduce is in flight and it is not done: only background
            // traffic could still move, so the run ends here (the check names what is missing).
            break;
        }
        if sim.jobs_left == 0 && sim.end_bytes.is_none() {
            sim.end_bytes = Some((sim.ports.iter().map(|p| p.bytes).collect(), sim.now));
        }
        if sim.unroutable.is_some() {
            break;
        }
        if sim.beyond > 0 {
            return Err(Stuck {
                job: 0,
                ops_left: sim.jobs.iter().map(|j| j.left).sum(),
                why: format!(
                    "an event falls at {} ps, beyond the simulator's clock of {CLOCK_MAX} ps (about 53 days)",
                    sim.beyond
                ),
                kind: StuckKind::Clock,
            });
        }
        if params.max_events > 0 && sim.events >= params.max_events {
            return Err(Stuck {
                job: 0,
                ops_left: sim.jobs.iter().map(|j| j.left).sum(),
                why: format!(
                    "the run did not finish within {} events (at {} ps of simulated time): packets and timers keep coming without the collective completing{}",
                    params.max_events,
                    sim.now,
                    sim.canary_limit_why().unwrap_or_default()
                ),
                kind: StuckKind::Limit("--max-events", params.max_events, 0),
            });
        }
        if params.max_packets > 0 && sim.pkts.len() as u64 > params.max_packets {
            return Err(Stuck {
                job: 0,
                ops_left: sim.jobs.iter().map(|j| j.left).sum(),
                why: format!(
                    "the run held more than {} packets at once (at {} ps of simulated time, after {} events): hosts send faster than the network delivers{}",
                    params.max_packets,
                    sim.now,
                    sim.events,
                    sim.canary_limit_why().unwrap_or_default()
                ),
                kind: StuckKind::Limit("--max-packets", params.max_packets, 0),
            });
        }
    }
    sim.finish(setup)
}

/// Per directed link, the index of its reverse among its far end's out-links (u32::MAX when
/// there is none); per node, its out-links in that order (a switch's ports).
fn canary_ports(net: &Net) -> (Vec<u32>, Vec<Vec<LinkId>>) {
    let mut out_links: Vec<Vec<LinkId>> = vec![Vec::new(); net.node_count()];
    for (i, l) in net.links.iter().enumerate() {
        out_links[l.from].push(i as LinkId);
    }
    let port_in = net
        .links
        .iter()
        .map(|l| {
            out_links[l.to]
                .iter()
                .position(|&r| net.links[r as usize].to == l.from)
                .map_or(u32::MAX, |k| k as u32)
        })
        .collect();
    (port_in, out_links)
}

/// How many events ahead the loop asks for a port's record, and for the packets that port
/// will read ([`Sim::prefetch_ahead`]); measured best on the Canary paper's congested runs.
const PORT_AHEAD: usize = 5;
const PACKETS_AHEAD: usize = 2;

impl Sim<'_> {
    /// Asks the memory for what the events soon to come read first, while this one runs
    /// ([`crate::sim::prefetch`]): most of a large run is waiting for records that left the
    /// caches while their packets queued. A transmission's end reads its port, the packet it
    /// sent and the head packet it sends next; an arrival, its packet and link. The port's
    /// record comes first, further ahead, since finding the packets reads it. A hint only:
    /// nothing the run computes depends on it.
    #[inline]
    fn prefetch_ahead(&self) {
        match self.heap.peek_ready(PORT_AHEAD) {
            Some(&Ev::TxEnd(l)) => {
                if let Some(port) = self.ports.get(l as usize) {
                    prefetch(&port.active);
                    prefetch(&port.inq);
                    prefetch(&port.cur);
                }
            }
            Some(&Ev::Arrive(_, l)) => {
                if let Some(port) = self.ports.get(l as usize) {
                    prefetch(&port.to);
                }
            }
            _ => {}
        }
        let packets = match self.heap.peek_ready(PACKETS_AHEAD) {
            Some(&Ev::TxEnd(l)) => match self.ports.get(l as usize) {
                Some(port) => [port.cur, port.head_at(0).unwrap_or(NONE)],
                None => return,
            },
            Some(&Ev::Arrive(p, _)) => [p, NONE],
            _ => return,
        };
        for pid in packets {
            if let Some(pkt) = self.pkts.get(pid as usize) {
                prefetch(pkt);
            }
        }
    }

    fn push(&mut self, at: u64, ev: Ev) {
        if at > CLOCK_MAX {
            // Never queued: the run stops with E0047 before any time can overflow.
            self.beyond = self.beyond.max(at);
            return;
        }
        self.heap.push(at, ev);
    }

    pub(super) fn push_timer(&mut self, node: u32, slot: u32, id: u32, at: u64) {
        self.push(at, Ev::Timer(node, slot, id));
    }

    pub(super) fn push_lead(&mut self, c: u32, b: u32, at: u64) {
        self.push(at, Ev::Lead(c, b));
    }

    pub(super) fn push_reclaim(&mut self, node: u32, slot: u32, id: u32, at: u64) {
        self.push(at, Ev::Reclaim(node, slot, id));
    }

    pub(super) fn push_retry(&mut self, c: u32, r: u32, at: u64) {
        self.push(at, Ev::Retry(c, r));
    }

    pub(super) fn push_check(&mut self, c: u32, b: u32, g: u32, at: u64) {
        self.push(at, Ev::Check(c, b, g));
    }

    pub(super) fn push_clock(&mut self, c: u32, k: u32, at: u64) {
        self.push(at, Ev::Clock(c, k));
    }

    /// A host posts message `m` to its NIC after the host overhead.
    pub(super) fn post(&mut self, m: u32) {
        if self.params.overhead == 0 {
            self.inject(m);
        } else {
            self.push(self.now + self.params.overhead, Ev::Inject(m));
        }
    }

    pub(super) fn new_msg(
        &mut self,
        src: u32,
        dst: u32,
        bytes: u64,
        owner: u32,
        op: u32,
        hosted: bool,
    ) -> u32 {
        if owner == BG {
            self.bg_messages += 1;
        } else {
            self.job_messages += 1;
        }
        // The flow id counts every message ever made, so reused slots hash afresh.
        let key = mix(u64::from(owner), self.bg_messages + self.job_messages);
        let path = if self.params.routing == Routing::Minimal && src != dst {
            self.router.path(src, dst)
        } else {
            NONE
        };
        let msg = Msg {
            src,
            dst,
            bytes,
            npk: self.params.packets(bytes) as u32,
            sent: 0,
            arrived: 0,
            key,
            path,
            owner,
            op,
            recv: NONE,
            stream: false,
            hosted,
        };
        match self.free_msgs.pop() {
            Some(id) => {
                self.msgs[id as usize] = msg;
                id
            }
            None => {
                self.msgs.push(msg);
                (self.msgs.len() - 1) as u32
            }
        }
    }

    /// Wire bytes of packet `i` of message `m`.
    fn msg_wire(&self, m: &Msg, i: u64) -> u64 {
        if is_canary(m.owner) {
            // A Canary stream's packets are alike: its payload per packet (none for a
            // broadcast's header-only contributions) and the header.
            m.bytes / u64::from(m.npk.max(1)) + self.params.header
        } else {
            self.params.wire(m.bytes, i)
        }
    }

    fn new_pkt(&mut self, msg: u32, idx: u32) -> u32 {
        let m = &self.msgs[msg as usize];
        let wire = self.msg_wire(m, u64::from(idx)) as u32;
        let (dst, key) = (if is_canary(m.owner) { NONE } else { m.dst }, m.key);
        let ch = if is_canary(m.owner) {
            let (c, r) = (m.owner & !CANARY, m.op);
            let hdr = self.canary_stream_header(c, r, idx);
            self.canary_live += 1;
            self.new_hdr(hdr)
        } else {
            NONE
        };
        self.alloc_pkt(if ch == NONE {
            Pkt::new(msg, idx, wire, key, dst)
        } else {
            Pkt::canary(msg, idx, wire, ch)
        })
    }

    fn new_hdr(&mut self, hdr: (Header, u32)) -> u32 {
        match self.free_hdrs.pop() {
            Some(i) => {
                self.hdrs[i as usize] = hdr;
                i
            }
            None => {
                self.hdrs.push(hdr);
                (self.hdrs.len() - 1) as u32
            }
        }
    }

    /// A Canary packet made by a switch or leader: header `h`, routed towards `to`.
    pub(super) fn new_canary_pkt(&mut self, h: Header, to: u32, wire: u64) -> u32 {
        self.canary_live += 1;
        let ch = self.new_hdr((h, to));
        self.alloc_pkt(Pkt::canary(NONE, 0, wire as u32, ch))
    }

    fn alloc_pkt(&mut self, p: Pkt) -> u32 {
        self.packets += 1;
        match self.free.pop() {
            Some(i) => {
                self.pkts[i as usize] = p;
                i
            }
            None => {
                self.pkts.push(p);
                self.next.push(NONE);
                (self.pkts.len() - 1) as u32
            }
        }
    }

    /// Queues packet `pid` at node `at`'s port `l` from the node's own input: a switch
    /// process's output or a Canary packet from its aggregation memory, a host's packet held
    /// back by noise. No buffer credit is held; the bytes count as `held`, not `queued`.
    pub(super) fn queue_local(&mut self, at: u32, pid: u32, l: LinkId) {
        self.queue_out(at, pid, l, Class::Normal);
    }

    /// [`Sim::queue_local`] in a class: [`Class::First`] before everything else, [`Class::Last`]
    /// only when nothing else waits.
    pub(super) fn queue_out(&mut self, at: u32, pid: u32, l: LinkId, class: Class) {
        let wire = u64::from(self.pkts[pid as usize].wire);
        let slot = self.inputs.local(at);
        let port = &mut self.ports[l as usize];
        if class == Class::First {
            port.prio.push_back(pid);
            port.npk += 1;
        } else if class == Class::Last {
            port.low.push_back(pid);
            port.npk += 1;
        } else {
            port.push(slot, pid, &mut self.next);
        }
        port.held += wire;
        self.try_start(l);
    }

    /// Switch `n` fails: its descriptors are gone and routes avoid it; what reaches or leaves
    /// it from now on is lost (Canary packets; see `tx_end` and `canary_arrive`).
    pub(super) fn fail(&mut self, n: u32) {
        self.armed = false;
        self.failed = Some(n);
        self.router.fail_node(n as usize);
        self.tables.retain(|&(sw, _), _| sw != n);
        // Floods go around it from now on.
        self.floods.clear();
    }

    /// The port a packet of `msg` takes next at `at` (its `hop`-th link).
    fn next_port(&mut self, msg: u32, at: u32, hop: u32) -> Option<LinkId> {
        let m = &self.msgs[msg as usize];
        let (dst, key) = (m.dst, m.key);
        self.route(msg, at, hop, dst, key)
    }

    /// [`Sim::next_port`] given the message's destination and flow key (which its packets
    /// carry): reads the message only for its `minimal` path.
    fn route(&mut self, msg: u32, at: u32, hop: u32, dst: u32, key: u64) -> Option<LinkId> {
        if self.params.routing == Routing::Minimal {
            let path = self.msgs[msg as usize].path;
            if path != NONE {
                return Some(self.router.path_link(path, hop));
            }
        }
        let queued = &self.queued;
        let l = self
            .router
            .next(at as usize, dst as usize, key, |l| queued[l as usize]);
        if l.is_none() {
            self.unroutable = Some((at, dst));
        }
        l
    }

    /// The window `m`'s packets count against: a host's message into a switch process of a
    /// job with a window.
    fn window_of(&self, m: &Msg) -> Option<u32> {
        let w = *self.windows.get(m.owner as usize)?;
        (w > 0 && m.hosted && self.switch[m.dst as usize]).then_some(w)
    }

    /// A result of a windowed job (a switch process's packet) reached host `at`: a packet of
    /// its window is done.
    fn result_in(&mut self, at: u32) {
        let f = &mut self.flight[at as usize];
        *f = f.saturating_sub(1);
        for k in 0..self.out_links[at as usize].len() {
            self.try_start(self.out_links[at as usize][k]);
        }
    }

    fn total_wire(&self, m: &Msg) -> u64 {
        m.bytes + u64::from(m.npk) * self.params.header
    }

    fn inject(&mut self, m: u32) {
        let src = self.msgs[m as usize].src;
        let Some(l) = self.next_port(m, src, 0) else {
            return;
        };
        let w = self.total_wire(&self.msgs[m as usize]);
        self.ports[l as usize].msgs.push_back(m);
        self.queued[l as usize] += w;
        self.try_start(l);
    }

    pub(super) fn try_start(&mut self, l: LinkId) {
        let port = &self.ports[l as usize];
        if port.busy || (port.npk == 0 && port.msgs.is_empty()) {
            return;
        }
        // What may go: a packet for the far end itself, or one its buffer has credit for. The
        // round robin serves the first input whose head packet may go (an input waiting for
        // credit does not block the others: the far end's buffer is shared, but a packet it
        // consumes needs none), and packets and own messages take turns.
        let (to, credit) = (port.to, port.credit);
        // Compute nodes that forward (direct networks) hold transit packets in host memory:
        // only a switch's buffer is flow controlled.
        let free = !self.switch[to as usize];
        let fits = |wire: u64, dst: u32| free || dst == to || credit >= wire;
        // The priority class (Canary packets, which take no credit) goes first.
        let prio = port.prio.front().map(|&p| {
            let wire = u64::from(self.pkts[p as usize].wire);
            (Some(usize::MAX), wire, to)
        });
        let pkt = prio.or_else(|| {
            (0..port.active.len()).find_map(|i| {
                let p = self.pkts[port.head_at(i)? as usize];
                // A Canary packet is consumed by the far end's pipeline (aggregated, or re-emitted
                // from its aggregation memory): it takes no credit, as a switch process's input.
                let dst = if p.ch() != NONE { to } else { p.dst() };
                let wire = u64::from(p.wire);
                fits(wire, dst).then_some((Some(i), wire, dst))
            })
        });
        // A host's message under a full window waits for a result (not for credit).
        let windowed = port.msgs.front().is_some_and(|&m| {
            let m = &self.msgs[m as usize];
            self.window_of(m)
                .is_some_and(|w| self.flight[m.src as usize] >= w)
        });
        // A paced Canary stream whose next packet is not due lets the port serve others, or
        // idle until it is; one that is due goes before everything once it lags its pace by
        // half the switch timeout (before that, repair waiting goes first:
        // [`super::canary_faults`]).
        let mut wake = 0;
        let mut paced = false;
        let (mut lag, mut hold) = (0, 0);
        let msg = port.msgs.front().filter(|_| !windowed).and_then(|&m| {
            let m = &self.msgs[m as usize];
            if is_canary(m.owner) {
                let due = self.canary_due(m.owner, m.sent, l);
                if due > self.now {
                    wake = due;
                    return None;
                }
                let c = (m.owner & !CANARY) as usize;
                paced = self.canary[c].pace.1 > 0;
                lag = self.now - due;
                hold = self.cjobs[c].timeout / 2;
            }
            let dst = if is_canary(m.owner) { to } else { m.dst };
            let wire = self.msg_wire(m, u64::from(m.sent));
            fits(wire, dst).then_some((None, wire, dst))
        });
        let pick = if paced && msg.is_some() && (prio.is_none() || lag >= hold) {
            msg
        } else if prio.is_some() || port.turn || port.msgs.is_empty() {
            pkt.or(msg)
        } else {
            msg.or(pkt)
        };
        let pick = pick.or_else(|| {
            let &p = port.low.front()?;
            Some((Some(LOW), u64::from(self.pkts[p as usize].wire), to))
        });
        let now = self.now;
        if wake > 0 && pick.is_none_or(|p| p.0.is_some()) && self.ports[l as usize].wake != wake {
            self.ports[l as usize].wake = wake;
            self.push(wake, Ev::Wake(l));
        }
        let Some((input, wire, dst)) = pick else {
            let port = &mut self.ports[l as usize];
            if windowed && port.npk == 0 {
                return;
            }
            if port.stalled == u64::MAX {
                port.stalled = now;
                self.stalls += 1;
            }
            return;
        };
        let use_pkt = input.is_some();
        let mut owner = BG;
        let needs = !free && dst != to;
        let port = &mut self.ports[l as usize];
        if port.stalled != u64::MAX {
            self.stall_ps += now - port.stalled;
            port.stalled = u64::MAX;
        }
        if needs {
            port.credit -= wire;
        }
        let pid = if input == Some(usize::MAX) {
            port.npk -= 1;
            port.prio.pop_front().unwrap_or(NONE)
        } else if input == Some(LOW) {
            port.npk -= 1;
            port.low.pop_front().unwrap_or(NONE)
        } else if let Some(i) = input {
            port.pop_at(i, &self.next).unwrap_or(NONE)
        } else {
            // Messages waiting at a port take turns packet by packet, as a NIC serves its
            // queue pairs (and a switch its multicast copies): concurrent sends share the link.
            let m = port.msgs[0];
            if self.window_of(&self.msgs[m as usize]).is_some() {
                self.flight[self.msgs[m as usize].src as usize] += 1;
            }
            let mm = &mut self.msgs[m as usize];
            if !self.switch[mm.src as usize] {
                owner = mm.owner;
            }
            let idx = mm.sent;
            mm.sent += 1;
            let done = mm.sent == mm.npk;
            let q = &mut self.ports[l as usize].msgs;
            q.pop_front();
            if !done {
                q.push_back(m);
            }
            self.new_pkt(m, idx)
        };
        // Host noise (Section 5.2.5): a host delays a packet of a collective it sends (not
        // background traffic, not packets it forwards) by `noise_delay`; the packet waits
        // beside the NIC's queue and the packets after it go on meanwhile.
        if owner != BG && self.params.noise > 0.0 && self.noise_rng.unit() < self.params.noise {
            let port = &mut self.ports[l as usize];
            if needs {
                port.credit += wire;
            }
            self.queued[l as usize] -= wire;
            self.push(now + self.params.noise_delay, Ev::Noisy(l, pid));
            self.try_start(l);
            return;
        }
        let port = &mut self.ports[l as usize];
        port.turn = !use_pkt;
        port.busy = true;
        port.cur = pid;
        port.cur_credit = needs;
        if use_pkt && self.pkts[pid as usize].hop == 0 {
            // A switch process's output, from its aggregation memory.
            port.held -= wire;
        } else {
            self.queued[l as usize] -= wire;
        }
        port.bytes += wire;
        let end = now + port.ser(wire);
        self.push(end, Ev::TxEnd(l));
    }

    fn tx_end(&mut self, l: LinkId) {
        let port = &mut self.ports[l as usize];
        port.busy = false;
        let pid = port.cur;
        let credit = port.cur_credit;
        let (to, lat) = (port.to, port.lat);
        let p = self.pkts[pid as usize];
        if p.held != NONE {
            self.ports[p.held as usize].credit += u64::from(p.wire);
            self.try_start(p.held);
        }
        let pk = &mut self.pkts[pid as usize];
        pk.held = if credit { l } else { NONE };
        pk.hop += 1;
        if p.ch() != NONE {
            if p.hop == 0 && !self.switch[self.router.link_from(l) as usize] {
                let h = self.hdrs[p.ch() as usize].0;
                self.canary_left_host(self.router.link_from(l), &h);
            }
            if p.msg != NONE && p.hop == 0 && p.idx + 1 == self.msgs[p.msg as usize].npk {
                // The last packet of a host's Canary stream has left: its message is done.
                self.free_msgs.push(p.msg);
                self.canary_streams -= 1;
            }
            let lost = self.failed.is_some() && self.router.is_dead(l);
            if lost || (self.params.loss > 0.0 && self.rng.unit() < self.params.loss) {
                // Lost on this link (Canary's fault model), or at a failed switch.
                self.drops += 1;
                self.canary_release(pid);
            } else {
                let target = self.hdrs[p.ch() as usize].1;
                let delay = if self.switch[to as usize] || to != target {
                    self.params.switch_delay
                } else {
                    0
                };
                self.push(self.now + lat + delay, Ev::Arrive(pid, l));
            }
            self.try_start(l);
            return;
        }
        // The packet carries its message's destination; the message itself is read only as
        // its packet leaves the host.
        let delay = if self.switch[to as usize] || to != p.dst() {
            self.params.switch_delay
        } else {
            0
        };
        self.push(self.now + lat + delay, Ev::Arrive(pid, l));
        if p.hop == 0 {
            let m = &self.msgs[p.msg as usize];
            if m.hosted && p.idx + 1 == m.npk {
                let (owner, op) = (m.owner, m.op);
                if owner == BG {
                    self.next_background(op);
                } else {
                    self.unit_done(owner, op, 0);
                    self.drain(owner);
                }
            }
        }
        self.try_start(l);
    }

    fn arrive(&mut self, pid: u32, l: LinkId) {
        let p = self.pkts[pid as usize];
        if p.ch() != NONE {
            self.canary_arrive(pid, l);
            return;
        }
        let at = self.ports[l as usize].to;
        let dst = p.dst();
        if at != dst {
            let Some(next) = self.route(p.msg, at, p.hop, dst, p.key) else {
                return;
            };
            let slot = self.inputs.slot(l);
            self.ports[next as usize].push(slot, pid, &mut self.next);
            self.queued[next as usize] += u64::from(p.wire);
            self.try_start(next);
            return;
        }
        self.free.push(pid);
        self.deliver(p.msg, p.idx, u64::from(p.wire));
    }

    /// Packet `idx` of message `m` has reached its destination.
    fn deliver(&mut self, m: u32, idx: u32, wire: u64) {
        let msg = &mut self.msgs[m as usize];
        msg.arrived += 1;
        let (owner, npk, arrived) = (msg.owner, msg.npk, msg.arrived);
        let msg_hosted = msg.hosted;
        let (dst, r, stream) = (msg.dst, msg.recv, msg.stream);
        if arrived == npk {
            self.free_msgs.push(m);
        }
        if owner == BG {
            self.bg_bytes += wire.saturating_sub(self.params.header);
            return;
        }
        if self.windows[owner as usize] > 0 && !msg_hosted && !self.switch[dst as usize] {
            self.result_in(dst);
        }
        let job = &mut self.jobs[owner as usize];
        if stream {
            job.dec(r, idx, &mut self.ready);
        } else if arrived == npk {
            job.dec_all(r, &mut self.ready);
        }
        self.drain(owner);
    }

    fn next_background(&mut self, k: u32) {
        if self.jobs_left == 0 {
            // Every collective is done; only Canary's last timers drain.
            return;
        }
        let src = self.bg_hosts[k as usize];
        let dst = if self.peers.is_empty() {
            let n = self.bg_hosts.len() as u64;
            let mut j = self.rng.below(n - 1);
            if j >= u64::from(k) {
                j += 1;
            }
            self.bg_hosts[j as usize]
        } else {
            // Uniform over the other nodes (src is among the peers, and there are two or more).
            loop {
                let d = self.peers[self.rng.below(self.peers.len() as u64) as usize];
                if d != src {
                    break d;
                }
            }
        };
        let m = self.new_msg(src, dst, self.params.background_size, BG, k, true);
        if self.params.overhead == 0 {
            self.inject(m);
        } else {
            self.push(self.now + self.params.overhead, Ev::Inject(m));
        }
    }

    fn unit_done(&mut self, j: u32, g: u32, i: u32) {
        let job = &mut self.jobs[j as usize];
        job.unit_done(g, i, self.now, &mut self.ready);
        if job.left == 0 && self.job_end[j as usize] == u64::MAX {
            self.job_end[j as usize] = self.now;
            self.jobs_left -= 1;
        }
    }

    /// Runs every ready unit of job `j`.
    fn drain(&mut self, j: u32) {
        while let Some((g, i)) = self.ready.pop() {
            self.run_unit(j, g, i);
        }
    }

    fn run_unit(&mut self, j: u32, g: u32, i: u32) {
        let now = self.now;
        let job = &mut self.jobs[j as usize];
        let gu = g as usize;
        let op = &mut job.ops[gu];
        if op.started == u64::MAX {
            op.started = now;
        }
        let op = *op;
        let p = op.proc as usize;
        let sw = job.switch[p];
        match op.kind {
            Kind::Send => {
                let r = op.peer_recv;
                let (src, dst) = (job.node[p], op.peer_node);
                let bytes = op.bytes;
                let m = match op.msg {
                    NONE => {
                        // Whether its receive streams packet by packet (a switch process's
                        // receive of as many units as the message has packets).
                        let recv_units = self.jobs[j as usize].ops[r as usize].units;
                        let m = self.new_msg(src, dst, bytes, j, g, !sw);
                        let msg = &mut self.msgs[m as usize];
                        msg.recv = r;
                        msg.stream = recv_units == msg.npk && msg.npk > 1;
                        self.jobs[j as usize].ops[gu].msg = m;
                        m
                    }
                    m => m,
                };
                if src == dst {
                    // Same node: no network; delivered at once.
                    let npk = if sw { 1 } else { self.msgs[m as usize].npk };
                    for k in 0..npk {
                        let idx = if sw { i } else { k };
                        self.deliver(m, idx, 0);
                    }
                    self.unit_done(j, g, i);
                } else if sw {
                    let pid = self.new_pkt(m, i);
                    if let Some(l) = self.next_port(m, src, 0) {
                        self.queue_local(src, pid, l);
                    }
                    self.unit_done(j, g, i);
                } else if self.params.overhead == 0 {
                    self.inject(m);
                } else {
                    self.push(now + self.params.overhead, Ev::Inject(m));
                }
            }
            Kind::Recv | Kind::Copy => self.unit_done(j, g, i),
            Kind::RecvReduce | Kind::Reduce => {
                let at = if sw {
                    now + self.params.aggregation_delay
                } else {
                    let t = job.cpu_free[p]
                        .max(now)
                        .saturating_add(self.params.reduce_ps(op.bytes));
                    job.cpu_free[p] = t;
                    t
                };
                if at == now {
                    self.unit_done(j, g, i);
                } else {
                    self.push(at, Ev::Unit(j, g, i));
                }
            }
        }
    }

    fn finish(self, setup: &Setup) -> Result<PacketRun, Stuck> {
        if let Some((j, job)) = self.jobs.iter().enumerate().find(|(_, x)| x.left > 0) {
            let why = match self.unroutable {
                Some((a, b)) => format!(
                    "node {} cannot reach node {} (a message's destination)",
                    self.router_name(a),
                    self.router_name(b)
                ),
                None => {
                    let p = (0..job.ops())
                        .find(|&g| job.ops[g].ended == u64::MAX)
                        .map(|g| job.ops[g].proc)
                        .unwrap_or(0);
                    format!(
                        "nothing can move any more (first waiting process: {p}); with lossless flow control this is a credit deadlock on a cyclic route, or a program that cannot finish"
                    )
                }
            };
            return Err(Stuck {
                job: j as u32,
                ops_left: job.left,
                why,
                kind: StuckKind::Stuck,
            });
        }
        for c in 0..self.canary.len() {
            if let Some(why) = self.canary_check(c as u32) {
                let why = match self.unroutable {
                    Some((a, b)) => format!(
                        "node {} cannot reach node {} (a Canary packet's destination)",
                        self.router_name(a),
                        self.router_name(b)
                    ),
                    None => format!("Canary's postcondition does not hold: {why}"),
                };
                return Err(Stuck {
                    job: self.canary[c].job,
                    ops_left: 0,
                    why,
                    kind: StuckKind::Stuck,
                });
            }
        }
        let mut jobs: Vec<JobRun> = self
            .jobs
            .iter()
            .zip(&self.job_end)
            .zip(&setup.jobs)
            .map(|((js, &end), job)| JobRun {
                name: job.program.name.clone(),
                hosts: job.hosts.clone(),
                finish: js.finish.clone(),
                ranks: js.ranks,
                bytes: job.bytes,
                end,
                spans: setup.trace.then(|| super::report::spans(js)),
            })
            .collect();
        for (st, cj) in self.canary.iter().zip(self.cjobs) {
            jobs.push(JobRun {
                name: cj.name.clone(),
                hosts: cj.plan.hosts.clone(),
                finish: st.finish.clone(),
                ranks: cj.plan.ranks(),
                bytes: cj.bytes,
                end: self.job_end[st.job as usize],
                spans: None,
            });
        }
        let recovery = self.canary_recovery();
        let (link_bytes, end) = self
            .end_bytes
            .unwrap_or_else(|| (self.ports.iter().map(|p| p.bytes).collect(), self.now));
        Ok(PacketRun {
            jobs,
            end,
            link_bytes,
            rules: self
                .rule_hits
                .iter()
                .map(|(&r, &n)| (r.to_string(), n))
                .collect(),
            events: self.events,
            packets: self.packets,
            messages: self.job_messages,
            bg_hosts: self.bg_hosts.len() as u64,
            bg_messages: self.bg_messages,
            bg_bytes: self.bg_bytes,
            stalls: self.stalls,
            stall_ps: self.stall_ps,
            drops: self.drops,
            seed: setup.seed,
            recovery,
        })
    }

    fn router_name(&self, n: u32) -> String {
        format!("`{}`", self.router.node_name(n as usize))
    }
}
