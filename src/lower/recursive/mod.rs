//! Recursive doubling and recursive multiplying allreduce (and barrier, a zero-byte allreduce),
//! after ../shared/seeds/recursive-multiplying.txt: Section 2 and Algorithm 1 (MPICH's recursive
//! doubling with its non-power-of-two collapse/expand), Section 4 and Algorithms 2-6 (factor
//! stages `aB`, collapse `cTmB`, expand `eTmB`, merge `mRgGaB`, inverse merge `nRgGaB`; Fig. 5-7).
//! Recursive doubling is lowered as the stage list `[c(2r)m2, a2, ..., a2, e(2r)m2]` with
//! `r = N - 2^floor(log2 N)` (no collapse when `r = 0`), which is exactly Algorithm 1.
//! The whole vector is one chunk (`chunks_per_part = 1`): these are small-message algorithms.
//!
//! # Groups and the virtual-to-real rank mapping
//!
//! A stage list is lowered recursively over *groups*: a group is a list of real ranks indexed by
//! virtual rank (the top-level group is `[0, 1, ..., N-1]`). Following the grammar that
//! `sema::schedule::stage_problem` accepts, a group's stages are one of
//! - factors only, `aB1, ..., aBs` with `B1 * ... * Bs` = group size (Algorithm 2). Before stage
//!   `i` the *stage mask* is `M = B1 * ... * B(i-1)`; virtual rank `w` sits at position
//!   `pos = (w / M) mod Bi` of the stage group `{w - pos*M + j*M : 0 <= j < Bi}` (the paper's
//!   `block + (wid + (index+1)*mask) mod sbase` names the same peers);
//! - `cTmB <inner group> eTmB` (Algorithms 3, 4): virtual ranks below `T` form blocks of `B`;
//!   each block's last member `kB + B - 1` receives the others' values, reduces, and stands for
//!   the block in the inner group. Inner virtual rank `k < T/B` is real `m[kB + B - 1]`, inner
//!   virtual rank `T/B + j` is real `m[T + j]` (the paper's `peer*pbase + pbase - 1` and
//!   `peer + T/B*(B - 1)`). The expand sends the result from each block's last member back to
//!   the others;
//! - `mRgGaB aB2 ... nRgGaBs` (Algorithms 5, 6; Fig. 7): the first `R` virtual ranks are the
//!   remainder (as in Algorithm 5, `rank < remainder`), virtual rank `R + j` is inner virtual
//!   `j`. The inner ranks run the factor stages `B, B2, ..., Bs`. In the first stage remainder
//!   `i` also sends its value to every member of first-stage group `i mod G` (inner virtual ranks
//!   `gB .. gB + B`), which adds it to its group's sum. In the last stage the members of
//!   last-stage group `c = (i mod G) mod L` (`L = size / Bs` groups, members `c + jL`) also send
//!   their value from *before* that stage to remainder `i`, which combines them itself, so the
//!   remainder ranks finish in the same stage as everyone else.
//!
//! # Combination order
//!
//! Floating-point sums must be bitwise identical on every rank (the paper's consistency
//! requirement; `ir::verify` proves it, E0034). Every combination of a stage is a left fold in
//! a canonical order that does not depend on who computes it: a stage group's values in
//! position order, `((v0 + v1) + v2) + ...`, then (first merge stage) the attached remainders'
//! values in increasing remainder index; a collapse block's values in virtual order. A rank at
//! position `p > 0` receives the others into scratch slots, folds positions `0..p` into the
//! scratch slot of position 0, adds that to its own value (pairs are unordered, so
//! `acc + v_p` is the same term as `v_p + acc`) and continues with positions `p+1..`. By
//! induction over the stages every member of a stage block then holds the same term, so after
//! the last stage all ranks do; collapsed blocks are reduced by one rank and expanded by copies,
//! and a remainder folds the same last-stage values in the same order as the inner ranks.
//!
//! Messages are tagged with the index of their stage in the list; each (sender, receiver) pair
//! exchanges at most one message per stage, so matching is unambiguous. Dependencies come from
//! [`Builder`]'s hazard tracking: sends of a value finish before the value is overwritten, a
//! scratch slot is reused only after its last reader.

