//! Canary's protocol as data (../shared/seeds/canary.txt, Sections 3 and 4): the header of
//! Section 4.1 ([`HEADER`]), the switch's block descriptor ([`DESCRIPTOR`]) and the switch's
//! logic as an ordered rule table ([`Protocol::switch`]): each [`Rule`] has a trigger (a packet
//! arrives, or a descriptor's timer fires), guards on the packet's header and on the descriptor
//! slot its id hashes to, and actions. The first rule whose guards all hold runs; this is the
//! shape of a match-action pipeline (a P4 program's `if`/`else` chain over header bits and
//! register reads), so the packet simulator ([`super::switch::step`]) and the P4 target execute
//! the same table. The hosts' side is [`super::host`].
//!
//! The rules, in order, as the paper states them (Section 3.5's summary):
//! 1. `transit`: a bypass packet not addressed to this switch is only forwarded (Section 3.2.1).
//! 2. `restore`: a restoration packet (bypass, multicast, carrying ports) addressed here is
//!    multicast on the ports it carries (tree restoration, Section 3.2.1).
//! 3. `broadcast`: a result (multicast) for a block this switch holds goes to the descriptor's
//!    children and the descriptor is freed (Section 3.1.2); at the root it arrives from the
//!    leader with the bypass bit, which is cleared.
//! 4. `broadcast-miss`: a result for a block this switch does not hold is dropped (its subtree,
//!    if any, is restored by the leader).
//! 5. `complete` and 6. `complete-first` (root only): the packet brings the counter to the
//!    host count minus one (the leader contributes its own data), so the root sends to the
//!    leader at once instead of waiting for the timeout (Section 3.1.4).
//! 7. `allocate`: the slot is free: store the block, note the input port as a child, arm the
//!    timer, drop the packet (Section 3.1.1).
//! 8. `aggregate`: the slot holds this block, not yet sent: accumulate, note the child, drop.
//! 9. `straggler`: the slot holds this block, already sent: note the child, forward the packet
//!    towards the root at once (Section 3.1.1).
//! 10. `collision`: the slot holds another block: write this switch and the input port into the
//!     packet, set the bypass bit, send it straight to the leader (Section 3.2.1).
//! 11. `timeout` (timer trigger): the block is still collecting: mark it sent, and send its
//!     accumulator towards the root (or, at the root, to the leader).
//! 12. `reclaim` (reclaim trigger, only where packets can be lost): a descriptor older than the
//!     reclaim age is freed. Not in the paper, which frees descriptors only on the way down: a
//!     block whose packets were lost is re-issued under a fresh id (Section 3.3), and the
//!     switches its old packets passed would hold its descriptors for ever.
//!
//! Routing "towards the root" is the packet's destination switch while going up; at the root
//! the packet continues to the leader with the bypass bit set, so the switches between the
//! root and the leader do not aggregate it again. [`Protocol::without`] removes a rule: tests
//! use it to show that the checked runs of the packet simulator catch a protocol without tree
//! restoration or without the straggler rule.

/// A field of a header or register layout: name and width in bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub bits: u32,
    pub doc: &'static str,
}

/// The Canary header of Section 4.1, in wire order: 152 bits, 19 bytes. Deviations: the
/// paper's 6 padding bits carry a 2-bit host message kind ([`Kind`]) in their first two bits;
/// `switch` holds the root switch while a packet goes up (the paper keeps the root in the
/// descriptor and routes on the leader's address; collc's simulated switches route to the root
/// by its address) and the colliding switch after a collision; `children` holds the one-hot
/// port index on a collision and a shard of the children bitmap (shard index in the top bits)
/// in a restoration packet.
pub const HEADER: &[Field] = &[
    Field {
        name: "dst",
        bits: 32,
        doc: "the leader host (or, for the leader's broadcast and restoration packets, a switch)",
    },
    Field {
        name: "id",
        bits: 32,
        doc: "block id: 12 bits of application id, 20 bits of block sequence",
    },
    Field {
        name: "counter",
        bits: 16,
        doc: "contributions reduced into this packet",
    },
    Field {
        name: "hosts",
        bits: 16,
        doc: "hosts taking part in the reduction",
    },
    Field {
        name: "children",
        bits: 32,
        doc: "collision: the input port; restoration: a shard of ports",
    },
    Field {
        name: "switch",
        bits: 16,
        doc: "the root switch going up; the colliding switch after a collision",
    },
    Field {
        name: "bypass",
        bits: 1,
        doc: "forward only, towards dst",
    },
    Field {
        name: "multicast",
        bits: 1,
        doc: "a result going down the tree",
    },
    Field {
        name: "kind",
        bits: 2,
        doc: "host message: 0 data, 1 retransmission request, 2 failure",
    },
    Field {
        name: "pad",
        bits: 4,
        doc: "to a whole byte",
    },
];

