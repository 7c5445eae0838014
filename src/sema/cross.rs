//! Checks that relate several declarations: the schedule family supports the collective, named
//! cost models exist, and each target can express the schedule; with the help lines they print.

use super::elab::Elab;
use super::head;
use crate::diag::{Code, Diagnostic, Span};
use crate::syntax::ast;

fn prop_span(props: &[ast::Prop], key: &str) -> Option<Span> {
    props
        .iter()
        .find(|p| p.key.name == key)
        .map(|p| p.value.span)
}

/// Where the block `item` (head span, properties) sets `key`: its value's span; the head when
/// the block is not in the main file. None when the key was not written as such: a misspelled
/// key (`mdoel: m`) is taken as `key` after its E0020, and its value gets no second error.
fn written(item: Option<(Span, &[ast::Prop])>, key: &str, head: Span) -> Option<Span> {
    match item {
        Some((_, props)) => prop_span(props, key),
        None => Some(head),
    }
}

/// Whether the main file declares model `m` (the only place models are declared). A declaration
/// with errors of its own counts: it has its diagnostic already, so a use of it is not reported
/// again as undeclared.
fn declared(m: &str, items: &[ast::Item]) -> bool {
    items
        .iter()
        .any(|i| matches!(i, ast::Item::Model { name, .. } if name.name == m))
}

/// Reports a reference to a cost model that is not declared.
fn unknown_model(
    elab: &mut Elab<'_>,
    m: &str,
    span: Span,
    user: &str,
    models: &[super::model::CostModel],
) {
    let names: Vec<&str> = models.iter().map(|x| x.name.as_str()).collect();
    let help = if names.is_empty() {
        format!(
            "declare it, e.g. `model {m}: pipelining_postal {{ alpha_p: 500 ns; alpha_r: 100 ns; beta: 0.4 ns/B; }}`"
        )
    } else {
        match super::suggest::closest(m, names.iter().copied()) {
            Some(s) => format!("did you mean `{s}`? declared models: {}", names.join(", ")),
            None => format!("declared models: {}", names.join(", ")),
        }
    };
    elab.err(
        Diagnostic::error(
            Code::UnknownName,
            span,
            format!("{user} uses model `{m}`, which is not declared"),
        )
        .label("no `model` declaration has this name")
        .help(help),
    );
}

