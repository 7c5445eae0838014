//! Lowering: a checked [`Model`]'s collective and schedule into one [`ir::Program`], one module
//! per family (DESIGN.md, "Pipeline"). [`recursive`] owns recursive doubling and recursive
//! multiplying (../shared/seeds/recursive-multiplying.txt, Algorithms 1-6), [`ring`] the ring
//! schedules, [`tree`] the binomial trees, [`forest`] ForestColl's spanning trees,
//! [`static_trees`] static in-network reduction trees (switch processes). Canary is not
//! lowered yet (E0039). [`lower_and_verify`] also runs `ir::verify`: a lowered program the
//! verifier rejects is a collc bug, reported with the verifier's code at the schedule.
//!
//! `schedule auto` picks per collective: allreduce and barrier use recursive multiplying with
//! `stages: auto`, allgather and reduce-scatter the ring, broadcast and reduce a binomial tree.
//!
//! Every lowering emits ops through [`builder::Builder`], which derives dependencies from buffer
//! hazards, so programs are race-free by construction and ops are emitted in the order of their
//! meaning. Lowerings never scan all ranks per rank: work is linear in the ops emitted.

mod alltoall;
mod builder;
pub mod estimate;
pub mod forest;
pub mod kept;
pub mod nccl_tree;
pub mod recursive;
pub mod reuse;
mod ring;
mod routed;
pub(crate) mod static_trees;
mod tree;

pub use routed::MCF_MAX_CHUNKS;

use crate::diag::{Code, Diagnostic, FileId, Span};
use crate::ir::{self, Program, Spec, verify::Proof};
use crate::progress::{Phase, Progress, Quiet};
use crate::sema::model::{AutoOr, Collective, CollectiveKind, Family, Model, Stage};
use crate::sema::schedule::{StageProblem, stage_problem, supports};
use builder::Builder;

/// The program's spec for `c` with `chunks_per_part` chunks per part.
fn spec(c: &Collective, chunks_per_part: u32) -> Spec {
    Spec {
        kind: c.kind,
        ranks: c.ranks.len() as u32,
        part_elements: part_elements(c),
        chunks_per_part,
        dtype: c.dtype,
        op: c.op,
        root: c.root.map(|r| r as u32),
    }
}

/// Elements of one part of `c`'s buffers (see [`crate::ir`]): an allgather's,
/// reduce-scatter's or all-to-all's block, the whole vector otherwise, none for a barrier.
pub fn part_elements(c: &Collective) -> u64 {
    let n = (c.ranks.len() as u64).max(1);
    match c.kind {
        CollectiveKind::Allgather | CollectiveKind::ReduceScatter | CollectiveKind::Alltoall => {
            c.count / n
        }
        CollectiveKind::Barrier => 0,
        _ => c.count,
    }
}

/// Slices per ring step that `slices` lowers to for `c`: the fixed count for an allreduce (sema
/// keeps other collectives at one), one for `auto` (what [`packet_ring_slices`] resolves in the
/// packet simulator).
pub fn ring_slices(c: &Collective, slices: AutoOr<u64>) -> u32 {
    match (c.kind, slices) {
        (CollectiveKind::Allreduce, AutoOr::Fixed(s)) => u32::try_from(s).unwrap_or(u32::MAX),
        _ => 1,
    }
}

/// What `slices: auto` means in the packet simulator, where a message waits for its last
/// packet: an allreduce step's chunk cut into slices of at least `payload` bytes (one packet),
/// at most [`MAX_AUTO_SLICES`] (4 take the paper's 512-host ring to link rate,
/// docs/figures/canary-fig2.md), and no more than keep the program within `max_ops` (so a
/// ring that lowers at all lowers with `auto`); 1 for other collectives.
pub fn packet_ring_slices(c: &Collective, payload: u64, max_ops: u64) -> u64 {
    if c.kind != CollectiveKind::Allreduce {
        return 1;
    }
    let n = (c.ranks.len() as u64).max(1);
    let per_chunk = (c.count / n).max(1);
    let want = (c.bytes() / n)
        .div_ceil(payload.max(1))
        .clamp(1, MAX_AUTO_SLICES)
        .min(per_chunk);
    (1..=want)
        .rev()
        .find(|&s| {
            let ring = Family::Ring {
                slices: AutoOr::Fixed(s),
                channels: AutoOr::Fixed(1),
            };
            estimate::estimate(c, &ring, &[]).is_some_and(|e| e.ops <= max_ops)
        })
        .unwrap_or(1)
}

