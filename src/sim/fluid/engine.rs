//! The event loop of the flow-level simulator for GOAL programs (see [`super`]).
//!
//! - An op becomes executable when its `requires` dependencies have finished and its
//!   `irequires` ones have started, as in GOAL.
//! - A **send** starts a flow from its rank's node to its peer's at once (a rank may have many
//!   flows in the network; they share its links like everyone else's). The send finishes when
//!   its last byte has left; the message arrives its route's link latencies plus the model's
//!   `overhead` later. A send to a rank on the same node has no route and moves instantly.
//! - A **recv** is posted when it becomes executable and finishes when its message has
//!   arrived. Sends and receives are paired before the run, by sender, receiver and tag, the
//!   k-th send of a key with the k-th receive in program order ([`super::pair::pair`]).
//!   GOAL pairs a key's messages in the order they arrive; the two agree on every program
//!   collc lowers, which names each message by its own tag.
//! - A **calc** occupies its CPU for its time; calcs on one CPU run one after another in the
//!   order they became executable.
//! - Flow rates are max-min fair over link bandwidths ([`crate::net::fair_rates`]), recomputed
//!   whenever the set of flows changes, for the flows that share links with the ones that
//!   started or ended ([`super::flows`]: the fair rates decompose over those components). Under `routing: spray` a flow loads every link of its
//!   spread route ([`crate::net::Net::spread`]) by its share; its latency is still its ECMP
//!   route's (equal-cost paths have equal hop counts).
//!
//! The loop numbers ops as [`Prepared`] lays them out (op i of every rank side by side,
//! [`super::layout`]), not as GOAL does; it runs them in the same order either way.
//!
//! Events at the same instant are handled in a fixed order (flows finishing by flow number,
//! then arrivals and calc ends by time, first in first out: a radix heap on the times' bits,
//! [`RadixHeap`]), so a run is reproducible bit for bit.

use super::flows::{Flows, Sent};
pub use super::layout::Prepared;
use super::layout::{CALC, RECV, SEND};
use super::pair::NONE;
use super::routes::Routes;
use super::{FlowRun, LaneSpan};
use crate::backend::goal::GoalSchedule;
use crate::net::{FlowParams, Net};
use crate::sema::model::NodeId;
use crate::sim::radix::RadixHeap;
use rustc_hash::FxHashMap as HashMap;
use serde_json::json;
use std::borrow::Cow;
use std::collections::VecDeque;

/// A run that could not finish: ops that never became executable or receives never matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stuck {
    pub ops_left: usize,
    /// The first rank with an op that never ran.
    pub rank: u32,
}

/// What has happened to an op during a run (`Sim::st`, bits): a receive was posted, a
/// receive's message arrived, the op finished.
const POSTED: u8 = 1;
const ARRIVED: u8 = 2;
const DONE: u8 = 4;

/// A (rank, receiver) pair whose route a run has not looked up yet.
const NO_ROUTE: usize = u32::MAX as usize;

/// Ops by their place in the engine's layout ([`super::layout`]).
#[derive(Clone, Copy)]
enum Ev {
    /// A message reaches its receive.
    Arrive(u32, u32),
    /// A calc ends.
    CalcDone(u32, u32),
}

struct Sim<'a> {
    tick: f64,
    prep: &'a Prepared,
    /// Every send's bytes and calc's time at this run's size.
    amount: Cow<'a, [u64]>,
    remaining: Vec<u32>,
    now: f64,
    ready: VecDeque<u32>,
    /// Arrivals and calc ends by time (as [`key`]), first in first out among equal times.
    events: RadixHeap<Ev>,
    /// Every op's state ([`POSTED`], [`ARRIVED`], [`DONE`]).
    st: Vec<u8>,
    cpu_free: HashMap<(u32, u8), f64>,
    finish: Vec<f64>,
    done_ops: usize,
    /// When each op started (calcs: when their CPU took them); kept for the trace only.
    started: Vec<f64>,
    spans: Option<Vec<LaneSpan>>,
}

/// A time's place in the event queue: for the times a run makes (finite, not negative) the
/// order of their bits is the order of the numbers (`+ 0.0` turns a -0 into 0).
fn key(t: f64) -> u64 {
    debug_assert!(t >= 0.0 && t.is_finite(), "event time {t}");
    (t + 0.0).to_bits()
}

