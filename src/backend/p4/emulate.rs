//! collc's own execution of the switch program, on real frames ([`start`]): every switch of
//! the topology as a UDP socket on the loopback (node `a` at port BASE + a; a datagram from a
//! neighbour arrives on the port that leads to it), running the same rules the P4 program is
//! compiled from. The host program's `--udp BASE` speaks to it, so the host side can be run and
//! checked where no P4 switch exists (CI).
//!
//! Canary runs [`crate::canary::switch::step`] on each packet and timer, with the payload's
//! lanes kept beside the descriptor table: the rule that fired says what happens to them
//! (allocate stores, accumulate adds, load-accumulator copies into the packet, free drops),
//! and the header's `children` field is translated between the wire's shard encoding and the
//! interpreter's port bitmap. Timers are wall-clock microseconds. Static trees run the
//! program of [`super::trees`] directly: count children, add, send up or multicast down.

#[path = "host/frame.rs"]
#[allow(dead_code)]
pub mod frame;

use super::fabric::{Fabric, Shards, SwitchView};
use crate::canary::protocol::{Act, Kind, Protocol, Trigger};
use crate::canary::switch::{Ctx, Header, Out, Tables, step};
use frame::Packet;
use std::collections::{BTreeMap, BinaryHeap};
use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What the switches run.
#[derive(Debug, Clone)]
pub enum Program {
    Canary {
        protocol: Protocol,
        timeout_us: u64,
        reclaim_us: u64,
        table_size: u32,
        /// The schedule's shards: how `children` is encoded on the wire.
        wire: Shards,
    },
    /// Per tree its root and every node's parent; the slots of every switch.
    Trees {
        trees: Vec<(usize, BTreeMap<usize, usize>)>,
        slots: u64,
    },
}

/// What the switches did.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    pub packets: u64,
    /// Canary: how often each rule fired.
    pub rules: BTreeMap<&'static str, u64>,
}

pub struct Emulator {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<Result<Counts, String>>,
}

impl Emulator {
    /// Stops the switches; what they did, or the first error.
    pub fn stop(self) -> Result<Counts, String> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .join()
            .map_err(|_| "the emulator panicked".to_string())?
    }
}

