//! `schedule canary { ... }`: the parameters of Canary (../shared/seeds/canary.txt), their
//! defaults from the paper, and the diagnostics for values that cannot work. The result is a
//! [`CanaryParams`] with every default filled in; nothing downstream re-reads the properties.
//!
//! Defaults: `timeout` 1 us and `leader_delay` 1 us (Section 3.2.2's t and r), `table_size`
//! 32768 (the Tofino prototype's 32K descriptors, Section 5.1), `elements_per_packet` 256 (the
//! large simulations, Section 5.1) halved until a packet fits the MTU, `shards` the fewest that
//! divide the largest switch's ports into shards of at most 16 ports (4 for the paper's 64
//! ports, Section 4.2), `leader` and `root` round robin over blocks (Sections 3.1.3, 3.1.4),
//! `retransmit` `auto` (2 RTT, Section 6), `retries` 3, `recovery` `auto` (Section 3.3's, or
//! where packets are lost on many ranks `contributors`, collc's departure,
//! [`crate::sema::model::Recovery`]).
//!
//! Invariants checked here: the payload (elements x wire bytes) plus the 19-byte header of
//! Section 4.1 fits the MTU (1500 B, or every declared packet model's `mtu` minus its `header`,
//! which already counts the 19 B); `shards` divides the port count; float data declares
//! `fixed_point` (Section 6: switches have no floating point) with room for the sum of every
//! rank's value in 32 bits; integer data does not; the timeout and retransmission timeout are
//! positive and a retransmission timeout exceeds the switch timeout; every time is at most
//! [`MAX_TIME_S`] and `retries` at most [`MAX_RETRIES`].

use crate::diag::{Code, Diagnostic, Span};
use crate::sema::elab::Elab;
use crate::sema::model::{
    AutoOr, CanaryParams, CanaryRoots, Collective, CostModel, CostModelKind, Dtype, Family,
    LeaderPolicy, ModelParam, NodeKind, Recovery, Topology,
};
use crate::sema::units::Dim;
use crate::syntax::ast::{ExprKind, Prop};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive, Zero};
use std::collections::BTreeMap;

/// The Ethernet MTU a packet must fit when no packet model is declared (Section 6:
/// "Fragmentation": a Canary packet, header included, is no larger than the MTU).
pub const DEFAULT_MTU: u64 = 1500;
/// Ports per multicast shard the default `shards` aims for: 2^16 groups per shard.
const SHARD_PORTS: u64 = 16;
const DEFAULT_ELEMENTS: u64 = 256;
const DEFAULT_TABLE: u64 = 32_768;
const DEFAULT_RETRIES: u64 = 3;
/// The longest `timeout`, `leader_delay` and `retransmit`: a second, a million times the
/// paper's microsecond. Longer times only stretch simulated time (and overflow the packet
/// simulator's picosecond clock once multiplied out); nothing Canary does needs them.
pub const MAX_TIME_S: i64 = 1;
/// The most `retries`: every generation of a block takes a block id, and ids number blocks
/// x generations (`retries + 2`) in the header's 20-bit sequence, so one block allows
/// 2^20 - 3 retries.
pub const MAX_RETRIES: u64 = (1 << crate::canary::host::SEQ_BITS) - 3;

fn micros(n: i64) -> BigRational {
    BigRational::new(BigInt::from(n), BigInt::from(1_000_000))
}

/// Ports of the topology's largest switch: each link end (and parallel copy) is a port.
pub fn max_switch_ports(t: &Topology) -> u64 {
    let mut ports = vec![0u64; t.nodes.len()];
    for l in &t.links {
        for end in [l.from, l.to] {
            if let Some(p) = ports.get_mut(end) {
                *p += u64::from(l.parallel.max(1));
            }
        }
    }
    t.nodes
        .iter()
        .zip(ports)
        .filter(|(n, _)| n.kind == NodeKind::Switch)
        .map(|(_, p)| p)
        .max()
        .unwrap_or(0)
}

/// The fewest shards that divide `ports` into shards of at most 16 ports.
pub fn default_shards(ports: u64) -> u64 {
    (1..=ports.max(1))
        .find(|s| ports % s == 0 && ports / s <= SHARD_PORTS)
        .unwrap_or(1)
}

