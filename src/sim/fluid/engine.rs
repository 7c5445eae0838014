//! The event loop of the flow-level simulator for GOAL programs (see [`super`]).
//!
//! - An op becomes executable when its `requires` dependencies have finished and its
//!   `irequires` ones have started, as in GOAL.
//! - A **send** starts a flow from its rank's node to its peer's at once (a rank may have many
//!   flows in the network; they share its links like everyone else's). The send finishes when
//!   its last byte has left; the message arrives its route's link latencies plus the model's
//!   `overhead` later. A send to a rank on the same node has no route and moves instantly.
//! - A **recv** is posted when it becomes executable and finishes when its message has
//!   arrived (messages are matched by source and tag; GOAL programs lowered from the IR name
//!   every message by its own tag).
//! - A **calc** occupies its CPU for its time; calcs on one CPU run one after another in the
//!   order they became executable.
//! - Flow rates are max-min fair over link bandwidths ([`crate::net::fair_rates`]), recomputed
//!   whenever the set of flows changes, for the flows that share links with the ones that
//!   started or ended ([`super::flows`]: the fair rates decompose over those components). Under `routing: spray` a flow loads every link of its
//!   spread route ([`crate::net::Net::spread`]) by its share; its latency is still its ECMP
//!   route's (equal-cost paths have equal hop counts).
//!
//! Events at the same instant are handled in a fixed order (flows finishing by flow number,
//! then arrivals and calc ends by time and sequence), so a run is reproducible bit for bit.

use super::flows::{Flows, Paths, Sent};
use super::{FlowRun, LaneSpan};
use crate::backend::goal::{Flat, GoalSchedule, OpKind};
use crate::net::{FlowParams, LinkId, Net, Total};
use crate::sema::model::NodeId;
use num_traits::ToPrimitive;
use rustc_hash::FxHashMap as HashMap;
use serde_json::json;
use std::cmp::Reverse;
use std::collections::hash_map::Entry;
use std::collections::{BinaryHeap, VecDeque};

/// A run that could not finish: ops that never became executable or receives never matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stuck {
    pub ops_left: usize,
    /// The first rank with an op that never ran.
    pub rank: u32,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A message reaches its receiver: (sender, receiver, tag).
    Arrive(u32, u32, u32),
    /// A calc ends: (rank, op).
    CalcDone(u32, u32),
}

struct Sim {
    tick: f64,
    flat: Flat,
    remaining: Vec<u32>,
    now: f64,
    ready: VecDeque<(u32, u32)>,
    events: BinaryHeap<Reverse<(Total, u64, Ev)>>,
    seq: u64,
    /// Per (receiver, sender, tag): messages arrived before their receive, and receives posted
    /// before their message.
    arrived: HashMap<(u32, u32, u32), u32>,
    posted: HashMap<(u32, u32, u32), VecDeque<u32>>,
    cpu_free: HashMap<(u32, u8), f64>,
    finish: Vec<f64>,
    done_ops: usize,
    /// When each op started (calcs: when their CPU took them); kept for the trace only.
    started: Vec<f64>,
    spans: Option<Vec<LaneSpan>>,
}

impl Sim {
    fn idx(&self, rank: u32, op: u32) -> usize {
        self.flat.g(rank, op)
    }

    fn release(&mut self, rank: u32, op: u32, on_done: bool) {
        let list = if on_done {
            self.flat.after_done(rank, op)
        } else {
            self.flat.after_start(rank, op)
        };
        for &d in list {
            let j = self.flat.g(rank, d);
            self.remaining[j] -= 1;
            if self.remaining[j] == 0 {
                self.ready.push_back((rank, d));
            }
        }
    }

    fn finished(&mut self, rank: u32, op: u32) {
        self.done_ops += 1;
        let f = &mut self.finish[rank as usize];
        *f = f.max(self.now);
        self.release(rank, op, true);
    }

