//! `ir::verify`: proves that a [`Program`] implements its collective, or says where it does not.
//!
//! The proof is a symbolic execution that holds for every timing the dependencies allow:
//! 1. Structure: peers, slices, dependencies and chunk layouts are valid (E0032); with
//!    [`Program::any_layout`] a slot may hold any chunk, and only counts must agree.
//! 2. Matching: sends and receives pair up in program order per (sender, receiver, tag); a
//!    receive no send matches, a send nobody receives, or a cycle through dependencies and
//!    messages is a deadlock (E0035).
//! 3. Races: two ops of one process that touch the same slot, at least one writing, must be
//!    ordered by dependencies, or the result would depend on timing (E0036).
//! 4. Execution in one topological order (by 2 and 3, every order gives the same values): each
//!    slot holds a term, a leaf `(rank, input slot)` or an unordered pair of terms (floating-point
//!    addition and multiplication are commutative but not associative, so two terms are equal
//!    exactly when the results are bitwise equal). Terms are hash-consed, so equal terms have
//!    equal ids, and each term records which ranks it combines; combining two terms that share
//!    a rank is a duplicated contribution (E0033).
//! 5. Postcondition: every output slot the collective defines holds exactly the contributions
//!    it promises (E0033), and for reductions every rank holds the same term, i.e. combines in
//!    the same order (E0034).
//!
//! Steps 2 and 4 have fast paths for large, correct programs (`fast.rs`); whenever they find
//! something wrong, the exact code above runs and reports it, so findings do not depend on them.
//! Per-process work (steps 1 and 3, matching per receiver) runs in blocks of processes on all
//! cores ([`crate::par`]) with findings joined in process order, and step 3 runs beside the
//! execution; the answer never depends on the number of threads.

mod exec;
mod fast;
mod matching;
mod races;
mod terms;

use super::{OpId, OpKind, ProcId, ProcKind, Program, Slice};
use crate::diag::Code;
use matching::{Matching, match_messages, topo_order};

/// One reason a program is wrong, located at a process and (usually) an op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub code: Code,
    pub proc: ProcId,
    pub op: Option<OpId>,
    pub message: String,
    pub help: String,
}

/// What a successful verification established.
/// Only [`verify`] makes proofs (outside this crate they cannot be built), so holding one
/// means a program was verified; `backend::goal::from_verified` relies on it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Proof {
    pub ops: usize,
    pub messages: usize,
    /// Distinct partial results built during execution.
    pub terms: usize,
}

/// Findings one verification reports at most (so a count of them may stand for more).
pub const MAX_FINDINGS: usize = 16;

const NONE: u32 = u32::MAX;

pub(super) fn find(
    code: Code,
    proc: ProcId,
    op: Option<OpId>,
    message: String,
    help: &str,
) -> Finding {
    Finding {
        code,
        proc,
        op,
        message,
        help: help.to_string(),
    }
}

pub(super) fn who(p: &Program, proc: ProcId) -> String {
    match &p.procs[proc as usize].kind {
        ProcKind::Rank => format!("rank {proc}"),
        ProcKind::Switch(n) => format!("switch {n} (process {proc})"),
    }
}

/// True when data may move between two slices of `p`: they have as many slots and, unless
/// [`Program::any_layout`] frees the layout, hold the same chunks slot by slot (slot `k` holds
/// chunk `k mod chunks_per_part`).
fn same_chunks(p: &Program, a: Slice, b: Slice) -> bool {
    let cpp = p.spec.chunks_per_part;
    a.count == b.count
        && (p.any_layout
            || cpp <= 1
            || (0..a.count).all(|x| (a.start + x) % cpp == (b.start + x) % cpp))
}

/// How two slices [`same_chunks`] refuses differ: in size, or else in chunks.
fn differ(a: Slice, b: Slice) -> &'static str {
    if a.count == b.count {
        "hold different chunks"
    } else {
        "have different numbers of slots"
    }
}

