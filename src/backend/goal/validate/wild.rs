//! Step 2 of the validator for schedules with wildcards (a recv `from -1` or `tag -1`, or a
//! send `tag -1`): only the problems no timing can avoid.
//!
//! With a wildcard, which message a receive takes depends on the order messages arrive and
//! receives are posted, and that order depends on the LogGP parameters: a receive `from -1`
//! takes whichever compatible message reaches its rank first. The untimed run of
//! [`super::execution`] fixes one order, so on such a schedule it can pair a wildcard with a
//! message LogGOPSim would give to another receive, and report a deadlock or an unmatched
//! message that a real run never meets. Here only conditions every completed run must satisfy
//! are checked, so nothing is reported for a schedule that LogGOPSim runs to the end under some
//! parameters; whether it does under given ones is the simulator's to say (`collc sim` reports
//! the queues it ends with, E0038, as LogGOPSim prints them):
//!
//! - every receive has at least one compatible message sent to its rank, and every message at
//!   least one compatible receive on its destination (a run that ends with empty queues pairs
//!   each with one);
//! - each rank posts as many receives as messages are sent to it (the pairing is one to one);
//! - no op is on a cycle of dependencies within its rank (such ops never start, whatever the
//!   matching).
//!
//! Everything is linear in the size of the schedule (hash sets per rank).

use super::{At, MAX_PROBLEMS, Problem, problem, show, who};
use crate::backend::goal::{ANY_SOURCE, ANY_TAG, GoalRank, GoalSchedule, OpKind};
use rustc_hash::FxHashSet;

/// True when some op of `s` uses a wildcard, so that matching can depend on timing.
pub fn has_wildcards(s: &GoalSchedule) -> bool {
    s.ranks.iter().flat_map(|r| &r.ops).any(|op| match op.kind {
        OpKind::Send { tag, .. } => tag == ANY_TAG,
        OpKind::Recv { from, tag, .. } => from == ANY_SOURCE || tag == ANY_TAG,
        OpKind::Calc { .. } => false,
    })
}

/// The messages sent to one rank, indexed for "is any of them compatible with this recv".
#[derive(Default)]
struct Incoming {
    /// (source, tag) of messages with a tag.
    exact: FxHashSet<(u32, u32)>,
    /// Sources of messages sent with `tag -1`.
    any_tag: FxHashSet<u32>,
    /// Sources of all messages.
    sources: FxHashSet<u32>,
    /// Tags of messages with a tag.
    tags: FxHashSet<u32>,
    /// Some message was sent with `tag -1`.
    some_any_tag: bool,
    count: usize,
}

impl Incoming {
    fn add(&mut self, src: u32, tag: u32) {
        self.count += 1;
        self.sources.insert(src);
        if tag == ANY_TAG {
            self.any_tag.insert(src);
            self.some_any_tag = true;
        } else {
            self.exact.insert((src, tag));
            self.tags.insert(tag);
        }
    }

    fn matches(&self, from: u32, tag: u32) -> bool {
        match (from == ANY_SOURCE, tag == ANY_TAG) {
            (true, true) => self.count > 0,
            (true, false) => self.some_any_tag || self.tags.contains(&tag),
            (false, true) => self.sources.contains(&from),
            (false, false) => self.exact.contains(&(from, tag)) || self.any_tag.contains(&from),
        }
    }
}

/// The receives one rank posts, indexed for "is any of them compatible with this message".
#[derive(Default)]
struct Posted {
    /// (source, tag) of receives naming both.
    exact: FxHashSet<(u32, u32)>,
    /// Sources of receives with `tag -1`.
    any_tag: FxHashSet<u32>,
    /// Tags of receives `from -1`.
    any_source: FxHashSet<u32>,
    /// Sources named by any receive.
    sources: FxHashSet<u32>,
    /// Some receive is `from -1` (any tag).
    some_any_source: bool,
    /// Some receive is `from -1 tag -1`.
    any_any: bool,
    count: usize,
}

