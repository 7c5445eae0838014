//! Canary's closed forms (../shared/seeds/canary.txt), exact, for `--emit report`:
//!
//! - descriptor memory per switch, b (2d(l + t) + r) (Section 3.2.2, Little's law): b the
//!   bandwidth at which a host injects blocks, d the network diameter in hops, l the per-hop
//!   delay, t the switch timeout and r the leader's aggregation time; 2d(l + t) + r is a
//!   descriptor's lifetime, which is also a block's round trip and so sets `retransmit: auto`
//!   to twice it (Section 6: 2 RTT);
//! - multicast entries 2^(p/s) s for p ports in s shards (Section 4.2);
//! - bytes per packet: the payload plus the 19-byte Canary header and Ethernet framing (14 B
//!   header, 24 B of preamble, FCS and inter-frame gap: 57 B as Section 5.1 counts them, or a
//!   declared packet model's `header`), and the goodput ceiling payload / (payload + overhead) b.
//!
//! [`Network`] says where b, d and l come from in a file: the fastest link of a participating
//! host, the largest hop distance between two participants, and the largest link latency plus a
//! packet model's `switch_delay`.

use crate::sema::model::{
    AutoOr, CanaryParams, Collective, CostModel, CostModelKind, Model, ModelParam, NodeId,
    TargetKind, Topology,
};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};
use std::collections::{BTreeMap, VecDeque};

/// Ethernet header and framing (preamble and start delimiter 8 B, FCS 4 B, inter-frame gap
/// 12 B) that Section 5.1 counts beside the Canary header.
pub const ETHERNET: u64 = 14 + 24;

/// Ports per shard up to which the multicast entries are counted exactly.
pub const EXACT_SHARD_PORTS: u64 = 64;

/// Distinct hosts (by their neighbours) up to which the diameter is searched exactly.
const EXACT_SOURCES: usize = 1024;

/// The network figures the closed forms use, in bytes per second, hops and seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    /// b: bytes per second a host injects.
    pub bandwidth: BigRational,
    /// d: hops between the two participants farthest apart.
    pub diameter: u64,
    /// False when `diameter` is an upper bound (too many distinct hosts to search from each).
    pub diameter_exact: bool,
    /// l: per-hop delay, seconds.
    pub hop: BigRational,
    /// Where `hop` comes from, in words.
    pub hop_from: String,
    /// Bytes per packet beside the payload (Canary header and framing).
    pub overhead: u64,
    /// Where `overhead` comes from, in words.
    pub overhead_from: String,
}

/// The closed forms for one set of parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    /// 2d(l + t) + r, seconds.
    pub lifetime: BigRational,
    /// b (2d(l + t) + r), bytes.
    pub memory: BigRational,
    /// Blocks in flight per switch: memory over the bytes of a packet, rounded up.
    pub in_flight: BigInt,
    /// 2^(p/s) s, when p/s is at most [`EXACT_SHARD_PORTS`] (else too large to matter).
    pub multicast: Option<BigInt>,
    /// Payload plus overhead, bytes.
    pub packet: u64,
    /// payload / packet x b, bytes per second.
    pub goodput: BigRational,
    /// The retransmission timeout in force: the declared one or 2 lifetimes.
    pub retransmit: BigRational,
    /// The idle round trip of a unicast between the two farthest hosts and its one-packet
    /// answer, 2dl + r + d(overhead + packet) / b: the lifetime without the switches'
    /// timeouts (no switch waits for other packets), each packet stored and forwarded at
    /// every hop. Seconds.
    pub direct: BigRational,
}

/// The closed forms of Sections 3.2.2, 4.1 and 4.2 for `c` on `net`.
pub fn figures(c: &CanaryParams, net: &Network) -> Figures {
    let two = BigRational::from_integer(2.into());
    let lifetime = &two * BigRational::from_integer(net.diameter.into()) * (&net.hop + &c.timeout)
        + &c.leader_delay;
    let memory = &net.bandwidth * &lifetime;
    let payload = c.payload();
    let packet = payload + net.overhead;
    let in_flight = (&memory / BigRational::from_integer(packet.max(1).into()))
        .ceil()
        .to_integer();
    let per_shard = c.ports / c.shards.max(1);
    let multicast = (per_shard <= EXACT_SHARD_PORTS)
        .then(|| (BigInt::one() << per_shard) * BigInt::from(c.shards));
    let goodput = if packet == 0 {
        BigRational::zero()
    } else {
        &net.bandwidth * BigRational::new(payload.into(), packet.into())
    };
    let retransmit = match &c.retransmit {
        AutoOr::Auto => &two * &lifetime,
        AutoOr::Fixed(t) => t.clone(),
    };
    let d = BigRational::from_integer(net.diameter.into());
    let wire = BigRational::from_integer((net.overhead + packet).into());
    let direct = &two * &d * &net.hop
        + &c.leader_delay
        + if net.bandwidth.is_zero() {
            BigRational::zero()
        } else {
            d * wire / &net.bandwidth
        };
    Figures {
        direct,
        lifetime,
        memory,
        in_flight,
        multicast,
        packet,
        goodput,
        retransmit,
    }
}

