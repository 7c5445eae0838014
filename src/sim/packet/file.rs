//! A `.coll` file's collective under a packet model, run after run ([`run_file`]): for each seed
//! the collective is placed (its declared hosts, or a random subset under `placement: random`)
//! and the background hosts are drawn ([`super::plan`]); then the schedule is lowered *for the
//! hosts it runs on*, so static in-network trees climb from the switches above those hosts, with
//! their roots redrawn for each run when they are random (the paper: "when using static
//! reduction trees, we also randomly pick the roots of those trees"), proved, and simulated.
//! A schedule that depends on neither is lowered once. A Canary schedule is not lowered: each
//! run places a [`CanaryJob`] (its blocks, leaders and roots) for the hosts it runs on, and the
//! engine executes the protocol ([`super::canary`]). A ring's `slices: auto` becomes slices of
//! a packet's payload here ([`crate::lower::packet_ring_slices`]), and the ring runs through its
//! hosts in the network's order wherever they are placed ([`crate::lower`]'s ring). A
//! static-trees allreduce runs with its `slots` as each host's window of packets in flight.

use super::canary::CanaryJob;
use super::{
    Job, Network, PacketParams, PacketRun, Setup, Stuck, StuckKind, data_bytes, plan, ps_of,
    simulate,
};
use crate::canary::host::{Plan, SEQ_BITS};
use crate::canary::protocol::Protocol;
use crate::diag::{Code, Diagnostic, Span};
use crate::sema::model::{
    AutoOr, CanaryParams, CanaryRoots, CollectiveKind, Family, Model, NodeId, NodeKind, TreeRoots,
};
use rayon::prelude::*;

/// `m` with its collective on `hosts` and, for static trees with random roots, the roots of
/// run `seed`.
fn placed(m: &Model, hosts: &[u32], seed: u64) -> Model {
    let mut out = m.clone();
    if let Some(c) = out.collective.as_mut() {
        c.ranks = hosts.iter().map(|&h| h as NodeId).collect();
    }
    if let Some(s) = out.schedule.as_mut()
        && let Family::StaticTrees {
            roots: TreeRoots::Random { seed: base },
            ..
        } = &mut s.family
    {
        *base = base.wrapping_add(seed);
    }
    out
}

