//! One IR program placed on the network, as the packet simulator runs it ([`JobState`]).
//!
//! Every op is split into *units* whose completion releases its dependents: an op of a rank is
//! one unit (IR semantics: a receive completes when its whole message has arrived, a send when
//! its last packet has left the NIC); an op of a switch process is one unit per packet of the
//! message or slice it handles, so switches *stream*: packet i of a switch's send may leave once
//! packet i of every op it depends on has arrived or been reduced (plus the aggregation delay),
//! as aggregating switches (SHARP, SwitchML, Canary) forward a block as soon as its
//! contributions are in, without waiting for whole messages. This refines the IR's message-level
//! semantics without changing what is computed: packet i of every message of equal size covers
//! the same elements. Dependencies between ops of different packet counts (a switch combining
//! messages of different sizes) fall back to message level: the dependent waits for the whole op.
//!
//! Sends and receives are matched statically, as the IR defines: the k-th send from p to q
//! with tag t delivers to the k-th receive on q from p with tag t.

use super::params::PacketParams;
use crate::ir::{OpKind, ProcKind, Program};
use std::collections::BTreeMap;

/// What an op does, compactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Send,
    Recv,
    RecvReduce,
    Reduce,
    Copy,
}

/// One op's static description and run-time state, in one record so that running, completing
/// or releasing an op touches one cache line (a ring's program has millions of ops, far more
/// than the caches hold, and the simulator visits them in no cache-friendly order).
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
pub struct Op {
    pub kind: Kind,
    /// The process it belongs to.
    pub proc: u32,
    /// Units (1 on ranks, packets on switches).
    pub units: u32,
    /// A send's receive (global op id), and the node that receive runs on; u32::MAX else.
    pub peer_recv: u32,
    pub peer_node: u32,
    /// A send's message, once made (u32::MAX before).
    pub msg: u32,
    /// Conditions still unmet: of a one-unit op, the count itself; of an op of more units, the
    /// index of its first unit's count in [`JobState`]'s `cnt`.
    wait: u32,
    /// Units completed.
    done: u32,
    /// Its dependents: `rlist[rstart..rend]`.
    rstart: u32,
    rend: u32,
    /// Bytes it moves or combines.
    pub bytes: u64,
    /// When its first unit became ready, and when it completed (u64::MAX: not yet).
    pub started: u64,
    pub ended: u64,
}

/// The run-time state of one program; see the module doc. Ops are numbered globally:
/// op `o` of process `p` is `base[p] + o`.
pub struct JobState {
    /// Collective ranks (the first processes).
    pub ranks: u32,
    /// Per process: the node it runs on, and whether it is a switch process.
    pub node: Vec<u32>,
    pub switch: Vec<bool>,
    pub base: Vec<u32>,
    pub ops: Vec<Op>,
    /// Per unit of each op of more than one unit, its conditions still unmet.
    cnt: Vec<u32>,
    rlist: Vec<u32>,
    /// Per process, when its last op completed (ps).
    pub finish: Vec<u64>,
    /// Per process, when its CPU is next free (host reductions run one after another).
    pub cpu_free: Vec<u64>,
    /// Ops not completed yet.
    pub left: usize,
}