/// The most slices `slices: auto` takes in the packet simulator.
pub const MAX_AUTO_SLICES: u64 = 4;

/// The families collc lowers for `kind`, for help lines.
fn lowerable(kind: CollectiveKind) -> &'static str {
    match kind {
        CollectiveKind::Allreduce | CollectiveKind::Barrier => {
            "`recursive_multiplying`, `recursive_doubling` or `ring`"
        }
        CollectiveKind::Allgather | CollectiveKind::ReduceScatter => "`ring`",
        CollectiveKind::Broadcast | CollectiveKind::Reduce => "`binomial`",
        CollectiveKind::Alltoall => "`pairwise`, `bruck` or `hierarchical`",
    }
}

fn stage_list(stages: &[Stage]) -> String {
    let s: Vec<String> = stages.iter().map(|s| s.to_string()).collect();
    format!("[{}]", s.join(", "))
}

/// The stage list `stages: auto` picks for `c` ([`crate::cost::auto_stages`]): the cheapest
/// under [`auto_basis`].
fn auto_stages(model: &Model, c: &Collective, cost_model: Option<&str>) -> Vec<Stage> {
    auto_basis(model, c, cost_model)
        .auto(c.ranks.len() as u64, c.bytes())
        .stages
}

/// The basis `stages: auto` chooses under for `c`: [`crate::cost::derived::basis_for_file`]
/// (a declared latency model, else parameters derived from the topology), with the widest base
/// capped when the cheapest list's program would exceed the model's limits (E0046). On a large
/// network whose parameters favour few wide stages (one all-to-all stage of 2,048 ranks is 12 M
/// ops), the search is repeated with the cap at half the widest base it chose, until the choice
/// fits or the cap would fall below 2; the basis's text says so. What collc chooses is then
/// something it can lower, and only a schedule too large at any base is refused.
pub fn auto_basis(
    model: &Model,
    c: &Collective,
    cost_model: Option<&str>,
) -> crate::cost::report::Basis {
    let mut b = crate::cost::derived::basis_for_file(model, cost_model);
    let family = Family::RecursiveMultiplying {
        stages: AutoOr::Auto,
        model: None,
    };
    let (n, bytes) = (c.ranks.len() as u64, c.bytes());
    let fits = |st: &[Stage]| {
        estimate::estimate(c, &family, st).is_none_or(|e| {
            estimate::check(c, &family, e, &model.limits, Span::new(FileId(0), 0, 0)).is_ok()
        })
    };
    let widest = |st: &[Stage]| st.iter().map(Stage::base).max().unwrap_or(1);
    loop {
        let st = b.auto(n, bytes).stages;
        let w = widest(&st);
        if fits(&st) {
            break;
        }
        let cap = w / 2;
        if cap < 2 {
            break;
        }
        b.max_base = Some(cap);
    }
    if let Some(cap) = b.max_base {
        b.text.push_str(&format!(
            "; stages: auto takes bases of at most {cap}, wider lists lowering to more than the limit of {} ops (--max-ops)",
            estimate::thousands(model.limits.max_ops)
        ));
    }
    b
}

/// The family the model's schedule lowers with: the declared one, and for `schedule auto;` (or no
/// schedule) recursive multiplying with `stages: auto` for allreduce and barrier, ring for
/// allgather and reduce-scatter, a binomial tree for broadcast and reduce.
pub fn family_of(model: &Model, kind: CollectiveKind) -> Family {
    match model.schedule.as_ref().map(|s| &s.family) {
        None | Some(Family::Auto) => match kind {
            CollectiveKind::Allreduce | CollectiveKind::Barrier => Family::RecursiveMultiplying {
                stages: AutoOr::Auto,
                model: None,
            },
            CollectiveKind::Allgather | CollectiveKind::ReduceScatter => Family::ring(),
            CollectiveKind::Broadcast | CollectiveKind::Reduce => Family::Binomial,
            CollectiveKind::Alltoall => Family::Pairwise { concurrent: false },
        },
        Some(f) => f.clone(),
    }
}

