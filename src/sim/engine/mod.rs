//! The event loop, a transcription of LogGOPSim's `main()` (`LogGOPSim.cpp`, LogGP network,
//! `STRICT_ORDER` and `LIST_MATCH` as built by default), generalised so the postal models run
//! in the same loop (see the module doc of [`crate::sim`] for the models).
//!
//! LogGOPSim's ordering rules, all kept because they decide ties and therefore times:
//! - The queue is a min-heap on (time, ts); ts is a counter given to every op when it becomes
//!   executable and to every message when it is sent; an event put back because its CPU or NIC
//!   is busy keeps its ts. (Such events wait in groups per CPU and NIC, [`park`], which puts
//!   them where LogGOPSim's queue would pop them without popping each again every time the
//!   CPU frees: N ops ready at once on one CPU cost N log N, not N^2.)
//! - Ops that become executable in one event (and initially, per host) are collected per host
//!   in the order their dependencies were released (dependents of a start first, in the order
//!   the dependency lines were written), sorted by type (send < recv < calc) with libstdc++'s
//!   unstable `std::sort` ([`super::stdsort`]), and queued host by host in ascending host order.
//! - A queued op's time is its CPU's next free time (a send: the later of its CPU's and NIC's),
//!   even if that is earlier than the event that freed it: LogGOPSim does so (the reference's
//!   caveat about several CPUs). The postal models use the later of that and the current time.
//! - Matching takes the first compatible entry of the receive queue (for an arriving message)
//!   or of the unexpected queue (for a posted receive), see
//!   [`crate::backend::goal::matching`].

mod chantab;
mod graph;
mod matchq;
mod park;
mod prefetch;
mod queue;
mod timeline;

use super::stdsort;
use super::{Leftover, Model, SimOptions, SimResult};
use crate::backend::goal::GoalSchedule;
pub use graph::{Builder, Compiled};
use graph::{CALC, MSG, PARKED, RECV, SEND, State, build};
use matchq::Queues;
use park::Parking;
use queue::{Ev, Events, Unexpected};
use timeline::{Flat, complete_send, record, span};

/// How many pops ahead [`prefetch_ahead`] starts loading, for an event: its rank's clocks
/// ([`FAR`]), its op's record ([`NEAR`]), then the list of ops waiting for it and its entry in
/// the unexpected queue ([`LIST`]), and last the records of the first waiting ops
/// ([`WAITING`]). Each stage reads what the stage before brought in.
const FAR: usize = 16;
const NEAR: usize = 8;
const LIST: usize = 4;
const WAITING: usize = 2;
/// A message's stages after [`NEAR`] (its send's record, for the tag): its channel's entry
/// in the receive-queue table ([`TABLE`]), the oldest receive queued there ([`SLOT`]), that
/// receive's record ([`RECEIVE`]), its list of waiting ops ([`RECEIVE_LIST`]) and their first
/// records ([`RECEIVE_WAITING`]): what completing the posted receive reads.
const TABLE: usize = 6;
const SLOT: usize = 4;
const RECEIVE: usize = 3;
const RECEIVE_LIST: usize = 2;
const RECEIVE_WAITING: usize = 1;

