//! Lowering ForestColl schedules (../shared/seeds/forestcoll.txt, Sections 3.2 and 4.6): the
//! solved forests ([`crate::forest::solve`]) become IR programs that `ir::verify` proves.
//!
//! Which forests a collective needs (Figure 1 of the paper): allgather spreads every rank's part
//! along out-trees rooted at every rank; reduce-scatter reduces every rank's part along in-trees
//! toward that rank; allreduce is reduce-scatter on `1/N` slices of the vector followed by
//! allgather of the reduced slices; broadcast and reduce use single-root out- and in-trees.
//! Barrier is not a forest collective (`sema::schedule::supports` says so before lowering).
//! [`emit`] owns the data layout and the tree walks; [`diags`] the diagnostics.
//!
//! `chunks: auto` (the default) is resolved after solving by [`solve_chunked`], with
//! [`crate::forest::chunking::choose`], which the report, hover and the simulation call too;
//! [`most_chunks`] tells it the most chunks the layout can split into.
//!
//! Limits: a program has at most [`MAX_SLOTS`] slots per buffer and about [`MAX_OPS`] ops, so
//! lowering and verification stay within memory. A fixed `chunks` that cannot fit even with one
//! unit per shard is E0043 before solving (an auto count over the limits is E0043 after, naming
//! the most that fit); a fixed `k` whose worst-case layout (`D = k` units per shard)
//! cannot fit is E0044 before solving, and after solving the real layout is checked the same way
//! (E0044 when `k` was fixed, E0043 otherwise). Solver errors map the same way: a fixed `k` the
//! solver refuses is E0044, anything else E0043.

mod diags;
mod emit;

pub use diags::{chunk_warning, lower_error, precheck, solver_error};

use crate::diag::{Code, Diagnostic, Span};
use crate::forest::chunking::Chunking;
use crate::forest::{Direction, Forest, KChoice, Roots};
use crate::ir::{Buf, Program, Slice};
use crate::progress::{Phase, Progress};
use crate::sema::model::{AutoOr, Collective, CollectiveKind, NodeId};
use emit::{Layout, Place};

/// Most slots one buffer of a forest program may have.
pub const MAX_SLOTS: u64 = 1 << 20;
/// Most ops a forest program may have (estimated before emitting).
pub const MAX_OPS: u64 = 1 << 23;

/// The forests `kind` needs: `(roots, direction)` for the in-trees, then the out-trees.
pub fn needs(c: &Collective) -> Vec<(Roots, Direction)> {
    let one = || Roots::One(c.ranks[c.root.unwrap_or(0)]);
    match c.kind {
        CollectiveKind::Allgather => vec![(Roots::All, Direction::Out)],
        CollectiveKind::ReduceScatter => vec![(Roots::All, Direction::In)],
        CollectiveKind::Allreduce | CollectiveKind::Barrier => {
            vec![(Roots::All, Direction::In), (Roots::All, Direction::Out)]
        }
        CollectiveKind::Broadcast => vec![(one(), Direction::Out)],
        CollectiveKind::Reduce => vec![(one(), Direction::In)],
        // Nothing is shared in an all-to-all, so no spanning tree carries it.
        CollectiveKind::Alltoall => Vec::new(),
    }
}

/// Why a forest program cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LowerError {
    /// The layout needs `slots` slots per buffer or about `ops` ops: more than the limits.
    TooLarge { slots: u64, ops: u64 },
    /// The forest does not fit the collective (a solver bug).
    Malformed(String),
}

/// Shards per part-sized buffer: `N` for allgather, reduce-scatter and allreduce, else 1.
pub(super) fn shards(c: &Collective) -> u64 {
    match c.kind {
        CollectiveKind::Broadcast | CollectiveKind::Reduce => 1,
        _ => c.ranks.len() as u64,
    }
}

/// Slots per buffer and estimated ops for `units` units per shard and the given trees.
fn size(c: &Collective, units: u64, chunks: u64, forests: &[&Forest]) -> (u64, u64) {
    let slots = shards(c).saturating_mul(units).saturating_mul(chunks);
    let ops = forests
        .iter()
        .flat_map(|f| f.trees.iter())
        .map(|t| 2 * t.edges.len() as u64 + 1)
        .sum::<u64>()
        .saturating_mul(chunks)
        .saturating_add(shards(c));
    (slots, ops)
}

