//! Ring schedules: reduce-scatter, allgather, and allreduce as reduce-scatter then allgather
//! (the bandwidth-optimal baseline beside recursive multiplying and ForestColl); barrier is a
//! zero-byte ring allreduce. The ring order is rank order: rank `r` sends to `r + 1` and receives
//! from `r - 1` (mod N).
//!
//! Reduce-scatter: chunk `c` starts at rank `c + 1` and travels `c + 1 -> c + 2 -> ... -> c`;
//! at step `k` (0 <= k < N-1) rank `r` sends its partial sum of chunk `r - 1 - k` and receives
//! and adds chunk `r - 2 - k`, so after N-1 steps rank `c` alone holds chunk `c` complete, as
//! `((x[c+1] + x[c+2]) + ...) + x[c]`. Allgather: at step `k` rank `r` forwards chunk `r - k`
//! and receives chunk `r - 1 - k`. Allreduce runs both on N chunks of the vector; each final
//! chunk is produced by one rank and copied to the others, so every rank holds the same term.
//!
//! Tags number the steps of the whole schedule (reduce-scatter steps, then allgather steps).

use super::builder::Builder;
use crate::ir::{Buf, ProcId, Slice};

fn md(x: i64, n: u32) -> u32 {
    x.rem_euclid(i64::from(n)) as u32
}

/// Allreduce (or barrier) with `chunks_per_part = N`: out[c] accumulates chunk c.
pub(crate) fn allreduce(b: &mut Builder) {
    let n = b.ranks();
    if n == 1 {
        b.copy(0, Slice::one(Buf::Output, 0), Slice::one(Buf::Input, 0));
        return;
    }
    for r in 0..n {
        let (right, left) = ((r + 1) % n, (r + n - 1) % n);
        let ri = i64::from(r);
        // Reduce-scatter.
        for k in 0..n - 1 {
            let ki = i64::from(k);
            let send = md(ri - 1 - ki, n);
            let src = if k == 0 {
                Slice::one(Buf::Input, send)
            } else {
                Slice::one(Buf::Output, send)
            };
            b.send(r, right, src, k);
            let c = Slice::one(Buf::Output, md(ri - 2 - ki, n));
            b.copy(r, c, Slice::one(Buf::Input, c.start));
            b.recv_reduce(r, left, c, k);
        }
        // Allgather.
        for k in 0..n - 1 {
            let ki = i64::from(k);
            let tag = n - 1 + k;
            b.send(r, right, Slice::one(Buf::Output, md(ri - ki, n)), tag);
            b.recv(r, left, Slice::one(Buf::Output, md(ri - 1 - ki, n)), tag);
        }
    }
}

/// Allgather: out[q] is rank q's part.
pub(crate) fn allgather(b: &mut Builder) {
    let n = b.ranks();
    for r in 0..n {
        let (right, left) = ((r + 1) % n, (r + n - 1) % n);
        let ri = i64::from(r);
        b.copy(r, Slice::one(Buf::Output, r), Slice::one(Buf::Input, 0));
        for k in 0..n - 1 {
            let ki = i64::from(k);
            let src = if k == 0 {
                Slice::one(Buf::Input, 0)
            } else {
                Slice::one(Buf::Output, md(ri - ki, n))
            };
            b.send(r, right, src, k);
            b.recv(r, left, Slice::one(Buf::Output, md(ri - 1 - ki, n)), k);
        }
    }
}

/// Reduce-scatter: in[q] is the part rank q ends with; partial sums alternate between two
/// scratch slots, the last step accumulates into out[0].
pub(crate) fn reduce_scatter(b: &mut Builder) {
    let n = b.ranks();
    let out = Slice::one(Buf::Output, 0);
    if n == 1 {
        b.copy(0, out, Slice::one(Buf::Input, 0));
        return;
    }
    for r in 0..n {
        let (right, left): (ProcId, ProcId) = ((r + 1) % n, (r + n - 1) % n);
        let ri = i64::from(r);
        let mut prev = Slice::one(Buf::Input, md(ri - 1, n));
        for k in 0..n - 1 {
            b.send(r, right, prev, k);
            let c = md(ri - 2 - i64::from(k), n);
            let acc = if k == n - 2 {
                out
            } else {
                Slice::one(Buf::Scratch, k % 2)
            };
            b.copy(r, acc, Slice::one(Buf::Input, c));
            b.recv_reduce(r, left, acc, k);
            prev = acc;
        }
    }
}
