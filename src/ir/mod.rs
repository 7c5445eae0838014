//! The dataflow IR: one program form for every schedule family and every backend.
//!
//! A [`Program`] is a set of processes ([`Proc`]): the collective's ranks first (process `r` is
//! rank `r`), then switches for in-network schedules. Each process runs [`Op`]s on chunked
//! buffers: its `input` and `output` (ranks only) and a private `scratch`. An op may start once
//! the ops it depends on (same process, [`Op::deps`]) have finished; nothing else orders ops, so
//! backends may run independent ops concurrently.
//!
//! Communication is point to point. Sends and receives are matched statically, in program order
//! per (sender, receiver, tag): the k-th send from p to q with tag t delivers to the k-th receive
//! on q from p with tag t, as MPI's non-overtaking rule and MSCCL's per-connection order do. A
//! send captures its data when it runs (buffered semantics); a receive finishes once its matched
//! send has run.
//!
//! Data layout: the collective's buffers are divided into *parts* (one per rank for the gathered
//! side of allgather, the scattered side of reduce-scatter and both sides of all-to-all, one
//! otherwise), each part into
//! `chunks_per_part` chunks. Slot `k` of any buffer holds logical chunk `k % chunks_per_part`;
//! chunk sizes follow [`Program::chunk_elements`], so every slot has a static size and every op a
//! static byte count. The verifier ([`verify`]) checks that values only move between slots of the
//! same logical chunk, unless [`Program::any_layout`] is set: then a slot may hold any chunk
//! (an MSCCL XML's scratch has no layout) and only the symbolic execution, which follows every
//! chunk, decides whether values end where they belong.

pub mod deps;
pub mod refine;
pub mod sweep;
pub mod text;
pub mod verify;

use crate::sema::model::{CollectiveKind, Dtype, ReduceOp};

/// Index of a process in [`Program::procs`].
pub type ProcId = u32;

/// Index of an op within its process.
pub type OpId = u32;

/// The collective a program claims to implement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    pub kind: CollectiveKind,
    pub ranks: u32,
    /// Elements in one part (see the module doc).
    pub part_elements: u64,
    pub chunks_per_part: u32,
    pub dtype: Dtype,
    pub op: ReduceOp,
    pub root: Option<u32>,
}

impl Spec {
    /// Parts of the input buffer.
    pub fn input_parts(&self) -> u32 {
        match self.kind {
            CollectiveKind::ReduceScatter | CollectiveKind::Alltoall => self.ranks,
            _ => 1,
        }
    }

    /// Parts of the output buffer.
    pub fn output_parts(&self) -> u32 {
        match self.kind {
            CollectiveKind::Allgather | CollectiveKind::Alltoall => self.ranks,
            _ => 1,
        }
    }

    pub fn input_chunks(&self) -> u32 {
        self.input_parts() * self.chunks_per_part
    }

    pub fn output_chunks(&self) -> u32 {
        self.output_parts() * self.chunks_per_part
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcKind {
    /// A participant; its rank equals its process id.
    Rank,
    /// An in-network switch, by topology node name.
    Switch(String),
}

/// A buffer of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Buf {
    Input,
    Output,
    Scratch,
}

impl Buf {
    pub fn name(self) -> &'static str {
        match self {
            Buf::Input => "in",
            Buf::Output => "out",
            Buf::Scratch => "scratch",
        }
    }
}

/// `count` consecutive slots of a buffer, from `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Slice {
    pub buf: Buf,
    pub start: u32,
    pub count: u32,
}

impl Slice {
    pub fn new(buf: Buf, start: u32, count: u32) -> Slice {
        Slice { buf, start, count }
    }

    pub fn one(buf: Buf, slot: u32) -> Slice {
        Slice {
            buf,
            start: slot,
            count: 1,
        }
    }

