//! The hosts' side of Canary ([`Plan`] and [`Lead`]): how an allreduce is cut into blocks,
//! which host leads and which switch roots each block, the packet each worker sends, and the
//! leader's state machine (Sections 3.1.3, 3.1.4 and 3.2.1).
//!
//! - **Blocks.** The data is cut into blocks of `elements_per_packet` elements, one packet each
//!   per host. Block `b` has id `app << 20 | (b mod 2^20)` (Section 3.4: an application id and
//!   a per-application sequence), its root is `roots[b mod R]` and its leader rank is `b mod H`
//!   (`round_robin`), rank 0 (`first`) or `crc32(id) mod H` (`hash`).
//! - **Workers** send one packet per block they do not lead, in block order, with counter 1
//!   and the host count, addressed to the leader and routed towards the root; a worker is done
//!   with a block when its result arrives (a multicast packet with that id).
//! - **The leader** of a block does not send its data. It adds every packet that reaches it
//!   (the root's, stragglers forwarded by the root, collided packets) to its own contribution,
//!   and remembers the (switch, port) pairs collided packets carry. When the counter reaches the
//!   host count it waits `leader_delay` (r, Section 3.2.2), then sends the result to the root
//!   (bypass and multicast set) and one restoration packet per switch and shard of the ports
//!   recorded there (Section 3.2.1).
//!
//! Lossless: retransmission requests, failures and the host-based fallback of Section 3.3 need
//! packet loss to matter, which the packet simulator does not model (its links are lossless and
//! credit-flow-controlled, as the paper's simulations); they are not run.

use super::protocol::Kind;
use super::switch::{Header, crc32};
use crate::sema::model::LeaderPolicy;
use rustc_hash::FxHashMap;

/// Bits of block sequence in an id.
pub const SEQ_BITS: u32 = 20;

/// One allreduce placed on the network.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Application id (Section 3.4), below 2^12.
    pub app: u32,
    /// The nodes of ranks 0..H.
    pub hosts: Vec<u32>,
    pub blocks: u32,
    /// Root switches, blocks taking them in turn; or, when `leader_roots`, the root of each
    /// rank's blocks (the switch it hangs from).
    pub roots: Vec<u32>,
    pub leader_roots: bool,
    pub leader: LeaderPolicy,
    /// Seed of the contributions' values.
    pub seed: u64,
}

impl Plan {
    pub fn ranks(&self) -> u32 {
        self.hosts.len() as u32
    }

    pub fn id(&self, b: u32) -> u32 {
        self.app << SEQ_BITS | (b & ((1 << SEQ_BITS) - 1))
    }

    /// The block of id `id` (ids are unique while fewer than 2^20 blocks are in flight).
    pub fn block_of(id: u32) -> u32 {
        id & ((1 << SEQ_BITS) - 1)
    }

    pub fn app_of(id: u32) -> u32 {
        id >> SEQ_BITS
    }

    pub fn leader(&self, b: u32) -> u32 {
        let h = self.ranks().max(1);
        match self.leader {
            LeaderPolicy::RoundRobin => b % h,
            LeaderPolicy::First => 0,
            LeaderPolicy::Hash => crc32(self.id(b)) % h,
        }
    }

    pub fn root(&self, b: u32) -> u32 {
        if self.leader_roots {
            self.roots[self.leader(b) as usize]
        } else {
            self.roots[b as usize % self.roots.len()]
        }
    }

    /// Rank `r`'s contribution to block `b` (a fingerprint; see [`super::switch`]).
    pub fn value(&self, r: u32, b: u32) -> u64 {
        crate::sim::packet::route::mix(
            self.seed ^ u64::from(self.app),
            u64::from(b) << 32 | u64::from(r),
        )
    }

    /// The full reduction of block `b`.
    pub fn expected(&self, b: u32) -> u64 {
        (0..self.ranks()).fold(0u64, |s, r| s.wrapping_add(self.value(r, b)))
    }

    /// The blocks rank `r` sends, in order.
    pub fn sends(&self, r: u32) -> Vec<u32> {
        (0..self.blocks).filter(|&b| self.leader(b) != r).collect()
    }

