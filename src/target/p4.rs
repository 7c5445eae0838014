//! The `p4` target: a directory with a P4_16 switch program for v1model, its P4Info and every
//! switch's control-plane state ([`crate::backend::p4`]).
//!
//! Capability: an in-network family the backend emits and a schedule within the limits of the
//! target block's profile (`limits: bmv2` or `tofino`; E0050 otherwise). Emission: the Canary
//! program is compiled from the protocol's rule table, which the exploration behind
//! `collc build --emit report` and the packet simulator run. Validation: the P4Info and every
//! switch's P4Runtime write request are read back and each entry is checked against the
//! P4Info (ids, match fields, parameter widths, canonical byte strings), and every
//! `simple_switch_CLI` command names a table and action the P4Info has.

use super::{Artifact, Emitted, Options, Target, family_check};
use crate::backend::p4::{self, BMV2, P4Options, TOFINO, textproto};
use crate::diag::{Code, Diagnostic};
use crate::progress::{Phase, Progress};
use crate::sema::model::{Model, ModelParam, TargetKind};

pub(super) struct P4;

/// The backend's options from the target block (or flags).
pub(crate) fn options(o: &Options) -> P4Options {
    let mut p = P4Options::default();
    if o.word("limits") == Some("tofino") {
        p.limits = TOFINO;
    } else {
        p.limits = BMV2;
    }
    let us = |name: &str| match o.values.get(name) {
        Some(ModelParam::Quantity(q)) => Some(p4::micros(&q.value)),
        _ => None,
    };
    if let Some(c) = us("clock_period") {
        p.clock_period_us = c;
    }
    p.retransmit_us = us("retransmit");
    if let Some(n) = o.output_name.as_deref().filter(|n| !n.is_empty()) {
        p.package = p4::project::package(n);
    }
    p
}

/// An internal error about the files made: the targets' shared form, with E0050.
fn internal(o: &Options, what: String) -> Diagnostic {
    super::msccl::internal(Code::P4Limit, o, &what)
}

impl Target for P4 {
    fn kind(&self) -> TargetKind {
        TargetKind::P4
    }

    fn about(&self) -> &'static str {
        "a directory (`-o DIR`): a P4_16 v1model switch program, its P4Info and each switch's table entries"
    }

    fn directory(&self) -> bool {
        true
    }

    fn capable(&self, m: &Model, o: &Options) -> Vec<Diagnostic> {
        let mut d = family_check(m, TargetKind::P4, o);
        if d.is_empty() {
            d.extend(p4::check(m, &options(o)).iter().map(|e| {
                let span = match (&m.schedule, e.prop) {
                    (Some(s), Some(p)) => s.prop_span(p),
                    (Some(s), None) => s.span,
                    (None, _) => o.span,
                };
                e.diagnostic(span)
            }));
        }
        d
    }

    fn emit<'a>(
        &self,
        m: &'a Model,
        o: &Options,
        progress: &dyn Progress,
    ) -> Result<Emitted<'a>, Vec<Diagnostic>> {
        progress.phase(Phase::Emit, None);
        let files = p4::emit(m, &options(o)).map_err(|e| vec![e.diagnostic(o.span)])?;
        Ok(Emitted {
            artifact: Artifact::Dir {
                files,
                mark: ("README.md", p4::MARK),
            },
            warnings: Vec::new(),
        })
    }

    fn validate(&self, _: &Model, o: &Options, a: &Artifact) -> Vec<Diagnostic> {
        let Artifact::Dir { files, .. } = a else {
            return vec![internal(o, "the P4 target made no directory".into())];
        };
        let Some(info_text) = files
            .iter()
            .find(|(p, _)| p.ends_with(".p4info.txtpb"))
            .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        else {
            return vec![internal(o, "no P4Info".into())];
        };
        let info = match textproto::info(&info_text) {
            Ok(i) => i,
            Err(e) => return vec![internal(o, format!("the P4Info does not parse: {e}"))],
        };
        let names: Vec<&str> = info
            .tables
            .values()
            .map(|t| t.0.as_str())
            .chain(info.actions.values().map(|a| a.0.as_str()))
            .collect();
        let mut out = Vec::new();
        for (path, bytes) in files {
            let body = String::from_utf8_lossy(bytes);
            if path.ends_with(".p4runtime.txtpb")
                && let Err(e) = textproto::check(&info, &body)
            {
                out.push(internal(o, format!("{path}: {e}")));
            }
            if path.ends_with(".cli.txt") {
                for line in body.lines() {
                    let w: Vec<&str> = line.split_whitespace().collect();
                    let named = match w.first() {
                        Some(&"table_add") | Some(&"table_set_default") => &w[1..3.min(w.len())],
                        _ => &[][..],
                    };
                    if let Some(n) = named.iter().find(|n| !names.contains(n)) {
                        out.push(internal(o, format!("{path}: `{n}` is not in the P4Info")));
                    }
                }
            }
        }
        out
    }
}
