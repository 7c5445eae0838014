//! The elaborator: runs topology bodies (node declarations, links, loops, conditions, `let`,
//! generator instantiation) and builds the [`Topology`]. Loops and generators are bounded by
//! [`Limits`], so a runaway generator is a diagnostic (E0018, E0023), never an out-of-memory.

use super::model::{Edge, Link, Node, NodeId, NodeKind, Topology};
use super::nodes::{ArrayInfo, NodePath};
use super::units::Dim;
use super::value::Value;
use crate::diag::{Code, Diagnostic, Diagnostics, Span};
use crate::syntax::ast::{self, Call, Expr, LinkDir, Stmt};
use num_rational::BigRational;
use num_traits::{Signed, Zero};
use petgraph::graph::DiGraph;
use std::collections::HashMap;

/// Bounds on what a topology may generate.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_nodes: usize,
    /// Directed edges, counting both directions of `<->` and every parallel copy.
    pub max_links: usize,
    /// Total loop iterations.
    pub max_iterations: u64,
    /// Generator nesting depth.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_nodes: 1_000_000,
            max_links: 4_000_000,
            max_iterations: 20_000_000,
            max_depth: 32,
        }
    }
}

/// A generator definition and the file it lives in.
#[derive(Clone, Copy)]
pub struct GenDef<'a> {
    pub name: &'a ast::Ident,
    pub params: &'a [ast::ParamDecl],
    pub body: &'a [Stmt],
}

struct PendingLink {
    from: NodePath,
    to: NodePath,
    bandwidth: BigRational,
    latency: BigRational,
    bidirectional: bool,
    parallel: u32,
    span: Span,
    /// The outermost generator call this link came from, for diagnostics.
    site: Option<(Span, String)>,
}

pub(crate) struct Elab<'a> {
    pub diags: Diagnostics,
    pub globals: HashMap<String, (Value, Span)>,
    pub scopes: Vec<HashMap<String, Value>>,
    /// Names whose definition failed: their uses stay silent instead of reporting "unknown".
    pub poisoned: std::collections::HashSet<String>,
    /// Set when building the topology reported errors; whole-topology checks then stay quiet.
    pub topology_incomplete: bool,
    /// Call sites of the generators being instantiated, outermost first.
    pub sites: Vec<(Span, String)>,
    pub generators: HashMap<String, GenDef<'a>>,
    pub arrays: HashMap<String, ArrayInfo>,
    /// Instance names of `use ... as name` (with the trailing `.`), where each was given.
    instances: HashMap<String, Span>,
    pub nodes: Vec<Node>,
    pending: Vec<PendingLink>,
    pub prefix: String,
    depth: usize,
    iterations: u64,
    edges: usize,
    pub limits: Limits,
    /// Set once a limit was hit: elaboration stops quietly after the one diagnostic.
    aborted: bool,
}