    /// The packet rank `r` sends for block `b`.
    pub fn packet(&self, r: u32, b: u32) -> Header {
        Header {
            dst: self.hosts[self.leader(b) as usize],
            id: self.id(b),
            counter: 1,
            hosts: self.ranks(),
            children: 0,
            switch: self.root(b),
            bypass: false,
            multicast: false,
            kind: Kind::Data,
            data: self.value(r, b),
        }
    }
}

/// A leader's state for one block it leads.
#[derive(Debug, Clone, Default)]
pub struct Lead {
    pub counter: u32,
    pub data: u64,
    /// Ports to restore, by switch (in the order collisions were seen).
    pub restore: Vec<(u32, u128)>,
    pub done: bool,
}

impl Lead {
    /// The leader's own contribution.
    pub fn new(own: u64) -> Lead {
        Lead {
            counter: 1,
            data: own,
            ..Lead::default()
        }
    }

    /// A data packet for this block reached the leader; true when the block is now complete.
    pub fn receive(&mut self, h: &Header) -> bool {
        self.counter += h.counter;
        self.data = self.data.wrapping_add(h.data);
        if h.children != 0 {
            match self.restore.iter_mut().find(|(s, _)| *s == h.switch) {
                Some((_, ports)) => *ports |= h.children,
                None => self.restore.push((h.switch, h.children)),
            }
        }
        !self.done && self.counter >= h.hosts
    }

    /// The packets that end block `b` of `plan`: the result to the root, and the restoration
    /// packets (one per switch and non-empty shard of `shard` ports), each with the node it
    /// is routed to.
    pub fn finish(&mut self, plan: &Plan, b: u32, shard: u32) -> Vec<(Header, u32)> {
        self.done = true;
        let root = plan.root(b);
        let result = Header {
            dst: root,
            id: plan.id(b),
            counter: self.counter,
            hosts: plan.ranks(),
            children: 0,
            switch: root,
            bypass: true,
            multicast: true,
            kind: Kind::Data,
            data: self.data,
        };
        let mut out = vec![(result, root)];
        let shard = shard.clamp(1, 128);
        let mask = if shard >= 128 {
            u128::MAX
        } else {
            (1u128 << shard) - 1
        };
        for &(s, ports) in &self.restore {
            for k in 0..128u32.div_ceil(shard) {
                let part = (ports >> (k * shard)) & mask;
                if part != 0 {
                    let children = part << (k * shard);
                    out.push((
                        Header {
                            dst: s,
                            children,
                            switch: s,
                            ..result
                        },
                        s,
                    ));
                }
            }
        }
        out
    }
}

/// The leaders' state of one allreduce: per block it leads, by block.
pub type Leads = FxHashMap<u32, Lead>;

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(leader: LeaderPolicy) -> Plan {
        Plan {
            app: 3,
            hosts: vec![10, 11, 12],
            blocks: 7,
            roots: vec![1, 2],
            leader_roots: false,
            leader,
            seed: 9,
        }
    }

    #[test]
    fn blocks_take_leaders_and_roots_in_turn() {
        let p = plan(LeaderPolicy::RoundRobin);
        assert_eq!(p.sends(0), vec![1, 2, 4, 5]);
        assert_eq!((p.root(0), p.root(1), p.root(2)), (1, 2, 1));
        assert_eq!(Plan::block_of(p.id(5)), 5);
        assert_eq!(Plan::app_of(p.id(5)), 3);
        let h = p.packet(1, 3);
        assert_eq!((h.dst, h.switch, h.counter, h.hosts), (10, 2, 1, 3));
        assert!(plan(LeaderPolicy::First).sends(0).is_empty());
    }

    #[test]
    fn the_leader_completes_with_every_contribution_and_restores_by_shard() {
        let p = plan(LeaderPolicy::RoundRobin);
        let mut l = Lead::new(p.value(0, 0));
        assert!(!l.receive(&p.packet(1, 0)));
        let mut collided = p.packet(2, 0);
        collided.switch = 42;
        collided.children = 1 << 3 | 1 << 17;
        assert!(l.receive(&collided));
        assert_eq!(l.data, p.expected(0));
        let out = l.finish(&p, 0, 16);
        assert_eq!(out.len(), 3, "the result and one packet per shard: {out:?}");
        assert_eq!(out[0].1, 1);
        assert_eq!((out[1].0.children, out[2].0.children), (1 << 3, 1 << 17));
        assert!(out.iter().all(|(h, _)| h.multicast && h.bypass));
    }
}