/// Hints to the cache what the events a few pops ahead will read ([`prefetch`]; the stages
/// at [`FAR`]). An event names its op by its global index (a message's is the send's).
///
/// The coming events are those of the earliest time, the in-order run and the events put
/// back (busy CPU or NIC) merged ([`Events::coming`]): on recursive multiplying most
/// messages are put back at least once, and were not prefetched when only the run was.
fn prefetch_ahead(
    aq: &Events,
    g: &graph::Graph,
    ck: &Clocks,
    rq: &Queues<u32>,
    uq: &Queues<Unexpected>,
) {
    let next = aq.coming::<{ FAR + 1 }>();
    if let Some(e) = next[FAR] {
        prefetch::touch(&ck.v[ck.o(e.host, 0)]);
    }
    if let Some(e) = next[NEAR] {
        g.prefetch(e.node as usize);
    }
    if let Some(e) = next[LIST].filter(|e| e.ty != MSG) {
        let i = e.node as usize;
        if e.ty == RECV {
            let n = g.node(i);
            uq.prefetch(e.host, n.peer, n.tag);
        }
        g.prefetch_list(i);
    }
    if let Some(e) = next[WAITING].filter(|e| e.ty != MSG) {
        g.prefetch_waiting(e.node as usize);
    }
    // A message: its channel (host, source, tag) and the receive queued there, if any.
    let channel = |k: usize| {
        next[k]
            .filter(|e| e.ty == MSG)
            .map(|e| (e.host, e.src, g.node(e.node as usize).tag))
    };
    if let Some((h, s, t)) = channel(TABLE) {
        rq.prefetch(h, s, t);
    }
    if let Some((h, s, t)) = channel(SLOT) {
        rq.prefetch_oldest(h, s, t);
    }
    let receive = |k: usize| channel(k).and_then(|(h, s, t)| rq.peek(h, s, t).copied());
    if let Some(r) = receive(RECEIVE) {
        g.prefetch(r as usize);
    }
    if let Some(r) = receive(RECEIVE_LIST) {
        g.prefetch_list(r as usize);
    }
    if let Some(r) = receive(RECEIVE_WAITING) {
        g.prefetch_waiting(r as usize);
    }
}

/// Per rank, the next free time of each of its CPUs, of each NIC's receive and send sides,
/// and the latest completion of its ops, side by side: `stride` times per rank (`ncpus` CPU
/// clocks, `nnics` receive and `nnics` send clocks, the last completion, padded to a power of
/// two), so that an event reads its rank's state in one cache line where separate arrays cost
/// a miss each.
struct Clocks {
    v: Vec<u64>,
    stride: usize,
    ncpus: usize,
    nnics: usize,
}

impl Clocks {
    fn new(ranks: usize, ncpus: usize, nnics: usize) -> Clocks {
        let stride = (ncpus + 2 * nnics + 1).next_power_of_two();
        Clocks {
            v: vec![0; ranks * stride],
            stride,
            ncpus,
            nnics,
        }
    }
    /// CPU `cpu` of rank `h` (LogGOPSim's `nexto`).
    #[inline]
    fn o(&self, h: u32, cpu: u8) -> usize {
        h as usize * self.stride + usize::from(cpu)
    }
    /// The receive side of NIC `nic` (`nextgr`).
    #[inline]
    fn gr(&self, h: u32, nic: u8) -> usize {
        h as usize * self.stride + self.ncpus + usize::from(nic)
    }
    /// The send side of NIC `nic` (`nextgs`).
    #[inline]
    fn gs(&self, h: u32, nic: u8) -> usize {
        h as usize * self.stride + self.ncpus + self.nnics + usize::from(nic)
    }
    /// The latest completion of an op of rank `h`.
    #[inline]
    fn last(&self, h: u32) -> usize {
        h as usize * self.stride + self.ncpus + 2 * self.nnics
    }
    /// An op of rank `h` completed at `t`.
    #[inline]
    fn finished(&mut self, h: u32, t: u64) {
        let i = self.last(h);
        self.v[i] = self.v[i].max(t);
    }
    /// A rendezvous send of rank `h` (on `cpu` and `nic`) completes at `t`: its CPU and NIC
    /// are busy until then.
    fn rendezvous(&mut self, h: u32, cpu: u8, nic: u8, t: u64) {
        let (o, g) = (self.o(h, cpu), self.gs(h, nic));
        self.v[o] = self.v[o].max(t);
        self.v[g] = self.v[g].max(t);
        self.finished(h, t);
    }
}

/// Runs a schedule; see the module doc. Never fails: what cannot run is reported in the result.
pub fn simulate(s: &GoalSchedule, opts: &SimOptions) -> SimResult {
    simulate_bounded(s, opts, crate::sema::elab::Limits::MAX_EVENTS)
}

