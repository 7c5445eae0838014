//! The interpreter of Canary's switch rule table ([`step`]): one packet (or one timer) at one
//! switch, against that switch's descriptor table, gives the packets that leave and the timer
//! to arm. Networking (which link a packet takes, when it arrives) is the caller's; this module
//! owns what a switch *does*, exactly as [`super::protocol::Protocol`] states it.
//!
//! Payloads are carried as a 64-bit *fingerprint*: the wrapping sum of the contributions' values,
//! which is what the switch computes on every element (integer addition modulo 2^32 per element
//! on hardware, Section 6). Each host contributes a value drawn at random per block, so a lost or
//! duplicated contribution changes the sum (except with probability 2^-64), and the counter
//! says how many were summed.
//!
//! With `recovery: contributors` ([`crate::sema::model::Recovery`]) a packet also carries the
//! set of ranks whose data it holds ([`Header::from`]), which a switch joins as it adds the
//! data: on the wire a bitmap of ceil(ranks / 8) bytes (a host's own contribution is named
//! by its source) that a switch ORs (the sets it joins
//! are disjoint, so OR is the union), here a handle into an arena of joins ([`Sets`]), which
//! costs a run memory only where sets are carried.

use super::protocol::{Act, Guard, Kind, Protocol, Trigger};
use rustc_hash::FxHashMap;

/// A packet's Canary header (the fields of [`super::protocol::HEADER`]) and its payload's
/// fingerprint. Ports are bitmaps of up to 128 ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub dst: u32,
    pub id: u32,
    pub counter: u32,
    pub hosts: u32,
    pub children: u128,
    pub switch: u32,
    pub bypass: bool,
    pub multicast: bool,
    pub kind: Kind,
    pub data: u64,
    /// The ranks whose data `data` holds ([`Sets`]; [`NO_ONE`] where sets are not carried).
    pub from: u32,
}

/// A block descriptor ([`super::protocol::DESCRIPTOR`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Desc {
    pub id: u32,
    pub counter: u32,
    pub hosts: u32,
    pub children: u128,
    pub leader: u32,
    pub root: u32,
    pub stamp: u64,
    pub sent: bool,
    pub data: u64,
    /// The ranks whose data `data` holds ([`Sets`]).
    pub from: u32,
}

/// The empty contributor set.
pub const NO_ONE: u32 = 0;
/// The bit that marks a handle as a join (else it is one rank, plus one).
const JOIN: u32 = 1 << 31;

/// Contributor sets of one run: a handle is [`NO_ONE`], one rank ([`Sets::rank`]) or the
/// join of two disjoint sets, kept in this arena for the run.
#[derive(Debug, Clone, Default)]
pub struct Sets {
    joins: Vec<(u32, u32)>,
    stack: Vec<u32>,
}

impl Sets {
    /// The set of rank `r` alone (ranks below 2^31 - 1).
    pub fn rank(r: u32) -> u32 {
        debug_assert!(r + 1 < JOIN);
        r + 1
    }

    /// The union of disjoint sets `a` and `b`.
    pub fn join(&mut self, a: u32, b: u32) -> u32 {
        if a == NO_ONE {
            return b;
        }
        if b == NO_ONE {
            return a;
        }
        self.joins.push((a, b));
        JOIN | (self.joins.len() - 1) as u32
    }

    /// Appends the ranks of `set` to `out` (in no particular order).
    pub fn members(&mut self, set: u32, out: &mut Vec<u32>) {
        self.stack.clear();
        self.stack.push(set);
        while let Some(s) = self.stack.pop() {
            if s == NO_ONE {
                continue;
            }
            if s & JOIN == 0 {
                out.push(s - 1);
            } else {
                let (a, b) = self.joins[(s & !JOIN) as usize];
                self.stack.push(b);
                self.stack.push(a);
            }
        }
    }
}

/// Every switch's descriptor table: (switch, slot) to descriptor; a missing entry is free.
pub type Tables = FxHashMap<(u32, u32), Desc>;

/// Where a switch is and what it is handling.
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    /// This switch's node.
    pub me: u32,
    /// The port the packet came in on (None for a timer).
    pub port: Option<u32>,
    pub now: u64,
    pub timeout: u64,
    pub table_size: u32,
    /// The first descriptor of this allreduce's share of the table: concurrent allreduces
    /// partition it statically (the paper's Section 5.2.4), each hashing into its own share.
    pub table_base: u32,
    /// Age after which a descriptor is reclaimed (0: never; see the `reclaim` rule).
    pub reclaim: u64,
}

/// What leaves a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Out {
    /// Route this packet towards node `to`.
    Forward(Header, u32),
    /// Copies of this packet on these ports.
    Multicast(Header, u128),
    /// Fire a timer for block `id` in `slot` at this time.
    Arm(u32, u32, u64),
    /// Fire a reclaim for block `id` in `slot` at this time.
    Reclaim(u32, u32, u64),
}

/// CRC-32 (IEEE 802.3, reflected, as P4's `HashAlgorithm.crc32`) of a 32-bit id in network
/// byte order: the descriptor slot is `crc32(id) mod table_size`.
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