    pub fn slots(self) -> std::ops::Range<u32> {
        self.start..self.start + self.count
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpKind {
    /// Send the contents of `src` to `peer`.
    Send { peer: ProcId, src: Slice, tag: u32 },
    /// Receive into `dst` (overwriting it) from `peer`.
    Recv { peer: ProcId, dst: Slice, tag: u32 },
    /// Receive from `peer` and combine into `dst`: `dst = dst ⊕ message`.
    RecvReduce { peer: ProcId, dst: Slice, tag: u32 },
    /// `dst = dst ⊕ src`, slot by slot.
    Reduce { dst: Slice, src: Slice },
    /// `dst = src`, slot by slot.
    Copy { dst: Slice, src: Slice },
}

impl OpKind {
    pub fn peer(&self) -> Option<ProcId> {
        match self {
            OpKind::Send { peer, .. }
            | OpKind::Recv { peer, .. }
            | OpKind::RecvReduce { peer, .. } => Some(*peer),
            _ => None,
        }
    }

    pub fn tag(&self) -> Option<u32> {
        match self {
            OpKind::Send { tag, .. }
            | OpKind::Recv { tag, .. }
            | OpKind::RecvReduce { tag, .. } => Some(*tag),
            _ => None,
        }
    }

    /// The slice this op reads from its own buffers (for a send, what is sent).
    pub fn reads(&self) -> impl Iterator<Item = Slice> {
        let r = match self {
            OpKind::Send { src, .. } => [Some(*src), None],
            OpKind::Recv { .. } => [None, None],
            OpKind::RecvReduce { dst, .. } => [Some(*dst), None],
            OpKind::Reduce { dst, src } => [Some(*dst), Some(*src)],
            OpKind::Copy { src, .. } => [Some(*src), None],
        };
        r.into_iter().flatten()
    }

    /// The slice this op writes, if any.
    pub fn writes(&self) -> Option<Slice> {
        match self {
            OpKind::Send { .. } => None,
            OpKind::Recv { dst, .. }
            | OpKind::RecvReduce { dst, .. }
            | OpKind::Reduce { dst, .. }
            | OpKind::Copy { dst, .. } => Some(*dst),
        }
    }

    /// True for ops that combine values (and cost compute time).
    pub fn reduces(&self) -> bool {
        matches!(self, OpKind::RecvReduce { .. } | OpKind::Reduce { .. })
    }
}

/// The dependencies of an op: up to four are held in the op itself (most ops have one or two),
/// so programs of millions of ops need no allocation per op ([`deps`]).
pub use deps::Deps;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub kind: OpKind,
    /// Ops of the same process that must finish before this one starts.
    pub deps: Deps,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    pub kind: ProcKind,
    /// Slots of this process's scratch buffer.
    pub scratch: u32,
    pub ops: Vec<Op>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// What produced it, e.g. `recursive_multiplying [a2, a4]` (informational).
    pub name: String,
    pub spec: Spec,
    pub procs: Vec<Proc>,
    /// Slots of every buffer may hold any chunk: moves between slots of different chunks are
    /// allowed, and are checked by execution only (each term remembers its input slot, and the
    /// postcondition checks each output slot's chunk). False for collc's own lowerings, whose
    /// programs keep slot `k` at chunk `k % chunks_per_part`; set for programs read from an
    /// MSCCL XML (`backend::msccl::exec`). The IR text form has no syntax for it (false).
    pub any_layout: bool,
}

/// Elements of chunk `i` when `total` elements are split into `chunks` nearly equal chunks.
pub fn chunk_range(total: u64, chunks: u32, i: u32) -> std::ops::Range<u64> {
    let c = u128::from(chunks.max(1));
    let start = (u128::from(total) * u128::from(i) / c) as u64;
    let end = (u128::from(total) * (u128::from(i) + 1) / c) as u64;
    start..end
}

impl Program {
    /// An empty program with one process per rank.
    pub fn new(name: impl Into<String>, spec: Spec) -> Program {
        let procs = (0..spec.ranks)
            .map(|_| Proc {
                kind: ProcKind::Rank,
                scratch: 0,
                ops: Vec::new(),
            })
            .collect();
        Program {
            name: name.into(),
            spec,
            procs,
            any_layout: false,
        }
    }

