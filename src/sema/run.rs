//! The checking pass proper: registers generators, evaluates `let`/`param` (command-line
//! overrides win), elaborates the topology, the collective, the schedule, cost models and targets,
//! and builds the [`Model`] from what succeeded.

use super::cross::cross_checks;
use super::elab::{Elab, GenDef};
use super::head;
use super::model::Model;
use super::{Loaded, Options};
use crate::diag::{Code, Diagnostic, FileId, SourceMap, Span};
use crate::syntax::{self, ast};
use std::collections::{BTreeMap, HashMap};

pub(super) fn run<'a>(
    elab: &mut Elab<'a>,
    sources: &SourceMap,
    loaded: &'a [Loaded],
    main: FileId,
    opts: &Options,
) -> Option<Model> {
    // Generators from every file.
    let mut gen_spans: HashMap<String, Span> = HashMap::new();
    for l in loaded {
        for item in &l.ast.items {
            if let ast::Item::Generator {
                name, params, body, ..
            } = item
            {
                if let Some(prev) = gen_spans.get(&name.name) {
                    elab.err(
                        Diagnostic::error(
                            Code::DuplicateName,
                            name.span,
                            format!("generator `{}` is defined twice", name.name),
                        )
                        .label("defined again")
                        .secondary(*prev, "first defined here")
                        .help("rename one of them"),
                    );
                    continue;
                }
                gen_spans.insert(name.name.clone(), name.span);
                elab.generators
                    .insert(name.name.clone(), GenDef { name, params, body });
            }
        }
    }
    // Globals, dependencies first.
    let mut overrides: BTreeMap<String, (String, bool)> = opts
        .params
        .iter()
        .map(|(k, v)| (k.clone(), (v.clone(), false)))
        .collect();
    let mut param_values: BTreeMap<String, String> = BTreeMap::new();
    for l in loaded {
        for item in &l.ast.items {
            let (name, value, ty, is_param) = match item {
                ast::Item::Let { name, value, .. } => (name, value, None, false),
                ast::Item::Param {
                    name, default, ty, ..
                } => (name, default, ty.as_ref(), l.file == main),
                _ => continue,
            };
            if let Some((_, prev)) = elab.globals.get(&name.name) {
                let prev = *prev;
                elab.err(
                    Diagnostic::error(
                        Code::DuplicateName,
                        name.span,
                        format!("`{}` is defined twice", name.name),
                    )
                    .label("defined again")
                    .secondary(prev, "first defined here")
                    .help("rename one of them"),
                );
                continue;
            }
            let v = match overrides.get_mut(&name.name).filter(|_| is_param) {
                Some((text, used)) => {
                    *used = true;
                    override_value(elab, &name.name, text, value.span)
                }
                None => elab.eval(value),
            };
            let Some(v) = v else {
                elab.poisoned.insert(name.name.clone());
                continue;
            };
            if let Some(ty) = ty {
                if !elab.check_type(&v, ty, value.span, &name.name) {
                    elab.poisoned.insert(name.name.clone());
                    continue;
                }
            }
            if is_param {
                param_values.insert(name.name.clone(), show_value(&v));
            }
            elab.globals.insert(name.name.clone(), (v, name.span));
        }
    }
    let file_start = Span::new(main, 0, 0);
    for (k, (_, used)) in &overrides {
        if !used {
            elab.err(
                Diagnostic::error(
                    Code::UnknownName,
                    file_start,
                    format!("`--param {k}=...` names no `param` of this file"),
                )
                .label("unknown parameter")
                .help("declare it with `param name = default;` or fix the name"),
            );
        }
    }
    // Imported files may only define generators, lets and params.
    for l in loaded.iter().filter(|l| l.file != main) {
        for item in &l.ast.items {
            if matches!(
                item,
                ast::Item::Topology { .. }
                    | ast::Item::Collective { .. }
                    | ast::Item::Schedule { .. }
                    | ast::Item::Model { .. }
                    | ast::Item::Target { .. }
            ) {
                elab.err(
                    Diagnostic::error(Code::BadValue, item.span(), format!("`{}` declares more than generators", sources.get(l.file).name))
                        .label("only allowed in the main file")
                        .help("imported files may define generators, `let` and `param` only; move this declaration into the main file"),
                );
            }
        }
    }
    let main_ast = &loaded.iter().find(|l| l.file == main)?.ast;
    let mut topology = None;
    let mut first: HashMap<&str, Span> = HashMap::new();
    let mut once = |elab: &mut Elab<'a>, what: &'static str, span: Span| -> bool {
        if let Some(prev) = first.get(what) {
            elab.err(
                Diagnostic::error(
                    Code::DuplicateName,
                    span,
                    format!("a second `{what}` declaration"),
                )
                .label("declared again")
                .secondary(*prev, "first declared here")
                .help(format!("a file describes one {what}; remove one")),
            );
            return false;
        }
        first.insert(what, span);
        true
    };
    for item in &main_ast.items {
        if let ast::Item::Topology { name, body, span } = item {
            if !once(elab, "topology", head(*span, name.span)) {
                continue;
            }
            let before = elab.diags.len();
            topology = Some(match body {
                ast::TopologyBody::Block(stmts) => elab.topology_block(name, stmts, *span),
                ast::TopologyBody::Call(call) => elab.topology_call(name, call, *span),
            });
            // Checks of the whole topology would only echo what went wrong while building it.
            elab.topology_incomplete = elab.diags.len() > before;
        }
    }
    let mut models = Vec::new();
    let mut model_names: HashMap<String, Span> = HashMap::new();
    let mut targets: Vec<super::model::Target> = Vec::new();
    let mut collective = None;
    let mut coll_decl: Option<Span> = None;
    let mut sched_items = Vec::new();
    for item in &main_ast.items {
        match item {
            ast::Item::Collective { kind, props, span } => {
                if !once(elab, "collective", head(*span, kind.span)) {
                    continue;
                }
                coll_decl = Some(*span);
                match &topology {
                    Some(t) => collective = elab.collective(kind, props, *span, t),
                    None => elab.err(
                        Diagnostic::error(Code::MissingDeclaration, head(*span, kind.span), "a collective needs a topology")
                            .label("no `topology` in this file")
                            .help("declare one, e.g. `import ring;` and `topology t = ring(n: 8, bw: 25 GB/s);`"),
                    ),
                }
            }
            ast::Item::Schedule { .. } => sched_items.push(item),
            ast::Item::Model {
                name,
                kind,
                props,
                span,
            } => {
                if let Some(prev) = model_names.get(&name.name) {
                    elab.err(
                        Diagnostic::error(
                            Code::DuplicateName,
                            name.span,
                            format!("model `{}` is declared twice", name.name),
                        )
                        .label("declared again")
                        .secondary(*prev, "first declared here")
                        .help("give each model its own name"),
                    );
                    continue;
                }
                model_names.insert(name.name.clone(), name.span);
                if let Some(m) = elab.cost_model(name, kind, props, *span) {
                    models.push(m);
                }
            }
            ast::Item::Target { kind, props, span } => {
                if let Some(prev) = targets.iter().find(|t| t.kind.name() == kind.name) {
                    let prev = prev.span;
                    elab.err(
                        Diagnostic::error(
                            Code::DuplicateName,
                            kind.span,
                            format!("target `{}` is declared twice", kind.name),
                        )
                        .label("declared again")
                        .secondary(prev, "first declared here")
                        .help("merge the options into one declaration"),
                    );
                    continue;
                }
                if let Some(t) = elab.target(kind, props, *span) {
                    targets.push(t);
                }
            }
            _ => {}
        }
    }
    let mut schedule = None;
    for item in sched_items {
        let ast::Item::Schedule {
            family,
            props,
            span,
        } = item
        else {
            continue;
        };
        if !once(elab, "schedule", head(*span, family.span)) {
            continue;
        }
        if coll_decl.is_none() {
            elab.err(
                Diagnostic::error(Code::MissingDeclaration, head(*span, family.span), "a schedule needs a collective to schedule")
                    .label("no `collective` in this file")
                    .help("declare one, e.g. `collective allreduce { size: 1 MiB; dtype: f32; op: sum; }`"),
            );
            continue;
        }
        schedule = elab.schedule(
            family,
            props,
            *span,
            collective
                .as_ref()
                .map(|c: &super::model::Collective| c.ranks.len()),
        );
    }
    if schedule.is_none() && !first.contains_key("schedule") && collective.is_some() {
        schedule = Some(super::model::Schedule {
            family: super::model::Family::Auto,
            span: coll_decl.unwrap_or(file_start),
            props: Vec::new(),
        });
    }
    cross_checks(
        elab,
        &main_ast.items,
        topology.as_ref(),
        collective.as_ref(),
        schedule.as_ref(),
        &models,
        &targets,
    );
    Some(Model {
        topology,
        collective,
        schedule,
        models,
        targets,
        params: param_values,
        limits: elab.limits,
    })
}

