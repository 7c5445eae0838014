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
//! - **Contributor recovery** (`recovery: contributors`, collc's departure from Section 3.3,
//!   [`crate::sema::model::Recovery`]): every packet carries the set of ranks whose data it
//!   holds ([`super::switch::Sets`]), so a leader knows whom its partial sum lacks. A failed
//!   generation keeps what it gathered; the notice goes only to the ranks missing from it,
//!   who re-send under the next id (a generation of that many hosts, [`Lead::gen_hosts`]),
//!   and after `retries` failures straight to the leader. A packet whose ranks the sum already
//!   holds (a late copy of a failed generation overtaken by the re-sent one) is dropped whole,
//!   since a sum cannot be taken apart. The result goes down the tree of every generation that
//!   brought data through the switches, and straight to the ranks that sent theirs straight.
//!   A result lost high in a tree leaves many workers without it: once a finished block's
//!   leader has been asked by an eighth of the ranks, it floods the result down a
//!   breadth-first tree of the network instead of answering each (the packet simulator's
//!   `canary_flood`; switches copy a flood by a static table, as a multicast group would).

use super::protocol::Kind;
use super::switch::{Header, NO_ONE, Sets, crc32};
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
    /// Packets carry contributor sets (`recovery: contributors`).
    pub contributors: bool,
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
            from: NO_ONE,
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
            from: if self.contributors {
                Sets::rank(r)
            } else {
                NO_ONE
            },
        }
    }
}

/// A leader's state for one block it leads.
#[derive(Debug, Clone, Default)]
pub struct Lead {
    pub counter: u32,
    pub data: u64,
    /// Ports to restore, by generation and switch (in the order collisions were seen).
    pub restore: Vec<(u32, u32, u128)>,
    pub done: bool,
    /// The current generation, and whether the block has fallen back to the hosts.
    pub generation: u32,
    pub fallen: bool,
    /// After a fallback, the hosts whose contribution arrived.
    pub from: Vec<u32>,
    /// With contributor recovery: the ranks whose data `data` holds (a bitset, empty
    /// otherwise), the in-network generations that brought some (their trees take the result
    /// down), and the hosts the current generation was asked of, the leader included.
    pub have: Vec<u64>,
    pub gens: Vec<u32>,
    pub gen_hosts: u32,
    /// With contributor recovery, every rank: the sum is complete when it holds them all.
    pub total: u32,
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

    /// The leader (rank `me` of `ranks`) of a block whose packets carry contributor sets.
    pub fn with_contributors(own: u64, me: u32, ranks: u32) -> Lead {
        let mut have = vec![0u64; ranks.div_ceil(64) as usize];
        have[(me / 64) as usize] |= 1 << (me % 64);
        Lead {
            have,
            gens: Vec::new(),
            gen_hosts: ranks,
            total: ranks,
            ..Lead::new(own)
        }
    }

    /// Whether the packets carry contributor sets.
    pub fn contributors(&self) -> bool {
        !self.have.is_empty()
    }

    /// Whether rank `r`'s data is in the sum (contributor recovery only).
    pub fn has(&self, r: u32) -> bool {
        self.have
            .get((r / 64) as usize)
            .is_some_and(|w| w & (1 << (r % 64)) != 0)
    }

    /// A data packet of generation `g` for this block reached the leader, holding the data of
    /// ranks `ranks` where packets carry contributor sets. None when it holds a rank the sum
    /// already has (it is dropped whole); else whether the block is now complete.
    pub fn receive(&mut self, h: &Header, g: u32, ranks: &[u32]) -> Option<bool> {
        if self.contributors() {
            if ranks.iter().any(|&r| self.has(r)) || ranks.len() != h.counter as usize {
                return None;
            }
            for &r in ranks {
                self.have[(r / 64) as usize] |= 1 << (r % 64);
            }
            // After the fallback a packet of the current generation came straight from its
            // sender; any other came through the switches, whose tree takes the result down.
            if self.fallen && g == self.generation {
                self.from.push(h.switch);
            } else if !self.gens.contains(&g) {
                self.gens.push(g);
            }
        } else if self.fallen {
            if self.from.contains(&h.switch) {
                return Some(false);
            }
            self.from.push(h.switch);
        }
        self.counter += h.counter;
        self.data = self.data.wrapping_add(h.data);
        if h.children != 0 {
            match self
                .restore
                .iter_mut()
                .find(|(g2, s, _)| *g2 == g && *s == h.switch)
            {
                Some((_, _, ports)) => *ports |= h.children,
                None => self.restore.push((g, h.switch, h.children)),
            }
        }
        Some(!self.done && self.counter >= h.hosts.max(self.total))
    }

