//! What the P4 target checks before it emits anything ([`check`], E0050): the [`Limits`] of a
//! switch profile (lanes, descriptors, ports, frame size), 32-bit data, the collective and
//! family, and the file names switches get; and the report's lines on what the target costs
//! ([`report`]: clock packets, multicast groups).

use super::canary;
use super::fabric::{Fabric, Shards};
use super::file_name;
use crate::diag::{Code, Diagnostic, Span};
use crate::sema::model::{CanaryParams, CollectiveKind, Family, Model};

/// What a P4 architecture's switches can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub name: &'static str,
    /// 32-bit elements a switch aggregates per packet.
    pub lanes: u64,
    /// Descriptors (register cells per array).
    pub descriptors: u64,
    /// Multicast group ids (v1model's `mcast_grp` is 16 bits, 0 meaning none).
    pub groups: u64,
    /// Ports per switch besides its clock port.
    pub ports: u64,
    /// Largest frame, bytes.
    pub frame: u64,
}

/// BMv2 `simple_switch`: groups as v1model numbers them, 64 ports as the descriptor's children
/// bitmap holds them, frames up to a veth's 9000-byte MTU; lanes and descriptors are memory and
/// speed, bounded where a software switch still answers in time.
pub const BMV2: Limits = Limits {
    name: "bmv2",
    lanes: 256,
    descriptors: 65_536,
    groups: 65_535,
    ports: 64,
    frame: 9_000,
};

/// A Tofino as the paper's prototype (Section 5.1): 32 four-byte elements per packet, 32K
/// descriptors, 32 ports.
pub const TOFINO: Limits = Limits {
    name: "tofino",
    lanes: 32,
    descriptors: 32_768,
    groups: 65_535,
    ports: 32,
    frame: 1_518,
};

/// The Ethernet header in front of the Canary header.
pub const ETHERNET: u64 = 14;

/// Why the P4 target cannot take a schedule (E0050).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct P4Error {
    pub message: String,
    pub label: String,
    pub help: String,
    /// The schedule property at fault, if one is.
    pub prop: Option<&'static str>,
}

impl P4Error {
    pub fn diagnostic(&self, span: Span) -> Diagnostic {
        Diagnostic::error(Code::P4Limit, span, self.message.clone())
            .label(self.label.clone())
            .help(self.help.clone())
    }
}

/// The target's options, read from the `target p4` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct P4Options {
    pub limits: Limits,
    /// Microseconds between two clock packets into a switch.
    pub clock_period_us: u64,
    /// The hosts' retransmission timeout on this target, microseconds (None: the schedule's).
    pub retransmit_us: Option<u64>,
    /// The host program's package name ([`project::package`]).
    pub package: String,
}

impl Default for P4Options {
    fn default() -> P4Options {
        P4Options {
            limits: BMV2,
            clock_period_us: 10,
            retransmit_us: None,
            package: super::project::package("collc-p4"),
        }
    }
}

pub(super) fn err(message: String, label: &str, help: String) -> P4Error {
    P4Error {
        message,
        label: label.into(),
        help,
        prop: None,
    }
}

impl P4Error {
    fn at(mut self, prop: &'static str) -> P4Error {
        self.prop = Some(prop);
        self
    }
}