/// The packet model the file's figures use: the one `target sim` names, else the first
/// declared.
pub fn packet_model(m: &Model) -> Option<&CostModel> {
    let named = m
        .targets
        .iter()
        .find(|t| t.kind == TargetKind::Sim)
        .and_then(|t| match t.options.get("model") {
            Some(ModelParam::Word(w)) => Some(w.as_str()),
            _ => None,
        });
    let packets = || m.models.iter().filter(|x| x.kind == CostModelKind::Packet);
    packets()
        .find(|x| Some(x.name.as_str()) == named)
        .or_else(|| packets().next())
}

fn quantity(m: &CostModel, key: &str) -> Option<BigRational> {
    match m.params.get(key) {
        Some(ModelParam::Quantity(q)) => Some(q.value.clone()),
        _ => None,
    }
}

/// The hosts' retransmission timeout of `cp` on `m`'s network (Section 3.3; `auto` is 2 RTT),
/// seconds; None without a topology, a collective or participants.
pub fn retransmit(m: &Model, cp: &CanaryParams) -> Option<BigRational> {
    figures_on(m, cp).map(|(f, _)| f.retransmit)
}

/// The closed forms of `cp` on `m`'s network, and its diameter d (hops); None as for
/// [`retransmit`].
pub fn figures_on(m: &Model, cp: &CanaryParams) -> Option<(Figures, u64)> {
    let (t, c) = (m.topology.as_ref()?, m.collective.as_ref()?);
    network(m, t, c).map(|net| (figures(cp, &net), net.diameter))
}

/// A switch's reclaim age for descriptors, in the unit of `retransmit`: `retries + 2`
/// retransmission timeouts, by when every generation of a block has failed or completed.
pub fn reclaim_after(retransmit: u64, cp: &CanaryParams) -> u64 {
    retransmit.saturating_mul(cp.retries + 2)
}

/// b, d and l for the file's collective on its topology (None without participants).
pub fn network(m: &Model, t: &Topology, c: &Collective) -> Option<Network> {
    let hosts: Vec<NodeId> = c.ranks.clone();
    let bandwidth = t
        .links
        .iter()
        .filter(|l| hosts.contains(&l.from) || hosts.contains(&l.to))
        .map(|l| l.bandwidth.clone())
        .max()?;
    let (diameter, diameter_exact) = diameter(t, &hosts);
    let latency = t
        .links
        .iter()
        .map(|l| l.latency.clone())
        .max()
        .unwrap_or_else(BigRational::zero);
    let pm = packet_model(m);
    let (hop, hop_from) = match pm {
        Some(pm) => {
            let sd = quantity(pm, "switch_delay")
                .unwrap_or_else(|| BigRational::new(1.into(), 10_000_000.into()));
            let what = format!(
                "the largest link latency ({}) plus packet model `{}`'s switch_delay ({})",
                crate::sema::units::Quantity {
                    value: latency.clone(),
                    dim: crate::sema::units::Dim::TIME
                },
                pm.name,
                crate::sema::units::Quantity {
                    value: sd.clone(),
                    dim: crate::sema::units::Dim::TIME
                }
            );
            (&latency + sd, what)
        }
        None => (
            latency,
            "the largest link latency (no packet model declared: switches add nothing)".into(),
        ),
    };
    let (overhead, overhead_from) = match pm {
        Some(pm) => {
            let h = quantity(pm, "header")
                .and_then(|h| h.to_integer().to_u64())
                .unwrap_or(CanaryParams::HEADER + ETHERNET);
            (h, format!("packet model `{}`'s header", pm.name))
        }
        None => (
            CanaryParams::HEADER + ETHERNET,
            format!(
                "{} B Canary header + 14 B Ethernet header + 24 B preamble, FCS and inter-frame gap (Section 5.1)",
                CanaryParams::HEADER
            ),
        ),
    };
    Some(Network {
        bandwidth,
        diameter,
        diameter_exact,
        hop,
        hop_from,
        overhead,
        overhead_from,
    })
}

