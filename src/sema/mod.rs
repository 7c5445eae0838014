//! Semantic analysis: from parsed files to a checked [`model::Model`].
//!
//! [`check`] loads the main file and its imports (the standard library is embedded, see
//! [`stdlib`]), registers generators and evaluates top-level `let`/`param` (command-line
//! overrides win), elaborates the topology, then the collective, schedule, cost models and
//! targets, and finally runs whole-model checks. Every stage keeps going after an error, so one
//! run reports every independent problem; a value that failed is skipped by what depends on it.

pub mod checks;
pub mod collective;
pub mod decls;
pub mod elab;
pub mod eval;
pub mod model;
pub mod nodes;
pub mod print;
pub mod props;
pub mod schedule;
pub mod stdlib;
pub mod suggest;
pub mod units;
pub mod value;

use crate::diag::{Code, Diagnostic, FileId, SourceMap, Span};
use crate::syntax::{self, ast};
use elab::{Elab, GenDef, Limits};
use model::Model;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// What a check run may be told from outside the file.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub limits: Limits,
    /// `--param name=value` overrides, the value in the language's expression syntax.
    pub params: Vec<(String, String)>,
}

/// The result of checking one file: the model when there were no errors, and every diagnostic.
pub struct Checked {
    pub model: Option<Model>,
    pub diagnostics: Vec<Diagnostic>,
}

struct Loaded {
    file: FileId,
    ast: ast::File,
}

/// After a syntax error the parser skips to the end of the item, statement or property, and the
/// tree has a hole there. These codes are what a hole causes (a skipped `compute` makes every
/// link to its nodes "undeclared", a skipped `size: ...;` is "missing"), so they are not reported
/// while there are syntax errors; every other problem still is.
pub const HIDDEN_AFTER_SYNTAX_ERRORS: &[Code] = &[
    Code::UnknownName,
    Code::ImportNotFound,
    Code::UndeclaredNode,
    Code::NotComputeNode,
    Code::Unreachable,
    Code::AsymmetricBandwidth,
    Code::MissingDeclaration,
    Code::BadProperty,
    Code::BadArguments,
    Code::BadRoot,
];

/// Checks the file `main` (already in `sources`), loading imports into `sources`.
pub fn check(sources: &mut SourceMap, main: FileId, opts: &Options) -> Checked {
    let mut diags = Vec::new();
    let mut loaded: Vec<Loaded> = Vec::new();
    let mut loading: Vec<FileId> = Vec::new();
    load(sources, main, &mut loaded, &mut loading, &mut diags);
    let syntax_errors = diags
        .iter()
        .any(|d| matches!(d.code, Code::Syntax | Code::InvalidToken));
    let mut elab = Elab::new(opts.limits);
    elab.diags.extend(diags);
    let model = run(&mut elab, sources, &loaded, main, opts);
    let mut diagnostics = std::mem::take(&mut elab.diags).sorted();
    if syntax_errors {
        diagnostics.retain(|d| !HIDDEN_AFTER_SYNTAX_ERRORS.contains(&d.code));
    }
    let model = if diagnostics
        .iter()
        .any(|d| d.severity == crate::diag::Severity::Error)
    {
        None
    } else {
        model
    };
    Checked { model, diagnostics }
}

/// Parses `file` and, depth first, everything it imports; `loaded` ends in dependency order.
fn load(
    sources: &mut SourceMap,
    file: FileId,
    loaded: &mut Vec<Loaded>,
    loading: &mut Vec<FileId>,
    diags: &mut Vec<Diagnostic>,
) {
    let text = sources.get(file).text.clone();
    let (tree, errs) = syntax::parse(file, &text);
    diags.extend(errs);
    loading.push(file);
    for item in &tree.items {
        let ast::Item::Import { path, span } = item else {
            continue;
        };
        let (name, text) = match path {
            ast::ImportPath::Std(id) => match stdlib::get(&id.name) {
                Some(t) => (format!("stdlib/{}.coll", id.name), t.to_string()),
                None => {
                    let names: Vec<&str> = stdlib::names().collect();
                    let d = Diagnostic::error(
                        Code::ImportNotFound,
                        id.span,
                        format!("no standard library module `{}`", id.name),
                    )
                    .label("not in the standard library");
                    let d = match suggest::closest(&id.name, names.iter().copied()) {
                        Some(s) => d.help(format!("did you mean `{s}`?")),
                        None => d.help(format!(
                            "modules: {}; import a file with `import \"path.coll\";`",
                            names.join(", ")
                        )),
                    };
                    diags.push(d);
                    continue;
                }
            },
            ast::ImportPath::File(p, pspan) => {
                let base = Path::new(&sources.get(file).name)
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default();
                let full: PathBuf = normalize(&base.join(p));
                let shown = full.to_string_lossy().to_string();
                if let Some(existing) = find_file(sources, &full) {
                    diags.extend(cycle(sources, loading, existing, *pspan));
                    continue;
                }
                match std::fs::read_to_string(&full) {
                    Ok(t) => (shown, t),
                    Err(e) => {
                        let (message, label) = match e.kind() {
                            std::io::ErrorKind::NotFound => {
                                (format!("there is no file `{shown}` to import"), "not found")
                            }
                            _ => (format!("cannot read `{shown}`: {e}"), "unreadable"),
                        };
                        diags.push(
                            Diagnostic::error(Code::ImportNotFound, *pspan, message)
                                .label(label)
                                .help(if base.as_os_str().is_empty() {
                                    "paths are relative to the importing file's directory, here the current directory".to_string()
                                } else {
                                    format!("paths are relative to the importing file's directory, here `{}`", base.display())
                                }),
                        );
                        continue;
                    }
                }
            }
        };
        if let Some(existing) = sources.find(&name) {
            diags.extend(cycle(sources, loading, existing, *span));
            continue;
        }
        let id = sources.add(name, text);
        load(sources, id, loaded, loading, diags);
    }
    loading.pop();
    loaded.push(Loaded { file, ast: tree });
}

