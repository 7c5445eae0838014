//! Converting one process to one GOAL rank ([`RankCx::rank`]) as the module doc of [`super`]
//! describes: GOAL tags ([`goal_tags`], numbered per receiver in the sender's program order),
//! slice sizes, calc times and the completion sets that stand in for elided copies.

use super::label::Label;
use super::matching::FastMap;
use super::{ANY_TAG, Dep, DepKind, GoalError, GoalOp, GoalOptions, GoalRank, OpKind, err};
use crate::ir::{OpKind as IrOp, Program, Slice};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};

/// `secs / tick`, rounded to the nearest integer (halves up).
fn ticks(secs: &BigRational, tick: &BigRational) -> Option<u64> {
    if tick.is_zero() {
        return None;
    }
    let q = secs / tick;
    let two = BigInt::from(2);
    let rounded =
        num_integer::Integer::div_floor(&(q.numer() * &two + q.denom()), &(q.denom() * two));
    rounded.to_u64()
}

/// GOAL tags as a sender numbers them: per receiver, 0, 1, 2, ... in program order. Processes
/// talk to few peers, so a short linear scan beats a hash map.
#[derive(Default)]
struct PairCounter {
    next: Vec<(u32, u32)>,
}

impl PairCounter {
    /// The GOAL tag of process `pi`'s next send to `peer`.
    fn next(&mut self, pi: usize, peer: u32) -> Result<u32, GoalError> {
        let next = match self.next.iter_mut().find(|(q, _)| *q == peer) {
            Some((_, c)) => c,
            None => {
                self.next.push((peer, 0));
                let last = self.next.len() - 1;
                &mut self.next[last].1
            }
        };
        if *next == ANY_TAG {
            return Err(err(
                format!("process {pi} sends more than {ANY_TAG} messages to {peer}"),
                "GOAL tags are 32 bits; split the schedule",
            ));
        }
        *next += 1;
        Ok(*next - 1)
    }
}

/// Per sender: (receiver, IR tag, GOAL tag) of each send, by receiver and then in program
/// order, so that a receiver finds its messages from a sender in one short run.
pub(super) fn goal_tags(
    pi: usize,
    proc: &crate::ir::Proc,
) -> Result<Vec<(u32, u32, u32)>, GoalError> {
    let mut counter = PairCounter::default();
    let mut list = Vec::new();
    for op in &proc.ops {
        if let IrOp::Send { peer, tag, .. } = op.kind {
            list.push((peer, tag, counter.next(pi, peer)?));
        }
    }
    // Stable: program order within each receiver.
    list.sort_by_key(|x| x.0);
    Ok(list)
}

/// Bytes of a slice, as [`Program::slice_bytes`], from a table of chunk sizes.
pub(super) struct SliceBytes {
    elements: Vec<u64>,
    elem_bytes: u64,
}

impl SliceBytes {
    /// Chunk sizes of `p` with parts of `part_elements` elements (its spec's, or another
    /// size's: [`super::from_verified_at`]).
    pub(super) fn new(p: &Program, part_elements: u64) -> SliceBytes {
        let cpp = p.spec.chunks_per_part.max(1);
        SliceBytes {
            elements: (0..cpp)
                .map(|j| {
                    let r = crate::ir::chunk_range(part_elements, cpp, j);
                    r.end - r.start
                })
                .collect(),
            elem_bytes: p.spec.dtype.bytes(),
        }
    }

    fn of(&self, s: Slice) -> u64 {
        let cpp = self.elements.len() as u32;
        s.slots()
            .map(|k| self.elements[(k % cpp) as usize])
            .sum::<u64>()
            * self.elem_bytes
    }
}

/// What an op's amount is of its slice: the slice's bytes (a send or a receive), or the
/// time to reduce or to copy them (a calc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Measure {
    Bytes,
    Reduce,
    Copy,
}

