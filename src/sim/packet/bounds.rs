//! What bounds a packet-level run before it starts ([`check`]): every step the clock can take
//! (a link's latency, a packet's serialisation, a delay, a Canary timer) is at most
//! [`PARAM_MAX`] picoseconds and the engine refuses events after [`CLOCK_MAX`], so no sum of
//! times overflows (E0047); a run whose packets alone need more events than `--max-events`
//! allows is refused at once (E0046) rather than after it has run to the limit; and every
//! message has fewer than 2^32 packets (E0047).

use super::port::Port;
use super::{PacketParams, Setup, Stuck, StuckKind};
use crate::ir::OpKind;

/// The longest time one step may add to the clock (a link's latency or serialisation of a
/// packet, a delay, a Canary timer), in picoseconds: about 75 minutes.
pub const PARAM_MAX: u64 = 1 << 52;
/// The latest simulated time, in picoseconds (about 53 days). An event is at most a few
/// [`PARAM_MAX`] steps after the current time, so no sum of times can overflow.
pub const CLOCK_MAX: u64 = 1 << 62;

/// Why `setup` on `ports` under `params` could take a step beyond [`PARAM_MAX`], if it could.
fn beyond_clock(ports: &[Port], params: &PacketParams, setup: &Setup) -> Option<String> {
    let mtu = u128::from(params.mtu.max(params.header));
    for p in ports {
        let ser = mtu.saturating_mul(p.a).div_ceil(p.b.max(1));
        if u128::from(p.lat) > u128::from(PARAM_MAX) || ser > u128::from(PARAM_MAX) {
            return Some(format!(
                "a link's latency ({} ps) or the time to send one {mtu}-byte packet over it ({ser} ps) is beyond the simulator's step of {PARAM_MAX} ps (about 75 minutes)",
                p.lat
            ));
        }
    }
    let mut times = vec![
        ("switch_delay", params.switch_delay),
        ("aggregation_delay", params.aggregation_delay),
        ("overhead", params.overhead),
        ("noise_delay", params.noise_delay),
    ];
    for c in &setup.canary {
        times.extend([
            ("timeout", c.timeout),
            ("leader_delay", c.leader_delay),
            ("retransmit", c.retransmit),
            ("the descriptors' reclaim age", c.reclaim),
        ]);
    }
    times
        .into_iter()
        .find(|&(_, t)| t > PARAM_MAX)
        .map(|(what, t)| {
            format!(
                "{what} is {t} ps, beyond the simulator's step of {PARAM_MAX} ps (about 75 minutes)"
            )
        })
}

/// Err when `setup` cannot run within the clock, `params.max_events` or the packet counter.
pub(super) fn check(ports: &[Port], params: &PacketParams, setup: &Setup) -> Result<(), Stuck> {
    let stop = |why: String, kind: StuckKind| Stuck {
        job: 0,
        ops_left: 0,
        why,
        kind,
    };
    if let Some(why) = beyond_clock(ports, params, setup) {
        return Err(stop(why, StuckKind::Clock));
    }
    let mut packets: u64 = 0;
    let mut largest: u64 = 0;
    for job in &setup.jobs {
        for proc in &job.program.procs {
            for op in &proc.ops {
                if let OpKind::Send { src, .. } = op.kind {
                    let bytes = job.program.slice_bytes(src);
                    largest = largest.max(bytes);
                    packets = packets.saturating_add(params.packets(bytes));
                }
            }
        }
    }
    for c in &setup.canary {
        packets = packets
            .saturating_add(u64::from(c.plan.blocks).saturating_mul(c.plan.hosts.len() as u64));
    }
    if !setup.background.is_empty() {
        largest = largest.max(params.background_size);
    }
    // Each packet leaves a port (one event) and arrives (another) at least once.
    let least = packets.saturating_mul(2);
    if params.max_events > 0 && least > params.max_events {
        return Err(stop(
            format!(
                "the run needs at least {least} events ({packets} packets, each sent and received), more than the limit of {} events",
                params.max_events
            ),
            StuckKind::Limit("--max-events", params.max_events, least),
        ));
    }
    if params.packets(largest) > u64::from(u32::MAX) {
        return Err(stop(
            format!(
                "a message of {largest} B is {} packets, more than the simulator counts (2^32 - 1)",
                params.packets(largest)
            ),
            StuckKind::Clock,
        ));
    }
    Ok(())
}
