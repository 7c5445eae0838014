//! Words for hover and completion: declarations as written, doc comments, evaluated values, and
//! summaries of the checked model (node and link counts, rank counts, modelled costs, what a
//! stage encoding means).
//!
//! Values come from the checker: parameters from [`Model::params`], and top-level `let`s (which
//! the model does not keep) by evaluating them again with the elaborator, the same code `collc`
//! runs, quietly. Costs come from [`crate::cost`], the analytic models of the recursive
//! multiplying paper, as `stages: auto` uses them; the simulated time on the topology from the
//! driver's simulation job ([`crate::driver::sim::flow_figure`]), the figure `collc sim` prints.

use super::analysis::Analysis;
use crate::cost;
use crate::diag::Span;
use crate::sema::elab::{Elab, Limits};
use crate::sema::model::{AutoOr, CostModel, Family, Model, ModelParam, NodeKind, Stage};
use crate::sema::schedule::decode_stage;
use crate::sema::value::Value;
use crate::syntax::ast;
use num_rational::BigRational;
use num_traits::ToPrimitive;
use std::collections::BTreeMap;

/// The declaration as written, from its start up to its body (`{`) or its end (`;`), with runs
/// of whitespace collapsed: `generator ring(n: int, bw: bandwidth, lat: time = 0 ns)`.
pub fn head(text: &str, span: Span) -> String {
    let src = text.get(span.range()).unwrap_or("");
    let mut depth = 0i32;
    let mut end = src.len();
    for (i, c) in src.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '{' if depth <= 0 => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let mut out = String::new();
    for line in src[..end].lines() {
        let code = line.split("//").next().unwrap_or("");
        for w in code.split_whitespace() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(w);
        }
    }
    out.trim_end_matches(';').trim_end().to_string()
}