/// What [`same_chunks`] demands of `p`, for the help line of a finding.
fn layout_rule(p: &Program) -> &'static str {
    if p.any_layout {
        "slots may hold any chunk here, but a move needs as many slots on both sides"
    } else {
        "slot k holds chunk k mod chunks_per_part; copy and reduce between slots of the same chunk"
    }
}

pub(super) fn show_slice(s: Slice) -> String {
    if s.count == 1 {
        format!("{}[{}]", s.buf.name(), s.start)
    } else {
        format!("{}[{}..{}]", s.buf.name(), s.start, s.start + s.count)
    }
}

/// Verifies a program; see the module doc.
pub fn verify(p: &Program) -> Result<Proof, Vec<Finding>> {
    let backward = structure(p)?;
    after_structure(p, backward)
}

/// [`verify`], running `beside` on another core (when there is one) once step 1 has found the
/// program well formed (every peer, slice and dependency in range), so that work which needs
/// only that, such as writing a backend's output that is kept only if the proof succeeds,
/// overlaps the rest of the proof. `beside` does not run when step 1 fails; its result comes
/// back whether or not the proof succeeds.
pub fn verify_beside<T: Send>(
    p: &Program,
    beside: impl FnOnce() -> T + Send,
) -> (Result<Proof, Vec<Finding>>, Option<T>) {
    let backward = match structure(p) {
        Ok(b) => b,
        Err(findings) => return (Err(findings), None),
    };
    let (proof, other) = crate::par::join(|| after_structure(p, backward), beside);
    (proof, Some(other))
}

/// Steps 2 to 5, for a program step 1 accepted (`backward`: every dependency names an earlier
/// op).
fn after_structure(p: &Program, backward: bool) -> Result<Proof, Vec<Finding>> {
    let ix = Index::new(p);
    let matching = match fast::matching(p, &ix) {
        Some(m) => m,
        None => match_messages(p, &ix)?,
    };
    // The race check and the execution are independent: on two threads when there are.
    let (raced, run) = crate::par::join(
        || races::races(p),
        || backward.then(|| fast::run(p, &ix, &matching)).flatten(),
    );
    let done = match run {
        Some(e) => {
            raced?;
            e.finish()
        }
        None => {
            let order = match fast::order(p, &ix, &matching) {
                Some(o) => o,
                None => topo_order(p, &ix, &matching)?,
            };
            raced?;
            exec::execute(p, &ix, &matching, &order)
        }
    };
    done.or_else(|_| {
        // Findings come in execution order: report them in the exact (queue) order.
        let order = topo_order(p, &ix, &matching)?;
        exec::execute(p, &ix, &matching, &order)
    })
}

/// Step 1; on success, whether every dependency names an earlier op of its process.
fn structure(p: &Program) -> Result<bool, Vec<Finding>> {
    let mut out = Vec::new();
    if p.spec.ranks as usize > p.procs.len()
        || p.procs
            .iter()
            .take(p.spec.ranks as usize)
            .any(|x| x.kind != ProcKind::Rank)
    {
        out.push(find(
            Code::IrInvalid,
            0,
            None,
            format!(
                "the collective has {} ranks, but the first {} processes are not all ranks",
                p.spec.ranks, p.spec.ranks
            ),
            "list one `rank` process per rank first, then switches",
        ));
        return Err(out);
    }
    if p.spec.kind.has_root() && p.spec.root.is_none_or(|r| r >= p.spec.ranks) {
        out.push(find(
            Code::IrInvalid,
            0,
            None,
            format!("{} needs a root among the ranks", p.spec.kind.name()),
            "give `root R` on the collective line",
        ));
        return Err(out);
    }
    // Processes in blocks on all cores; each block's findings (at most MAX_FINDINGS) are joined
    // in process order, so the first findings are those of a serial run.
    let blocks = crate::par::map_blocks(
        p.procs.len(),
        crate::par::block_size(p.procs.len(), 64),
        |range| {
            let mut out = Vec::new();
            let mut backward = true;
            for pi in range {
                backward &= proc_structure(p, pi as u32, &mut out);
            }
            (out, backward)
        },
    );
    let backward = blocks.iter().all(|b| b.1);
    out.extend(blocks.into_iter().flat_map(|b| b.0));
    out.truncate(MAX_FINDINGS);
    if out.is_empty() {
        Ok(backward)
    } else {
        Err(out)
    }
}