/// E0046 when the program the model's schedule lowers to would exceed the model's limits
/// (estimated from the model, [`estimate`]); what [`lower_with`] checks first, for callers that
/// do expensive work of their own (reports, simulations of alternatives) before lowering.
pub fn check_size(model: &Model) -> Result<(), Vec<Diagnostic>> {
    let (Some(c), Some(s)) = (&model.collective, &model.schedule) else {
        return Ok(());
    };
    let family = family_of(model, c.kind);
    let n = c.ranks.len() as u64;
    let stages = match &family {
        Family::RecursiveMultiplying { stages, model: m } => match stages {
            AutoOr::Fixed(st) => st.clone(),
            AutoOr::Auto => auto_stages(model, c, m.as_deref()),
        },
        Family::RecursiveDoubling => crate::cost::doubling_stages(n),
        _ => Vec::new(),
    };
    match estimate::estimate(c, &family, &stages) {
        Some(e) => estimate::check(c, &family, e, &model.limits, s.span).map_err(|d| vec![d]),
        None => Ok(()),
    }
}

/// Lowers the model's collective under its schedule.
pub fn lower(model: &Model) -> Result<Program, Vec<Diagnostic>> {
    lower_with(model, &Quiet).map(|(p, _)| p)
}

/// [`lower`], reporting its phases to `progress` ([`Phase::Lower`], and for a forest
/// [`Phase::Solve`] while ForestColl's solver runs), with the warnings lowering found (E0045: a
/// fixed forest `chunks` far below what `chunks: auto` reaches; solving is what tells, so only
/// lowering can say it).
pub fn lower_with(
    model: &Model,
    progress: &dyn Progress,
) -> Result<(Program, Vec<Diagnostic>), Vec<Diagnostic>> {
    let fallback = model
        .topology
        .as_ref()
        .map(|t| t.span)
        .unwrap_or(Span::new(FileId(0), 0, 0));
    let Some(c) = &model.collective else {
        return Err(vec![
            Diagnostic::error(
                Code::MissingDeclaration,
                fallback,
                "there is nothing to lower: the file declares no collective",
            )
            .label("no collective")
            .help("declare one, e.g. `collective allreduce { size: 1 MiB; dtype: f32; op: sum; }`"),
        ]);
    };
    let span = model.schedule.as_ref().map(|s| s.span).unwrap_or(c.span);
    let unsupported = |msg: String, help: &str| {
        vec![
            Diagnostic::error(Code::LowerUnsupported, span, msg)
                .label("cannot be lowered")
                .help(help.to_string()),
        ]
    };
    if c.ranks.len() > u32::MAX as usize / 2 {
        return Err(unsupported(
            format!("{} ranks are more than collc can lower", c.ranks.len()),
            "use fewer ranks",
        ));
    }
    let family = family_of(model, c.kind);
    if !supports(&family, c.kind) {
        return Err(unsupported(
            format!(
                "the `{}` schedule does not implement {}",
                family.name(),
                c.kind.name()
            ),
            &format!(
                "for {}, use {} or `schedule auto;`",
                c.kind.name(),
                lowerable(c.kind)
            ),
        ));
    }
    let n = c.ranks.len() as u64;
    if !matches!(family, Family::Forest { .. }) {
        // A forest reports solving, then lowering, itself.
        progress.phase(Phase::Lower, None);
    }
    let (stages, auto) = match &family {
        Family::RecursiveMultiplying { stages, model: m } => match stages {
            AutoOr::Fixed(s) => (s.clone(), false),
            AutoOr::Auto => (auto_stages(model, c, m.as_deref()), true),
        },
        Family::RecursiveDoubling => (crate::cost::doubling_stages(n), false),
        _ => (Vec::new(), false),
    };
    // Room reserved per rank: the estimate's share, when it is a count or an upper bound.
    let mut per_rank = 0;
    if let Some(e) = estimate::estimate(c, &family, &stages) {
        estimate::check(c, &family, e, &model.limits, span).map_err(|d| vec![d])?;
        if !e.at_least {
            per_rank = usize::try_from(e.ops / n.max(1)).unwrap_or(0);
        }
    }
    let program = match &family {
        Family::RecursiveMultiplying { .. } => {
            if let Some(p) = stage_problem(&stages, n) {
                let code = match p {
                    StageProblem::Product { .. } => Code::StageProduct,
                    StageProblem::Collapse(_) => Code::CollapseExpand,
                    StageProblem::Merge(_) => Code::MergeMismatch,
                };
                let mut d = Diagnostic::error(
                    code,
                    span,
                    format!("the stages {} do not fit {n} ranks", stage_list(&stages)),
                )
                .label("inconsistent stages")
                .help("`collc check` explains what is wrong with the stage list");
                if auto {
                    d = d.note("the stages were chosen by `stages: auto`; this is a bug in collc, please report it");
                }
                return Err(vec![d]);
            }
            let name = format!("recursive_multiplying {}", stage_list(&stages));
            rm(c, name, &stages, span, per_rank)
        }
        Family::RecursiveDoubling => {
            let name = format!("recursive_doubling {}", stage_list(&stages));
            rm(c, name, &stages, span, per_rank)
        }
        Family::Ring { slices, channels } => {
            let slices = ring_slices(c, *slices);
            let orders = ring_orders(model, c, *channels, slices)
                .map_err(|m| unsupported(m, "use fewer `channels`, or `channels: auto`"))?;
            let ch = orders.len() as u64;
            let rings: Vec<ring::Ring> = orders.into_iter().map(ring::Ring::from_order).collect();
            let cpp = match c.kind {
                CollectiveKind::Allreduce | CollectiveKind::Barrier => ch * n * u64::from(slices),
                _ => ch,
            };
            let Ok(cpp) = u32::try_from(cpp) else {
                return Err(unsupported(
                    format!(
                        "{n} ranks with {slices} slices per step over {ch} channels are {cpp} chunks, more than a program holds"
                    ),
                    "use fewer `slices` or `channels`",
                ));
            };
            let mut name = "ring".to_string();
            if ch > 1 {
                name.push_str(&format!(" {ch} channels"));
            }
            if slices > 1 {
                name.push_str(&format!(" {slices} slices"));
            }
            let mut b = Builder::new(name, spec(c, cpp.max(1)));
            b.reserve_per_rank(per_rank);
            match c.kind {
                CollectiveKind::Allgather => ring::allgather(&mut b, &rings),
                CollectiveKind::ReduceScatter => ring::reduce_scatter(&mut b, &rings),
                _ => ring::allreduce(&mut b, &rings, slices),
            }
            Ok(b.finish())
        }
        Family::Binomial => {
            let root = c.root.unwrap_or(0) as u32;
            let mut b = Builder::new("binomial", spec(c, 1));
            if c.kind == CollectiveKind::Broadcast {
                tree::broadcast(&mut b, root);
            } else {
                tree::reduce(&mut b, root);
            }
            Ok(b.finish())
        }
        Family::NcclTree { chunks } => {
            let (trees, ch, chunks) = nccl_tree_plan(model, c, *chunks);
            let name = format!("nccl_tree {ch} channels {chunks} chunks");
            let mut b = Builder::new(name, spec(c, 2 * ch * chunks));
            b.reserve_per_rank(per_rank);
            nccl_tree::allreduce(&mut b, &trees, chunks);
            Ok(b.finish())
        }
        Family::Forest { k, chunks } => {
            return forest::lower(model, c, *k, *chunks, span, progress);
        }
        Family::StaticTrees { trees, roots, .. } => match &model.topology {
            Some(topo) => static_trees::lower(topo, c, *trees, roots, span),
            None => Err(unsupported(
                "static in-network trees need a topology with switches".into(),
                "declare a topology whose participants are linked to switches",
            )),
        },
        Family::Canary(_) => Err(unsupported(
            format!(
                "lowering the `{}` schedule is not available yet",
                family.name()
            ),
            &format!(
                "for {}, use {} or `schedule auto;` for now",
                c.kind.name(),
                lowerable(c.kind)
            ),
        )),
        Family::Pairwise { concurrent } => {
            let name = if *concurrent {
                "pairwise concurrent"
            } else {
                "pairwise"
            };
            let mut b = Builder::new(name, spec(c, 1));
            b.reserve_per_rank(per_rank);
            alltoall::pairwise(&mut b, *concurrent);
            Ok(b.finish())
        }
        Family::Bruck { radix } => {
            let radix = u32::try_from(*radix).unwrap_or(u32::MAX);
            let mut b = Builder::new(format!("bruck radix {radix}"), spec(c, 1));
            b.reserve_per_rank(per_rank);
            alltoall::bruck(&mut b, radix);
            Ok(b.finish())
        }
        Family::Hierarchical => {
            let boxes = model
                .topology
                .as_ref()
                .map(crate::net::boxes)
                .unwrap_or_default();
            let of: Vec<u32> = c
                .ranks
                .iter()
                .map(|&v| boxes.get(v).copied().unwrap_or(0))
                .collect();
            let boxes = alltoall::Boxes::new(&of);
            let name = format!("hierarchical {} boxes", boxes.members.len());
            let mut b = Builder::new(name, spec(c, 1));
            alltoall::hierarchical(&mut b, &boxes);
            Ok(b.finish())
        }
        Family::Mcf { chunks } => match &model.topology {
            Some(topo) => match crate::mcf::cached(topo, &c.ranks) {
                Ok(opt) => {
                    let block = c.count / n.max(1);
                    let bytes = block * c.dtype.bytes();
                    let trees = routed::Trees::new(&opt);
                    let cpp = routed::mcf_chunks(&trees, *chunks, block, bytes);
                    let mut b = Builder::new(format!("mcf (chunks {cpp})"), spec(c, cpp as u32));
                    routed::alltoall(&mut b, cpp as u32, &routed::mcf_routes(&trees, cpp as u32));
                    Ok(b.finish())
                }
                Err(e) => Err(unsupported(
                    format!("the all-to-all flow cannot be solved: {e}"),
                    "every rank must reach every other over the topology's links",
                )),
            },
            None => Err(unsupported(
                "the topology-optimal all-to-all needs a topology".into(),
                "declare the network, or use `pairwise` or `bruck`",
            )),
        },
        Family::Auto => Err(unsupported(
            "`auto` did not resolve to a family".into(),
            "name a family",
        )),
    };
    program.map(|p| (p, Vec::new()))
}