use super::builder::{Builder, RankMut};
use crate::ir::{Buf, ProcId, Slice};
use crate::sema::model::Stage;

mod fold;
use fold::{Src, fold, own_to_out};

/// Groups of at least this many ranks are emitted on all cores.
const PARALLEL_RANKS: usize = 1024;

const IN: Slice = Slice {
    buf: Buf::Input,
    start: 0,
    count: 1,
};
pub(super) const OUT: Slice = Slice {
    buf: Buf::Output,
    start: 0,
    count: 1,
};

/// Lowers a stage list (already accepted by `stage_problem`) into `b`, whose spec is an
/// allreduce or barrier with one chunk per part. Errors are internal (a list `stage_problem`
/// accepts but this lowering does not understand).
pub(crate) fn lower(b: &mut Builder, stages: &[Stage]) -> Result<(), String> {
    let n = b.ranks();
    let mut cx = Ctx {
        val: vec![IN; n as usize],
        slots: Vec::new(),
        b,
    };
    let tagged: Vec<(u32, Stage)> = stages
        .iter()
        .enumerate()
        .map(|(i, s)| (i as u32, *s))
        .collect();
    let all: Vec<ProcId> = (0..n).collect();
    cx.group(&all, &tagged)?;
    for p in 0..n {
        cx.own_to_out(p);
    }
    Ok(())
}

/// Remainder ranks of a merge, as seen by the factor stages of its inner group.
#[derive(Clone, Copy)]
struct Merge<'m> {
    rem: &'m [ProcId],
    groups: usize,
}

struct Ctx<'a> {
    b: &'a mut Builder,
    /// Where each rank's current value lives: its input until it first writes its output.
    val: Vec<Slice>,
    /// Reused by [`Ctx::fold`]: the slot each contribution is received into.
    slots: Vec<Slice>,
}

fn to_usize(x: u64) -> Result<usize, String> {
    usize::try_from(x).map_err(|_| format!("{x} does not fit this machine"))
}

