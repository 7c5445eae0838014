//! Generator instantiation: recursion depth, binding call arguments to typed parameters (with
//! the type check shared by `param`), and the help text naming parameter lists and type examples.

use super::{Elab, GenDef};
use crate::diag::{Code, Diagnostic, Span};
use crate::sema::units::Dim;
use crate::sema::value::Value;
use crate::syntax::ast::{self, Call};
use std::collections::HashMap;

impl<'a> Elab<'a> {
    /// Instantiates a generator with node-name prefix `prefix` (ending in `.`, or empty).
    pub(crate) fn instantiate(&mut self, call: &Call, prefix: String) {
        let name = &call.callee.name;
        let Some(def) = self.generators.get(name).copied() else {
            let message = format!("unknown generator `{name}`");
            if self.seen_error(Code::UnknownName, call.callee.span, &message) {
                return;
            }
            let d = Diagnostic::error(Code::UnknownName, call.callee.span, message)
                .label("no generator with this name");
            let d = match crate::sema::suggest::closest(name, self.generators.keys().map(|s| s.as_str())) {
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
                    let d = match crate::sema::suggest::closest(
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
                                crate::sema::eval::example_unit(d)
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
                        crate::sema::units::fmt_rational(&q.value)
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