/// The Canary allreduce of `m` (schedule `cp`) on `hosts` for run `seed`, running `protocol`;
/// Err says why it cannot run.
pub fn canary_job<'p>(
    m: &Model,
    params: &PacketParams,
    cp: &CanaryParams,
    hosts: &[u32],
    seed: u64,
    protocol: &'p Protocol,
) -> Result<CanaryJob<'p>, String> {
    let (Some(topo), Some(c)) = (m.topology.as_ref(), m.collective.as_ref()) else {
        return Err("Canary needs a topology and a collective".into());
    };
    // The children bitmap is indexed by a switch's links; sema counted the largest switch's.
    if cp.ports > 128 {
        return Err(format!(
            "a switch has {} ports; the simulated children bitmap holds 128",
            cp.ports
        ));
    }
    // A barrier is a 0-byte allreduce (the paper's Section 6): one block of header-only
    // packets, complete when every host's has been counted.
    let barrier = c.kind == crate::sema::model::CollectiveKind::Barrier;
    let payload = if barrier { 0 } else { cp.payload() };
    let blocks = if barrier {
        1
    } else {
        c.count.div_ceil(cp.elements_per_packet.max(1))
    };
    let faults = params.loss > 0.0 || params.failure.is_some();
    let generations = if faults { cp.retries + 2 } else { 1 };
    if blocks.saturating_mul(generations) >= 1 << SEQ_BITS {
        return Err(format!(
            "{blocks} blocks in {generations} generation(s) do not fit the id's {SEQ_BITS}-bit block sequence (at most {} ids)",
            (1u64 << SEQ_BITS) - 1
        ));
    }
    // The closed forms once: the retransmission timeout, a request's idle round trip, d.
    let figures = crate::cost::canary::figures_on(m, cp);
    let retransmit = figures
        .as_ref()
        .map(|(f, _)| ps_of(&f.retransmit))
        .unwrap_or(0)
        .max(1);
    let (direct_rtt, diameter) = figures
        .as_ref()
        .map(|(f, d)| (ps_of(&f.direct).max(1), *d))
        .unwrap_or((1, 1));
    let ranks: Vec<NodeId> = hosts.iter().map(|&h| h as NodeId).collect();
    let leader_roots = cp.roots == CanaryRoots::Leader;
    let roots: Vec<u32> = match &cp.roots {
        CanaryRoots::Leader => {
            let mut roots = Vec::with_capacity(hosts.len());
            for &h in hosts {
                let up = topo
                    .graph
                    .neighbors(petgraph::graph::NodeIndex::new(h as usize))
                    .map(|n| n.index())
                    .filter(|&n| topo.nodes[n].kind == NodeKind::Switch)
                    .min();
                match up {
                    Some(s) => roots.push(s as u32),
                    None => {
                        return Err(format!(
                            "`{}` is linked to no switch, so it cannot lead blocks",
                            topo.nodes[h as usize].name
                        ));
                    }
                }
            }
            roots
        }
        CanaryRoots::RoundRobin => crate::lower::static_trees::central_switches(topo, &ranks)
            .into_iter()
            .map(|s| s as u32)
            .collect(),
        CanaryRoots::Named(names) => names
            .iter()
            .filter_map(|n| topo.nodes.iter().position(|x| &x.name == n))
            .map(|s| s as u32)
            .collect(),
    };
    if roots.is_empty() {
        return Err("no switch can root the blocks: no participant is linked to a switch in both directions".into());
    }
    Ok(CanaryJob {
        name: format!("{}_canary", c.kind.name()),
        plan: Plan {
            app: 0,
            hosts: hosts.to_vec(),
            blocks: blocks as u32,
            roots,
            leader_roots,
            leader: cp.leader,
            seed,
            reduce_root: if c.kind == crate::sema::model::CollectiveKind::Reduce {
                c.root.map(|r| r as u32)
            } else {
                None
            },
            broadcast_root: if c.kind == crate::sema::model::CollectiveKind::Broadcast {
                Some(c.root.unwrap_or(0) as u32)
            } else {
                None
            },
            // Contributor recovery is for allreduce (sema refuses it declared for the rest).
            contributors: c.kind == crate::sema::model::CollectiveKind::Allreduce
                && cp.recovery.contributors(params.loss, hosts.len() as u32),
        },
        protocol,
        timeout: ps_of(&cp.timeout),
        leader_delay: ps_of(&cp.leader_delay),
        table_size: u32::try_from(cp.table_size).unwrap_or(u32::MAX),
        table_base: 0,
        payload,
        shard: (cp.ports.div_ceil(cp.shards.max(1))).clamp(1, 128) as u32,
        bytes: if barrier {
            0
        } else {
            c.count * c.dtype.bytes()
        },
        faults,
        retransmit,
        direct_rtt,
        diameter,
        adaptive: cp.retransmit == AutoOr::Auto,
        retries: u32::try_from(cp.retries).unwrap_or(u32::MAX),
        recovery_auto: cp.recovery == crate::sema::model::Recovery::Auto,
        reclaim: if faults {
            crate::cost::canary::reclaim_after(retransmit, cp)
        } else {
            0
        },
    })
}

/// `m` with a ring's `slices: auto` resolved for the packet simulator
/// ([`crate::lower::packet_ring_slices`]: slices of at least one packet, at most 4 per step,
/// within the program limits).
fn packet_schedule(m: &Model, params: &PacketParams) -> Model {
    let mut out = m.clone();
    if let (Some(c), Some(s)) = (m.collective.as_ref(), out.schedule.as_mut())
        && let Family::Ring { slices, .. } = &mut s.family
        && *slices == AutoOr::Auto
    {
        *slices = AutoOr::Fixed(crate::lower::packet_ring_slices(
            c,
            params.payload(),
            m.limits.max_ops,
        ));
    }
    out
}