/// NCCL's tree's chunks per tree over `channels` tree pairs: the fixed count, or for `auto` one
/// per 256 KiB of the tree's share (NCCL's tree steps move chunks of that order), at most 64;
/// never more than a tree's share has elements.
pub fn nccl_tree_chunks(c: &Collective, chunks: AutoOr<u64>, channels: u32) -> u32 {
    let trees = 2 * u64::from(channels.max(1));
    let share = (c.count / trees).max(1);
    let want = match chunks {
        AutoOr::Fixed(k) => k,
        AutoOr::Auto => (c.bytes() / trees / (256 << 10)).clamp(1, 64),
    };
    u32::try_from(want.min(share).max(1)).unwrap_or(1)
}

/// The most channels `c`'s elements fill: every chunk at least one element, a ring cutting an
/// allgather's or reduce-scatter's part into one chunk and an allreduce's vector into
/// `N x slices`; one for a barrier.
pub fn ring_channel_room(c: &Collective, slices: u32) -> u64 {
    let n = (c.ranks.len() as u64).max(1);
    let (elements, chunks) = match c.kind {
        CollectiveKind::Allgather | CollectiveKind::ReduceScatter => (c.count / n, 1),
        CollectiveKind::Barrier => return 1,
        _ => (c.count, n * u64::from(slices.max(1))),
    };
    (elements / chunks).max(1)
}

