//! Thread blocks and steps for one rank (steps 4 and 5 of [`super`]), in the global order.

use super::chans::Channels;
use super::fuse::Fusion;
use super::{MOp, MSlice, NO, PeerMap, pieces, step};
use crate::backend::msccl::{Options, StepType, Tb};
use crate::ir::Program;

struct State<'a> {
    p: &'a Program,
    r: u32,
    f: &'a Fusion,
    pos: &'a [u32],
    cpp: u32,
    split_parts: bool,
    tbs: Vec<Tb>,
    send_of: PeerMap,
    recv_of: PeerMap,
    /// (tb, step) of each op's last step; `NO` when not placed.
    loc: Vec<(u32, u32)>,
    /// Fused receives whose thread block took both peers.
    fused: Vec<bool>,
    /// Local ops without dependencies, placed when first needed.
    lazy: Vec<bool>,
}

impl State<'_> {
    fn new_tb(&mut self, send: i64, recv: i64, chan: u32) -> u32 {
        self.tbs.push(Tb {
            send,
            recv,
            chan: i64::from(chan),
            steps: Vec::new(),
        });
        (self.tbs.len() - 1) as u32
    }

    /// The block for a send to `q` (`send`) or a receive from `q` on `chan`.
    fn peer_tb(&mut self, chan: u32, q: u32, send: bool) -> u32 {
        let (mine, other) = if send {
            (&self.send_of, &self.recv_of)
        } else {
            (&self.recv_of, &self.send_of)
        };
        if let Some(t) = mine.get(&(chan, q)) {
            return *t;
        }
        let free = |tb: &Tb| if send { tb.send < 0 } else { tb.recv < 0 };
        let t = match other.get(&(chan, q)) {
            Some(t) if free(&self.tbs[*t as usize]) => *t,
            _ => self.new_tb(-1, -1, chan),
        };
        let tb = &mut self.tbs[t as usize];
        if send {
            tb.send = i64::from(q);
            self.send_of.insert((chan, q), t);
        } else {
            tb.recv = i64::from(q);
            self.recv_of.insert((chan, q), t);
        }
        t
    }

    /// The block for a step that sends to `s` and receives from `r`, if one can take both.
    fn pair_tb(&mut self, chan: u32, s: u32, r: u32) -> Option<u32> {
        let ts = self.send_of.get(&(chan, s)).copied();
        let tr = self.recv_of.get(&(chan, r)).copied();
        let t = match (ts, tr) {
            (Some(a), Some(b)) if a == b => return Some(a),
            (Some(_), Some(_)) => return None,
            (Some(a), None) if self.tbs[a as usize].recv < 0 => a,
            (None, Some(b)) if self.tbs[b as usize].send < 0 => b,
            (None, None) => self.new_tb(-1, -1, chan),
            _ => return None,
        };
        let tb = &mut self.tbs[t as usize];
        tb.send = i64::from(s);
        tb.recv = i64::from(r);
        self.send_of.insert((chan, s), t);
        self.recv_of.insert((chan, r), t);
        Some(t)
    }

    /// Where the dependency `d` finished, with its global position, for an op placed in `t`
    /// (a lazy local op is placed in `t` now).
    fn resolve(&mut self, d: u32, t: u32, out: &mut Vec<(u32, u32, u32)>) {
        let (lt, ls) = self.loc[d as usize];
        if lt != NO {
            out.push((lt, ls, self.pos[d as usize]));
            return;
        }
        if self.lazy[d as usize] {
            self.place_lazy(d, t);
            let (lt, ls) = self.loc[d as usize];
            out.push((lt, ls, self.pos[d as usize]));
            return;
        }
        // A receive folded into a later reduction: where that reduction finished.
        let m = self.f.moved[d as usize];
        if m != NO {
            let (lt, ls) = self.loc[m as usize];
            if lt != NO {
                out.push((lt, ls, self.pos[m as usize]));
            }
            return;
        }
        // A dropped op (or a fused send, placed with its receive): its own dependencies.
        let deps = self.p.procs[self.r as usize].ops[d as usize].deps.clone();
        for &x in &deps {
            self.resolve(x, t, out);
        }
    }

    /// Places a lazy local op (and the lazy ops it needs) in block `t`.
    fn place_lazy(&mut self, o: u32, t: u32) {
        self.lazy[o as usize] = false;
        let mut ds = Vec::new();
        let p = &self.p.procs[self.r as usize].ops[o as usize];
        let all: Vec<u32> = p
            .deps
            .iter()
            .chain(&self.f.hazards[o as usize])
            .copied()
            .collect();
        for x in all {
            self.resolve(x, t, &mut ds);
        }
        self.emit(o, t, ds);
    }

    /// The block and position of the latest placed op `d` stands for, without placing any.
    fn peek(&self, d: u32) -> Option<(u32, u32)> {
        let (lt, _) = self.loc[d as usize];
        if lt != NO {
            return Some((lt, self.pos[d as usize]));
        }
        if self.lazy[d as usize] {
            return None;
        }
        self.p.procs[self.r as usize].ops[d as usize]
            .deps
            .iter()
            .filter_map(|x| self.peek(*x))
            .max_by_key(|x| x.1)
    }

    /// Appends op `o` to block `t` after waits for `deps` (tb, step, pos).
    fn emit(&mut self, o: u32, t: u32, deps: Vec<(u32, u32, u32)>) {
        let mut waits: Vec<(u32, u32)> = deps
            .iter()
            .filter(|d| d.0 != t)
            .map(|d| (d.0, d.1))
            .collect();
        waits.sort_unstable();
        // Keep the latest step per block.
        let mut last: Vec<(u32, u32)> = Vec::with_capacity(waits.len());
        for w in waits {
            match last.last_mut() {
                Some(l) if l.0 == w.0 => l.1 = l.1.max(w.1),
                _ => last.push(w),
            }
        }
        for &(dt, ds) in &last {
            self.tbs[dt as usize].steps[ds as usize].hasdep = true;
        }
        let (ty, src, dst) = self.shape(o);
        let lead = dst.or(src).expect("a data op");
        let ps = pieces(lead.off, lead.cnt, self.cpp, self.split_parts);
        let tb = &mut self.tbs[t as usize];
        let n = last.len();
        for (k, &(dt, ds)) in last.iter().enumerate() {
            if k + 1 < n {
                let mut s = step(StepType::Nop, None, None, 0, 0);
                s.depid = i64::from(dt);
                s.deps = i64::from(ds);
                tb.steps.push(s);
            }
        }
        for (k, &(rel, cnt)) in ps.iter().enumerate() {
            let mut s = step(ty, src, dst, rel, cnt);
            if k == 0 {
                if let Some(&(dt, ds)) = last.last() {
                    s.depid = i64::from(dt);
                    s.deps = i64::from(ds);
                }
            }
            tb.steps.push(s);
        }
        self.loc[o as usize] = (t, (tb.steps.len() - 1) as u32);
    }

    /// Step type and operands of op `o` as it will be emitted.
    fn shape(&self, o: u32) -> (StepType, Option<MSlice>, Option<MSlice>) {
        let fused = self.fused[o as usize];
        match self.f.mops[o as usize] {
            MOp::Send { src, .. } => (StepType::Send, Some(src), None),
            MOp::Recv { dst, .. } if fused => (StepType::RecvCopySend, None, Some(dst)),
            MOp::Recv { dst, .. } => (StepType::Recv, None, Some(dst)),
            MOp::RecvReduce { src, .. } if fused && self.f.dead[o as usize] => {
                (StepType::RecvReduceSend, Some(src), None)
            }
            MOp::RecvReduce { src, dst, .. } if fused => {
                (StepType::RecvReduceCopySend, Some(src), Some(dst))
            }
            MOp::RecvReduce { src, dst, .. } => (StepType::RecvReduceCopy, Some(src), Some(dst)),
            MOp::Copy { src, dst } => (StepType::Copy, Some(src), Some(dst)),
            MOp::Reduce { src, dst } => (StepType::Reduce, Some(src), Some(dst)),
            MOp::Dropped => (StepType::Nop, None, None),
        }
    }
}

