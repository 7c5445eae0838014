//! Emits IR ops with their dependencies derived from buffer hazards, so every lowering is
//! race-free by construction.
//!
//! [`Builder::op`] appends an op to a process and makes it wait for the last writer of every slot
//! it reads or writes, and for every reader (since that write) of a slot it writes. Program
//! (emission) order therefore *is* the meaning of a lowering: each op sees the buffer state the
//! ops emitted before it on the same process leave behind, whatever the timing, and independent
//! ops (sends of one stage, receives into distinct slots) stay free to run concurrently. Every
//! pair of conflicting accesses is ordered (directly, or through the write they both follow), which
//! is exactly what `ir::verify`'s race check demands.

use crate::ir::{Buf, Deps, Op, OpId, OpKind, Proc, ProcId, Program, Slice, Spec};

#[derive(Default, Clone)]
struct SlotState {
    writer: Option<OpId>,
    readers: Vec<OpId>,
}

/// Hazard state of one process: input, output and scratch slots.
#[derive(Default)]
struct ProcState {
    bufs: [Vec<SlotState>; 3],
}

fn idx(b: Buf) -> usize {
    match b {
        Buf::Input => 0,
        Buf::Output => 1,
        Buf::Scratch => 2,
    }
}

pub(crate) struct Builder {
    prog: Program,
    state: Vec<ProcState>,
}

impl Builder {
    pub(crate) fn new(name: impl Into<String>, spec: Spec) -> Builder {
        let prog = Program::new(name, spec);
        let (inp, out) = (prog.spec.input_chunks(), prog.spec.output_chunks());
        let state = (0..prog.procs.len())
            .map(|_| ProcState {
                bufs: [
                    vec![SlotState::default(); inp as usize],
                    vec![SlotState::default(); out as usize],
                    Vec::new(),
                ],
            })
            .collect();
        Builder { prog, state }
    }

    /// Reserves room for `ops` ops in every rank: lowerings whose size [`super::estimate`]
    /// knows ahead call this, so that a rank's op list is not left with up to twice the room
    /// it needs by growing (at 2^20 ranks, gigabytes).
    pub(crate) fn reserve_per_rank(&mut self, ops: usize) {
        let ranks = self.prog.spec.ranks as usize;
        for proc in &mut self.prog.procs[..ranks] {
            proc.ops.reserve_exact(ops);
        }
    }

    pub(crate) fn ranks(&self) -> u32 {
        self.prog.spec.ranks
    }

    /// Appends a switch process for the topology switch `name` (after the ranks); its id.
    pub(crate) fn add_switch(&mut self, name: String) -> ProcId {
        self.prog.procs.push(Proc {
            kind: crate::ir::ProcKind::Switch(name),
            scratch: 0,
            ops: Vec::new(),
        });
        self.state.push(ProcState {
            bufs: [Vec::new(), Vec::new(), Vec::new()],
        });
        (self.prog.procs.len() - 1) as ProcId
    }

    /// Appends `kind` to process `p`, after every op it conflicts with; returns its id.
    pub(crate) fn op(&mut self, p: ProcId, kind: OpKind) -> OpId {
        self.rank(p).op(kind)
    }

    /// Process `p` alone, to emit its ops.
    pub(crate) fn rank(&mut self, p: ProcId) -> RankMut<'_> {
        RankMut {
            proc: &mut self.prog.procs[p as usize],
            st: &mut self.state[p as usize],
        }
    }

    /// The processes `ids` at once, in that order, so that their ops can be emitted on several
    /// threads (a process's ops depend only on its own state); `None` unless `ids` are distinct
    /// processes.
    pub(crate) fn ranks_mut(&mut self, ids: &[ProcId]) -> Option<Vec<RankMut<'_>>> {
        let mut all: Vec<Option<RankMut<'_>>> = self
            .prog
            .procs
            .iter_mut()
            .zip(self.state.iter_mut())
            .map(|(proc, st)| Some(RankMut { proc, st }))
            .collect();
        ids.iter()
            .map(|p| all.get_mut(*p as usize).and_then(Option::take))
            .collect()
    }

    pub(crate) fn send(&mut self, p: ProcId, peer: ProcId, src: Slice, tag: u32) -> OpId {
        self.op(p, OpKind::Send { peer, src, tag })
    }

    pub(crate) fn recv(&mut self, p: ProcId, peer: ProcId, dst: Slice, tag: u32) -> OpId {
        self.op(p, OpKind::Recv { peer, dst, tag })
    }

    pub(crate) fn recv_reduce(&mut self, p: ProcId, peer: ProcId, dst: Slice, tag: u32) -> OpId {
        self.op(p, OpKind::RecvReduce { peer, dst, tag })
    }

    // Part of the builder's vocabulary for every lowering, though none but recursive's (which
    // reduces through `RankMut`) needs it today.
    #[allow(dead_code)]
    pub(crate) fn reduce(&mut self, p: ProcId, dst: Slice, src: Slice) -> OpId {
        self.op(p, OpKind::Reduce { dst, src })
    }

    pub(crate) fn copy(&mut self, p: ProcId, dst: Slice, src: Slice) -> OpId {
        self.op(p, OpKind::Copy { dst, src })
    }

    /// Makes op `op` of process `p` also wait for its op `dep` (an order the buffers do not
    /// imply, such as the steps of a pairwise exchange); `dep` must come before `op`.
    pub(crate) fn after(&mut self, p: ProcId, op: OpId, dep: OpId) {
        debug_assert!(dep < op, "an op can only wait for an earlier one");
        let o = &mut self.prog.procs[p as usize].ops[op as usize];
        let mut all = o.deps.as_slice().to_vec();
        if let Err(at) = all.binary_search(&dep) {
            all.insert(at, dep);
            o.deps = crate::ir::Deps::from_slice(&all);
        }
    }

    pub(crate) fn finish(self) -> Program {
        self.prog
    }
}

