//! The report job (`collc build FILE --emit report`, Python's `Session.report()`): what the file
//! builds and when its artifacts are used, as a list of sections (data: a title and lines),
//! rendered to text by [`Report::render`]. Each section is a function of the checked model and
//! the MSCCL overrides in
//! [`SECTIONS`] that returns its lines, or nothing when it does not apply; a new section is one
//! more entry. A resolved `schedule auto` puts its choice first. The forest section (ForestColl schedules only) gives the optimum, k, y, the
//! bottleneck cut and the ring bound (`forest::report`); the all-to-all section, the
//! topology-optimal all-to-all time and its cut (`mcf`).
//!
//! The MSCCL section builds the XML exactly as `--target msccl` would (same flags, same
//! validation) and states every condition under which the runtime selects it
//! (`backend::msccl::select`), checked against the call the file describes: the op, the
//! communicator size, in place or not, the divisibility of the element count by
//! `nchunksperloop`, and the message-size window. Users of MSCCL most often ask why their XML
//! is not used; its last line says whether it would be, and if not, which conditions fail.
//! A Canary schedule gets its closed forms (`report_canary`) without being lowered. The report
//! ends with what to run next on the file.

use super::{Failure, MscclOverrides, Session};
use crate::backend::msccl::select::{self, Call};
use crate::backend::msccl::selectable;
use crate::cost;
use crate::diag::Diagnostic;
use crate::sema::model::{AutoOr, CollectiveKind, Family, Model};

mod canary;
mod net;
mod trees;

pub(crate) use canary::{name_file, replay};

/// A titled block of the report.
#[derive(Clone, Debug)]
pub struct Section {
    pub title: String,
    pub lines: Vec<String>,
    /// Warnings found while making it (E0045 for a forest's `chunks`).
    pub warnings: Vec<Diagnostic>,
}

/// The report: its sections in order, and the warnings made (each once).
#[derive(Clone, Debug)]
pub struct Report {
    pub sections: Vec<Section>,
    pub warnings: Vec<Diagnostic>,
}

impl Report {
    /// The text `collc build --emit report` prints: each section under `== title ==`, a blank
    /// line between sections.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for s in &self.sections {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&format!("== {} ==\n", s.title));
            for l in &s.lines {
                out.push_str(l);
                out.push('\n');
            }
        }
        out
    }
}

impl Session {
    /// The report of this file under the MSCCL overrides `msccl` (the file's `target msccl`
    /// block where they say nothing).
    pub fn report(&self, msccl: &MscclOverrides) -> Result<Report, Failure> {
        let mut r = report(&self.model, msccl).map_err(|d| self.fail(d))?;
        if let Some(p) = &self.pick {
            let text = p.section();
            let mut lines = text.lines();
            let title = lines
                .next()
                .unwrap_or_default()
                .trim_start_matches("== ")
                .trim_end_matches(" ==")
                .to_string();
            r.sections.insert(
                0,
                Section {
                    title,
                    lines: lines.map(str::to_string).collect(),
                    warnings: Vec::new(),
                },
            );
        }
        Ok(r)
    }
}

type SectionFn = fn(&Model, &MscclOverrides) -> Result<Option<Section>, Vec<Diagnostic>>;

/// The report's sections, in order.
const SECTIONS: &[SectionFn] = &[
    collective,
    modelled_cost,
    network_cost,
    canary,
    static_trees,
    forest,
    alltoall_optimum,
    msccl_selection,
    next,
];

/// The whole report and its warnings (each once), or the diagnostics of the first section
/// that failed.
fn report(m: &Model, a: &MscclOverrides) -> Result<Report, Vec<Diagnostic>> {
    // The sections lower and simulate alternatives too: refuse an oversized program first.
    crate::lower::check_size(m)?;
    let kept = with_forests(m);
    let m = kept.as_ref().unwrap_or(m);
    let mut sections = Vec::new();
    let mut warnings: Vec<Diagnostic> = Vec::new();
    for f in SECTIONS {
        if let Some(s) = f(m, a)? {
            for w in &s.warnings {
                if !warnings.contains(w) {
                    warnings.push(w.clone());
                }
            }
            sections.push(s);
        }
    }
    Ok(Report { sections, warnings })
}

fn canary(m: &Model, _: &MscclOverrides) -> Result<Option<Section>, Vec<Diagnostic>> {
    canary::section(m)
}

fn static_trees(m: &Model, _: &MscclOverrides) -> Result<Option<Section>, Vec<Diagnostic>> {
    trees::section(m)
}

