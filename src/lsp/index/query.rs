//! Questions asked of a built [`Index`]: what is at an offset, every occurrence of a definition,
//! the names visible at an offset, and a generator with its parameters.

use super::{Def, DefKind, Hit, Index};
use crate::diag::{FileId, Span};

impl Index {
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
