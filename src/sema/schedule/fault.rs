//! What can be wrong with a stage list: [`StageProblem`] and the located [`Fault`] of a
//! collapse/expand or merge/inverse-merge pair, with its diagnostic.

use crate::diag::{Code, Diagnostic, Span};

/// A collapse/expand or merge/inverse-merge problem at one stage of a list.
#[derive(Debug, PartialEq, Eq)]
pub struct Fault {
    /// Index of the stage at fault.
    pub at: usize,
    /// Index of the stage it should match (the open collapse or merge), with a label.
    pub partner: Option<(usize, String)>,
    pub message: String,
    pub label: String,
    pub help: String,
}

impl Fault {
    pub(super) fn new(at: usize, message: String, label: impl Into<String>, help: String) -> Fault {
        Fault {
            at,
            partner: None,
            message,
            label: label.into(),
            help,
        }
    }

    pub(super) fn partner(mut self, at: usize, label: impl Into<String>) -> Fault {
        self.partner = Some((at, label.into()));
        self
    }

    pub(super) fn diagnostic(self, code: Code, span_of: &dyn Fn(usize) -> Span) -> Diagnostic {
        let d = Diagnostic::error(code, span_of(self.at), self.message)
            .label(self.label)
            .help(self.help);
        match self.partner {
            Some((i, label)) => d.secondary(span_of(i), label),
            None => d,
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum StageProblem {
    /// The factors of a group multiply to `product` instead of `size`. `group` is `None` for the
    /// whole list, else the indices of the stage opening the group (a collapse or merge) and of
    /// the stage closing it.
    Product {
        product: u64,
        size: u64,
        group: Option<(usize, usize)>,
    },
    Collapse(Fault),
    Merge(Fault),
}
