//! Buffer mapping and fusion for one rank (steps 2 and 3 of [`super`]): which copies vanish,
//! which copies fold into a receive-reduce, and which sends fuse with the receive whose result
//! they forward (and whether that result must still be stored).
//!
//! A def-use pass over the rank's ops in the global order finds, per op, the op that wrote the
//! value it reads (the same in every order the dependencies allow: the program is race-free),
//! how many ops read each written value and whether it is overwritten later.

use super::chans::Channels;
use super::{Layout, MOp, MSlice, NO, map_op};
use crate::backend::msccl::MBuf;
use crate::ir::{OpKind, Program};
use rustc_hash::FxHashMap;

pub(super) struct Fusion {
    pub mops: Vec<MOp>,
    /// For a receive and the send fused with it: each other's op id; `NO` otherwise.
    pub partner: Vec<u32>,
    /// For a fused receive-reduce: its store is dead (`rrs` instead of `rrcs`).
    pub dead: Vec<bool>,
    /// A receive folded into the reduction that consumed it: that reduction's op id.
    pub moved: Vec<u32>,
    /// The reverse of `moved`: for such a reduction, the receive's op id.
    pub absorbed: Vec<u32>,
    /// Dependencies on top of the IR's that the XML's (aliased) buffers need.
    pub hazards: Vec<Vec<u32>>,
}

fn slots(s: MSlice, at: &[u32; 3]) -> std::ops::Range<usize> {
    let b = at[s.buf as usize] as usize + s.off as usize;
    b..b + s.cnt as usize
}

/// The global positions of a rank's sends (and receives) per (peer, channel), to keep every
/// connection's order under fusion: a step that moves may not pass another of its connection.
struct Conns(FxHashMap<(bool, u32, u32), Vec<u32>>);

impl Conns {
    fn new(p: &Program, r: u32, ops: &[u32], pos: &[u32], chans: &Channels) -> Conns {
        let mut m: FxHashMap<(bool, u32, u32), Vec<u32>> = FxHashMap::default();
        for &o in ops {
            let (send, peer) = match p.procs[r as usize].ops[o as usize].kind {
                OpKind::Send { peer, .. } => (true, peer),
                OpKind::Recv { peer, .. } | OpKind::RecvReduce { peer, .. } => (false, peer),
                _ => continue,
            };
            m.entry((send, peer, chans.raw(r, o)))
                .or_default()
                .push(pos[o as usize]);
        }
        Conns(m)
    }

    /// Whether the connection of op `o` (a send or receive) has another message strictly
    /// between global positions `a` and `b`.
    fn between(&self, p: &Program, r: u32, chans: &Channels, o: u32, a: u32, b: u32) -> bool {
        let (send, peer) = match p.procs[r as usize].ops[o as usize].kind {
            OpKind::Send { peer, .. } => (true, peer),
            OpKind::Recv { peer, .. } | OpKind::RecvReduce { peer, .. } => (false, peer),
            _ => return false,
        };
        let (lo, hi) = (a.min(b), a.max(b));
        self.0.get(&(send, peer, chans.raw(r, o))).is_some_and(|v| {
            let i = v.partition_point(|x| *x <= lo);
            v.get(i).is_some_and(|x| *x < hi)
        })
    }
}

