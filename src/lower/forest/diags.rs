//! The diagnostics of forest lowering: the limits checked before solving (E0043 for `chunks`,
//! E0044 for a fixed `k`), the solver's and the layout's errors after, and the E0045 warning
//! for a fixed `chunks` that loses much of the forest's bandwidth.

use super::{LowerError, MAX_OPS, MAX_SLOTS, fitting_chunks, most, needs, shards};
use crate::diag::{Code, Diagnostic, Span};
use crate::forest::chunking::Chunking;
use crate::forest::{Forest, ForestError};
use crate::sema::model::{AutoOr, Collective, NodeId};

/// Checks that need no solving: `chunks` against the limits with one unit per shard, and a fixed
/// `k` against the slot limit with its worst-case layout.
pub fn precheck(
    c: &Collective,
    k: AutoOr<u64>,
    chunks: AutoOr<u64>,
    span: Span,
) -> Result<(), Diagnostic> {
    // `chunks: auto` is chosen within the limits after solving; check k with one chunk.
    let chunks = match chunks {
        AutoOr::Fixed(n) => n,
        AutoOr::Auto => 1,
    };
    let n = c.ranks.len() as u64;
    let phases = needs(c).len() as u64;
    let roots = if c.kind.has_root() { 1 } else { n };
    let slots_per_chunk = shards(c);
    let ops_per_chunk = phases * roots * (2 * n.saturating_sub(1) + 1);
    let max_chunks = most(MAX_SLOTS, slots_per_chunk).min(most(MAX_OPS, ops_per_chunk));
    if chunks > max_chunks {
        let help = if max_chunks == 0 {
            format!("{n} ranks are too many for a forest program; use `ring`")
        } else {
            format!("use at most {max_chunks} chunks (`chunks: {max_chunks};`)")
        };
        return Err(Diagnostic::error(
            Code::ForestUnschedulable,
            span,
            if slots_per_chunk.saturating_mul(chunks) > MAX_SLOTS {
                format!(
                    "`chunks: {chunks}` on {n} ranks needs at least {} slots per buffer, more than collc's limit of {MAX_SLOTS}",
                    slots_per_chunk.saturating_mul(chunks)
                )
            } else {
                format!(
                    "`chunks: {chunks}` on {n} ranks needs at least {} ops, more than collc's limit of {MAX_OPS}",
                    ops_per_chunk.saturating_mul(chunks)
                )
            },
        )
        .label("too many pipelined chunks")
        .help(help));
    }
    if let AutoOr::Fixed(k) = k {
        let per_k = slots_per_chunk.saturating_mul(chunks);
        if k > most(MAX_SLOTS, per_k) {
            let kmax = most(MAX_SLOTS, per_k).max(1);
            return Err(Diagnostic::error(
                Code::ForestFixedK,
                span,
                format!(
                    "`k: {k}` trees per rank can split each shard {k} ways; with {chunks} chunk{} on {n} ranks that needs up to {} slots per buffer, more than collc's limit of {MAX_SLOTS}",
                    if chunks == 1 { "" } else { "s" },
                    per_k.saturating_mul(k)
                ),
            )
            .label("too many trees per rank")
            .help(format!("fix k to {kmax} or less (`k: {kmax};`), or use `k: auto;`")));
        }
    }
    Ok(())
}

/// The diagnostic for a solver error at the schedule.
pub fn solver_error(
    e: &ForestError,
    c: &Collective,
    names: &dyn Fn(NodeId) -> String,
    span: Span,
) -> Diagnostic {
    match e {
        ForestError::BadK { k, max } => Diagnostic::error(
            Code::ForestFixedK,
            span,
            format!("ForestColl cannot build {k} trees per rank here: {e}"),
        )
        .label("fixed k out of range")
        .help(format!(
            "fix k to {max} or less (`k: {max};`), or use `k: auto;`"
        )),
        ForestError::Unreachable { from, to } => Diagnostic::error(
            Code::ForestUnschedulable,
            span,
            format!(
                "no spanning tree for {}: `{}` cannot reach `{}`",
                c.kind.name(),
                names(*from),
                names(*to)
            ),
        )
        .label("no forest exists")
        .help("connect the two nodes (a `<->` link goes both ways), or choose another schedule"),
    }
}

/// The diagnostic for a forest the lowering cannot use, lowered with the chunking `ch`.
pub fn lower_error(
    e: &LowerError,
    k: AutoOr<u64>,
    ch: &Chunking,
    forests: &[&Forest],
    c: &Collective,
    span: Span,
) -> Diagnostic {
    match e {
        LowerError::TooLarge { slots, ops } => {
            let msg = format!(
                "the forest's trees split the data so finely that the program needs {slots} slots per buffer and about {ops} ops, more than collc's limits of {MAX_SLOTS} and {MAX_OPS}"
            );
            let fit = fitting_chunks(c, forests);
            if fit >= 1 && fit < ch.program {
                let (label, why) = if ch.auto {
                    (
                        format!("`chunks: auto` chose {} pipelined chunks", ch.program),
                        ", the most collc's program limits allow (the model's choice is larger)",
                    )
                } else {
                    (format!("{} pipelined chunks", ch.program), "")
                };
                return Diagnostic::error(Code::ForestUnschedulable, span, msg)
                    .label(label)
                    .help(format!("fix the count to {fit} (`chunks: {fit};`){why}"));
            }
            let fewer = if ch.program > 1 {
                ", or use fewer chunks"
            } else {
                ""
            };
            match k {
                AutoOr::Fixed(k) => Diagnostic::error(Code::ForestFixedK, span, msg)
                    .label(format!("k fixed to {k}"))
                    .help(format!(
                        "fix k to a smaller value (`k: {};`){fewer}",
                        (k / 2).max(1)
                    )),
                AutoOr::Auto => Diagnostic::error(Code::ForestUnschedulable, span, msg)
                    .label("k chosen automatically")
                    .help(format!("fix k to 1 (`k: 1;`){fewer}")),
            }
        }
        LowerError::Malformed(why) => Diagnostic::error(
            Code::ForestUnschedulable,
            span,
            format!("the solved forest does not fit the collective: {why}"),
        )
        .label("here")
        .help("try `k: 1;` or another schedule")
        .note("this is a bug in collc's ForestColl solver; please report it with this file"),
    }
}

/// The E0045 warning for a fixed `chunks` that loses more than 10% of the forest's bandwidth
/// at the collective's size while `chunks: auto` does better ([`Chunking::loses`]); `at` is
/// the `chunks` property.
pub fn chunk_warning(c: &Collective, ch: &Chunking, at: Span) -> Option<Diagnostic> {
    if !ch.loses() {
        return None;
    }
    let bytes = c.bytes();
    let gbs = |s: &num_rational::BigRational| {
        crate::forest::chunking::gbs_short(&Chunking::algbw(bytes, s))
    };
    let optimum = gbs(&ch.optimum);
    Some(
        Diagnostic::warning(
            Code::ForestChunksLose,
            at,
            format!(
                "`chunks: {}` reaches {} for this {} of {bytes} B, {:.0}% of the forest's {optimum}",
                ch.chunks,
                gbs(&ch.seconds),
                c.kind.name(),
                100.0 * ch.efficiency(&ch.seconds)
            ),
        )
        .label("too few pipelined chunks for the trees' depth")
        .help(format!(
            "`chunks: auto` would choose {}, reaching {} ({:.0}%); write `chunks: auto;` or leave `chunks` out",
            ch.auto_chunks,
            gbs(&ch.auto_seconds),
            100.0 * ch.efficiency(&ch.auto_seconds)
        )),
    )
}
