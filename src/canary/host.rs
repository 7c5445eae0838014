//! The hosts' side of Canary ([`Plan`] and [`Lead`]): how an allreduce is cut into blocks,
//! which host leads and which switch roots each block, the packet each worker sends, and the
//! leader's state machine (Sections 3.1.3, 3.1.4 and 3.2.1).
//!
//! - **Broadcast** (Section 6): the source leads every block and the other ranks contribute
//!   nothing: their header-only packets build each block's tree (the counters reach the host
//!   count, the children bitmaps fill) and the source's data goes down it as the result. (The
//!   paper has the source send its data to the leader; with the source as the leader that hop
//!   is empty.)
//! - **Blocks.** The data is cut into blocks of `elements_per_packet` elements, one packet each
//!   per host. Block `b` has id `app << 20 | (b mod 2^20)` (Section 3.4: an application id and
//!   a per-application sequence), its root is `roots[b mod R]` and its leader rank is `b mod H`
//!   (`round_robin`), rank 0 (`first`) or `crc32(id) mod H` (`hash`); for a reduce, the root
//!   rank (Section 6), whose result the others do not get: what goes down the tree to them is
//!   a header-only release that frees the descriptors and ends their part.
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
//! - **Faults** (Section 3.3; only where packets can be lost): a worker that has no result a
//!   retransmission timeout after sending asks the leader. A leader that has the result sends it
//!   to that worker; one that has not fails the block's current generation (once: a request for
//!   an older generation only gets the failure again) and tells every worker, who re-send their
//!   contribution under the block's next id (generation g of block b has sequence g x blocks +
//!   b). After `retries` failed generations the block falls back to a host-based reduction:
//!   workers send their contribution straight to the leader (bypass), which answers each with
//!   the result.

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
    /// A reduce's root rank (Section 6: it leads every block, and what goes down the tree is
    /// a header-only release of the descriptors, not the result); None for an allreduce.
    pub reduce_root: Option<u32>,
    /// A broadcast's root rank (Section 6): it leads every block; the others send header-only
    /// packets that build the trees (contributing nothing), and the root's data goes down
    /// them as the result.
    pub broadcast_root: Option<u32>,
}

impl Plan {
    pub fn ranks(&self) -> u32 {
        self.hosts.len() as u32
    }

    pub fn id(&self, b: u32) -> u32 {
        self.id_gen(b, 0)
    }

    /// The id of generation `g` of block `b` (the caller keeps `(g + 1) x blocks` below 2^20).
    pub fn id_gen(&self, b: u32, g: u32) -> u32 {
        self.app << SEQ_BITS | ((g * self.blocks + b) & ((1 << SEQ_BITS) - 1))
    }

    /// The block of id `id`.
    pub fn block_of(&self, id: u32) -> u32 {
        (id & ((1 << SEQ_BITS) - 1)) % self.blocks.max(1)
    }

    /// The generation of id `id`.
    pub fn gen_of(&self, id: u32) -> u32 {
        (id & ((1 << SEQ_BITS) - 1)) / self.blocks.max(1)
    }

    pub fn app_of(id: u32) -> u32 {
        id >> SEQ_BITS
    }

    pub fn leader(&self, b: u32) -> u32 {
        if let Some(r) = self.reduce_root.or(self.broadcast_root) {
            return r;
        }
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

    /// Rank `r`'s contribution to block `b` (a fingerprint; see [`super::switch`]); in a
    /// broadcast only the root contributes.
    pub fn value(&self, r: u32, b: u32) -> u64 {
        if self.broadcast_root.is_some_and(|root| root != r) {
            return 0;
        }
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

    /// A header-only control packet of `kind` for block id `id` (Section 3.3), to host `dst`,
    /// naming host `about` (the asker of a request, the addressee of a failure notice).
    pub fn control(&self, kind: Kind, id: u32, dst: u32, about: u32) -> Header {
        Header {
            dst,
            id,
            counter: 0,
            hosts: self.ranks(),
            children: 0,
            switch: about,
            bypass: true,
            multicast: false,
            kind,
            data: 0,
        }
    }

    /// The packet rank `r` sends for block `b`.
    pub fn packet(&self, r: u32, b: u32) -> Header {
        self.packet_gen(r, b, 0, false)
    }

    /// The packet rank `r` sends for generation `g` of block `b`; straight to the leader
    /// (bypass) when the block has `fallen` back to a host-based reduction.
    pub fn packet_gen(&self, r: u32, b: u32, g: u32, fallen: bool) -> Header {
        Header {
            dst: self.hosts[self.leader(b) as usize],
            id: self.id_gen(b, g),
            counter: 1,
            hosts: self.ranks(),
            children: 0,
            // After a fallback the packet goes straight to the leader and names its sender.
            switch: if fallen {
                self.hosts[r as usize]
            } else {
                self.root(b)
            },
            bypass: fallen,
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
    /// The current generation, and whether the block has fallen back to the hosts.
    pub generation: u32,
    pub fallen: bool,
    /// After a fallback, the hosts whose contribution arrived.
    pub from: Vec<u32>,
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
        if self.fallen {
            if self.from.contains(&h.switch) {
                return false;
            }
            self.from.push(h.switch);
        }
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

    /// Fails the current generation: the next one starts from the leader's own contribution
    /// `own`, on the hosts once `retries` generations have failed.
    pub fn fail(&mut self, own: u64, retries: u32) {
        self.generation += 1;
        self.fallen = self.generation > retries;
        self.counter = 1;
        self.data = own;
        self.restore.clear();
        self.from.clear();
    }

    /// The result of block `b` for the host `to` (bypass), as the leader answers a request or
    /// ends a block that fell back to the hosts.
    pub fn unicast(&self, plan: &Plan, b: u32, to: u32) -> Header {
        Header {
            dst: to,
            id: plan.id_gen(b, self.generation),
            counter: self.counter,
            hosts: plan.ranks(),
            children: 0,
            switch: to,
            bypass: true,
            multicast: true,
            kind: Kind::Data,
            data: self.data,
        }
    }

    /// The packets that end block `b` of `plan`: the result to the root, and the restoration
    /// packets (one per switch and non-empty shard of `shard` ports), each with the node it
    /// is routed to; after a fallback, the result to every worker.
    pub fn finish(&mut self, plan: &Plan, b: u32, shard: u32) -> Vec<(Header, u32)> {
        self.done = true;
        if self.fallen {
            let me = plan.leader(b);
            let mut out = vec![(
                self.unicast(plan, b, plan.hosts[me as usize]),
                plan.hosts[me as usize],
            )];
            for (r, &h) in plan.hosts.iter().enumerate() {
                if r as u32 != me {
                    out.push((self.unicast(plan, b, h), h));
                }
            }
            return out;
        }
        let root = plan.root(b);
        let result = Header {
            dst: root,
            id: plan.id_gen(b, self.generation),
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
            reduce_root: None,
            broadcast_root: None,
        }
    }

    #[test]
    fn blocks_take_leaders_and_roots_in_turn() {
        let p = plan(LeaderPolicy::RoundRobin);
        assert_eq!(p.sends(0), vec![1, 2, 4, 5]);
        assert_eq!((p.root(0), p.root(1), p.root(2)), (1, 2, 1));
        assert_eq!(p.block_of(p.id(5)), 5);
        assert_eq!(
            (p.block_of(p.id_gen(5, 3)), p.gen_of(p.id_gen(5, 3))),
            (5, 3)
        );
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
