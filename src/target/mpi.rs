//! The `mpi` target: a Cargo project that runs the schedule with point-to-point MPI
//! ([`crate::backend::mpi`]), written as a directory.
//!
//! Capability: a host-based family and an element type MPI has a predefined datatype and
//! reduction for (no f16 or bf16). Emission: lower, prove, encode the program into the project
//! (named after the output directory, [`Options::output_name`]). Validation: the project's
//! `src/schedule.bin` is decoded as the generated program decodes it and proved again, so the
//! bytes the program will run are the ones proved.

use super::msccl::internal;
use super::{Artifact, Emitted, Options, Target, family_check};
use crate::backend::mpi;
use crate::diag::{Code, Diagnostic};
use crate::progress::{Phase, Progress};
use crate::sema::model::{Model, TargetKind};

pub(super) struct Mpi;

impl Target for Mpi {
    fn kind(&self) -> TargetKind {
        TargetKind::Mpi
    }

    fn about(&self) -> &'static str {
        "a Cargo project (directory, `-o DIR`) running the schedule with point-to-point MPI"
    }

    fn directory(&self) -> bool {
        true
    }

    fn capable(&self, m: &Model, o: &Options) -> Vec<Diagnostic> {
        let mut d = family_check(m, TargetKind::Mpi, o);
        if let Some(c) = &m.collective
            && let Some(e) = mpi::unsupported_dtype(c.dtype)
        {
            d.push(
                e.diagnostic(o.span)
                    .secondary(c.span, "collective declared here"),
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
        let (program, _, warnings) = crate::lower::lower_and_verify_with(m, progress)?;
        progress.phase(Phase::Emit, None);
        let name = mpi::package_name(o.output_name.as_deref().unwrap_or_default());
        let project = mpi::emit(&program, &name).map_err(|e| vec![e.diagnostic(o.span)])?;
        Ok(Emitted {
            artifact: Artifact::Dir {
                files: project.files,
                mark: ("Cargo.toml", mpi::project::MARK),
            },
            warnings,
        })
    }

    fn validate(&self, _: &Model, o: &Options, a: &Artifact) -> Vec<Diagnostic> {
        let Artifact::Dir { files, .. } = a else {
            return vec![internal(
                Code::MpiUnsupported,
                o,
                "the MPI target made no project",
            )];
        };
        let Some((_, bin)) = files.iter().find(|(p, _)| p == "src/schedule.bin") else {
            return vec![internal(
                Code::MpiUnsupported,
                o,
                "the project has no schedule",
            )];
        };
        let program = match mpi::encode::decode(bin) {
            Ok(p) => p,
            Err(e) => {
                return vec![internal(
                    Code::MpiUnsupported,
                    o,
                    &format!("the encoded schedule does not decode: {e}"),
                )];
            }
        };
        match crate::ir::verify::verify(&program) {
            Ok(_) => Vec::new(),
            Err(_) => vec![internal(
                Code::MpiUnsupported,
                o,
                "the decoded schedule is not the proved program",
            )],
        }
    }
}
