//! The MSCCL flags of `collc build` (`--target msccl`, `--emit report`, `--size-windows`) and
//! `collc check [--strict] FILE.xml`.
//!
//! Options come from the file's `target msccl { proto; channels; instances; inplace; }` block,
//! and the command-line flags override them: `--proto simple|ll|ll128`, `--channels C`,
//! `--instances I`, `--inplace` / `--out-of-place`, `--min-bytes N`, `--max-bytes N` (0: no
//! limit), `--max-steps N` (a runtime built with a larger `MSCCL_MAX_NUM_STEPS`). The XML is
//! lowered, written, read back, checked and executed symbolically before anything is written
//! (`backend::msccl::emit`); a problem is a coded diagnostic at the schedule (or the `target
//! msccl` block), and no file is written.

use crate::backend::msccl::{self, Options};
use crate::diag::Diagnostic;
use crate::sema::model::{Model, ModelParam, TargetKind};
use crate::sema::units::{Dim, Quantity};
use crate::target;
use num_rational::BigRational;

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
    /// MSCCL channels to spread peers and chunks over (a forwarded chunk keeps its channel,
    /// other messages take the least used); default: the fewest that fit the executor.
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

/// Puts the flags given over the `target msccl` block's options.
pub(super) fn overrides(a: &MscclArgs, o: &mut target::Options) {
    let count = |v: u64| ModelParam::Quantity(Quantity::int(i64::try_from(v).unwrap_or(i64::MAX)));
    let bytes = |v: u64| {
        ModelParam::Quantity(Quantity {
            value: BigRational::from_integer(v.into()),
            dim: Dim::SIZE,
        })
    };
    let word = |w: &str| ModelParam::Word(w.to_string());
    if let Some(p) = a.proto {
        o.set(
            "proto",
            word(match p {
                ProtoArg::Simple => "simple",
                ProtoArg::Ll => "ll",
                ProtoArg::Ll128 => "ll128",
            }),
        );
    }
    if let Some(c) = a.channels {
        o.set("channels", count(c.into()));
    }
    if let Some(i) = a.instances {
        o.set("instances", count(i.into()));
    }
    if a.inplace {
        o.set("inplace", word("true"));
    }
    if a.out_of_place {
        o.set("inplace", word("false"));
    }
    if let Some(b) = a.min_bytes {
        o.set("min_bytes", bytes(b));
    }
    if let Some(b) = a.max_bytes {
        o.set("max_bytes", bytes(b));
    }
    if let Some(n) = a.max_steps {
        o.set("max_steps", count(n.into()));
    }
}

/// The options for `m`: its `target msccl` block, overridden by the flags.
pub(super) fn options(m: &Model, a: &MscclArgs) -> Options {
    let mut o = target::Options::from_model(m, TargetKind::Msccl);
    overrides(a, &mut o);
    target::msccl::options(&o)
}

/// Lowers, verifies and emits; the XML and what it established, or diagnostics.
pub(super) fn emit(m: &Model, a: &MscclArgs) -> Result<msccl::Emitted, Vec<Diagnostic>> {
    msccl::build(m, &options(m, a))
}
