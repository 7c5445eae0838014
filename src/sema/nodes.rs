//! Node arrays and node references.
//!
//! `compute gpu[2][8];` declares the array `gpu` with dimensions [2, 8]: nodes `gpu[0][0]` ...
//! `gpu[1][7]`, consecutive [`NodeId`]s in row-major order. Inside a generator instantiated with
//! `use g(...) as box[3];`, names get the prefix `box[3].`. A reference such as `box[3].gpu[1][2]`
//! is evaluated to a [`NodePath`] (array key plus index selections, where an index may be a range
//! such as `gpu[0][0..4]` and missing trailing indices select whole rows) and then resolved
//! against the declared arrays. Link endpoints are resolved when the whole topology is known, so
//! a link may precede the declaration of its nodes.

use super::elab::Elab;
use super::model::{NodeId, NodeKind};
use super::value::Value;
use crate::diag::{Code, Diagnostic, Span};
use crate::syntax::ast::{Expr, ExprKind};

#[derive(Debug, Clone)]
pub struct ArrayInfo {
    pub dims: Vec<usize>,
    pub first: NodeId,
    pub kind: NodeKind,
    pub span: Span,
}

/// One selected index: a single position or a half-open range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sel {
    One(i64),
    Range(i64, i64),
}

/// A reference evaluated in its scope, not yet resolved against the arrays.
#[derive(Debug, Clone)]
pub struct NodePath {
    /// Full array name with prefix, e.g. `box[3].gpu`.
    pub key: String,
    pub sels: Vec<Sel>,
    pub span: Span,
    /// Set when the reference is a variable that already holds nodes (`for g in gpu { ... }`).
    pub fixed: Option<Vec<NodeId>>,
}

impl NodePath {
    /// The reference as written with its indices evaluated, e.g. `box[1].gpu[0..4]`.
    pub(crate) fn shown(&self) -> String {
        let mut s = self.key.clone();
        for sel in &self.sels {
            match sel {
                Sel::One(i) => s.push_str(&format!("[{i}]")),
                Sel::Range(a, b) => s.push_str(&format!("[{a}..{b}]")),
            }
        }
        s
    }
}

