//! One rank's combination step of recursive multiplying, in the canonical order the module doc of
//! [`super`] derives ("Combination order"): receive the peers' contributions and fold them with
//! the rank's own value as a left fold over stage-block positions, so every rank builds the same
//! term and the verifier proves bitwise-identical results.

use super::OUT;
use crate::ir::{Buf, ProcId, Slice};
use crate::lower::builder::RankMut;

/// One contribution to a fold: the rank's own current value or a value received from a peer.
#[derive(Clone, Copy)]
pub(super) enum Src {
    Own,
    Peer(ProcId),
}

/// Moves a rank's value (at `val`) into its output, unless it is there.
pub(super) fn own_to_out(h: &mut RankMut, val: &mut Slice) {
    if *val != OUT {
        h.copy(OUT, *val);
        *val = OUT;
    }
}

/// Receives the peers' contributions of `srcs` and combines all of `srcs` into the rank's
/// output as the left fold `((s0 + s1) + s2) + ...`, wherever the rank's own value (at `val`)
/// stands in the list. Without an own value, the fold starts from a value received straight
/// into the output. `slot` is scratch space for the slot each contribution is received into.
pub(super) fn fold(
    h: &mut RankMut,
    val: &mut Slice,
    srcs: &[Src],
    tag: u32,
    slot: &mut Vec<Slice>,
) {
    let own = srcs.iter().position(|s| matches!(s, Src::Own));
    slot.clear();
    let mut next = 0;
    for (k, s) in srcs.iter().enumerate() {
        match *s {
            Src::Own => slot.push(OUT),
            Src::Peer(q) => {
                let dst = if own.is_none() && k == 0 {
                    OUT
                } else {
                    next += 1;
                    Slice::one(Buf::Scratch, next - 1)
                };
                h.recv(q, dst, tag);
                slot.push(dst);
            }
        }
    }
    match own {
        None => {
            for s in &slot[1..] {
                h.reduce(OUT, *s);
            }
            *val = OUT;
        }
        Some(0) => {
            own_to_out(h, val);
            for s in &slot[1..] {
                h.reduce(OUT, *s);
            }
        }
        Some(pos) => {
            let acc = slot[0];
            for s in &slot[1..pos] {
                h.reduce(acc, *s);
            }
            own_to_out(h, val);
            h.reduce(OUT, acc);
            for s in &slot[pos + 1..] {
                h.reduce(OUT, *s);
            }
        }
    }
}