/// The thread blocks of rank `r` (instance 0). `ops`: the rank's ops in global order.
#[allow(clippy::too_many_arguments)]
pub(super) fn thread_blocks(
    p: &Program,
    r: u32,
    ops: &[u32],
    f: &Fusion,
    pos: &[u32],
    opts: &Options,
    chans: &Channels,
    cpp: u32,
) -> Vec<Tb> {
    let n = p.procs[r as usize].ops.len();
    let mut st = State {
        p,
        r,
        f,
        pos,
        cpp,
        split_parts: opts.instances > 1,
        tbs: Vec::new(),
        send_of: PeerMap::default(),
        recv_of: PeerMap::default(),
        loc: vec![(NO, NO); n],
        fused: vec![false; n],
        lazy: vec![false; n],
    };
    let proc = &p.procs[r as usize];
    let mut deps = Vec::new();
    for &o in ops {
        let m = f.mops[o as usize];
        let partner = f.partner[o as usize];
        let c = chans.of(r, o, &m, f);
        let t = match m {
            MOp::Dropped => continue,
            MOp::Send { peer, .. } => {
                if partner != NO && st.fused[partner as usize] {
                    st.loc[o as usize] = st.loc[partner as usize];
                    continue;
                }
                st.peer_tb(c, peer, true)
            }
            MOp::Recv { peer, .. } | MOp::RecvReduce { peer, .. } => {
                // A fused send goes on the receive's channel: only when it is its own.
                let pair =
                    if partner == NO || chans.of(r, partner, &f.mops[partner as usize], f) != c {
                        None
                    } else {
                        let MOp::Send { peer: sp, .. } = f.mops[partner as usize] else {
                            unreachable!("a receive's partner is a send")
                        };
                        st.pair_tb(c, sp, peer)
                    };
                match pair {
                    Some(t) => {
                        st.fused[o as usize] = true;
                        t
                    }
                    None => st.peer_tb(c, peer, false),
                }
            }
            MOp::Copy { .. } | MOp::Reduce { .. } => {
                // The block of the latest dependency; lazy without a placed one.
                let latest = proc.ops[o as usize]
                    .deps
                    .iter()
                    .chain(&f.hazards[o as usize])
                    .filter_map(|d| st.peek(*d))
                    .max_by_key(|x| x.1);
                match latest {
                    Some((t, _)) => t,
                    None => {
                        st.lazy[o as usize] = true;
                        continue;
                    }
                }
            }
        };
        deps.clear();
        for &d in proc.ops[o as usize]
            .deps
            .iter()
            .chain(&f.hazards[o as usize])
        {
            st.resolve(d, t, &mut deps);
        }
        if st.fused[o as usize] {
            let p = partner as usize;
            for &d in proc.ops[p].deps.iter().chain(&f.hazards[p]) {
                if d != o {
                    st.resolve(d, t, &mut deps);
                }
            }
        }
        st.emit(o, t, std::mem::take(&mut deps));
    }
    // Local ops nobody waits for.
    for &o in ops {
        if st.lazy[o as usize] {
            let t = if st.tbs.is_empty() {
                st.new_tb(-1, -1, 0)
            } else {
                0
            };
            st.place_lazy(o, t);
        }
    }
    st.tbs
}
