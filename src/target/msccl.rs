//! The `msccl` target: MSCCL XML for NCCL/RCCL's msccl-executor ([`crate::backend::msccl`]).
//!
//! Capability: a host-based family, a collective MSCCL has (no barrier), at least one channel and
//! instance. Emission: [`msccl::build_with`] (a forest's `chunks: auto` becomes the largest count
//! the executor runs). Validation: the XML is read back, checked against the executor's rules
//! and executed symbolically ([`msccl::validate`]), as `collc check FILE.xml` does.

use super::{Artifact, Emitted, Options, Target, family_check};
use crate::backend::msccl;
use crate::diag::{Code, Diagnostic};
use crate::progress::Progress;
use crate::sema::model::{Model, TargetKind};

pub(super) struct Msccl;

/// The backend's options under `o`.
pub fn options(o: &Options) -> msccl::Options {
    msccl::Options::new(&o.values)
}

impl Target for Msccl {
    fn kind(&self) -> TargetKind {
        TargetKind::Msccl
    }

    fn about(&self) -> &'static str {
        "MSCCL XML for NCCL/RCCL with msccl-executor-nccl"
    }

    fn capable(&self, m: &Model, o: &Options) -> Vec<Diagnostic> {
        let mut d = family_check(m, TargetKind::Msccl, o);
        if let Some(c) = &m.collective
            && msccl::coll_name(c.kind).is_none()
        {
            d.push(
                Diagnostic::error(
                    Code::TargetUnsupported,
                    o.span,
                    format!("MSCCL has no {} collective", c.kind.name()),
                )
                .label("the collective this file builds")
                .secondary(c.span, "collective declared here")
                .help(
                    "build a barrier for the `goal` or `sim` target, or use a zero-byte allreduce",
                ),
            );
        }
        // `channels: 0` (or none) asks for the fewest that fit; more than the executor has,
        // or no instances, is wrong.
        let asked = options(o).channels;
        if asked > msccl::limits::MAX_CHANNELS {
            d.push(
                Diagnostic::error(
                    Code::MscclLimit,
                    o.span,
                    format!(
                        "{asked} channels asked for; the executor has {} (MAXCHANNELS)",
                        msccl::limits::MAX_CHANNELS
                    ),
                )
                .label(format!("channels: {asked}"))
                .help(format!(
                    "leave `channels` out (collc then takes the fewest that fit), or give at most {}",
                    msccl::limits::MAX_CHANNELS
                )),
            );
        }
        if options(o).instances == 0 {
            d.push(
                Diagnostic::error(
                    Code::BadValue,
                    o.span,
                    "MSCCL `instances` must be at least 1",
                )
                .label("instances: 0")
                .help("give `--instances 1` or more"),
            );
        }
        d
    }

    fn emit<'a>(
        &self,
        m: &'a Model,
        o: &Options,
        progress: &dyn Progress,
    ) -> Result<Emitted<'a>, Vec<Diagnostic>> {
        let e = msccl::build_with(m, &options(o), progress)?;
        Ok(Emitted {
            artifact: Artifact::File(e.text.into_bytes()),
            warnings: e.warnings,
        })
    }

    fn validate(&self, m: &Model, o: &Options, a: &Artifact) -> Vec<Diagnostic> {
        let Artifact::File(bytes) = a else {
            return vec![internal(
                Code::MscclInvalid,
                o,
                "the MSCCL target made something other than one file",
            )];
        };
        let Ok(text) = std::str::from_utf8(bytes) else {
            return vec![internal(Code::MscclInvalid, o, "the XML is not UTF-8")];
        };
        let root = m
            .collective
            .as_ref()
            .and_then(|c| c.root)
            .and_then(|r| u32::try_from(r).ok());
        match msccl::validate(text, root, options(o).max_steps) {
            Ok(_) => Vec::new(),
            Err(ps) => ps.into_iter().map(|(p, _)| p.diagnostic(o.span)).collect(),
        }
    }
}

/// A problem with what collc itself made, under the target's own code.
pub(super) fn internal(code: Code, o: &Options, what: &str) -> Diagnostic {
    Diagnostic::error(code, o.span, format!("internal: {what}"))
        .label("while building this target")
        .help("this is a bug in collc; please report it with the file")
}
