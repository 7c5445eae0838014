//! A topological traversal for graphs of many processes that mostly wait on themselves: the
//! ops of every process numbered contiguously, local dependency edges between ops of one
//! process and message edges between processes (the IR's programs, GOAL schedules).
//!
//! Kahn's algorithm with one queue jumps between processes at every step, and on programs of
//! millions of ops nearly every step is a cache miss. [`sweep`] runs in rounds instead: a round
//! takes the ops that messages made ready during the previous round, in increasing op number
//! (so memory is walked in one direction), and from each runs everything its process can then
//! run, depth first through local edges. Ops made ready by a message wait for the next round.
//! Any order it produces is a topological order; it differs from a queue's order only in which
//! of the ready ops goes first.

/// What a visited op reports: the ops whose dependency on it is now met.
pub struct Frontier<'a> {
    remaining: &'a mut [u32],
    local: Vec<u32>,
    woken: Vec<u32>,
}

impl Frontier<'_> {
    /// A local edge: `g` (same process) loses one dependency and runs next if none are left.
    pub fn local(&mut self, g: u32) {
        let c = &mut self.remaining[g as usize];
        *c -= 1;
        if *c == 0 {
            self.local.push(g);
        }
    }

    /// A message edge: `g` (another process) loses one dependency and, if none are left, runs
    /// in the next round.
    pub fn remote(&mut self, g: u32) {
        let c = &mut self.remaining[g as usize];
        *c -= 1;
        if *c == 0 {
            self.woken.push(g);
        }
    }
}

/// Visits ops in a topological order: `remaining[g]` is the number of unmet dependencies of op
/// `g` (left at zero for every op visited); `visit(g, frontier)` is called once per op whose
/// dependencies are all met and reports its edges. Returns the number of ops visited, which is
/// less than `remaining.len()` exactly when some ops wait on a cycle or on an op that never
/// runs.
pub fn sweep(remaining: &mut [u32], mut visit: impl FnMut(u32, &mut Frontier)) -> usize {
    let woken: Vec<u32> = (0..remaining.len() as u32)
        .filter(|g| remaining[*g as usize] == 0)
        .collect();
    let mut f = Frontier {
        remaining,
        local: Vec::new(),
        woken,
    };
    let mut round: Vec<u32> = Vec::new();
    let mut ran = 0;
    while !f.woken.is_empty() {
        std::mem::swap(&mut round, &mut f.woken);
        round.sort_unstable();
        for &g in &round {
            f.local.push(g);
            while let Some(x) = f.local.pop() {
                ran += 1;
                visit(x, &mut f);
            }
        }
        round.clear();
    }
    ran
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two processes of three ops: 0 -> 1 -> 2 and 3 -> 4 -> 5 locally, messages 1 -> 4 and
    /// 3 -> 2. Every visit comes after its predecessors; a cycle leaves ops unvisited.
    #[test]
    fn orders_and_detects_cycles() {
        let local: [&[u32]; 6] = [&[1], &[2], &[], &[4], &[5], &[]];
        let remote: [&[u32]; 6] = [&[], &[4], &[], &[2], &[], &[]];
        let run = |extra: Option<(u32, u32)>| {
            let mut remaining = vec![0, 1, 2, 0, 2, 1];
            if let Some((_, to)) = extra {
                remaining[to as usize] += 1;
            }
            let mut seen = Vec::new();
            let n = sweep(&mut remaining, |g, f| {
                seen.push(g);
                local[g as usize].iter().for_each(|x| f.local(*x));
                remote[g as usize].iter().for_each(|x| f.remote(*x));
                if let Some((_, to)) = extra.filter(|e| e.0 == g) {
                    f.remote(to);
                }
            });
            (n, seen)
        };
        let (n, seen) = run(None);
        assert_eq!(n, 6);
        let pos = |g: u32| seen.iter().position(|x| *x == g).unwrap();
        for (a, b) in [(0, 1), (1, 2), (3, 4), (4, 5), (1, 4), (3, 2)] {
            assert!(pos(a) < pos(b), "{a} before {b} in {seen:?}");
        }
        // A message 5 -> 0 closes a cycle 0 -> 1 -> 4 -> 5 -> 0: only op 3 can run.
        let (n, seen) = run(Some((5, 0)));
        assert_eq!((n, seen), (1, vec![3]));
    }
}
