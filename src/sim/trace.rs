//! Chrome trace JSON (the `traceEvents` format that Perfetto and chrome://tracing open) of a
//! simulated run: one complete event (`"ph": "X"`) per op that ran, nothing else, so the
//! number of events is the number of ops. `pid` is the GOAL rank, `tid` the CPU lane the op
//! used (LogGOPSim charges sends, receives and calcs to a CPU; NIC time is in the args).
//! A send spans its CPU overhead, a calc its duration, a receive the CPU time spent taking its
//! message in (LogGP) or the instant it completed (postal models). `args` hold the op's label,
//! peer, bytes, tag and the times it was issued and completed (ns). Times (`ts`, `dur`) are in
//! microseconds, the format's unit. Events are sorted by rank, lane, start and op index, and
//! keys are sorted, so the same run gives the same bytes.

use super::{SimResult, TimeUnit};
use crate::backend::goal::{ANY_SOURCE, ANY_TAG, GoalSchedule, OpKind, output_labels};
use serde_json::{Value, json};

fn us(unit: TimeUnit, ticks: u64) -> f64 {
    ticks as f64 * unit.fs_per_tick as f64 / 1e9
}

fn num(x: u32, any: u32) -> Value {
    if x == any { json!(-1) } else { json!(x) }
}

/// The trace of `r` (simulated with `trace: true`) as JSON text; None if it has no timeline.
pub fn chrome_json(s: &GoalSchedule, r: &SimResult, unit: TimeUnit) -> Option<String> {
    let timeline = r.timeline.as_ref()?;
    let mut events: Vec<((u32, u8, u64, u32), Value)> = Vec::new();
    for (rank, (ops, spans)) in s.ranks.iter().zip(timeline).enumerate() {
        let labels = output_labels(ops);
        for (i, (op, span)) in ops.ops.iter().zip(spans).enumerate() {
            let Some(x) = span else { continue };
            let mut args = serde_json::Map::new();
            args.insert("label".into(), json!(labels[i]));
            match op.kind {
                OpKind::Send { size, to, tag } => {
                    args.insert("to".into(), json!(to));
                    args.insert("bytes".into(), json!(size));
                    args.insert("tag".into(), num(tag, ANY_TAG));
                    args.insert("nic".into(), json!(op.nic));
                }
                OpKind::Recv { size, from, tag } => {
                    args.insert("from".into(), num(from, ANY_SOURCE));
                    args.insert("bytes".into(), json!(size));
                    args.insert("tag".into(), num(tag, ANY_TAG));
                    args.insert("nic".into(), json!(op.nic));
                }
                OpKind::Calc { time } => {
                    args.insert("time_ns".into(), json!(unit.ns(time)));
                }
            }
            args.insert("issued_ns".into(), json!(unit.ns(x.issued)));
            if x.completed != u64::MAX {
                args.insert("completed_ns".into(), json!(unit.ns(x.completed)));
            }
            let name = match op.kind {
                OpKind::Send { to, .. } => format!("send to {to}"),
                OpKind::Recv { from, .. } if from == ANY_SOURCE => "recv from any".into(),
                OpKind::Recv { from, .. } => format!("recv from {from}"),
                OpKind::Calc { .. } => "calc".into(),
            };
            let ev = json!({
                "name": name,
                "cat": op.kind.name(),
                "ph": "X",
                "ts": us(unit, x.start),
                "dur": us(unit, x.end.saturating_sub(x.start)),
                "pid": rank,
                "tid": x.cpu,
                "args": Value::Object(args),
            });
            events.push(((rank as u32, x.cpu, x.start, i as u32), ev));
        }
    }
    events.sort_by_key(|e| e.0);
    let doc = json!({
        "displayTimeUnit": "ns",
        "traceEvents": events.into_iter().map(|e| e.1).collect::<Vec<_>>(),
    });
    serde_json::to_string(&doc).ok()
}
