//! `collc build FILE --target msccl` and `collc check FILE.xml`.
//!
//! Options come from the file's `target msccl { proto; channels; instances; inplace; }` block,
//! and the command-line flags override them: `--proto simple|ll|ll128`, `--channels C`,
//! `--instances I`, `--inplace` / `--out-of-place`, `--min-bytes N`, `--max-bytes N` (0: no
//! limit), `--max-steps N` (a runtime built with a larger `MSCCL_MAX_NUM_STEPS`). The XML is
//! lowered, written, read back, checked and executed symbolically before anything is written
//! (`backend::msccl::emit`); a problem is a coded diagnostic at the schedule (or the `target
//! msccl` block), and no file is written.

use super::Out;
use crate::backend::msccl::{self, Options, Proto};
use crate::diag::{Diagnostic, FileId, SourceMap};
use crate::progress::Progress;
use crate::sema::model::Model;
use std::path::Path;

#[derive(Copy, Clone, Debug, clap::ValueEnum, PartialEq, Eq)]
pub(super) enum ProtoArg {
    Simple,
    Ll,
    Ll128,
}

/// Flags of `collc build --target msccl` (and `--emit report`).
#[derive(clap::Args, Debug, Clone, Default)]
pub(super) struct MscclArgs {
    /// MSCCL protocol (default: the `target msccl` block's, else simple).
    #[arg(long, value_enum)]
    proto: Option<ProtoArg>,
    /// MSCCL channels to spread chunks over (chunk j on channel j mod C); for a forest, per
    /// group of trees that cross a common link.
    #[arg(long, value_name = "C")]
    channels: Option<u32>,
    /// MSCCL instances: parallel copies of the schedule on more channels.
    #[arg(long, value_name = "I")]
    instances: Option<u32>,
    /// Emit an in-place MSCCL XML (sendbuff == recvbuff).
    #[arg(long, conflicts_with = "out_of_place")]
    inplace: bool,
    /// Emit an out-of-place MSCCL XML.
    #[arg(long)]
    out_of_place: bool,
    /// Smallest message (bytes) the runtime should use the XML for.
    #[arg(long, value_name = "BYTES")]
    min_bytes: Option<u64>,
    /// Largest message (bytes) the runtime should use the XML for; 0 means no limit.
    #[arg(long, value_name = "BYTES")]
    max_bytes: Option<u64>,
    /// Steps per thread block of the target runtime (MSCCL_MAX_NUM_STEPS, default 64).
    #[arg(long, value_name = "N")]
    max_steps: Option<u32>,
}

/// The options for `m`: its `target msccl` block, overridden by the flags.
pub(super) fn options(m: &Model, a: &MscclArgs) -> Options {
    let mut o = Options::from_model(m);
    if let Some(p) = a.proto {
        o.proto = match p {
            ProtoArg::Simple => Proto::Simple,
            ProtoArg::Ll => Proto::LL,
            ProtoArg::Ll128 => Proto::LL128,
        };
    }
    o.channels = a.channels.unwrap_or(o.channels);
    o.instances = a.instances.unwrap_or(o.instances);
    if a.inplace {
        o.inplace = true;
    }
    if a.out_of_place {
        o.inplace = false;
    }
    o.min_bytes = a.min_bytes.unwrap_or(o.min_bytes);
    o.max_bytes = a.max_bytes.unwrap_or(o.max_bytes);
    o.max_steps = a.max_steps.unwrap_or(o.max_steps);
    o
}

/// Lowers, verifies and emits; the XML and what it established, or diagnostics.
pub(super) fn emit(m: &Model, a: &MscclArgs) -> Result<msccl::Emitted, Vec<Diagnostic>> {
    msccl::build(m, &options(m, a))
}

/// `collc build FILE --target msccl`.
pub(super) fn build(
    m: &Model,
    a: &MscclArgs,
    output: Option<&Path>,
    out: &Out,
    files: &SourceMap,
    progress: &dyn Progress,
) -> i32 {
    match msccl::build_with(m, &options(m, a), progress) {
        Ok(e) => {
            out.diags(&e.warnings, files);
            super::write_output(output, e.text.as_bytes())
        }
        Err(d) => {
            out.diags(&d, files);
            1
        }
    }
}

/// `collc check FILE.xml`.
pub(super) fn check_xml(id: FileId, text: &str, max_slots: u64) -> Vec<Diagnostic> {
    msccl::check_with(id, text, max_slots)
}
