//! `collc compare`: every schedule family that implements a file's collective
//! ([`crate::choose::candidates`]), each simulated on the file's topology at every size of a
//! sweep by [`crate::choose::evaluate`], with the figures nccl-tests reports (time, algbw and
//! busbw), the winner per size and the crossovers, where the winner changes.
//!
//! The figures come from one [`Engine`]: the flow-level model (host-based families), or the
//! packet-level simulator, which also runs the in-network families (static trees) and takes the
//! median of `runs` seeded runs per cell (random placement, roots and background traffic).
//!
//! [`compare`] runs the sweep: the (size, family) evaluations are independent and run in
//! parallel (rayon, on [`crate::par::threads`] threads), and their results are kept in sweep
//! order, so the output never depends on timing. A family that fails at some sizes keeps a
//! [`Cell::Failed`] there; one that fails everywhere is reported as skipped, never dropped.
//! A sweep whose cancel flag is set ([`shard::Split::cancel`]) evaluates no further cell and
//! ends with E0061 ([`cancelled`]).
//! [`render`] writes the comparison as a table ([`table`]), CSV or JSON, [`chart`] as an SVG
//! line chart, [`sizes`] parses `--sizes`.

pub mod chart;
pub mod render;
pub mod shard;
pub mod sizes;
pub mod table;

use crate::diag::{Code, Diagnostic, Span};
use crate::net::FlowParams;
use crate::progress::{Phase, Progress};
use crate::sema::model::{AutoOr, CollectiveKind, Dtype, Family, Model};
use crate::sim::fluid::outcome::bus_factor;
use crate::sim::packet::PacketParams;
use num_traits::ToPrimitive;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One (size, family) evaluation.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Simulated: seconds, and algbw and busbw in bytes per second.
    Done {
        seconds: f64,
        algbw: f64,
        busbw: f64,
    },
    /// The family cannot build or run at this size: the first diagnostic's code and message.
    Failed { code: Code, message: String },
}

/// A size where the winner changes: `from` won the size before, `to` wins from `bytes` on
/// (indices into [`Comparison::families`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crossover {
    /// The row where the new winner starts.
    pub row: usize,
    pub bytes: u64,
    pub from: usize,
    pub to: usize,
}

/// The simulator a comparison's figures come from.
#[derive(Debug, Clone, PartialEq)]
// One engine per comparison: the size of its variants does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Engine {
    Flow(FlowParams),
    /// Each cell the median of runs with seeds `seed..seed+runs`.
    Packet {
        params: PacketParams,
        seed: u64,
        runs: u64,
    },
}

impl Engine {
    /// `flow` or `packet`.
    pub fn kind(&self) -> &'static str {
        match self {
            Engine::Flow(_) => "flow",
            Engine::Packet { .. } => "packet",
        }
    }

    /// The declared model's name, or None for the defaults.
    pub fn declared(&self) -> Option<&str> {
        match self {
            Engine::Flow(p) => p.declared.as_deref(),
            Engine::Packet { params, .. } => params.declared.as_deref(),
        }
    }

    /// Per-message host overhead, in seconds.
    pub fn overhead_s(&self) -> f64 {
        match self {
            Engine::Flow(p) => p.overhead_s(),
            Engine::Packet { params, .. } => params.overhead as f64 * 1e-12,
        }
    }

    /// Reduction time per byte, in seconds.
    pub fn gamma_s(&self) -> f64 {
        match self {
            Engine::Flow(p) => p.gamma_s(),
            Engine::Packet { params, .. } => params.gamma.to_f64().unwrap_or(0.0) * 1e-12,
        }
    }

    /// One line naming the model and every parameter.
    pub fn describe(&self) -> String {
        match self {
            Engine::Flow(p) => format!("flow-level model: {}", p.describe()),
            Engine::Packet { params, seed, runs } => format!(
                "packet-level model: {}; each figure the median of {runs} run{} (seed{} {seed}{})",
                params.describe(),
                if *runs == 1 { "" } else { "s" },
                if *runs == 1 { "" } else { "s" },
                if *runs == 1 {
                    String::new()
                } else {
                    format!("..{}", seed + runs - 1)
                }
            ),
        }
    }
}

