//! A `.coll` file's collective under a packet model, run after run ([`run_file`]): for each seed
//! the collective is placed (its declared hosts, or a random subset under `placement: random`)
//! and the background hosts are drawn ([`super::plan`]); then the schedule is lowered *for the
//! hosts it runs on*, so static in-network trees climb from the switches above those hosts, with
//! their roots redrawn for each run when they are random (the paper: "when using static
//! reduction trees, we also randomly pick the roots of those trees"), proved, and simulated.
//! A schedule that depends on neither is lowered once.

use super::{Job, Network, PacketParams, PacketRun, Setup, Stuck, data_bytes, plan, simulate};
use crate::diag::{Code, Diagnostic, Span};
use crate::sema::model::{Family, Model, NodeId, TreeRoots};
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
    let once = if per_run(m, params) {
        None
    } else {
        Some(crate::lower::lower_and_verify(m)?.0)
    };
    (seed..seed.saturating_add(runs.max(1)))
        .into_par_iter()
        .map(|s| {
            let (hosts, background) = plan(&network, &declared, params, s).map_err(bad_plan)?;
            let own;
            let program = match &once {
                Some(p) => p,
                None => {
                    own = crate::lower::lower_and_verify(&placed(m, &hosts, s))?.0;
                    &own
                }
            };
            let setup = Setup {
                jobs: vec![Job {
                    program,
                    hosts,
                    bytes: data_bytes(program),
                }],
                background,
                seed: s,
                trace,
            };
            simulate(&network.net, &network.switch, params, &setup).map_err(stuck)
        })
        .collect()
}
