//! The MSCCL flags of `collc build` (`--target msccl`, `--emit report`, `--size-windows`), as
//! the driver's [`crate::driver::MscclOverrides`].
//!
//! Options come from the file's `target msccl { proto; channels; instances; inplace; }` block,
//! and the command-line flags override them: `--proto simple|ll|ll128`, `--channels C`,
//! `--instances I`, `--inplace` / `--out-of-place`, `--min-bytes N`, `--max-bytes N` (0: no
//! limit), `--max-steps N` (a runtime built with a larger `MSCCL_MAX_NUM_STEPS`). The XML is
//! lowered, written, read back, checked and executed symbolically before anything is written
//! (`backend::msccl::emit`); a problem is a coded diagnostic at the schedule (or the `target
//! msccl` block), and no file is written.

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

impl MscclArgs {
    /// The flags as the driver's overrides of the `target msccl` block.
    pub(super) fn overrides(&self) -> crate::driver::MscclOverrides {
        crate::driver::MscclOverrides {
            proto: self.proto.map(|p| {
                match p {
                    ProtoArg::Simple => "simple",
                    ProtoArg::Ll => "ll",
                    ProtoArg::Ll128 => "ll128",
                }
                .to_string()
            }),
            channels: self.channels,
            instances: self.instances,
            inplace: match (self.inplace, self.out_of_place) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            min_bytes: self.min_bytes,
            max_bytes: self.max_bytes,
            max_steps: self.max_steps,
        }
    }
}