/// The block descriptor a switch keeps per table entry (Section 3.1.3), besides the
/// accumulator (elements per packet times 32 bits).
pub const DESCRIPTOR: &[Field] = &[
    Field {
        name: "id",
        bits: 32,
        doc: "the block held, or free",
    },
    Field {
        name: "counter",
        bits: 16,
        doc: "contributions accumulated",
    },
    Field {
        name: "hosts",
        bits: 16,
        doc: "from the first packet",
    },
    Field {
        name: "children",
        bits: 64,
        doc: "bitmap of the ports packets came from",
    },
    Field {
        name: "leader",
        bits: 32,
        doc: "the packet's dst",
    },
    Field {
        name: "root",
        bits: 16,
        doc: "the packet's root switch",
    },
    Field {
        name: "timestamp",
        bits: 48,
        doc: "when the first packet arrived (ns)",
    },
    Field {
        name: "sent",
        bits: 1,
        doc: "the timeout expired and the accumulator left",
    },
];

/// Bytes of the header on the wire.
pub fn header_bytes() -> u64 {
    u64::from(HEADER.iter().map(|f| f.bits).sum::<u32>()).div_ceil(8)
}

/// Host message kinds (the header's `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Data,
    Retransmit,
    Failure,
}

/// What starts a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Packet,
    Timer,
    /// A descriptor's reclaim timer (armed only where packets can be lost).
    Reclaim,
}

/// A condition on the packet and the descriptor slot its id hashes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    Bypass(bool),
    Multicast(bool),
    /// The packet's `dst` is this switch.
    AtDst(bool),
    /// The packet's `children` is not zero.
    CarriesPorts(bool),
    /// This switch is the packet's (or the descriptor's) root.
    AtRoot(bool),
    /// The slot is free.
    SlotFree(bool),
    /// The slot holds the packet's block.
    Holds(bool),
    /// The held block's accumulator has left (its timeout expired).
    Sent(bool),
    /// The slot's counter plus the packet's reaches `hosts - 1`.
    Completes(bool),
    /// The descriptor is older than the reclaim age.
    Stale(bool),
}

/// A step of a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// Store the packet's block in the free slot (accumulator, counter, hosts, leader, root,
    /// timestamp).
    Allocate,
    /// Add the packet's data and counter to the slot's.
    Accumulate,
    /// Set the input port's bit in the slot's children.
    AddChild,
    /// Arm the slot's timer for now + timeout (clock packets on hardware, Section 4.3).
    ArmTimer,
    /// Arm the slot's reclaim for now + the reclaim age (only when faults can happen: a block
    /// whose packets were lost is re-issued under a fresh id, and its old descriptors would
    /// otherwise stay allocated; the clock packets that fire timeouts free them).
    ArmReclaim,
    /// Mark the slot's block sent.
    MarkSent,
    /// Replace the packet by one carrying the slot's accumulator and counter.
    LoadAccumulator,
    /// Write this switch and the input port into the packet, set bypass (Section 3.2.1).
    MarkCollision,
    ClearBypass,
    /// Copies of the packet on the slot's children ports.
    MulticastChildren,
    /// Copies of the packet on the ports it carries (restoration).
    MulticastCarried,
    /// Free the slot.
    Free,
    /// Forward towards the root; at the root, to the leader with bypass set.
    Up,
    /// Forward towards `dst`.
    ToDst,
    Drop,
}

