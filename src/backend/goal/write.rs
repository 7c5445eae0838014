//! The GOAL text writer ([`write`]) and the labels it gives ops ([`output_labels`]).
//!
//! Ranks are written in blocks on all cores ([`crate::par`]), each block into its own buffer,
//! and the buffers joined in rank order: the text is the same whatever the threads do.

use super::label::{Label, put_num};
use super::{DepKind, GoalOp, GoalRank, GoalSchedule, OpKind};
use std::borrow::Cow;
use std::fmt::Write;

fn one_line(s: &str) -> String {
    s.replace(['\r', '\n'], " ")
}

/// The labels the writer uses: the op's own, or `l<index>` (made unique) for ops without.
pub fn output_labels(rank: &GoalRank) -> Vec<Cow<'_, str>> {
    if rank.ops.iter().all(|o| o.label.is_some()) {
        return rank
            .ops
            .iter()
            .map(|o| o.label.as_ref().map(Label::as_str).unwrap_or_default())
            .collect();
    }
    let taken: std::collections::HashSet<Cow<'_, str>> = rank
        .ops
        .iter()
        .filter_map(|o| o.label.as_ref().map(Label::as_str))
        .collect();
    let mut made = std::collections::HashSet::new();
    rank.ops
        .iter()
        .enumerate()
        .map(|(i, o)| match &o.label {
            Some(l) => l.as_str(),
            None => {
                let mut l = format!("l{i}");
                while taken.contains(l.as_str()) || made.contains(&l) {
                    l.push('_');
                }
                made.insert(l.clone());
                Cow::Owned(l)
            }
        })
        .collect()
}

/// The labels of one rank as written: straight from the ops when all have one (no string per
/// op), otherwise [`output_labels`].
enum Names<'a> {
    Own(&'a [GoalOp]),
    Made(Vec<Cow<'a, str>>),
}

impl Names<'_> {
    fn of(rank: &GoalRank) -> Names<'_> {
        if rank.ops.iter().all(|o| o.label.is_some()) {
            Names::Own(&rank.ops)
        } else {
            Names::Made(output_labels(rank))
        }
    }

    /// Appends the label of op `i`, if there is one.
    fn put(&self, i: usize, out: &mut Vec<u8>) {
        match self {
            Names::Own(ops) => {
                if let Some(l) = ops.get(i).and_then(|o| o.label.as_ref()) {
                    l.put(out);
                }
            }
            Names::Made(v) => {
                if let Some(l) = v.get(i) {
                    out.extend_from_slice(l.as_bytes());
                }
            }
        }
    }
}

/// A peer or tag, with LogGOPSim's `-1` for "any".
fn put_any(out: &mut Vec<u8>, v: u32) {
    if v == u32::MAX {
        out.extend_from_slice(b"-1");
    } else {
        put_num(out, u64::from(v));
    }
}

/// Writes GOAL text that `txt2bin` accepts: `num_ranks` first, every rank once in ascending
/// order, every op labelled (labels unique per rank), dependency lines after all ops of the
/// rank, comments on their own lines, sizes as `8b`. Deterministic.
pub fn write(s: &GoalSchedule) -> String {
    let head = head(s.comment.as_deref(), s.ranks.len());
    let n = s.ranks.len();
    let parts = crate::par::map_blocks(n, crate::par::block_size(n, 64), |range| {
        let lines: usize = s.ranks[range.clone()]
            .iter()
            .map(|r| r.ops.len() + r.deps.len())
            .sum();
        let mut out = Vec::with_capacity(64 * range.len() + 40 * lines);
        for r in range {
            write_rank(&mut out, r, &s.ranks[r]);
        }
        out
    });
    let mut out = Vec::with_capacity(head.len() + parts.iter().map(Vec::len).sum::<usize>());
    out.extend_from_slice(head.as_bytes());
    for p in &parts {
        out.extend_from_slice(p);
    }
    // Everything written is text (labels, comments) or ASCII, so this never replaces anything.
    match String::from_utf8(out) {
        Ok(t) => t,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// What comes before the first rank: the schedule's comment and `num_ranks`.
pub(super) fn head(comment: Option<&str>, ranks: usize) -> String {
    let mut head = String::new();
    if let Some(c) = comment {
        let _ = writeln!(head, "// {}", one_line(c));
    }
    let _ = writeln!(head, "num_ranks {ranks}");
    head
}

/// Appends rank `r`'s block.
pub(super) fn write_rank(out: &mut Vec<u8>, r: usize, rank: &GoalRank) {
    out.extend_from_slice(b"\nrank ");
    put_num(out, r as u64);
    out.extend_from_slice(b" {\n");
    if let Some(c) = &rank.comment {
        out.extend_from_slice(format!("// {}\n", one_line(c)).as_bytes());
    }
    let names = Names::of(rank);
    for (i, op) in rank.ops.iter().enumerate() {
        names.put(i, out);
        out.extend_from_slice(b": ");
        match op.kind {
            OpKind::Send { size, to, tag } => {
                out.extend_from_slice(b"send ");
                put_num(out, size);
                out.extend_from_slice(b"b to ");
                put_num(out, u64::from(to));
                out.extend_from_slice(b" tag ");
                put_any(out, tag);
            }
            OpKind::Recv { size, from, tag } => {
                out.extend_from_slice(b"recv ");
                put_num(out, size);
                out.extend_from_slice(b"b from ");
                put_any(out, from);
                out.extend_from_slice(b" tag ");
                put_any(out, tag);
            }
            OpKind::Calc { time } => {
                out.extend_from_slice(b"calc ");
                put_num(out, time);
            }
        }
        if op.cpu != 0 {
            out.extend_from_slice(b" cpu ");
            put_num(out, u64::from(op.cpu));
        }
        if op.nic != 0 && !matches!(op.kind, OpKind::Calc { .. }) {
            out.extend_from_slice(b" nic ");
            put_num(out, u64::from(op.nic));
        }
        out.push(b'\n');
    }
    for d in &rank.deps {
        let (a, b) = (d.op as usize, d.on as usize);
        if a >= rank.ops.len() || b >= rank.ops.len() {
            continue;
        }
        names.put(a, out);
        out.extend_from_slice(match d.kind {
            DepKind::Requires => &b" requires "[..],
            DepKind::IRequires => &b" irequires "[..],
        });
        names.put(b, out);
        out.push(b'\n');
    }
    out.extend_from_slice(b"}\n");
}