impl Sim<'_> {
    fn release(&mut self, p: u32, on_done: bool) {
        let list = if on_done {
            self.prep.after_done(p)
        } else {
            self.prep.after_start(p)
        };
        for &d in list {
            let j = d as usize;
            self.remaining[j] -= 1;
            if self.remaining[j] == 0 {
                self.ready.push_back(d);
            }
        }
    }

    /// Op `p` of rank `rank` finishes now (its rank given by the caller, who has it at hand:
    /// reading it from the op's record here was a cache miss per op).
    fn finished(&mut self, p: u32, rank: u32) {
        debug_assert_eq!(self.prep.hot[p as usize].rank, rank);
        self.done_ops += 1;
        self.st[p as usize] = DONE;
        let f = &mut self.finish[rank as usize];
        *f = f.max(self.now);
        self.release(p, true);
    }

    fn push(&mut self, at: f64, ev: Ev) {
        self.events.push(key(at), ev);
    }

    /// The message of send `p` to rank `to` arrives at `at`, at its paired receive (a send
    /// nobody receives is simply gone).
    fn deliver(&mut self, p: u32, to: u32, at: f64) {
        let q = self.prep.pair[p as usize];
        if q != NONE {
            self.push(at, Ev::Arrive(q, to));
        }
    }

    fn span(
        &mut self,
        rank: u32,
        lane: u32,
        name: String,
        start: f64,
        args: Vec<(&str, serde_json::Value)>,
    ) {
        let now = self.now;
        if let Some(sp) = &mut self.spans {
            sp.push(LaneSpan {
                pid: rank,
                lane,
                name,
                start,
                end: now,
                args: args.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            });
        }
    }
}

/// Every op's bytes or time at a run's size, by class ([`crate::backend::goal::Sizing`]):
/// `laid` is each op's class in the layout's order ([`Prepared::laid`]), `table` each class's
/// amount.
#[derive(Clone, Copy)]
pub struct Sizes<'a> {
    pub table: &'a [u64],
    pub laid: &'a [u32],
}