/// `ops`: the rank's op ids in global order; `pos`: global positions indexed by op id.
pub(super) fn fuse(
    p: &Program,
    r: u32,
    ops: &[u32],
    pos: &[u32],
    l: &Layout,
    chans: &Channels,
) -> Fusion {
    let conns = Conns::new(p, r, ops, pos, chans);
    let rank = r;
    let proc = &p.procs[r as usize];
    let n = proc.ops.len();
    let mut mops: Vec<MOp> = proc.ops.iter().map(|o| map_op(&o.kind, r, l)).collect();
    // Dense slot numbering of i, o, s.
    let mut len = [0u32; 3];
    let touch = |s: MSlice, len: &mut [u32; 3]| {
        let e = &mut len[s.buf as usize];
        *e = (*e).max(s.off + s.cnt);
    };
    let reads_writes = |m: &MOp| -> ([Option<MSlice>; 2], Option<MSlice>) {
        match *m {
            MOp::Dropped => ([None, None], None),
            MOp::Send { src, .. } => ([Some(src), None], None),
            MOp::Recv { dst, .. } => ([None, None], Some(dst)),
            MOp::RecvReduce { src, dst, .. } => ([Some(src), None], Some(dst)),
            MOp::Copy { src, dst } => ([Some(src), None], Some(dst)),
            MOp::Reduce { src, dst } => ([Some(dst), Some(src)], Some(dst)),
        }
    };
    for m in &mops {
        let (rd, wr) = reads_writes(m);
        for s in rd.into_iter().flatten().chain(wr) {
            touch(s, &mut len);
        }
    }
    let at = [0, len[0], len[0] + len[1]];
    let total = (len[0] + len[1] + len[2]) as usize;
    let mut written_any = vec![false; total];
    for m in &mops {
        if let (_, Some(w)) = reads_writes(m) {
            written_any[slots(w, &at)].fill(true);
        }
    }
    // Def-use in global order.
    let mut writer = vec![NO; total];
    let mut sole = vec![NO; n];
    // For a reduction: the op that wrote exactly its source.
    let mut sole_src = vec![NO; n];
    let mut readers = vec![0u32; n];
    let mut last_reader = vec![NO; n];
    let mut overwritten = vec![0u32; n];
    for &o in ops {
        let (rd, wr) = reads_writes(&mops[o as usize]);
        for (k, s) in rd.into_iter().enumerate() {
            let Some(s) = s else { continue };
            let mut same = NO;
            let mut first = true;
            for slot in slots(s, &at) {
                let w = writer[slot];
                if w != NO && last_reader[w as usize] != o {
                    last_reader[w as usize] = o;
                    readers[w as usize] += 1;
                }
                if first {
                    same = w;
                    first = false;
                } else if same != w {
                    same = NO;
                }
            }
            if same != NO && reads_writes(&mops[same as usize]).1 == Some(s) {
                if k == 0 {
                    sole[o as usize] = same;
                } else {
                    sole_src[o as usize] = same;
                }
            }
        }
        if let Some(w) = wr {
            for slot in slots(w, &at) {
                let old = writer[slot];
                if old != NO {
                    overwritten[old as usize] += 1;
                }
                writer[slot] = o;
            }
        }
    }
    // A receive whose value only a reduction reads, and which is dead afterwards, fuses with
    // that reduction (`rrc`), at the reduction's place; its other dependents come later.
    let mut moved = vec![NO; n];
    let mut absorbed = vec![NO; n];
    // The two earliest dependents of every op: (position, op).
    let mut first_two = vec![[(u32::MAX, NO); 2]; n];
    for &o in ops {
        let p = pos[o as usize];
        for d in &proc.ops[o as usize].deps {
            let f = &mut first_two[*d as usize];
            if p < f[0].0 {
                f[1] = f[0];
                f[0] = (p, o);
            } else if p < f[1].0 {
                f[1] = (p, o);
            }
        }
    }
    for &o in ops {
        let MOp::Reduce { src, dst } = mops[o as usize] else {
            continue;
        };
        let r = sole_src[o as usize];
        if r == NO || readers[r as usize] != 1 {
            continue;
        }
        let MOp::Recv { peer, dst: rd } = mops[r as usize] else {
            continue;
        };
        let dead = overwritten[r as usize] == rd.cnt || rd.buf == MBuf::S;
        let f = first_two[r as usize];
        let other = if f[0].1 == o { f[1].0 } else { f[0].0 };
        let others_later = other == u32::MAX || other > pos[o as usize];
        // Moving the receive to the reduction's place must not pass another receive of its
        // connection.
        let keeps = !conns.between(p, rank, chans, r, pos[r as usize], pos[o as usize]);
        if rd == src && dead && others_later && keeps {
            absorbed[o as usize] = r;
            mops[o as usize] = MOp::RecvReduce {
                peer,
                src: dst,
                dst,
            };
            mops[r as usize] = MOp::Dropped;
            moved[r as usize] = o;
        }
    }
    // A copy whose only reader is a receive-reduce into its destination folds into it, when
    // nothing ever writes the copy's source.
    for &o in ops {
        let MOp::RecvReduce { peer, dst, .. } = mops[o as usize] else {
            continue;
        };
        let c = sole[o as usize];
        if c == NO || readers[c as usize] != 1 {
            continue;
        }
        if let MOp::Copy { src, dst: cd } = mops[c as usize] {
            if cd == dst && !written_any[slots(src, &at)].iter().any(|x| *x) {
                mops[o as usize] = MOp::RecvReduce { peer, src, dst };
                mops[c as usize] = MOp::Dropped;
            }
        }
    }
    let hazards = hazards(&mops, ops, &at, total);
    // A send of exactly what a receive just wrote fuses with it.
    let mut partner = vec![NO; n];
    let mut dead = vec![false; n];
    for &o in ops {
        let MOp::Send { src, .. } = mops[o as usize] else {
            continue;
        };
        let w = sole[o as usize];
        if w == NO || partner[w as usize] != NO {
            continue;
        }
        let (wdst, reduce) = match mops[w as usize] {
            MOp::Recv { dst, .. } => (dst, false),
            MOp::RecvReduce { dst, .. } => (dst, true),
            _ => continue,
        };
        if wdst != src {
            continue;
        }
        let pw = pos[w as usize];
        if proc.ops[o as usize]
            .deps
            .iter()
            .chain(&hazards[o as usize])
            .any(|d| *d != w && pos[*d as usize] > pw)
        {
            continue;
        }
        // Fusing moves the send back to the receive's place (a folded receive's channel is
        // the one the fused step uses): never ahead of another send on its connection.
        let rc = if absorbed[w as usize] != NO {
            chans.raw(rank, absorbed[w as usize])
        } else {
            chans.raw(rank, w)
        };
        if rc != chans.raw(rank, o) || conns.between(p, rank, chans, o, pw, pos[o as usize]) {
            continue;
        }
        partner[w as usize] = o;
        partner[o as usize] = w;
        dead[w as usize] = reduce
            && readers[w as usize] == 1
            && (overwritten[w as usize] == src.cnt || src.buf == MBuf::S);
    }
    Fusion {
        mops,
        partner,
        dead,
        moved,
        absorbed,
        hazards,
    }
}