/// The rings of a ring schedule, one visiting order per channel: the node-order ring alone
/// without a topology or for `channels: 1`, else [`crate::net::rings`]' search (cached per
/// network and ranks), with `channels: auto` at most as many channels as the elements fill.
pub(crate) fn ring_orders(
    model: &Model,
    c: &Collective,
    channels: AutoOr<u64>,
    slices: u32,
) -> Result<Vec<Vec<u32>>, String> {
    let (want, fixed) = ring_channels(c, channels, slices)?;
    let first = || vec![crate::net::rings::node_order(&c.ranks)];
    let Some(topo) = model.topology.as_ref() else {
        return Ok(first());
    };
    if want <= 1 {
        return Ok(first());
    }
    Ok(crate::net::rings::cached(topo, &c.ranks, want, fixed).rings)
}

/// The channels a ring lays for `channels` (exactly, or at most for `auto`) and whether the
/// count is fixed: at most as many as `c`'s elements fill, and for `auto` at most
/// [`crate::net::rings::auto_limit`] (the search's own limit); an error for a fixed count the
/// elements do not fill.
pub(crate) fn ring_channels(
    c: &Collective,
    channels: AutoOr<u64>,
    slices: u32,
) -> Result<(usize, bool), String> {
    let room = ring_channel_room(c, slices);
    match channels {
        AutoOr::Fixed(k) if k > room => Err(format!(
            "{k} channels cut the data into chunks of less than one element ({room} channel(s) at most for {} elements)",
            c.count
        )),
        AutoOr::Fixed(k) => Ok((k as usize, true)),
        // Clamped as the search clamps it, so sizes whose elements fill more channels than the
        // search lays share one search and one lowered program (`lower::reuse`); never below 2,
        // which still searches (one channel is the node-order ring without a search).
        AutoOr::Auto => {
            let limit = crate::net::rings::auto_limit(c.ranks.len()).max(2) as u64;
            Ok((room.min(limit) as usize, false))
        }
    }
}