/// Runs a GOAL schedule whose rank r sits on node `hosts[r]`; GOAL time units (calc times)
/// are `tick` seconds. Keeps a timeline when `trace` is set. Every op's bytes or time come
/// from `amounts` when given (laid out as `prepared` lays `s` out), else from `s`; `s`'s
/// structure from `prepared` (made from `s`) when given.
#[allow(clippy::too_many_arguments)]
pub fn run(
    s: &GoalSchedule,
    amounts: Option<Sizes<'_>>,
    prepared: Option<&Prepared>,
    hosts: &[NodeId],
    tick: f64,
    net: &Net,
    params: &FlowParams,
    trace: bool,
) -> Result<FlowRun, Stuck> {
    let made;
    let prep = match prepared {
        Some(p) => p,
        None => {
            made = Prepared::new(s);
            &made
        }
    };
    let amount = match amounts {
        Some(z) => Cow::Owned(z.laid.iter().map(|&c| z.table[c as usize]).collect()),
        None => Cow::Borrowed(&prep.own[..]),
    };
    let total = amount.len();
    let mut sim = Sim {
        tick,
        prep,
        amount,
        st: vec![0; total],
        remaining: prep.remaining.clone(),
        now: 0.0,
        ready: prep.initial.iter().copied().collect(),
        events: RadixHeap::default(),
        cpu_free: HashMap::default(),
        finish: vec![0.0; s.ranks.len()],
        done_ops: 0,
        started: if trace { vec![0.0; total] } else { Vec::new() },
        spans: trace.then(Vec::new),
    };
    let caps = params.caps(net);
    let mut table = Routes {
        plain: Vec::new(),
        shared: Vec::new(),
        lat: Vec::new(),
        over: Vec::new(),
        spray: params.spray,
    };
    // Routes by node pair, made as sends first need them, and each send's (rank, receiver)
    // pair's route ([`Prepared`]'s pair numbers; ranks on one node share a route).
    let mut route_of: HashMap<(NodeId, NodeId), usize> = HashMap::default();
    let mut route_by_pair = vec![NO_ROUTE as u32; prep.peer_pairs];
    // Bytes per link, and whether a message crossed it (a link only 0-byte messages crossed
    // is still listed).
    let mut link_bytes: Vec<Option<f64>> = vec![None; net.links.len()];
    let mut flows = Flows::new(net.links.len());
    let mut ended: Vec<Sent> = Vec::new();
    let mut messages = 0u64;
    loop {
        // Start everything that is executable now.
        while let Some(p) = sim.ready.pop_front() {
            let pi = p as usize;
            let op = sim.prep.hot[pi];
            let r = op.rank;
            if trace {
                sim.started[pi] = sim.now;
            }
            sim.release(p, false);
            match op.kind {
                SEND => {
                    let (size, to) = (sim.amount[pi], op.peer);
                    messages += 1;
                    let k = sim.prep.peers[pi] as usize;
                    let mut ri = route_by_pair[k] as usize;
                    if ri == NO_ROUTE {
                        let (a, b) = (
                            hosts[r as usize],
                            hosts.get(to as usize).copied().unwrap_or(hosts[r as usize]),
                        );
                        ri = *route_of
                            .entry((a, b))
                            .or_insert_with(|| table.add(net, params, a, b));
                        route_by_pair[k] = ri as u32;
                    }
                    for &(l, w) in &table.shared[ri] {
                        *link_bytes[l as usize].get_or_insert(0.0) += size as f64 * w;
                    }
                    if table.plain[ri].is_empty() || size == 0 {
                        // Nothing to move over links: gone at once, there after the latency.
                        let at = sim.now + table.lat[ri] + table.over[ri];
                        if trace {
                            let args = vec![("bytes", json!(size))];
                            sim.span(r, 0, format!("send to {to}"), sim.now, args);
                        }
                        sim.finished(p, r);
                        sim.deliver(p, to, at);
                    } else {
                        let sent = Sent {
                            rank: r,
                            op: p,
                            to,
                            route: ri,
                            start: sim.now,
                        };
                        flows.add(sent, size as f64, &table.shared[ri]);
                    }
                }
                RECV => {
                    if sim.st[pi] & ARRIVED != 0 {
                        if trace {
                            let from = op.peer;
                            sim.span(r, 1, format!("recv from {from}"), sim.now, vec![]);
                        }
                        sim.finished(p, r);
                    } else {
                        sim.st[pi] |= POSTED;
                    }
                }
                _ => {
                    debug_assert_eq!(op.kind, CALC);
                    let time = sim.amount[pi];
                    let free = sim.cpu_free.get(&(r, op.cpu)).copied().unwrap_or(0.0);
                    let begin = free.max(sim.now);
                    let end = begin + time as f64 * sim.tick;
                    sim.cpu_free.insert((r, op.cpu), end);
                    if trace {
                        sim.started[pi] = begin;
                    }
                    sim.push(end, Ev::CalcDone(p, r));
                }
            }
        }
        flows.refill(sim.now, &caps, &table);
        let t_flow = flows.next_end();
        let t_ev = sim.events.min_key().map_or(f64::INFINITY, f64::from_bits);
        let next = t_flow.min(t_ev);
        if !next.is_finite() {
            break;
        }
        sim.now = next;
        if t_flow <= t_ev {
            // Every flow that ends now (within rounding) leaves the network, in start order.
            flows.end_at(sim.now, &table, &mut ended);
            for &f in &ended {
                let at = sim.now + table.lat[f.route] + table.over[f.route];
                if trace {
                    let bytes = sim.amount[f.op as usize];
                    let args = vec![("bytes", json!(bytes))];
                    sim.span(f.rank, 0, format!("send to {}", f.to), f.start, args);
                }
                sim.finished(f.op, f.rank);
                sim.deliver(f.op, f.to, at);
            }
        }
        while sim
            .events
            .min_key()
            .is_some_and(|t| f64::from_bits(t) <= sim.now)
        {
            let Some((_, ev)) = sim.events.pop() else {
                break;
            };
            match ev {
                Ev::Arrive(p, rank) => {
                    let pi = p as usize;
                    if sim.st[pi] & POSTED != 0 {
                        if trace {
                            let h = sim.prep.hot[pi];
                            let posted = sim.started[pi];
                            sim.span(h.rank, 1, format!("recv from {}", h.peer), posted, vec![]);
                        }
                        sim.finished(p, rank);
                    } else {
                        sim.st[pi] |= ARRIVED;
                    }
                }
                Ev::CalcDone(p, rank) => {
                    if trace {
                        let pi = p as usize;
                        let begin = sim.started[pi];
                        sim.span(rank, 2, "calc".into(), begin, vec![]);
                    }
                    sim.finished(p, rank);
                }
            }
        }
    }
    debug_assert_eq!(flows.len(), 0);
    if sim.done_ops < total {
        // The first rank with an op that never ran.
        let rank = (0..total)
            .filter(|&p| sim.st[p] & DONE == 0)
            .map(|p| sim.prep.hot[p].rank)
            .min()
            .unwrap_or(0);
        return Err(Stuck {
            ops_left: total - sim.done_ops,
            rank,
        });
    }
    Ok(FlowRun {
        finish: sim.finish,
        link_bytes: super::outcome::loaded(link_bytes),
        messages,
        spans: sim.spans,
    })
}