/// What op `g` of GOAL rank `pi` (converted from process `pi` of `p`) measures, and of which
/// slice: its amount at any size is that slice's ([`RankCx::amount_of`]).
pub(super) fn measure(p: &Program, pi: usize, g: &GoalOp) -> Result<(Measure, Slice), GoalError> {
    let Some(Label::Ir { op, calc }) = g.label else {
        return Err(err(
            format!("an op of rank {pi} has no IR label"),
            "size only a schedule converted from this program",
        ));
    };
    let Some(ir) = p.procs.get(pi).and_then(|p| p.ops.get(op as usize)) else {
        return Err(err(
            format!("rank {pi} names op {op}, which its process does not have"),
            "size only a schedule converted from this program",
        ));
    };
    Ok(match (&ir.kind, calc) {
        (IrOp::Send { src, .. }, _) => (Measure::Bytes, *src),
        (IrOp::Recv { dst, .. } | IrOp::RecvReduce { dst, .. }, false) => (Measure::Bytes, *dst),
        (IrOp::RecvReduce { dst, .. } | IrOp::Reduce { dst, .. }, _)
        | (IrOp::Recv { dst, .. }, true) => (Measure::Reduce, *dst),
        (IrOp::Copy { dst, .. }, _) => (Measure::Copy, *dst),
    })
}

/// What converting one process needs; one per block of processes.
pub(super) struct RankCx<'a> {
    p: &'a Program,
    opts: &'a GoalOptions,
    sends_of: &'a [Vec<(u32, u32, u32)>],
    bytes: &'a SliceBytes,
    calc_cache: FastMap<(Measure, u64), u64>,
}

