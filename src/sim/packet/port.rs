//! The state the packet engine keeps per directed link ([`Port`]: its output queue, what it is
//! sending, its credit for the far end's buffer), per message ([`Msg`]) and per packet
//! ([`Pkt`]); see [`super::engine`] for how they move.

use super::params::PacketParams;
use crate::net::Net;
use std::collections::VecDeque;

/// No link, packet or message.
pub(super) const NONE: u32 = u32::MAX;
/// The owner of background messages.
pub(super) const BG: u32 = u32::MAX;

/// The output port of a directed link.
pub(super) struct Port {
    /// The far end, and the link latency (ps).
    pub(super) to: u32,
    pub(super) lat: u64,
    /// Picoseconds per byte when whole, else 0 and `a / b` per byte.
    pub(super) ppb: u64,
    pub(super) a: u128,
    pub(super) b: u128,
    /// Sending `cur`, which took credit of the far end when `cur_credit`.
    pub(super) busy: bool,
    pub(super) cur: u32,
    pub(super) cur_credit: bool,
    /// Packets to forward, one queue per input (the incoming link's [`Inputs::slot`], or the
    /// node's switch process, [`Inputs::local`]), served round robin over the inputs with
    /// packets (`active`), one packet each, as a switch's crossbar arbitrates between its input
    /// ports; `npk` counts them. And this host's own messages (packetised as they go). Packets
    /// and messages take turns (`turn`: packets next); the engine's `queued` counts the bytes
    /// waiting in both. An input's queue is its (first, last) packet, linked through the
    /// engine's `next` array, indexed by packet (NONE when empty; apart from [`Pkt`] so that
    /// linking a packet behind another writes into a small array, not the other's record).
    pub(super) inq: Vec<(u32, u32)>,
    pub(super) active: VecDeque<u16>,
    pub(super) npk: u32,
    pub(super) msgs: VecDeque<u32>,
    pub(super) turn: bool,
    /// Packets of a strict-priority class, served before everything else (Canary's repair
    /// traffic where packets can be lost, [`super::canary_leader`]); counted in `npk`.
    pub(super) prio: VecDeque<u32>,
    /// Packets served only when nothing else waits (a Canary host's repair traffic, which
    /// must not push its stream off the schedule the other hosts keep); counted in `npk`.
    pub(super) low: VecDeque<u32>,
    /// When a paced stream of this port may send next (a wake is queued for then).
    pub(super) wake: u64,
    /// Bytes of the switch process's output waiting here (in its aggregation memory, not in
    /// the port's buffer: adaptive routing reads the engine's `queued` only).
    pub(super) held: u64,
    /// Bytes of the far end's buffer this port may still fill.
    pub(super) credit: u64,
    /// Since when the head packet waits for credit (u64::MAX: it does not).
    pub(super) stalled: u64,
    /// Bytes sent on the wire.
    pub(super) bytes: u64,
}

impl Port {
    /// Queues packet `pid` from input `slot` (linked through `next`).
    pub(super) fn push(&mut self, slot: u16, pid: u32, next: &mut [u32]) {
        let s = usize::from(slot);
        if self.inq.len() <= s {
            self.inq.resize(s + 1, (NONE, NONE));
        }
        next[pid as usize] = NONE;
        let q = &mut self.inq[s];
        if q.0 == NONE {
            self.active.push_back(slot);
            q.0 = pid;
        } else {
            next[q.1 as usize] = pid;
        }
        q.1 = pid;
        self.npk += 1;
    }

    /// The head packet of the `i`-th input in the round robin's order (0: the one it serves
    /// next).
    pub(super) fn head_at(&self, i: usize) -> Option<u32> {
        let s = *self.active.get(i)?;
        Some(self.inq[usize::from(s)].0)
    }

    /// Takes the head packet of the `i`-th input in turn; that input goes to the back.
    pub(super) fn pop_at(&mut self, i: usize, next: &[u32]) -> Option<u32> {
        let s = self.active.remove(i)?;
        let q = &mut self.inq[usize::from(s)];
        let pid = q.0;
        q.0 = next[pid as usize];
        if q.0 == NONE {
            q.1 = NONE;
        } else {
            self.active.push_back(s);
        }
        self.npk -= 1;
        Some(pid)
    }

    pub(super) fn ser(&self, wire: u64) -> u64 {
        if self.ppb > 0 {
            wire * self.ppb
        } else {
            (u128::from(wire) * self.a).div_ceil(self.b) as u64
        }
    }
}

/// A message in flight (its slot is reused once all its packets have arrived).
pub(super) struct Msg {
    pub(super) src: u32,
    pub(super) dst: u32,
    pub(super) bytes: u64,
    pub(super) npk: u32,
    pub(super) sent: u32,
    pub(super) arrived: u32,
    pub(super) key: u64,
    pub(super) path: u32,
    /// Job index, or BG.
    pub(super) owner: u32,
    /// The send op (jobs) or the sending host's index among the congesting hosts.
    pub(super) op: u32,
    /// A job's message: the receive it delivers to (NONE else), and whether that receive
    /// counts it packet by packet (a switch process's), so delivering a packet reads no op.
    pub(super) recv: u32,
    pub(super) stream: bool,
    /// Posted by a host (packetised at its NIC) rather than emitted by a switch process.
    pub(super) hosted: bool,
}

