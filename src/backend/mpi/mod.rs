//! The `mpi` target: a Cargo project that runs a verified program with point-to-point MPI
//! through the `mpi` crate (rsmpi 0.8.2).
//!
//! The schedule is data: [`encode`] packs the program into `src/schedule.bin` (a few bytes per
//! op), which the generated program embeds with `include_bytes!`. The program's code is fixed
//! text, the same for every schedule ([`project`]; the sources are in `runtime/`): it decodes its
//! rank's steps and runs them as a dataflow over `MPI_Isend`/`MPI_Irecv` (see
//! `runtime/exec.rs`), checks itself against the library's collective (`--check`) and times
//! both (`--bench ITERS`). A program for thousands of ranks thus stays small and builds as fast
//! as one for two.
//!
//! What MPI cannot run is error E0042 ([`MpiError`]): half-precision dtypes (f16, bf16 have no
//! predefined MPI datatype or reduction), switch processes (in-network schedules), and programs
//! that need more than the 32,768 tags every MPI library provides.

pub mod encode;
pub mod project;

use crate::diag::{Code, Diagnostic, Span};
use crate::ir::Program;
use crate::sema::model::Dtype;

pub use project::{Project, package_name};

/// Why a program cannot become an MPI program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MpiError {
    pub message: String,
    pub help: String,
}

impl MpiError {
    /// As an E0042 diagnostic at `span` (the collective, schedule or target declaration).
    pub fn diagnostic(&self, span: Span) -> Diagnostic {
        Diagnostic::error(Code::MpiUnsupported, span, self.message.clone())
            .label("the MPI target cannot run this")
            .help(self.help.clone())
    }

    fn switch(proc: usize) -> MpiError {
        MpiError {
            message: format!("process {proc} of the program is a switch; MPI programs run only on hosts"),
            help: "use a host-based schedule (`ring`, `recursive_doubling`, `recursive_multiplying`, `binomial`) for the MPI target".into(),
        }
    }

    fn tags(highest: u64) -> MpiError {
        MpiError {
            message: format!(
                "the program needs MPI tags up to {highest}, but MPI guarantees only tags up to {}",
                encode::MAX_TAG
            ),
            help: "every message between two ranks gets its own tag: use fewer ranks or fewer chunks per message, or a schedule with fewer steps".into(),
        }
    }

    fn too_large() -> MpiError {
        MpiError {
            message: "the encoded schedule is larger than 4 GiB".into(),
            help: "use fewer ranks or a schedule with fewer steps".into(),
        }
    }
}

/// Why `dtype` cannot be an MPI program's element type, if it cannot.
pub fn unsupported_dtype(dtype: Dtype) -> Option<MpiError> {
    match dtype {
        Dtype::F16 | Dtype::Bf16 => Some(MpiError {
            message: format!(
                "MPI has no predefined datatype or reduction for `{}`, so the MPI target cannot run this collective",
                dtype.name()
            ),
            help: "use `dtype: f32` (or f64, i32, i64) for the MPI target, or build for `msccl`, which runs f16 and bf16 on GPUs".into(),
        }),
        Dtype::I32 | Dtype::I64 | Dtype::F32 | Dtype::F64 => None,
    }
}

/// The Cargo project for the verified program `p`, with package (and binary) name `package`
/// (see [`package_name`]).
pub fn emit(p: &Program, package: &str) -> Result<Project, MpiError> {
    if let Some(e) = unsupported_dtype(p.spec.dtype) {
        return Err(e);
    }
    let schedule = encode::encode(p)?;
    Ok(project::project(p, package, schedule))
}