/// Starts the switches of `fabric` running `program`, payloads of `lanes` elements, on UDP
/// ports from `base`.
pub fn start(
    fabric: Fabric,
    program: Program,
    lanes: usize,
    base: u16,
) -> Result<Emulator, String> {
    let mut socks = Vec::new();
    for sw in &fabric.switches {
        let port = base
            .checked_add(sw.node as u16)
            .ok_or("port out of range")?;
        let s = UdpSocket::bind(("127.0.0.1", port)).map_err(|e| format!("port {port}: {e}"))?;
        s.set_nonblocking(true).map_err(|e| e.to_string())?;
        socks.push(s);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let handle = std::thread::spawn(move || {
        let mut st = State {
            fabric,
            program,
            lanes,
            base,
            socks,
            tables: Tables::default(),
            acc: BTreeMap::new(),
            timers: BinaryHeap::new(),
            start: Instant::now(),
            counts: Counts::default(),
        };
        st.serve(&flag)?;
        Ok(st.counts)
    });
    Ok(Emulator { stop, handle })
}

struct State {
    fabric: Fabric,
    program: Program,
    lanes: usize,
    base: u16,
    socks: Vec<UdpSocket>,
    tables: Tables,
    /// Lanes of every held descriptor (Canary), or of every tree slot (static trees, with the
    /// contributions and arrivals counted).
    acc: BTreeMap<(u32, u32), (Vec<u32>, u32, u32)>,
    /// Pending timers: (due, switch index, block id, trigger is reclaim), earliest first.
    timers: BinaryHeap<std::cmp::Reverse<(u64, usize, u32, bool)>>,
    start: Instant,
    counts: Counts,
}

impl State {
    fn now(&self) -> u64 {
        self.start.elapsed().as_micros() as u64
    }

    fn serve(&mut self, stop: &AtomicBool) -> Result<(), String> {
        let mut buf = vec![0u8; 65536];
        while !stop.load(Ordering::Relaxed) {
            let mut idle = true;
            for i in 0..self.socks.len() {
                match self.socks[i].recv_from(&mut buf) {
                    Ok((n, from)) => {
                        idle = false;
                        let src = u32::from(from.port().wrapping_sub(self.base));
                        let frame = buf[..n].to_vec();
                        self.arrive(i, src as usize, &frame)?;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(format!("receive: {e}")),
                }
            }
            let now = self.now();
            while let Some(std::cmp::Reverse((due, i, id, reclaim))) = self.timers.peek().copied() {
                if due > now {
                    break;
                }
                self.timers.pop();
                idle = false;
                self.fire(i, id, reclaim)?;
            }
            if idle {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
        Ok(())
    }

    fn send(&self, i: usize, to: usize, p: &Packet) -> Result<(), String> {
        let port = self.base.wrapping_add(to as u16);
        let src = [0x02, 0, 0, 0, 0, i as u8];
        self.socks[i]
            .send_to(&p.encode(src), ("127.0.0.1", port))
            .map(|_| ())
            .map_err(|e| format!("send: {e}"))
    }

    fn view(&self, i: usize) -> &SwitchView {
        &self.fabric.switches[i]
    }

    fn arrive(&mut self, i: usize, from: usize, frame: &[u8]) -> Result<(), String> {
        let Some(p) = Packet::decode(frame, self.lanes) else {
            return Ok(());
        };
        let Some(port) = self.view(i).ports.iter().position(|&n| n == from) else {
            return Ok(());
        };
        self.counts.packets += 1;
        match &self.program {
            Program::Canary { .. } => self.canary(i, Some(port as u32), p, Trigger::Packet),
            Program::Trees { .. } => self.tree(i, p),
        }
    }

    fn fire(&mut self, i: usize, id: u32, reclaim: bool) -> Result<(), String> {
        let p = Packet {
            h: frame::Header {
                id,
                ..Default::default()
            },
            data: Vec::new(),
        };
        let on = if reclaim {
            Trigger::Reclaim
        } else {
            Trigger::Timer
        };
        self.canary(i, None, p, on)
    }

    fn canary(
        &mut self,
        i: usize,
        port: Option<u32>,
        p: Packet,
        on: Trigger,
    ) -> Result<(), String> {
        let Program::Canary {
            protocol,
            timeout_us,
            reclaim_us,
            table_size,
            wire,
        } = &self.program
        else {
            return Ok(());
        };
        let (protocol, wire) = (protocol.clone(), *wire);
        let me = self.view(i).node as u32;
        let ctx = Ctx {
            me,
            port,
            now: self.now(),
            timeout: *timeout_us,
            table_size: *table_size,
            table_base: 0,
            reclaim: *reclaim_us,
        };
        let shard = p.h.children >> 24;
        let carried = u128::from(p.h.children & 0xFF_FFFF) << (shard * wire.width);
        let h = Header {
            dst: p.h.dst,
            id: p.h.id,
            counter: u32::from(p.h.counter),
            hosts: u32::from(p.h.hosts),
            children: if p.h.children == 0 { 0 } else { carried },
            switch: u32::from(p.h.sw),
            bypass: p.h.bypass,
            multicast: p.h.multicast,
            kind: match p.h.kind {
                1 => Kind::Retransmit,
                2 => Kind::Failure,
                _ => Kind::Data,
            },
            data: 0,
            from: crate::canary::switch::NO_ONE,
        };
        let slot = crate::canary::switch::slot(h.id, ctx.table_size);
        let key = (me, slot);
        let mut out = Vec::new();
        let Some(name) = step(&protocol, on, &mut self.tables, &ctx, h, &mut out) else {
            return Ok(());
        };
        *self.counts.rules.entry(name).or_default() += 1;
        let rule = protocol
            .switch
            .iter()
            .find(|r| r.name == name && r.on == on)
            .ok_or("a rule that fired is not in the protocol")?;
        let mut data = p.data.clone();
        for a in &rule.then {
            match a {
                Act::Allocate => {
                    self.acc.insert(key, (p.data.clone(), 0, 0));
                }
                Act::Accumulate => {
                    if let Some((acc, _, _)) = self.acc.get_mut(&key) {
                        for (x, v) in acc.iter_mut().zip(&p.data) {
                            *x = x.wrapping_add(*v);
                        }
                    }
                }
                Act::LoadAccumulator => {
                    data = self.acc.get(&key).map(|a| a.0.clone()).unwrap_or_default();
                }
                Act::Free => {
                    self.acc.remove(&key);
                }
                _ => {}
            }
        }
        for o in out {
            match o {
                Out::Forward(h, to) => {
                    let Some(&(_, k)) = self.view(i).routes.iter().find(|r| r.0 == to as usize)
                    else {
                        continue;
                    };
                    let next = self.view(i).ports[k as usize];
                    self.send(i, next, &packet(&h, &data, wire))?;
                }
                Out::Multicast(h, ports) => {
                    let pkt = packet(&h, &data, wire);
                    for k in 0..128 {
                        if ports >> k & 1 == 1
                            && let Some(&n) = self.view(i).ports.get(k)
                        {
                            self.send(i, n, &pkt)?;
                        }
                    }
                }
                Out::Arm(id, _, at) => self.timers.push(std::cmp::Reverse((at, i, id, false))),
                Out::Reclaim(id, _, at) => self.timers.push(std::cmp::Reverse((at, i, id, true))),
            }
        }
        Ok(())
    }

    fn tree(&mut self, i: usize, mut p: Packet) -> Result<(), String> {
        let Program::Trees { trees, slots } = &self.program else {
            return Ok(());
        };
        let v = self.view(i).node;
        let Some((root, parent)) = trees.get(usize::from(p.h.sw)) else {
            return Ok(());
        };
        let (root, parent) = (*root, parent.clone());
        let children: Vec<usize> = self
            .view(i)
            .ports
            .iter()
            .copied()
            .filter(|w| parent.get(w) == Some(&v))
            .collect();
        if p.h.multicast {
            for &c in &children {
                self.send(i, c, &p)?;
            }
            return Ok(());
        }
        let key = (v as u32, p.h.id & (*slots as u32 - 1));
        let entry = self.acc.entry(key).or_insert((vec![0; p.data.len()], 0, 0));
        for (x, y) in entry.0.iter_mut().zip(&p.data) {
            *x = x.wrapping_add(*y);
        }
        entry.1 += u32::from(p.h.counter);
        entry.2 += 1;
        if entry.2 as usize != children.len() {
            return Ok(());
        }
        let (sum, counter, _) = self.acc.remove(&key).unwrap_or_default();
        p.data = sum;
        p.h.counter = counter as u16;
        if root == v {
            p.h.multicast = true;
            for &c in &children {
                self.send(i, c, &p)?;
            }
        } else if let Some(&up) = parent.get(&v) {
            self.send(i, up, &p)?;
        }
        Ok(())
    }
}

/// The wire packet of the interpreter's header `h` carrying `data`.
fn packet(h: &Header, data: &[u32], wire: Shards) -> Packet {
    // A collision writes the input port's bit; the wire carries its shard and bit.
    let children = if h.children == 0 {
        0
    } else {
        wire.wire(h.children.trailing_zeros())
    };
    Packet {
        h: frame::Header {
            dst: h.dst,
            id: h.id,
            counter: h.counter as u16,
            hosts: h.hosts as u16,
            children,
            sw: h.switch as u16,
            bypass: h.bypass,
            multicast: h.multicast,
            kind: match h.kind {
                Kind::Data => frame::DATA,
                Kind::Retransmit => frame::RETRANSMIT,
                Kind::Failure => frame::FAILURE,
            },
        },
        data: if h.kind == Kind::Data {
            data.to_vec()
        } else {
            Vec::new()
        },
    }
}
