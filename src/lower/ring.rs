//! Ring schedules: reduce-scatter, allgather, and allreduce as reduce-scatter then allgather
//! (the bandwidth-optimal baseline beside recursive multiplying and ForestColl); barrier is a
//! zero-byte ring allreduce.
//!
//! The ring visits the ranks in the order of the topology nodes they run on (`order`, ring
//! position to rank): with participants declared in node order that is rank order, and when a
//! simulation places the ranks on hosts at random the ring still runs from host to host through
//! the network's order, so most neighbours share a switch, as NCCL builds its rings along the
//! topology. Position `p` sends to `p + 1` and receives from `p - 1` (mod N).
//!
//! Reduce-scatter: the chunk of the rank at position `c` starts at `c + 1` and travels
//! `c + 1 -> c + 2 -> ... -> c`; at step `k` (0 <= k < N-1) position `p` sends its partial sum
//! of chunk `p - 1 - k` and receives and adds chunk `p - 2 - k`, so after N-1 steps position `c`
//! alone holds its chunk complete, as `((x[c+1] + x[c+2]) + ...) + x[c]`. Allgather: at step `k`
//! position `p` forwards chunk `p - k` and receives chunk `p - 1 - k`. Allreduce runs both on N
//! chunks of the vector (chunk `c` reduced along the ring to position `c`); each final chunk is
//! produced by one rank and copied to the others, so every rank holds the same term.
//!
//! Slices (allreduce): with `slices: S` every chunk is cut into S slices sent as messages of
//! their own, and slice j of a step waits only for slice j of the step before, so a step's first
//! slice is on its way while the step before is still arriving (NCCL cuts its ring steps into
//! slices the same way). With one slice a step's whole chunk must arrive before the next step
//! starts, so every step pays the path's latency; with a few slices the ring runs at link rate.
//!
//! Tags number the messages of the whole schedule: step `k`'s slice `j` is `k x S + j`
//! (reduce-scatter steps, then allgather steps).
//!
//! Channels: with `C` rings (one per channel, [`crate::net::rings`]) every part is cut into
//! `C` chunks and ring `h` carries chunk `h` of every part on its own order of the ranks, as
//! NCCL splits a call over its channels. Slots: allgather and reduce-scatter part `q`'s chunk
//! `h` is slot `q x C + h` (scratch: `h + C x (k mod 2)`, so a scratch slot holds the chunk
//! its index names modulo `C`); allreduce ring `h`'s chunk `c` slice `j` is slot
//! `(h x N + c) x S + j`. Ring `h`'s tags follow ring `h - 1`'s. One channel is the ring above,
//! slot for slot.

use super::builder::Builder;
use crate::ir::{Buf, ProcId, Slice};

/// A ring over the ranks: position to rank, and rank to position.
pub(crate) struct Ring {
    order: Vec<ProcId>,
    pos: Vec<u32>,
}

impl Ring {
    /// The ring visiting the ranks in `order` (a permutation of `0..N`).
    pub(crate) fn from_order(order: Vec<ProcId>) -> Ring {
        let mut pos = vec![0; order.len()];
        for (p, &r) in order.iter().enumerate() {
            pos[r as usize] = p as u32;
        }
        Ring { order, pos }
    }

    fn len(&self) -> u32 {
        self.order.len() as u32
    }

    /// The rank at position `p` (mod N).
    fn at(&self, p: i64) -> ProcId {
        self.order[p.rem_euclid(i64::from(self.len())) as usize]
    }

    /// Position `p` mod N.
    fn wrap(&self, p: i64) -> u32 {
        p.rem_euclid(i64::from(self.len())) as u32
    }

    /// Rank r's position, its right and its left neighbour.
    fn around(&self, r: ProcId) -> (i64, ProcId, ProcId) {
        let p = i64::from(self.pos[r as usize]);
        (p, self.at(p + 1), self.at(p - 1))
    }
}