impl JobState {
    /// Places `p` with rank r on node `hosts[r]` and each switch process on the node of its
    /// name; Err names what does not fit.
    pub fn new(
        p: &Program,
        hosts: &[u32],
        node_by_name: &BTreeMap<&str, u32>,
        params: &PacketParams,
    ) -> Result<JobState, String> {
        let ranks = p.spec.ranks;
        if hosts.len() < ranks as usize {
            return Err(format!(
                "the program has {ranks} ranks but only {} hosts were given",
                hosts.len()
            ));
        }
        let mut node = Vec::with_capacity(p.procs.len());
        let mut switch = Vec::with_capacity(p.procs.len());
        for (i, proc) in p.procs.iter().enumerate() {
            match &proc.kind {
                ProcKind::Rank => {
                    node.push(hosts[i]);
                    switch.push(false);
                }
                ProcKind::Switch(name) => {
                    let n = node_by_name.get(name.as_str()).copied().ok_or_else(|| {
                        format!(
                            "switch process {i} runs on `{name}`, which the topology does not have"
                        )
                    })?;
                    node.push(n);
                    switch.push(true);
                }
            }
        }
        let base = p.op_base();
        let total = *base.last().unwrap_or(&0) as usize;
        let mut ops: Vec<Op> = Vec::with_capacity(total);
        let mut cnt = Vec::new();
        let mut rcount = vec![0u32; total + 1];
        // Static matching by (sender, receiver, tag), in program order (op ids grow with it).
        let mut sends: Vec<((u32, u32, u32), u32)> = Vec::new();
        let mut recvs: Vec<((u32, u32, u32), u32)> = Vec::new();
        for (pi, proc) in p.procs.iter().enumerate() {
            for (oi, op) in proc.ops.iter().enumerate() {
                let g = base[pi] + oi as u32;
                let (k, b) = match op.kind {
                    OpKind::Send { peer, src, tag } => {
                        sends.push(((pi as u32, peer, tag), g));
                        (Kind::Send, p.slice_bytes(src))
                    }
                    OpKind::Recv { peer, dst, tag } => {
                        recvs.push(((peer, pi as u32, tag), g));
                        (Kind::Recv, p.slice_bytes(dst))
                    }
                    OpKind::RecvReduce { peer, dst, tag } => {
                        recvs.push(((peer, pi as u32, tag), g));
                        (Kind::RecvReduce, p.slice_bytes(dst))
                    }
                    OpKind::Reduce { dst, .. } => (Kind::Reduce, p.slice_bytes(dst)),
                    OpKind::Copy { dst, .. } => (Kind::Copy, p.slice_bytes(dst)),
                };
                let u = if switch[pi] {
                    params.packets(b) as u32
                } else {
                    1
                };
                let arrival = u32::from(matches!(k, Kind::Recv | Kind::RecvReduce));
                let c = op.deps.len() as u32 + arrival;
                let wait = if u == 1 {
                    c
                } else {
                    let at = cnt.len() as u32;
                    cnt.extend(std::iter::repeat_n(c, u as usize));
                    at
                };
                ops.push(Op {
                    kind: k,
                    proc: pi as u32,
                    units: u,
                    peer_recv: u32::MAX,
                    peer_node: u32::MAX,
                    msg: u32::MAX,
                    wait,
                    done: 0,
                    rstart: 0,
                    rend: 0,
                    bytes: b,
                    started: u64::MAX,
                    ended: u64::MAX,
                });
                for &d in &op.deps {
                    rcount[(base[pi] + d) as usize + 1] += 1;
                }
            }
        }
        sends.sort_unstable();
        recvs.sort_unstable();
        let (mut a, mut b) = (0, 0);
        while a < sends.len() || b < recvs.len() {
            match (sends.get(a), recvs.get(b)) {
                (Some(s), Some(r)) if s.0 == r.0 => {
                    let peer = ops[r.1 as usize].proc as usize;
                    let send = &mut ops[s.1 as usize];
                    send.peer_recv = r.1;
                    send.peer_node = node[peer];
                    a += 1;
                    b += 1;
                }
                (Some(s), r) if r.is_none_or(|r| s.0 < r.0) => {
                    return Err(format!(
                        "process {} sends more messages with tag {} to process {} than it receives",
                        s.0.0, s.0.2, s.0.1
                    ));
                }
                (_, Some(r)) => {
                    return Err(format!(
                        "process {} receives more messages with tag {} from process {} than it sends",
                        r.0.1, r.0.2, r.0.0
                    ));
                }
                _ => break,
            }
        }
        for i in 0..total {
            rcount[i + 1] += rcount[i];
            ops[i].rstart = rcount[i];
            ops[i].rend = rcount[i + 1];
        }
        let mut fill = rcount.clone();
        let mut rlist = vec![0u32; rcount[total] as usize];
        for (pi, proc) in p.procs.iter().enumerate() {
            for (oi, op) in proc.ops.iter().enumerate() {
                for &d in &op.deps {
                    let from = (base[pi] + d) as usize;
                    rlist[fill[from] as usize] = base[pi] + oi as u32;
                    fill[from] += 1;
                }
            }
        }
        Ok(JobState {
            ranks,
            node,
            switch,
            ops,
            cnt,
            rlist,
            finish: vec![0; p.procs.len()],
            cpu_free: vec![0; p.procs.len()],
            left: total,
            base,
        })
    }

    pub fn ops(&self) -> usize {
        self.ops.len()
    }

    /// The units ready at the start (no deps, not waiting for a message), pushed last op first
    /// so that popping runs them in program order.
    pub fn initial(&self, ready: &mut Vec<(u32, u32)>) {
        for (g, op) in self.ops.iter().enumerate().rev() {
            for i in (0..op.units).rev() {
                let c = if op.units == 1 {
                    op.wait
                } else {
                    self.cnt[(op.wait + i) as usize]
                };
                if c == 0 {
                    ready.push((g as u32, i));
                }
            }
        }
    }

    /// One condition of unit `i` of op `g` is met; pushes the unit when it is ready.
    pub fn dec(&mut self, g: u32, i: u32, ready: &mut Vec<(u32, u32)>) {
        let op = &mut self.ops[g as usize];
        let c = if op.units == 1 {
            &mut op.wait
        } else {
            &mut self.cnt[(op.wait + i) as usize]
        };
        *c -= 1;
        if *c == 0 {
            ready.push((g, i));
        }
    }

    /// Every unit of op `g` has one more condition met.
    pub fn dec_all(&mut self, g: u32, ready: &mut Vec<(u32, u32)>) {
        for i in 0..self.ops[g as usize].units {
            self.dec(g, i, ready);
        }
    }

    /// Unit `i` of op `g` is done at `now`: releases its dependents (per unit when both stream
    /// with the same number of units, else when the op completes). True when the op completed.
    pub fn unit_done(&mut self, g: u32, i: u32, now: u64, ready: &mut Vec<(u32, u32)>) -> bool {
        let op = &mut self.ops[g as usize];
        op.done += 1;
        let complete = op.done == op.units;
        let (u, rstart, rend) = (op.units, op.rstart, op.rend);
        if complete {
            op.ended = now;
        }
        let p = op.proc as usize;
        for k in rstart..rend {
            let d = self.rlist[k as usize];
            if u > 1 && self.ops[d as usize].units == u {
                self.dec(d, i, ready);
            } else if complete {
                self.dec_all(d, ready);
            }
        }
        if complete {
            self.finish[p] = self.finish[p].max(now);
            self.left -= 1;
        }
        complete
    }
}