/// The program for `c` with `chunks` pipelined chunks per tree, from the forests [`needs`]
/// lists (in that order), proved or not: `lower_and_verify` runs the verifier.
pub fn program(c: &Collective, chunks: u64, forests: &[&Forest]) -> Result<Program, LowerError> {
    let bad = |m: String| LowerError::Malformed(m);
    let want = needs(c);
    if forests.len() != want.len() {
        return Err(bad(format!(
            "{} needs {} forests, got {}",
            c.kind.name(),
            want.len(),
            forests.len()
        )));
    }
    for (f, (_, dir)) in forests.iter().zip(&want) {
        if f.direction != *dir {
            return Err(bad(format!("a forest has direction {:?}", f.direction)));
        }
    }
    let units = emit::units(forests).map_err(bad)?;
    let (slots, ops) = size(c, units, chunks, forests);
    if slots > MAX_SLOTS || ops > MAX_OPS {
        return Err(LowerError::TooLarge { slots, ops });
    }
    let layout = Layout {
        units,
        chunks: chunks as u32,
    };
    let root = c.root.map(|r| r as u32);
    let place = |f: &Forest| emit::place(f, &c.ranks, root, &layout).map_err(bad);
    let cpp = layout.shard() * (shards(c) / shards_per_part(c));
    let spec = super::spec(c, cpp as u32);
    let mut b = super::builder::Builder::new(format!("forest (chunks {chunks})"), spec);
    let at_zero = |buf| Place { buf, at: |_, _| 0 };
    let by_root = |buf| Place {
        buf,
        at: |r, shard| u64::from(r) * shard,
    };
    match c.kind {
        CollectiveKind::Allgather => {
            let t = place(forests[0])?;
            let shard = layout.shard() as u32;
            for r in 0..b.ranks() {
                let inp = Slice::new(Buf::Input, 0, shard);
                b.copy(r, Slice::new(Buf::Output, r * shard, shard), inp);
            }
            emit::broadcast(
                &mut b,
                &t,
                &layout,
                &at_zero(Buf::Input),
                &by_root(Buf::Output),
                0,
            );
        }
        CollectiveKind::Broadcast => {
            let t = place(forests[0])?;
            let r = root.unwrap_or(0);
            let all = Slice::new(Buf::Input, 0, layout.shard() as u32);
            b.copy(r, Slice::new(Buf::Output, 0, all.count), all);
            emit::broadcast(
                &mut b,
                &t,
                &layout,
                &at_zero(Buf::Input),
                &at_zero(Buf::Output),
                0,
            );
        }
        CollectiveKind::ReduceScatter => {
            let t = place(forests[0])?;
            emit::reduce(
                &mut b,
                &t,
                &layout,
                &by_root(Buf::Input),
                &at_zero(Buf::Output),
                0,
            );
        }
        CollectiveKind::Reduce => {
            let t = place(forests[0])?;
            emit::reduce(
                &mut b,
                &t,
                &layout,
                &at_zero(Buf::Input),
                &at_zero(Buf::Output),
                0,
            );
        }
        CollectiveKind::Allreduce | CollectiveKind::Barrier => {
            let (rs, ag) = (place(forests[0])?, place(forests[1])?);
            let out = by_root(Buf::Output);
            emit::reduce(&mut b, &rs, &layout, &by_root(Buf::Input), &out, 0);
            emit::broadcast(&mut b, &ag, &layout, &out, &out, rs.len() as u32);
        }
        CollectiveKind::Alltoall => {
            return Err(bad("a forest does not implement all-to-all".into()));
        }
    }
    Ok(b.finish())
}

/// Shards in one IR part: allreduce keeps the whole vector as one part of `N` shards.
fn shards_per_part(c: &Collective) -> u64 {
    match c.kind {
        CollectiveKind::Allreduce | CollectiveKind::Barrier => 1,
        _ => shards(c),
    }
}

/// Largest `n` with `per * n <= limit` (0 when even one does not fit).
pub(super) fn most(limit: u64, per: u64) -> u64 {
    limit / per.max(1)
}