/// The import cycle closed by importing `f` (at `span`) while `loading` is being loaded, if any.
fn cycle(sources: &SourceMap, loading: &[FileId], f: FileId, span: Span) -> Option<Diagnostic> {
    let at = loading.iter().position(|x| *x == f)?;
    let name = |id: FileId| format!("`{}`", sources.get(id).name);
    let chain: Vec<String> = loading[at..]
        .iter()
        .chain(std::iter::once(&f))
        .map(|id| name(*id))
        .collect();
    let message = if chain.len() == 2 {
        format!("{} imports itself", name(f))
    } else {
        format!(
            "import cycle: {} imports {}",
            chain[0],
            chain[1..].join(", which imports ")
        )
    };
    Some(
        Diagnostic::error(Code::ImportCycle, span, message)
            .label(format!("{} is already being imported", name(f)))
            .help(
                "move the definitions both files need into a third file, and import that from each",
            ),
    )
}

/// Removes `.` components and resolves `..` against the components before it, so that one file
/// has one name however an import spells its path.
fn normalize(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                let last = out.components().next_back();
                if matches!(last, Some(Component::Normal(_))) {
                    out.pop();
                } else if !matches!(last, Some(Component::RootDir | Component::Prefix(_))) {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The loaded file that is `path`: the same normalized name, or the same file on disk.
fn find_file(sources: &SourceMap, path: &Path) -> Option<FileId> {
    let canonical = std::fs::canonicalize(path).ok();
    (0..sources.len() as u32).map(FileId).find(|id| {
        let name = Path::new(&sources.get(*id).name);
        normalize(name) == path
            || canonical
                .as_ref()
                .is_some_and(|c| std::fs::canonicalize(name).ok().as_ref() == Some(c))
    })
}

fn run<'a>(
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
    let mut targets: Vec<model::Target> = Vec::new();
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
                .map(|c: &model::Collective| c.ranks.len()),
        );
    }
    if schedule.is_none() && !first.contains_key("schedule") && collective.is_some() {
        schedule = Some(model::Schedule {
            family: model::Family::Auto,
            span: coll_decl.unwrap_or(file_start),
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
    })
}