/// The window of a static-trees allreduce: its reserved slots, as many blocks (packets) in
/// flight per host (reduce and broadcast free a slot without a round trip: no window).
fn window(m: &Model) -> u32 {
    match (
        m.schedule.as_ref().map(|s| &s.family),
        m.collective.as_ref().map(|c| c.kind),
    ) {
        (Some(Family::StaticTrees { slots, .. }), Some(CollectiveKind::Allreduce)) => {
            u32::try_from(*slots).unwrap_or(u32::MAX)
        }
        _ => 0,
    }
}

/// Whether each run needs its own lowering.
fn per_run(m: &Model, params: &PacketParams) -> bool {
    params.random_placement
        || m.schedule.as_ref().is_some_and(|s| {
            matches!(
                s.family,
                Family::StaticTrees {
                    roots: TreeRoots::Random { .. },
                    ..
                }
            )
        })
}

/// Runs `m`'s collective with seeds `seed..seed+runs` (in parallel); the runs in seed order.
/// A model that does not fit the network is reported at `model` (the packet model's span).
pub fn run_file(
    m: &Model,
    model: Span,
    params: &PacketParams,
    seed: u64,
    runs: u64,
    trace: bool,
) -> Result<Vec<PacketRun>, Vec<Diagnostic>> {
    run_file_with(m, model, params, seed, runs, trace, &Protocol::paper())
}

