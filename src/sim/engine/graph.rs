//! The dependency graph of a schedule as the loop consumes it ([`Graph`]): per op one 28-byte
//! record with what the op is and its place in the graph, dependents in compressed rows, and
//! the [`State`] that releases dependents when an op starts or completes. [`Builder`] makes
//! it, from a [`GoalSchedule`] ([`build`]) or from GOAL text as it is read
//! ([`crate::sim::read`]). Ops are numbered rank after rank (`base` holds each rank's first);
//! events, queues and dependents lists name them by that global index, so the loop never
//! looks up a rank's start (one cache miss per event on millions of ranks).

use crate::backend::goal::{ANY_SOURCE, ANY_TAG, DepKind, GoalSchedule, OpKind};
use std::cell::Cell;

pub(super) const SEND: u8 = 1;
pub(super) const RECV: u8 = 2;
pub(super) const CALC: u8 = 3;
pub(super) const MSG: u8 = 4;
/// Not an op: a queue entry standing for an event parked while its CPU or NIC is busy
/// ([`super::park`]).
pub(super) const PARKED: u8 = 5;

/// An op as the loop reads it ([`Graph::node`]).
#[derive(Clone, Copy)]
pub(super) struct Node {
    pub(super) ty: u8,
    pub(super) cpu: u8,
    pub(super) nic: u8,
    pub(super) peer: u32,
    pub(super) tag: u32,
    pub(super) size: u64,
}

/// One op as it is stored, in 24 bytes. What the op is (the type, cpu and nic packed in
/// `meta`; the size or calc time in 32 bits, or in [`Graph::wide`] when it does not fit, flag
/// [`WIDE`]) and its place in the graph (the dependencies it still waits for, and where the
/// ops waiting for its completion start in `after_done`; they end where the next op's start,
/// a last record closes the list) are kept together: on lowered schedules the events visit the
/// ranks in no useful order, so every separate array costs a cache miss per event. The few ops
/// that others wait to *start* (`irequires`) have flag [`STARTS`] and their range of
/// `after_start` in [`Graph::starts`].
struct Rec {
    peer: u32,
    tag: u32,
    size: u32,
    meta: u32,
    remaining: Cell<u32>,
    after_done: u32,
}

const WIDE: u32 = 1 << 24;
const STARTS: u32 = 1 << 25;

/// A schedule compiled for the loop; see the module doc.
pub(super) struct Graph {
    /// Each rank's first op, plus the op count.
    pub(super) base: Vec<usize>,
    /// Per op, plus one closing record.
    recs: Vec<Rec>,
    wide: rustc_hash::FxHashMap<usize, u64>,
    after_done: Vec<u32>,
    after_start: Vec<u32>,
    /// The range of `after_start` of each op with flag [`STARTS`].
    starts: rustc_hash::FxHashMap<usize, (u32, u32)>,
    /// The largest cpu and nic index of any op.
    pub(super) max_cpu: u8,
    pub(super) max_nic: u8,
    /// Whether some op has a wildcard source or tag.
    pub(super) wild: bool,
}

impl Graph {
    #[inline]
    pub(super) fn node(&self, i: usize) -> Node {
        let p = &self.recs[i];
        let size = if p.meta & WIDE == 0 {
            u64::from(p.size)
        } else {
            self.wide[&i]
        };
        Node {
            ty: p.meta as u8,
            cpu: (p.meta >> 8) as u8,
            nic: (p.meta >> 16) as u8,
            peer: p.peer,
            tag: p.tag,
            size,
        }
    }
    /// Hints that op `i`'s record will be read soon ([`super::prefetch`]).
    #[inline]
    pub(super) fn prefetch(&self, i: usize) {
        if let Some(r) = self.recs.get(i) {
            super::prefetch::touch(r);
        }
    }

    /// Hints that the list of ops waiting for op `i` will be read soon; `i`'s record should
    /// be in cache already ([`Graph::prefetch`] some events before).
    #[inline]
    pub(super) fn prefetch_list(&self, i: usize) {
        if let Some(a) = self
            .recs
            .get(i)
            .and_then(|r| self.after_done.get(r.after_done as usize))
        {
            super::prefetch::touch(a);
        }
    }

    /// Hints that the records of the first ops waiting for op `i` will be read soon; `i`'s
    /// list should be in cache ([`Graph::prefetch_list`]).
    #[inline]
    pub(super) fn prefetch_waiting(&self, i: usize) {
        for &x in self.after_done_of(i).iter().take(2) {
            self.prefetch(x as usize);
        }
    }

    /// The ops (of its rank, by global index) waiting for op `i` to complete, in the order
    /// their dependencies were written.
    #[inline]
    fn after_done_of(&self, i: usize) -> &[u32] {
        let (here, next) = (&self.recs[i], &self.recs[i + 1]);
        &self.after_done[here.after_done as usize..next.after_done as usize]
    }