fn override_value(elab: &mut Elab<'_>, name: &str, text: &str, span: Span) -> Option<value::Value> {
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

fn show_value(v: &value::Value) -> String {
    match v {
        value::Value::Num(q) => q.to_string(),
        value::Value::Bool(b) => b.to_string(),
        value::Value::Str(s) => format!("{s:?}"),
        value::Value::List(items) => format!(
            "[{}]",
            items.iter().map(show_value).collect::<Vec<_>>().join(", ")
        ),
        value::Value::Range(a, b) => format!("{a}..{b}"),
        value::Value::Auto => "auto".into(),
        value::Value::Nodes(n) => format!("<{} nodes>", n.len()),
    }
}

/// The head of a declaration, from its keyword to its name (`schedule ring`, `target msccl`):
/// where diagnostics about a whole declaration point, so that a long block is not underlined.
pub(crate) fn head(item: Span, name: Span) -> Span {
    if item.file == name.file && name.end >= item.start {
        Span::new(item.file, item.start as usize, name.end as usize)
    } else {
        item
    }
}

/// The span of the value of property `key` in a property block.
fn prop_span(props: &[ast::Prop], key: &str) -> Option<Span> {
    props
        .iter()
        .find(|p| p.key.name == key)
        .map(|p| p.value.span)
}

/// Reports a reference to a cost model that is not declared.
fn unknown_model(
    elab: &mut Elab<'_>,
    m: &str,
    span: Span,
    user: &str,
    models: &[model::CostModel],
) {
    let names: Vec<&str> = models.iter().map(|x| x.name.as_str()).collect();
    let help = if names.is_empty() {
        format!(
            "declare it, e.g. `model {m}: pipelining_postal {{ alpha_p: 500 ns; alpha_r: 100 ns; beta: 0.4 ns/B; }}`"
        )
    } else {
        match suggest::closest(m, names.iter().copied()) {
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
fn cross_checks(
    elab: &mut Elab<'_>,
    items: &[ast::Item],
    topo: Option<&model::Topology>,
    coll: Option<&model::Collective>,
    sched: Option<&model::Schedule>,
    models: &[model::CostModel],
    targets: &[model::Target],
) {
    let coll_head = items.iter().find_map(|i| match i {
        ast::Item::Collective { kind, span, .. } => Some(head(*span, kind.span)),
        _ => None,
    });
    if let (Some(t), Some(c)) = (topo.filter(|_| !elab.topology_incomplete), coll) {
        if let Some(d) = checks::connectivity(t, &c.ranks, coll_head.unwrap_or(c.span)) {
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
        if !schedule::supports(&s.family, c.kind) {
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
            model::Family::Forest { .. } => {
                if let Some(d) = checks::symmetry(t, s_head) {
                    elab.err(d);
                }
            }
            model::Family::Canary { .. } | model::Family::StaticTrees { .. }
                if !checks::has_switch(t) =>
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
    if let model::Family::RecursiveMultiplying { model: Some(m), .. } = &s.family {
        if !models.iter().any(|x| &x.name == m) {
            let span = sched_item
                .and_then(|(_, props)| prop_span(props, "model"))
                .unwrap_or(s_head);
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
        if let Some(why) = target_cannot_express(&s.family, t.kind) {
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
                .help(target_help(&s.family)),
            );
        }
        if let (model::TargetKind::Mpi, Some(c)) = (t.kind, coll) {
            if let Some(e) = crate::backend::mpi::unsupported_dtype(c.dtype) {
                elab.err(
                    e.diagnostic(t_head)
                        .secondary(coll_head.unwrap_or(c.span), "collective declared here"),
                );
            }
        }
        if let (model::TargetKind::Sim, Some(model::ModelParam::Word(m))) =
            (t.kind, t.options.get("model"))
        {
            if !models.iter().any(|x| &x.name == m) {
                let span = t_item
                    .and_then(|(_, props)| prop_span(props, "model"))
                    .unwrap_or(t_head);
                unknown_model(elab, m, span, "target `sim`", models);
            }
        }
    }
}

fn supported_help(kind: model::CollectiveKind) -> String {
    let fams: Vec<&str> = schedule::FAMILIES
        .iter()
        .map(|f| f.0)
        .filter(|f| {
            let fam = match *f {
                "recursive_multiplying" => model::Family::RecursiveMultiplying {
                    stages: model::AutoOr::Auto,
                    model: None,
                },
                "recursive_doubling" => model::Family::RecursiveDoubling,
                "ring" => model::Family::Ring,
                "binomial" => model::Family::Binomial,
                "forest" => model::Family::Forest {
                    k: model::AutoOr::Auto,
                    chunks: 1,
                },
                "static_trees" => model::Family::StaticTrees { trees: 1 },
                "canary" => return kind == model::CollectiveKind::Allreduce,
                _ => model::Family::Auto,
            };
            schedule::supports(&fam, kind)
        })
        .collect();
    format!("schedules for {}: {}", kind.name(), fams.join(", "))
}

fn target_cannot_express(f: &model::Family, t: model::TargetKind) -> Option<&'static str> {
    use model::{Family::*, TargetKind::*};
    match (f, t) {
        (Canary { .. } | StaticTrees { .. }, Msccl) => {
            Some("MSCCL runs on GPUs and cannot program switches")
        }
        (Canary { .. } | StaticTrees { .. }, Mpi) => {
            Some("MPI programs run on hosts and cannot program switches")
        }
        (RecursiveMultiplying { .. } | RecursiveDoubling | Ring | Binomial | Forest { .. }, P4) => {
            Some(
                "the P4 target emits in-network aggregation; host-based schedules have nothing to put in a switch",
            )
        }
        _ => None,
    }
}

fn target_help(f: &model::Family) -> &'static str {
    match f {
        model::Family::Canary { .. } | model::Family::StaticTrees { .. } => {
            "in-network schedules go to `p4`, `goal` or `sim`; for MSCCL or MPI use `ring`, `recursive_doubling` or `forest`"
        }
        _ => {
            "host-based schedules go to `msccl`, `mpi`, `goal` or `sim`; for P4 use `canary` or `static_trees`"
        }
    }
}
