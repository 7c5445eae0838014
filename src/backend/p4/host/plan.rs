//! The schedule this program runs (`plan.txt`, written by collc): the ranks' hosts, how the
//! data is cut into blocks, which host leads and which switch roots each block, and the
//! retransmission timeout (`retransmit_us 28 auto` when the hosts adapt it, from 28 us).

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Canary,
    Trees,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leader {
    RoundRobin,
    First,
    Hash,
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub family: Family,
    /// Per rank: its host's address and the address of the switch it is linked to.
    pub hosts: Vec<(u32, u32)>,
    /// Elements of each rank's vector.
    pub elements: u64,
    /// Elements per packet.
    pub lanes: usize,
    pub app: u32,
    pub leader: Leader,
    /// Root switches, blocks in turn; or, when `leader_roots`, per rank the root of the blocks
    /// it leads.
    pub roots: Vec<u32>,
    pub leader_roots: bool,
    /// The hosts' retransmission timeout as collc planned it, and whether each host adapts it
    /// to the round trips it measures (`retransmit: auto`, rto.rs) or keeps it fixed.
    pub retransmit: Duration,
    pub adaptive: bool,
    pub retries: u32,
    /// Ports per shard of the `children` field (restoration packets).
    pub shard_width: u32,
    /// Fractional bits when the data are floats carried as fixed point.
    pub fixed_point: Option<u32>,
    /// Static trees: the number of trees and the window of blocks in flight (the switches'
    /// slots, so the plan must say it: 0 until it does).
    pub trees: u32,
    pub window: u32,
}

pub const SEQ_BITS: u32 = 20;

impl Plan {
    pub fn parse(text: &str) -> Result<Plan, String> {
        let mut p = Plan {
            family: Family::Canary,
            hosts: Vec::new(),
            elements: 0,
            lanes: 1,
            app: 0,
            leader: Leader::RoundRobin,
            roots: Vec::new(),
            leader_roots: false,
            retransmit: Duration::from_millis(100),
            adaptive: false,
            retries: 3,
            shard_width: 16,
            fixed_point: None,
            trees: 1,
            window: 0,
        };
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let w: Vec<&str> = line.split_whitespace().collect();
            let num = |i: usize| -> Result<u64, String> {
                w.get(i)
                    .and_then(|x| x.parse().ok())
                    .ok_or_else(|| format!("plan: bad line `{line}`"))
            };
            match w[0] {
                "family" => {
                    p.family = if w.get(1) == Some(&"static_trees") {
                        Family::Trees
                    } else {
                        Family::Canary
                    }
                }
                "host" => p.hosts.push((num(2)? as u32, num(3)? as u32)),
                "elements" => p.elements = num(1)?,
                "lanes" => p.lanes = num(1)? as usize,
                "app" => p.app = num(1)? as u32,
                "leader" => {
                    p.leader = match w.get(1) {
                        Some(&"first") => Leader::First,
                        Some(&"hash") => Leader::Hash,
                        _ => Leader::RoundRobin,
                    }
                }
                "roots" => {
                    p.leader_roots = w.get(1) == Some(&"per_leader");
                    p.roots = w[2..].iter().filter_map(|x| x.parse().ok()).collect();
                }
                "retransmit_us" => {
                    p.retransmit = Duration::from_micros(num(1)?);
                    p.adaptive = w.get(2) == Some(&"auto");
                }
                "retries" => p.retries = num(1)? as u32,
                "shard_width" => p.shard_width = num(1)? as u32,
                "fixed_point" => p.fixed_point = Some(num(1)? as u32),
                "trees" => p.trees = num(1)? as u32,
                "window" => p.window = num(1)? as u32,
                _ => return Err(format!("plan: unknown line `{line}`")),
            }
        }
        if p.hosts.is_empty() || p.lanes == 0 {
            return Err("plan: no hosts or no lanes".into());
        }
        if p.family == Family::Trees && p.window == 0 {
            return Err("plan: static trees need a `window` (the switches' slots)".into());
        }
        Ok(p)
    }

    pub fn ranks(&self) -> u32 {
        self.hosts.len() as u32
    }

    pub fn blocks(&self) -> u32 {
        self.elements.div_ceil(self.lanes as u64).max(1) as u32
    }

    pub fn id(&self, b: u32, g: u32) -> u32 {
        self.app << SEQ_BITS | ((g * self.blocks() + b) & ((1 << SEQ_BITS) - 1))
    }

    pub fn block_of(&self, id: u32) -> u32 {
        (id & ((1 << SEQ_BITS) - 1)) % self.blocks()
    }

    pub fn gen_of(&self, id: u32) -> u32 {
        (id & ((1 << SEQ_BITS) - 1)) / self.blocks()
    }

    /// The rank leading block `b`.
    pub fn leader(&self, b: u32) -> u32 {
        let h = self.ranks();
        match self.leader {
            Leader::RoundRobin => b % h,
            Leader::First => 0,
            Leader::Hash => crc32(self.id(b, 0)) % h,
        }
    }

    /// The switch rooting block `b`.
    pub fn root(&self, b: u32) -> u32 {
        if self.leader_roots {
            self.roots[self.leader(b) as usize]
        } else {
            self.roots[b as usize % self.roots.len()]
        }
    }
}

/// CRC-32 (IEEE) of a 32-bit id in network byte order: what the switch hashes block ids with.
pub fn crc32(id: u32) -> u32 {
    let mut c = !0u32;
    for b in id.to_be_bytes() {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}