impl Elab<'_> {
    /// Evaluates the syntactic path of a node reference in the current scope.
    pub(crate) fn node_path(&mut self, e: &Expr) -> Option<NodePath> {
        // A variable bound to nodes (a loop over a node array, `let s = gpu[0];`, a `node`
        // parameter) stands for those nodes.
        if let ExprKind::Name(n) = &e.kind {
            if let Some(Value::Nodes(ids)) = self.lookup_var(n) {
                return Some(NodePath {
                    key: n.clone(),
                    sels: Vec::new(),
                    span: e.span,
                    fixed: Some(ids.clone()),
                });
            }
        }
        let mut segs: Vec<(String, Vec<&Expr>)> = Vec::new();
        if !collect_segments(e, &mut segs) {
            self.err(
                Diagnostic::error(Code::TypeMismatch, e.span, "expected a node name")
                    .label("not a node reference")
                    .help("write a node as `name`, `name[i]` or `instance.name[i]`"),
            );
            return None;
        }
        if self.poisoned.contains(&segs[0].0) {
            return None;
        }
        let mut key = self.prefix.clone();
        let last = segs.len() - 1;
        let mut sels = Vec::new();
        for (i, (name, idx)) in segs.iter().enumerate() {
            key.push_str(name);
            for ix in idx {
                let sel = self.eval_sel(ix)?;
                if i == last {
                    sels.push(sel);
                } else {
                    match sel {
                        Sel::One(v) => key.push_str(&format!("[{v}]")),
                        Sel::Range(..) => {
                            self.err(
                                Diagnostic::error(Code::TypeMismatch, ix.span, "an instance index must be a single integer")
                                    .label("range not allowed here")
                                    .help("ranges may only select nodes of the last array, e.g. `box[1].gpu[0..4]`"),
                            );
                            return None;
                        }
                    }
                }
            }
            if i != last {
                key.push('.');
            }
        }
        Some(NodePath {
            key,
            sels,
            span: e.span,
            fixed: None,
        })
    }

    fn eval_sel(&mut self, e: &Expr) -> Option<Sel> {
        match self.eval(e)? {
            Value::Range(a, b) => Some(Sel::Range(a, b)),
            v => self.expect_int(v, e.span).map(Sel::One),
        }
    }

    /// Resolves a path against the declared arrays.
    pub(crate) fn resolve_path(&mut self, p: &NodePath) -> Option<Vec<NodeId>> {
        if let Some(ids) = &p.fixed {
            return Some(ids.clone());
        }
        let Some(info) = self.arrays.get(&p.key) else {
            let short = p.key.rsplit('.').next().unwrap_or(&p.key);
            let message = format!("no node `{}` is declared", p.key);
            if self.seen_error(Code::UndeclaredNode, p.span, &message) {
                return None;
            }
            let d =
                Diagnostic::error(Code::UndeclaredNode, p.span, message).label("undeclared node");
            let d = match super::suggest::closest(&p.key, self.arrays.keys().map(|s| s.as_str())) {
                Some(s) => d.help(format!("did you mean `{s}`? declare nodes with `compute {short}[n];` or `switch {short};`")),
                None => d.help(format!("declare it first, e.g. `compute {short}[n];` or `switch {short};`")),
            };
            self.err(d);
            return None;
        };
        let info = info.clone();
        if p.sels.len() > info.dims.len() {
            self.err(
                Diagnostic::error(
                    Code::UndeclaredNode,
                    p.span,
                    format!(
                        "`{}` has {} dimension{}, but {} indices are given",
                        p.key,
                        info.dims.len(),
                        if info.dims.len() == 1 { "" } else { "s" },
                        p.sels.len()
                    ),
                )
                .label("too many indices")
                .secondary(info.span, "declared here")
                .help("use one index per declared dimension"),
            );
            return None;
        }
        // Ranges per dimension.
        let mut ranges: Vec<(i64, i64)> = Vec::with_capacity(info.dims.len());
        for (d, &len) in info.dims.iter().enumerate() {
            let (a, b) = match p.sels.get(d) {
                Some(Sel::One(i)) => (*i, i.saturating_add(1)),
                Some(Sel::Range(a, b)) => (*a, *b),
                None => (0, len as i64),
            };
            if a < 0 || b > len as i64 || a > b {
                let shown = p.shown();
                let nodes = if len == 1 { "node" } else { "nodes" };
                let (message, help) = if info.dims.len() == 1 {
                    (
                        format!("`{shown}` is out of bounds: `{}` has {len} {nodes}", p.key),
                        format!("indices of `{}` run from 0 to {}", p.key, len as i64 - 1),
                    )
                } else {
                    (
                        format!(
                            "`{shown}` is out of bounds: dimension {d} of `{}` has {len} {nodes}",
                            p.key
                        ),
                        format!(
                            "indices of dimension {d} run from 0 to {}; dimensions count from 0",
                            len as i64 - 1
                        ),
                    )
                };
                self.err(
                    Diagnostic::error(Code::UndeclaredNode, p.span, message)
                        .label("no such node")
                        .secondary(info.span, "declared here")
                        .help(help),
                );
                return None;
            }
            ranges.push((a, b));
        }
        let mut out = Vec::new();
        let mut strides = vec![1usize; info.dims.len()];
        for d in (0..info.dims.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * info.dims[d + 1];
        }
        let mut cur: Vec<i64> = ranges.iter().map(|r| r.0).collect();
        if ranges.iter().any(|r| r.0 == r.1) {
            return Some(out);
        }
        loop {
            let off: usize = cur.iter().zip(&strides).map(|(c, s)| *c as usize * s).sum();
            out.push(info.first + off);
            // Odometer increment.
            let mut d = ranges.len();
            loop {
                if d == 0 {
                    return Some(out);
                }
                d -= 1;
                cur[d] += 1;
                if cur[d] < ranges[d].1 {
                    break;
                }
                cur[d] = ranges[d].0;
            }
        }
    }

    /// A node reference in expression position (participants, roots): resolved immediately.
    pub(crate) fn eval_node_ref(&mut self, e: &Expr) -> Option<Value> {
        if let ExprKind::Name(n) = &e.kind {
            if self.poisoned.contains(n) {
                return None;
            }
            if !self.arrays.contains_key(&format!("{}{n}", self.prefix)) {
                let message = format!("unknown name `{n}`");
                if self.seen_error(Code::UnknownName, e.span, &message) {
                    return None;
                }
                let d = Diagnostic::error(Code::UnknownName, e.span, message)
                    .label("not a variable, parameter or node");
                let cands: Vec<String> = self
                    .scopes
                    .iter()
                    .flat_map(|s| s.keys().cloned())
                    .chain(self.globals.keys().cloned())
                    .chain(self.arrays.keys().cloned())
                    .collect();
                let d = match super::suggest::closest(n, cands.iter().map(|s| s.as_str())) {
                    Some(s) => d.help(format!("did you mean `{s}`?")),
                    None => d.help(
                        "declare it with `let`, `param`, or as a node with `compute`/`switch`",
                    ),
                };
                self.err(d);
                return None;
            }
        }
        let p = self.node_path(e)?;
        self.resolve_path(&p).map(Value::Nodes)
    }
}

fn collect_segments<'e>(e: &'e Expr, out: &mut Vec<(String, Vec<&'e Expr>)>) -> bool {
    match &e.kind {
        ExprKind::Name(n) => {
            out.push((n.clone(), Vec::new()));
            true
        }
        ExprKind::Field(b, f) => {
            if !collect_segments(b, out) {
                return false;
            }
            out.push((f.name.clone(), Vec::new()));
            true
        }
        ExprKind::Index(b, i) => {
            if !collect_segments(b, out) {
                return false;
            }
            if let Some(last) = out.last_mut() {
                last.1.push(i);
            }
            true
        }
        _ => false,
    }
}