impl<'a> RankCx<'a> {
    pub(super) fn new(
        p: &'a Program,
        opts: &'a GoalOptions,
        sends_of: &'a [Vec<(u32, u32, u32)>],
        bytes: &'a SliceBytes,
    ) -> RankCx<'a> {
        RankCx {
            p,
            opts,
            sends_of,
            bytes,
            calc_cache: FastMap::default(),
        }
    }

    /// The time of a reduce or copy (`kind`) of `bytes`, in ticks.
    fn calc(&mut self, kind: Measure, bytes: u64) -> Result<u64, GoalError> {
        if let Some(t) = self.calc_cache.get(&(kind, bytes)) {
            return Ok(*t);
        }
        let opts = self.opts;
        let b = BigRational::from_integer(BigInt::from(bytes));
        let secs = match kind {
            Measure::Copy => &opts.copy_per_byte * b,
            _ => &opts.reduce_fixed + &opts.reduce_per_byte * b,
        };
        let t = ticks(&secs, &opts.tick).ok_or_else(|| {
            err(
                "a calc time does not fit 64 bits of GOAL time units".into(),
                "use a coarser time unit",
            )
        })?;
        self.calc_cache.insert((kind, bytes), t);
        Ok(t)
    }

    /// The bytes (a send or receive) or time (a calc) that a [`measure`] of `slice` comes to
    /// at this converter's sizes: what [`Self::rank`] gives an op that measures it.
    pub(super) fn amount_of(&mut self, what: Measure, slice: Slice) -> Result<u64, GoalError> {
        let bytes = self.bytes.of(slice);
        match what {
            Measure::Bytes => Ok(bytes),
            calc => self.calc(calc, bytes),
        }
    }

    /// GOAL rank `pi`, from process `pi`.
    pub(super) fn rank(&mut self, pi: usize) -> Result<GoalRank, GoalError> {
        let p = self.p;
        let proc = &p.procs[pi];
        let me = pi as u32;
        let calcs = proc
            .ops
            .iter()
            .filter(|o| matches!(o.kind, IrOp::RecvReduce { .. }))
            .count();
        let mut rank = GoalRank {
            comment: match &proc.kind {
                crate::ir::ProcKind::Rank => None,
                crate::ir::ProcKind::Switch(name) => Some(format!("switch {name}")),
            },
            ops: Vec::with_capacity(proc.ops.len() + calcs),
            deps: Vec::with_capacity(calcs),
        };
        // GOAL ops whose completion stands for each IR op's completion.
        let mut first: Vec<Option<u32>> = vec![None; proc.ops.len()];
        let mut last: Vec<Option<u32>> = vec![None; proc.ops.len()];
        let push = |rank: &mut GoalRank, label: Label, kind: OpKind| -> u32 {
            rank.ops.push(GoalOp {
                label: Some(label),
                kind,
                cpu: 0,
                nic: 0,
            });
            (rank.ops.len() - 1) as u32
        };
        let mut counter = PairCounter::default();
        // Per (sender, IR tag): the GOAL tags of the sender's messages to this process in its
        // program order, and how many receives took one; filled from a sender's run of
        // `sends_of` when the first receive from it comes, so each run is read once.
        let mut queues: FastMap<(u32, u32), (usize, Vec<u32>)> = FastMap::default();
        let mut read: FastMap<u32, ()> = FastMap::default();
        for (oi, op) in proc.ops.iter().enumerate() {
            let label = Label::Ir {
                op: oi as u32,
                calc: false,
            };
            match op.kind {
                IrOp::Send { peer, src, .. } => {
                    let goal_tag = counter.next(pi, peer)?;
                    let size = self.bytes.of(src);
                    let g = push(
                        &mut rank,
                        label,
                        OpKind::Send {
                            size,
                            to: peer,
                            tag: goal_tag,
                        },
                    );
                    (first[oi], last[oi]) = (Some(g), Some(g));
                }
                IrOp::Recv { peer, dst, tag } | IrOp::RecvReduce { peer, dst, tag } => {
                    if read.insert(peer, ()).is_none() {
                        if let Some(list) = self.sends_of.get(peer as usize) {
                            let to_me = list.partition_point(|x| x.0 < me);
                            for x in list[to_me..].iter().take_while(|x| x.0 == me) {
                                queues.entry((peer, x.1)).or_default().1.push(x.2);
                            }
                        }
                    }
                    let found = queues.get_mut(&(peer, tag)).and_then(|(k, tags)| {
                        let t = tags.get(*k).copied()?;
                        *k += 1;
                        Some(t)
                    });
                    let goal_tag = found
                        .ok_or_else(|| {
                            err(
                                format!(
                                    "op {oi} of process {pi} receives from process {peer} (tag {tag}) a message that is never sent"
                                ),
                                "verify the program first (`collc check FILE.ir`): every receive needs its send",
                            )
                        })?;
                    let size = self.bytes.of(dst);
                    let reduces = matches!(op.kind, IrOp::RecvReduce { .. });
                    let r = push(
                        &mut rank,
                        label,
                        OpKind::Recv {
                            size,
                            from: peer,
                            tag: goal_tag,
                        },
                    );
                    first[oi] = Some(r);
                    last[oi] = Some(r);
                    if reduces {
                        let time = self.calc(Measure::Reduce, size)?;
                        let c = push(
                            &mut rank,
                            Label::Ir {
                                op: oi as u32,
                                calc: true,
                            },
                            OpKind::Calc { time },
                        );
                        rank.deps.push(Dep {
                            op: c,
                            on: r,
                            kind: DepKind::Requires,
                        });
                        last[oi] = Some(c);
                    }
                }
                IrOp::Reduce { dst, .. } => {
                    let time = self.calc(Measure::Reduce, self.bytes.of(dst))?;
                    let c = push(&mut rank, label, OpKind::Calc { time });
                    (first[oi], last[oi]) = (Some(c), Some(c));
                }
                IrOp::Copy { dst, .. } => {
                    if !self.opts.copy_per_byte.is_zero() {
                        let time = self.calc(Measure::Copy, self.bytes.of(dst))?;
                        let c = push(&mut rank, label, OpKind::Calc { time });
                        (first[oi], last[oi]) = (Some(c), Some(c));
                    }
                }
            }
        }
        // Completion sets: an elided copy stands for the completion of its own dependencies.
        let done = completion_sets(me, proc, &last)?;
        let mut deps = Vec::with_capacity(
            proc.ops.iter().map(|o| o.deps.len()).sum::<usize>() + rank.deps.len(),
        );
        for (oi, op) in proc.ops.iter().enumerate() {
            let Some(f) = first[oi] else { continue };
            let from = deps.len();
            for d in &op.deps {
                for &on in done[*d as usize].as_slice() {
                    if !deps[from..].iter().any(|x: &Dep| x.on == on) {
                        deps.push(Dep {
                            op: f,
                            on,
                            kind: DepKind::Requires,
                        });
                    }
                }
            }
        }
        // The recv -> calc edges of recv_reduce were pushed while converting; keep them after
        // the IR's own dependencies of the same ops so that every edge is written once.
        deps.append(&mut rank.deps);
        rank.deps = deps;
        Ok(rank)
    }
}