/// The largest payload (data bytes) a packet may carry, and what limits it: 1500 B minus the
/// header, or the smallest `mtu - header` over the declared packet models.
fn payload_limit(models: &[CostModel]) -> (u64, String, Option<Span>) {
    let bytes = |m: &CostModel, k: &str, d: u64| match m.params.get(k) {
        Some(ModelParam::Quantity(q)) => q.value.to_integer().to_u64().unwrap_or(d),
        _ => d,
    };
    let mut best = (
        DEFAULT_MTU - CanaryParams::HEADER,
        format!(
            "the {DEFAULT_MTU}-byte Ethernet MTU less the {}-byte Canary header",
            CanaryParams::HEADER
        ),
        None,
    );
    for m in models.iter().filter(|m| m.kind == CostModelKind::Packet) {
        let (mtu, header) = (bytes(m, "mtu", 1081), bytes(m, "header", 57));
        let limit = mtu.saturating_sub(header);
        if limit < best.0 || best.2.is_none() {
            best = (
                limit,
                format!(
                    "packet model `{}`: mtu {mtu} B less its {header}-byte header (Canary's 19 B with Ethernet framing)",
                    m.name
                ),
                Some(m.span),
            );
        }
    }
    best
}

/// `schedule canary { }`'s parameters for collective `c` on `topo` under `models`, all
/// defaults; float data travels as fixed point with as many fractional bits as `c`'s ranks
/// leave (31 - ceil(log2 N)), the most precise choice that cannot overflow. For `collc compare`,
/// which weighs Canary beside the other families.
pub fn default_params(topo: &Topology, c: &Collective, models: &[CostModel]) -> CanaryParams {
    let ports = max_switch_ports(topo);
    let float = !matches!(c.dtype, Dtype::I32 | Dtype::I64);
    let n = (c.ranks.len() as u64).max(1);
    let growth = u64::from(n.next_power_of_two().trailing_zeros());
    let wire_bytes = if float { 4 } else { c.dtype.bytes() };
    let (limit, _, _) = payload_limit(models);
    let mut elements_per_packet = DEFAULT_ELEMENTS;
    while elements_per_packet > 1 && elements_per_packet * wire_bytes > limit {
        elements_per_packet /= 2;
    }
    CanaryParams {
        timeout: micros(1),
        table_size: DEFAULT_TABLE,
        elements_per_packet,
        shards: default_shards(ports),
        ports,
        leader: LeaderPolicy::RoundRobin,
        roots: CanaryRoots::Leader,
        retransmit: AutoOr::Auto,
        retries: DEFAULT_RETRIES,
        recovery: Recovery::Auto,
        leader_delay: micros(1),
        fixed_point: float.then(|| 31u64.saturating_sub(growth) as u32),
        wire_bytes,
    }
}