    /// Elements held by slot `slot` of any buffer.
    pub fn chunk_elements(&self, slot: u32) -> u64 {
        let j = slot % self.spec.chunks_per_part.max(1);
        let r = chunk_range(self.spec.part_elements, self.spec.chunks_per_part, j);
        r.end - r.start
    }

    /// Bytes a slice holds.
    pub fn slice_bytes(&self, s: Slice) -> u64 {
        s.slots().map(|k| self.chunk_elements(k)).sum::<u64>() * self.spec.dtype.bytes()
    }

    /// Slots of a buffer of process `p`.
    pub fn buffer_len(&self, p: ProcId, buf: Buf) -> u32 {
        let proc = &self.procs[p as usize];
        match (buf, &proc.kind) {
            (Buf::Scratch, _) => proc.scratch,
            (_, ProcKind::Switch(_)) => 0,
            (Buf::Input, ProcKind::Rank) => self.spec.input_chunks(),
            (Buf::Output, ProcKind::Rank) => self.spec.output_chunks(),
        }
    }

    /// Appends an op to process `p` and returns its id.
    pub fn push(&mut self, p: ProcId, kind: OpKind, deps: impl Into<Deps>) -> OpId {
        let ops = &mut self.procs[p as usize].ops;
        ops.push(Op {
            kind,
            deps: deps.into(),
        });
        (ops.len() - 1) as OpId
    }

    /// Global op numbers: op `o` of process `p` is `base[p] + o`, and the last entry is the
    /// total (`procs.len() + 1` entries).
    pub fn op_base(&self) -> Vec<u32> {
        let mut base = Vec::with_capacity(self.procs.len() + 1);
        let mut acc = 0u32;
        for proc in &self.procs {
            base.push(acc);
            acc += proc.ops.len() as u32;
        }
        base.push(acc);
        base
    }

    /// Total number of ops.
    pub fn op_count(&self) -> usize {
        self.procs.iter().map(|p| p.ops.len()).sum()
    }
}

/// Turns a verifier finding into a diagnostic at `span` (an op's line in IR text, or the
/// schedule declaration for a lowered program).
pub fn finding_diagnostic(f: &verify::Finding, span: crate::diag::Span) -> crate::diag::Diagnostic {
    let label = match f.op {
        Some(op) => format!("process {}, op {op}", f.proc),
        None => format!("process {}", f.proc),
    };
    crate::diag::Diagnostic::error(f.code, span, f.message.clone())
        .label(label)
        .help(f.help.clone())
}

/// Parses and verifies IR text (`collc check FILE.ir`); every problem as a diagnostic.
pub fn check_text(file: crate::diag::FileId, src: &str) -> Vec<crate::diag::Diagnostic> {
    check_text_with(file, src, crate::sema::elab::Limits::MAX_SLOTS)
}

/// [`check_text`] with at most `max_slots` buffer slots in all (`--max-slots`).
pub fn check_text_with(
    file: crate::diag::FileId,
    src: &str,
    max_slots: u64,
) -> Vec<crate::diag::Diagnostic> {
    let parsed = match text::parse_with(file, src, max_slots) {
        Ok(p) => p,
        Err(d) => return vec![d],
    };
    match verify::verify(&parsed.program) {
        Ok(_) => Vec::new(),
        Err(findings) => findings
            .iter()
            .map(|f| {
                let span = match f.op {
                    Some(op) => parsed.op_spans[f.proc as usize][op as usize],
                    None => parsed
                        .proc_spans
                        .get(f.proc as usize)
                        .copied()
                        .unwrap_or(crate::diag::Span::new(file, 0, 0)),
                };
                finding_diagnostic(f, span)
            })
            .collect(),
    }
}
