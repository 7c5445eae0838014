//! One (family, size) pair of a file simulated on its topology under the flow-level model: the
//! file's model with the schedule and the collective's size swapped in, lowered and run by
//! [`crate::sim::fluid`] (host families) or tree by tree (forests); or under a packet model
//! ([`evaluate_packet`]), any family the packet simulator runs, in-network ones included.

use crate::diag::Diagnostic;
use crate::forest::chunking::TreeTime;
use crate::lower::kept::Kept;
use crate::net::{FlowParams, Net};
use crate::sema::model::{AutoOr, Collective, Family, Model, Schedule, Topology};
use crate::sim::fluid::FlowRun;
use crate::sim::fluid::forest::ForestPaths;
use num_rational::BigRational;
use num_traits::ToPrimitive;
use std::sync::Arc;

/// `m` with `family` as its schedule and a collective of `bytes` bytes (at least one element).
pub fn with_family_and_size(m: &Model, family: &Family, bytes: u64) -> Model {
    let mut out = m.clone();
    if let Some(c) = out.collective.as_mut() {
        c.count = (bytes / c.dtype.bytes()).max(1);
    }
    let span = m
        .schedule
        .as_ref()
        .map(|s| s.span)
        .or(m.collective.as_ref().map(|c| c.span))
        .unwrap_or_default();
    out.schedule = Some(Schedule {
        family: family.clone(),
        span,
        props: Vec::new(),
    });
    out
}

/// Simulates `family` on the file's topology and collective resized to `bytes`, under the flow
/// parameters `params`: what every figure of `collc compare` and `schedule auto` comes from.
///
/// Under a GPU runtime's costs ([`crate::net::gpu`]) the run is made once per protocol the
/// runtime weighs for its own algorithms ([`Family::is_runtime_own`]; the one `params` names,
/// if any), each with the protocol's step latencies and its bytes on the wire, and the fastest
/// is kept, its finish times after the runtime's launch latency (the runtime's tuner picks a
/// protocol per call the same way). Other schedules run as MSCCL XML, whose protocol is the
/// XML's (the `target msccl` block's `proto`, Simple by default).
pub fn evaluate(
    m: &Model,
    family: &Family,
    bytes: u64,
    params: &FlowParams,
) -> Result<FlowRun, Vec<Diagnostic>> {
    let Some((runtime, proto)) = params.runtime else {
        return evaluate_once(m, family, bytes, params);
    };
    let spans = crate::net::file_spans_boxes(m);
    // `proto: auto`: the runtime's tuner picks for its own algorithms; any other schedule runs
    // as MSCCL XML, under the protocol its XML names (the `target msccl` block's, Simple by
    // default), whatever the size.
    let protos = match proto {
        Some(p) => vec![p],
        None if family.is_runtime_own() => runtime.protocols(spans),
        None => vec![crate::backend::msccl::Options::from_model(m).proto],
    };
    let mut best: Option<FlowRun> = None;
    let mut first_err = None;
    for p in protos {
        let q = runtime.params(p, spans, params);
        let wire = (BigRational::from_integer(bytes.into()) * &q.wire).ceil();
        let wire = wire.to_integer().to_u64().unwrap_or(u64::MAX);
        match evaluate_once(m, family, wire, &q) {
            Ok(mut run) => {
                let launch = q.launch.to_f64().unwrap_or(0.0);
                for f in &mut run.finish {
                    *f += launch;
                }
                if best.as_ref().is_none_or(|b| run.seconds() < b.seconds()) {
                    best = Some(run);
                }
            }
            Err(e) => first_err = first_err.or(Some(e)),
        }
    }
    best.ok_or_else(|| first_err.unwrap_or_default())
}

/// [`evaluate`] under `params` as they are (one protocol, no launch latency).
fn evaluate_once(
    m: &Model,
    family: &Family,
    bytes: u64,
    params: &FlowParams,
) -> Result<FlowRun, Vec<Diagnostic>> {
    let mm = with_family_and_size(m, family, bytes);
    let Some(topo) = mm.topology.as_ref() else {
        return Err(Vec::new());
    };
    // A family whose program would be over the limits is not built (E0046), before a forest
    // is solved for it (at 100,000 ranks that takes minutes) or anything else is lowered.
    crate::lower::check_size(&mm)?;
    if let Family::Forest { k, chunks } = family {
        return forest(&mm, *k, *chunks, params);
    }
    let net = Net::new(topo);
    let low = crate::sim::fluid::lower_sized(&mm, params)?;
    low.simulate(&net, params, false)
}