/// The most chunks whose program stays within [`MAX_SLOTS`] and [`MAX_OPS`] (0 when even one
/// does not).
pub fn fitting_chunks(c: &Collective, forests: &[&Forest]) -> u64 {
    let Ok(units) = emit::units(forests) else {
        return 0;
    };
    let (slots, ops) = size(c, units, 1, forests);
    let ops = ops.saturating_sub(shards(c));
    most(MAX_SLOTS, slots).min(most(MAX_OPS.saturating_sub(shards(c)), ops))
}

/// The most chunks with which every slot of the layout holds at least one element, so every
/// pipelined chunk of every tree carries data: a part's elements over its slots per chunk
/// (`D` units per shard times the shards in a part); at least 1.
pub fn most_chunks(c: &Collective, forests: &[&Forest]) -> u64 {
    let units = emit::units(forests).unwrap_or(1).max(1);
    let per_chunk = units.saturating_mul(shards(c) / shards_per_part(c));
    let part = super::spec(c, 1).part_elements;
    (part / per_chunk.max(1)).max(1)
}

/// Solves the forests `c` needs ([`needs`]) on the model's topology, with `k` trees per root.
pub fn solve(
    model: &crate::sema::model::Model,
    c: &Collective,
    k: AutoOr<u64>,
    span: Span,
) -> Result<Vec<Forest>, Vec<Diagnostic>> {
    solve_with(model, c, k, span, &crate::progress::Quiet)
}

/// Forests solved once for a model, kept in [`crate::sema::model::Model::solved`] so that
/// lowering the model again with another `chunks`, or the report's sections, do not solve
/// again (the MSCCL target's search for the most chunks that fit lowers it several times).
/// [`solve_with`] takes a kept forest only for the ranks, `k`, roots and direction it was
/// solved for; the topology is the model's own, which whoever sets the field keeps unchanged.
#[derive(Debug)]
pub struct Solved {
    k: AutoOr<u64>,
    ranks: Vec<NodeId>,
    forests: Vec<(Roots, Direction, Forest)>,
}

impl Solved {
    /// Solves every forest the collectives `cs` need ([`needs`]; those with the first one's
    /// ranks) with `k` trees per root, each once.
    pub fn new(
        model: &crate::sema::model::Model,
        cs: &[&Collective],
        k: AutoOr<u64>,
        progress: &dyn Progress,
    ) -> Result<Solved, Vec<Diagnostic>> {
        let mut kept = Solved {
            k,
            ranks: cs.first().map_or_else(Vec::new, |c| c.ranks.clone()),
            forests: Vec::new(),
        };
        for c in cs.iter().filter(|c| c.ranks == kept.ranks) {
            let fresh: Vec<(Roots, Direction)> = needs(c)
                .into_iter()
                .filter(|(r, d)| !kept.forests.iter().any(|f| (f.0, f.1) == (*r, *d)))
                .collect();
            let solved = solve_needs(model, c, k, c.span, progress, &fresh)?;
            kept.forests
                .extend(fresh.into_iter().zip(solved).map(|((r, d), f)| (r, d, f)));
        }
        Ok(kept)
    }

    /// Marks the forests (k = 0, which no solve gives) so a test can tell them from a solve's.
    #[doc(hidden)]
    pub fn mark_for_tests(&mut self) {
        for f in &mut self.forests {
            f.2.k = 0;
        }
    }

    /// Every kept forest, in the order solved: [`needs`]'s for the first collective given to
    /// [`Solved::new`], then the others' new ones.
    pub fn forests(&self) -> Vec<&Forest> {
        self.forests.iter().map(|f| &f.2).collect()
    }

    /// The kept forest for `c`'s ranks, `k`, `roots` and `dir`, if there is one.
    fn get(&self, c: &Collective, k: AutoOr<u64>, roots: Roots, dir: Direction) -> Option<&Forest> {
        if self.k != k || self.ranks != c.ranks {
            return None;
        }
        self.forests
            .iter()
            .find(|f| (f.0, f.1) == (roots, dir))
            .map(|f| &f.2)
    }
}

/// [`solve`], with the solver's steps told to `progress`; the model's [`Solved`] forests
/// when they were solved for `c` and `k`.
pub fn solve_with(
    model: &crate::sema::model::Model,
    c: &Collective,
    k: AutoOr<u64>,
    span: Span,
    progress: &dyn Progress,
) -> Result<Vec<Forest>, Vec<Diagnostic>> {
    solve_needs(model, c, k, span, progress, &needs(c))
}