    /// The dependencies op `i` still waits for.
    pub(super) fn remaining(&self, i: usize) -> u32 {
        self.recs[i].remaining.get()
    }
}

/// A schedule compiled for the loop ([`super::simulate_compiled`]).
pub struct Compiled {
    pub(super) graph: Graph,
}

impl Compiled {
    /// The number of ranks.
    pub fn ranks(&self) -> usize {
        self.graph.base.len() - 1
    }
    /// The number of ops.
    pub fn ops(&self) -> usize {
        self.graph.base.last().copied().unwrap_or(0)
    }
}

/// Builds a [`Compiled`] rank by rank: [`Builder::rank`], then the rank's ops
/// ([`Builder::send`], [`Builder::recv`], [`Builder::calc`]) and dependencies ([`Builder::dep`],
/// in the order they are written), then the next rank; [`Builder::finish`] closes it. A rank's
/// dependents are laid out when it is closed, so only one rank's dependency list is held
/// besides the result.
pub struct Builder {
    g: Graph,
    /// Whether the last rank of `g.base` is open (its dependents not laid out yet).
    open: bool,
    /// The open rank's dependencies: (op, on, irequires), rank-local indices.
    deps: Vec<(u32, u32, bool)>,
    counts: [Vec<u32>; 2],
}

impl Builder {
    /// A builder that expects about `ops` ops and `deps` dependencies (capacity only).
    pub fn with_capacity(ops: usize, deps: usize) -> Self {
        Builder {
            g: Graph {
                base: Vec::new(),
                recs: Vec::with_capacity(ops + 1),
                wide: Default::default(),
                after_done: Vec::with_capacity(deps),
                after_start: Vec::new(),
                starts: Default::default(),
                max_cpu: 0,
                max_nic: 0,
                wild: false,
            },
            open: false,
            deps: Vec::new(),
            counts: [Vec::new(), Vec::new()],
        }
    }

    /// Closes the open rank (if any) and opens the next.
    pub fn rank(&mut self) {
        self.close();
        self.g.base.push(self.g.recs.len());
        self.open = true;
    }

    /// The number of ops of the open rank.
    pub fn rank_ops(&self) -> u32 {
        (self.g.recs.len() - self.g.base.last().copied().unwrap_or(0)) as u32
    }

    fn push(&mut self, ty: u8, cpu: u8, nic: u8, peer: u32, tag: u32, size: u64) {
        let g = &mut self.g;
        let mut meta = u32::from(ty) | u32::from(cpu) << 8 | u32::from(nic) << 16;
        let size = u32::try_from(size).unwrap_or_else(|_| {
            meta |= WIDE;
            g.wide.insert(g.recs.len(), size);
            0
        });
        g.max_cpu = g.max_cpu.max(cpu);
        g.max_nic = g.max_nic.max(nic);
        g.wild |= ty != CALC && (tag == ANY_TAG || (ty == RECV && peer == ANY_SOURCE));
        g.recs.push(Rec {
            peer,
            tag,
            size,
            meta,
            remaining: Cell::new(0),
            after_done: 0,
        });
    }
    pub fn send(&mut self, size: u64, to: u32, tag: u32, cpu: u8, nic: u8) {
        self.push(SEND, cpu, nic, to, tag, size);
    }
    pub fn recv(&mut self, size: u64, from: u32, tag: u32, cpu: u8, nic: u8) {
        self.push(RECV, cpu, nic, from, tag, size);
    }
    pub fn calc(&mut self, time: u64, cpu: u8, nic: u8) {
        self.push(CALC, cpu, nic, 0, 0, time);
    }
    /// Op `op` of the open rank waits for op `on` to complete (`requires`) or, with
    /// `irequires`, to start. Both must be ops of the open rank.
    pub fn dep(&mut self, op: u32, on: u32, irequires: bool) {
        self.deps.push((op, on, irequires));
    }

