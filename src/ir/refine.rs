//! Refining a program's chunks: the same schedule on a finer cut of the buffers.
//!
//! A runtime may accept a schedule only for some chunk counts (the MSCCL executor runs an XML
//! only when the call's element count is a multiple of its `nchunksperloop`, so a count with
//! an odd factor is never picked at the power-of-two sizes frameworks call). [`refine`] turns a
//! program cut into `cpp` chunks per part into one cut into `new` chunks per part, `new >= cpp`,
//! without changing what it does: old chunk `j` of a part becomes the new chunks
//! `f(j) .. f(j + 1)` with `f(j) = floor(j * new / cpp)`, so every old chunk is one or more
//! whole new chunks, the old chunks' sizes differ by at most one new chunk, and every op moves
//! the same data as before. Slot `k` of any buffer (scratch too) maps to `(k / cpp) * new +
//! f(k mod cpp)`; since a program of collc's lowerings keeps chunk `k mod cpp` in slot `k`
//! (the verifier's layout rule), contiguous slices stay contiguous and moves between slots of
//! one chunk stay moves between slots of one chunk.
//!
//! The price is balance: old chunks were equal, their images are `floor` or `ceil` of
//! `new / cpp` new chunks, so one chunk may carry up to [`refine_loss`] more than its share.
//! What a link carries is the sum over the pairs of ranks whose messages cross it, so no link's
//! load grows by more than the most grown pair's ([`load_growth`]): the bound on what the
//! schedule's bandwidth-bound time can lose, usually far below the single chunk's, since a pair
//! carries many chunks whose widths even out.

use super::{OpKind, Program, Slice};
use num_rational::Ratio;

/// Where old slot `k` starts in the refined buffer.
fn map_slot(k: u32, cpp: u32, new: u32) -> u32 {
    let (part, j) = (k / cpp, k % cpp);
    let f = (u64::from(j) * u64::from(new) / u64::from(cpp)) as u32;
    part * new + f
}

fn map_slice(s: Slice, cpp: u32, new: u32) -> Slice {
    let start = map_slot(s.start, cpp, new);
    let end = map_slot(s.start + s.count, cpp, new);
    Slice::new(s.buf, start, end - start)
}

/// `p` with `new` chunks per part instead of `p.spec.chunks_per_part`; see the module doc.
/// `new` must be at least the old count (each old chunk keeps at least one new chunk) and at
/// most the elements of a part (every new chunk holds an element); otherwise `p` unchanged.
pub fn refine(p: &Program, new: u32) -> Program {
    let cpp = p.spec.chunks_per_part.max(1);
    if new <= cpp || u64::from(new) > p.spec.part_elements {
        return p.clone();
    }
    let mut out = p.clone();
    out.spec.chunks_per_part = new;
    for proc in &mut out.procs {
        proc.scratch = map_slot(proc.scratch, cpp, new);
        for op in &mut proc.ops {
            let m = |s: Slice| map_slice(s, cpp, new);
            op.kind = match op.kind {
                OpKind::Send { peer, src, tag } => OpKind::Send {
                    peer,
                    src: m(src),
                    tag,
                },
                OpKind::Recv { peer, dst, tag } => OpKind::Recv {
                    peer,
                    dst: m(dst),
                    tag,
                },
                OpKind::RecvReduce { peer, dst, tag } => OpKind::RecvReduce {
                    peer,
                    dst: m(dst),
                    tag,
                },
                OpKind::Reduce { dst, src } => OpKind::Reduce {
                    dst: m(dst),
                    src: m(src),
                },
                OpKind::Copy { dst, src } => OpKind::Copy {
                    dst: m(dst),
                    src: m(src),
                },
            };
        }
    }
    out
}

/// The bandwidth a schedule can lose when refined from `cpp` to `new` chunks per part: its
/// largest old chunk grows from the mean `new / cpp` new chunks to `ceil(new / cpp)`, so at
/// most `1 - (new / cpp) / ceil(new / cpp)` (0 when `cpp` divides `new`).
pub fn refine_loss(cpp: u32, new: u32) -> Ratio<u64> {
    let (cpp, new) = (u64::from(cpp.max(1)), u64::from(new.max(1)));
    if new <= cpp || new % cpp == 0 {
        return Ratio::from_integer(0);
    }
    let widest = new.div_ceil(cpp);
    Ratio::from_integer(1) - Ratio::new(new, cpp * widest)
}

/// The largest factor by which refining `p` to `new` chunks per part grows the data one rank
/// sends another (over all its sends, in bytes of the declared call): no link's load grows by
/// more. 1 when nothing grows.
pub fn load_growth(p: &Program, new: u32) -> Ratio<u64> {
    let cpp = p.spec.chunks_per_part.max(1);
    if new <= cpp || new % cpp == 0 {
        return Ratio::from_integer(1);
    }
    let mut pairs: rustc_hash::FxHashMap<(u32, u32), (u64, u64)> = Default::default();
    for (pi, proc) in p.procs.iter().enumerate() {
        for op in &proc.ops {
            if let OpKind::Send { peer, src, .. } = op.kind {
                let e = pairs.entry((pi as u32, peer)).or_default();
                e.0 += u64::from(src.count);
                e.1 += u64::from(map_slice(src, cpp, new).count);
            }
        }
    }
    // Bytes per old slot are 1/cpp of a part, per new slot 1/new.
    pairs
        .values()
        .filter(|(old, _)| *old > 0)
        .map(|&(old, grown)| Ratio::new(grown * u64::from(cpp), old * u64::from(new)))
        .max()
        .unwrap_or(Ratio::from_integer(1))
        .max(Ratio::from_integer(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_map_to_whole_runs_of_new_chunks() {
        // 3 chunks per part into 8: widths 2, 3, 3 (f = 0, 2, 5, 8), then the next part.
        let starts: Vec<u32> = (0..7).map(|k| map_slot(k, 3, 8)).collect();
        assert_eq!(starts, vec![0, 2, 5, 8, 10, 13, 16]);
        let s = map_slice(Slice::new(super::super::Buf::Scratch, 2, 2), 3, 8);
        assert_eq!((s.start, s.count), (5, 5));
    }

    #[test]
    fn loss_is_the_widest_chunk_over_the_mean() {
        assert_eq!(refine_loss(4, 8), Ratio::from_integer(0));
        // 259 -> 512: widths 1 or 2, mean 512/259.
        assert_eq!(refine_loss(259, 512), Ratio::new(3, 259));
        // 48 -> 64: widths 1 or 2, mean 4/3: a third lost at worst.
        assert_eq!(refine_loss(48, 64), Ratio::new(1, 3));
    }
}
