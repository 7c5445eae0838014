//! When the runtime picks an XML for a call (msccl-xml.md section 1.4, `msccl_lifecycle.cc`):
//! for a reduction, the op is sum, prod, max or min; the element count is positive; `count`
//! is a multiple of `nchunksperloop` (msccl-executor-nccl tests the call's own `count`, the
//! elements per rank of an allgather or reduce-scatter and the elements each rank sends each
//! peer of an all-to-all, `ncclAllToAll`'s `count`; RCCL since ROCm/rccl PR #1318 tests
//! `count * sizeMultiplier`, which the first implies, so collc asks for the first);
//! `minBytes <= nBytes <= maxBytes`
//! (`maxBytes` 0: no limit; `nBytes = count * typesize * sizeMultiplier`, `sizeMultiplier` =
//! ngpus for allgather, reduce-scatter and all-to-all: `msccl_parser.cc`); `ngpus` is the
//! communicator size; the collective matches; and the call is in place exactly when the XML
//! allows it (an all-to-all is in place when `sendbuff == recvbuff`). The first XML that
//! matches (in sorted file-name order) wins; otherwise NCCL runs its own algorithm, silently.
//! [`conditions`] states each condition, and whether a given call meets it.

use super::{Algo, coll_kind, size_multiplier};
use crate::sema::model::{CollectiveKind, ReduceOp};

/// A call of the NCCL collective, as the `.coll` file describes it.
#[derive(Debug, Clone)]
pub struct Call {
    pub kind: CollectiveKind,
    /// NCCL's count argument: elements per rank (allgather: sent; reduce-scatter: received;
    /// all-to-all: sent to each peer).
    pub count: u64,
    pub type_bytes: u64,
    pub op: ReduceOp,
    pub ranks: u64,
    pub inplace: bool,
    pub root: Option<u64>,
}

/// One selection condition: what must hold, whether the call meets it (None: no call given or
/// not decidable), and details.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    pub what: String,
    pub holds: Option<bool>,
    pub detail: String,
}

fn nccl_name(coll: &str) -> &'static str {
    match coll {
        "allreduce" => "ncclAllReduce",
        "allgather" => "ncclAllGather",
        "reducescatter" => "ncclReduceScatter",
        "broadcast" => "ncclBroadcast",
        "reduce" => "ncclReduce",
        "alltoall" => "ncclAllToAll",
        _ => "the matching NCCL call",
    }
}

/// NCCL's `count` for a call whose buffer holds `elements` elements in all: per rank for
/// allgather and reduce-scatter, per peer for all-to-all (`ncclAllToAll`'s `count`; rounded
/// down, as nccl-tests sizes its calls), else all.
pub fn call_count(kind: CollectiveKind, elements: u64, ranks: u64) -> u64 {
    match kind {
        CollectiveKind::Allgather | CollectiveKind::ReduceScatter | CollectiveKind::Alltoall => {
            elements / ranks.max(1)
        }
        _ => elements,
    }
}

/// The executor's count rule: `count` is a positive multiple of `nchunksperloop` (implying
/// RCCL's `count * sizeMultiplier`, see the module doc).
pub fn count_fits(count: u64, nchunksperloop: u64) -> bool {
    count > 0 && count % nchunksperloop.max(1) == 0
}

/// The size rule: `minBytes <= bytes <= maxBytes` (`maxBytes` 0: no upper limit).
pub fn bytes_fit(a: &Algo, bytes: u128) -> bool {
    bytes >= a.min_bytes.max(0) as u128 && (a.max_bytes <= 0 || bytes <= a.max_bytes as u128)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The conditions under which the runtime uses `a` for a call, checked against `call`.
pub fn conditions(a: &Algo, call: Option<&Call>) -> Vec<Condition> {
    let mut out = Vec::new();
    let kind = coll_kind(&a.coll);
    let n = a.ngpus.max(1) as u64;
    let mult = kind.map_or(1, |k| size_multiplier(k, n));
    let chunks = a.nchunksperloop.max(1) as u64;
    out.push(Condition {
        what: format!("the call is {} (coll=\"{}\")", nccl_name(&a.coll), a.coll),
        holds: call.map(|c| Some(c.kind) == kind),
        detail: call.map_or(String::new(), |c| {
            format!("the file describes {}", c.kind.name())
        }),
    });
    // Only reductions take an op: allgather and broadcast calls have none to check.
    if kind.is_none_or(CollectiveKind::reduces) {
        out.push(Condition {
            what: "the reduction op is sum, prod, max or min (not avg or a custom op)".into(),
            holds: call.map(|_| true),
            detail: call.map_or(String::new(), |c| format!("the file uses {}", c.op.name())),
        });
    }
    out.push(Condition {
        what: format!("the communicator has exactly ngpus = {} ranks", a.ngpus),
        holds: call.map(|c| c.ranks == n),
        detail: call.map_or(String::new(), |c| format!("the file has {} ranks", c.ranks)),
    });
    let modes = match (a.inplace, a.outofplace) {
        (true, true) => "in place or out of place",
        (true, false) => {
            "in place only (sendbuff == recvbuff; for allgather sendbuff == recvbuff + rank*count*typesize, for reduce-scatter recvbuff == sendbuff + rank*count*typesize)"
        }
        (false, true) => "out of place only (sendbuff != recvbuff)",
        (false, false) => "never (neither inplace nor outofplace is set)",
    };
    out.push(Condition {
        what: format!("the call is {modes}"),
        holds: call.map(|c| if c.inplace { a.inplace } else { a.outofplace }),
        detail: call.map_or(String::new(), |c| {
            format!(
                "built for {} calls",
                if c.inplace {
                    "in-place"
                } else {
                    "out-of-place"
                }
            )
        }),
    });
    // RCCL's `count * mult % chunks == 0` holds when the executor's `count % chunks == 0` does.
    let rccl = chunks / gcd(mult, chunks);
    let of = crate::diag::counted(chunks, "element");
    let what = if rccl == chunks {
        format!("count is a positive multiple of {of} (nchunksperloop)")
    } else {
        format!(
            "count is a positive multiple of {of} (nchunksperloop; msccl-executor-nccl's rule, RCCL's asks only count x {mult} to be one, i.e. count a multiple of {rccl})"
        )
    };
    out.push(Condition {
        what,
        holds: call.map(|c| count_fits(c.count, chunks)),
        detail: call.map_or(String::new(), |c| format!("count = {}", c.count)),
    });
    let window = if a.max_bytes == 0 {
        format!(
            "nBytes = count x typesize x {mult} is at least minBytes = {} (maxBytes = 0: no upper limit)",
            a.min_bytes
        )
    } else {
        format!(
            "minBytes = {} <= nBytes = count x typesize x {mult} <= maxBytes = {}",
            a.min_bytes, a.max_bytes
        )
    };
    out.push(Condition {
        what: window,
        holds: call.map(|c| {
            bytes_fit(
                a,
                u128::from(c.count) * u128::from(c.type_bytes) * u128::from(mult),
            )
        }),
        detail: call.map_or(String::new(), |c| {
            format!(
                "nBytes = {}",
                u128::from(c.count) * u128::from(c.type_bytes) * u128::from(mult)
            )
        }),
    });
    if let (Some(k), Some(r)) = (kind, a.root) {
        if k.has_root() {
            out.push(Condition {
                what: format!("the call's root is rank {r} (the runtime does not check the root: another root gives wrong results)"),
                holds: call.map(|c| c.root == Some(u64::from(r))),
                detail: String::new(),
            });
        }
    }
    out
}