impl Ctx<'_> {
    fn own_to_out(&mut self, p: ProcId) {
        own_to_out(&mut self.b.rank(p), &mut self.val[p as usize]);
    }

    fn send_val(&mut self, p: ProcId, peer: ProcId, tag: u32) {
        let v = self.val[p as usize];
        self.b.send(p, peer, v, tag);
    }

    fn fold(&mut self, p: ProcId, srcs: &[Src], tag: u32) {
        let mut h = self.b.rank(p);
        fold(
            &mut h,
            &mut self.val[p as usize],
            srcs,
            tag,
            &mut self.slots,
        );
    }

    /// Lowers the stages of the group `m` (real ranks by virtual rank); see the module doc.
    fn group(&mut self, m: &[ProcId], stages: &[(u32, Stage)]) -> Result<(), String> {
        let Some(&(tag, first)) = stages.first() else {
            return if m.len() <= 1 {
                Ok(())
            } else {
                Err(format!("a group of {} ranks has no stages", m.len()))
            };
        };
        match first {
            Stage::Factor { .. } => {
                let list = stages
                    .iter()
                    .map(|(t, s)| match s {
                        Stage::Factor { base } => Ok((*t, to_usize(*base)?)),
                        other => Err(format!("`{other}` follows factor stages in its group")),
                    })
                    .collect::<Result<Vec<_>, String>>()?;
                self.factors(m, &list, None)
            }
            Stage::Collapse { threshold, base } => {
                let Some((&(etag, last), inner)) = stages[1..].split_last() else {
                    return Err(format!("`{first}` is never expanded"));
                };
                if last != (Stage::Expand { threshold, base }) {
                    return Err(format!("`{first}` is closed by `{last}`"));
                }
                let (t, bb) = (to_usize(threshold)?, to_usize(base)?);
                if bb < 2 || t % bb != 0 || t > m.len() {
                    return Err(format!("`{first}` does not fit a group of {}", m.len()));
                }
                self.collapse(m, t, bb, (tag, etag), inner)
            }
            Stage::Merge {
                remainder,
                groups,
                base,
            } => {
                let Some((&(ntag, last), mid)) = stages[1..].split_last() else {
                    return Err(format!("`{first}` has no inverse merge"));
                };
                let Stage::InvMerge {
                    remainder: r2,
                    groups: g2,
                    base: b2,
                } = last
                else {
                    return Err(format!("`{first}` is closed by `{last}`"));
                };
                if (r2, g2) != (remainder, groups) {
                    return Err(format!("`{first}` is closed by `{last}`"));
                }
                let (r, g) = (to_usize(remainder)?, to_usize(groups)?);
                if r == 0 || r >= m.len() || g == 0 {
                    return Err(format!("`{first}` does not fit a group of {}", m.len()));
                }
                let mut list = vec![(tag, to_usize(base)?)];
                for (t, s) in mid {
                    match s {
                        Stage::Factor { base } => list.push((*t, to_usize(*base)?)),
                        other => return Err(format!("`{other}` inside the merge `{first}`")),
                    }
                }
                list.push((ntag, to_usize(b2)?));
                let (rem, inner) = m.split_at(r);
                if g > inner.len() / list[0].1 {
                    return Err(format!("`{first}` has more groups than fit"));
                }
                self.factors(inner, &list, Some(Merge { rem, groups: g }))
            }
            other => Err(format!("`{other}` opens a group")),
        }
    }

    /// Factor stages over the group `m` (Algorithm 2), with a merge's remainder ranks feeding
    /// the first stage and fed by the last (Algorithms 5, 6).
    fn factors(
        &mut self,
        m: &[ProcId],
        stages: &[(u32, usize)],
        merge: Option<Merge>,
    ) -> Result<(), String> {
        let product = stages
            .iter()
            .try_fold(1usize, |acc, (_, f)| acc.checked_mul(*f));
        if product != Some(m.len()) || stages.iter().any(|(_, f)| *f < 2) {
            return Err(format!(
                "the factors of a group of {} ranks multiply to {product:?}",
                m.len()
            ));
        }
        let n = m.len();
        let last = stages.len() - 1;
        let (last_tag, last_f) = stages[last];
        let last_mask = n / last_f;
        // Remainder ranks attached to each first-stage group (by `i mod G`) and fed by each
        // last-stage group (by `(i mod G) mod L`), in increasing remainder index.
        let (feeds_in, fed_by) = match merge {
            Some(mg) => (bucket(mg, mg.groups), bucket(mg, last_mask)),
            None => (Vec::new(), Vec::new()),
        };
        // Rank by rank: a rank's ops depend only on its own state, and each (sender, receiver,
        // tag) carries at most one message, so the order across ranks is free: large groups
        // are emitted in blocks of ranks on all cores (`crate::par`), which gives the same ops.
        let (feeds_in, fed_by) = (&feeds_in, &fed_by);
        let rank = |w: usize,
                    h: &mut RankMut,
                    val: &mut Slice,
                    srcs: &mut Vec<Src>,
                    slots: &mut Vec<Slice>| {
            let mut mask = 1usize;
            for (si, &(tag, f)) in stages.iter().enumerate() {
                let pos = (w / mask) % f;
                let base = w - pos * mask;
                for j in (0..f).filter(|j| *j != pos) {
                    h.send(m[base + j * mask], *val, tag);
                }
                if si == last {
                    for r in fed_by.get(w % mask).into_iter().flatten() {
                        h.send(*r, *val, tag);
                    }
                }
                srcs.clear();
                srcs.extend((0..f).map(|j| {
                    if j == pos {
                        Src::Own
                    } else {
                        Src::Peer(m[base + j * mask])
                    }
                }));
                if si == 0 {
                    let rs = feeds_in.get(w / f).into_iter().flatten();
                    srcs.extend(rs.map(|r| Src::Peer(*r)));
                }
                fold(h, val, srcs, tag, slots);
                mask *= f;
            }
        };
        let mut srcs: Vec<Src> = Vec::new();
        let handles = if n >= PARALLEL_RANKS {
            self.b.ranks_mut(m)
        } else {
            None
        };
        if let Some(handles) = handles {
            let mut vals: Vec<Option<&mut Slice>> = self.val.iter_mut().map(Some).collect();
            let mut items: Vec<(usize, RankMut, &mut Slice)> = handles
                .into_iter()
                .zip(m)
                .enumerate()
                .filter_map(|(w, (h, p))| Some((w, h, vals[*p as usize].take()?)))
                .collect();
            let block = crate::par::block_size(items.len(), 256);
            crate::par::for_blocks_mut(&mut items, block, |_, chunk| {
                let (mut srcs, mut slots) = (Vec::new(), Vec::new());
                for (w, h, val) in chunk {
                    rank(*w, h, val, &mut srcs, &mut slots);
                }
            });
        } else {
            for (w, &p) in m.iter().enumerate() {
                let mut h = self.b.rank(p);
                rank(
                    w,
                    &mut h,
                    &mut self.val[p as usize],
                    &mut srcs,
                    &mut self.slots,
                );
            }
        }
        if let Some(mg) = merge {
            let (tag, f) = stages[0];
            for (i, r) in mg.rem.iter().enumerate() {
                let g = i % mg.groups;
                for j in 0..f {
                    self.send_val(*r, m[g * f + j], tag);
                }
            }
            for (i, r) in mg.rem.iter().enumerate() {
                let c = (i % mg.groups) % last_mask;
                srcs.clear();
                srcs.extend((0..last_f).map(|j| Src::Peer(m[c + j * last_mask])));
                self.fold(*r, &srcs, last_tag);
            }
        }
        Ok(())
    }

    /// `cTmB <inner> eTmB` over the group `m` (Algorithms 3, 4).
    fn collapse(
        &mut self,
        m: &[ProcId],
        t: usize,
        bb: usize,
        (ctag, etag): (u32, u32),
        inner: &[(u32, Stage)],
    ) -> Result<(), String> {
        let blocks = t / bb;
        for k in 0..blocks {
            let lead = m[k * bb + bb - 1];
            for j in 0..bb - 1 {
                self.send_val(m[k * bb + j], lead, ctag);
            }
            let srcs: Vec<Src> = (0..bb)
                .map(|j| {
                    if j == bb - 1 {
                        Src::Own
                    } else {
                        Src::Peer(m[k * bb + j])
                    }
                })
                .collect();
            self.fold(lead, &srcs, ctag);
        }
        let sub: Vec<ProcId> = (0..blocks)
            .map(|k| m[k * bb + bb - 1])
            .chain(m[t..].iter().copied())
            .collect();
        self.group(&sub, inner)?;
        for k in 0..blocks {
            let lead = m[k * bb + bb - 1];
            for j in 0..bb - 1 {
                self.send_val(lead, m[k * bb + j], etag);
            }
            for j in 0..bb - 1 {
                let p = m[k * bb + j];
                self.b.recv(p, lead, OUT, etag);
                self.val[p as usize] = OUT;
            }
        }
        Ok(())
    }
}

/// The merge's remainder ranks by bucket `(i mod G) mod buckets`, in increasing index `i`.
fn bucket(mg: Merge, buckets: usize) -> Vec<Vec<ProcId>> {
    let mut out = vec![Vec::new(); buckets.max(1)];
    for (i, r) in mg.rem.iter().enumerate() {
        out[(i % mg.groups) % buckets.max(1)].push(*r);
    }
    out
}