/// The `//` comment lines right above byte `start` (blank lines allowed between them and the
/// declaration), stopping at code; the `//` and one following space removed.
pub fn doc_comment(text: &str, start: usize) -> Vec<String> {
    let before = text.get(..start).unwrap_or("");
    let mut lines: Vec<&str> = Vec::new();
    for line in before.lines().rev() {
        let t = line.trim();
        if let Some(c) = t.strip_prefix("//") {
            lines.push(c.strip_prefix(' ').unwrap_or(c));
        } else if t.is_empty() {
            if !lines.is_empty() && lines.last() != Some(&"") {
                lines.push("");
            }
        } else {
            break;
        }
    }
    let mut out: Vec<String> = lines.into_iter().rev().map(str::to_string).collect();
    while out.first().is_some_and(|l| l.is_empty()) {
        out.remove(0);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}

/// A value as the user would write it.
pub fn show_value(v: &Value) -> String {
    match v {
        Value::Num(q) => q.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Str(s) => format!("{s:?}"),
        Value::List(items) if items.len() > 16 => format!("[... {} items]", items.len()),
        Value::List(items) => format!(
            "[{}]",
            items.iter().map(show_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Range(a, b) => format!("{a}..{b}"),
        Value::Auto => "auto".into(),
        Value::Nodes(n) if n.len() == 1 => "1 node".into(),
        Value::Nodes(n) => format!("{} nodes", n.len()),
    }
}

/// The values of every top-level `let` and `param` (parameters as the checker settled them),
/// evaluated in dependency order. Names whose value cannot be computed are absent.
pub fn global_values(an: &Analysis) -> BTreeMap<String, String> {
    let nav = an.nav();
    let mut el = Elab::new(Limits::default());
    let mut out = BTreeMap::new();
    for (_, tree) in &nav.trees {
        for item in &tree.items {
            let (name, e) = match item {
                ast::Item::Let { name, value, .. } => (name, value),
                ast::Item::Param { name, default, .. } => (name, default),
                _ => continue,
            };
            if el.globals.contains_key(&name.name) {
                continue;
            }
            if let Some(v) = el.eval(e) {
                out.insert(name.name.clone(), show_value(&v));
                el.globals.insert(name.name.clone(), (v, name.span));
            }
        }
    }
    if let Some(m) = &an.model {
        out.extend(m.params.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    out
}

/// Seconds as a short human time: `3.42 µs`.
pub fn seconds(v: &BigRational) -> String {
    let s = v.to_f64().unwrap_or(f64::NAN);
    let (x, unit) = if s == 0.0 {
        (0.0, "s")
    } else if s.abs() < 1e-6 {
        (s * 1e9, "ns")
    } else if s.abs() < 1e-3 {
        (s * 1e6, "µs")
    } else if s.abs() < 1.0 {
        (s * 1e3, "ms")
    } else {
        (s, "s")
    };
    let digits = if x.abs() >= 100.0 {
        1
    } else if x.abs() >= 10.0 {
        2
    } else {
        3
    };
    format!("{x:.digits$} {unit}")
}

/// What a stage encoding does (Section 4.2 of the recursive multiplying paper).
pub fn stage_meaning(word: &str) -> String {
    match decode_stage(word) {
        None => format!("`{word}` is not a stage encoding"),
        Some(Err(e)) => format!("invalid stage: {e}"),
        Some(Ok(s)) => match s {
            Stage::Factor { base } => format!(
                "factor stage `a{base}`: each rank of the group exchanges with {} peer{} in groups of {base}; the group's factors must multiply to its size",
                base - 1,
                if base == 2 { "" } else { "s" }
            ),
            Stage::Collapse { threshold, base } => format!(
                "collapse `c{threshold}m{base}`: the ranks below {threshold} fold in blocks of {base} into one rank each, so a group of n ranks shrinks to {} + (n - {threshold}); closed by `e{threshold}m{base}`",
                threshold / base.max(1)
            ),
            Stage::Expand { threshold, base } => format!(
                "expand `e{threshold}m{base}`: undoes the collapse `c{threshold}m{base}`, sending each block's result back to its {base} ranks"
            ),
            Stage::Merge {
                remainder,
                groups,
                base,
            } => format!(
                "merge `m{remainder}g{groups}a{base}`: sets {remainder} remainder rank{} aside, each feeding one of {groups} group{} of the first factor-{base} stage; closed by `n{remainder}g{groups}a{base}`",
                if remainder == 1 { "" } else { "s" },
                if groups == 1 { "" } else { "s" }
            ),
            Stage::InvMerge {
                remainder,
                groups,
                base,
            } => format!(
                "inverse merge `n{remainder}g{groups}a{base}`: the last factor-{base} stage, returning the result to the {remainder} remainder rank{} set aside by `m{remainder}g{groups}a{base}`",
                if remainder == 1 { "" } else { "s" }
            ),
        },
    }
}

/// Node and link counts of the checked topology.
pub fn topology_summary(model: &Model) -> Option<String> {
    let t = model.topology.as_ref()?;
    let compute = t
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Compute)
        .count();
    let switches = t.nodes.len() - compute;
    Some(format!(
        "{} nodes ({compute} compute, {switches} switch{}), {} links ({} directed edges)",
        t.nodes.len(),
        if switches == 1 { "" } else { "es" },
        t.links.len(),
        t.edge_count()
    ))
}

/// How many nodes of the checked topology come from node arrays named `name` (in the topology
/// itself or in any generator instance).
pub fn array_count(model: &Model, name: &str) -> Option<usize> {
    let t = model.topology.as_ref()?;
    let n = t
        .nodes
        .iter()
        .filter(|n| {
            let last = n.name.rsplit('.').next().unwrap_or(&n.name);
            last.split('[').next() == Some(name)
        })
        .count();
    Some(n)
}

/// The collective: kind, ranks, size, type and operation.
pub fn collective_summary(model: &Model) -> Option<String> {
    let c = model.collective.as_ref()?;
    let data = if c.kind == crate::sema::model::CollectiveKind::Barrier {
        "no data".to_string()
    } else {
        format!(
            "{} elements of {} ({} B)",
            c.count,
            c.dtype.name(),
            c.bytes()
        )
    };
    let mut s = format!(
        "{} over {} rank{}: {data}",
        c.kind.name(),
        c.ranks.len(),
        if c.ranks.len() == 1 { "" } else { "s" },
    );
    if c.kind.reduces() {
        s.push_str(&format!(", op {}", c.op.name()));
    }
    if c.kind.exchanges() {
        let n = c.ranks.len().max(1) as u64;
        s.push_str(&format!(
            ", each rank's send buffer: {n} blocks of {} B, one per rank",
            c.bytes() / n
        ));
    }
    if let Some(r) = c.root {
        s.push_str(&format!(", root rank {r}"));
    }
    Some(s)
}

/// The schedule: family, rank count, stages and the modelled cost where collc has a model for
/// the family (recursive multiplying and recursive doubling), and the time `collc sim` gives
/// when it runs the file under the flow model. Lines of text.
pub fn schedule_summary(model: &Model) -> Vec<String> {
    let Some(s) = &model.schedule else {
        return Vec::new();
    };
    let mut out = vec![format!("schedule {}", s.family.name())];
    let Some(c) = &model.collective else {
        return out;
    };
    let n = c.ranks.len() as u64;
    let bytes = c.bytes();
    out.push(format!("{n} rank{}", if n == 1 { "" } else { "s" }));
    // The family and the model `stages: auto` is chosen under are the lowering's
    // (`lower::family_of`, `cost::schedule_model`), so hover shows the stage list collc builds.
    // Choosing simulates every family; on large files that takes seconds, which a hover must
    // not, so there the hover says where to see the choice instead.
    let small = c.ranks.len() <= 64;
    let resolved = if small {
        crate::choose::resolve(model).ok()
    } else {
        None
    };
    let model = resolved.as_ref().map_or(model, |r| &r.0);
    let family = crate::lower::family_of(model, c.kind);
    if matches!(s.family, Family::Auto) {
        match resolved.as_ref().and_then(|r| r.1.as_ref()) {
            Some(pick) => out.push(pick.describe().replacen("schedule auto", "`auto`", 1)),
            None if !small && model.topology.is_some() => out.push(
                "`auto` is chosen by simulating every family on the topology; `collc build --emit report` shows the choice".to_string(),
            ),
            None => out.push(format!("`auto` lowers as {}", family.name())),
        }
    }
    let named = |m: &Option<String>| cost::schedule_model(&model.models, m.as_deref());
    let basis = |m: Option<&CostModel>| match m {
        Some(m) if m.kind != crate::sema::model::CostModelKind::Flow => {
            format!("model `{}` ({})", m.name, m.kind.name())
        }
        _ if model.topology.is_some() => {
            "the pipelining postal model, parameters derived from the topology".to_string()
        }
        _ => "the paper's Section 6 parameters".to_string(),
    };
    let params_of = |m: &Option<String>| cost::derived::basis_for_file(model, m.as_deref()).params;
    let list = |st: &[Stage]| {
        format!(
            "[{}]",
            st.iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    match &family {
        Family::RecursiveMultiplying { stages, model: m } => {
            let cm = named(m);
            let p = params_of(m);
            match stages {
                AutoOr::Fixed(st) => {
                    let total = cost::schedule_cost_with(st, n, &p, bytes);
                    out.push(format!("stages {}", list(st)));
                    out.push(format!(
                        "modelled cost {} for {bytes} B messages under {}",
                        seconds(&total),
                        basis(cm)
                    ));
                }
                AutoOr::Auto => {
                    let choice = crate::lower::auto_basis(model, c, m.as_deref()).auto(n, bytes);
                    out.push(format!("stages: auto chooses {}", list(&choice.stages)));
                    out.push(format!(
                        "modelled cost {} for {bytes} B messages under {} (recursive doubling: {})",
                        seconds(&choice.cost),
                        basis(cm),
                        seconds(&choice.recursive_doubling_cost)
                    ));
                }
            }
        }
        Family::RecursiveDoubling => {
            let st = cost::doubling_stages(n);
            let cm = cost::schedule_model(&model.models, None);
            let total = cost::schedule_cost_with(&st, n, &params_of(&None), bytes);
            out.push(format!("stages {}", list(&st)));
            out.push(format!(
                "modelled cost {} for {bytes} B messages under {}",
                seconds(&total),
                basis(cm)
            ));
        }
        Family::Forest { k, chunks } => out.extend(forest_summary(model, c, *k, *chunks)),
        other => out.push(format!("no analytic cost model for `{}`", other.name())),
    }
    // The figure `collc sim` gives, from the same driver call, when it runs the file on its
    // topology under the flow model; for files small enough to simulate while the editor
    // waits.
    if small && let Some(o) = crate::driver::sim::flow_figure(model) {
        let t = BigRational::from_float(o.seconds).unwrap_or_default();
        out.push(format!(
            "simulated {} on the topology, as `collc sim` runs it: {}",
            seconds(&t),
            o.engine
        ));
    }
    out
}

/// Most ranks hover solves a forest for (solving is quick up to here; the 1,024-GPU examples
/// take seconds to minutes).
const HOVER_SOLVE_RANKS: usize = 64;

/// A forest's `k` and `chunks`, and for up to [`HOVER_SOLVE_RANKS`] ranks the chunk count and
/// what the forest model says of it ([`crate::forest::chunking::choose`], as lowering and the
/// report use it).
fn forest_summary(
    model: &Model,
    c: &crate::sema::model::Collective,
    k: AutoOr<u64>,
    chunks: AutoOr<u64>,
) -> Vec<String> {
    let word = |x: AutoOr<u64>| match x {
        AutoOr::Auto => "auto".to_string(),
        AutoOr::Fixed(n) => n.to_string(),
    };
    let mut out = vec![format!("k: {}, chunks: {}", word(k), word(chunks))];
    if c.ranks.len() > HOVER_SOLVE_RANKS {
        out.push(format!(
            "{} ranks: `collc build --emit report` solves the forest and shows the chunk count",
            c.ranks.len()
        ));
        return out;
    }
    let Ok((forests, ch)) = crate::lower::forest::solve_chunked(model, c, k, chunks, c.span) else {
        return out;
    };
    let Some(topo) = model.topology.as_ref() else {
        return out;
    };
    let refs: Vec<&crate::forest::Forest> = forests.iter().collect();
    let params = crate::net::for_file(model, None);
    let per_root = crate::forest::chunking::per_root(c);
    let depth = crate::forest::chunking::trees(topo, &params, &per_root, &refs)
        .iter()
        .map(|t| t.depth)
        .max()
        .unwrap_or(0);
    out.extend(
        ch.describe(c, depth, &params)
            .into_iter()
            .map(|l| l.trim().to_string()),
    );
    out
}

/// A cost model's parameters (`L = 2.5 us, o = ...`).
pub fn model_params(m: &CostModel) -> String {
    m.params
        .iter()
        .map(|(k, v)| match v {
            ModelParam::Quantity(q) => format!("{k}: {q}"),
            ModelParam::Word(w) => format!("{k}: {w}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Usage of a built-in function.
pub fn builtin_usage(name: &str) -> &'static str {
    match name {
        "min" => "min(a, b, ...): the smallest argument",
        "max" => "max(a, b, ...): the largest argument",
        "abs" => "abs(x): the absolute value",
        "floor" => "floor(x): the largest integer not above x",
        "ceil" => "ceil(x): the smallest integer not below x",
        "pow" => "pow(x, n): x to the integer power n",
        "len" => "len(xs): the number of items of a list or range",
        "first" => {
            "first(xs, n): the first n items of a list, or n nodes of a node array in row-major order"
        }
        _ => "a built-in function",
    }
}