/// The slot of block `id`.
pub fn slot(id: u32, table_size: u32) -> u32 {
    crc32(id) % table_size.max(1)
}

/// Runs the first rule of `p` for `on` whose guards hold: a packet `h` arriving at `ctx.me`, or
/// the timer of block `h.id` (then only `h.id` is read). Returns the rule's name (None when no
/// rule matched: a stale timer) and appends what leaves to `out`. For headers without
/// contributor sets; [`step_with`] joins them.
pub fn step(
    p: &Protocol,
    on: Trigger,
    tables: &mut Tables,
    ctx: &Ctx,
    h: Header,
    out: &mut Vec<Out>,
) -> Option<&'static str> {
    debug_assert_eq!(
        h.from, NO_ONE,
        "a contributor set needs its arena: step_with"
    );
    step_with(p, on, tables, &mut Sets::default(), ctx, h, out)
}

/// [`step`], joining contributor sets in `sets` as the data is added.
pub fn step_with(
    p: &Protocol,
    on: Trigger,
    tables: &mut Tables,
    sets: &mut Sets,
    ctx: &Ctx,
    mut h: Header,
    out: &mut Vec<Out>,
) -> Option<&'static str> {
    let s = ctx.table_base + slot(h.id, ctx.table_size);
    let key = (ctx.me, s);
    let desc = tables.get(&key).copied();
    let holds = desc.is_some_and(|d| d.id == h.id);
    let at_root = match on {
        Trigger::Packet => h.switch == ctx.me && !h.bypass && !h.multicast,
        Trigger::Timer | Trigger::Reclaim => desc.is_some_and(|d| d.root == ctx.me),
    };
    let holds_counter = if holds {
        desc.map_or(0, |d| d.counter)
    } else {
        0
    };
    let test = |g: &Guard| match *g {
        Guard::Bypass(b) => h.bypass == b,
        Guard::Multicast(b) => h.multicast == b,
        Guard::AtDst(b) => (h.dst == ctx.me) == b,
        Guard::CarriesPorts(b) => (h.children != 0) == b,
        Guard::AtRoot(b) => at_root == b,
        Guard::SlotFree(b) => desc.is_none() == b,
        Guard::Holds(b) => holds == b,
        Guard::Sent(b) => desc.is_some_and(|d| d.sent) == b,
        Guard::Completes(b) => (holds_counter + h.counter + 1 == h.hosts) == b,
        Guard::Stale(b) => {
            desc.is_some_and(|d| ctx.reclaim > 0 && ctx.now >= d.stamp + ctx.reclaim) == b
        }
    };
    let rule = p
        .switch
        .iter()
        .find(|r| r.on == on && r.when.iter().all(test))?;
    let bit = ctx.port.map_or(0, |k| 1u128 << k);
    for act in &rule.then {
        match act {
            Act::Allocate => {
                tables.insert(
                    key,
                    Desc {
                        id: h.id,
                        counter: h.counter,
                        hosts: h.hosts,
                        children: 0,
                        leader: h.dst,
                        root: h.switch,
                        stamp: ctx.now,
                        sent: false,
                        data: h.data,
                        from: h.from,
                    },
                );
            }
            Act::Accumulate => {
                if let Some(d) = tables.get_mut(&key) {
                    d.counter += h.counter;
                    d.data = d.data.wrapping_add(h.data);
                    d.from = sets.join(d.from, h.from);
                }
            }
            Act::AddChild => {
                if let Some(d) = tables.get_mut(&key) {
                    d.children |= bit;
                }
            }
            Act::ArmTimer => out.push(Out::Arm(h.id, s, ctx.now + ctx.timeout)),
            Act::ArmReclaim => {
                if ctx.reclaim > 0 {
                    out.push(Out::Reclaim(h.id, s, ctx.now + ctx.reclaim));
                }
            }
            Act::MarkSent => {
                if let Some(d) = tables.get_mut(&key) {
                    d.sent = true;
                }
            }
            Act::LoadAccumulator => {
                if let Some(d) = tables.get(&key) {
                    h = Header {
                        dst: d.leader,
                        id: d.id,
                        counter: d.counter,
                        hosts: d.hosts,
                        children: 0,
                        switch: d.root,
                        bypass: false,
                        multicast: false,
                        kind: Kind::Data,
                        data: d.data,
                        from: d.from,
                    };
                }
            }
            Act::MarkCollision => {
                h.switch = ctx.me;
                h.children = bit;
                h.bypass = true;
            }
            Act::ClearBypass => h.bypass = false,
            Act::MulticastChildren => {
                let ports = tables.get(&key).map_or(0, |d| d.children);
                if ports != 0 {
                    out.push(Out::Multicast(h, ports));
                }
            }
            Act::MulticastCarried => {
                let ports = h.children;
                out.push(Out::Multicast(
                    Header {
                        children: 0,
                        bypass: false,
                        ..h
                    },
                    ports,
                ));
            }
            Act::Free => {
                tables.remove(&key);
            }
            Act::Up => {
                if h.switch == ctx.me {
                    h.bypass = true;
                    out.push(Out::Forward(h, h.dst));
                } else {
                    out.push(Out::Forward(h, h.switch));
                }
            }
            Act::ToDst => out.push(Out::Forward(h, h.dst)),
            Act::Drop => {}
        }
    }
    Some(rule.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(id: u32, counter: u32, data: u64) -> Header {
        Header {
            dst: 100,
            id,
            counter,
            hosts: 4,
            children: 0,
            switch: 9,
            bypass: false,
            multicast: false,
            kind: Kind::Data,
            data,
            from: NO_ONE,
        }
    }

    fn ctx(me: u32, port: u32, now: u64, table: u32) -> Ctx {
        Ctx {
            table_base: 0,
            me,
            port: Some(port),
            now,
            timeout: 1000,
            table_size: table,
            reclaim: 0,
        }
    }

    #[test]
    fn crc32_is_the_ieee_polynomial() {
        // crc32 of the bytes 00 00 00 00, and of "1234" read as a big-endian u32.
        assert_eq!(crc32(0), 0x2144_DF1C);
        assert_eq!(crc32(u32::from_be_bytes(*b"1234")), 0x9BE3_E0A3);
    }

    #[test]
    fn a_switch_aggregates_then_sends_on_timeout_and_frees_on_the_way_down() {
        let p = Protocol::paper();
        let mut t = Tables::default();
        let mut out = Vec::new();
        let r = step(
            &p,
            Trigger::Packet,
            &mut t,
            &ctx(5, 0, 0, 64),
            pkt(7, 1, 10),
            &mut out,
        );
        assert_eq!(r, Some("allocate"));
        assert!(matches!(out[..], [Out::Arm(7, _, 1000)]));
        out.clear();
        let r = step(
            &p,
            Trigger::Packet,
            &mut t,
            &ctx(5, 3, 10, 64),
            pkt(7, 1, 5),
            &mut out,
        );
        assert_eq!(r, Some("aggregate"));
        assert!(out.is_empty());
        let r = step(
            &p,
            Trigger::Timer,
            &mut t,
            &ctx(5, 0, 1000, 64),
            pkt(7, 0, 0),
            &mut out,
        );
        assert_eq!(r, Some("timeout"));
        let Out::Forward(up, to) = out[0] else {
            panic!("{out:?}")
        };
        assert_eq!((up.counter, up.data, to, up.bypass), (2, 15, 9, false));
        out.clear();
        // A straggler after the timeout goes up at once and is remembered as a child.
        let r = step(
            &p,
            Trigger::Packet,
            &mut t,
            &ctx(5, 4, 1500, 64),
            pkt(7, 1, 1),
            &mut out,
        );
        assert_eq!(r, Some("straggler"));
        assert!(matches!(out[..], [Out::Forward(_, 9)]));
        out.clear();
        let down = Header {
            multicast: true,
            ..pkt(7, 4, 99)
        };
        let r = step(
            &p,
            Trigger::Packet,
            &mut t,
            &ctx(5, 1, 2000, 64),
            down,
            &mut out,
        );
        assert_eq!(r, Some("broadcast"));
        assert!(matches!(out[..], [Out::Multicast(_, 0b11001)]));
        assert!(t.is_empty(), "freed on the way down");
    }

    #[test]
    fn a_collision_goes_to_the_leader_marked_with_the_switch_and_port() {
        let p = Protocol::paper();
        let mut t = Tables::default();
        let mut out = Vec::new();
        // A table of one entry: every block collides with the one it holds.
        step(
            &p,
            Trigger::Packet,
            &mut t,
            &ctx(5, 0, 0, 1),
            pkt(7, 1, 1),
            &mut out,
        );
        out.clear();
        let r = step(
            &p,
            Trigger::Packet,
            &mut t,
            &ctx(5, 2, 1, 1),
            pkt(8, 1, 1),
            &mut out,
        );
        assert_eq!(r, Some("collision"));
        let Out::Forward(h, to) = out[0] else {
            panic!("{out:?}")
        };
        assert_eq!((h.switch, h.children, h.bypass, to), (5, 0b100, true, 100));
    }

    #[test]
    fn the_root_sends_to_the_leader_as_soon_as_all_but_the_leader_are_in() {
        let p = Protocol::paper();
        let mut t = Tables::default();
        let mut out = Vec::new();
        step(
            &p,
            Trigger::Packet,
            &mut t,
            &ctx(9, 0, 0, 64),
            pkt(7, 2, 1),
            &mut out,
        );
        out.clear();
        let r = step(
            &p,
            Trigger::Packet,
            &mut t,
            &ctx(9, 1, 5, 64),
            pkt(7, 1, 1),
            &mut out,
        );
        assert_eq!(r, Some("complete"));
        let Out::Forward(h, to) = out[0] else {
            panic!("{out:?}")
        };
        assert_eq!((h.counter, to, h.bypass), (3, 100, true));
    }
}