    /// Fails the current generation: the next one starts from the leader's own contribution
    /// `own` (with contributor recovery, from everything gathered so far), on the hosts once
    /// `retries` generations have failed. With contributor recovery it falls back at once
    /// when at most `direct` contributions are missing: they come straight to the leader,
    /// one packet each, so a late copy of one is dropped alone (a re-issued generation's
    /// sums would be dropped whole with it).
    pub fn fail(&mut self, own: u64, retries: u32, direct: u32) {
        self.generation += 1;
        if self.contributors() {
            let missing = self.total - self.counter;
            if missing <= direct {
                self.generation = self.generation.max(retries + 1);
            }
            self.fallen = self.generation > retries;
            self.gen_hosts = missing + 1;
            return;
        }
        self.fallen = self.generation > retries;
        self.counter = 1;
        self.data = own;
        self.restore.clear();
        self.from.clear();
    }

    /// The ranks of `ranks` whose data the sum lacks (contributor recovery only).
    pub fn missing(&self, ranks: u32) -> Vec<u32> {
        (0..ranks).filter(|&r| !self.has(r)).collect()
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
            from: NO_ONE,
        }
    }

    /// The packets that end block `b` of `plan`: the leader's own copy of the result, and
    /// what it sends, each with the node it is routed to: the result to the root and the
    /// restoration packets (one per switch and non-empty shard of `shard` ports) of the
    /// current generation, or with contributor recovery of every generation that brought data
    /// through the switches; after a fallback, the result to every worker (with contributor
    /// recovery, to those that sent theirs straight).
    pub fn finish(&mut self, plan: &Plan, b: u32, shard: u32) -> (Header, Vec<(Header, u32)>) {
        self.done = true;
        let me = plan.hosts[plan.leader(b) as usize];
        let own = self.unicast(plan, b, me);
        let mut out = Vec::new();
        if self.fallen && !self.contributors() {
            for (r, &h) in plan.hosts.iter().enumerate() {
                if r as u32 != plan.leader(b) {
                    out.push((self.unicast(plan, b, h), h));
                }
            }
            return (own, out);
        }
        let gens = if self.contributors() {
            let mut g = self.gens.clone();
            g.sort_unstable();
            g
        } else {
            vec![self.generation]
        };
        let root = plan.root(b);
        let shard = shard.clamp(1, 128);
        let mask = if shard >= 128 {
            u128::MAX
        } else {
            (1u128 << shard) - 1
        };
        for g in gens {
            let result = Header {
                dst: root,
                id: plan.id_gen(b, g),
                switch: root,
                ..self.unicast(plan, b, root)
            };
            out.push((result, root));
            for &(_, s, ports) in self.restore.iter().filter(|x| x.0 == g) {
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
        }
        if self.fallen {
            out.extend(self.from.iter().map(|&h| (self.unicast(plan, b, h), h)));
        }
        (own, out)
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
            contributors: false,
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
        assert_eq!(l.receive(&p.packet(1, 0), 0, &[]), Some(false));
        let mut collided = p.packet(2, 0);
        collided.switch = 42;
        collided.children = 1 << 3 | 1 << 17;
        assert_eq!(l.receive(&collided, 0, &[]), Some(true));
        assert_eq!(l.data, p.expected(0));
        let (own, out) = l.finish(&p, 0, 16);
        assert_eq!((own.dst, own.data), (10, p.expected(0)));
        assert_eq!(out.len(), 3, "the result and one packet per shard: {out:?}");
        assert_eq!(out[0].1, 1);
        assert_eq!((out[1].0.children, out[2].0.children), (1 << 3, 1 << 17));
        assert!(out.iter().all(|(h, _)| h.multicast && h.bypass));
    }

    #[test]
    fn a_contributor_leader_keeps_its_sum_and_asks_only_the_missing() {
        let p = Plan {
            contributors: true,
            ..plan(LeaderPolicy::RoundRobin)
        };
        let mut l = Lead::with_contributors(p.value(0, 0), 0, 3);
        let one = p.packet(1, 0);
        assert_eq!(one.from, Sets::rank(1));
        assert_eq!(l.receive(&one, 0, &[1]), Some(false));
        // A copy holding rank 1 again is dropped whole; the sum is unchanged.
        let data = l.data;
        assert_eq!(l.receive(&one, 0, &[1]), None);
        assert_eq!(l.data, data);
        assert_eq!(l.missing(3), vec![2]);
        // One missing is at most `direct`: it comes straight to the leader.
        l.fail(p.value(0, 0), 3, 1);
        assert!(l.fallen && l.has(1) && !l.has(2));
        assert_eq!(l.gen_hosts, 2);
        let two = p.packet_gen(2, 0, l.generation, true);
        assert_eq!(l.receive(&two, l.generation, &[2]), Some(true));
        assert_eq!(l.data, p.expected(0));
        // The first generation's tree takes the result down; rank 2 gets it straight.
        let (_, out) = l.finish(&p, 0, 16);
        assert_eq!(out.first().map(|o| o.1), Some(p.root(0)));
        assert_eq!(out.last().map(|o| o.1), Some(12));
    }
}