/// NCCL's tree on `model`'s topology for `c`: the trees, their channels and the chunks per
/// tree `chunks` resolves to.
pub(crate) fn nccl_tree_plan(
    model: &Model,
    c: &Collective,
    chunks: AutoOr<u64>,
) -> (nccl_tree::Trees, u32, u32) {
    let boxes = model
        .topology
        .as_ref()
        .map(crate::net::boxes)
        .unwrap_or_default();
    let trees = nccl_tree::Trees::new(&c.ranks, &boxes);
    let ch = trees.channels();
    let chunks = nccl_tree_chunks(c, chunks, ch);
    (trees, ch, chunks)
}

fn rm(
    c: &Collective,
    name: String,
    stages: &[Stage],
    span: Span,
    per_rank: usize,
) -> Result<Program, Vec<Diagnostic>> {
    let mut b = Builder::new(name, spec(c, 1));
    b.reserve_per_rank(per_rank);
    match recursive::lower(&mut b, stages) {
        Ok(()) => Ok(b.finish()),
        Err(why) => Err(vec![
            Diagnostic::error(
                Code::LowerUnsupported,
                span,
                format!("cannot lower the stages {}: {why}", stage_list(stages)),
            )
            .label("here")
            .help("try another stage list")
            .note("the stage list passed the checks, so this is a bug in collc; please report it"),
        ]),
    }
}

/// Lowers and proves the program with `ir::verify`. A finding means collc lowered wrongly: it
/// is reported with the verifier's code at the schedule, with a note saying so.
pub fn lower_and_verify(model: &Model) -> Result<(Program, Proof), Vec<Diagnostic>> {
    lower_and_verify_with(model, &Quiet).map(|(p, proof, _)| (p, proof))
}

/// [`lower_and_verify`], reporting its phases to `progress` ([`lower_with`], then
/// [`Phase::Verify`]), with [`lower_with`]'s warnings.
pub fn lower_and_verify_with(
    model: &Model,
    progress: &dyn Progress,
) -> Result<(Program, Proof, Vec<Diagnostic>), Vec<Diagnostic>> {
    let (program, warnings) = lower_with(model, progress)?;
    progress.phase(Phase::Verify, None);
    match ir::verify::verify(&program) {
        Ok(proof) => Ok((program, proof, warnings)),
        Err(findings) => Err(refuted(model, &program, &findings)),
    }
}

/// The diagnostics for a lowered program that failed verification: each finding at the
/// schedule (else the collective), with a note that this is a bug in collc.
pub fn refuted(
    model: &Model,
    program: &Program,
    findings: &[ir::verify::Finding],
) -> Vec<Diagnostic> {
    let span = model
        .schedule
        .as_ref()
        .map(|s| s.span)
        .or(model.collective.as_ref().map(|c| c.span))
        .unwrap_or(Span::new(FileId(0), 0, 0));
    findings
        .iter()
        .map(|f| {
            ir::finding_diagnostic(f, span).note(format!(
                "this is a bug in collc: its lowering `{}` failed verification; please report it with this file",
                program.name
            ))
        })
        .collect()
}