/// [`run_file`], a Canary schedule running `protocol` (tests run altered protocols).
pub fn run_file_with(
    m: &Model,
    model: Span,
    params: &PacketParams,
    seed: u64,
    runs: u64,
    trace: bool,
    protocol: &Protocol,
) -> Result<Vec<PacketRun>, Vec<Diagnostic>> {
    let resolved = packet_schedule(m, params);
    let m = &resolved;
    // No run goes on without end: unless the caller set a limit (the exploration does), the
    // file's `--max-events` bounds every run.
    let mut bounded = params.clone();
    if bounded.max_events == 0 {
        bounded.max_events = m.limits.max_events;
    }
    if bounded.max_packets == 0 {
        bounded.max_packets = m.limits.max_packets;
    }
    let params = &bounded;
    let (Some(topo), Some(c)) = (m.topology.as_ref(), m.collective.as_ref()) else {
        return Err(Vec::new());
    };
    let network = Network::new(topo);
    let declared: Vec<u32> = c.ranks.iter().map(|&r| r as u32).collect();
    let span = m.build_span(None);
    let bad_plan = |why: String| {
        vec![
            Diagnostic::error(Code::BadValue, model, why)
                .label("this packet model")
                .help("lower `background_hosts` (or use `background: F;`, a fraction of the hosts outside the collective), or declare fewer participants"),
        ]
    };
    let stuck = |s: Stuck| {
        match s.kind {
            StuckKind::Limit(flag, limit, need) => {
                return vec![limit_reached(span, &s.why, flag, limit.max(need))];
            }
            StuckKind::Clock => {
                return vec![
                    Diagnostic::error(
                        Code::SimTimeOverflow,
                        span,
                        format!("the packet simulation cannot count this run: {}", s.why),
                    )
                    .label("this schedule")
                    .help("use times and sizes of a real network: link latencies, delays and timers of at most about an hour, runs of at most some days, messages of fewer than 2^32 packets"),
                ];
            }
            StuckKind::Stuck => {}
        }
        vec![
            Diagnostic::error(
                Code::IrDeadlock,
                span,
                format!(
                    "the packet simulation cannot finish: {} ({} ops of program {} left)",
                    s.why, s.ops_left, s.job
                ),
            )
            .label("this schedule")
            .help("on a cyclic topology, give ports more buffer (`queue`) or use `routing: minimal`; otherwise this is a bug in collc: please report it with the file"),
        ]
    };
    let canary = match m.schedule.as_ref().map(|s| &s.family) {
        Some(Family::Canary(cp)) => Some(cp.as_ref()),
        _ => None,
    };
    let window = window(m);
    let once = if canary.is_some() || per_run(m, params) {
        None
    } else {
        Some(crate::lower::lower_and_verify(m)?.0)
    };
    (seed..seed.saturating_add(runs.max(1)))
        .into_par_iter()
        .map(|s| {
            let (instances, background) =
                plan(&network, &declared, params, s).map_err(bad_plan)?;
            if let Some(cp) = canary {
                let cant = |why: String| {
                    vec![
                        Diagnostic::error(Code::LowerUnsupported, span, why)
                            .label("this Canary schedule")
                            .help("Canary runs on switches with at most 128 ports, with at most 2^20 - 1 blocks per allreduce, participants linked to switches, and at least one descriptor per concurrent allreduce"),
                    ]
                };
                // Concurrent allreduces split every switch's table statically, as the paper
                // does for its tenants: allreduce i (application id i) hashes into its share.
                let k = instances.len() as u64;
                let share = cp.table_size / k.max(1);
                if share == 0 {
                    return Err(cant(format!(
                        "{k} concurrent allreduces cannot share a table of {} descriptors",
                        cp.table_size
                    )));
                }
                let mut jobs = Vec::with_capacity(instances.len());
                for (i, hosts) in instances.iter().enumerate() {
                    let mut job = canary_job(m, params, cp, hosts, s, protocol).map_err(cant)?;
                    job.plan.app = i as u32;
                    job.table_size = u32::try_from(share).unwrap_or(u32::MAX);
                    job.table_base = u32::try_from(share * i as u64).unwrap_or(u32::MAX);
                    if k > 1 {
                        job.name = format!("{} {i}", job.name);
                    }
                    jobs.push(job);
                }
                let setup = Setup {
                    jobs: Vec::new(),
                    canary: jobs,
                    background,
                    seed: s,
                    trace,
                };
                return simulate(&network.net, &network.switch, params, &setup).map_err(stuck);
            }
            let mut own = Vec::new();
            if once.is_none() {
                for (i, hosts) in instances.iter().enumerate() {
                    // Instance i > 0 draws its random roots from a seed of its own.
                    let roots = s ^ ((i as u64) << 32);
                    own.push(crate::lower::lower_and_verify(&placed(m, hosts, roots))?.0);
                }
            }
            let jobs = instances
                .into_iter()
                .enumerate()
                .map(|(i, hosts)| {
                    let program = once.as_ref().unwrap_or_else(|| &own[i]);
                    Job {
                        program,
                        hosts,
                        bytes: data_bytes(program),
                        window,
                    }
                })
                .collect();
            let setup = Setup {
                jobs,
                canary: Vec::new(),
                background,
                seed: s,
                trace,
            };
            simulate(&network.net, &network.switch, params, &setup).map_err(stuck)
        })
        .collect()
}

/// E0046 for a run that the limit `flag` (`--max-events`, `--max-packets`) at `limit` stopped:
/// `why` says when; the help names the flag and a value that raises the limit.
pub fn limit_reached(span: Span, why: &str, flag: &str, limit: u64) -> Diagnostic {
    let more = limit
        .saturating_add(1)
        .checked_next_power_of_two()
        .unwrap_or(u64::MAX);
    Diagnostic::error(
        Code::ProgramTooLarge,
        span,
        format!("the packet simulation stopped at its limit: {why}"),
    )
    .label("this schedule")
    .note("every packet hop, timer and op is an event, and every packet alive takes memory; a lossy Canary run re-sends blocks until they get through, and a large message is many packets")
    .help(format!(
        "simulate a smaller size, less `loss` or fewer runs; if the run is intended, raise the limit with `{flag} {more}`"
    ))
}
