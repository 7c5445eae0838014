//! The cost model derived from the topology, for any host-based schedule: its lowered program
//! run as synchronous *rounds* on the network the file describes ([`crate::net`]).
//!
//! A send's round is the number of messages on the longest chain of dependencies and messages
//! that leads to it (a send that waits for nothing is in round 0; a send that waits for a
//! receive of a round-r message is in round r + 1 or later). All messages of a round are in
//! flight together, so a round costs
//!
//! - the slowest message's start-up: the flow model's per-message `overhead` plus its route's
//!   link latencies, plus
//! - the most loaded link's time: the bytes all of the round's messages put on it over its
//!   bandwidth (the sharing of links by messages sent at the same time), plus
//! - the busiest rank's reductions of that round (`gamma` per byte, as GOAL calcs).
//!
//! and a schedule costs the sum of its rounds. Everything is exact: bandwidths and latencies are
//! the file's rationals. For ring, recursive doubling and multiplying, and binomial trees the
//! rounds are the algorithm's steps, and the flow-level simulation ([`crate::sim::fluid`]),
//! which lets a rank go ahead as soon as its own messages are in, finishes no later than this.
//! Hand-checked cases are in tests/net_cost.rs.

use crate::backend::goal::{Flat, GoalSchedule, OpKind};
use crate::net::{FlowParams, LinkId, Net};
use crate::sema::model::NodeId;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Zero;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// One round's figures, in seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    pub messages: usize,
    pub startup: BigRational,
    pub transfer: BigRational,
    pub reduce: BigRational,
    /// The link whose load sets `transfer` (None when nothing crossed a link).
    pub busiest: Option<LinkId>,
}

impl Round {
    pub fn total(&self) -> BigRational {
        &self.startup + &self.transfer + &self.reduce
    }
}

/// A schedule's cost under the round model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundCost {
    pub rounds: Vec<Round>,
    pub seconds: BigRational,
}