/// One row of the switch's table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub name: &'static str,
    pub on: Trigger,
    pub when: Vec<Guard>,
    pub then: Vec<Act>,
}

/// The switch logic; see the module doc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Protocol {
    pub switch: Vec<Rule>,
}

fn rule(name: &'static str, on: Trigger, when: &[Guard], then: &[Act]) -> Rule {
    Rule {
        name,
        on,
        when: when.to_vec(),
        then: then.to_vec(),
    }
}

impl Protocol {
    /// The paper's protocol.
    pub fn paper() -> Protocol {
        use Act::*;
        use Guard::*;
        use Trigger::*;
        Protocol {
            switch: vec![
                rule("transit", Packet, &[Bypass(true), AtDst(false)], &[ToDst]),
                rule(
                    "restore",
                    Packet,
                    &[Bypass(true), Multicast(true), CarriesPorts(true)],
                    &[MulticastCarried, Drop],
                ),
                rule(
                    "broadcast",
                    Packet,
                    &[Multicast(true), Holds(true)],
                    &[ClearBypass, MulticastChildren, Free, Drop],
                ),
                rule("broadcast-miss", Packet, &[Multicast(true)], &[Drop]),
                rule(
                    "complete",
                    Packet,
                    &[AtRoot(true), Holds(true), Sent(false), Completes(true)],
                    &[Accumulate, AddChild, MarkSent, LoadAccumulator, Up],
                ),
                rule(
                    "complete-first",
                    Packet,
                    &[AtRoot(true), SlotFree(true), Completes(true)],
                    &[Allocate, AddChild, ArmReclaim, MarkSent, Up],
                ),
                rule(
                    "allocate",
                    Packet,
                    &[SlotFree(true)],
                    &[Allocate, AddChild, ArmTimer, ArmReclaim, Drop],
                ),
                rule(
                    "aggregate",
                    Packet,
                    &[Holds(true), Sent(false)],
                    &[Accumulate, AddChild, Drop],
                ),
                rule(
                    "straggler",
                    Packet,
                    &[Holds(true), Sent(true)],
                    &[AddChild, Up],
                ),
                rule("collision", Packet, &[], &[MarkCollision, ToDst]),
                rule(
                    "timeout",
                    Timer,
                    &[Holds(true), Sent(false)],
                    &[MarkSent, LoadAccumulator, Up],
                ),
                rule("reclaim", Reclaim, &[Holds(true), Stale(true)], &[Free]),
            ],
        }
    }

    /// This protocol without the rule `name` (for tests that the exploration catches it).
    pub fn without(mut self, name: &str) -> Protocol {
        self.switch.retain(|r| r.name != name);
        self
    }

    /// The protocol as it would be without the straggler rule: a switch cannot tell that a
    /// block's accumulator already left, so it keeps aggregating late packets into it, and
    /// their contributions never reach the root (Section 3.1.1's reason for the rule).
    pub fn without_stragglers(mut self) -> Protocol {
        self.switch.retain(|r| r.name != "straggler");
        for r in &mut self.switch {
            if r.name == "aggregate" {
                r.when.retain(|g| *g != Guard::Sent(false));
            }
        }
        self
    }

    /// Whether the leader restores subtrees after collisions (the `restore` rule is present).
    pub fn restores(&self) -> bool {
        self.switch.iter().any(|r| r.name == "restore")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_19_bytes_as_in_section_4_1() {
        assert_eq!(header_bytes(), 19);
        assert_eq!(HEADER.iter().map(|f| f.bits).sum::<u32>(), 152);
    }

    #[test]
    fn every_packet_matches_a_rule() {
        // The last packet rule has no guards: no packet falls through the table.
        let p = Protocol::paper();
        let last = p
            .switch
            .iter()
            .rfind(|r| r.on == Trigger::Packet)
            .expect("packet rules");
        assert!(last.when.is_empty());
        assert_eq!(
            p.clone().without("straggler").switch.len(),
            p.switch.len() - 1
        );
    }
}