fn collective(m: &Model, _: &MscclOverrides) -> Result<Option<Section>, Vec<Diagnostic>> {
    let Some(c) = &m.collective else {
        return Ok(None);
    };
    let schedule = m.schedule.as_ref().map_or("auto", |s| s.family.name());
    Ok(Some(Section {
        warnings: Vec::new(),
        title: "collective".into(),
        lines: vec![format!(
            "{} of {} x {} ({} bytes){}, {} ranks; schedule {schedule}",
            c.kind.name(),
            c.count,
            c.dtype.name(),
            c.bytes(),
            if c.kind.reduces() {
                format!(", op {}", c.op.name())
            } else {
                String::new()
            },
            c.ranks.len()
        )],
    }))
}

/// For recursive multiplying and recursive doubling (and `schedule auto;` on an allreduce or
/// barrier, which lowers as recursive multiplying): the modelled cost of the stage list collc
/// builds, stage by stage, recursive doubling's beside it and, for `stages: auto`, `b_opt` and the
/// size of the search (`cost::report_for`, `cost::report_fixed`).
fn modelled_cost(m: &Model, _: &MscclOverrides) -> Result<Option<Section>, Vec<Diagnostic>> {
    let Some(c) = &m.collective else {
        return Ok(None);
    };
    let (n, bytes) = (c.ranks.len() as u64, c.bytes());
    let text = match crate::lower::family_of(m, c.kind) {
        Family::RecursiveMultiplying { stages, model } => {
            let b = crate::lower::auto_basis(m, c, model.as_deref());
            match stages {
                AutoOr::Auto => cost::report::report_basis(n, &b, bytes),
                AutoOr::Fixed(st) => {
                    cost::report::report_fixed_basis("recursive multiplying", &st, n, &b, bytes)
                }
            }
        }
        Family::RecursiveDoubling => {
            let b = crate::lower::auto_basis(m, c, None);
            let st = cost::doubling_stages(n);
            cost::report::report_fixed_basis("recursive doubling", &st, n, &b, bytes)
        }
        _ => return Ok(None),
    };
    let derived = m.topology.is_some()
        && cost::schedule_model(&m.models, None)
            .is_none_or(|x| x.kind == crate::sema::model::CostModelKind::Flow);
    let mut text: Vec<String> = text.lines().map(str::to_owned).collect();
    if derived {
        let b = crate::lower::auto_basis(m, c, None);
        let built = match crate::lower::family_of(m, c.kind) {
            Family::RecursiveMultiplying {
                stages: AutoOr::Fixed(st),
                ..
            } => st,
            _ => b.auto(n, bytes).stages,
        };
        let rd = cost::doubling_stages(n);
        let auto = b.auto(n, bytes).stages;
        let mut lists = vec![("stages", built.clone())];
        if rd != built {
            lists.push(("recursive doubling", rd.clone()));
        }
        if auto != built && auto != rd {
            lists.push(("auto would choose", auto));
        }
        text.push(
            "  the parameters above charge each message its sender's link only, to rank stage lists quickly"
                .to_string(),
        );
        text.extend(net::stage_lists(m, &lists));
    }
    Ok(Some(Section {
        title: "modelled cost".into(),
        lines: text,
        warnings: Vec::new(),
    }))
}

fn network_cost(m: &Model, _: &MscclOverrides) -> Result<Option<Section>, Vec<Diagnostic>> {
    net::section(m)
}

/// ForestColl's optimum, trees, bottleneck cut and the ring bound, for forest schedules only
/// (solving is the expensive part, so other families skip it).
fn forest(m: &Model, _: &MscclOverrides) -> Result<Option<Section>, Vec<Diagnostic>> {
    if !forest_schedule(m) {
        return Ok(None);
    }
    let (text, warnings) = crate::forest::report::for_model(m)?;
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    // The figure `collc sim`, `collc compare` and `schedule auto` give, from the same call.
    if let Ok(o) = crate::driver::sim::flow_run(m)
        && o.seconds > 0.0
    {
        let chunks = o.chunks.unwrap_or(1);
        lines.push(format!(
            "  flow simulation of the trees with {chunks} chunk{} (`collc sim`, `collc compare`): {}, algbw {:.2} GB/s",
            if chunks == 1 { "" } else { "s" },
            crate::sim::fluid::show_seconds(o.seconds),
            o.algbw.unwrap_or(0.0) / 1e9
        ));
    }
    Ok(Some(Section {
        title: "forest".into(),
        lines,
        warnings,
    }))
}

