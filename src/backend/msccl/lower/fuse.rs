//! Buffer mapping and fusion for one rank (steps 2 and 3 of [`super`]): which copies vanish,
//! which copies fold into a receive-reduce, and which sends fuse with the receive whose result
//! they forward (and whether that result must still be stored).
//!
//! A def-use pass over the rank's ops in the global order finds, per op, the op that wrote the
//! value it reads (the same in every order the dependencies allow: the program is race-free),
//! how many ops read each written value and whether it is overwritten later.

use super::{Layout, MOp, MSlice, NO, map_op};
use crate::backend::msccl::MBuf;
use crate::ir::Program;

pub(super) struct Fusion {
    pub mops: Vec<MOp>,
    /// For a receive and the send fused with it: each other's op id; `NO` otherwise.
    pub partner: Vec<u32>,
    /// For a fused receive-reduce: its store is dead (`rrs` instead of `rrcs`).
    pub dead: Vec<bool>,
}

fn slots(s: MSlice, at: &[u32; 3]) -> std::ops::Range<usize> {
    let b = at[s.buf as usize] as usize + s.off as usize;
    b..b + s.cnt as usize
}

/// `ops`: the rank's op ids in global order; `pos`: global positions indexed by op id.
pub(super) fn fuse(p: &Program, r: u32, ops: &[u32], pos: &[u32], l: &Layout) -> Fusion {
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
            if k == 0 && same != NO {
                let wd = reads_writes(&mops[same as usize]).1;
                if wd == Some(s) {
                    sole[o as usize] = same;
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
            .any(|d| *d != w && pos[*d as usize] > pw)
        {
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
    }
}
