//! One rank of an allreduce on static in-network trees: every rank sends every block to the
//! tree `b mod trees` (the header's `switch` field names the tree) and takes the result the
//! tree's root multicasts down, keeping at most `window` blocks in flight so that blocks never
//! meet in a switch's slot. Static trees have no fault tolerance: a lost packet leaves its
//! block without a result, which the deadline reports.

use crate::canary::Stats;
use crate::frame::{DATA, Header, Packet};
use crate::net::Link;
use crate::plan::Plan;
use std::time::{Duration, Instant};

/// The packet carrying a rank's `input` for block `b`, on tree `b mod trees`.
pub fn packet(plan: &Plan, b: u32, input: &[Vec<u32>]) -> Packet {
    Packet {
        h: Header {
            dst: 0,
            id: plan.id(b, 0),
            counter: 1,
            hosts: plan.ranks() as u16,
            children: 0,
            sw: (b % plan.trees.max(1)) as u16,
            bypass: false,
            multicast: false,
            kind: DATA,
        },
        data: input[b as usize].clone(),
    }
}

pub fn run(
    plan: &Plan,
    rank: u32,
    input: &[Vec<u32>],
    link: &mut dyn Link,
    deadline: Duration,
) -> Result<(Vec<Option<Vec<u32>>>, Stats), String> {
    let addr = plan.hosts[rank as usize].0;
    let src = crate::frame::mac(addr);
    let blocks = plan.blocks();
    let mut results: Vec<Option<Vec<u32>>> = vec![None; blocks as usize];
    let mut stats = Stats::default();
    let start = Instant::now();
    let mut next = 0u32;
    let mut have = 0u32;
    while have < blocks {
        // Block b may go once the result of block b - window is in.
        while next < blocks
            && (next < plan.window || results[(next - plan.window) as usize].is_some())
        {
            let pkt = packet(plan, next, input);
            link.send(&pkt.encode(src))
                .map_err(|e| format!("send: {e}"))?;
            stats.sent += 1;
            next += 1;
        }
        if let Some(f) = link.recv().map_err(|e| format!("receive: {e}"))?
            && let Some(pkt) = Packet::decode(&f, plan.lanes)
            && pkt.h.multicast
            && pkt.h.id >> crate::plan::SEQ_BITS == plan.app
        {
            stats.received += 1;
            let b = plan.block_of(pkt.h.id) as usize;
            if results[b].is_none() {
                results[b] = Some(pkt.data);
                have += 1;
            }
        }
        if start.elapsed() > deadline {
            return Err(format!(
                "rank {rank}: {} of {blocks} blocks have no result after {deadline:?} (static trees do not retransmit)",
                blocks - have
            ));
        }
    }
    stats.elapsed = start.elapsed();
    Ok((results, stats))
}