/// The cost of `s` (rank r on node `hosts[r]`, calc times in units of `tick` seconds); None
/// when the program cannot run to its end (an unmatched receive).
pub fn round_cost(
    s: &GoalSchedule,
    hosts: &[NodeId],
    tick: &BigRational,
    net: &Net,
    params: &FlowParams,
) -> Option<RoundCost> {
    let (flat, mut remaining) = Flat::new(s);
    let (base, total) = (&flat.base, remaining.len());
    // The round each op is ready in; receives take their message's round + 1.
    let mut level = vec![0u32; total];
    let mut ready: VecDeque<(u32, u32)> = VecDeque::new();
    for (r, rank) in s.ranks.iter().enumerate() {
        for i in 0..rank.ops.len() {
            if remaining[base[r] + i] == 0 {
                ready.push_back((r as u32, i as u32));
            }
        }
    }
    let mut sent: HashMap<(u32, u32, u32), VecDeque<u32>> = HashMap::new();
    let mut waiting: HashMap<(u32, u32, u32), VecDeque<(u32, u32)>> = HashMap::new();
    // (round, sender, receiver, bytes) and (round, rank, calc time).
    let mut messages: Vec<(u32, u32, u32, u64)> = Vec::new();
    let mut calcs: Vec<(u32, u32, u64)> = Vec::new();
    let mut done = 0usize;
    let finish = |r: u32,
                  i: u32,
                  lv: u32,
                  level: &mut Vec<u32>,
                  remaining: &mut Vec<u32>,
                  ready: &mut VecDeque<(u32, u32)>| {
        // `requires` and `irequires` order ops the same way here: rounds count messages.
        for &d in flat.after_done(r, i).iter().chain(flat.after_start(r, i)) {
            let j = flat.g(r, d);
            level[j] = level[j].max(lv);
            remaining[j] -= 1;
            if remaining[j] == 0 {
                ready.push_back((r, d));
            }
        }
    };
    while let Some((r, i)) = ready.pop_front() {
        let g = base[r as usize] + i as usize;
        let lv = level[g];
        match s.ranks[r as usize].ops[i as usize].kind {
            OpKind::Send { size, to, tag } => {
                messages.push((lv, r, to, size));
                let key = (r, to, tag);
                match waiting.get_mut(&key).and_then(VecDeque::pop_front) {
                    Some((rr, ri)) => {
                        done += 1;
                        finish(rr, ri, lv + 1, &mut level, &mut remaining, &mut ready);
                    }
                    None => sent.entry(key).or_default().push_back(lv),
                }
                done += 1;
                finish(r, i, lv, &mut level, &mut remaining, &mut ready);
            }
            OpKind::Recv { from, tag, .. } => {
                let key = (from, r, tag);
                match sent.get_mut(&key).and_then(VecDeque::pop_front) {
                    Some(sl) => {
                        done += 1;
                        let l = lv.max(sl + 1);
                        finish(r, i, l, &mut level, &mut remaining, &mut ready);
                    }
                    None => waiting.entry(key).or_default().push_back((r, i)),
                }
            }
            OpKind::Calc { time } => {
                // A calc belongs to the round whose messages it reduces.
                calcs.push((lv.saturating_sub(1), r, time));
                done += 1;
                finish(r, i, lv, &mut level, &mut remaining, &mut ready);
            }
        }
    }
    if done < total {
        return None;
    }
    let rounds = messages.iter().map(|m| m.0 + 1).max().unwrap_or(0) as usize;
    let mut startup = vec![BigRational::zero(); rounds];
    let mut loads: Vec<BTreeMap<LinkId, BigRational>> = vec![BTreeMap::new(); rounds];
    let mut counts = vec![0usize; rounds];
    // Per pair: the links a message loads with their shares (its route's, each 1, or its spread
    // route's under `routing: spray`), and its route's latency.
    type Loads = Vec<(LinkId, BigRational)>;
    let mut lat_of: HashMap<(NodeId, NodeId), (Loads, BigRational)> = HashMap::new();
    for &(lv, a, b, bytes) in &messages {
        let (na, nb) = (
            hosts[a as usize],
            hosts.get(b as usize).copied().unwrap_or(hosts[a as usize]),
        );
        let (route, lat) = lat_of.entry((na, nb)).or_insert_with(|| {
            let r = net.route(na, nb);
            let l = net.latency(&r);
            let loads = if params.spray {
                net.spread(na, nb)
            } else {
                r.into_iter()
                    .map(|x| (x, BigRational::from_integer(1.into())))
                    .collect()
            };
            (loads, l)
        });
        let lv = lv as usize;
        counts[lv] += 1;
        let st = params.overhead_between(net, na, nb) + &*lat;
        if st > startup[lv] {
            startup[lv] = st;
        }
        for (l, w) in route.iter() {
            *loads[lv].entry(*l).or_insert_with(BigRational::zero) +=
                w * BigRational::from_integer(BigInt::from(bytes));
        }
    }
    let mut reduce: Vec<BTreeMap<u32, u64>> = vec![BTreeMap::new(); rounds.max(1)];
    for &(lv, r, t) in &calcs {
        let lv = (lv as usize).min(rounds.max(1) - 1);
        *reduce[lv].entry(r).or_insert(0) += t;
    }
    let mut out = Vec::with_capacity(rounds);
    for k in 0..rounds {
        let mut transfer = BigRational::zero();
        let mut busiest = None;
        for (&l, b) in &loads[k] {
            let bw = &net.links[l as usize].bandwidth;
            if bw.is_zero() {
                continue;
            }
            let t = b / bw;
            if t > transfer {
                transfer = t;
                busiest = Some(l);
            }
        }
        let calc = reduce[k].values().copied().max().unwrap_or(0);
        out.push(Round {
            messages: counts[k],
            startup: startup[k].clone(),
            transfer,
            reduce: BigRational::from_integer(BigInt::from(calc)) * tick,
            busiest,
        });
    }
    let seconds = out
        .iter()
        .map(Round::total)
        .fold(BigRational::zero(), |a, b| a + b);
    Some(RoundCost {
        rounds: out,
        seconds,
    })
}
