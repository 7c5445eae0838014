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

const NONE: u32 = u32::MAX;

/// Runs every process's ops in program order, for graphs whose local edges all point forward
/// in program order (op `g` waits only on ops before it in its own process): then running a
/// process's ops one after another meets every local edge, and only message edges can stop a
/// process. `base[p]..base[p + 1]` are process `p`'s ops (global numbers); `waits(p, g)` is the
/// op of another process that op `g` of process `p` waits for (a receive's send) and that op's
/// process, or `(u32::MAX, _)`. `visit(p, g)` is called once per op run, in a topological order.
///
/// A process runs until its next op waits for an op that has not run; it then waits on that
/// op's process, which wakes it once it has run past that op. No per-op tables are built,
/// which is what makes this cheaper than [`sweep`] on programs of millions of ops. Returns the
/// number of ops run: less than the total when program order deadlocks, which can happen even
/// when the graph has another topological order (so callers fall back to [`sweep`]).
pub fn program_order(
    base: &[u32],
    mut waits: impl FnMut(u32, u32) -> (u32, u32),
    mut visit: impl FnMut(u32, u32),
) -> usize {
    let n = base.len().saturating_sub(1);
    let mut pc: Vec<u32> = base[..n].to_vec();
    // Per process: the op it waits for, and the list of processes waiting on it.
    let mut awaited = vec![NONE; n];
    let mut head = vec![NONE; n];
    let mut next = vec![NONE; n];
    let mut ready: std::collections::VecDeque<u32> = (0..n as u32).collect();
    let mut ran = 0;
    while let Some(p) = ready.pop_front() {
        let p = p as usize;
        let end = base[p + 1];
        let mut g = pc[p];
        while g < end {
            let (w, q) = waits(p as u32, g);
            if w != NONE {
                let q = q as usize;
                if q == p || q >= n || pc[q] <= w {
                    if q != p {
                        awaited[p] = w;
                        next[p] = head[q];
                        head[q] = p as u32;
                    }
                    break;
                }
            }
            visit(p as u32, g);
            ran += 1;
            g += 1;
            pc[p] = g;
        }
        // Wake the waiters whose op has now run; the others keep waiting.
        let mut w = std::mem::replace(&mut head[p], NONE);
        while w != NONE {
            let after = next[w as usize];
            if pc[p] > awaited[w as usize] {
                ready.push_back(w);
            } else {
                next[w as usize] = head[p];
                head[p] = w;
            }
            w = after;
        }
    }
    ran
}

/// Kahn's algorithm with one FIFO queue over a program's ops: `base[p]..base[p + 1]` are
/// process `p`'s ops (global numbers), `p.procs[p].ops[o].deps` its local edges, and
/// `send_of[g]` the send a receive `g` waits for (`u32::MAX` for none). Successors are visited
/// in the order local dependencies first, then the message, per op. Returns the order and the
/// in-degrees left over: the order is complete (every op) unless there is a cycle, and then the
/// ops with a positive in-degree left are the blocked ones. Simple and exact, for callers that
/// need the queue's order itself (the MSCCL lowering) or run once on a failure path.
pub fn fifo_order(p: &super::Program, base: &[u32], send_of: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let total = base.last().copied().unwrap_or(0) as usize;
    let mut indeg = vec![0u32; total];
    let mut start = vec![0u32; total + 1];
    let each = |f: &mut dyn FnMut(u32, u32)| {
        for (pi, proc) in p.procs.iter().enumerate() {
            let b = base[pi];
            for (oi, op) in proc.ops.iter().enumerate() {
                let me = b + oi as u32;
                for d in &op.deps {
                    f(b + d, me);
                }
                let s = send_of[me as usize];
                if s != NONE {
                    f(s, me);
                }
            }
        }
    };
    // Successor lists in CSR form.
    each(&mut |from, to| {
        start[from as usize + 1] += 1;
        indeg[to as usize] += 1;
    });
    for k in 0..total {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    let mut succ = vec![0u32; start[total] as usize];
    each(&mut |from, to| {
        succ[fill[from as usize] as usize] = to;
        fill[from as usize] += 1;
    });
    let mut queue: std::collections::VecDeque<u32> = (0..total as u32)
        .filter(|g| indeg[*g as usize] == 0)
        .collect();
    let mut order = Vec::with_capacity(total);
    while let Some(g) = queue.pop_front() {
        order.push(g);
        for &s in &succ[start[g as usize] as usize..start[g as usize + 1] as usize] {
            indeg[s as usize] -= 1;
            if indeg[s as usize] == 0 {
                queue.push_back(s);
            }
        }
    }
    (order, indeg)
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

    /// The same two processes in program order (2 waits for 3, 4 for 1): every op runs after
    /// what it waits for; a message 5 -> 0 deadlocks them.
    #[test]
    fn program_order_runs_and_stops() {
        let base = [0, 3, 6];
        let run = |waits: &dyn Fn(u32) -> u32| {
            let mut seen = Vec::new();
            let n = program_order(
                &base,
                |_, g| (waits(g), u32::from(waits(g) >= 3)),
                |_, g| seen.push(g),
            );
            (n, seen)
        };
        let (n, seen) = run(&|g| match g {
            4 => 1,
            2 => 3,
            _ => NONE,
        });
        assert_eq!(n, 6);
        let pos = |g: u32| seen.iter().position(|x| *x == g).unwrap();
        for (a, b) in [(0, 1), (1, 2), (3, 4), (4, 5), (1, 4), (3, 2)] {
            assert!(pos(a) < pos(b), "{a} before {b} in {seen:?}");
        }
        let (n, seen) = run(&|g| match g {
            4 => 1,
            2 => 3,
            0 => 5,
            _ => NONE,
        });
        assert_eq!((n, seen), (1, vec![3]));
        // Waiting across three processes, woken in a chain.
        let base = [0, 1, 2, 3];
        let mut seen = Vec::new();
        let n = program_order(
            &base,
            |_, g| if g < 2 { (g + 1, g + 1) } else { (NONE, 0) },
            |_, g| seen.push(g),
        );
        assert_eq!((n, seen), (3, vec![2, 1, 0]));
    }
}
