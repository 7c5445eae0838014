//! The parameters of the packet-level model (`model NAME: packet { ... }`), in integer
//! picoseconds and bytes, with their defaults and why they were chosen:
//!
//! - `mtu` 1081 B, the largest packet on the wire *including* its header, and `header` 57 B:
//!   the Canary paper's packet (Section 5.1): 19 B of Canary header, 14 B of Ethernet header and
//!   24 B of framing (preamble, FCS, inter-frame gap), and its large simulations carry 256
//!   four-byte elements (1 KiB) per packet, so 1024 + 57 = 1081 B. Host-based traffic on real
//!   RoCE/InfiniBand uses 4096 B MTUs; declare `mtu: 4153 B` for that (fewer packets, faster
//!   simulation).
//! - `queue` 64 KiB: the buffer of each switch port, in bytes (about 60 default packets, 5 us at
//!   100 Gb/s): enough to absorb bursts, small enough that the paper's adaptive rule (divert when
//!   a port is more than half full) reacts within a few microseconds.
//! - `switch_delay` 100 ns: a cut-through HPC or data-centre switch's port-to-port latency;
//!   `aggregation_delay` 0 ns: the paper calibrates its switches to aggregate at line rate (Fig. 6),
//!   so reducing a packet costs nothing beyond forwarding it.
//! - `overhead` 100 ns: a host's time to post a message to its NIC (an RDMA work request); it
//!   overlaps with other messages. `gamma` 0 ns/B: host reductions as fast as memory.
//! - `routing` `adaptive` (the paper's), `ecmp` or `minimal` ([`super::route`]).
//! - `placement` `declared` (rank r on the collective's r-th participant) or `random` (the ranks
//!   on a random subset of the compute nodes, by seed, as the paper allocates them).
//! - `background` 0 (a fraction from 0 to 1 of the compute nodes outside the collective) or
//!   `background_hosts` (a count; 0, the default, defers to `background`): the hosts that generate random uniform traffic in messages of
//!   `background_size` 64 KiB ([`super::traffic`]), each to a peer among the other congesting
//!   hosts (`background_peers: congesting`) or among all other compute nodes, the collective's
//!   included (`background_peers: all`; the paper does not say which it used).
//!
//! Link bandwidths and latencies come from the topology ([`crate::net`]).

use crate::sema::model::{CostModel, CostModelKind, ModelParam};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;

/// How a packet picks its next hop ([`super::route`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routing {
    Adaptive,
    Ecmp,
    Minimal,
}

impl Routing {
    pub fn name(self) -> &'static str {
        match self {
            Routing::Adaptive => "adaptive",
            Routing::Ecmp => "ecmp",
            Routing::Minimal => "minimal",
        }
    }
}

/// How many of the hosts outside the collective generate background traffic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Background {
    /// A share of them, from 0 to 1 (rounded down to whole hosts).
    Fraction(f64),
    /// This many of them.
    Hosts(u64),
}

/// A switch failure: from time `at` (ps), the first switch of `among` (sorted) that a Canary
/// packet reaches fails as the packet arrives (so the failure always hits traffic); with one
/// switch in `among`, that switch fails at `at` whatever reaches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub at: u64,
    pub among: Vec<u32>,
}

