//! One rank of a Canary allreduce (the paper's Sections 3.1.3, 3.2.1 and 3.3), the rules
//! collc's packet simulator ran before its loss detection moved to the leaders and to RACK
//! (collc's src/sim/packet/canary_leader.rs; the reduction and tree rules are the same): workers send one packet per block they do not lead, addressed
//! to its leader and routed towards its root; a leader adds what reaches it to its own data and,
//! with every contribution in, sends the result to the root and one restoration packet per
//! collided switch and shard. Without a result a retransmission timeout after sending, a worker
//! asks the leader, which answers with the result or fails the block's generation; after
//! `retries` failures the block falls back to the hosts. The timeout is the host's [`Rto`]:
//! with `retransmit: auto`, estimated from its blocks' round trips, with back-off per block.

use crate::frame::{DATA, FAILURE, Header, Packet, RETRANSMIT};
use crate::net::Link;
use crate::plan::Plan;
use crate::rto::Rto;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What one run did.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    pub sent: u64,
    pub received: u64,
    pub requests: u64,
    pub failures: u64,
    pub collisions: u64,
    pub elapsed: Duration,
    /// The retransmission timeout at the end, and how it was reached.
    pub timeout: String,
}

struct Lead {
    counter: u32,
    acc: Vec<u32>,
    /// Ports to restore per colliding switch.
    restore: BTreeMap<u32, u128>,
    done: bool,
    generation: u32,
    fallen: bool,
    from: Vec<u32>,
    since: Instant,
}

struct Work {
    generation: u32,
    sent_at: Instant,
    /// Times the block's timer fired in this generation (its back-off; Karn's rule).
    fired: u32,
}

pub struct Rank<'p> {
    plan: &'p Plan,
    rank: u32,
    addr: u32,
    input: Vec<Vec<u32>>,
    pub results: Vec<Option<Vec<u32>>>,
    leads: BTreeMap<u32, Lead>,
    work: BTreeMap<u32, Work>,
    pub stats: Stats,
    rto: Rto,
    src: [u8; 6],
}

