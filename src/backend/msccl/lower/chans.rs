//! The channel of every op of every rank (step 4 of [`super`]), as [`super::order`] chose it
//! per message: both ends of a message read the same entry, so they agree by construction.

use super::MOp;
use super::fuse::Fusion;
use super::order::Order;
use crate::ir::Program;

/// The channel of every op of every rank (instance 0), and how many channels one instance uses.
pub(super) struct Channels {
    /// Per rank, per op, the channel (`u32::MAX` for local ops).
    of: Vec<Vec<u32>>,
    /// Channels of one instance: every one of `0 .. width` carries a message.
    pub width: u32,
}

impl Channels {
    pub fn new(p: &Program, order: &Order) -> Channels {
        let of = (0..p.procs.len())
            .map(|r| {
                let b = order.base[r] as usize;
                order.chan[b..order.base[r + 1] as usize].to_vec()
            })
            .collect();
        Channels {
            of,
            width: order.width,
        }
    }

    /// The channel of op `o` of rank `r` as the IR has it (`u32::MAX` for local ops).
    pub fn raw(&self, r: u32, o: u32) -> u32 {
        self.of[r as usize][o as usize]
    }

    /// The channel of op `o` of rank `r`, mapped and fused as `m` (a receive folded into a
    /// reduction travels on the receive's channel; other local ops report 0).
    pub fn of(&self, r: u32, o: u32, m: &MOp, f: &Fusion) -> u32 {
        let mine = &self.of[r as usize];
        match (mine[o as usize], m) {
            (u32::MAX, MOp::RecvReduce { .. }) => match f.absorbed[o as usize] {
                super::NO => 0,
                rv => mine[rv as usize],
            },
            (u32::MAX, _) => 0,
            (c, _) => c,
        }
    }
}