/// A finished sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub topology: String,
    pub kind: CollectiveKind,
    pub ranks: usize,
    pub dtype: Dtype,
    /// The simulator and parameters every figure was made with.
    pub engine: Engine,
    /// The candidates, in [`crate::choose::candidates`] order.
    pub families: Vec<Family>,
    /// Bytes, ascending.
    pub sizes: Vec<u64>,
    /// `cells[size][family]`.
    pub cells: Vec<Vec<Cell>>,
    /// What the rows are: sizes of one file, or values of a `param` (then `sizes` holds each
    /// row's collective size).
    pub axis: Axis,
}

/// What a comparison's rows vary.
#[derive(Debug, Clone, PartialEq)]
pub enum Axis {
    /// The collective's size.
    Size,
    /// File `param`s (`collc compare --vary NAME=V1,V2,...`, repeatable): one checked file per
    /// combination of their values.
    Param {
        names: Vec<String>,
        points: Vec<Point>,
    },
}

/// One combination of values of the varied `param`s.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The values as given on the command line, one per varied `param`.
    pub values: Vec<String>,
    /// The collective's ranks with this value.
    pub ranks: usize,
    /// The simulator and parameters at this value.
    pub engine: Engine,
}

/// The family's name in a column or winner: its name, with the tree count for static trees
/// (`static_trees x4`) and `concurrent` for pairwise, so the sweep's variants read apart.
pub fn short(f: &Family) -> String {
    match f {
        Family::StaticTrees { trees, .. } => format!("static_trees x{trees}"),
        Family::Pairwise { concurrent: true } => "pairwise concurrent".into(),
        f => f.name().into(),
    }
}

/// The family with its parameters as `collc compare` names it: `forest (k: auto, chunks: 1)`.
pub fn label(f: &Family) -> String {
    let auto = |a: &AutoOr<u64>| match a {
        AutoOr::Auto => "auto".to_string(),
        AutoOr::Fixed(k) => k.to_string(),
    };
    match f {
        Family::RecursiveMultiplying {
            stages: AutoOr::Auto,
            ..
        } => "recursive_multiplying (stages: auto)".into(),
        Family::Forest { k, chunks } => {
            format!("forest (k: {}, chunks: {})", auto(k), auto(chunks))
        }
        Family::StaticTrees { trees, .. } => format!("static_trees (trees: {trees})"),
        Family::Ring {
            channels: AutoOr::Auto,
            ..
        } => "ring (channels: auto)".into(),
        Family::Pairwise { concurrent } => format!("pairwise (concurrent: {concurrent})"),
        Family::Bruck { radix } => format!("bruck (radix: {radix})"),
        Family::Mcf { chunks } => format!("mcf (chunks: {})", auto(chunks)),
        f => f.name().into(),
    }
}

/// The families a sweep under `engine` covers: [`crate::choose::candidates`], and under the
/// packet engine [`crate::choose::in_network_candidates`] after them.
pub fn families_for(m: &Model, engine: &Engine) -> Vec<Family> {
    let mut families = crate::choose::candidates(m);
    if let Engine::Packet { .. } = engine {
        families.extend(crate::choose::in_network_candidates(m));
    }
    families
}

/// Sweeps every candidate of `m` (under the packet engine the in-network ones too, and only
/// those named in `only` when it is not empty) over `sizes` (bytes) under `engine`, one [`Progress::step`]
/// per evaluation. Errors when the file has no topology or collective, when the collective moves
/// no data (barrier), when no family implements it, or when every evaluation failed (then the
/// diagnostics of the first failure of each family).
pub fn compare(
    m: &Model,
    sizes: &[u64],
    engine: &Engine,
    only: &[String],
    progress: &dyn Progress,
) -> Result<Comparison, Vec<Diagnostic>> {
    compare_split(m, sizes, engine, only, progress, &shard::Split::default())
}

