//! The name index behind hover, go to definition, references and completion: every declared
//! name and every use of one, resolved syntactically from the ASTs of a document and its imports.
//!
//! Scoping follows the elaborator's lookup order (`sema::eval`): in a generator or topology
//! body, names resolve to local variables (innermost `let` or loop variable first, then the
//! generator's parameters), then to top-level `let`/`param` of any loaded file, then to the node
//! arrays and instances declared anywhere in the same body (a link may precede the declaration
//! of its nodes). `r.gpu` resolves `gpu` in the generator that instance `r` instantiates. A
//! call's callee and its named arguments resolve to the generator and its parameters. In
//! property blocks, `model: m` names a cost model, `stages: [...]` holds stage encodings, and
//! the collective's node references resolve against the topology's arrays.
//!
//! The index is built from the parsed trees only, so it exists for files with errors too (the
//! parser recovers and leaves a partial tree); nothing here evaluates.

use crate::diag::{FileId, SourceMap, Span};
use crate::syntax::ast::{self, Expr, ExprKind, Item, Stmt};
use std::collections::HashMap;

/// What a declared name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DefKind {
    Generator,
    /// A top-level `param`.
    Param,
    /// A top-level `let`.
    Let,
    /// A parameter of a generator.
    GenParam,
    /// A `let` inside a body.
    LocalLet,
    LoopVar,
    Compute,
    Switch,
    /// `use g(...) as name;`
    Instance,
    Topology,
    CostModel,
}

impl DefKind {
    /// The user's word for it.
    pub fn word(self) -> &'static str {
        match self {
            DefKind::Generator => "generator",
            DefKind::Param => "param",
            DefKind::Let => "let",
            DefKind::GenParam => "generator parameter",
            DefKind::LocalLet => "local let",
            DefKind::LoopVar => "loop variable",
            DefKind::Compute => "compute node array",
            DefKind::Switch => "switch array",
            DefKind::Instance => "generator instance",
            DefKind::Topology => "topology",
            DefKind::CostModel => "cost model",
        }
    }
}

/// One declared name.
#[derive(Debug, Clone)]
pub struct Def {
    pub name: String,
    pub kind: DefKind,
    /// The name where it is declared.
    pub name_span: Span,
    /// The whole declaration (item, statement or parameter).
    pub decl_span: Span,
    /// The generator (a def index) it belongs to, for parameters, locals and node arrays.
    pub owner: Option<usize>,
    /// For an instance or a topology written as a call: the generator called.
    pub instantiates: Option<String>,
}

/// A use of a declared name, or its declaration (`decl`).
#[derive(Debug, Clone, Copy)]
pub struct Ref {
    pub span: Span,
    pub def: usize,
    pub decl: bool,
}

/// A word that is not a declared name but means something to the reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    /// A stage encoding in `stages: [...]`.
    Stage(String),
    /// A built-in function (`min`, `floor`, ...).
    Builtin(String),
    /// The kind of the `collective` declaration.
    Collective,
    /// The family of the `schedule` declaration.
    Schedule,
    /// The module of `import NAME;`.
    StdModule(String),
    /// The path of `import "file.coll";`, resolved against the importing file.
    FileImport(String),
}

/// Every name of a document and its imports.
#[derive(Debug, Default)]
pub struct Index {
    pub defs: Vec<Def>,
    pub refs: Vec<Ref>,
    pub marks: Vec<(Span, Mark)>,
    generators: HashMap<String, usize>,
    globals: HashMap<String, usize>,
    models: HashMap<String, usize>,
    /// Parameter defs of each generator, in order.
    params: HashMap<usize, Vec<usize>>,
    /// Node arrays and instances of each generator (by def index) and of the topology block
    /// (`usize::MAX`).
    arrays: HashMap<usize, HashMap<String, usize>>,
}