/// Simulated-time arithmetic: LogGOPSim's, in unsigned 64-bit integers (`btime_t` and the
/// sizes are `uint64_t`), except where its sums wrap past 2^64 - 1.
///
/// Every time has the shape `base + add + steps * per`, with LogGP's `steps = size - 1`. For a
/// 0-byte message LogGOPSim's `(size-1)*G` is `(0-1)*G = 2^64 - G`, so the sum is
/// `base + add - G` modulo 2^64: a 0-byte send frees its NIC at `t + g - G` (and its CPU at
/// `t + o - O`). Here the sum is computed exactly: when it is below zero (`t + g < G`, e.g.
/// `g = 0` at `t = 0`) it wraps as in LogGOPSim, to just under 2^64, and the first such op is
/// remembered; when it passes 2^64 - 1 (a 2^64-1 byte send, or an op that waits for a wrapped
/// time), where LogGOPSim wraps round to an early time, the first such op is remembered and
/// the run stops (E0047 for the caller), unless `wrap` ([`super::LogGP::wrap`]) asks for
/// LogGOPSim's modulo-2^64 result there too.
#[derive(Default)]
struct Clock {
    overflow: Option<(u32, u32)>,
    wrapped: Option<(u32, u32)>,
    wrap: bool,
}

impl Clock {
    /// `base + add + steps * per` as LogGOPSim computes it (see [`Clock`]); `u64::MAX` after
    /// an overflow. `steps >= -1`.
    fn time(&mut self, at: (u32, u32), base: u64, add: u64, steps: i128, per: u64) -> u64 {
        let exact = steps
            .checked_mul(i128::from(per))
            .and_then(|x| x.checked_add(i128::from(base) + i128::from(add)));
        if let Some(t) = exact.and_then(|v| u64::try_from(v).ok()) {
            return t;
        }
        // LogGOPSim's value: everything modulo 2^64 (`steps as u64` keeps the low 64 bits,
        // so -1 is 2^64 - 1 as LogGOPSim's `size - 1` for size 0).
        let modular = base
            .wrapping_add(add)
            .wrapping_add((steps as u64).wrapping_mul(per));
        match exact {
            Some(v) if v < 0 => {
                self.wrapped.get_or_insert(at);
                modular
            }
            _ if self.wrap => modular,
            _ => {
                self.overflow.get_or_insert(at);
                u64::MAX
            }
        }
    }

    /// LogGOPSim's receive: the CPU is free at `t + o + max((s-1)*O, (s-1)*G)`, the maximum
    /// taken on unsigned integers. For `s >= 1` that is `(s-1) * max(O, G)` (when it fits in
    /// 64 bits); for `s = 0` it is the larger of `2^64 - O` and `2^64 - G` (each 0 when its
    /// parameter is 0): `t + o - G` when `O = 0` (LogGOPSim's default), `t + o - O` when
    /// `G = 0`, `t + o - min(O, G)` when neither is 0, `t + o` when both are.
    #[allow(non_snake_case)]
    fn receive(&mut self, at: (u32, u32), t: u64, o: u64, size: u64, O: u64, G: u64) -> u64 {
        let steps = size.wrapping_sub(1);
        let fits = |per: u64| steps.checked_mul(per).is_some();
        if self.wrap && size > 0 && !(fits(O) && fits(G)) {
            // Both products wrapped as LogGOPSim's do, then compared.
            let per = steps.wrapping_mul(O).max(steps.wrapping_mul(G));
            return t.wrapping_add(o).wrapping_add(per);
        }
        let per = match (size, O, G) {
            (0, 0, x) | (0, x, 0) => x,
            (0, a, b) => a.min(b),
            _ => O.max(G),
        };
        self.time(at, t, o, i128::from(size) - 1, per)
    }
}

/// [`simulate`], stopping after `max_events` events (the result says so).
pub fn simulate_bounded(s: &GoalSchedule, opts: &SimOptions, max_events: u64) -> SimResult {
    simulate_compiled(build(s), opts, max_events)
}

