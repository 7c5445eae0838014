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
//! Messages pair as the flow-level simulator pairs them (a key's k-th send in program order
//! with its k-th receive). Hand-checked cases are in tests/net_cost.rs.

use crate::backend::goal::{Flat, GoalSchedule, OpKind};
use crate::net::{FlowParams, LinkId, Net};
use crate::sema::model::NodeId;
use crate::sim::fluid::NONE;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Zero;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, VecDeque};

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
    // Each send's receive and each receive's send, as the flow-level simulator pairs them.
    let pair = crate::sim::fluid::pair(s, base);
    // A processed send's round, by its global index; receives that came before their send.
    let mut sent_level = vec![u32::MAX; total];
    let mut waiting = vec![false; total];
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
            OpKind::Send { size, to, .. } => {
                messages.push((lv, r, to, size));
                let p = pair[g];
                if p != NONE && waiting[p as usize] {
                    waiting[p as usize] = false;
                    done += 1;
                    let ri = p - base[to as usize] as u32;
                    finish(to, ri, lv + 1, &mut level, &mut remaining, &mut ready);
                } else {
                    sent_level[g] = lv;
                }
                done += 1;
                finish(r, i, lv, &mut level, &mut remaining, &mut ready);
            }
            OpKind::Recv { .. } => {
                let p = pair[g];
                match (p != NONE).then(|| sent_level[p as usize]) {
                    Some(sl) if sl != u32::MAX => {
                        done += 1;
                        let l = lv.max(sl + 1);
                        finish(r, i, l, &mut level, &mut remaining, &mut ready);
                    }
                    _ => waiting[g] = true,
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
    let mut counts = vec![0usize; rounds];
    // Per pair of nodes a route: the links a message loads with their shares (its route's,
    // each 1, or its spread route's under `routing: spray`) and its start-up (overhead plus
    // the route's latency).
    let mut route_of: FxHashMap<(NodeId, NodeId), u32> = FxHashMap::default();
    let mut routes: Vec<(Vec<(LinkId, BigRational)>, BigRational)> = Vec::new();
    // (round, route, bytes): a round's messages on one route load its links together.
    let mut per: Vec<(u32, u32, u64)> = Vec::with_capacity(messages.len());
    for &(lv, a, b, bytes) in &messages {
        let (na, nb) = (
            hosts[a as usize],
            hosts.get(b as usize).copied().unwrap_or(hosts[a as usize]),
        );
        let ri = *route_of.entry((na, nb)).or_insert_with(|| {
            let r = net.route(na, nb);
            let st = params.overhead_between(net, na, nb) + net.latency(&r);
            let loads = if params.spray {
                net.spread(na, nb)
            } else {
                r.into_iter()
                    .map(|x| (x, BigRational::from_integer(1.into())))
                    .collect()
            };
            routes.push((loads, st));
            (routes.len() - 1) as u32
        });
        counts[lv as usize] += 1;
        per.push((lv, ri, bytes));
    }
    per.sort_unstable();
    // The distinct start-ups in order, and each route's place among them: a round's slowest
    // start-up is then a maximum of places.
    let mut startups: Vec<BigRational> = routes.iter().map(|r| r.1.clone()).collect();
    startups.sort();
    startups.dedup();
    let rank_of: Vec<u32> = routes
        .iter()
        .map(|r| startups.binary_search(&r.1).unwrap_or(0) as u32)
        .collect();
    let mut loads = Loads::new(net);
    let mut startup = vec![None::<u32>; rounds];
    let mut transfers = vec![(BigRational::zero(), None); rounds];
    for round in per.chunk_by(|x, y| x.0 == y.0) {
        let k = round[0].0 as usize;
        for group in round.chunk_by(|x, y| x.1 == y.1) {
            let ri = group[0].1 as usize;
            let bytes: u128 = group.iter().map(|m| u128::from(m.2)).sum();
            let rank = rank_of[ri];
            startup[k] = Some(startup[k].map_or(rank, |s| s.max(rank)));
            loads.add(&routes[ri].0, bytes, params.spray);
        }
        transfers[k] = loads.busiest();
    }
    let startup: Vec<BigRational> = startup
        .into_iter()
        .map(|s| s.map_or_else(BigRational::zero, |r| startups[r as usize].clone()))
        .collect();
    let mut reduce: Vec<BTreeMap<u32, u64>> = vec![BTreeMap::new(); rounds.max(1)];
    for &(lv, r, t) in &calcs {
        let lv = (lv as usize).min(rounds.max(1) - 1);
        *reduce[lv].entry(r).or_insert(0) += t;
    }
    let mut out = Vec::with_capacity(rounds);
    for (k, (transfer, busiest)) in transfers.into_iter().enumerate() {
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

/// One round's bytes per link, summed exactly: integers on plain routes (every share 1),
/// rationals under `routing: spray`; links grouped by bandwidth, so the most loaded link's time
/// takes one division per distinct bandwidth.
struct Loads {
    bytes: Vec<u128>,
    spread: Vec<BigRational>,
    touched: Vec<LinkId>,
    /// Each link's bandwidth class (None: no bandwidth), and the classes' bandwidths.
    class: Vec<Option<u32>>,
    bandwidths: Vec<BigRational>,
}

impl Loads {
    fn new(net: &Net) -> Loads {
        let mut index: BTreeMap<&BigRational, u32> = BTreeMap::new();
        let mut bandwidths = Vec::new();
        let class = net
            .links
            .iter()
            .map(|l| {
                (!l.bandwidth.is_zero()).then(|| {
                    *index.entry(&l.bandwidth).or_insert_with(|| {
                        bandwidths.push(l.bandwidth.clone());
                        (bandwidths.len() - 1) as u32
                    })
                })
            })
            .collect();
        Loads {
            bytes: vec![0; net.links.len()],
            spread: vec![BigRational::zero(); net.links.len()],
            touched: Vec::new(),
            class,
            bandwidths,
        }
    }

    /// `bytes` more over a route's links.
    fn add(&mut self, route: &[(LinkId, BigRational)], bytes: u128, spray: bool) {
        for (l, w) in route {
            let i = *l as usize;
            if self.bytes[i] == 0 && self.spread[i].is_zero() {
                self.touched.push(*l);
            }
            if spray {
                self.spread[i] += w * BigRational::from_integer(BigInt::from(bytes));
            } else {
                self.bytes[i] += bytes;
            }
        }
    }

    /// The round's most loaded link's time and that link (the lowest-numbered of equals; None
    /// when no bytes crossed a link), and the loads cleared for the next round.
    fn busiest(&mut self) -> (BigRational, Option<LinkId>) {
        self.touched.sort_unstable();
        self.touched.dedup();
        let mut transfer = BigRational::zero();
        let mut busiest = None;
        // Plain routes: per class the most bytes (lowest link of equals), then one division each.
        let mut best: Vec<Option<(u128, LinkId)>> = vec![None; self.bandwidths.len()];
        for &l in &self.touched {
            let i = l as usize;
            if let Some(c) = self.class[i] {
                let b = std::mem::take(&mut self.bytes[i]);
                let s = std::mem::replace(&mut self.spread[i], BigRational::zero());
                if !s.is_zero() {
                    let t = s / &self.bandwidths[c as usize];
                    if t > transfer || (t == transfer && busiest.is_some_and(|x| l < x)) {
                        transfer = t;
                        busiest = Some(l);
                    }
                } else if b > 0 && best[c as usize].is_none_or(|(x, _)| b > x) {
                    best[c as usize] = Some((b, l));
                }
            } else {
                self.bytes[i] = 0;
                self.spread[i] = BigRational::zero();
            }
        }
        for (c, b) in best.into_iter().enumerate() {
            if let Some((b, l)) = b {
                let t = BigRational::from_integer(BigInt::from(b)) / &self.bandwidths[c];
                if t > transfer || (t == transfer && busiest.is_some_and(|x| l < x)) {
                    transfer = t;
                    busiest = Some(l);
                }
            }
        }
        self.touched.clear();
        (transfer, busiest)
    }
}