    fn push(&mut self, at: f64, ev: Ev) {
        self.seq += 1;
        self.events.push(Reverse((Total(at), self.seq, ev)));
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

/// Runs a GOAL schedule whose rank r sits on node `hosts[r]`; GOAL time units (calc times)
/// are `tick` seconds. Keeps a timeline when `trace` is set.
pub fn run(
    s: &GoalSchedule,
    hosts: &[NodeId],
    tick: f64,
    net: &Net,
    params: &FlowParams,
    trace: bool,
) -> Result<FlowRun, Stuck> {
    let (flat, remaining) = Flat::new(s);
    let total = remaining.len();
    let mut sim = Sim {
        tick,
        flat,
        remaining,
        now: 0.0,
        ready: VecDeque::new(),
        events: BinaryHeap::new(),
        seq: 0,
        arrived: HashMap::default(),
        posted: HashMap::default(),
        cpu_free: HashMap::default(),
        finish: vec![0.0; s.ranks.len()],
        done_ops: 0,
        started: if trace { vec![0.0; total] } else { Vec::new() },
        spans: trace.then(Vec::new),
    };
    for (r, rank) in s.ranks.iter().enumerate() {
        for i in 0..rank.ops.len() {
            if sim.remaining[sim.flat.base[r] + i] == 0 {
                sim.ready.push_back((r as u32, i as u32));
            }
        }
    }

    let caps = params.caps(net);
    let mut table = Routes {
        plain: Vec::new(),
        shared: Vec::new(),
        lat: Vec::new(),
        over: Vec::new(),
        spray: params.spray,
    };
    let mut route_of: HashMap<(NodeId, NodeId), usize> = HashMap::default();
    // Bytes per link, and whether a message crossed it (a link only 0-byte messages crossed
    // is still listed).
    let mut link_bytes: Vec<Option<f64>> = vec![None; net.links.len()];
    let mut flows = Flows::new(net.links.len());
    let mut messages = 0u64;
    loop {
        // Start everything that is executable now.
        while let Some((r, i)) = sim.ready.pop_front() {
            let op = &s.ranks[r as usize].ops[i as usize];
            let gi = sim.idx(r, i);
            if trace {
                sim.started[gi] = sim.now;
            }
            sim.release(r, i, false);
            match op.kind {
                OpKind::Send { size, to, tag } => {
                    messages += 1;
                    let (a, b) = (
                        hosts[r as usize],
                        hosts.get(to as usize).copied().unwrap_or(hosts[r as usize]),
                    );
                    let ri = *route_of
                        .entry((a, b))
                        .or_insert_with(|| table.add(net, params, a, b));
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
                        sim.finished(r, i);
                        sim.push(at, Ev::Arrive(r, to, tag));
                    } else {
                        let sent = Sent {
                            rank: r,
                            op: i,
                            to,
                            tag,
                            route: ri,
                            start: sim.now,
                        };
                        flows.add(sent, size as f64, &table.shared[ri]);
                    }
                }
                OpKind::Recv { from, tag, .. } => {
                    let key = (r, from, tag);
                    match sim.arrived.entry(key) {
                        Entry::Occupied(mut k) => {
                            // Entries leave once used: the maps hold only messages in flight.
                            *k.get_mut() -= 1;
                            if *k.get() == 0 {
                                k.remove();
                            }
                            if trace {
                                sim.span(r, 1, format!("recv from {from}"), sim.now, vec![]);
                            }
                            sim.finished(r, i);
                        }
                        Entry::Vacant(_) => sim.posted.entry(key).or_default().push_back(i),
                    }
                }
                OpKind::Calc { time } => {
                    let free = sim.cpu_free.get(&(r, op.cpu)).copied().unwrap_or(0.0);
                    let begin = free.max(sim.now);
                    let end = begin + time as f64 * sim.tick;
                    sim.cpu_free.insert((r, op.cpu), end);
                    if trace {
                        sim.started[gi] = begin;
                    }
                    sim.push(end, Ev::CalcDone(r, i));
                }
            }
        }
        flows.refill(sim.now, &caps, &table);
        let t_flow = flows.next_end();
        let t_ev = sim
            .events
            .peek()
            .map_or(f64::INFINITY, |Reverse((t, _, _))| t.0);
        let next = t_flow.min(t_ev);
        if !next.is_finite() {
            break;
        }
        sim.now = next;
        if t_flow <= t_ev {
            // Every flow that ends now (within rounding) leaves the network, in start order.
            for f in flows.end_at(sim.now, &table) {
                let at = sim.now + table.lat[f.route] + table.over[f.route];
                if trace {
                    let bytes = match s.ranks[f.rank as usize].ops[f.op as usize].kind {
                        OpKind::Send { size, .. } => size,
                        _ => 0,
                    };
                    let args = vec![("bytes", json!(bytes))];
                    sim.span(f.rank, 0, format!("send to {}", f.to), f.start, args);
                }
                sim.finished(f.rank, f.op);
                sim.push(at, Ev::Arrive(f.rank, f.to, f.tag));
            }
        }
        while let Some(Reverse((t, _, ev))) = sim.events.peek().copied() {
            if t.0 > sim.now {
                break;
            }
            sim.events.pop();
            match ev {
                Ev::Arrive(from, to, tag) => {
                    let key = (to, from, tag);
                    let waiting = match sim.posted.entry(key) {
                        Entry::Occupied(mut q) => {
                            let op = q.get_mut().pop_front();
                            if q.get().is_empty() {
                                q.remove();
                            }
                            op
                        }
                        Entry::Vacant(_) => None,
                    };
                    match waiting {
                        Some(op) => {
                            if trace {
                                let posted = sim.started[sim.idx(to, op)];
                                sim.span(to, 1, format!("recv from {from}"), posted, vec![]);
                            }
                            sim.finished(to, op);
                        }
                        None => *sim.arrived.entry(key).or_insert(0) += 1,
                    }
                }
                Ev::CalcDone(r, i) => {
                    if trace {
                        let begin = sim.started[sim.idx(r, i)];
                        sim.span(r, 2, "calc".into(), begin, vec![]);
                    }
                    sim.finished(r, i);
                }
            }
        }
    }
    debug_assert_eq!(flows.len(), 0);
    if sim.done_ops < total {
        let rank = (0..s.ranks.len())
            .find(|&r| {
                (sim.flat.base[r]..sim.flat.base[r + 1]).any(|g| sim.remaining[g] > 0)
                    || sim.posted.keys().any(|k| k.0 as usize == r)
            })
            .unwrap_or(0) as u32;
        return Err(Stuck {
            ops_left: total - sim.done_ops,
            rank,
        });
    }
    Ok(FlowRun {
        finish: sim.finish,
        link_bytes: link_bytes
            .into_iter()
            .enumerate()
            .filter_map(|(l, b)| b.map(|b| (l as LinkId, b)))
            .collect(),
        messages,
        spans: sim.spans,
    })
}

/// The routes messages took so far: each route's links (and under `routing: spray` each
/// link's share), its latency and its per-message overhead.
struct Routes {
    plain: Vec<Vec<LinkId>>,
    shared: Vec<Vec<(LinkId, f64)>>,
    lat: Vec<f64>,
    over: Vec<f64>,
    spray: bool,
}

impl Routes {
    /// Adds the route from node `a` to node `b`; returns its index.
    fn add(&mut self, net: &Net, params: &FlowParams, a: NodeId, b: NodeId) -> usize {
        let route = net.route(a, b);
        self.lat
            .push(route.iter().map(|&l| net.links[l as usize].lat).sum());
        self.over
            .push(params.overhead_between(net, a, b).to_f64().unwrap_or(0.0));
        self.shared.push(if self.spray {
            net.spread(a, b)
                .into_iter()
                .map(|(l, w)| (l, w.to_f64().unwrap_or(0.0)))
                .collect()
        } else {
            route.iter().map(|&l| (l, 1.0)).collect()
        });
        self.plain.push(route);
        self.plain.len() - 1
    }
}

impl Paths for Routes {
    fn links(&self, route: usize) -> &[(LinkId, f64)] {
        &self.shared[route]
    }
    fn plain(&self, route: usize) -> &[LinkId] {
        &self.plain[route]
    }
    fn spray(&self) -> bool {
        self.spray
    }
}