impl<'p> Rank<'p> {
    /// Rank `rank` of `plan` with its `input` cut into blocks.
    pub fn new(plan: &'p Plan, rank: u32, input: Vec<Vec<u32>>) -> Rank<'p> {
        let addr = plan.hosts[rank as usize].0;
        let src = crate::frame::mac(addr);
        Rank {
            plan,
            rank,
            addr,
            results: vec![None; input.len()],
            input,
            leads: BTreeMap::new(),
            work: BTreeMap::new(),
            stats: Stats::default(),
            rto: Rto::new(plan.retransmit, plan.adaptive),
            src,
        }
    }

    fn send(&mut self, link: &mut dyn Link, p: &Packet) -> Result<(), String> {
        self.stats.sent += 1;
        link.send(&p.encode(self.src))
            .map_err(|e| format!("send: {e}"))
    }

    /// The packet carrying this rank's contribution to generation `g` of block `b`.
    pub fn contribution(&self, b: u32, g: u32, fallen: bool) -> Packet {
        let p = self.plan;
        Packet {
            h: Header {
                dst: p.hosts[p.leader(b) as usize].0,
                id: p.id(b, g),
                counter: 1,
                hosts: p.ranks() as u16,
                children: 0,
                sw: if fallen { self.addr } else { p.root(b) } as u16,
                bypass: fallen,
                multicast: false,
                kind: DATA,
            },
            data: self.input[b as usize].clone(),
        }
    }

    fn control(&self, to: u32, id: u32, kind: u8, sw: u32) -> Packet {
        Packet {
            h: Header {
                dst: to,
                id,
                counter: 0,
                hosts: self.plan.ranks() as u16,
                children: 0,
                sw: sw as u16,
                bypass: true,
                multicast: false,
                kind,
            },
            data: Vec::new(),
        }
    }

    fn result(&self, b: u32, to: u32, lead: &Lead) -> Packet {
        Packet {
            h: Header {
                dst: to,
                id: self.plan.id(b, lead.generation),
                counter: lead.counter as u16,
                hosts: self.plan.ranks() as u16,
                children: 0,
                sw: to as u16,
                bypass: true,
                multicast: true,
                kind: DATA,
            },
            data: lead.acc.clone(),
        }
    }

    /// Runs the allreduce over `link`; `drop` lists blocks whose first packet this rank loses
    /// (to exercise the fault path). Returns once every block's result is here and the link
    /// has been quiet for `linger`, or twice the host's timeout when that is longer (others
    /// may still ask this rank for the results it leads).
    pub fn run(
        &mut self,
        link: &mut dyn Link,
        window: usize,
        drop: &[u32],
        linger: Duration,
        deadline: Duration,
    ) -> Result<(), String> {
        let p = self.plan;
        let start = Instant::now();
        let mine: Vec<u32> = (0..p.blocks())
            .filter(|&b| p.leader(b) != self.rank)
            .collect();
        for b in (0..p.blocks()).filter(|&b| p.leader(b) == self.rank) {
            self.leads.insert(
                b,
                Lead {
                    counter: 1,
                    acc: self.input[b as usize].clone(),
                    restore: BTreeMap::new(),
                    done: false,
                    generation: 0,
                    fallen: false,
                    from: Vec::new(),
                    since: start,
                },
            );
        }
        if p.ranks() == 1 {
            for b in 0..p.blocks() {
                self.results[b as usize] = Some(self.input[b as usize].clone());
            }
        }
        let mut next = 0;
        let mut quiet = Instant::now();
        let mut done_at: Option<Instant> = None;
        loop {
            let inflight = self
                .work
                .keys()
                .filter(|b| self.results[**b as usize].is_none())
                .count();
            if inflight < window.max(1) && next < mine.len() {
                let b = mine[next];
                next += 1;
                self.work.insert(
                    b,
                    Work {
                        generation: 0,
                        sent_at: Instant::now(),
                        fired: 0,
                    },
                );
                if !drop.contains(&b) {
                    let pkt = self.contribution(b, 0, false);
                    self.send(link, &pkt)?;
                }
                continue;
            }
            if let Some(f) = link.recv().map_err(|e| format!("receive: {e}"))? {
                if let Some(pkt) = Packet::decode(&f, p.lanes) {
                    if pkt.h.id >> crate::plan::SEQ_BITS == p.app {
                        self.stats.received += 1;
                        quiet = Instant::now();
                        self.handle(link, pkt)?;
                    }
                }
            }
            let now = Instant::now();
            let due: Vec<(u32, u32)> = self
                .work
                .iter()
                .filter(|(b, w)| {
                    self.results[**b as usize].is_none()
                        && now >= w.sent_at + self.rto.wait(w.fired)
                })
                .map(|(b, w)| (*b, w.generation))
                .collect();
            for (b, g) in due {
                let leader = p.hosts[p.leader(b) as usize].0;
                let ask = self.control(leader, p.id(b, g), RETRANSMIT, self.addr);
                self.stats.requests += 1;
                self.send(link, &ask)?;
                if let Some(w) = self.work.get_mut(&b) {
                    w.sent_at = now;
                    w.fired = w.fired.saturating_add(1);
                }
            }
            let complete = next == mine.len() && self.results.iter().all(|r| r.is_some());
            if complete && done_at.is_none() {
                done_at = Some(now);
                self.stats.elapsed = now - start;
            }
            if let Some(d) = done_at
                && now >= d.max(quiet) + linger.max(self.rto.timeout() * 2)
            {
                self.stats.timeout = self.rto.describe();
                return Ok(());
            }
            if now >= start + deadline {
                let missing = self.results.iter().filter(|r| r.is_none()).count();
                return Err(format!(
                    "rank {}: {missing} of {} blocks have no result after {:?}",
                    self.rank,
                    p.blocks(),
                    deadline
                ));
            }
        }
    }

    fn handle(&mut self, link: &mut dyn Link, pkt: Packet) -> Result<(), String> {
        let p = self.plan;
        let b = p.block_of(pkt.h.id);
        let g = p.gen_of(pkt.h.id);
        let leads = p.leader(b) == self.rank;
        match pkt.h.kind {
            DATA if pkt.h.multicast => {
                if !leads && self.results[b as usize].is_none() && pkt.data.len() == p.lanes {
                    // A round trip: the result came down the tree (not a leader's answer to a
                    // request) for the generation last sent, and no timer fired since.
                    if let Some(w) = self.work.get(&b)
                        && !pkt.h.bypass
                        && w.generation == g
                        && w.fired == 0
                    {
                        self.rto.sample(w.sent_at.elapsed());
                    }
                    self.results[b as usize] = Some(pkt.data);
                }
            }
            DATA if leads => {
                let Some(lead) = self.leads.get_mut(&b) else {
                    return Ok(());
                };
                if lead.done || g != lead.generation {
                    return Ok(());
                }
                if lead.fallen {
                    if lead.from.contains(&u32::from(pkt.h.sw)) {
                        return Ok(());
                    }
                    lead.from.push(u32::from(pkt.h.sw));
                }
                lead.counter += u32::from(pkt.h.counter);
                for (a, v) in lead.acc.iter_mut().zip(&pkt.data) {
                    *a = a.wrapping_add(*v);
                }
                if pkt.h.children != 0 && pkt.h.bypass && !lead.fallen {
                    self.stats.collisions += 1;
                    let shard = pkt.h.children >> 24;
                    let bits = u128::from(pkt.h.children & 0xFF_FFFF);
                    *lead.restore.entry(u32::from(pkt.h.sw)).or_default() |=
                        bits << (shard * p.shard_width);
                }
                if lead.counter >= p.ranks() {
                    self.finish(link, b)?;
                }
            }
            RETRANSMIT if leads => self.answer(link, b, g, u32::from(pkt.h.sw))?,
            FAILURE if !leads => {
                if self.results[b as usize].is_some() {
                    return Ok(());
                }
                let fallen = g > p.retries;
                let stale = self
                    .work
                    .get(&b)
                    .is_some_and(|w| w.generation > g || (w.generation == g && !fallen));
                if stale {
                    return Ok(());
                }
                // A new generation is a new send: its back-off starts again.
                self.work.insert(
                    b,
                    Work {
                        generation: g,
                        sent_at: Instant::now(),
                        fired: 0,
                    },
                );
                let pkt = self.contribution(b, g, fallen);
                self.send(link, &pkt)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// The leader of block `b` answers a retransmission request for generation `g` from `asker`.
    fn answer(&mut self, link: &mut dyn Link, b: u32, g: u32, asker: u32) -> Result<(), String> {
        let p = self.plan;
        let own = self.input[b as usize].clone();
        let Some(lead) = self.leads.get_mut(&b) else {
            return Ok(());
        };
        if lead.done {
            let reply = self.result(b, asker, &self.leads[&b]);
            return self.send(link, &reply);
        }
        let current = g == lead.generation;
        let tell: Vec<u32> = if lead.fallen && current {
            if lead.from.contains(&asker) {
                Vec::new()
            } else {
                vec![asker]
            }
        } else if current && lead.since.elapsed() < self.rto.timeout() {
            // The generation is younger than this host's timeout: its packets may still be on
            // their way.
            Vec::new()
        } else if current {
            lead.generation += 1;
            lead.fallen = lead.generation > p.retries;
            lead.counter = 1;
            lead.acc = own;
            lead.restore.clear();
            lead.from.clear();
            lead.since = Instant::now();
            self.stats.failures += 1;
            (0..p.ranks())
                .filter(|&w| w != self.rank)
                .map(|w| p.hosts[w as usize].0)
                .collect()
        } else {
            vec![asker]
        };
        let id = p.id(b, lead.generation);
        for to in tell {
            let notice = self.control(to, id, FAILURE, to);
            self.send(link, &notice)?;
        }
        Ok(())
    }

    /// Block `b` is complete at its leader: the result goes down the tree (or, after a
    /// fallback, to every worker).
    fn finish(&mut self, link: &mut dyn Link, b: u32) -> Result<(), String> {
        let p = self.plan;
        let Some(lead) = self.leads.get_mut(&b) else {
            return Ok(());
        };
        lead.done = true;
        self.results[b as usize] = Some(lead.acc.clone());
        let lead = &self.leads[&b];
        let mut out = Vec::new();
        if lead.fallen {
            for w in (0..p.ranks()).filter(|&w| w != self.rank) {
                out.push(self.result(b, p.hosts[w as usize].0, lead));
            }
        } else {
            let root = p.root(b);
            out.push(self.result(b, root, lead));
            let width = p.shard_width.max(1);
            let mask = (1u128 << width) - 1;
            for (&sw, &ports) in &lead.restore {
                for k in 0..128u32.div_ceil(width) {
                    let part = (ports >> (k * width)) & mask;
                    if part != 0 {
                        let mut r = self.result(b, sw, lead);
                        r.h.children = k << 24 | part as u32;
                        out.push(r);
                    }
                }
            }
        }
        for pkt in out {
            self.send(link, &pkt)?;
        }
        Ok(())
    }
}