/// Allreduce (or barrier) with `chunks_per_part = C x N x slices`: out[(h x N + c) x slices + j]
/// accumulates slice j of ring h's chunk c.
pub(crate) fn allreduce(b: &mut Builder, rings: &[Ring], slices: u32) {
    let n = b.ranks();
    let s = slices.max(1);
    let per_ring = 2 * n.saturating_sub(1) * s;
    for (h, ring) in rings.iter().enumerate() {
        let h = h as u32;
        let slot = |c: u32, j: u32| (h * n + c) * s + j;
        if n == 1 {
            for j in 0..s {
                b.copy(
                    0,
                    Slice::one(Buf::Output, slot(0, j)),
                    Slice::one(Buf::Input, slot(0, j)),
                );
            }
            continue;
        }
        let tag0 = h * per_ring;
        for r in 0..n {
            let (p, right, left) = ring.around(r);
            // Reduce-scatter.
            for k in 0..n - 1 {
                let ki = i64::from(k);
                let (send, recv) = (ring.wrap(p - 1 - ki), ring.wrap(p - 2 - ki));
                for j in 0..s {
                    let buf = if k == 0 { Buf::Input } else { Buf::Output };
                    b.send(r, right, Slice::one(buf, slot(send, j)), tag0 + k * s + j);
                    let c = Slice::one(Buf::Output, slot(recv, j));
                    b.copy(r, c, Slice::one(Buf::Input, c.start));
                    b.recv_reduce(r, left, c, tag0 + k * s + j);
                }
            }
            // Allgather.
            for k in 0..n - 1 {
                let ki = i64::from(k);
                let (send, recv) = (ring.wrap(p - ki), ring.wrap(p - 1 - ki));
                let tag = tag0 + (n - 1 + k) * s;
                for j in 0..s {
                    b.send(r, right, Slice::one(Buf::Output, slot(send, j)), tag + j);
                    b.recv(r, left, Slice::one(Buf::Output, slot(recv, j)), tag + j);
                }
            }
        }
    }
}

/// Allgather: out[q x C + h] is chunk h of rank q's part, carried by ring h.
pub(crate) fn allgather(b: &mut Builder, rings: &[Ring]) {
    let n = b.ranks();
    let ch = rings.len() as u32;
    for (h, ring) in rings.iter().enumerate() {
        let h = h as u32;
        let out = |q: ProcId| Slice::one(Buf::Output, q * ch + h);
        let tag0 = h * n.saturating_sub(1);
        for r in 0..n {
            let (p, right, left) = ring.around(r);
            b.copy(r, out(r), Slice::one(Buf::Input, h));
            for k in 0..n - 1 {
                let ki = i64::from(k);
                let src = if k == 0 {
                    Slice::one(Buf::Input, h)
                } else {
                    out(ring.at(p - ki))
                };
                b.send(r, right, src, tag0 + k);
                b.recv(r, left, out(ring.at(p - 1 - ki)), tag0 + k);
            }
        }
    }
}

/// Reduce-scatter: in[q x C + h] is chunk h of the part rank q ends with, reduced along ring h;
/// partial sums alternate between two scratch slots per ring, the last step accumulates into
/// out[h].
pub(crate) fn reduce_scatter(b: &mut Builder, rings: &[Ring]) {
    let n = b.ranks();
    let ch = rings.len() as u32;
    for (h, ring) in rings.iter().enumerate() {
        let h = h as u32;
        let input = |q: ProcId| Slice::one(Buf::Input, q * ch + h);
        let out = Slice::one(Buf::Output, h);
        if n == 1 {
            b.copy(0, out, input(0));
            continue;
        }
        let tag0 = h * (n - 1);
        for r in 0..n {
            let (p, right, left) = ring.around(r);
            let mut prev = input(ring.at(p - 1));
            for k in 0..n - 1 {
                b.send(r, right, prev, tag0 + k);
                let c = ring.at(p - 2 - i64::from(k));
                let acc = if k == n - 2 {
                    out
                } else {
                    Slice::one(Buf::Scratch, h + ch * (k % 2))
                };
                b.copy(r, acc, input(c));
                b.recv_reduce(r, left, acc, tag0 + k);
                prev = acc;
            }
        }
    }
}
