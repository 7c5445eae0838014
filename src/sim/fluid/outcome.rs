//! What a flow-level run reports: per-rank finish times, the collective's time, algbw and busbw
//! as nccl-tests defines them, link utilisation, and a timeline for `--trace`.

use crate::net::{LinkId, Net};
use crate::sema::model::CollectiveKind;
use serde_json::{Value, json};

/// One interval on the timeline: `pid` is the rank, `lane` a row within it.
#[derive(Debug, Clone, PartialEq)]
pub struct LaneSpan {
    pub pid: u32,
    pub lane: u32,
    pub name: String,
    pub start: f64,
    pub end: f64,
    /// Extra fields shown with the event (peer, bytes, ...), sorted by key.
    pub args: Vec<(String, Value)>,
}

/// Bytes per link, by link index (None: nothing crossed it), as [`FlowRun::link_bytes`] lists
/// them: the loaded links only, ascending (a link only 0-byte messages crossed is listed).
pub(super) fn loaded(bytes: Vec<Option<f64>>) -> Vec<(LinkId, f64)> {
    bytes
        .into_iter()
        .enumerate()
        .filter_map(|(l, b)| b.map(|b| (l as LinkId, b)))
        .collect()
}

/// A finished flow-level simulation.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowRun {
    /// Seconds at which each rank finished its part.
    pub finish: Vec<f64>,
    /// Bytes each loaded link carried, by link.
    pub link_bytes: Vec<(LinkId, f64)>,
    /// Messages (flows) simulated.
    pub messages: u64,
    /// The timeline, when asked for.
    pub spans: Option<Vec<LaneSpan>>,
}

impl FlowRun {
    /// The collective's time: the last rank's finish.
    pub fn seconds(&self) -> f64 {
        self.finish.iter().copied().fold(0.0, f64::max)
    }

    /// nccl-tests' algorithm bandwidth: the collective's size over its time (bytes/s).
    pub fn algbw(&self, bytes: u64) -> f64 {
        let t = self.seconds();
        if t > 0.0 { bytes as f64 / t } else { 0.0 }
    }

    /// nccl-tests' bus bandwidth: algbw times the collective's factor ([`bus_factor`]).
    pub fn busbw(&self, kind: CollectiveKind, n: usize, bytes: u64) -> f64 {
        self.algbw(bytes) * bus_factor(kind, n)
    }

    /// Per loaded link, its busy share of the run: bytes / (bandwidth x time), highest first
    /// (ties by link index).
    pub fn utilisation(&self, net: &Net) -> Vec<(LinkId, f64)> {
        let t = self.seconds();
        let mut u: Vec<(LinkId, f64)> = self
            .link_bytes
            .iter()
            .map(|&(l, b)| {
                let bw = net.links[l as usize].bw;
                (
                    l,
                    if t > 0.0 && bw > 0.0 {
                        b / (bw * t)
                    } else {
                        0.0
                    },
                )
            })
            .collect();
        u.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        u
    }

    /// The timeline as Chrome trace JSON (microseconds), sorted so the same run gives the same
    /// bytes; None when the run kept no timeline.
    pub fn chrome_json(&self) -> Option<String> {
        let spans = self.spans.as_ref()?;
        let mut sorted: Vec<&LaneSpan> = spans.iter().collect();
        sorted.sort_by(|a, b| {
            (a.pid, a.lane)
                .cmp(&(b.pid, b.lane))
                .then(a.start.total_cmp(&b.start))
                .then(a.name.cmp(&b.name))
        });
        let events: Vec<Value> = sorted
            .into_iter()
            .map(|s| {
                let args: serde_json::Map<String, Value> = s.args.iter().cloned().collect();
                json!({
                    "name": s.name,
                    "ph": "X",
                    "ts": s.start * 1e6,
                    "dur": (s.end - s.start).max(0.0) * 1e6,
                    "pid": s.pid,
                    "tid": s.lane,
                    "args": Value::Object(args),
                })
            })
            .collect();
        serde_json::to_string(&json!({"displayTimeUnit": "ns", "traceEvents": events})).ok()
    }
}

/// nccl-tests' bus-bandwidth factor (doc/PERFORMANCE.md there): allreduce 2(n-1)/n, allgather
/// reduce-scatter and all-to-all (n-1)/n, broadcast and reduce 1; barrier moves no data (0).
pub fn bus_factor(kind: CollectiveKind, n: usize) -> f64 {
    let n = n.max(1) as f64;
    match kind {
        CollectiveKind::Allreduce => 2.0 * (n - 1.0) / n,
        CollectiveKind::Allgather | CollectiveKind::ReduceScatter | CollectiveKind::Alltoall => {
            (n - 1.0) / n
        }
        CollectiveKind::Broadcast | CollectiveKind::Reduce => 1.0,
        CollectiveKind::Barrier => 0.0,
    }
}