/// [`compare`], evaluating only the cells `split` asks for ([`shard`]).
pub fn compare_split(
    m: &Model,
    sizes: &[u64],
    engine: &Engine,
    only: &[String],
    progress: &dyn Progress,
    split: &shard::Split,
) -> Result<Comparison, Vec<Diagnostic>> {
    let rows: Vec<Row> = sizes
        .iter()
        .map(|&bytes| Row {
            model: m,
            engine,
            bytes,
        })
        .collect();
    sweep(&rows, Axis::Size, only, progress, split)
}

/// Compares the families of `points[0]`'s model (as [`compare`] does) at each point: the file
/// checked with the `param`s `names` set to the point's values, every point at its own
/// collective's size and under its own engine (a model parameter may follow a `param`). The
/// rows are the points.
pub fn compare_over(
    names: &[String],
    points: &[(Vec<String>, Model, Engine)],
    only: &[String],
    progress: &dyn Progress,
) -> Result<Comparison, Vec<Diagnostic>> {
    compare_over_split(names, points, only, progress, &shard::Split::default())
}

/// [`compare_over`], evaluating only the cells `split` asks for ([`shard`]).
pub fn compare_over_split(
    names: &[String],
    points: &[(Vec<String>, Model, Engine)],
    only: &[String],
    progress: &dyn Progress,
    split: &shard::Split,
) -> Result<Comparison, Vec<Diagnostic>> {
    let rows: Vec<Row> = points
        .iter()
        .map(|(_, model, engine)| Row {
            model,
            engine,
            bytes: model
                .collective
                .as_ref()
                .map_or(0, |c| c.count.saturating_mul(c.dtype.bytes())),
        })
        .collect();
    let axis = Axis::Param {
        names: names.to_vec(),
        points: points
            .iter()
            .map(|(values, model, engine)| Point {
                values: values.clone(),
                ranks: model.collective.as_ref().map_or(0, |c| c.ranks.len()),
                engine: engine.clone(),
            })
            .collect(),
    };
    sweep(&rows, axis, only, progress, split)
}

/// One row of a sweep: a checked file, its engine and the bytes to run.
struct Row<'a> {
    model: &'a Model,
    engine: &'a Engine,
    bytes: u64,
}

/// The order a sweep's threads take its cells in (`pairs`: row-major, `families` a row):
/// first each family's first cell that runs here (`runs`, by row), then the rest, heaviest
/// row first (`weight`, by row: the bytes it moves; equal weights keep the rows' order).
///
/// - What a family does once per sweep (lowering and proving its program, solving its forest)
///   starts on all threads at once, instead of a thread's later cell of that family waiting
///   for another thread to finish it.
/// - Then the longest cells go first (a simulation's cost grows with the bytes it moves: the
///   1,024-GPU DGX ring's 1 GiB cell takes about 30 s, its 1 KiB one under 1 s), so the
///   short ones fill the threads' ends. Row by row, the largest cell ran last, on one
///   thread, while the others had nothing left to do. (Starting with each family's heaviest
///   cell instead made fat_tree_1024's sweep 5% slower: its families' first lowerings then
///   waited behind long cells.)
fn cell_order<A, B>(
    pairs: &[(usize, usize, A, B)],
    families: usize,
    runs: impl Fn(usize) -> bool,
    weight: impl Fn(usize) -> u64,
) -> Vec<usize> {
    let mut by_weight: Vec<usize> = (0..pairs.len()).collect();
    by_weight.sort_by_key(|&i| std::cmp::Reverse(weight(pairs[i].0)));
    let mut first = vec![false; pairs.len()];
    let mut order: Vec<usize> = (0..families)
        .filter_map(|fi| (0..pairs.len()).find(|&i| pairs[i].1 == fi && runs(pairs[i].0)))
        .collect();
    for &i in &order {
        first[i] = true;
    }
    order.extend(by_weight.into_iter().filter(|&i| !first[i]));
    order
}