/// The forests of `wanted` (each a root set and direction on `c`'s ranks): kept ones
/// ([`Solved`]) where the model has them, the others solved.
fn solve_needs(
    model: &crate::sema::model::Model,
    c: &Collective,
    k: AutoOr<u64>,
    span: Span,
    progress: &dyn Progress,
    wanted: &[(Roots, Direction)],
) -> Result<Vec<Forest>, Vec<Diagnostic>> {
    let Some(topo) = model.topology.as_ref() else {
        return Err(vec![
            Diagnostic::error(
                Code::MissingDeclaration,
                span,
                "a forest schedule needs a topology",
            )
            .label("no topology to build trees on")
            .help("declare one, e.g. `topology t = dgx_a100(clusters: 2);`"),
        ]);
    };
    let kc = match k {
        AutoOr::Auto => KChoice::Auto,
        AutoOr::Fixed(k) => KChoice::Fixed(k),
    };
    let names = |n: NodeId| {
        topo.nodes
            .get(n)
            .map_or_else(|| format!("node {n}"), |x| x.name.clone())
    };
    let kept = model.solved.as_deref();
    wanted
        .iter()
        .map(
            |&(roots, dir)| match kept.and_then(|s| s.get(c, k, roots, dir)) {
                Some(f) => Ok(f.clone()),
                None => crate::forest::solve_with(topo, &c.ranks, roots, kc, dir, progress)
                    .map_err(|e| vec![solver_error(&e, c, &names, span)]),
            },
        )
        .collect()
}

/// The solved forests `c` needs and the chunk count to run them with
/// ([`crate::forest::chunking::choose`] under the file's flow parameters): what lowering,
/// the report, hover and the simulation share.
pub fn solve_chunked(
    model: &crate::sema::model::Model,
    c: &Collective,
    k: AutoOr<u64>,
    chunks: AutoOr<u64>,
    span: Span,
) -> Result<(Vec<Forest>, Chunking), Vec<Diagnostic>> {
    solve_chunked_with(model, c, k, chunks, span, &crate::progress::Quiet)
}

/// [`solve_chunked`], with the solver's steps told to `progress`.
pub fn solve_chunked_with(
    model: &crate::sema::model::Model,
    c: &Collective,
    k: AutoOr<u64>,
    chunks: AutoOr<u64>,
    span: Span,
    progress: &dyn Progress,
) -> Result<(Vec<Forest>, Chunking), Vec<Diagnostic>> {
    let forests = solve_with(model, c, k, span, progress)?;
    progress.phase(crate::progress::Phase::SolveChunks, None);
    let refs: Vec<&Forest> = forests.iter().collect();
    let chunking = match model.topology.as_ref() {
        Some(topo) => {
            let params = crate::net::for_file(model, None);
            crate::forest::chunking::choose(topo, &params, c, chunks, &refs)
        }
        None => return Err(Vec::new()),
    };
    Ok((forests, chunking))
}

/// Lowers a `forest` schedule of `model` (the hook `lower::lower` calls): checks the limits,
/// solves the forests the collective needs ([`Phase::Solve`]), resolves `chunks` and emits
/// the program ([`Phase::Lower`]); with the E0045 warning when a fixed `chunks` loses much
/// ([`chunk_warning`]).
pub(super) fn lower(
    model: &crate::sema::model::Model,
    c: &Collective,
    k: AutoOr<u64>,
    chunks: AutoOr<u64>,
    span: Span,
    progress: &dyn Progress,
) -> Result<(Program, Vec<Diagnostic>), Vec<Diagnostic>> {
    precheck(c, k, chunks, span).map_err(|d| vec![d])?;
    progress.phase(Phase::Solve, None);
    let (forests, ch) = solve_chunked_with(model, c, k, chunks, span, progress)?;
    progress.phase(Phase::Lower, None);
    let refs: Vec<&Forest> = forests.iter().collect();
    let at = model
        .schedule
        .as_ref()
        .map_or(span, |s| s.prop_span("chunks"));
    let warnings = chunk_warning(c, &ch, at).into_iter().collect();
    let p =
        program(c, ch.program, &refs).map_err(|e| vec![lower_error(&e, k, &ch, &refs, c, span)])?;
    Ok((p, warnings))
}