/// The packet model's parameters; times in picoseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct PacketParams {
    /// Largest packet on the wire, header included (bytes).
    pub mtu: u64,
    pub header: u64,
    /// Buffer of each switch port (bytes).
    pub queue: u64,
    pub switch_delay: u64,
    pub aggregation_delay: u64,
    /// Per message, on the sending host.
    pub overhead: u64,
    /// Host reduction time per byte, in picoseconds per byte (exact).
    pub gamma: BigRational,
    pub routing: Routing,
    pub random_placement: bool,
    pub background: Background,
    pub background_size: u64,
    /// Background messages go to any compute node, not only to congesting hosts.
    pub background_to_all: bool,
    /// Probability that a Canary packet is lost on a link (0: lossless; Canary's fault
    /// tolerance, Section 3.3, runs only when it is above 0).
    pub loss: f64,
    /// Instances of the collective that run at once, each on hosts of its own (the paper's
    /// concurrent allreduces, Section 5.2.4).
    pub concurrent: u32,
    /// Host noise (Section 5.2.5): the probability that a host delays a packet of a
    /// collective it sends by `noise_delay` (ps).
    pub noise: f64,
    pub noise_delay: u64,
    /// A switch that fails mid-run ([`Failure`]): from then on every Canary packet that
    /// reaches it or leaves it is lost, its descriptors are gone, and routes avoid it. Canary
    /// runs with its fault tolerance on (Section 3.3); set by the exploration, not by the
    /// language.
    pub failure: Option<Failure>,
    /// Events after which a run stops and fails (0: no limit here; [`super::run_file`] then
    /// applies the file's `--max-events`). The exploration sets it, so a protocol that
    /// livelocks (packets and timers without end, no progress) is a failing run with its seed
    /// instead of a run that never ends or fills memory.
    pub max_events: u64,
    /// Packets alive at once (queued, in flight or held) after which a run stops and fails
    /// (0: no limit here; [`super::run_file`] applies `--max-packets`): memory grows with
    /// them, and a host that sends faster than the network delivers (a lossy Canary run
    /// re-sending blocks) would otherwise fill it.
    pub max_packets: u64,
    /// `model NAME` when declared, None for the defaults.
    pub declared: Option<String>,
}

impl Default for PacketParams {
    fn default() -> Self {
        PacketParams {
            mtu: 1081,
            header: 57,
            queue: 64 * 1024,
            switch_delay: 100_000,
            aggregation_delay: 0,
            overhead: 100_000,
            gamma: BigRational::from_integer(0.into()),
            routing: Routing::Adaptive,
            random_placement: false,
            background: Background::Fraction(0.0),
            background_size: 64 * 1024,
            background_to_all: false,
            loss: 0.0,
            concurrent: 1,
            noise: 0.0,
            noise_delay: 1_000_000,
            failure: None,
            max_events: 0,
            max_packets: 0,
            declared: None,
        }
    }
}

fn ps(s: &BigRational) -> u64 {
    let v = s * BigRational::from_integer(BigInt::from(1_000_000_000_000u64));
    v.round().to_integer().to_u64().unwrap_or(u64::MAX)
}

impl PacketParams {
    /// Payload bytes per packet.
    pub fn payload(&self) -> u64 {
        self.mtu.saturating_sub(self.header).max(1)
    }

