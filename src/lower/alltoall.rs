//! All-to-all schedules: rank r's input block j goes to rank j's output block r.
//!
//! Layout: both buffers have one part per rank and one chunk per part (`chunks_per_part` 1), so
//! slot j of either buffer is block j.
//!
//! - **Pairwise, shifted** ([`pairwise`]): every rank copies its own block, then in step k
//!   (1 <= k < N) sends block r+k to rank r+k and receives block r-k from rank r-k, step k
//!   waiting for both messages of step k-1, as MPI implementations run their pairwise exchange
//!   (one `sendrecv` per step), so a rank talks to one peer at a time and the exchanges of a
//!   step form a permutation. **Concurrent**: the same messages with no order among them.
//! - **Bruck** ([`bruck`]; J. Bruck et al., "Efficient algorithms for all-to-all
//!   communications in multiport message-passing systems", IEEE TPDS 1997, with radix `k`):
//!   a rank rotates its input so that position j holds the block for rank r+j, then for every
//!   base-k digit position i and digit d in 1..k sends, packed into one message, every position
//!   whose i-th digit is d to rank r + d k^i, and receives the same positions from rank
//!   r - d k^i. A block at distance j moves by exactly j, so after ceil(log_k N) rounds
//!   position j holds the block from rank r-j, which the rank unrotates into its output. Each
//!   rank sends (k-1) ceil(log_k N) messages, at the price of sending most blocks several
//!   times: the family for small blocks. Positions are kept in scratch slots (N of them), the
//!   packed messages in two more areas; copies of contiguous runs of positions are one op.
//! - **Hierarchical** ([`hierarchical`]): the two-level exchange of GPU clusters (boxes as
//!   [`crate::net::boxes`] finds them), rail by rail. Inside a box, blocks go directly. For a
//!   block from box P to the rank of index j in box Q, P's rank on the same rail (index j mod
//!   |P|) gathers the blocks of every rank of P for that destination over the box's fast links
//!   and sends them in one message over the network; between two boxes of equal size that is
//!   one message per rail, from a GPU to the GPU of the same index, so every NIC carries its
//!   share and the network sees |Q| large messages per box pair instead of |P| |Q| small ones
//!   (MoE systems on GPU clusters exchange their tokens the same way). The blocks arrive in
//!   the destination's output in source order; when P's ranks are not consecutive they land in
//!   scratch first and are copied out run by run. No scatter inside the destination box is
//!   needed: the network message goes to its destination itself.
//!
//! Tags: a message's tag is unique per (sender, receiver) within the program, so the static
//! matching pairs them whatever the order of emission.

use super::builder::Builder;
use crate::ir::{Buf, OpId, ProcId, Slice};

/// Pairwise exchange; `concurrent` drops the order between steps.
pub(crate) fn pairwise(b: &mut Builder, concurrent: bool) {
    let n = b.ranks();
    for r in 0..n {
        b.copy(r, Slice::one(Buf::Output, r), Slice::one(Buf::Input, r));
        let mut prev: Vec<OpId> = Vec::new();
        for k in 1..n {
            let (to, from) = ((r + k) % n, (r + n - k) % n);
            let s = b.send(r, to, Slice::one(Buf::Input, to), 0);
            let v = b.recv(r, from, Slice::one(Buf::Output, from), 0);
            if !concurrent {
                for &p in &prev {
                    b.after(r, s, p);
                    b.after(r, v, p);
                }
                prev = vec![s, v];
            }
        }
    }
}

/// The rounds of Bruck's algorithm on `n` ranks with radix `k`: for each round, the distance
/// data moves and the positions (0..n) it moves, in increasing order.
pub(crate) fn bruck_rounds(n: u32, k: u32) -> Vec<(u32, Vec<u32>)> {
    let k = k.max(2);
    let mut out = Vec::new();
    let mut w: u64 = 1;
    while w < u64::from(n) {
        for d in 1..k {
            let shift = w * u64::from(d);
            if shift >= u64::from(n) {
                break;
            }
            let moved: Vec<u32> = (0..n)
                .filter(|&j| (u64::from(j) / w) % u64::from(k) == u64::from(d))
                .collect();
            if !moved.is_empty() {
                out.push((shift as u32, moved));
            }
        }
        w = w.saturating_mul(u64::from(k));
    }
    out
}

/// Maximal runs of consecutive values in an increasing list: (first, length).
fn runs(v: &[u32]) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for &x in v {
        match out.last_mut() {
            Some((s, l)) if *s + *l == x => *l += 1,
            _ => out.push((x, 1)),
        }
    }
    out
}

/// Ops of one rank of [`bruck`], at most (rank 0 rotates with one copy, the others with two):
/// the estimate's count.
pub(crate) fn bruck_ops_per_rank(n: u32, k: u32) -> u64 {
    let rounds: u64 = bruck_rounds(n, k)
        .iter()
        .map(|(_, moved)| 2 + 2 * runs(moved).len() as u64)
        .sum();
    // Rotation, the rounds' packing, messages and unpacking, and one unrotating copy per
    // position (position j goes to out[r - j]).
    2 + rounds + u64::from(n)
}