/// [`simulate_bounded`] on a schedule already compiled for the loop (what
/// [`crate::sim::read`] makes from GOAL text without a [`GoalSchedule`]).
pub fn simulate_compiled(c: Compiled, opts: &SimOptions, max_events: u64) -> SimResult {
    run(c, opts, max_events, Parking::new(true))
}

/// [`simulate_compiled`], with events that find their CPU or NIC busy parked per resource
/// ([`park`]) or, with parking disabled, put back one by one as LogGOPSim does.
fn run(c: Compiled, opts: &SimOptions, max_events: u64, mut parked: Parking) -> SimResult {
    let p = c.ranks();
    let total = c.ops();
    let g = c.graph;
    let ncpus = usize::from(g.max_cpu) + 1;
    let nnics = usize::from(g.max_nic) + 1;
    let base = &g.base;
    // Events, queues and dependents name ops by their global index in the graph.
    let node = |i: u32| g.node(i as usize);
    let (loggp, postal) = match opts.model {
        Model::LogGP(m) => (Some(m), None),
        Model::Postal(m) => (None, Some(m)),
    };
    let mut ck = Clocks::new(p, ncpus, nnics);
    let mut rq: Queues<u32> = Queues::new(p, g.wild);
    let mut uq: Queues<Unexpected> = Queues::new(p, g.wild);
    let mut timeline: Flat = opts.trace.then(|| vec![None; total]);
    let mut aq = Events::default();
    let mut aqtime: u64 = 0;
    let mut messages = 0u64;
    let mut ops_run = 0usize;
    let mut st = State {
        g: &g,
        ready: Vec::new(),
    };
    let by_type = |a: &(u8, u32), b: &(u8, u32)| a.0 < b.0;
    // Events name ops by a 32-bit global index: a graph of 2^32 ops or more (over 100 GB) does
    // not run, and the result says it stopped, as over the event limit (each op is an event).
    let fits = total < u32::MAX as usize;
    // Initially executable ops: each host's roots in op order.
    for h in 0..if fits { p as u32 } else { 0 } {
        let b = base[h as usize];
        let mut free: Vec<(u8, u32)> = (b as u32..base[h as usize + 1] as u32)
            .filter(|i| g.remaining(*i as usize) == 0)
            .map(|i| (node(i).ty, i))
            .collect();
        stdsort::sort(&mut free, by_type);
        for (ty, i) in free {
            aq.push(Ev {
                time: 0,
                ts: aqtime,
                host: h,
                node: i,
                src: h,
                start: 0,
                ty,
            });
            aqtime += 1;
        }
    }
    let mut free: Vec<(u8, u32)> = Vec::new();
    let mut clock = Clock {
        wrap: loggp.is_some_and(|m| m.wrap),
        ..Clock::default()
    };
    let mut stopped = !fits;
    while let Some(mut ev) = aq.pop() {
        if ev.ty == PARKED {
            // A parked event's turn, or a stale marker (nothing happened).
            match parked.take(&mut aq, &ev) {
                Some(e) => ev = e,
                None => continue,
            }
        }
        prefetch_ahead(&aq, &g, &ck, &rq, &uq);
        if aqtime > max_events || clock.overflow.is_some() {
            stopped = aqtime > max_events;
            break;
        }
        let (h, t) = (ev.host, ev.time);
        match ev.ty {
            CALC => {
                let n = node(ev.node);
                let oi = ck.o(h, n.cpu);
                if ck.v[oi] <= t {
                    let end = clock.time((h, ev.node), t, n.size, 0, 0);
                    ck.v[oi] = end;
                    st.started(h, ev.node);
                    st.done(h, ev.node);
                    ops_run += 1;
                    ck.finished(h, end);
                    record(
                        &mut timeline,
                        ev.node,
                        span(h, ev.node, n.cpu, t, end, ev.start, end),
                    );
                } else {
                    ev.time = ck.v[oi];
                    parked.put_back(&mut aq, ev, (oi, oi), &ck.v);
                }
            }
            SEND => {
                let n = node(ev.node);
                let (oi, ni) = (ck.o(h, n.cpu), ck.gs(h, n.nic));
                let (busy, res) = match postal {
                    Some(_) => (ck.v[oi], (oi, oi)),
                    None => (ck.v[oi].max(ck.v[ni]), (oi, ni)),
                };
                if busy > t {
                    ev.time = busy;
                    parked.put_back(&mut aq, ev, res, &ck.v);
                    continue;
                }
                st.started(h, ev.node);
                ops_run += 1;
                let (cpu_end, arrival, eager) = match opts.model {
                    Model::LogGP(m) => {
                        let at = (h, ev.node);
                        ck.v[ni] = clock.time(at, t, m.g, i128::from(n.size) - 1, m.G);
                        (
                            clock.time(at, t, m.o, i128::from(n.size) - 1, m.O),
                            clock.time(at, t, m.o, 1, m.L),
                            n.size <= m.S,
                        )
                    }
                    Model::Postal(m) => {
                        let end = clock.time((h, ev.node), t, m.alpha_r, n.size.into(), m.beta);
                        (end, clock.time((h, ev.node), end, m.alpha_p, 0, 0), true)
                    }
                };
                ck.v[oi] = cpu_end;
                aq.push(Ev {
                    time: arrival,
                    ts: aqtime,
                    host: n.peer,
                    node: ev.node,
                    src: h,
                    start: t,
                    ty: MSG,
                });
                aqtime += 1;
                messages += 1;
                let completed = if eager {
                    st.done(h, ev.node);
                    let c = if postal.is_some() {
                        cpu_end
                    } else {
                        clock.time((h, ev.node), t, loggp.map_or(0, |m| m.o), 0, 0)
                    };
                    ck.finished(h, c);
                    c
                } else {
                    u64::MAX
                };
                record(
                    &mut timeline,
                    ev.node,
                    span(h, ev.node, n.cpu, t, cpu_end, ev.start, completed),
                );
            }
            RECV => {
                let n = node(ev.node);
                st.started(h, ev.node);
                match uq.take(h, n.peer, n.tag) {
                    Some(m) => {
                        if loggp.is_some_and(|lg| n.size > lg.S) {
                            st.done(m.src, m.node);
                            ck.rendezvous(m.src, n.cpu, n.nic, t);
                            complete_send(&mut timeline, m.node, t);
                        }
                        st.done(h, ev.node);
                        ops_run += 1;
                        ck.finished(h, t);
                        let (a, b) = if postal.is_some() {
                            (t, t)
                        } else {
                            (m.o_start, m.o_end)
                        };
                        record(&mut timeline, ev.node, span(h, ev.node, n.cpu, a, b, t, t));
                    }
                    None => rq.push(h, n.peer, n.tag, ev.node),
                }
                if let Some(tl) = timeline.as_mut() {
                    // Remember when the receive was posted, for its span when it completes.
                    if tl[ev.node as usize].is_none() {
                        tl[ev.node as usize] = Some(span(h, ev.node, n.cpu, t, t, t, u64::MAX));
                    }
                }
            }
            _ => {
                // A message from `ev.src` arriving at `h`.
                let sn = node(ev.node);
                let (oi, ni) = (ck.o(h, sn.cpu), ck.gr(h, sn.nic));
                let (o_start, o_end) = match loggp {
                    Some(m) => {
                        let busy = ck.v[oi].max(ck.v[ni]);
                        if busy > t {
                            ev.time = busy;
                            parked.put_back(&mut aq, ev, (oi, ni), &ck.v);
                            continue;
                        }
                        let at = (ev.src, ev.node);
                        let end = clock.receive(at, t, m.o, sn.size, m.O, m.G);
                        ck.v[oi] = end;
                        ck.v[ni] = clock.time(at, t, m.g, i128::from(sn.size) - 1, m.G);
                        (t, end)
                    }
                    None => (t, t),
                };
                match rq.take(h, ev.src, sn.tag) {
                    Some(r) => {
                        if loggp.is_some_and(|m| sn.size > m.S) {
                            st.done(ev.src, ev.node);
                            ck.rendezvous(ev.src, sn.cpu, sn.nic, t);
                            complete_send(&mut timeline, ev.node, t);
                        }
                        st.done(h, r);
                        ops_run += 1;
                        ck.finished(h, t);
                        if let Some(tl) = timeline.as_mut() {
                            let rn = node(r);
                            let posted = tl[r as usize].map_or(t, |x| x.issued);
                            tl[r as usize] = Some(span(h, r, rn.cpu, o_start, o_end, posted, t));
                        }
                    }
                    None => uq.push(
                        h,
                        ev.src,
                        sn.tag,
                        Unexpected {
                            src: ev.src,
                            node: ev.node,
                            o_start,
                            o_end,
                        },
                    ),
                }
            }
        }
        // Queue what became executable, host by host.
        if st.ready.is_empty() {
            continue;
        }
        let mut ready = std::mem::take(&mut st.ready);
        // Stable: each host's ops stay in release order.
        ready.sort_by_key(|r| r.0);
        for group in ready.chunk_by(|a, b| a.0 == b.0) {
            let host = group[0].0;
            free.clear();
            free.extend(group.iter().map(|&(_, i)| (node(i).ty, i)));
            stdsort::sort(&mut free, by_type);
            for &(ty, i) in &free {
                let n = node(i);
                let oi = ck.o(host, n.cpu);
                let mut time = match ty {
                    SEND if loggp.is_some() => ck.v[oi].max(ck.v[ck.gs(host, n.nic)]),
                    _ => ck.v[oi],
                };
                if postal.is_some() {
                    time = time.max(t);
                }
                aq.push(Ev {
                    time,
                    ts: aqtime,
                    host,
                    node: i,
                    src: host,
                    start: time,
                    ty,
                });
                aqtime += 1;
            }
        }
        ready.clear();
        st.ready = ready;
    }
    let finish: Vec<u64> = (0..p as u32)
        .map(|h| {
            let o = (0..ncpus)
                .map(|cpu| ck.v[ck.o(h, cpu as u8)])
                .max()
                .unwrap_or(0);
            if postal.is_some() {
                o.max(ck.v[ck.last(h)])
            } else {
                o
            }
        })
        .collect();
    let (mut max, mut max_rank) = (0u64, 0u32);
    for (h, f) in finish.iter().enumerate() {
        if *f > max {
            max = *f;
            max_rank = h as u32;
        }
    }
    let unmatched = rq
        .items()
        .into_iter()
        .map(|(host, peer, tag, i)| Leftover {
            host,
            peer,
            tag,
            op: (host, *i - base[host as usize] as u32),
        })
        .collect();
    let unexpected = uq
        .items()
        .into_iter()
        .map(|(host, peer, tag, m)| Leftover {
            host,
            peer,
            tag,
            op: (m.src, m.node - base[m.src as usize] as u32),
        })
        .collect();
    if let Some(tl) = timeline.as_mut() {
        // Receives posted but never completed did not run.
        for (i, x) in tl.iter_mut().enumerate() {
            if x.is_some_and(|x| x.completed == u64::MAX && g.node(i).ty == RECV) {
                *x = None;
            }
        }
    }
    let timeline = timeline.map(|tl| timeline::per_rank(tl, base));
    SimResult {
        finish,
        max,
        max_rank,
        events: aqtime,
        messages,
        ops_run,
        ops_total: total,
        cpus: ncpus as u32,
        nics: nnics as u32,
        unexpected,
        unmatched,
        timeline,
        // The clock names ops by global index; the result by index in the rank.
        overflow: clock
            .overflow
            .map(|(h, i)| (h, i - base[h as usize] as u32)),
        wrapped: clock.wrapped.map(|(h, i)| (h, i - base[h as usize] as u32)),
        stopped,
    }
}

#[cfg(test)]
mod tests;