impl Posted {
    fn add(&mut self, from: u32, tag: u32) {
        self.count += 1;
        match (from == ANY_SOURCE, tag == ANY_TAG) {
            (true, true) => {
                self.any_any = true;
                self.some_any_source = true;
            }
            (true, false) => {
                self.any_source.insert(tag);
                self.some_any_source = true;
            }
            (false, true) => {
                self.any_tag.insert(from);
                self.sources.insert(from);
            }
            (false, false) => {
                self.exact.insert((from, tag));
                self.sources.insert(from);
            }
        }
    }

    fn matches(&self, src: u32, tag: u32) -> bool {
        if tag == ANY_TAG {
            return self.some_any_source || self.sources.contains(&src);
        }
        self.any_any
            || self.exact.contains(&(src, tag))
            || self.any_tag.contains(&src)
            || self.any_source.contains(&tag)
    }
}

/// The problems of a schedule with wildcards that every run has; see the module doc.
pub(in crate::backend::goal) fn certain(s: &GoalSchedule) -> Vec<Problem> {
    let n = s.ranks.len();
    let mut incoming: Vec<Incoming> = (0..n).map(|_| Incoming::default()).collect();
    let mut posted: Vec<Posted> = (0..n).map(|_| Posted::default()).collect();
    for (r, rank) in s.ranks.iter().enumerate() {
        for op in &rank.ops {
            match op.kind {
                OpKind::Send { to, tag, .. } => incoming[to as usize].add(r as u32, tag),
                OpKind::Recv { from, tag, .. } => posted[r].add(from, tag),
                OpKind::Calc { .. } => {}
            }
        }
    }
    let mut out = Vec::new();
    for (r, rank) in s.ranks.iter().enumerate() {
        let r32 = r as u32;
        let before = out.len();
        for (i, op) in rank.ops.iter().enumerate() {
            let i = i as u32;
            match op.kind {
                OpKind::Recv { from, tag, .. } if !incoming[r].matches(from, tag) => {
                    out.push(problem(
                        At::Op(r32, i),
                        format!(
                            "no send matches {}: nothing from {} with {} arrives",
                            who(s, r32, i),
                            if from == ANY_SOURCE {
                                "any rank".to_string()
                            } else {
                                format!("rank {from}")
                            },
                            if tag == ANY_TAG {
                                "any tag".to_string()
                            } else {
                                format!("tag {tag}")
                            }
                        ),
                        "never matched",
                        "add the matching send, or fix the source or tag (LogGOPSim would report a non-empty receive queue and no times)",
                    ));
                }
                OpKind::Send { to, tag, .. } if !posted[to as usize].matches(r32, tag) => {
                    out.push(problem(
                        At::Op(r32, i),
                        format!(
                            "no recv on rank {to} matches {} (tag {})",
                            who(s, r32, i),
                            show(tag, ANY_TAG)
                        ),
                        "never received",
                        "add a recv for this message on the destination, or fix its tag (LogGOPSim would report a non-empty unexpected queue and no times)",
                    ));
                }
                _ => {}
            }
        }
        let (recvs, msgs) = (posted[r].count, incoming[r].count);
        if out.len() == before && recvs != msgs {
            out.push(problem(
                At::Rank(r32),
                format!(
                    "rank {r} posts {recvs} receive{} but {msgs} message{} {} sent to it",
                    plural(recvs),
                    plural(msgs),
                    if msgs == 1 { "is" } else { "are" }
                ),
                "receives and messages cannot pair up",
                if recvs > msgs {
                    "every receive takes exactly one message: add the missing sends or remove receives (whatever the timing, LogGOPSim would end with a non-empty receive queue and no times)"
                } else {
                    "every message needs exactly one receive: add the missing receives or remove sends (whatever the timing, LogGOPSim would end with a non-empty unexpected queue and no times)"
                },
            ));
        }
        if let Some(i) = on_cycle(rank) {
            out.push(problem(
                At::Op(r32, i),
                format!("{} never runs: it is on a dependency cycle", who(s, r32, i)),
                "waits for itself",
                "remove a dependency of the cycle (LogGOPSim silently skips these ops and the times it prints are wrong)",
            ));
        }
        if out.len() >= MAX_PROBLEMS {
            break;
        }
    }
    out.sort_by_key(|p| p.at);
    out.truncate(MAX_PROBLEMS);
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// An op on a cycle of the rank's dependencies (`requires` and `irequires` alike: no op of a
/// cycle can start), if there is one.
fn on_cycle(rank: &GoalRank) -> Option<u32> {
    let m = rank.ops.len();
    let mut indeg = vec![0u32; m];
    let mut start = vec![0u32; m + 1];
    for d in &rank.deps {
        indeg[d.op as usize] += 1;
        start[d.on as usize + 1] += 1;
    }
    for i in 0..m {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut after = vec![0u32; rank.deps.len()];
    for d in &rank.deps {
        after[fill[d.on as usize] as usize] = d.op;
        fill[d.on as usize] += 1;
    }
    let mut ready: Vec<u32> = (0..m as u32).filter(|&i| indeg[i as usize] == 0).collect();
    let mut left = m;
    while let Some(i) = ready.pop() {
        left -= 1;
        for &x in &after[start[i as usize] as usize..start[i as usize + 1] as usize] {
            indeg[x as usize] -= 1;
            if indeg[x as usize] == 0 {
                ready.push(x);
            }
        }
    }
    if left == 0 {
        return None;
    }
    // Walk back along dependencies on ops that never became ready until an op repeats.
    let mut before: Vec<Option<u32>> = vec![None; m];
    for d in &rank.deps {
        if indeg[d.on as usize] > 0 && before[d.op as usize].is_none() {
            before[d.op as usize] = Some(d.on);
        }
    }
    let mut cur = (0..m as u32).find(|&i| indeg[i as usize] > 0)?;
    let mut seen = vec![false; m];
    while !seen[cur as usize] {
        seen[cur as usize] = true;
        cur = before[cur as usize]?;
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::goal::parse;
    use crate::diag::FileId;

    fn problems(text: &str) -> Vec<String> {
        match parse(FileId(0), text) {
            Ok(_) => Vec::new(),
            Err(d) => d.into_iter().map(|d| d.message).collect(),
        }
    }

    #[test]
    fn a_timing_dependent_pairing_is_not_rejected() {
        // The untimed run gives rank 2's message (two steps deep) to the wildcard first.
        let text = "num_ranks 3\nrank 0 {\na: recv 8b from -1 tag -1\nb: recv 8b from 2 tag 3\n}\nrank 1 {\nc: calc 1\nd: calc 1\ns: send 8b to 0 tag 1\nd requires c\ns requires d\n}\nrank 2 {\ne: calc 100000\nt: send 8b to 0 tag 3\nt requires e\n}\n";
        assert_eq!(problems(text), Vec::<String>::new());
    }

    #[test]
    fn certain_problems_are_reported() {
        let text = "num_ranks 2\nrank 0 {\nrecv 8b from -1 tag -1\nrecv 8b from -1 tag -1\n}\nrank 1 {\nsend 8b to 0 tag 4\n}\n";
        assert_eq!(
            problems(text),
            ["rank 0 posts 2 receives but 1 message is sent to it"]
        );
        let text = "num_ranks 2\nrank 0 {\nrecv 8b from -1 tag 5\nrecv 8b from 1 tag -1\n}\nrank 1 {\nsend 8b to 0 tag 4\nsend 8b to 0 tag 4\n}\n";
        assert_eq!(
            problems(text),
            ["no send matches op 0 of rank 0: nothing from any rank with tag 5 arrives"]
        );
        let text = "num_ranks 2\nrank 0 {\nrecv 8b from -1 tag -1\n}\nrank 1 {\na: send 8b to 0\nb: calc 1\na requires b\nb requires a\n}\n";
        assert_eq!(
            problems(text),
            ["`a` of rank 1 never runs: it is on a dependency cycle"]
        );
    }

    #[test]
    fn send_with_any_tag_matches_every_tag() {
        let mut p = Posted::default();
        p.add(3, 9);
        assert!(p.matches(3, ANY_TAG));
        assert!(!p.matches(4, ANY_TAG));
        assert!(!p.matches(3, 8));
        let mut i = Incoming::default();
        i.add(3, ANY_TAG);
        assert!(i.matches(3, 9));
        assert!(i.matches(ANY_SOURCE, 9));
        assert!(!i.matches(4, 9));
    }
}
