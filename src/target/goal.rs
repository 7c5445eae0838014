//! The `goal` target: GOAL text for LogGOPSim's txt2bin (and ATLAHS/htsim), switches as ranks
//! ([`crate::backend::goal`]).
//!
//! Capability: every family. Emission: lower, then prove and write at once
//! ([`goal::verify_and_write`]), so a schedule of millions of ops is never held as text; the
//! reductions cost the per-byte `gamma` of the model `collc sim` would run the file under
//! ([`crate::sim::model_name`]). Validation happens while the text is written: the converter
//! rejects what LogGOPSim would (E0038) and the proof must hold before the output is kept.
//! Text held whole (standard output) is also read back: parsed as `collc check FILE.goal`
//! parses it and run without time for what would stop LogGOPSim ([`goal::validate`]).

use super::{Artifact, Emitted, Options, StreamError, Target, family_check};
use crate::backend::goal::{self, GoalOptions, WriteError};
use crate::diag::{Code, Diagnostic};
use crate::progress::{Phase, Progress};
use crate::sema::model::{Model, TargetKind};
use num_rational::BigRational;

pub(super) struct Goal;

/// The per-byte reduction cost of the model `collc sim` runs `m` under (0 without one).
fn gamma(m: &Model) -> BigRational {
    crate::sim::model_name(m, None)
        .and_then(|name| m.models.iter().find(|x| x.name == name))
        .and_then(|cm| crate::sim::from_cost_model(cm).ok())
        .map(|x| x.2)
        .unwrap_or_default()
}

impl Target for Goal {
    fn kind(&self) -> TargetKind {
        TargetKind::Goal
    }

    fn about(&self) -> &'static str {
        "GOAL text for LogGOPSim's txt2bin (switches as ranks)"
    }

    fn capable(&self, m: &Model, o: &Options) -> Vec<Diagnostic> {
        family_check(m, TargetKind::Goal, o)
    }

    fn emit<'a>(
        &self,
        m: &'a Model,
        o: &Options,
        progress: &dyn Progress,
    ) -> Result<Emitted<'a>, Vec<Diagnostic>> {
        let (program, warnings) = crate::lower::lower_with(m, progress)?;
        // The proof runs while the GOAL text is written: one phase.
        progress.phase(Phase::Verify, None);
        let opts = GoalOptions {
            reduce_per_byte: gamma(m),
            ..GoalOptions::default()
        };
        let span = o.span;
        let write = move |w: &mut (dyn std::io::Write + Send)| {
            goal::verify_and_write(&program, &opts, w)
                .map(|_| ())
                .map_err(|e| match e {
                    WriteError::Refuted(f) => {
                        StreamError::Refused(crate::lower::refuted(m, &program, &f))
                    }
                    WriteError::Goal(e) => StreamError::Refused(vec![e.diagnostic(span)]),
                    WriteError::Io(e) => StreamError::Io(e),
                })
        };
        Ok(Emitted {
            artifact: Artifact::Stream(Box::new(write)),
            warnings,
        })
    }

    fn validate(&self, _: &Model, o: &Options, a: &Artifact) -> Vec<Diagnostic> {
        // A stream was proved and checked as it was written (the module doc).
        let Artifact::File(bytes) = a else {
            return Vec::new();
        };
        let wrong = |what: String| {
            Diagnostic::error(Code::GoalInvalid, o.span, format!("internal: {what}"))
                .label("the GOAL text collc made for this schedule")
                .help("this is a bug in collc; please report it with the file")
        };
        let Ok(text) = std::str::from_utf8(bytes) else {
            return vec![wrong("the GOAL text is not UTF-8".into())];
        };
        match goal::parse(o.span.file, text) {
            Err(ds) => ds
                .into_iter()
                .map(|d| wrong(format!("the GOAL text does not parse: {}", d.message)))
                .collect(),
            Ok(s) => goal::validate(&s)
                .into_iter()
                .map(|p| {
                    wrong(format!(
                        "LogGOPSim would not run the GOAL text: {}",
                        p.message
                    ))
                })
                .collect(),
        }
    }
}
