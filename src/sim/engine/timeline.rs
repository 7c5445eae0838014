//! The optional per-op timeline (for traces): recording an op's [`OpSpan`] when it runs, and
//! completing a rendezvous send's span when its receive matches it.

use crate::sim::OpSpan;

pub(super) fn record(timeline: &mut Option<Vec<Vec<Option<OpSpan>>>>, h: u32, i: u32, x: OpSpan) {
    if let Some(t) = timeline.as_mut() {
        t[h as usize][i as usize] = Some(x);
    }
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
pub(super) fn complete_send(
    timeline: &mut Option<Vec<Vec<Option<OpSpan>>>>,
    h: u32,
    i: u32,
    t: u64,
) {
    if let Some(x) = timeline
        .as_mut()
        .and_then(|tl| tl[h as usize][i as usize].as_mut())
    {
        x.completed = t;
    }
}