/// A packet in flight: packet `idx` of message `msg`, `wire` bytes, `hop` links done. 32
/// bytes, aligned so that no record straddles two cache lines.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
pub(super) struct Pkt {
    /// Its message's flow key ([`Msg::key`]), kept here so that routing a packet at a switch
    /// reads the packet alone.
    pub(super) key: u64,
    pub(super) msg: u32,
    pub(super) idx: u32,
    pub(super) wire: u32,
    /// The link whose far-end buffer (credit) this packet holds.
    pub(super) held: u32,
    pub(super) hop: u32,
    /// Its message's destination node (kept here so that a port choosing what to send reads
    /// the packet alone), or for a Canary packet, which has none (see its header), [`CANARY_PKT`]
    /// with its header's index (into the engine's headers): see [`Pkt::dst`] and [`Pkt::ch`].
    to: u32,
}

/// The bit of [`Pkt`]'s `to` that marks a Canary packet's header index (node ids and header
/// indices stay below it: a network has at most millions of nodes, a run at most
/// `--max-packets` packets and as many headers).
const CANARY_PKT: u32 = 1 << 31;

impl Pkt {
    /// A packet of message `msg` (with flow `key`) bound for node `dst`.
    pub(super) fn new(msg: u32, idx: u32, wire: u32, key: u64, dst: u32) -> Pkt {
        debug_assert!(dst < CANARY_PKT);
        Pkt {
            key,
            msg,
            idx,
            wire,
            held: NONE,
            hop: 0,
            to: dst,
        }
    }

    /// A Canary packet whose header is `ch` (of message `msg`, a host's stream, or NONE). Its
    /// `key` names the sender whose flow its default port hashes (NONE: the destination alone;
    /// see `Sim::canary_port`).
    pub(super) fn canary(msg: u32, idx: u32, wire: u32, ch: u32) -> Pkt {
        assert!(ch < CANARY_PKT, "Canary header index out of range");
        Pkt {
            key: u64::from(NONE),
            msg,
            idx,
            wire,
            held: NONE,
            hop: 0,
            to: CANARY_PKT | ch,
        }
    }

    /// Its message's destination (NONE for a Canary packet).
    pub(super) fn dst(&self) -> u32 {
        if self.to & CANARY_PKT != 0 {
            NONE
        } else {
            self.to
        }
    }

    /// A Canary packet's header (an index into the engine's headers), else NONE.
    pub(super) fn ch(&self) -> u32 {
        if self.to & CANARY_PKT != 0 {
            self.to & !CANARY_PKT
        } else {
            NONE
        }
    }
}

const _: () = assert!(std::mem::size_of::<Pkt>() == 32);

/// One port per directed link of `net`, idle, with a full buffer of credit.
pub(super) fn ports(net: &Net, params: &PacketParams) -> Vec<Port> {
    net.links
        .iter()
        .map(|l| {
            let ps = num_rational::BigRational::from_integer(1_000_000_000_000u64.into());
            let per = ps / &l.bandwidth;
            let (a, b) = (
                u128::try_from(per.numer()).unwrap_or(u128::MAX),
                u128::try_from(per.denom()).unwrap_or(1),
            );
            let lat = super::ps_of(&l.latency);
            Port {
                to: l.to as u32,
                lat,
                ppb: if b == 1 { a as u64 } else { 0 },
                a,
                b,
                busy: false,
                cur: NONE,
                cur_credit: false,
                inq: Vec::new(),
                active: VecDeque::new(),
                npk: 0,
                msgs: VecDeque::new(),
                turn: false,
                prio: VecDeque::new(),
                low: VecDeque::new(),
                wake: 0,
                held: 0,
                credit: params.queue,
                stalled: u64::MAX,
                bytes: 0,
            }
        })
        .collect()
}

/// Which input queue of a port a packet joins: per directed link, its index among the links
/// into its far end; per node, the slot of its own switch process (after its in-links).
pub(super) struct Inputs {
    slot: Vec<u16>,
    local: Vec<u16>,
}

impl Inputs {
    pub(super) fn new(net: &Net) -> Inputs {
        let mut local = vec![0u16; net.names.len()];
        let slot = net
            .links
            .iter()
            .map(|l| {
                let s = local[l.to];
                local[l.to] = s.saturating_add(1);
                s
            })
            .collect();
        Inputs { slot, local }
    }

    /// The slot of packets arriving over link `l`.
    pub(super) fn slot(&self, l: crate::net::LinkId) -> u16 {
        self.slot[l as usize]
    }

    /// The slot of packets a switch process on `node` emits.
    pub(super) fn local(&self, node: u32) -> u16 {
        self.local[node as usize]
    }
}