/// The topology-optimal all-to-all time ([`crate::mcf`]) for every all-to-all on a topology,
/// whatever its schedule: the bound the `mcf` schedule attains, to read the others against.
fn alltoall_optimum(m: &Model, _: &MscclOverrides) -> Result<Option<Section>, Vec<Diagnostic>> {
    let (Some(c), Some(topo)) = (&m.collective, &m.topology) else {
        return Ok(None);
    };
    if !c.kind.exchanges() {
        return Ok(None);
    }
    let block = c.bytes() / (c.ranks.len() as u64).max(1);
    let mut lines = match crate::mcf::cached(topo, &c.ranks) {
        Ok(opt) => vec![
            opt.describe(topo, block),
            format!(
                "model: the maximum concurrent flow of the {} blocks on the links as declared (any routing and splitting, relaying through any node, bandwidth only: no per-message costs); {}",
                c.ranks.len() * c.ranks.len().saturating_sub(1),
                if opt.proved() {
                    "proved: a routing attains the bound"
                } else {
                    "the routing found and the dual bound bracket it"
                }
            ),
        ],
        Err(e) => vec![format!("no optimum: {e}")],
    };
    lines.push(
        "`schedule mcf;` routes every block over the flow's paths; `collc compare` weighs it beside the other families"
            .into(),
    );
    Ok(Some(Section {
        title: "all-to-all optimum".into(),
        lines,
        warnings: Vec::new(),
    }))
}

/// `m` with its forests solved once ([`crate::lower::forest::Solved`]) for the sections that
/// need them: the forest section's allreduce pair and the collective's own (the MSCCL
/// section builds with them); `None` when `m` is no forest schedule or does not solve (the
/// sections then say why).
fn with_forests(m: &Model) -> Option<Model> {
    let Some(Family::Forest { k, .. }) = m.schedule.as_ref().map(|s| &s.family) else {
        return None;
    };
    let c = m.collective.as_ref()?;
    let both = crate::sema::model::Collective {
        kind: CollectiveKind::Allreduce,
        root: None,
        ..c.clone()
    };
    let kept = crate::lower::forest::Solved::new(m, &[&both, c], *k, &crate::progress::Quiet);
    Some(Model {
        solved: Some(std::sync::Arc::new(kept.ok()?)),
        ..m.clone()
    })
}

fn forest_schedule(m: &Model) -> bool {
    matches!(
        m.schedule.as_ref().map(|s| &s.family),
        Some(Family::Forest { .. })
    )
}