/// The report's lines about building `m`'s Canary schedule for P4 switches under `o`: whether
/// it fits, what the clock packets that stand in for timers cost, and the multicast groups.
pub fn report(m: &Model, o: &P4Options) -> Vec<String> {
    let (Some(s), Some(topo)) = (&m.schedule, &m.topology) else {
        return Vec::new();
    };
    let Family::Canary(cp) = &s.family else {
        return Vec::new();
    };
    let fabric = Fabric::new(topo);
    let problems = check(m, o);
    let fits = if problems.is_empty() {
        format!("fits the `{}` limits", o.limits.name)
    } else {
        format!(
            "does not fit the `{}` limits (E0050): {}",
            o.limits.name,
            problems
                .iter()
                .map(|p| p.message.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        )
    };
    let period = o.clock_period_us.max(1);
    let rate = 1_000_000 / period;
    let groups = Shards::multicast(fabric.max_ports(), canary::GROUP_WIDTH)
        .switch_groups(fabric.max_ports())
        .len();
    vec![
        format!("P4 target (v1model): {fits}"),
        format!(
            "  timers as clock packets (Section 4.3): one every {period} us into each switch's clock port, {rate} packets/s of 64 B minimum frames ({} kb/s) per switch, each scanning one descriptor; a timeout fires up to {} slots x {period} us = {} us late",
            rate * 64 * 8 / 1000,
            cp.table_size,
            cp.table_size.saturating_mul(period)
        ),
        format!(
            "  multicast: groups of up to {} ports, {groups} on the largest switch; a children bitmap spanning several groups takes one recirculation per further group",
            canary::GROUP_WIDTH
        ),
    ]
}

/// Problems that need no lowering: the collective, and the schedule against `o.limits`.
pub fn check(m: &Model, o: &P4Options) -> Vec<P4Error> {
    let mut out = Vec::new();
    let (Some(c), Some(s), Some(topo)) = (&m.collective, &m.schedule, &m.topology) else {
        return out;
    };
    if c.kind != CollectiveKind::Allreduce {
        out.push(err(
            format!("the P4 target emits allreduce only, not {}", c.kind.name()),
            "not an allreduce",
            "build the allreduce to `p4`; `collc sim` runs Canary's reduce and barrier".into(),
        ));
    }
    let l = &o.limits;
    let fabric = Fabric::new(topo);
    let ports = u64::from(fabric.max_ports());
    if ports > l.ports {
        out.push(err(
            format!(
                "a switch of the topology has {ports} ports, but a {} switch has {} besides its clock port",
                l.name, l.ports
            ),
            "switch too large",
            "split the switch, or use a target profile with more ports".into(),
        ));
    }
    let mut seen = std::collections::BTreeMap::new();
    for sw in &fabric.switches {
        if let Some(other) = seen.insert(file_name(&sw.name), &sw.name) {
            out.push(err(
                format!(
                    "switches `{other}` and `{}` would both write `switches/{}.*`",
                    sw.name,
                    file_name(&sw.name)
                ),
                "switch names clash as file names",
                "rename one of the switches".into(),
            ));
        }
    }
    if topo.nodes.len() > 65_535 {
        out.push(err(
            format!(
                "{} nodes, but Canary's header addresses switches in 16 bits",
                topo.nodes.len()
            ),
            "too many nodes",
            "use a topology of at most 65,535 nodes".into(),
        ));
    }
    let lanes32 = match &s.family {
        Family::Canary(cp) => cp.wire_bytes == 4,
        _ => c.dtype == crate::sema::model::Dtype::I32,
    };
    if !lanes32 {
        out.push(err(
            format!(
                "{} elements do not travel as the 32-bit integers a switch adds",
                c.dtype.name()
            ),
            "not 32-bit integers on the wire",
            match &s.family {
                Family::Canary(_) => {
                    "use `dtype: i32`, or a float dtype with `fixed_point: BITS` in the schedule"
                        .into()
                }
                _ => "use `dtype: i32` for static trees on the P4 target".into(),
            },
        ));
    }
    match &s.family {
        Family::Canary(cp) => {
            out.extend(check_canary(cp, l, ports));
            out.extend(check_timers(m, o, cp));
            out.extend(check_recovery(cp));
        }
        Family::StaticTrees { trees, .. } if *trees > 255 => out.push(err(
            format!("{trees} trees, but a switch's tree table holds 255"),
            "too many trees",
            "use at most 255 trees".into(),
        )),
        Family::StaticTrees { slots, .. } if *slots > l.descriptors => out.push(
            err(
                format!(
                    "{slots} slots, but a {} switch holds at most {} descriptors",
                    l.name, l.descriptors
                ),
                "slot registers too large",
                format!("set `slots` to a power of two of at most {}", l.descriptors),
            )
            .at("slots"),
        ),
        Family::StaticTrees { .. } => {}
        f => out.push(not_emitted(f)),
    }
    out
}

fn check_canary(cp: &CanaryParams, l: &Limits, ports: u64) -> Vec<P4Error> {
    let mut out = Vec::new();
    if cp.elements_per_packet > l.lanes {
        out.push(
            err(
                format!(
                    "{} elements per packet, but a {} switch aggregates at most {}",
                    cp.elements_per_packet, l.name, l.lanes
                ),
                "too many elements per packet",
                format!("set `elements_per_packet` to {} or fewer", l.lanes),
            )
            .at("elements_per_packet"),
        );
    }
    if cp.table_size > l.descriptors {
        out.push(
            err(
                format!(
                    "a table of {} descriptors, but a {} switch holds at most {}",
                    cp.table_size, l.name, l.descriptors
                ),
                "descriptor table too large",
                format!("set `table_size` to {} or fewer", l.descriptors),
            )
            .at("table_size"),
        );
    }
    let sh = Shards::new(ports as u32, cp.shards as u32);
    if sh.width > 24 || sh.shards > 255 {
        out.push(err(
            format!(
                "{} shards of {} ports do not fit the header's `children` field (8 bits of shard index, 24 of ports)",
                sh.shards, sh.width
            ),
            "shards too wide",
            format!("set `shards` to at least {}", ports.div_ceil(24).max(1)),
        )
        .at("shards"));
    }
    let frame = ETHERNET + CanaryParams::HEADER + cp.elements_per_packet * 4;
    if frame > l.frame {
        out.push(err(
            format!(
                "a packet of {} elements makes a {frame}-byte frame, over the {}-byte frames of {}",
                cp.elements_per_packet, l.frame, l.name
            ),
            "frame too large",
            format!(
                "set `elements_per_packet` to {} or fewer",
                (l.frame - ETHERNET - CanaryParams::HEADER) / 4
            ),
        )
        .at("elements_per_packet"));
    }
    out
}

/// The switch timeout and the reclaim age (`retransmit x (retries + 2)`, microseconds) go
/// into the 48-bit fields of `set_switch`; what does not fit is refused here, before any file
/// is written.
fn check_timers(m: &Model, o: &P4Options, cp: &CanaryParams) -> Vec<P4Error> {
    const MAX: u64 = (1 << 48) - 1;
    let (retransmit, reclaim) = super::timers(m, o, cp);
    let timeout = super::micros(&cp.timeout);
    let mut out = Vec::new();
    if timeout > MAX {
        out.push(
            err(
                format!("a timeout of {timeout} us does not fit the switch's 48-bit timer field"),
                "timeout too long",
                format!("set `timeout` to at most {MAX} us"),
            )
            .at("timeout"),
        );
    }
    if reclaim > MAX {
        out.push(
            err(
                format!(
                    "the reclaim age, retransmit x (retries + 2) = {retransmit} us x {} = {reclaim} us, does not fit the switch's 48-bit timer field",
                    cp.retries.saturating_add(2)
                ),
                "too many retries for this retransmission timeout",
                format!(
                    "set `retries` to at most {}, or a shorter `retransmit`",
                    (MAX / retransmit.max(1)).saturating_sub(2)
                ),
            )
            .at("retries"),
        );
    }
    out
}

/// The P4 program recovers lost contributions as the paper does (Section 3.3): its packets
/// carry no contributor bitmap, so `recovery: contributors` is refused (`auto` is the paper's
/// recovery here).
fn check_recovery(cp: &CanaryParams) -> Vec<P4Error> {
    if cp.recovery != crate::sema::model::Recovery::Contributors {
        return Vec::new();
    }
    vec![
        err(
            "the P4 program recovers lost packets as the Canary paper does; its packets carry no contributor bitmap".into(),
            "contributor recovery is simulated only",
            "remove `recovery: contributors` (or set `recovery: auto`, the paper's recovery on the P4 target), or simulate it with `collc sim`".into(),
        )
        .at("recovery"),
    ]
}

pub(super) fn not_emitted(f: &Family) -> P4Error {
    err(
        format!("the P4 target does not emit `{}` schedules", f.name()),
        "no P4 program for this family",
        "use `schedule canary { ... }` or `schedule static_trees { ... }` for the P4 target".into(),
    )
}