fn override_value(
    elab: &mut Elab<'_>,
    name: &str,
    text: &str,
    span: Span,
) -> Option<super::value::Value> {
    let mut tmp = SourceMap::new();
    let f = tmp.add(format!("--param {name}"), text.to_string());
    match syntax::parse_expr(f, text) {
        Ok(e) => {
            // Spans of the override point at the param's default so diagnostics land in the file.
            let mut e = e;
            relocate(&mut e, span);
            elab.eval(&e)
        }
        Err(msg) => {
            elab.err(
                Diagnostic::error(Code::Syntax, span, format!("`--param {name}={text}` is not a valid value: {msg}"))
                    .label("overridden from the command line")
                    .help("pass a value in the language's syntax, e.g. `--param n=16` or `--param bw=\"25 GB/s\"`"),
            );
            None
        }
    }
}

fn relocate(e: &mut ast::Expr, span: Span) {
    e.span = span;
    match &mut e.kind {
        ast::ExprKind::Quantity(q) => q.unit_span = span,
        ast::ExprKind::Index(a, b)
        | ast::ExprKind::Range(a, b)
        | ast::ExprKind::Binary(_, a, b) => {
            relocate(a, span);
            relocate(b, span);
        }
        ast::ExprKind::Unary(_, a) | ast::ExprKind::Field(a, _) => relocate(a, span),
        ast::ExprKind::List(items) => items.iter_mut().for_each(|i| relocate(i, span)),
        ast::ExprKind::Call(c) => {
            c.span = span;
            c.args.iter_mut().for_each(|a| relocate(&mut a.value, span));
        }
        _ => {}
    }
}

fn show_value(v: &super::value::Value) -> String {
    match v {
        super::value::Value::Num(q) => q.to_string(),
        super::value::Value::Bool(b) => b.to_string(),
        super::value::Value::Str(s) => format!("{s:?}"),
        super::value::Value::List(items) => format!(
            "[{}]",
            items.iter().map(show_value).collect::<Vec<_>>().join(", ")
        ),
        super::value::Value::Range(a, b) => format!("{a}..{b}"),
        super::value::Value::Auto => "auto".into(),
        super::value::Value::Nodes(n) => format!("<{} nodes>", n.len()),
    }
}
