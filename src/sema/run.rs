//! The checking pass proper: registers generators, evaluates `let`/`param` (command-line
//! overrides win), elaborates the topology, the collective, the schedule, cost models and targets,
//! and builds the [`Model`] from what succeeded.

use super::cross::cross_checks;
use super::elab::{Elab, GenDef};
use super::head;
use super::model::Model;
use super::{CmdParam, Loaded};
use crate::diag::{Code, Diagnostic, FileId, SourceMap, Span};
use crate::syntax::{self, ast};
use std::collections::{BTreeMap, HashMap};

pub(super) fn run<'a>(
    elab: &mut Elab<'a>,
    sources: &SourceMap,
    loaded: &'a [Loaded],
    main: FileId,
    cmd_params: &[CmdParam],
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
    let mut overrides: BTreeMap<&str, (&CmdParam, bool)> = cmd_params
        .iter()
        .map(|p| (p.name.as_str(), (p, false)))
        .collect();
    let mut declared_params: Vec<&str> = Vec::new();
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
            if is_param {
                declared_params.push(&name.name);
            }
            let mut at = value.span;
            let v = match overrides.get_mut(name.name.as_str()).filter(|_| is_param) {
                Some((p, used)) => {
                    *used = true;
                    at = p.value_span;
                    override_value(elab, p)
                }
                None => elab.eval(value),
            };
            let Some(v) = v else {
                elab.poisoned.insert(name.name.clone());
                continue;
            };
            if let Some(ty) = ty {
                if !elab.check_type(&v, ty, at, &name.name) {
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
    for (k, (p, used)) in &overrides {
        if !used {
            let names = if declared_params.is_empty() {
                "the file declares none".to_string()
            } else {
                format!("the file's params: {}", declared_params.join(", "))
            };
            let help = match super::suggest::closest(k, declared_params.iter().copied()) {
                Some(s) => format!("did you mean `--param {s}=...`? {names}"),
                None => format!("declare it with `param {k}: int = ...;` or fix the name; {names}"),
            };
            elab.err(
                Diagnostic::error(
                    Code::UnknownName,
                    p.name_span,
                    format!("`--param {k}=...` names no `param` of this file"),
                )
                .label("unknown parameter")
                .help(help),
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
            let before = elab.diags.list.len();
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
            collective.as_ref(),
            topology.as_ref(),
            &models,
        );
    }
    if schedule.is_none() && !first.contains_key("schedule") && collective.is_some() {
        schedule = Some(super::model::Schedule {
            family: super::model::Family::Auto,
            span: coll_decl.unwrap_or(Span::new(main, 0, 0)),
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
        solved: None,
    })
}

/// Parses and evaluates a `--param` value in its "<command line>" file.
fn override_value(elab: &mut Elab<'_>, p: &CmdParam) -> Option<super::value::Value> {
    match syntax::parse_expr(p.file, &p.padded_value()) {
        Ok(e) => {
            let before = elab.diags.list.len();
            let v = elab.eval(&e);
            // A name on the command line is a value that was meant, not one to declare.
            for d in &mut elab.diags.list[before..] {
                if d.code == Code::UnknownName && d.primary.span.file == p.file {
                    d.help = Some(
                        "a `--param` value is a value, not a name: write a number (`--param n=16`), a quantity or string in quotes (`--param bw=\"25 GB/s\"`), or `true`/`false`".into(),
                    );
                }
            }
            v
        }
        Err(msg) => {
            elab.err(
                Diagnostic::error(Code::Syntax, p.value_span, format!("`{}` is not a valid value: {msg}", p.line))
                    .label("not a value of the language")
                    .help("pass a value in the language's syntax, e.g. `--param n=16` or `--param bw=\"25 GB/s\"`"),
            );
            None
        }
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