/// What a position points at.
#[derive(Debug, Clone)]
pub enum Hit<'i> {
    Name(&'i Ref),
    Mark(Span, &'i Mark),
}

const TOPOLOGY_BODY: usize = usize::MAX;

type GenParts<'f> = (usize, &'f [ast::ParamDecl], &'f [Stmt]);

impl Index {
    /// Indexes `files` (the main file and everything it imports, each with its tree).
    pub fn build(sources: &SourceMap, files: &[(FileId, ast::File)], main: FileId) -> Index {
        let mut ix = Index::default();
        // Declarations visible everywhere: generators, globals, models, the topology.
        for (f, tree) in files {
            for item in &tree.items {
                ix.declare_item(item, *f == main);
            }
        }
        for (g, params, body) in ix.generator_bodies(files) {
            let ps = params
                .iter()
                .map(|p| ix.def(&p.name, DefKind::GenParam, p.span, Some(g)))
                .collect();
            ix.params.insert(g, ps);
            let arrays = ix.declare_arrays(body, Some(g));
            ix.arrays.insert(g, arrays);
        }
        for (f, tree) in files {
            for item in &tree.items {
                ix.walk_item(sources, *f, item, *f == main);
            }
        }
        ix.refs.sort_by_key(|r| (r.span.file, r.span.start));
        ix
    }

    fn def(&mut self, name: &ast::Ident, kind: DefKind, decl: Span, owner: Option<usize>) -> usize {
        let i = self.defs.len();
        self.defs.push(Def {
            name: name.name.clone(),
            kind,
            name_span: name.span,
            decl_span: decl,
            owner,
            instantiates: None,
        });
        self.refs.push(Ref {
            span: name.span,
            def: i,
            decl: true,
        });
        i
    }

    fn use_(&mut self, span: Span, def: usize) {
        self.refs.push(Ref {
            span,
            def,
            decl: false,
        });
    }

    fn declare_item(&mut self, item: &Item, main: bool) {
        match item {
            Item::Generator { name, span, .. } => {
                let d = self.def(name, DefKind::Generator, *span, None);
                self.generators.entry(name.name.clone()).or_insert(d);
            }
            Item::Param { name, span, .. } | Item::Let { name, span, .. } => {
                let kind = if matches!(item, Item::Param { .. }) {
                    DefKind::Param
                } else {
                    DefKind::Let
                };
                let d = self.def(name, kind, *span, None);
                self.globals.entry(name.name.clone()).or_insert(d);
            }
            Item::Model { name, span, .. } if main => {
                let d = self.def(name, DefKind::CostModel, *span, None);
                self.models.entry(name.name.clone()).or_insert(d);
            }
            Item::Topology { name, span, body } if main => {
                let d = self.def(name, DefKind::Topology, *span, None);
                if let ast::TopologyBody::Call(c) = body {
                    self.defs[d].instantiates = Some(c.callee.name.clone());
                }
            }
            _ => {}
        }
    }

    /// (generator def, parameters, body) for every generator whose name resolves to its own
    /// definition (not a duplicate).
    fn generator_bodies<'f>(&self, files: &'f [(FileId, ast::File)]) -> Vec<GenParts<'f>> {
        let mut out = Vec::new();
        for (_, tree) in files {
            for item in &tree.items {
                if let Item::Generator {
                    name, params, body, ..
                } = item
                {
                    if let Some(&g) = self.generators.get(&name.name) {
                        if self.defs[g].name_span == name.span {
                            out.push((g, params.as_slice(), body.as_slice()));
                        }
                    }
                }
            }
        }
        out
    }

    /// Declares the node arrays and instances of a body (at any depth).
    fn declare_arrays(&mut self, body: &[Stmt], owner: Option<usize>) -> HashMap<String, usize> {
        let mut out = HashMap::new();
        self.declare_arrays_into(body, owner, &mut out);
        out
    }

    fn declare_arrays_into(
        &mut self,
        body: &[Stmt],
        owner: Option<usize>,
        out: &mut HashMap<String, usize>,
    ) {
        for s in body {
            match s {
                Stmt::Node {
                    kind, name, span, ..
                } => {
                    let k = match kind {
                        ast::NodeKind::Compute => DefKind::Compute,
                        ast::NodeKind::Switch => DefKind::Switch,
                    };
                    let d = self.def(name, k, *span, owner);
                    out.entry(name.name.clone()).or_insert(d);
                }
                Stmt::Use { call, alias, span } => {
                    if let Some(root) = root_ident(alias) {
                        let d = self.def(&root, DefKind::Instance, *span, owner);
                        self.defs[d].instantiates = Some(call.callee.name.clone());
                        out.entry(root.name).or_insert(d);
                    }
                }
                Stmt::For { body, .. } => self.declare_arrays_into(body, owner, out),
                Stmt::If { then, els, .. } => {
                    self.declare_arrays_into(then, owner, out);
                    if let Some(e) = els {
                        self.declare_arrays_into(e, owner, out);
                    }
                }
                _ => {}
            }
        }
    }

    fn walk_item(&mut self, sources: &SourceMap, file: FileId, item: &Item, main: bool) {
        let mut cx = Scope::default();
        match item {
            Item::Import { path, .. } => match path {
                ast::ImportPath::Std(id) => {
                    self.marks.push((id.span, Mark::StdModule(id.name.clone())))
                }
                ast::ImportPath::File(p, span) => {
                    let base = std::path::Path::new(&sources.get(file).name)
                        .parent()
                        .map(|b| b.join(p))
                        .unwrap_or_else(|| p.into());
                    self.marks
                        .push((*span, Mark::FileImport(base.to_string_lossy().into_owned())));
                }
            },
            Item::Param { default: e, .. } | Item::Let { value: e, .. } => self.expr(e, &mut cx),
            Item::Generator {
                name, params, body, ..
            } => {
                let Some(&g) = self
                    .generators
                    .get(&name.name)
                    .filter(|g| self.defs[**g].name_span == name.span)
                else {
                    return;
                };
                cx.arrays = self.arrays.get(&g).cloned().unwrap_or_default();
                cx.scopes.push(HashMap::new());
                let defs = self.params.get(&g).cloned().unwrap_or_default();
                for (p, d) in params.iter().zip(defs) {
                    if let Some(e) = &p.default {
                        self.expr(e, &mut cx);
                    }
                    if let Some(s) = cx.scopes.last_mut() {
                        s.insert(p.name.name.clone(), d);
                    }
                }
                cx.owner = Some(g);
                self.stmts(body, &mut cx);
            }
            Item::Topology { body, .. } if main => match body {
                ast::TopologyBody::Block(stmts) => {
                    let arrays = self.declare_arrays(stmts, None);
                    self.arrays.insert(TOPOLOGY_BODY, arrays.clone());
                    cx.arrays = arrays;
                    cx.scopes.push(HashMap::new());
                    self.stmts(stmts, &mut cx);
                }
                ast::TopologyBody::Call(c) => self.call(c, &mut cx),
            },
            Item::Collective { kind, props, .. } if main => {
                self.marks.push((kind.span, Mark::Collective));
                cx.arrays = self.topology_arrays();
                for p in props {
                    self.expr(&p.value, &mut cx);
                }
            }
            Item::Schedule { family, props, .. } if main => {
                self.marks.push((family.span, Mark::Schedule));
                self.props(props, &mut cx);
            }
            Item::Model { props, .. } | Item::Target { props, .. } if main => {
                self.props(props, &mut cx);
            }
            _ => {}
        }
    }

    /// The arrays the collective's node references name: the topology block's, or those of the
    /// generator the topology instantiates.
    fn topology_arrays(&self) -> HashMap<String, usize> {
        if let Some(a) = self.arrays.get(&TOPOLOGY_BODY) {
            return a.clone();
        }
        let g = self
            .defs
            .iter()
            .find(|d| d.kind == DefKind::Topology)
            .and_then(|d| d.instantiates.as_ref())
            .and_then(|g| self.generators.get(g));
        g.and_then(|g| self.arrays.get(g))
            .cloned()
            .unwrap_or_default()
    }

    fn props(&mut self, props: &[ast::Prop], cx: &mut Scope) {
        for p in props {
            match (p.key.name.as_str(), &p.value.kind) {
                ("model", ExprKind::Name(n)) => {
                    if let Some(&d) = self.models.get(n) {
                        self.use_(p.value.span, d);
                    }
                }
                ("stages", ExprKind::List(items)) => {
                    for it in items {
                        match &it.kind {
                            ExprKind::Name(n)
                                if crate::sema::schedule::decode_stage(n).is_some() =>
                            {
                                self.marks.push((it.span, Mark::Stage(n.clone())));
                            }
                            _ => self.expr(it, cx),
                        }
                    }
                }
                _ => self.expr(&p.value, cx),
            }
        }
    }

    fn stmts(&mut self, body: &[Stmt], cx: &mut Scope) {
        for s in body {
            match s {
                Stmt::Node { dims, .. } => dims.iter().for_each(|d| self.expr(d, cx)),
                Stmt::Link {
                    from,
                    to,
                    bandwidth,
                    attrs,
                    ..
                } => {
                    self.expr(from, cx);
                    self.expr(to, cx);
                    self.expr(bandwidth, cx);
                    attrs.iter().for_each(|a| self.expr(&a.value, cx));
                }
                Stmt::For {
                    var, iter, body, ..
                } => {
                    self.expr(iter, cx);
                    let d = self.def(var, DefKind::LoopVar, s.span(), cx.owner);
                    cx.scopes.push(HashMap::from([(var.name.clone(), d)]));
                    self.stmts(body, cx);
                    cx.scopes.pop();
                }
                Stmt::If {
                    cond, then, els, ..
                } => {
                    self.expr(cond, cx);
                    for b in std::iter::once(then).chain(els) {
                        cx.scopes.push(HashMap::new());
                        self.stmts(b, cx);
                        cx.scopes.pop();
                    }
                }
                Stmt::Let { name, value, span } => {
                    self.expr(value, cx);
                    let d = self.def(name, DefKind::LocalLet, *span, cx.owner);
                    if let Some(s) = cx.scopes.last_mut() {
                        s.insert(name.name.clone(), d);
                    }
                }
                Stmt::Use { call, alias, .. } => {
                    self.call(call, cx);
                    // The alias root is a declaration; its indices are expressions.
                    let mut e = alias;
                    while let ExprKind::Index(base, idx) = &e.kind {
                        self.expr(idx, cx);
                        e = base;
                    }
                }
                Stmt::Error(_) => {}
            }
        }
    }

    fn call(&mut self, c: &ast::Call, cx: &mut Scope) {
        let g = self.generators.get(&c.callee.name).copied();
        match g {
            Some(g) => self.use_(c.callee.span, g),
            None if crate::sema::eval::BUILTINS.contains(&c.callee.name.as_str()) => self
                .marks
                .push((c.callee.span, Mark::Builtin(c.callee.name.clone()))),
            None => {}
        }
        for a in &c.args {
            if let (Some(n), Some(g)) = (&a.name, g) {
                let p = self
                    .params
                    .get(&g)
                    .and_then(|ps| ps.iter().copied().find(|p| self.defs[*p].name == n.name));
                if let Some(p) = p {
                    self.use_(n.span, p);
                }
            }
            self.expr(&a.value, cx);
        }
    }

    fn expr(&mut self, e: &Expr, cx: &mut Scope) {
        match &e.kind {
            ExprKind::Name(n) => {
                if let Some(d) = self.resolve(n, cx) {
                    self.use_(e.span, d);
                }
            }
            ExprKind::Field(base, field) => {
                self.expr(base, cx);
                // `r.gpu`: look `gpu` up in the generator `r` instantiates.
                let target = root_name(base)
                    .and_then(|n| self.resolve(n, cx))
                    .filter(|d| self.defs[*d].kind == DefKind::Instance)
                    .and_then(|d| self.defs[d].instantiates.clone())
                    .and_then(|g| self.generators.get(&g).copied())
                    .and_then(|g| self.arrays.get(&g))
                    .and_then(|a| a.get(&field.name).copied());
                if let Some(d) = target {
                    self.use_(field.span, d);
                }
            }
            ExprKind::Index(a, b) | ExprKind::Range(a, b) | ExprKind::Binary(_, a, b) => {
                self.expr(a, cx);
                self.expr(b, cx);
            }
            ExprKind::Unary(_, a) => self.expr(a, cx),
            ExprKind::List(items) => items.iter().for_each(|i| self.expr(i, cx)),
            ExprKind::Call(c) => self.call(c, cx),
            ExprKind::Number(_)
            | ExprKind::Quantity(_)
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::Auto
            | ExprKind::Error => {}
        }
    }

    fn resolve(&self, name: &str, cx: &Scope) -> Option<usize> {
        cx.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name).copied())
            .or_else(|| self.globals.get(name).copied())
            .or_else(|| cx.arrays.get(name).copied())
    }

    /// What is at byte `offset` of `file`: the innermost name or mark whose span contains it
    /// (a cursor just after a name counts as on it).
    pub fn at(&self, file: FileId, offset: usize) -> Option<Hit<'_>> {
        let inside =
            |s: &Span| s.file == file && (s.start as usize) <= offset && offset <= s.end as usize;
        let name = self
            .refs
            .iter()
            .filter(|r| inside(&r.span))
            .min_by_key(|r| r.span.end - r.span.start);
        if let Some(r) = name {
            return Some(Hit::Name(r));
        }
        self.marks
            .iter()
            .filter(|(s, _)| inside(s))
            .min_by_key(|(s, _)| s.end - s.start)
            .map(|(s, m)| Hit::Mark(*s, m))
    }

    /// Every occurrence of def `d` (its declaration first).
    pub fn occurrences(&self, d: usize) -> Vec<Span> {
        let mut out: Vec<Span> = vec![self.defs[d].name_span];
        out.extend(
            self.refs
                .iter()
                .filter(|r| r.def == d && !r.decl)
                .map(|r| r.span),
        );
        out
    }

    /// Names visible at byte `offset` of `file`: globals, generators, models, and the
    /// parameters, locals and arrays of the enclosing generator whose declaration precedes the
    /// offset (an approximation of the scope at that point).
    pub fn visible_at(&self, file: FileId, offset: usize) -> Vec<usize> {
        let enclosing = self.defs.iter().position(|d| {
            d.kind == DefKind::Generator
                && d.decl_span.file == file
                && (d.decl_span.start as usize) <= offset
                && offset <= d.decl_span.end as usize
        });
        let mut out: Vec<usize> = Vec::new();
        for (i, d) in self.defs.iter().enumerate() {
            let visible = match d.kind {
                DefKind::Generator
                | DefKind::Param
                | DefKind::Let
                | DefKind::CostModel
                | DefKind::Topology => true,
                DefKind::GenParam | DefKind::Compute | DefKind::Switch | DefKind::Instance => {
                    d.owner == enclosing
                        && (d.owner.is_some() || self.in_topology_block(file, offset))
                }
                DefKind::LocalLet | DefKind::LoopVar => {
                    d.owner == enclosing
                        && d.decl_span.file == file
                        && (d.decl_span.start as usize) < offset
                        && (d.kind == DefKind::LocalLet || offset <= d.decl_span.end as usize)
                }
            };
            if visible && !out.iter().any(|o| self.defs[*o].name == d.name) {
                out.push(i);
            }
        }
        out
    }

    fn in_topology_block(&self, file: FileId, offset: usize) -> bool {
        self.defs.iter().any(|d| {
            d.kind == DefKind::Topology
                && d.decl_span.file == file
                && (d.decl_span.start as usize) <= offset
                && offset <= d.decl_span.end as usize
        })
    }

    /// The generator named `name`, if declared.
    pub fn generator(&self, name: &str) -> Option<&Def> {
        self.generators.get(name).map(|&d| &self.defs[d])
    }

    /// The parameters of generator def `g`, in order.
    pub fn params_of(&self, g: usize) -> impl Iterator<Item = &Def> {
        self.params
            .get(&g)
            .into_iter()
            .flatten()
            .map(|p| &self.defs[*p])
    }
}

/// Lexical scope while walking a body.
#[derive(Default)]
struct Scope {
    scopes: Vec<HashMap<String, usize>>,
    arrays: HashMap<String, usize>,
    owner: Option<usize>,
}

/// `box` of `box[i].gpu[2]` (the leftmost name of a path).
fn root_name(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Name(n) => Some(n),
        ExprKind::Index(b, _) | ExprKind::Field(b, _) => root_name(b),
        _ => None,
    }
}

/// The leftmost name of an alias (`r`, `box[i]`) as an identifier with its span.
fn root_ident(e: &Expr) -> Option<ast::Ident> {
    match &e.kind {
        ExprKind::Name(n) => Some(ast::Ident {
            name: n.clone(),
            span: e.span,
        }),
        ExprKind::Index(b, _) => root_ident(b),
        _ => None,
    }
}