impl<'a> Elab<'a> {
    pub fn new(limits: Limits) -> Elab<'a> {
        Elab {
            diags: Diagnostics::default(),
            globals: HashMap::new(),
            scopes: Vec::new(),
            poisoned: std::collections::HashSet::new(),
            sites: Vec::new(),
            topology_incomplete: false,
            generators: HashMap::new(),
            arrays: HashMap::new(),
            instances: HashMap::new(),
            nodes: Vec::new(),
            pending: Vec::new(),
            prefix: String::new(),
            depth: 0,
            iterations: 0,
            edges: 0,
            limits,
            aborted: false,
        }
    }

    /// Runs a topology body at the top level and returns the finished topology.
    pub fn topology_block(&mut self, name: &ast::Ident, body: &[Stmt], span: Span) -> Topology {
        self.scopes.push(HashMap::new());
        self.stmts(body);
        self.scopes.pop();
        self.finish(name, span)
    }

    /// `topology t = gen(args);`
    pub fn topology_call(&mut self, name: &ast::Ident, call: &Call, span: Span) -> Topology {
        self.instantiate(call, String::new());
        self.finish(name, span)
    }

    fn finish(&mut self, name: &ast::Ident, span: Span) -> Topology {
        let pending = std::mem::take(&mut self.pending);
        let mut links = Vec::with_capacity(pending.len());
        let outer_sites = std::mem::take(&mut self.sites);
        for p in pending {
            self.sites = p.site.iter().cloned().collect();
            let from = self.resolve_one(&p.from);
            let to = self.resolve_one(&p.to);
            let (Some(from), Some(to)) = (from, to) else {
                continue;
            };
            if from == to {
                self.err(
                    Diagnostic::error(
                        Code::BadValue,
                        p.span,
                        format!("link from `{}` to itself", self.nodes[from].name),
                    )
                    .label("self-loop")
                    .help("a link must join two different nodes"),
                );
                continue;
            }
            links.push(Link {
                from,
                to,
                bandwidth: p.bandwidth,
                latency: p.latency,
                bidirectional: p.bidirectional,
                parallel: p.parallel,
                span: p.span,
            });
        }
        self.sites = outer_sites;
        let nodes = std::mem::take(&mut self.nodes);
        let mut graph = DiGraph::with_capacity(nodes.len(), self.edges);
        for i in 0..nodes.len() {
            graph.add_node(i);
        }
        for (li, l) in links.iter().enumerate() {
            for _ in 0..l.parallel {
                let e = Edge {
                    link: li,
                    bandwidth: l.bandwidth.clone(),
                    latency: l.latency.clone(),
                };
                graph.add_edge(
                    petgraph::graph::NodeIndex::new(l.from),
                    petgraph::graph::NodeIndex::new(l.to),
                    e.clone(),
                );
                if l.bidirectional {
                    graph.add_edge(
                        petgraph::graph::NodeIndex::new(l.to),
                        petgraph::graph::NodeIndex::new(l.from),
                        e,
                    );
                }
            }
        }
        Topology {
            name: name.name.clone(),
            span,
            nodes,
            links,
            graph,
        }
    }

    fn resolve_one(&mut self, p: &NodePath) -> Option<NodeId> {
        let ids = self.resolve_path(p)?;
        if ids.len() == 1 {
            return Some(ids[0]);
        }
        self.err(
            Diagnostic::error(
                Code::TypeMismatch,
                p.span,
                format!(
                    "a link endpoint must be one node, but `{}` names {} nodes",
                    p.shown(),
                    ids.len()
                ),
            )
            .label(format!("{} nodes", ids.len()))
            .help("index every dimension to name one node, or link each node in a `for` loop"),
        );
        None
    }

    pub(crate) fn stmts(&mut self, body: &[Stmt]) {
        for s in body {
            if self.aborted {
                return;
            }
            self.stmt(s);
        }
    }

    fn bind(&mut self, name: &ast::Ident, v: Value) {
        if let Some(scope) = self.scopes.last_mut() {
            if scope.contains_key(&name.name) {
                self.diags.push(
                    Diagnostic::error(
                        Code::DuplicateName,
                        name.span,
                        format!("`{}` is already defined in this block", name.name),
                    )
                    .label("defined again")
                    .help("choose another name"),
                );
                return;
            }
            scope.insert(name.name.clone(), v);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Node {
                kind,
                name,
                dims,
                span,
            } => self.declare(*kind, name, dims, *span),
            Stmt::Link {
                from,
                dir,
                to,
                bandwidth,
                attrs,
                span,
            } => self.link(from, *dir, to, bandwidth, attrs, *span),
            Stmt::For {
                var,
                iter,
                body,
                span: _,
            } => {
                let Some(items) = self.iteration_values(iter) else {
                    return;
                };
                for v in items {
                    self.iterations += 1;
                    if self.iterations > self.limits.max_iterations {
                        self.limit_hit(
                            iter.span,
                            "loop iterations",
                            self.limits.max_iterations as usize,
                            "--max-iterations",
                        );
                        return;
                    }
                    let mut scope = HashMap::new();
                    scope.insert(var.name.clone(), v);
                    self.scopes.push(scope);
                    self.stmts(body);
                    self.scopes.pop();
                    if self.aborted {
                        return;
                    }
                }
            }
            Stmt::If {
                cond,
                then,
                els,
                span: _,
            } => {
                let Some(c) = self.eval_bool(cond) else {
                    return;
                };
                let branch = if c { Some(then) } else { els.as_ref() };
                if let Some(b) = branch {
                    self.scopes.push(HashMap::new());
                    self.stmts(b);
                    self.scopes.pop();
                }
            }
            Stmt::Let {
                name,
                value,
                span: _,
            } => match self.eval(value) {
                Some(v) => self.bind(name, v),
                None => {
                    self.poisoned.insert(name.name.clone());
                }
            },
            Stmt::Use {
                call,
                alias,
                span: _,
            } => {
                let Some(p) = self.alias_prefix(alias) else {
                    return;
                };
                if let Some(prev) = self.instances.get(&p) {
                    let prev = *prev;
                    let name = p.trim_end_matches('.');
                    self.err(
                        Diagnostic::error(
                            Code::DuplicateName,
                            alias.span,
                            format!("instance `{name}` is declared twice"),
                        )
                        .label("declared again")
                        .secondary(prev, "first declared here")
                        .help("give each `use` its own name, e.g. `as box[i]` in a loop"),
                    );
                    return;
                }
                self.instances.insert(p.clone(), alias.span);
                self.instantiate(call, p);
            }
            Stmt::Error(_) => {}
        }
    }

    fn iteration_values(&mut self, iter: &Expr) -> Option<Vec<Value>> {
        match self.eval(iter)? {
            Value::Range(a, b) => {
                let n = (b - a).max(0) as u64;
                if self.iterations.saturating_add(n) > self.limits.max_iterations {
                    self.limit_hit(
                        iter.span,
                        "loop iterations",
                        self.limits.max_iterations as usize,
                        "--max-iterations",
                    );
                    return None;
                }
                Some((a..b).map(Value::int).collect())
            }
            Value::List(items) => Some(items),
            Value::Nodes(ids) => Some(ids.into_iter().map(|i| Value::Nodes(vec![i])).collect()),
            other => {
                self.err(
                    Diagnostic::error(
                        Code::TypeMismatch,
                        iter.span,
                        format!("cannot loop over {}", other.type_name()),
                    )
                    .label("not iterable")
                    .help("loop over a range `0..n` or a list `[a, b, c]`"),
                );
                None
            }
        }
    }

    fn limit_hit(&mut self, span: Span, what: &str, limit: usize, flag: &str) {
        if self.aborted {
            return;
        }
        self.aborted = true;
        let d = Diagnostic::error(Code::LimitExceeded, span, format!("the topology exceeds the limit of {} {what}", thousands(limit)))
            .label("the limit is reached here")
            .help(format!("check the loop bounds and generator arguments; if the size is intended, raise the limit with `{flag}`"));
        self.err(if what == "directed links" {
            d.note("each `<->` link counts as two directed links, and each `parallel` copy counts")
        } else {
            d
        });
    }

    fn alias_prefix(&mut self, alias: &Expr) -> Option<String> {
        let p = self.node_path(alias)?;
        let mut s = p.key;
        for sel in p.sels {
            match sel {
                super::nodes::Sel::One(i) => s.push_str(&format!("[{i}]")),
                super::nodes::Sel::Range(..) => {
                    self.err(
                        Diagnostic::error(
                            Code::TypeMismatch,
                            alias.span,
                            "an instance name cannot use a range",
                        )
                        .label("range")
                        .help("name one instance per loop iteration, e.g. `as box[i]`"),
                    );
                    return None;
                }
            }
        }
        s.push('.');
        Some(s)
    }

    fn declare(&mut self, kind: ast::NodeKind, name: &ast::Ident, dims: &[Expr], span: Span) {
        let mut sizes = Vec::with_capacity(dims.len());
        let mut total: usize = 1;
        for d in dims {
            let Some(n) = self.eval_int(d) else {
                self.poisoned.insert(name.name.clone());
                return;
            };
            if n < 0 {
                self.err(
                    Diagnostic::error(
                        Code::NonPositive,
                        d.span,
                        format!("array size {n} is negative"),
                    )
                    .label("negative size")
                    .help("an array needs a size of at least 1"),
                );
                return;
            }
            if n == 0 {
                self.err(
                    Diagnostic::error(Code::NonPositive, d.span, format!("node array `{}` has size 0", name.name))
                        .label("this size is 0")
                        .help("an array needs a size of at least 1; guard the declaration with `if` to skip it"),
                );
                return;
            }
            total = total.saturating_mul(n as usize);
            sizes.push(n as usize);
        }
        if self.nodes.len().saturating_add(total) > self.limits.max_nodes {
            self.limit_hit(span, "nodes", self.limits.max_nodes, "--max-nodes");
            return;
        }
        let key = format!("{}{}", self.prefix, name.name);
        if let Some(prev) = self.arrays.get(&key) {
            let prev = prev.span;
            self.err(
                Diagnostic::error(
                    Code::DuplicateName,
                    name.span,
                    format!("node `{key}` is declared twice"),
                )
                .label("declared again")
                .secondary(prev, "first declared here")
                .help("give each node array its own name"),
            );
            return;
        }
        let kind = match kind {
            ast::NodeKind::Compute => NodeKind::Compute,
            ast::NodeKind::Switch => NodeKind::Switch,
        };
        let first = self.nodes.len();
        self.arrays.insert(
            key.clone(),
            ArrayInfo {
                dims: sizes.clone(),
                first,
                kind,
                span,
            },
        );
        let mut idx = vec![0usize; sizes.len()];
        for _ in 0..total {
            let mut n = key.clone();
            for i in &idx {
                n.push_str(&format!("[{i}]"));
            }
            self.nodes.push(Node {
                name: n,
                kind,
                span,
            });
            for d in (0..idx.len()).rev() {
                idx[d] += 1;
                if idx[d] < sizes[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
    }

    fn link(
        &mut self,
        from: &Expr,
        dir: LinkDir,
        to: &Expr,
        bandwidth: &Expr,
        attrs: &[ast::Attr],
        span: Span,
    ) {
        let f = self.node_path(from);
        let t = self.node_path(to);
        let bw = self.eval_quantity(bandwidth, Dim::BANDWIDTH, "link bandwidth");
        let mut latency = BigRational::zero();
        let mut parallel: i64 = 1;
        let mut seen: Vec<&str> = Vec::new();
        let mut ok = true;
        for a in attrs {
            if seen.contains(&a.key.name.as_str()) {
                self.err(
                    Diagnostic::error(
                        Code::BadProperty,
                        a.key.span,
                        format!("`{}` is given twice", a.key.name),
                    )
                    .label("repeated")
                    .help("give each link attribute once"),
                );
                ok = false;
                continue;
            }
            seen.push(&a.key.name);
            match a.key.name.as_str() {
                "latency" => match self.eval_quantity(&a.value, Dim::TIME, "link latency") {
                    Some(l) if l.is_negative() => {
                        self.err(
                            Diagnostic::error(
                                Code::NonPositive,
                                a.value.span,
                                "link latency is negative",
                            )
                            .label("negative latency")
                            .help("latency must be zero or more"),
                        );
                        ok = false;
                    }
                    Some(l) => latency = l,
                    None => ok = false,
                },
                "parallel" => match self.eval_int(&a.value) {
                    Some(p) if p >= 1 => parallel = p,
                    Some(p) => {
                        self.err(
                            Diagnostic::error(Code::NonPositive, a.value.span, format!("`parallel {p}`: a link needs at least one copy"))
                                .label("must be at least 1")
                                .help("write `parallel 2` or more for parallel links, or leave it out for one"),
                        );
                        ok = false;
                    }
                    None => ok = false,
                },
                other => {
                    let d = Diagnostic::error(
                        Code::BadProperty,
                        a.key.span,
                        format!("unknown link attribute `{other}`"),
                    )
                    .label("unknown attribute");
                    let d = match super::suggest::closest(
                        other,
                        ["latency", "parallel"].into_iter(),
                    ) {
                        Some(s) => d.help(format!(
                            "did you mean `{s}`? links take `latency <time>` and `parallel <count>`"
                        )),
                        None => d.help("links take `latency <time>` and `parallel <count>`"),
                    };
                    self.err(d);
                    ok = false;
                }
            }
        }
        let Some(bw) = bw else { return };
        if !bw.is_positive() {
            self.err(
                Diagnostic::error(Code::NonPositive, bandwidth.span, format!("link bandwidth must be positive, found {}", super::units::Quantity { value: bw, dim: Dim::BANDWIDTH }))
                    .label("not positive")
                    .help("give every link a bandwidth above zero; leave the link out if it does not exist"),
            );
            return;
        }
        let (Some(f), Some(t)) = (f, t) else { return };
        if !ok {
            return;
        }
        let per = if dir == LinkDir::Both { 2 } else { 1 };
        let add = (parallel as usize).saturating_mul(per);
        if self.edges.saturating_add(add) > self.limits.max_links {
            self.limit_hit(span, "directed links", self.limits.max_links, "--max-links");
            return;
        }
        self.edges += add;
        self.pending.push(PendingLink {
            from: f,
            to: t,
            bandwidth: bw,
            latency,
            bidirectional: dir == LinkDir::Both,
            parallel: parallel as u32,
            span,
            site: self.sites.first().cloned(),
        });
    }

    /// Instantiates a generator with node-name prefix `prefix` (ending in `.`, or empty).
    pub(crate) fn instantiate(&mut self, call: &Call, prefix: String) {
        let name = &call.callee.name;
        let Some(def) = self.generators.get(name).copied() else {
            let d = Diagnostic::error(
                Code::UnknownName,
                call.callee.span,
                format!("unknown generator `{name}`"),
            )
            .label("no generator with this name");
            let d = match super::suggest::closest(name, self.generators.keys().map(|s| s.as_str())) {
                Some(s) => d.help(format!("did you mean `{s}`?")),
                None => d.help(format!("define it with `generator {name}(...) {{ ... }}` or import the module that has it, e.g. `import {name};`")),
            };
            self.err(d);
            return;
        };
        if self.depth >= self.limits.max_depth {
            if !self.aborted {
                self.aborted = true;
                self.err(
                    Diagnostic::error(Code::Recursion, call.span, format!("generators nest more than {} deep", self.limits.max_depth))
                        .label("nested too deep here")
                        .help(format!("`{name}` probably instantiates itself without end; give the recursion a base case with `if`")),
                );
            }
            return;
        }
        let Some(scope) = self.bind_args(def, call) else {
            return;
        };
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![scope]);
        // `prefix` is the instance's full name: `alias_prefix` already starts it with the
        // enclosing instance's prefix, so it replaces (not extends) the current one.
        let saved_prefix = std::mem::replace(&mut self.prefix, prefix);
        self.depth += 1;
        self.sites.push((call.span, name.clone()));
        self.stmts(def.body);
        self.sites.pop();
        self.depth -= 1;
        self.prefix = saved_prefix;
        self.scopes = saved_scopes;
    }

    fn bind_args(&mut self, def: GenDef<'a>, call: &Call) -> Option<HashMap<String, Value>> {
        // Evaluate arguments in the caller's scope.
        let mut positional = Vec::new();
        let mut named: Vec<(&ast::Ident, Value, Span)> = Vec::new();
        let mut ok = true;
        // A positional argument after a named one: which parameter it fills is unclear, so the
        // arguments are not matched to parameters at all (no follow-on "given twice").
        let mut misplaced = false;
        for (i, a) in call.args.iter().enumerate() {
            let v = self.eval(&a.value);
            match (&a.name, v) {
                (_, None) => ok = false,
                (None, Some(v)) => {
                    if call.args[..i].iter().any(|x| x.name.is_some()) {
                        misplaced = true;
                        self.err(
                            Diagnostic::error(
                                Code::BadArguments,
                                a.value.span,
                                "positional argument after a named one",
                            )
                            .label("positional")
                            .help(
                                "put positional arguments before named ones, or name this one too",
                            ),
                        );
                        ok = false;
                    }
                    positional.push((v, a.value.span));
                }
                (Some(n), Some(v)) => named.push((n, v, a.value.span)),
            }
        }
        if misplaced {
            return None;
        }
        let gname = &def.name.name;
        if positional.len() > def.params.len() {
            self.err(
                Diagnostic::error(
                    Code::BadArguments,
                    positional[def.params.len()].1,
                    format!(
                        "`{gname}` takes {} argument{}, given {}",
                        def.params.len(),
                        if def.params.len() == 1 { "" } else { "s" },
                        positional.len() + named.len()
                    ),
                )
                .label("extra argument")
                .secondary(def.name.span, "generator defined here")
                .help(format!("parameters: {}", param_list(def.params))),
            );
            return None;
        }
        let mut given: Vec<Option<(Value, Span)>> = vec![None; def.params.len()];
        for (i, (v, s)) in positional.into_iter().enumerate() {
            given[i] = Some((v, s));
        }
        for (n, v, s) in named {
            match def.params.iter().position(|p| p.name.name == n.name) {
                Some(i) if given[i].is_some() => {
                    self.err(
                        Diagnostic::error(
                            Code::BadArguments,
                            n.span,
                            format!("argument `{}` is given twice", n.name),
                        )
                        .label("given again")
                        .help("pass each argument once"),
                    );
                    ok = false;
                }
                Some(i) => given[i] = Some((v, s)),
                None => {
                    let d = Diagnostic::error(
                        Code::BadArguments,
                        n.span,
                        format!("`{gname}` has no parameter `{}`", n.name),
                    )
                    .label("unknown parameter")
                    .secondary(def.name.span, "generator defined here");
                    let d = match super::suggest::closest(
                        &n.name,
                        def.params.iter().map(|p| p.name.name.as_str()),
                    ) {
                        Some(s) => d.help(format!(
                            "did you mean `{s}`? parameters: {}",
                            param_list(def.params)
                        )),
                        None => d.help(format!("parameters: {}", param_list(def.params))),
                    };
                    self.err(d);
                    ok = false;
                }
            }
        }
        if !ok {
            return None;
        }
        // Defaults are evaluated in the generator's own scope: globals and earlier parameters.
        let saved = std::mem::replace(&mut self.scopes, vec![HashMap::new()]);
        let mut result = Some(());
        for (p, g) in def.params.iter().zip(given) {
            let (v, span) = match (g, &p.default) {
                (Some(vs), _) => vs,
                (None, Some(d)) => match self.eval(d) {
                    Some(v) => (v, d.span),
                    None => {
                        result = None;
                        continue;
                    }
                },
                (None, None) => {
                    self.err(
                        Diagnostic::error(
                            Code::BadArguments,
                            call.span,
                            format!("missing argument `{}` for `{gname}`", p.name.name),
                        )
                        .label(format!("`{}` is not given", p.name.name))
                        .secondary(p.span, "parameter declared here")
                        .help(format!(
                            "pass it, e.g. `{gname}(..., {}: {})`",
                            p.name.name,
                            p.ty.as_ref().map_or("...", |t| type_example(&t.name))
                        )),
                    );
                    result = None;
                    continue;
                }
            };
            if let Some(ty) = &p.ty {
                if !self.check_type(&v, ty, span, &p.name.name) {
                    result = None;
                    continue;
                }
            }
            if let Some(s) = self.scopes.last_mut() {
                s.insert(p.name.name.clone(), v);
            }
        }
        let scope = std::mem::replace(&mut self.scopes, saved)
            .pop()
            .unwrap_or_default();
        result.map(|_| scope)
    }

    /// Checks a value against a declared parameter type (`int`, `size`, `bandwidth`, ...).
    pub(crate) fn check_type(
        &mut self,
        v: &Value,
        ty: &ast::Ident,
        span: Span,
        what: &str,
    ) -> bool {
        let t = ty.name.as_str();
        let ok = match (t, v) {
            ("bool", Value::Bool(_))
            | ("string", Value::Str(_))
            | ("list", Value::List(_))
            | ("node", Value::Nodes(_)) => true,
            ("int", Value::Num(q)) => q.is_integer(),
            (_, Value::Num(q)) => match Dim::from_type_name(t) {
                Some(d) => {
                    if d != q.dim {
                        self.err(
                            Diagnostic::error(
                                Code::DimensionMismatch,
                                span,
                                format!(
                                    "`{what}` must be a {}, found a {}",
                                    d.name(),
                                    q.dim.name()
                                ),
                            )
                            .label(format!("this is a {}", q.dim.name()))
                            .secondary(ty.span, "type declared here")
                            .help(format!(
                                "pass a {}, for example `{}`",
                                d.name(),
                                super::eval::example_unit(d)
                            )),
                        );
                        return false;
                    }
                    true
                }
                None => false,
            },
            _ => false,
        };
        if !ok {
            if !TYPES.contains(&t) {
                self.err(
                    Diagnostic::error(Code::UnknownName, ty.span, format!("unknown type `{t}`"))
                        .label("not a type")
                        .help(format!("types: {}", TYPES.join(", "))),
                );
            } else {
                let found = match v {
                    Value::Num(q) if q.dim == Dim::NONE && !q.value.is_integer() => format!(
                        "{}, which is not a whole number",
                        super::units::fmt_rational(&q.value)
                    ),
                    other => other.type_name(),
                };
                self.err(
                    Diagnostic::error(
                        Code::TypeMismatch,
                        span,
                        format!("`{what}` must be of type `{t}`, found {found}"),
                    )
                    .label(format!("this is {}", v.type_name()))
                    .secondary(ty.span, "type declared here")
                    .help(format!(
                        "pass a value of type `{t}`, for example `{}`",
                        type_example(t)
                    )),
                );
            }
        }
        ok
    }
}

/// `1000000` as `1,000,000`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A value of a parameter type, for help lines.
fn type_example(t: &str) -> &'static str {
    match t {
        "int" => "8",
        "number" => "0.5",
        "size" => "4 MiB",
        "time" => "500 ns",
        "bandwidth" => "25 GB/s",
        "inverse_bandwidth" => "0.4 ns/B",
        "bool" => "true",
        "string" => "\"name\"",
        "list" => "[1, 2, 4]",
        _ => "gpu[0]",
    }
}

/// Parameter types a generator or `param` may declare.
pub const TYPES: &[&str] = &[
    "int",
    "number",
    "size",
    "time",
    "bandwidth",
    "inverse_bandwidth",
    "bool",
    "string",
    "list",
    "node",
];

fn param_list(ps: &[ast::ParamDecl]) -> String {
    if ps.is_empty() {
        return "none".into();
    }
    ps.iter()
        .map(|p| match &p.ty {
            Some(t) => format!("{}: {}", p.name.name, t.name),
            None => p.name.name.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