impl Elab<'_> {
    /// A time property: `dflt` when absent; zero refused unless `zero_ok`.
    fn canary_time(
        &mut self,
        p: &BTreeMap<&str, &Prop>,
        key: &str,
        dflt: BigRational,
        zero_ok: bool,
    ) -> Option<BigRational> {
        let Some(x) = p.get(key) else {
            return Some(dflt);
        };
        let v = self.eval_quantity(&x.value, Dim::TIME, key)?;
        if v > BigRational::from_integer(BigInt::from(MAX_TIME_S)) {
            self.err(
                Diagnostic::error(
                    Code::BadValue,
                    x.value.span,
                    format!("the {key} is longer than {MAX_TIME_S} s, the most collc accepts"),
                )
                .label("too long")
                .help(format!("Canary's timers run in microseconds (the paper's timeout is 1 us); give at most `{key}: {MAX_TIME_S} s;`")),
            );
            return None;
        }
        if v.is_negative() || (!zero_ok && v.is_zero()) {
            let bound = if zero_ok { "negative" } else { "not positive" };
            self.err(
                Diagnostic::error(
                    Code::NonPositive,
                    x.value.span,
                    format!(
                        "the {key} must be {}",
                        if zero_ok { "0 or more" } else { "positive" }
                    ),
                )
                .label(bound)
                .help(format!("give a time above zero, e.g. `{key}: 1 us;`")),
            );
            return None;
        }
        Some(v)
    }

    /// Elaborates `schedule canary`'s properties `p`; `head` is the schedule's head span.
    pub(super) fn canary(
        &mut self,
        p: &BTreeMap<&str, &Prop>,
        head: Span,
        coll: Option<&Collective>,
        topo: Option<&Topology>,
        models: &[CostModel],
    ) -> Option<Family> {
        let timeout = self.canary_time(p, "timeout", micros(1), false);
        let leader_delay = self.canary_time(p, "leader_delay", micros(1), true);
        let retransmit = match p.get("retransmit") {
            Some(x) if matches!(x.value.kind, ExprKind::Auto) => Some(AutoOr::Auto),
            Some(_) => self
                .canary_time(p, "retransmit", micros(1), false)
                .map(AutoOr::Fixed),
            None => Some(AutoOr::Auto),
        };
        if let (Some(t), Some(AutoOr::Fixed(r)), Some(x)) =
            (&timeout, &retransmit, p.get("retransmit"))
            && r <= t
        {
            self.err(
                Diagnostic::error(
                    Code::BadValue,
                    x.value.span,
                    "the retransmission timeout is not longer than the switch timeout",
                )
                .label("fires before any block can come back")
                .help("a block waits at least one switch timeout on its way up and comes back after a round trip; write `retransmit: auto;` (2 RTT, Section 6) or a longer time"),
            );
        }
        let retries = match p.get("retries") {
            None => Some(DEFAULT_RETRIES),
            Some(x) => {
                let v = self.eval_int(&x.value)?;
                match u64::try_from(v) {
                    Ok(v) if v > MAX_RETRIES => {
                        self.err(
                            Diagnostic::error(Code::BadValue, x.value.span, format!("{v} retries do not fit Canary's block ids (at most {MAX_RETRIES})"))
                                .label("too many retries")
                                .help(format!("each retry re-issues the block under a fresh id, and the header numbers blocks x (retries + 2) generations in 20 bits; give at most `retries: {MAX_RETRIES};` (the default is 3)")),
                        );
                        None
                    }
                    Ok(v) => Some(v),
                    Err(_) => {
                        self.err(
                            Diagnostic::error(Code::NonPositive, x.value.span, format!("`retries` must not be negative, found {v}"))
                                .label("negative")
                                .help("0 falls back to a host-based reduction at the first failed block; e.g. `retries: 3;`"),
                        );
                        None
                    }
                }
            }
        };
        let table_size = match p.get("table_size") {
            None => Some(DEFAULT_TABLE),
            Some(x) => self.positive(&x.value, "`table_size` (descriptors per switch)"),
        };
        let leader = match p.get("leader") {
            None => Some(LeaderPolicy::RoundRobin),
            Some(l) => self.word(l, LeaderPolicy::ALL, "leader policy"),
        };
        let recovery = match p.get("recovery") {
            None => Some(Recovery::Auto),
            Some(r) if matches!(r.value.kind, ExprKind::Auto) => Some(Recovery::Auto),
            Some(r) => match self.word(r, Recovery::ALL, "recovery") {
                Some(Recovery::Contributors)
                    if coll.is_some_and(|c| {
                        c.kind != crate::sema::model::CollectiveKind::Allreduce
                    }) =>
                {
                    self.err(
                        Diagnostic::error(
                            Code::BadValue,
                            r.value.span,
                            format!(
                                "contributor recovery is collc's for allreduce; this collective is {}",
                                coll.map_or("", |c| c.kind.name())
                            ),
                        )
                        .label("contributor recovery")
                        .help("remove `recovery: contributors` (`auto` then recovers as the paper does)"),
                    );
                    None
                }
                x => x,
            },
        };
        let roots = match p.get("root") {
            None => Some(CanaryRoots::Leader),
            Some(r) if matches!(&r.value.kind, ExprKind::Name(n) if n == "round_robin") => {
                Some(CanaryRoots::RoundRobin)
            }
            Some(r) if matches!(&r.value.kind, ExprKind::Name(n) if n == "leader") => {
                Some(CanaryRoots::Leader)
            }
            Some(r) => match topo {
                Some(t) => self.root_switches(&r.value, t).map(CanaryRoots::Named),
                None => None,
            },
        };
        let ports = topo.map_or(0, max_switch_ports);
        let shards = match p.get("shards") {
            None => Some(default_shards(ports)),
            Some(x) => {
                let s = self.positive(&x.value, "`shards`")?;
                if ports > 0 && ports % s != 0 {
                    let fits: Vec<String> = (1..=ports)
                        .filter(|d| ports % d == 0)
                        .map(|d| d.to_string())
                        .collect();
                    self.err(
                        Diagnostic::error(
                            Code::BadValue,
                            x.value.span,
                            format!("{s} shards do not divide the {ports} ports of the largest switch"),
                        )
                        .label(format!("{ports} is not a multiple of {s}"))
                        .help(format!(
                            "each shard covers the same number of ports of the children bitmap (Section 4.2); shard counts for {ports} ports: {}",
                            fits.join(", ")
                        )),
                    );
                    return None;
                }
                Some(s)
            }
        };
        // A barrier carries no data and a broadcast reduces none, so no fixed-point conversion.
        let float = coll.is_some_and(|c| {
            !matches!(c.dtype, Dtype::I32 | Dtype::I64)
                && !matches!(
                    c.kind,
                    crate::sema::model::CollectiveKind::Barrier
                        | crate::sema::model::CollectiveKind::Broadcast
                )
        });
        let fixed_point = match (p.get("fixed_point"), coll) {
            (Some(x), Some(c)) if !float => {
                self.err(
                    Diagnostic::error(
                        Code::BadValue,
                        x.value.span,
                        format!(
                            "`fixed_point` applies to float data, but the collective's dtype is {}",
                            c.dtype.name()
                        ),
                    )
                    .label("integer data is reduced as it is")
                    .help("remove `fixed_point`; switches add integers directly"),
                );
                return None;
            }
            (Some(x), c) => {
                let bits = self.eval_int(&x.value)?;
                let n = c.map_or(1, |c| c.ranks.len() as u64).max(1);
                let growth = u64::from(n.next_power_of_two().trailing_zeros());
                let most = 31u64.saturating_sub(growth);
                if bits < 0 || bits as u64 > most {
                    self.err(
                        Diagnostic::error(Code::BadValue, x.value.span, if bits < 0 {
                            format!("a fixed-point number cannot have {bits} fractional bits")
                        } else {
                            format!("{bits} fractional bits leave no room for the sum of {n} values in 32 bits")
                        })
                            .label(format!("between 0 and {most} for {n} ranks"))
                            .help(format!("a value travels as a 32-bit fixed-point number with this many fractional bits; the sum of {n} values needs {growth} bits of headroom beside the sign, so at most `fixed_point: {most};`")),
                    );
                    return None;
                }
                Some(bits as u32)
            }
            (None, Some(c)) if float => {
                let n = c.ranks.len() as u64;
                let most = 31u64.saturating_sub(u64::from(n.next_power_of_two().trailing_zeros()));
                self.err(
                    Diagnostic::error(Code::BadProperty, head, format!("schedule `canary` on {} data needs `fixed_point`", c.dtype.name()))
                        .label("`fixed_point` is missing")
                        .help(format!("switches have no floating point (Section 6): say how many fractional bits the 32-bit fixed-point values keep, e.g. `fixed_point: 16;` (at most {most} for {n} ranks)")),
                );
                return None;
            }
            (None, _) => None,
        };
        let wire_bytes = match coll {
            Some(c) if !float => c.dtype.bytes(),
            _ => 4,
        };
        let (limit, why, model_span) = payload_limit(models);
        let fit = (limit / wire_bytes).max(1);
        let elements_per_packet = match p.get("elements_per_packet") {
            None => {
                let mut e = DEFAULT_ELEMENTS;
                while e > 1 && e * wire_bytes > limit {
                    e /= 2;
                }
                e
            }
            Some(x) => {
                let e = self.positive(&x.value, "`elements_per_packet`")?;
                let bytes = u128::from(e) * u128::from(wire_bytes);
                if bytes > u128::from(limit) {
                    let mut d = Diagnostic::error(
                        Code::BadValue,
                        x.value.span,
                        format!(
                            "{e} elements of {wire_bytes} B make a {bytes} B payload, over the {limit} B a packet can carry"
                        ),
                    )
                    .label("the packet would exceed the MTU")
                    .note(format!("the limit is {why}"))
                    .help(format!(
                        "at most {fit} elements fit: write `elements_per_packet: {fit};`, or declare a packet model with a larger `mtu`"
                    ));
                    if let Some(s) = model_span {
                        d = d.secondary(s, "this model's mtu");
                    }
                    self.err(d);
                    return None;
                }
                e
            }
        };
        Some(Family::Canary(Box::new(CanaryParams {
            timeout: timeout?,
            table_size: table_size?,
            elements_per_packet,
            shards: shards?,
            ports,
            leader: leader?,
            roots: roots?,
            retransmit: retransmit?,
            retries: retries?,
            recovery: recovery?,
            leader_delay: leader_delay?,
            fixed_point,
            wire_bytes,
        })))
    }
}
