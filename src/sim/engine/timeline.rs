//! The optional per-op timeline (for traces): recording an op's [`OpSpan`] when it runs, and
//! completing a rendezvous send's span when its receive matches it. While the loop runs, the
//! timeline is one entry per op in the graph's order and a span's `op` is that global index
//! (the loop knows no other); [`per_rank`] splits it into ranks and makes `op` the index in
//! the rank.

use crate::sim::OpSpan;

/// The timeline as the loop keeps it: per global op.
pub(super) type Flat = Option<Vec<Option<OpSpan>>>;

pub(super) fn record(timeline: &mut Flat, i: u32, x: OpSpan) {
    if let Some(t) = timeline.as_mut() {
        t[i as usize] = Some(x);
    }
}

/// `timeline` per rank (`base`: each rank's first op, then the op count), with `op` the index
/// in the rank.
pub(super) fn per_rank(timeline: Vec<Option<OpSpan>>, base: &[usize]) -> Vec<Vec<Option<OpSpan>>> {
    let mut it = timeline.into_iter();
    base.windows(2)
        .map(|w| {
            it.by_ref()
                .take(w[1] - w[0])
                .map(|x| {
                    x.map(|mut x| {
                        x.op -= w[0] as u32;
                        x
                    })
                })
                .collect()
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
pub(super) fn span(
    rank: u32,
    op: u32,
    cpu: u8,
    start: u64,
    end: u64,
    issued: u64,
    completed: u64,
) -> OpSpan {
    OpSpan {
        rank,
        op,
        cpu,
        start,
        end,
        issued,
        completed,
    }
}

/// A rendezvous send completes when its receive matches it.
pub(super) fn complete_send(timeline: &mut Flat, i: u32, t: u64) {
    if let Some(x) = timeline.as_mut().and_then(|tl| tl[i as usize].as_mut()) {
        x.completed = t;
    }
}
