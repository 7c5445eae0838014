//! Property blocks (`{ key: value; ... }`) of collectives, schedules, models and targets: unknown
//! and repeated keys are diagnosed here once, and "word" values (`dtype: f32`, `op: sum`) are
//! matched against their allowed spellings.

use super::elab::Elab;
use crate::diag::{Code, Diagnostic, Span};
use crate::syntax::ast::{ExprKind, Prop};
use std::collections::BTreeMap;

impl<'a> Elab<'a> {
    /// Collects the properties of a block by key, reporting unknown and repeated ones. A
    /// misspelled key that is close to an allowed one that the block does not set (`sise` for
    /// `size`) is reported and then taken as that key, so that no "`size` is missing" follows.
    pub(crate) fn props<'p>(
        &mut self,
        props: &'p [Prop],
        allowed: &[&'p str],
        what: &str,
    ) -> BTreeMap<&'p str, &'p Prop> {
        let mut out: BTreeMap<&'p str, &'p Prop> = BTreeMap::new();
        let given: Vec<&str> = props.iter().map(|p| p.key.name.as_str()).collect();
        for p in props {
            if p.key.name.is_empty() {
                continue; // a recovered syntax error
            }
            if let Some(prev) = out.get(p.key.name.as_str()) {
                let prev = prev.key.span;
                self.err(
                    Diagnostic::error(
                        Code::BadProperty,
                        p.key.span,
                        format!("`{}` is set twice in {what}", p.key.name),
                    )
                    .label("set again")
                    .secondary(prev, "first set here")
                    .help("remove one of them"),
                );
                continue;
            }
            if !allowed.contains(&p.key.name.as_str()) {
                let d = Diagnostic::error(
                    Code::BadProperty,
                    p.key.span,
                    format!("{what} has no property `{}`", p.key.name),
                )
                .label("unknown property");
                let list = if allowed.is_empty() {
                    "none".to_string()
                } else {
                    allowed.join(", ")
                };
                let close = super::suggest::closest(&p.key.name, allowed.iter().copied());
                let d = match close {
                    Some(s) => d.help(format!("did you mean `{s}`? properties of {what}: {list}")),
                    None => d.help(format!("properties of {what}: {list}")),
                };
                self.err(d);
                if let Some(s) = close.filter(|s| !given.contains(s) && !out.contains_key(s)) {
                    out.insert(s, p);
                }
                continue;
            }
            out.insert(p.key.name.as_str(), p);
        }
        out
    }

    /// Reports a property that must be present.
    pub(crate) fn missing(&mut self, span: Span, key: &str, what: &str, example: &str) {
        self.err(
            Diagnostic::error(Code::BadProperty, span, format!("{what} needs `{key}`"))
                .label(format!("`{key}` is missing"))
                .help(format!("add `{key}: {example};`")),
        );
    }

    /// Matches a bare word against allowed spellings.
    pub(crate) fn word<T: Copy>(
        &mut self,
        p: &Prop,
        choices: &[(&str, T)],
        what: &str,
    ) -> Option<T> {
        let names: Vec<&str> = choices.iter().map(|c| c.0).collect();
        let ExprKind::Name(n) = &p.value.kind else {
            if !matches!(p.value.kind, ExprKind::Error) {
                self.err(
                    Diagnostic::error(
                        Code::BadValue,
                        p.value.span,
                        format!("{what} must be one of: {}", names.join(", ")),
                    )
                    .label("expected a word")
                    .help(format!("write one of: {}", names.join(", "))),
                );
            }
            return None;
        };
        if let Some((_, v)) = choices.iter().find(|c| c.0 == n) {
            return Some(*v);
        }
        self.bad_word(n, p.value.span, &names, what);
        None
    }

    pub(crate) fn bad_word(&mut self, n: &str, span: Span, names: &[&str], what: &str) {
        let d = Diagnostic::error(Code::BadValue, span, format!("unknown {what} `{n}`"))
            .label(format!("not a {what}"));
        let d = match super::suggest::closest(n, names.iter().copied()) {
            Some(s) => d.help(format!(
                "did you mean `{s}`? choose one of: {}",
                names.join(", ")
            )),
            None => d.help(format!("choose one of: {}", names.join(", "))),
        };
        self.err(d);
    }
}
