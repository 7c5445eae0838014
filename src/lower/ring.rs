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

use super::builder::Builder;
use crate::ir::{Buf, ProcId, Slice};

/// A ring over the ranks: position to rank, and rank to position.
pub(crate) struct Ring {
    order: Vec<ProcId>,
    pos: Vec<u32>,
}

impl Ring {
    /// The ring through `nodes` (rank r runs on node `nodes[r]`) in node order, ties by rank.
    pub(crate) fn by_nodes(nodes: &[usize]) -> Ring {
        let mut order: Vec<ProcId> = (0..nodes.len() as ProcId).collect();
        order.sort_by_key(|&r| (nodes[r as usize], r));
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

/// Allreduce (or barrier) with `chunks_per_part = N x slices`: out[c x slices + j] accumulates
/// slice j of chunk c.
pub(crate) fn allreduce(b: &mut Builder, ring: &Ring, slices: u32) {
    let n = b.ranks();
    let s = slices.max(1);
    if n == 1 {
        for j in 0..s {
            b.copy(0, Slice::one(Buf::Output, j), Slice::one(Buf::Input, j));
        }
        return;
    }
    let slot = |c: u32, j: u32| c * s + j;
    for r in 0..n {
        let (p, right, left) = ring.around(r);
        // Reduce-scatter.
        for k in 0..n - 1 {
            let ki = i64::from(k);
            let (send, recv) = (ring.wrap(p - 1 - ki), ring.wrap(p - 2 - ki));
            for j in 0..s {
                let buf = if k == 0 { Buf::Input } else { Buf::Output };
                b.send(r, right, Slice::one(buf, slot(send, j)), k * s + j);
                let c = Slice::one(Buf::Output, slot(recv, j));
                b.copy(r, c, Slice::one(Buf::Input, c.start));
                b.recv_reduce(r, left, c, k * s + j);
            }
        }
        // Allgather.
        for k in 0..n - 1 {
            let ki = i64::from(k);
            let (send, recv) = (ring.wrap(p - ki), ring.wrap(p - 1 - ki));
            let tag = (n - 1 + k) * s;
            for j in 0..s {
                b.send(r, right, Slice::one(Buf::Output, slot(send, j)), tag + j);
                b.recv(r, left, Slice::one(Buf::Output, slot(recv, j)), tag + j);
            }
        }
    }
}

/// Allgather: out[q] is rank q's part.
pub(crate) fn allgather(b: &mut Builder, ring: &Ring) {
    let n = b.ranks();
    for r in 0..n {
        let (p, right, left) = ring.around(r);
        b.copy(r, Slice::one(Buf::Output, r), Slice::one(Buf::Input, 0));
        for k in 0..n - 1 {
            let ki = i64::from(k);
            let src = if k == 0 {
                Slice::one(Buf::Input, 0)
            } else {
                Slice::one(Buf::Output, ring.at(p - ki))
            };
            b.send(r, right, src, k);
            b.recv(r, left, Slice::one(Buf::Output, ring.at(p - 1 - ki)), k);
        }
    }
}

/// Reduce-scatter: in[q] is the part rank q ends with; partial sums alternate between two
/// scratch slots, the last step accumulates into out[0].
pub(crate) fn reduce_scatter(b: &mut Builder, ring: &Ring) {
    let n = b.ranks();
    let out = Slice::one(Buf::Output, 0);
    if n == 1 {
        b.copy(0, out, Slice::one(Buf::Input, 0));
        return;
    }
    for r in 0..n {
        let (p, right, left) = ring.around(r);
        let mut prev = Slice::one(Buf::Input, ring.at(p - 1));
        for k in 0..n - 1 {
            b.send(r, right, prev, k);
            let c = ring.at(p - 2 - i64::from(k));
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