/// The structure findings of process `pi`, while `out` has room; whether its dependencies all
/// name earlier ops.
fn proc_structure(p: &Program, pi: u32, out: &mut Vec<Finding>) -> bool {
    let n = p.procs.len() as u32;
    let proc = &p.procs[pi as usize];
    let mut backward = true;
    for (oi, op) in proc.ops.iter().enumerate() {
        let oi = oi as u32;
        let mut bad = |m: String, h: &str| {
            if out.len() < MAX_FINDINGS {
                out.push(find(Code::IrInvalid, pi, Some(oi), m, h));
            }
        };
        for d in &op.deps {
            backward &= *d < oi;
            if *d as usize >= proc.ops.len() || *d == oi {
                bad(
                    format!(
                        "op {oi} of {} depends on op {d}, which {}",
                        who(p, pi),
                        if *d == oi {
                            "is itself"
                        } else {
                            "does not exist"
                        }
                    ),
                    "dependencies name other ops of the same process",
                );
            }
        }
        if let Some(peer) = op.kind.peer() {
            if peer >= n || peer == pi {
                bad(
                    format!(
                        "op {oi} of {} talks to process {peer}, which {}",
                        who(p, pi),
                        if peer == pi {
                            "is itself"
                        } else {
                            "does not exist"
                        }
                    ),
                    "peers are other processes of the program",
                );
            }
        }
        for s in op.kind.reads().chain(op.kind.writes()) {
            let len = p.buffer_len(pi, s.buf);
            if s.count == 0 || s.start.checked_add(s.count).is_none_or(|e| e > len) {
                bad(
                    format!(
                        "op {oi} of {} uses {}, but its {} buffer has {len} slot{}",
                        who(p, pi),
                        show_slice(s),
                        s.buf.name(),
                        if len == 1 { "" } else { "s" }
                    ),
                    "keep slices within the buffer; scratch slots are declared per process",
                );
            }
        }
        if let OpKind::Reduce { dst, src } | OpKind::Copy { dst, src } = op.kind {
            if !same_chunks(p, src, dst) {
                bad(
                    format!(
                        "op {oi} of {} moves {} into {}, which {}",
                        who(p, pi),
                        show_slice(src),
                        show_slice(dst),
                        differ(src, dst)
                    ),
                    layout_rule(p),
                );
            }
        }
    }
    backward
}

/// Global numbering of ops: op `o` of process `p` is `base[p] + o`. The reverse table
/// (`proc_of`) is built on first use: the fast paths never need it.
pub(super) struct Index {
    pub base: Vec<u32>,
    proc_of: std::sync::OnceLock<Vec<u32>>,
}

impl Index {
    fn new(p: &Program) -> Index {
        Index {
            base: p.op_base(),
            proc_of: std::sync::OnceLock::new(),
        }
    }

    pub fn total(&self) -> usize {
        self.base.last().copied().unwrap_or(0) as usize
    }

    pub fn global(&self, p: ProcId, o: OpId) -> u32 {
        self.base[p as usize] + o
    }

    pub fn locate(&self, g: u32) -> (ProcId, OpId) {
        let proc_of = self.proc_of.get_or_init(|| {
            let mut v = Vec::with_capacity(self.total());
            for (pi, w) in self.base.windows(2).enumerate() {
                v.extend(std::iter::repeat_n(pi as u32, (w[1] - w[0]) as usize));
            }
            v
        });
        let p = proc_of[g as usize];
        (p, g - self.base[p as usize])
    }
}
