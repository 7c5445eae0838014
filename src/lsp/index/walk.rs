//! The walk that fills an [`Index`]: items, property blocks, statements, calls and expressions,
//! with the lexical [`Scope`] that resolves each name use (the lookup order in the parent module's
//! doc).

use super::{DefKind, Index, Mark, TOPOLOGY_BODY, root_name};
use crate::diag::{FileId, SourceMap};
use crate::syntax::ast::{self, Expr, ExprKind, Item, Stmt};
use std::collections::HashMap;

impl Index {
    pub(super) fn walk_item(&mut self, sources: &SourceMap, file: FileId, item: &Item, main: bool) {
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
}

/// Lexical scope while walking a body.
#[derive(Default)]
struct Scope {
    scopes: Vec<HashMap<String, usize>>,
    arrays: HashMap<String, usize>,
    owner: Option<usize>,
}
