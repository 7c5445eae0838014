//! The dependency graph of a schedule as the loop consumes it: per-op [`Node`]s with their type
//! codes, dependents in compressed rows with the remaining-dependency counts ([`Links`]), and
//! the [`State`] that releases dependents when an op starts or completes.

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
/// One op's place in the dependency graph, kept together so that releasing an op's dependents
/// and counting down a dependent touch one cache line each (on lowered schedules the events
/// visit the ranks in no useful order, so separate arrays cost a miss apiece): the
/// dependencies it still waits for, and where its dependents start in the two lists (they end
/// where the next op's start; a last entry closes the lists).
#[derive(Clone, Copy)]
pub(super) struct Links {
    pub(super) remaining: u32,
    after_done: u32,
    after_start: u32,
}

pub(super) struct Graph {
    pub(super) base: Vec<usize>,
    /// Per op, plus one closing entry.
    pub(super) links: Vec<Links>,
    after_done: Vec<u32>,
    after_start: Vec<u32>,
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
    let links = (0..=n)
        .map(|i| Links {
            remaining: remaining.get(i).copied().unwrap_or(0),
            after_done: c0[i],
            after_start: c1[i],
        })
        .collect();
    let g = Graph {
        base,
        links,
        after_done: l0,
        after_start: l1,
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
        let b = self.g.base[host as usize];
        let (here, next) = (
            self.g.links[b + node as usize],
            self.g.links[b + node as usize + 1],
        );
        let list = if list_done {
            &self.g.after_done[here.after_done as usize..next.after_done as usize]
        } else {
            &self.g.after_start[here.after_start as usize..next.after_start as usize]
        };
        for &x in list {
            let c = &mut self.g.links[b + x as usize].remaining;
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
