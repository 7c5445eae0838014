//! Node declarations (`gpu g[8];`, with their array shapes) and `link` statements, which are
//! queued as pending links until the topology is finished.

use super::{Elab, PendingLink};
use crate::diag::{Code, Diagnostic, Span};
use crate::sema::model::{Node, NodeKind};
use crate::sema::nodes::ArrayInfo;
use crate::sema::units::Dim;
use crate::syntax::ast::{self, Expr, LinkDir};
use num_rational::BigRational;
use num_traits::{Signed, Zero};

impl<'a> Elab<'a> {
    pub(super) fn declare(
        &mut self,
        kind: ast::NodeKind,
        name: &ast::Ident,
        dims: &[Expr],
        span: Span,
    ) {
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

    pub(super) fn link(
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
                    let d = match crate::sema::suggest::closest(
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
                Diagnostic::error(Code::NonPositive, bandwidth.span, format!("link bandwidth must be positive, found {}", crate::sema::units::Quantity { value: bw, dim: Dim::BANDWIDTH }))
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
}