/// Checks that relate several declarations. `items` are the main file's, for precise spans.
pub(super) fn cross_checks(
    elab: &mut Elab<'_>,
    items: &[ast::Item],
    topo: Option<&super::model::Topology>,
    coll: Option<&super::model::Collective>,
    sched: Option<&super::model::Schedule>,
    models: &[super::model::CostModel],
    targets: &[super::model::Target],
) {
    let coll_head = items.iter().find_map(|i| match i {
        ast::Item::Collective { kind, span, .. } => Some(head(*span, kind.span)),
        _ => None,
    });
    if let (Some(t), Some(c)) = (topo.filter(|_| !elab.topology_incomplete), coll) {
        if let Some(d) = super::checks::connectivity(t, &c.ranks, coll_head.unwrap_or(c.span)) {
            elab.err(d);
        }
    }
    let Some(s) = sched else { return };
    // The schedule's declaration, when it was written (`auto` may be implicit).
    let sched_item = items.iter().find_map(|i| match i {
        ast::Item::Schedule {
            family,
            props,
            span,
        } if *span == s.span => Some((head(*span, family.span), props.as_slice())),
        _ => None,
    });
    let s_head = sched_item.map(|x| x.0).unwrap_or(s.span);
    if let Some(c) = coll {
        if !super::schedule::supports(&s.family, c.kind) {
            elab.err(
                Diagnostic::error(
                    Code::BadValue,
                    s_head,
                    format!(
                        "schedule `{}` cannot implement {}",
                        s.family.name(),
                        c.kind.name()
                    ),
                )
                .label("unsupported collective for this family")
                .secondary(coll_head.unwrap_or(c.span), "collective declared here")
                .help(supported_help(c.kind)),
            );
        }
    }
    if let Some(t) = topo.filter(|_| !elab.topology_incomplete) {
        match &s.family {
            super::model::Family::Forest { .. } => {
                if let Some(d) = super::checks::symmetry(t, s_head) {
                    elab.err(d);
                }
            }
            super::model::Family::Canary(_) | super::model::Family::StaticTrees { .. }
                if !super::checks::has_switch(t) =>
            {
                elab.err(
                    Diagnostic::error(Code::BadValue, s_head, format!("`{}` aggregates in switches, but the topology has none", s.family.name()))
                        .label("in-network schedule without switches")
                        .help("declare switches in the topology, or use a host-based schedule such as `ring`"),
                );
            }
            _ => {}
        }
    }
    if let super::model::Family::RecursiveMultiplying { model: Some(m), .. } = &s.family {
        if let Some(span) = written(sched_item, "model", s_head)
            && !declared(m, items)
        {
            unknown_model(elab, m, span, "the schedule", models);
        }
    }
    for t in targets {
        let t_item = items.iter().find_map(|i| match i {
            ast::Item::Target { kind, props, span } if *span == t.span => {
                Some((head(*span, kind.span), props.as_slice()))
            }
            _ => None,
        });
        let t_head = t_item.map(|x| x.0).unwrap_or(t.span);
        if let Some(why) = t.kind.cannot_express(&s.family) {
            elab.err(
                Diagnostic::error(
                    Code::TargetUnsupported,
                    t_head,
                    format!(
                        "target `{}` cannot express a `{}` schedule",
                        t.kind.name(),
                        s.family.name()
                    ),
                )
                .label(why)
                .secondary(s_head, "schedule declared here")
                .help(s.family.target_help()),
            );
        } else if t.kind != super::model::TargetKind::Sim && !t.kind.has_backend() {
            elab.err(
                Diagnostic::error(
                    Code::TargetUnsupported,
                    t_head,
                    format!("collc cannot build the `{}` target yet", t.kind.name()),
                )
                .label(format!("collc has no `{}` backend yet", t.kind.name()))
                .help("build for `goal` (switches as ranks) or run `collc sim` for now; remove this block until the backend lands"),
            );
        }
        if let (super::model::TargetKind::Mpi, Some(c)) = (t.kind, coll) {
            if let Some(e) = crate::backend::mpi::unsupported_dtype(c.dtype) {
                elab.err(
                    e.diagnostic(t_head)
                        .secondary(coll_head.unwrap_or(c.span), "collective declared here"),
                );
            }
        }
        if let (super::model::TargetKind::Sim, Some(super::model::ModelParam::Word(m))) =
            (t.kind, t.options.get("model"))
        {
            if let Some(span) = written(t_item, "model", t_head)
                && !declared(m, items)
            {
                unknown_model(elab, m, span, "target `sim`", models);
            }
        }
    }
}

fn supported_help(kind: super::model::CollectiveKind) -> String {
    let fams: Vec<&str> = super::schedule::FAMILIES
        .iter()
        .map(|f| f.0)
        .filter(|f| {
            let fam = match *f {
                "recursive_multiplying" => super::model::Family::RecursiveMultiplying {
                    stages: super::model::AutoOr::Auto,
                    model: None,
                },
                "recursive_doubling" => super::model::Family::RecursiveDoubling,
                "ring" => super::model::Family::ring(),
                "binomial" => super::model::Family::Binomial,
                "nccl_tree" => super::model::Family::NcclTree {
                    chunks: super::model::AutoOr::Auto,
                },
                "forest" => super::model::Family::Forest {
                    k: super::model::AutoOr::Auto,
                    chunks: super::model::AutoOr::Auto,
                },
                "static_trees" => super::model::Family::static_trees(1),
                "pairwise" => super::model::Family::Pairwise { concurrent: false },
                "bruck" => super::model::Family::Bruck { radix: 2 },
                "hierarchical" => super::model::Family::Hierarchical,
                "mcf" => super::model::Family::Mcf {
                    chunks: super::model::AutoOr::Auto,
                },
                "canary" => return kind == super::model::CollectiveKind::Allreduce,
                _ => super::model::Family::Auto,
            };
            super::schedule::supports(&fam, kind)
        })
        .collect();
    format!("schedules for {}: {}", kind.name(), fams.join(", "))
}