/// Runs every (row, family) evaluation; the families are the first row's.
fn sweep(
    rows: &[Row],
    axis: Axis,
    only: &[String],
    progress: &dyn Progress,
    split: &shard::Split,
) -> Result<Comparison, Vec<Diagnostic>> {
    let Some(first) = rows.first() else {
        return Err(Vec::new());
    };
    let (m, engine) = (first.model, first.engine);
    let span = m.build_span(None);
    let (Some(topo), Some(c)) = (&m.topology, &m.collective) else {
        return Err(vec![
            Diagnostic::error(
                Code::MissingDeclaration,
                span,
                "comparing schedules needs a topology and a collective",
            )
            .label("nothing to compare")
            .help("declare both, e.g. `topology t = ring(n: 8, bw: 25 GB/s);` and `collective allreduce { size: 1 MiB; }`"),
        ]);
    };
    if c.kind == CollectiveKind::Barrier {
        return Err(vec![
            Diagnostic::error(
                Code::BadValue,
                c.span,
                "a barrier moves no data, so there are no sizes to compare schedules over",
            )
            .label("barrier")
            .help("compare a collective that moves data, e.g. `collective allreduce { size: 1 MiB; }`"),
        ]);
    }
    let mut families = families_for(m, engine);
    if !only.is_empty() {
        families.retain(|f| only.iter().any(|o| o == f.name()));
    }
    if families.is_empty() {
        return Err(vec![
            Diagnostic::error(
                Code::LowerUnsupported,
                c.span,
                format!(
                    "no schedule family collc lowers implements {}",
                    c.kind.name()
                ),
            )
            .label("nothing to compare")
            .help("compare allreduce, allgather, reduce_scatter, broadcast or reduce"),
        ]);
    }
    // Each row runs its own model's version of a family (a `param` may set a family's
    // parameters, e.g. Canary's timeout): the same column, matched by its short name.
    let own: Vec<Vec<Family>> = rows
        .iter()
        .map(|r| {
            let theirs = families_for(r.model, r.engine);
            families
                .iter()
                .map(|f| {
                    theirs
                        .iter()
                        .find(|g| short(g) == short(f))
                        .unwrap_or(f)
                        .clone()
                })
                .collect()
        })
        .collect();
    let pairs: Vec<(usize, usize, &Row, &Family)> = rows
        .iter()
        .zip(&own)
        .enumerate()
        .flat_map(|(ri, (r, fs))| fs.iter().enumerate().map(move |(fi, f)| (ri, fi, r, f)))
        .collect();
    // Merging: every cell must be given.
    if let Some(given) = &split.given {
        let missing: Vec<usize> = pairs
            .iter()
            .filter(|p| !given.contains_key(&(p.0, p.1)))
            .map(|p| p.0)
            .collect();
        if let Some(r) = missing.first() {
            return Err(vec![
                Diagnostic::error(
                    Code::BadValue,
                    span,
                    format!(
                        "the parts lack row {} of this sweep ({} cells in all are missing)",
                        r + 1,
                        missing.len()
                    ),
                )
                .label("the sweep merged")
                .help("give `--merge` the part of every shard, 1/N to N/N, made with the same file and flags"),
            ]);
        }
    }
    // Cells a shard does not run: not evaluated, and never written to its part.
    let elsewhere = || Cell::Failed {
        code: Code::BadValue,
        message: "in another shard".into(),
    };
    progress.phase(Phase::Sweep, Some(pairs.len() as u64));
    let cell = |&(ri, fi, row, f): &(usize, usize, &Row, &Family)| {
        // Polled before every cell: a cancelled sweep evaluates nothing more (what is
        // left is not a result, and nothing below reads it).
        if split.cancelled() {
            return Ok(elsewhere());
        }
        let r = match &split.given {
            Some(given) => Ok(given.get(&(ri, fi)).cloned().unwrap_or_else(elsewhere)),
            None if split.runs(ri) => evaluate(row, f),
            None => Ok(elsewhere()),
        };
        progress.step();
        r
    };
    let order = cell_order(
        &pairs,
        families.len(),
        |ri| split.given.is_none() && split.runs(ri),
        |ri| rows[ri].bytes,
    );
    type Evaluated = Result<Cell, Vec<Diagnostic>>;
    let run = || -> Vec<Evaluated> {
        // Threads claim cells one at a time in `order`; results go to each cell's place.
        let next = AtomicUsize::new(0);
        let slots: Vec<Mutex<Option<Evaluated>>> = pairs.iter().map(|_| Mutex::new(None)).collect();
        let work = || {
            while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                let r = cell(&pairs[i]);
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            }
        };
        rayon::scope(|s| {
            for _ in 1..rayon::current_num_threads() {
                s.spawn(|_| work());
            }
            work();
        });
        slots
            .into_iter()
            .map(|m| {
                let r = m.into_inner().unwrap_or_else(|e| e.into_inner());
                r.unwrap_or_else(|| Ok(elsewhere()))
            })
            .collect()
    };
    // A pool of our own: the thread count collc uses everywhere, and the compiler thread's
    // generous stack for the solver and lowerings.
    let results = match rayon::ThreadPoolBuilder::new()
        .num_threads(crate::par::threads())
        .stack_size(64 << 20)
        .build()
    {
        Ok(pool) => pool.install(run),
        Err(_) => run(),
    };
    if split.cancelled() {
        return Err(vec![cancelled(c.span)]);
    }
    let mut first_failure: Vec<Option<Vec<Diagnostic>>> = vec![None; families.len()];
    let mut cells: Vec<Vec<Cell>> = Vec::with_capacity(rows.len());
    for (i, r) in results.into_iter().enumerate() {
        let fi = i % families.len();
        if fi == 0 {
            cells.push(Vec::with_capacity(families.len()));
        }
        let cell = r.unwrap_or_else(|d| {
            let cell = match d.first() {
                Some(x) => Cell::Failed {
                    code: x.code,
                    message: x.message.clone(),
                },
                None => Cell::Failed {
                    code: Code::LowerUnsupported,
                    message: "the evaluation failed without a diagnostic".into(),
                },
            };
            first_failure[fi].get_or_insert(d);
            cell
        });
        if let Some(row) = cells.last_mut() {
            row.push(cell);
        }
    }
    let cmp = Comparison {
        topology: topo.name.clone(),
        kind: c.kind,
        ranks: c.ranks.len(),
        dtype: c.dtype,
        engine: engine.clone(),
        families,
        sizes: rows.iter().map(|r| r.bytes).collect(),
        cells,
        axis,
    };
    if split.shard.is_none()
        && !rows.is_empty()
        && (0..cmp.families.len()).all(|f| !cmp.evaluated(f))
    {
        let mut diags: Vec<Diagnostic> = first_failure.into_iter().flatten().flatten().collect();
        // Merged parts carry each failure's code and message, not its diagnostic.
        if diags.is_empty() {
            for (fi, f) in cmp.families.iter().enumerate() {
                if let Some(Cell::Failed { code, message }) = cmp.cells.first().map(|r| &r[fi]) {
                    diags.push(
                        Diagnostic::error(*code, span, message.clone())
                            .label(format!("{} at every size", label(f)))
                            .help("the shards' runs failed here too; run the sweep without `--merge` to see where"),
                    );
                }
            }
        }
        return Err(diags);
    }
    Ok(cmp)
}