    /// Packets of a message of `bytes` (a message of 0 bytes is one header-only packet).
    pub fn packets(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.payload()).max(1)
    }

    /// Bytes on the wire of packet `i` of a message of `bytes`: its share of the payload (the
    /// last packet carries the remainder) plus the header.
    pub fn wire(&self, bytes: u64, i: u64) -> u64 {
        let p = self.payload();
        let body = bytes.saturating_sub(i * p).min(p);
        body + self.header
    }

    /// The parameters of a declared `packet` model (checked by sema: defaults filled in, values
    /// in range); None for other kinds.
    pub fn from_model(m: &CostModel) -> Option<PacketParams> {
        if m.kind != CostModelKind::Packet {
            return None;
        }
        let d = PacketParams::default();
        let q = |n: &str| match m.params.get(n) {
            Some(ModelParam::Quantity(q)) => Some(q.value.clone()),
            _ => None,
        };
        let word = |n: &str| match m.params.get(n) {
            Some(ModelParam::Word(w)) => Some(w.as_str()),
            _ => None,
        };
        let bytes = |n: &str, dflt: u64| q(n).and_then(|v| v.to_integer().to_u64()).unwrap_or(dflt);
        let time = |n: &str, dflt: u64| q(n).map(|v| ps(&v)).unwrap_or(dflt);
        let background = match q("background_hosts").and_then(|c| c.to_integer().to_u64()) {
            Some(c) if c > 0 => Background::Hosts(c),
            _ => Background::Fraction(q("background").and_then(|v| v.to_f64()).unwrap_or(0.0)),
        };
        Some(PacketParams {
            mtu: bytes("mtu", d.mtu),
            header: bytes("header", d.header),
            queue: bytes("queue", d.queue),
            switch_delay: time("switch_delay", d.switch_delay),
            aggregation_delay: time("aggregation_delay", d.aggregation_delay),
            overhead: time("overhead", d.overhead),
            gamma: q("gamma")
                .map(|g| g * BigRational::from_integer(BigInt::from(1_000_000_000_000u64)))
                .unwrap_or(d.gamma),
            routing: match word("routing") {
                Some("ecmp") => Routing::Ecmp,
                Some("minimal") => Routing::Minimal,
                _ => Routing::Adaptive,
            },
            random_placement: word("placement") == Some("random"),
            background,
            background_size: bytes("background_size", d.background_size).max(1),
            background_to_all: word("background_peers") == Some("all"),
            loss: q("loss").and_then(|v| v.to_f64()).unwrap_or(0.0),
            concurrent: q("concurrent")
                .and_then(|v| v.to_integer().to_u32())
                .unwrap_or(1)
                .max(1),
            noise: q("noise").and_then(|v| v.to_f64()).unwrap_or(0.0),
            noise_delay: time("noise_delay", d.noise_delay),
            failure: None,
            max_events: 0,
            max_packets: 0,
            declared: Some(m.name.clone()),
        })
    }

    /// Host reduction time of `bytes`, in picoseconds (rounded up).
    pub fn reduce_ps(&self, bytes: u64) -> u64 {
        let t = &self.gamma * BigRational::from_integer(BigInt::from(bytes));
        t.ceil().to_integer().to_u64().unwrap_or(u64::MAX)
    }

    fn peers(&self) -> &'static str {
        if self.background_to_all {
            "any compute node"
        } else {
            "each other"
        }
    }

    /// One line naming the model and every parameter, for a report's header.
    pub fn describe(&self) -> String {
        let from = match &self.declared {
            Some(n) => format!("model `{n}`"),
            None => "defaults: no `packet` model declared".to_string(),
        };
        let ns = |p: u64| crate::sim::TimeUnit::PS.show(p);
        let bg = match self.background {
            Background::Fraction(0.0) => "none".to_string(),
            Background::Fraction(f) => format!(
                "{}% of the other hosts, {} B messages to {}",
                f * 100.0,
                self.background_size,
                self.peers()
            ),
            Background::Hosts(h) => format!(
                "{h} other hosts, {} B messages to {}",
                self.background_size,
                self.peers()
            ),
        };
        format!(
            "mtu {} B ({} B payload + {} B header), queue {} B per port, switch delay {} ns, aggregation delay {} ns, host overhead {} ns, gamma {} ps/B, routing {}, placement {}, background {bg}{}{}{} ({from})",
            self.mtu,
            self.payload(),
            self.header,
            self.queue,
            ns(self.switch_delay),
            ns(self.aggregation_delay),
            ns(self.overhead),
            crate::sema::units::fmt_rational(&self.gamma),
            self.routing.name(),
            if self.random_placement {
                "random"
            } else {
                "declared"
            },
            if self.loss > 0.0 {
                format!(", Canary packet loss {}% per link", self.loss * 100.0)
            } else {
                String::new()
            },
            if self.concurrent > 1 {
                format!(", {} concurrent instances", self.concurrent)
            } else {
                String::new()
            },
            if self.noise > 0.0 {
                format!(
                    ", host noise: {}% of packets delayed {} ns",
                    self.noise * 100.0,
                    ns(self.noise_delay)
                )
            } else {
                String::new()
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::PacketParams;

    #[test]
    fn packets_carry_the_payload_and_a_header_each() {
        let p = PacketParams::default();
        assert_eq!(p.payload(), 1024);
        assert_eq!((p.packets(0), p.wire(0, 0)), (1, 57));
        assert_eq!(p.packets(1024), 1);
        assert_eq!(p.packets(1025), 2);
        assert_eq!((p.wire(1025, 0), p.wire(1025, 1)), (1081, 58));
        let total: u64 = (0..p.packets(10_000)).map(|i| p.wire(10_000, i)).sum();
        assert_eq!(total, 10_000 + 10 * 57);
    }
}
