//! The elaborator: runs topology bodies (node declarations, links, loops, conditions, `let`,
//! generator instantiation) and builds the [`Topology`]. Loops and generators are bounded by
//! [`Limits`], so a runaway generator is a diagnostic (E0018, E0023), never an out-of-memory.

mod declare;
mod generator;
mod stmt;

use super::model::{Edge, Link, Node, NodeId, Topology};
use super::nodes::{ArrayInfo, NodePath};
use super::value::Value;
use crate::diag::{Code, Diagnostic, Diagnostics, Span};
use crate::syntax::ast::{self, Call, Stmt};
use num_rational::BigRational;
use petgraph::graph::DiGraph;
use std::collections::HashMap;

pub use generator::TYPES;

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
    /// Ops of a lowered program (estimated from the model before lowering) or of a program read
    /// from `.ir`, `.xml` or `.goal` text.
    pub max_ops: u64,
    /// Buffer slots (chunks) of all processes of a program, summed, before any is allocated.
    pub max_slots: u64,
    /// Events a simulation may process.
    pub max_events: u64,
    /// Packets the packet simulator may hold at once.
    pub max_packets: u64,
}

impl Limits {
    /// The most ops a program may have unless `--max-ops` says otherwise: about a gigabyte
    /// while lowering, proving and emitting.
    pub const MAX_OPS: u64 = 1 << 23;
    /// The most buffer slots unless `--max-slots` says otherwise.
    pub const MAX_SLOTS: u64 = 1 << 24;
    /// The most simulated events unless `--max-events` says otherwise.
    pub const MAX_EVENTS: u64 = 1 << 27;
    /// The most packets alive at once in the packet simulator unless `--max-packets` says
    /// otherwise: about 175 B each, some 370 MB.
    pub const MAX_PACKETS: u64 = 1 << 21;
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_nodes: 1_000_000,
            max_links: 4_000_000,
            max_iterations: 20_000_000,
            max_depth: 32,
            max_ops: Limits::MAX_OPS,
            max_slots: Limits::MAX_SLOTS,
            max_events: Limits::MAX_EVENTS,
            max_packets: Limits::MAX_PACKETS,
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
    /// Polled at every loop iteration: once set, elaboration stops quietly (see
    /// [`crate::sema::Options::cancel`]).
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// (code, span, message) of the errors with a "did you mean" reported so far
    /// ([`Elab::seen_error`]).
    pub(crate) reported: std::collections::HashSet<(Code, Span, String)>,
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
            reported: std::collections::HashSet::new(),
            nodes: Vec::new(),
            pending: Vec::new(),
            prefix: String::new(),
            depth: 0,
            iterations: 0,
            edges: 0,
            limits,
            aborted: false,
            cancel: None,
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
}