fn dedup_keep_order(v: &mut Vec<u32>) {
    if v.len() <= 16 {
        let mut k = 0;
        for i in 0..v.len() {
            if !v[..k].contains(&v[i]) {
                v[k] = v[i];
                k += 1;
            }
        }
        v.truncate(k);
    } else {
        let mut seen = std::collections::HashSet::new();
        v.retain(|x| seen.insert(*x));
    }
}

/// The GOAL ops whose completion means an IR op is complete: usually the one op it became; for
/// an elided copy, the completions of its own dependencies.
#[derive(Clone)]
enum Done {
    One(u32),
    Many(Vec<u32>),
}

impl Done {
    fn as_slice(&self) -> &[u32] {
        match self {
            Done::One(g) => std::slice::from_ref(g),
            Done::Many(v) => v,
        }
    }
}

/// For each IR op, the GOAL ops whose completion means the IR op is complete.
fn completion_sets(
    me: u32,
    proc: &crate::ir::Proc,
    last: &[Option<u32>],
) -> Result<Vec<Done>, GoalError> {
    let n = proc.ops.len();
    let mut done: Vec<Option<Done>> = last.iter().map(|l| l.map(Done::One)).collect();
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    for start in 0..n {
        if done[start].is_some() {
            continue;
        }
        // Iterative depth-first search over elided ops' dependencies.
        stack.push((start, false));
        while let Some((i, expanded)) = stack.pop() {
            if done[i].is_some() {
                continue;
            }
            if expanded {
                let mut v: Vec<u32> = proc.ops[i]
                    .deps
                    .iter()
                    .flat_map(|d| {
                        done[*d as usize]
                            .as_ref()
                            .map(|x| x.as_slice().to_vec())
                            .unwrap_or_default()
                    })
                    .collect();
                dedup_keep_order(&mut v);
                done[i] = Some(Done::Many(v));
                on_stack[i] = false;
                continue;
            }
            if on_stack[i] {
                return Err(err(
                    format!("process {me} has a dependency cycle through op {i}"),
                    "verify the program first (`collc check FILE.ir`)",
                ));
            }
            on_stack[i] = true;
            stack.push((i, true));
            for d in &proc.ops[i].deps {
                let d = *d as usize;
                if d >= n {
                    return Err(err(
                        format!("op {i} of process {me} depends on op {d}, which does not exist"),
                        "verify the program first (`collc check FILE.ir`)",
                    ));
                }
                if done[d].is_none() {
                    if on_stack[d] {
                        return Err(err(
                            format!("process {me} has a dependency cycle through op {d}"),
                            "verify the program first (`collc check FILE.ir`)",
                        ));
                    }
                    stack.push((d, false));
                }
            }
        }
    }
    Ok(done
        .into_iter()
        .map(|d| d.unwrap_or(Done::Many(Vec::new())))
        .collect())
}