/// One process of a [`Builder`], borrowed on its own ([`Builder::rank`], [`Builder::ranks_mut`]).
pub(crate) struct RankMut<'a> {
    proc: &'a mut Proc,
    st: &'a mut ProcState,
}

impl RankMut<'_> {
    /// Makes sure the process has at least `n` scratch slots.
    pub(crate) fn scratch(&mut self, n: u32) {
        if self.proc.scratch < n {
            self.proc.scratch = n;
            self.st.bufs[2].resize(n as usize, SlotState::default());
        }
    }

    /// Appends `kind`, after every op it conflicts with; returns its id.
    pub(crate) fn op(&mut self, kind: OpKind) -> OpId {
        if let Some(s) = kind.writes().filter(|s| s.buf == Buf::Scratch) {
            self.scratch(s.start + s.count);
        }
        for s in kind.reads().filter(|s| s.buf == Buf::Scratch) {
            self.scratch(s.start + s.count);
        }
        let id = self.proc.ops.len() as OpId;
        let st = &mut *self.st;
        let reads: [Option<Slice>; 2] = {
            let mut it = kind.reads();
            [it.next(), it.next()]
        };
        let reads = reads.iter().flatten();
        let writes = kind.writes();
        let written =
            |buf: Buf, k: u32| writes.is_some_and(|w| w.buf == buf && w.slots().contains(&k));
        // Collected on the stack first: most ops have one or two dependencies, and the op's
        // list is then allocated once at its final size.
        let mut found: Vec<OpId> = Vec::new();
        let mut small = [0 as OpId; 8];
        let mut len = 0;
        let mut add = |d: OpId| {
            if len < small.len() {
                small[len] = d;
                len += 1;
            } else {
                found.push(d);
            }
        };
        for s in reads.clone() {
            for k in s.slots().filter(|k| !written(s.buf, *k)) {
                if let Some(w) = st.bufs[idx(s.buf)][k as usize].writer {
                    add(w);
                }
            }
        }
        if let Some(s) = writes {
            for k in s.slots() {
                // Readers since the last write depend on that write already.
                let slot = &st.bufs[idx(s.buf)][k as usize];
                if slot.readers.is_empty() {
                    if let Some(w) = slot.writer {
                        add(w);
                    }
                } else {
                    slot.readers.iter().for_each(|r| add(*r));
                }
            }
        }
        let ids: &mut [OpId] = if found.is_empty() {
            &mut small[..len]
        } else {
            found.extend_from_slice(&small[..len]);
            &mut found
        };
        ids.sort_unstable();
        let deps: Deps = ids
            .iter()
            .enumerate()
            .filter(|&(i, d)| i == 0 || ids[i - 1] != *d)
            .map(|(_, d)| *d)
            .collect();
        for s in reads {
            for k in s.slots() {
                st.bufs[idx(s.buf)][k as usize].readers.push(id);
            }
        }
        if let Some(s) = writes {
            for k in s.slots() {
                let slot = &mut st.bufs[idx(s.buf)][k as usize];
                slot.writer = Some(id);
                slot.readers.clear();
            }
        }
        self.proc.ops.push(Op { kind, deps });
        id
    }

    pub(crate) fn send(&mut self, peer: ProcId, src: Slice, tag: u32) -> OpId {
        self.op(OpKind::Send { peer, src, tag })
    }

    pub(crate) fn recv(&mut self, peer: ProcId, dst: Slice, tag: u32) -> OpId {
        self.op(OpKind::Recv { peer, dst, tag })
    }

    pub(crate) fn reduce(&mut self, dst: Slice, src: Slice) -> OpId {
        self.op(OpKind::Reduce { dst, src })
    }

    pub(crate) fn copy(&mut self, dst: Slice, src: Slice) -> OpId {
        self.op(OpKind::Copy { dst, src })
    }
}
