//! The dependency graph of a schedule as the loop consumes it: per-op [`Node`]s with their type
//! codes, dependents in compressed rows ([`Csr`]), remaining-dependency counts, and the [`State`]
//! that releases dependents when an op starts or completes.

use crate::backend::goal::{GoalSchedule, OpKind};

pub(super) const SEND: u8 = 1;
pub(super) const RECV: u8 = 2;
pub(super) const CALC: u8 = 3;
pub(super) const MSG: u8 = 4;

#[derive(Clone, Copy)]
pub(super) struct Node {
    pub(super) ty: u8,
    pub(super) cpu: u8,
    pub(super) nic: u8,
    pub(super) peer: u32,
    pub(super) tag: u32,
    pub(super) size: u64,
}
/// Dependents in compressed form: `list[start[i]..start[i + 1]]`.
struct Csr {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Csr {
    fn of(&self, i: usize) -> &[u32] {
        &self.list[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

pub(super) struct Graph {
    pub(super) base: Vec<usize>,
    pub(super) remaining: Vec<u32>,
    after_done: Csr,
    after_start: Csr,
}

pub(super) fn build(s: &GoalSchedule) -> (Vec<Node>, Graph) {
    let mut base = Vec::with_capacity(s.ranks.len() + 1);
    let mut nodes = Vec::with_capacity(s.op_count());
    for rank in &s.ranks {
        base.push(nodes.len());
        for op in &rank.ops {
            nodes.push(match op.kind {
                OpKind::Send { size, to, tag } => Node {
                    ty: SEND,
                    cpu: op.cpu,
                    nic: op.nic,
                    peer: to,
                    tag,
                    size,
                },
                OpKind::Recv { size, from, tag } => Node {
                    ty: RECV,
                    cpu: op.cpu,
                    nic: op.nic,
                    peer: from,
                    tag,
                    size,
                },
                OpKind::Calc { time } => Node {
                    ty: CALC,
                    cpu: op.cpu,
                    nic: op.nic,
                    peer: 0,
                    tag: 0,
                    size: time,
                },
            });
        }
    }
    base.push(nodes.len());
    let n = nodes.len();
    let crate::backend::goal::Dependents {
        remaining,
        done_start: c0,
        done_list: l0,
        start_start: c1,
        start_list: l1,
    } = crate::backend::goal::dependents(s, &base, n);
    let g = Graph {
        base,
        remaining,
        after_done: Csr {
            start: c0,
            list: l0,
        },
        after_start: Csr {
            start: c1,
            list: l1,
        },
    };
    (nodes, g)
}

pub(super) struct State<'g> {
    pub(super) g: &'g mut Graph,
    /// Ops that became executable, per host, in release order.
    pub(super) ready: Vec<Vec<u32>>,
    pub(super) check: Vec<u32>,
}

impl State<'_> {
    fn release(&mut self, host: u32, list_done: bool, node: u32) {
        let gi = self.g.base[host as usize] + node as usize;
        let csr = if list_done {
            &self.g.after_done
        } else {
            &self.g.after_start
        };
        for &x in csr.of(gi) {
            let c = &mut self.g.remaining[self.g.base[host as usize] + x as usize];
            *c -= 1;
            if *c == 0 {
                self.ready[host as usize].push(x);
            }
        }
        self.check.push(host);
    }
    pub(super) fn started(&mut self, host: u32, node: u32) {
        self.release(host, false, node);
    }
    pub(super) fn done(&mut self, host: u32, node: u32) {
        self.release(host, true, node);
    }
}
