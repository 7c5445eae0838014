//! Statements of a topology body: dispatch of each statement, `for` iteration values, `let`
//! bindings, `use ... as` instance prefixes, and the diagnostic when a [`Limits`] bound is hit.

use super::Elab;
use crate::diag::{Code, Diagnostic, Span};
use crate::sema::value::Value;
use crate::syntax::ast::{Expr, Stmt};
use std::collections::HashMap;

impl<'a> Elab<'a> {
    pub(super) fn stmt(&mut self, s: &Stmt) {
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
                    if self.cancelled() {
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
                let n = crate::sema::value::range_len(a, b);
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

    /// Whether the caller asked to stop ([`crate::sema::Options::cancel`]); stops the
    /// elaboration quietly (the result is discarded) and marks the topology incomplete.
    fn cancelled(&mut self) -> bool {
        let stop = self
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed));
        if stop {
            self.aborted = true;
            self.topology_incomplete = true;
        }
        stop
    }

    pub(super) fn limit_hit(&mut self, span: Span, what: &str, limit: usize, flag: &str) {
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
                crate::sema::nodes::Sel::One(i) => s.push_str(&format!("[{i}]")),
                crate::sema::nodes::Sel::Range(..) => {
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