/// The comparison stopped because its caller set the cancel flag ([`shard::Split::cancel`]):
/// E0061 at `span` (the collective compared, or where the file starts).
pub fn cancelled(span: Span) -> Diagnostic {
    Diagnostic::error(
        Code::Cancelled,
        span,
        "the comparison was cancelled before it finished",
    )
    .label("comparing schedules for this")
    .help("the caller asked it to stop (Ctrl-C from Python); run it again to get the comparison")
}

/// Family `f` at one row, with nccl-tests' figures for that row's collective.
fn evaluate(row: &Row, f: &Family) -> Result<Cell, Vec<Diagnostic>> {
    let (m, bytes) = (row.model, row.bytes);
    let seconds = match row.engine {
        Engine::Flow(params) => {
            crate::choose::evaluate(m, f, bytes, params).map(|run| run.seconds())
        }
        Engine::Packet { params, seed, runs } => {
            crate::choose::evaluate_packet(m, f, bytes, params, *seed, *runs)
        }
    }?;
    let algbw = if seconds > 0.0 {
        bytes as f64 / seconds
    } else {
        0.0
    };
    let factor = m
        .collective
        .as_ref()
        .map_or(1.0, |c| bus_factor(c.kind, c.ranks.len()));
    Ok(Cell::Done {
        seconds,
        algbw,
        busbw: algbw * factor,
    })
}