/// The largest hop distance between two of `hosts`, and whether it is exact. Hosts with the
/// same neighbours have the same distances to every other host, so one breadth-first search
/// serves each such group; beyond 1,024 groups it is twice the first host's largest distance
/// (an upper bound, by the triangle inequality), so a huge network does not grind.
pub fn diameter(t: &Topology, hosts: &[NodeId]) -> (u64, bool) {
    let mut adj: Vec<Vec<NodeId>> = vec![Vec::new(); t.nodes.len()];
    for l in &t.links {
        if l.from < adj.len() && l.to < adj.len() {
            adj[l.from].push(l.to);
            adj[l.to].push(l.from);
        }
    }
    for a in &mut adj {
        a.sort_unstable();
        a.dedup();
    }
    let mut groups: BTreeMap<&[NodeId], NodeId> = BTreeMap::new();
    for &h in hosts {
        if let Some(a) = adj.get(h) {
            groups.entry(a.as_slice()).or_insert(h);
        }
    }
    let exact = groups.len() <= EXACT_SOURCES;
    let mut best = 0u64;
    for &src in groups.values().take(if exact { usize::MAX } else { 1 }) {
        let mut dist = vec![u64::MAX; adj.len()];
        dist[src] = 0;
        let mut q = VecDeque::from([src]);
        while let Some(u) = q.pop_front() {
            for &v in &adj[u] {
                if dist[v] == u64::MAX {
                    dist[v] = dist[u] + 1;
                    q.push_back(v);
                }
            }
        }
        for &h in hosts {
            if dist[h] != u64::MAX {
                best = best.max(dist[h]);
            }
        }
    }
    if exact {
        (best, true)
    } else {
        (2 * best, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sema::model::{CanaryRoots, LeaderPolicy};

    fn ns(n: i64) -> BigRational {
        BigRational::new(n.into(), 1_000_000_000.into())
    }

    fn paper() -> (CanaryParams, Network) {
        let c = CanaryParams {
            timeout: ns(1000),
            table_size: 32768,
            elements_per_packet: 256,
            shards: 4,
            ports: 64,
            leader: LeaderPolicy::RoundRobin,
            roots: CanaryRoots::RoundRobin,
            retransmit: AutoOr::Auto,
            retries: 3,
            recovery: crate::sema::model::Recovery::Paper,
            leader_delay: ns(1000),
            fixed_point: None,
            wire_bytes: 4,
        };
        let net = Network {
            // 100 Gb/s
            bandwidth: BigRational::from_integer(12_500_000_000u64.into()),
            diameter: 5,
            diameter_exact: true,
            hop: ns(300),
            hop_from: String::new(),
            overhead: 57,
            overhead_from: String::new(),
        };
        (c, net)
    }

    /// Section 3.2.2: 100 Gb/s, d = 5, l = 300 ns, t = 1 us, r = 1 us: 175,000 B, the paper's
    /// "175KiB" (in kilobytes: 170.9 KiB).
    #[test]
    fn descriptor_memory_of_the_paper() {
        let (c, net) = paper();
        let f = figures(&c, &net);
        assert_eq!(f.lifetime, ns(14_000));
        assert_eq!(f.memory, BigRational::from_integer(175_000.into()));
        assert_eq!(f.retransmit, ns(28_000));
        // 175,000 B in packets of 1024 + 57 B.
        assert_eq!(f.in_flight, BigInt::from(162));
    }

    /// Section 4.2: 64 ports in 4 shards need 2^16 x 4 = 262,144 multicast entries.
    #[test]
    fn multicast_entries_of_the_paper() {
        let (c, net) = paper();
        assert_eq!(figures(&c, &net).multicast, Some(BigInt::from(262_144)));
    }

    /// Section 5.1: 256 four-byte elements behind 57 B make 1081-byte packets; the Tofino's 32
    /// elements make 185-byte ones.
    #[test]
    fn goodput_ceiling() {
        let (mut c, net) = paper();
        let f = figures(&c, &net);
        assert_eq!(f.packet, 1081);
        assert_eq!(
            f.goodput,
            BigRational::new(BigInt::from(12_500_000_000u64 * 1024), BigInt::from(1081))
        );
        c.elements_per_packet = 32;
        let f = figures(&c, &net);
        assert_eq!(f.packet, 185);
    }
}