fn msccl_selection(m: &Model, a: &MscclOverrides) -> Result<Option<Section>, Vec<Diagnostic>> {
    let Some(c) = &m.collective else {
        return Ok(None);
    };
    let in_network = m.schedule.as_ref().is_some_and(|s| s.family.in_network());
    if c.kind == CollectiveKind::Barrier || in_network {
        return Ok(None);
    }
    let e = match crate::backend::msccl::build(m, &a.options(m)) {
        Ok(e) => e,
        // The other sections (costs, the forest's) are still worth reading: say why there is
        // no XML instead of failing the whole report.
        Err(d) => {
            let mut lines = vec!["this schedule cannot be written as MSCCL XML:".to_owned()];
            for x in d.iter().take(3) {
                lines.push(format!("  error[{}]: {}", x.code, x.message));
                if let Some(h) = &x.help {
                    lines.push(format!("  help: {h}"));
                }
            }
            if d.len() > 3 {
                lines.push(format!(
                    "  ({} more; `--target msccl` lists them)",
                    d.len() - 3
                ));
            }
            return Ok(Some(Section {
                title: "msccl".into(),
                lines,
                warnings: Vec::new(),
            }));
        }
    };
    let x = &e.algo;
    let tbs: usize = x.gpus.iter().map(|g| g.tbs.len()).max().unwrap_or(0);
    let steps: usize = x
        .gpus
        .iter()
        .flat_map(|g| &g.tbs)
        .map(|t| t.steps.len())
        .max()
        .unwrap_or(0);
    let opts = a.options(m);
    let mut lines = vec![
        format!(
            "XML: coll=\"{}\" ngpus={} proto={} nchannels={} nchunksperloop={} inplace={} outofplace={} minBytes={} maxBytes={}",
            x.coll,
            x.ngpus,
            x.proto.name(),
            x.nchannels,
            x.nchunksperloop,
            u8::from(x.inplace),
            u8::from(x.outofplace),
            x.min_bytes,
            x.max_bytes
        ),
        format!(
            "up to {} per GPU (all must be resident at once: keep this at most the GPU's SM count), up to {} per thread block (limit {})",
            crate::diag::counted(tbs as u64, "thread block"),
            crate::diag::counted(steps as u64, "step"),
            opts.max_steps
        ),
        format!(
            "validated: read back, every executor rule checked, executed symbolically ({} ops, {} messages)",
            e.proof.ops, e.proof.messages
        ),
    ];
    let top = if x.max_bytes > 0 {
        x.max_bytes as u64
    } else {
        selectable::OPEN_TOP.max(c.dtype.bytes() * c.count)
    };
    lines.push(format!(
        "nccl-tests' sizes 8 B .. {}: {}",
        crate::compare::sizes::show(top),
        selectable::describe(x, c.dtype.bytes(), top)
    ));
    if let Some(p) = e.selection.as_ref().filter(|p| p.cpp != p.from) {
        lines.push(format!(
            "chunks: the program's {} per part refined to {} so that those sizes select it (at most {} of the model's bandwidth lost to unequal chunks)",
            p.from,
            p.cpp,
            selectable::percent(p.loss)
        ));
    }
    lines.push(String::new());
    lines.push("The runtime uses this XML for a call only if all of these hold:".into());
    let n = c.ranks.len() as u64;
    let call = Call {
        kind: c.kind,
        count: select::call_count(c.kind, c.count, n),
        type_bytes: c.dtype.bytes(),
        op: c.op,
        ranks: n,
        inplace: opts.inplace,
        root: c.root.map(|r| r as u64),
    };
    let conds = select::conditions(x, Some(&call));
    let mut failed = Vec::new();
    for k in &conds {
        let mark = match k.holds {
            Some(true) => "yes",
            Some(false) => "NO ",
            None => " ? ",
        };
        let detail = if k.detail.is_empty() {
            String::new()
        } else {
            format!(" ({})", k.detail)
        };
        lines.push(format!("  [{mark}] {}{detail}", k.what));
        if k.holds == Some(false) {
            failed.push(k.what.clone());
        }
    }
    lines.push(String::new());
    if failed.is_empty() {
        lines.push(format!(
            "Verdict: the call this file describes ({} with count {}) selects this XML, unless an XML earlier in sorted file-name order matches first.",
            c.kind.name(),
            call.count
        ));
    } else {
        lines.push(format!(
            "Verdict: the call this file describes is NOT run by this XML; NCCL silently uses its own algorithm because {} condition{} fail{}.",
            failed.len(),
            if failed.len() == 1 { "" } else { "s" },
            if failed.len() == 1 { "s" } else { "" }
        ));
    }
    Ok(Some(Section {
        title: "MSCCL: when the runtime uses this XML".into(),
        lines,
        warnings: e.warnings.clone(),
    }))
}

/// What to run next on the file (FILE): simulate it, write what it builds, compare families.
fn next(m: &Model, _: &MscclOverrides) -> Result<Option<Section>, Vec<Diagnostic>> {
    let Some(s) = &m.schedule else {
        return Ok(None);
    };
    let in_network = matches!(s.family, Family::Canary(_) | Family::StaticTrees { .. });
    let (sim, emit) = if in_network {
        (
            (
                "collc sim FILE --model NAME",
                "simulate it under a declared `loggp` or postal model (switches as ranks)",
            ),
            (
                "collc build FILE --target goal -o FILE.goal",
                "write the schedule as GOAL for LogGOPSim",
            ),
        )
    } else {
        (
            (
                "collc sim FILE",
                "run it on the topology: time, algbw, busbw, finish time per rank, busiest links",
            ),
            (
                "collc build FILE --target msccl -o FILE.xml",
                "write the MSCCL XML of the msccl section (or `--target goal`, `--target mpi -o DIR`)",
            ),
        )
    };
    let compare = (
        "collc compare FILE",
        "every schedule family over a range of sizes, and the winner at each",
    );
    // Canary is a protocol, not a program of sends: the packet simulator runs it, and the P4
    // target writes it for switches.
    let rows: &[(&str, &str)] = if matches!(s.family, Family::Canary(_)) {
        &[
            (
                "collc sim FILE",
                "run the protocol at packet level (a declared `packet` model, else its defaults)",
            ),
            (
                "collc build FILE --target p4 -o DIR",
                "write the switch program, its table entries and the host program",
            ),
            compare,
        ]
    } else {
        &[sim, emit, compare]
    };
    let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    Ok(Some(Section {
        title: "next (FILE is this file)".into(),
        lines: rows
            .iter()
            .map(|(cmd, what)| format!("{cmd:width$}   {what}"))
            .collect(),
        warnings: Vec::new(),
    }))
}