impl Comparison {
    /// True when family `f` was simulated at some size.
    pub fn evaluated(&self, f: usize) -> bool {
        self.cells
            .iter()
            .any(|row| matches!(row.get(f), Some(Cell::Done { .. })))
    }

    /// The fastest family at size index `s` (ties to the earlier family), if any ran.
    pub fn winner(&self, s: usize) -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for (f, cell) in self.cells.get(s)?.iter().enumerate() {
            if let Cell::Done { seconds, .. } = cell
                && best.is_none_or(|(_, b)| *seconds < b)
            {
                best = Some((f, *seconds));
            }
        }
        best.map(|b| b.0)
    }

    /// Where the winner changes, in size order (sizes with no winner are passed over).
    pub fn crossovers(&self) -> Vec<Crossover> {
        let mut out = Vec::new();
        let mut last: Option<usize> = None;
        for (s, &bytes) in self.sizes.iter().enumerate() {
            let Some(w) = self.winner(s) else { continue };
            if let Some(from) = last.filter(|&l| l != w) {
                out.push(Crossover {
                    row: s,
                    bytes,
                    from,
                    to: w,
                });
            }
            last = Some(w);
        }
        out
    }

    /// Row `s` as the table names it: its size, or `NAME=VALUE` per varied `param`.
    pub fn row_label(&self, s: usize) -> String {
        match &self.axis {
            Axis::Size => sizes::show(self.sizes.get(s).copied().unwrap_or(0)),
            Axis::Param { names, points } => points.get(s).map_or_else(String::new, |p| {
                let each: Vec<String> = names
                    .iter()
                    .zip(&p.values)
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect();
                each.join(" ")
            }),
        }
    }

    /// nccl-tests' bus-bandwidth factor of this collective.
    pub fn bus_factor(&self) -> f64 {
        bus_factor(self.kind, self.ranks)
    }

    /// Why families were not simulated: one line per family and failure message, with the sizes
    /// it applies to (`skipped` when it failed at every size).
    pub fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (f, fam) in self.families.iter().enumerate() {
            let mut groups: Vec<(Code, &str, Vec<String>)> = Vec::new();
            for (s, row) in self.cells.iter().enumerate() {
                if let Some(Cell::Failed { code, message }) = row.get(f) {
                    match groups.iter_mut().find(|g| g.0 == *code && g.1 == message) {
                        Some(g) => g.2.push(self.row_label(s)),
                        None => groups.push((*code, message, vec![self.row_label(s)])),
                    }
                }
            }
            let all = !self.evaluated(f);
            for (code, message, shown) in groups {
                let what = if all {
                    "skipped".to_string()
                } else {
                    format!("not simulated at {}", shown.join(", "))
                };
                out.push(format!("{} {what}: {message} ({code})", label(fam)));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
