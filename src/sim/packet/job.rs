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

/// The run-time state of one program; see the module doc. Ops are numbered globally:
/// op `o` of process `p` is `base[p] + o`.
pub struct JobState {
    /// Collective ranks (the first processes).
    pub ranks: u32,
    /// Per process: the node it runs on, and whether it is a switch process.
    pub node: Vec<u32>,
    pub switch: Vec<bool>,
    pub base: Vec<u32>,
    pub proc_of: Vec<u32>,
    pub kind: Vec<Kind>,
    /// Units per op (1 on ranks, packets on switches).
    pub units: Vec<u32>,
    /// Bytes each op moves or combines.
    pub bytes: Vec<u64>,
    /// Per send: the receive it delivers to (global op id).
    pub peer_recv: Vec<u32>,
    /// Per send: the message it created (u32::MAX before).
    pub msg: Vec<u32>,
    cnt_base: Vec<u32>,
    cnt: Vec<u32>,
    done: Vec<u32>,
    rstart: Vec<u32>,
    rlist: Vec<u32>,
    /// Per process, when its last op completed (ps).
    pub finish: Vec<u64>,
    /// Per op, when its first unit became ready, and when it completed (u64::MAX: not yet).
    pub started: Vec<u64>,
    pub ended: Vec<u64>,
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
        let mut proc_of = Vec::with_capacity(total);
        let mut kind = Vec::with_capacity(total);
        let mut units = Vec::with_capacity(total);
        let mut bytes = Vec::with_capacity(total);
        let mut cnt_base = Vec::with_capacity(total + 1);
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
                proc_of.push(pi as u32);
                kind.push(k);
                units.push(u);
                bytes.push(b);
                cnt_base.push(cnt.len() as u32);
                let arrival = u32::from(matches!(k, Kind::Recv | Kind::RecvReduce));
                let c = op.deps.len() as u32 + arrival;
                cnt.extend(std::iter::repeat_n(c, u as usize));
                for &d in &op.deps {
                    rcount[(base[pi] + d) as usize + 1] += 1;
                }
            }
        }
        cnt_base.push(cnt.len() as u32);
        let mut peer_recv = vec![u32::MAX; total];
        sends.sort_unstable();
        recvs.sort_unstable();
        let (mut a, mut b) = (0, 0);
        while a < sends.len() || b < recvs.len() {
            match (sends.get(a), recvs.get(b)) {
                (Some(s), Some(r)) if s.0 == r.0 => {
                    peer_recv[s.1 as usize] = r.1;
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
            proc_of,
            kind,
            units,
            bytes,
            peer_recv,
            msg: vec![u32::MAX; total],
            cnt_base,
            cnt,
            done: vec![0; total],
            rstart: rcount,
            rlist,
            finish: vec![0; p.procs.len()],
            started: vec![u64::MAX; total],
            ended: vec![u64::MAX; total],
            cpu_free: vec![0; p.procs.len()],
            left: total,
            base,
        })
    }

    pub fn ops(&self) -> usize {
        self.kind.len()
    }

    /// The units ready at the start (no deps, not waiting for a message), pushed last op first
    /// so that popping runs them in program order.
    pub fn initial(&self, ready: &mut Vec<(u32, u32)>) {
        for g in (0..self.ops()).rev() {
            let b = self.cnt_base[g] as usize;
            for i in (0..self.units[g]).rev() {
                if self.cnt[b + i as usize] == 0 {
                    ready.push((g as u32, i));
                }
            }
        }
    }

    /// One condition of unit `i` of op `g` is met; pushes the unit when it is ready.
    pub fn dec(&mut self, g: u32, i: u32, ready: &mut Vec<(u32, u32)>) {
        let c = &mut self.cnt[(self.cnt_base[g as usize] + i) as usize];
        *c -= 1;
        if *c == 0 {
            ready.push((g, i));
        }
    }

    /// Every unit of op `g` has one more condition met.
    pub fn dec_all(&mut self, g: u32, ready: &mut Vec<(u32, u32)>) {
        for i in 0..self.units[g as usize] {
            self.dec(g, i, ready);
        }
    }

    /// Unit `i` of op `g` is done at `now`: releases its dependents (per unit when both stream
    /// with the same number of units, else when the op completes). True when the op completed.
    pub fn unit_done(&mut self, g: u32, i: u32, now: u64, ready: &mut Vec<(u32, u32)>) -> bool {
        let gu = g as usize;
        self.done[gu] += 1;
        let complete = self.done[gu] == self.units[gu];
        let u = self.units[gu];
        for k in self.rstart[gu]..self.rstart[gu + 1] {
            let d = self.rlist[k as usize];
            if u > 1 && self.units[d as usize] == u {
                self.dec(d, i, ready);
            } else if complete {
                self.dec_all(d, ready);
            }
        }
        if complete {
            self.ended[gu] = now;
            let p = self.proc_of[gu] as usize;
            self.finish[p] = self.finish[p].max(now);
            self.left -= 1;
        }
        complete
    }
}
