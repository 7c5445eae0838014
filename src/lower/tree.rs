//! Binomial trees for broadcast and reduce, as in MPICH's `MPIR_Bcast_binomial` and
//! `MPIR_Reduce_binomial`. Ranks are taken relative to the root, `v = (r - root) mod N`; the
//! parent of `v > 0` is `v - lowbit(v)`, its children are `v + 2^j` for every `2^j < lowbit(v)`
//! (every `2^j < N` for the root) with `v + 2^j < N`. The whole vector is one chunk.
//!
//! Broadcast: each rank receives the root's value into its output, then forwards it to its
//! children, farthest subtree first. Reduce: each rank adds its children's partial results to its
//! own value in increasing `2^j` order (a fixed order, so the root's result is one well-defined
//! combination tree), then sends the sum to its parent; non-roots accumulate in a scratch slot,
//! the root in its output. Tag 0 throughout: each (parent, child) pair exchanges one message.

use super::builder::Builder;
use crate::ir::{Buf, ProcId, Slice};

/// Real rank of root-relative rank `v`, and back.
fn real(v: u32, root: u32, n: u32) -> ProcId {
    ((u64::from(v) + u64::from(root)) % u64::from(n)) as ProcId
}

fn relative(r: u32, root: u32, n: u32) -> u32 {
    ((u64::from(r) + u64::from(n) - u64::from(root)) % u64::from(n)) as u32
}

/// Children of relative rank `v` in increasing distance.
fn children(v: u32, n: u32) -> Vec<u32> {
    let limit = if v == 0 {
        u64::from(n).next_power_of_two()
    } else {
        u64::from(v & v.wrapping_neg())
    };
    let mut out = Vec::new();
    let mut m = 1u64;
    while m < limit && u64::from(v) + m < u64::from(n) {
        out.push((u64::from(v) + m) as u32);
        m <<= 1;
    }
    out
}

pub(crate) fn broadcast(b: &mut Builder, root: u32) {
    let n = b.ranks();
    let out = Slice::one(Buf::Output, 0);
    for r in 0..n {
        let v = relative(r, root, n);
        let src = if v == 0 {
            Slice::one(Buf::Input, 0)
        } else {
            let parent = real(v - (v & v.wrapping_neg()), root, n);
            b.recv(r, parent, out, 0);
            out
        };
        for c in children(v, n).into_iter().rev() {
            b.send(r, real(c, root, n), src, 0);
        }
        if v == 0 {
            b.copy(r, out, src);
        }
    }
}

pub(crate) fn reduce(b: &mut Builder, root: u32) {
    let n = b.ranks();
    for r in 0..n {
        let v = relative(r, root, n);
        let kids = children(v, n);
        let acc = if v == 0 {
            Slice::one(Buf::Output, 0)
        } else {
            Slice::one(Buf::Scratch, 0)
        };
        let mut val = Slice::one(Buf::Input, 0);
        if !kids.is_empty() || v == 0 {
            b.copy(r, acc, val);
            val = acc;
        }
        for c in kids {
            b.recv_reduce(r, real(c, root, n), acc, 0);
        }
        if v > 0 {
            let parent = real(v - (v & v.wrapping_neg()), root, n);
            b.send(r, parent, val, 0);
        }
    }
}