/// Forests already solved in this process, by [`forest_key`]: a forest does not depend on the
/// collective's size, so a sweep over sizes solves each (topology, ranks, collective, k) once,
/// and `schedule auto` hands the forests it weighed to the lowering ([`solved`]). Kept with
/// [`Kept::put`], not made in the cache: a solve runs rayon work, so a thread asking for a
/// forest another is solving solves it too rather than wait (see `lower::kept`). Within a
/// budget, so that a long-lived process (the language server, a Python session) does not keep
/// every forest it solved.
type Solved = Arc<crate::lower::forest::Solved>;
static FORESTS: Kept<String, Solved> = Kept::new(KEPT_FORESTS);

/// How many solved forests a process keeps ([`FORESTS`]): a sweep uses one per `k`.
const KEPT_FORESTS: usize = 8;

/// How many trees' time models a process keeps ([`TREE_TIMES`]): a sweep uses one per forest.
const KEPT_TREE_TIMES: usize = 8;

/// What a forest depends on: the topology's nodes and links, the ranks, the kind, the root and
/// `k`, written out in full (so two keys are equal only when the forests are).
fn forest_key(topo: &Topology, c: &Collective, k: AutoOr<u64>) -> String {
    format!(
        "{:?}|{:?}|{:?}|{k:?}|{}",
        c.kind,
        c.root,
        c.ranks,
        topo.key()
    )
}

/// The forests this process solved for `m`'s topology and collective with `k` trees per root
/// (by [`evaluate`]), if any: for [`crate::sema::model::Model::solved`].
pub fn solved(m: &Model, k: AutoOr<u64>) -> Option<Solved> {
    let (c, topo) = (m.collective.as_ref()?, m.topology.as_ref()?);
    FORESTS.peek(&forest_key(topo, c, k))
}

/// A forest's flow-level run ([`crate::sim::fluid::run_forest`]) at the chunk count the
/// schedule asks for (`auto`: [`crate::forest::chunking::choose`]).
fn forest(
    m: &Model,
    k: AutoOr<u64>,
    chunks: AutoOr<u64>,
    params: &FlowParams,
) -> Result<FlowRun, Vec<Diagnostic>> {
    let (Some(c), Some(topo)) = (m.collective.as_ref(), m.topology.as_ref()) else {
        return Err(Vec::new());
    };
    let solved_key = forest_key(topo, c, k);
    let forests = match FORESTS.peek(&solved_key) {
        Some(f) => f,
        None => {
            let f = Arc::new(crate::lower::forest::Solved::new(
                m,
                &[c],
                k,
                &crate::progress::Quiet,
            )?);
            FORESTS.put(solved_key.clone(), f.clone(), 1);
            f
        }
    };
    let refs = forests.forests();
    // The trees' time model does not depend on the size: made once per forest and parameters,
    // resized per size (the same figures as `chunking::choose` and `run_forest` make); so are
    // the trees' paths and the fills of their rates.
    let key = format!("{solved_key}|{params:?}");
    let per_root = crate::forest::chunking::per_root(c);
    let (mut trees, paths) = tree_times(&key, || {
        let trees = crate::forest::chunking::trees(topo, params, &per_root, &refs);
        let paths = ForestPaths::new(topo, &Net::new(topo), params, &trees, &refs);
        (trees, paths)
    });
    crate::forest::chunking::resize(&mut trees, &per_root);
    let ch = crate::forest::chunking::choose_in(&trees, c, chunks, &refs);
    Ok(crate::sim::fluid::run_forest_in(
        &paths, &trees, c, &refs, ch.chunks, false,
    ))
}

/// Trees' time models already made in this process, with their paths on the network, by the
/// forest's key and the flow parameters (made once: a thread asking for one another is making
/// waits for it).
type TreeTimes = (Arc<Vec<TreeTime>>, Arc<ForestPaths>);
static TREE_TIMES: Kept<String, TreeTimes> = Kept::new(KEPT_TREE_TIMES);

/// The trees' time model and paths by `key`: kept, else made by `make` and kept.
fn tree_times(
    key: &str,
    make: impl FnOnce() -> (Vec<TreeTime>, ForestPaths),
) -> (Vec<TreeTime>, Arc<ForestPaths>) {
    let (t, p) = TREE_TIMES.made(
        key.to_string(),
        || {
            let (t, p) = make();
            (Arc::new(t), Arc::new(p))
        },
        |_| 1,
    );
    ((*t).clone(), p)
}

/// Simulates `family` on the file's network with the collective resized to `bytes` under the
/// packet model `params`, runs with seeds `seed..seed+runs`: the median time in seconds.
pub fn evaluate_packet(
    m: &Model,
    family: &Family,
    bytes: u64,
    params: &crate::sim::packet::PacketParams,
    seed: u64,
    runs: u64,
) -> Result<f64, Vec<Diagnostic>> {
    let mm = with_family_and_size(m, family, bytes);
    let span = mm.build_span(None);
    let runs = crate::sim::packet::run_file(&mm, span, params, seed, runs, false)?;
    let s = crate::sim::packet::Summary::of(&runs).ok_or_else(Vec::new)?;
    Ok(s.median as f64 * 1e-12)
}