/// Bruck's all-to-all with radix `k`. Scratch: positions `0..N`, then the send area and the
/// receive area of the largest round.
pub(crate) fn bruck(b: &mut Builder, k: u32) {
    let n = b.ranks();
    let rounds = bruck_rounds(n, k);
    let widest = rounds
        .iter()
        .map(|(_, m)| m.len() as u32)
        .max()
        .unwrap_or(0);
    let (send_at, recv_at) = (n, n + widest);
    let pos = |j: u32, c: u32| Slice::new(Buf::Scratch, j, c);
    for r in 0..n {
        let mut rank = b.rank(r);
        // Rotate: position j holds input block r + j.
        let head = n - r;
        rank.copy(pos(0, head), Slice::new(Buf::Input, r, head));
        if r > 0 {
            rank.copy(pos(head, r), Slice::new(Buf::Input, 0, r));
        }
        for (tag, (shift, moved)) in rounds.iter().enumerate() {
            let rs = runs(moved);
            let mut at = 0;
            for &(first, len) in &rs {
                rank.copy(pos(send_at + at, len), pos(first, len));
                at += len;
            }
            let count = moved.len() as u32;
            let (to, from) = ((r + shift) % n, (r + n - shift) % n);
            rank.send(to, pos(send_at, count), tag as u32);
            rank.recv(from, pos(recv_at, count), tag as u32);
            let mut at = 0;
            for &(first, len) in &rs {
                rank.copy(pos(first, len), pos(recv_at + at, len));
                at += len;
            }
        }
        // Unrotate: position j now holds the block from rank r - j.
        for j in 0..n {
            let src = (r + n - j) % n;
            rank.copy(Slice::one(Buf::Output, src), pos(j, 1));
        }
    }
}

/// The boxes of the ranks, each a list of ranks in rank order, boxes in order of their first
/// rank; `of[r]` is rank r's box.
pub(crate) struct Boxes {
    pub(crate) members: Vec<Vec<ProcId>>,
    pub(crate) of: Vec<usize>,
}

impl Boxes {
    /// Groups ranks by `box_of_rank` (any labels).
    pub(crate) fn new(box_of_rank: &[u32]) -> Boxes {
        let mut members: Vec<Vec<ProcId>> = Vec::new();
        let mut label: Vec<u32> = Vec::new();
        let mut of = Vec::with_capacity(box_of_rank.len());
        for (r, &l) in box_of_rank.iter().enumerate() {
            let i = match label.iter().position(|&x| x == l) {
                Some(i) => i,
                None => {
                    label.push(l);
                    members.push(Vec::new());
                    label.len() - 1
                }
            };
            members[i].push(r as ProcId);
            of.push(i);
        }
        Boxes { members, of }
    }

    /// The rank of box `p` that forwards to a peer box's rank of index `j`: box `p`'s rank on
    /// the same rail (index `j`, modulo the box's size).
    fn forwarder(&self, p: usize, j: usize) -> ProcId {
        let m = &self.members[p];
        m[j % m.len()]
    }
}

/// The two-level all-to-all over `boxes`.
pub(crate) fn hierarchical(b: &mut Builder, boxes: &Boxes) {
    let n = b.ranks();
    let nb = boxes.members.len();
    let net_tag = n + 1;
    // Inside a box, directly.
    for r in 0..n {
        let p = boxes.of[r as usize];
        b.copy(r, Slice::one(Buf::Output, r), Slice::one(Buf::Input, r));
        for &o in &boxes.members[p] {
            if o != r {
                b.send(r, o, Slice::one(Buf::Input, o), 0);
                b.recv(r, o, Slice::one(Buf::Output, o), 0);
            }
        }
    }
    let mut scratch_at = vec![0u32; n as usize];
    for p in 0..nb {
        let from = &boxes.members[p];
        let sp = from.len() as u32;
        let pruns = runs(from);
        for (q, to) in boxes.members.iter().enumerate() {
            if p == q {
                continue;
            }
            for (j, &t) in to.iter().enumerate() {
                // Gather at the forwarder on t's rail: slot i holds the block of P's i-th rank.
                let f = boxes.forwarder(p, j);
                let at = scratch_at[f as usize];
                scratch_at[f as usize] += sp;
                for (i, &a) in from.iter().enumerate() {
                    let into = Slice::one(Buf::Scratch, at + i as u32);
                    let block = Slice::one(Buf::Input, t);
                    if a == f {
                        b.copy(f, into, block);
                    } else {
                        b.send(a, f, block, t + 1);
                        b.recv(f, a, into, t + 1);
                    }
                }
                // One message over the network, straight into t's output when P's ranks are
                // consecutive, else through scratch.
                b.send(f, t, Slice::new(Buf::Scratch, at, sp), net_tag);
                if let [(first, len)] = pruns[..] {
                    b.recv(t, f, Slice::new(Buf::Output, first, len), net_tag);
                } else {
                    let got = scratch_at[t as usize];
                    scratch_at[t as usize] += sp;
                    b.recv(t, f, Slice::new(Buf::Scratch, got, sp), net_tag);
                    let mut k = 0;
                    for &(first, len) in &pruns {
                        let src = Slice::new(Buf::Scratch, got + k, len);
                        b.copy(t, Slice::new(Buf::Output, first, len), src);
                        k += len;
                    }
                }
            }
        }
    }
}