    /// Lays out the open rank's dependents, as [`crate::backend::goal::dependents`] does for
    /// the whole schedule: per op, the ops waiting for its completion and for its start, each
    /// in the order the dependencies were written.
    fn close(&mut self) {
        let Some(&b) = self.g.base.last().filter(|_| self.open) else {
            return;
        };
        self.open = false;
        let g = &mut self.g;
        let n = g.recs.len() - b;
        for c in &mut self.counts {
            c.clear();
            c.resize(n + 1, 0);
        }
        let recs = &mut g.recs[b..];
        for &(op, on, ir) in &self.deps {
            let r = &recs[op as usize].remaining;
            r.set(r.get() + 1);
            self.counts[usize::from(ir)][on as usize + 1] += 1;
        }
        let offsets = [g.after_done.len() as u32, g.after_start.len() as u32];
        for (k, c) in self.counts.iter_mut().enumerate() {
            c[0] = offsets[k];
            for i in 0..n {
                c[i + 1] += c[i];
            }
        }
        for (i, r) in recs.iter_mut().enumerate() {
            r.after_done = self.counts[0][i];
            let (a, z) = (self.counts[1][i], self.counts[1][i + 1]);
            if a < z {
                r.meta |= STARTS;
                g.starts.insert(b + i, (a, z));
            }
        }
        g.after_done.resize(self.counts[0][n] as usize, 0);
        g.after_start.resize(self.counts[1][n] as usize, 0);
        for &(op, on, ir) in &self.deps {
            let at = &mut self.counts[usize::from(ir)][on as usize];
            let list = if ir {
                &mut g.after_start
            } else {
                &mut g.after_done
            };
            list[*at as usize] = (b + op as usize) as u32;
            *at += 1;
        }
        self.deps.clear();
    }

    /// Appends the ranks `other` built after this builder's (read from the text that
    /// follows), as if they had been built here, and leaves `other` empty with its memory, to
    /// build the next part in (fresh memory for every part is memory the system clears again).
    pub fn append(&mut self, other: &mut Builder) {
        self.close();
        other.close();
        let g = &mut self.g;
        let (ops, done, start) = (g.recs.len(), g.after_done.len(), g.after_start.len());
        let o = &mut other.g;
        g.base.extend(o.base.drain(..).map(|b| b + ops));
        g.recs.extend(o.recs.drain(..).map(|mut r| {
            r.after_done += done as u32;
            r
        }));
        g.wide.extend(o.wide.drain().map(|(i, v)| (i + ops, v)));
        let start = start as u32;
        g.starts.extend(
            o.starts
                .drain()
                .map(|(i, (a, z))| (i + ops, (a + start, z + start))),
        );
        // The appended ops move up by `ops` places, and so do the dependents naming them
        // (indices wrap past 2^32 ops, a graph the loop refuses to run).
        let shift = ops as u32;
        g.after_done
            .extend(o.after_done.drain(..).map(|x| x.wrapping_add(shift)));
        g.after_start
            .extend(o.after_start.drain(..).map(|x| x.wrapping_add(shift)));
        g.max_cpu = g.max_cpu.max(o.max_cpu);
        g.max_nic = g.max_nic.max(o.max_nic);
        g.wild |= o.wild;
        (o.max_cpu, o.max_nic, o.wild) = (0, 0, false);
    }

    pub fn finish(mut self) -> Compiled {
        self.close();
        let g = &mut self.g;
        g.base.push(g.recs.len());
        g.recs.push(Rec {
            peer: 0,
            tag: 0,
            size: 0,
            meta: 0,
            remaining: Cell::new(0),
            after_done: g.after_done.len() as u32,
        });
        Compiled { graph: self.g }
    }
}

pub(super) fn build(s: &GoalSchedule) -> Compiled {
    let deps = s.ranks.iter().map(|r| r.deps.len()).sum();
    let mut b = Builder::with_capacity(s.op_count(), deps);
    for rank in &s.ranks {
        b.rank();
        for op in &rank.ops {
            match op.kind {
                OpKind::Send { size, to, tag } => b.send(size, to, tag, op.cpu, op.nic),
                OpKind::Recv { size, from, tag } => b.recv(size, from, tag, op.cpu, op.nic),
                OpKind::Calc { time } => b.calc(time, op.cpu, op.nic),
            }
        }
        for d in &rank.deps {
            b.dep(d.op, d.on, d.kind == DepKind::IRequires);
        }
    }
    b.finish()
}

pub(super) struct State<'g> {
    pub(super) g: &'g Graph,
    /// Ops that became executable in the event being handled, as (host, global op index), in
    /// release order.
    pub(super) ready: Vec<(u32, u32)>,
}

impl State<'_> {
    fn release(&mut self, host: u32, list_done: bool, node: u32) {
        let i = node as usize;
        let list = if list_done {
            self.g.after_done_of(i)
        } else if self.g.recs[i].meta & STARTS != 0 {
            let (a, z) = self.g.starts[&i];
            &self.g.after_start[a as usize..z as usize]
        } else {
            return;
        };
        for &x in list {
            let c = &self.g.recs[x as usize].remaining;
            let left = c.get() - 1;
            c.set(left);
            if left == 0 {
                self.ready.push((host, x));
            }
        }
    }
    pub(super) fn started(&mut self, host: u32, node: u32) {
        self.release(host, false, node);
    }
    pub(super) fn done(&mut self, host: u32, node: u32) {
        self.release(host, true, node);
    }
}