/// Dependencies the XML's buffers need beyond the IR's: in place, input and output are one
/// buffer, so a write to `o[x]` may now conflict with a read of `i[x]` that the IR never
/// ordered. Per op, in the global order: the last writer of every slot it touches and the
/// readers since then of every slot it writes (as `lower::builder` derives the IR's). These
/// edges point forwards in the global order, so they cannot make a cycle; receives keep their
/// store here even if fused later into `rrs`, which only makes the order stricter.
fn hazards(mops: &[MOp], ops: &[u32], at: &[u32; 3], total: usize) -> Vec<Vec<u32>> {
    let mut out = vec![Vec::new(); mops.len()];
    let mut writer = vec![NO; total];
    let mut readers: Vec<Vec<u32>> = vec![Vec::new(); total];
    for &o in ops {
        let (rd, wr) = match mops[o as usize] {
            MOp::Dropped => continue,
            MOp::Send { src, .. } => ([Some(src), None], None),
            MOp::Recv { dst, .. } => ([None, None], Some(dst)),
            MOp::RecvReduce { src, dst, .. } => ([Some(src), Some(dst)], Some(dst)),
            MOp::Copy { src, dst } => ([Some(src), None], Some(dst)),
            MOp::Reduce { src, dst } => ([Some(dst), Some(src)], Some(dst)),
        };
        let deps = &mut out[o as usize];
        for s in rd.into_iter().flatten().chain(wr) {
            for slot in slots(s, at) {
                if writer[slot] != NO && writer[slot] != o {
                    deps.push(writer[slot]);
                }
            }
        }
        if let Some(w) = wr {
            for slot in slots(w, at) {
                deps.extend(readers[slot].drain(..).filter(|r| *r != o));
                writer[slot] = o;
            }
        }
        for s in rd.into_iter().flatten() {
            for slot in slots(s, at) {
                readers[slot].push(o);
            }
        }
        deps.sort_unstable();
        deps.dedup();
    }
    out
}
