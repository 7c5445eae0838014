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

mod query;
mod walk;

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
