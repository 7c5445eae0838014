//! What a GPU collective runtime (NCCL, RCCL, and the MSCCL executor inside them) pays beyond
//! the links (DESIGN.md, "Figures that match the hardware"): a launch latency per call, a
//! latency per step that depends on the protocol and on whether the step stays inside a box
//! or crosses the network, and the protocol's share of the link bandwidth that carries data.
//! [`Runtime::params`] turns them into the flow model's parameters ([`FlowParams`]) for one
//! protocol; `choose::evaluate` runs every protocol the runtime would consider and keeps the
//! fastest, as NCCL's own tuner picks by its model.
//!
//! The figures are the runtimes' own tuning tables (src/graph/tuning.cc of NVIDIA/nccl 2.12,
//! the base of the MSCCL executor, and of ROCm/rccl), for the ring algorithm, in microseconds:
//!
//! | runtime | figure | LL | LL128 | Simple |
//! |---|---|---|---|---|
//! | NCCL | base latency per call (`baseLat`) | 3.6 | 10.0 | 8.4 |
//! | NCCL | step inside a box, NVLink (`hwLat`) | 0.47 | 1.9 | 3.4 |
//! | NCCL | step over the network (`hwLat`) | 2.7 | 4.0 | 9.6 |
//! | RCCL | base latency per call | 20.5 | 20.5 | 27.9 |
//! | RCCL | step inside a box, xGMI | 2.3 | 2.3 | 2.7 |
//! | RCCL | step over the network | 2.0 | 2.0 | 4.5 |
//!
//! and the protocols' bandwidth: Simple all of it; LL128 0.92 of it (NCCL's figure: 120 of every
//! 128 bytes carry data, less the flag stores' cost);
//! LL half of every 8-byte line is a flag, and the tables charge it 1/4 of the bandwidth when
//! the ranks span boxes (NCCL; 1/3 inside one box) and 1/5 (RCCL). NCCL's inside-box LL step is
//! 1.8 times the table's when the ranks span boxes. LL128 runs only where every step stays on
//! NVLink inside one box (NCCL enables it by default only there).
//!
//! Links inside a box deliver the share of their rate that the runtime's own topology model
//! gives a link ([`Runtime::box_efficiency`]: NCCL's `SM80_NVLINK_BW` of 20 GB/s per NVLink
//! against NVLink's 25, RCCL's `MI200_XGMI_WIDTH` of 36 GB/s per xGMI link against xGMI's 50;
//! src/graph/topo.h of each), as `box_efficiency` (a calibrated model states its own). The
//! network's links deliver their declared rate, as the runtimes' models take the NIC's speed.
//!
//! A step is a message of the lowered program (a ring step's chunk, a tree edge's chunk); it
//! crosses the network when its two ranks are in different boxes ([`Net::boxes`]). Deviation:
//! the tables' per-channel caps (LL128 per channel, A100's 235 GB/s bus ceiling) and RCCL's
//! per-size ring correction factors are not applied: the flow model's links already bound the
//! bandwidth, and a factor per message size is a fit, which `collc calibrate` is for.

use super::FlowParams;
use num_bigint::BigInt;
use num_rational::BigRational;

/// A GPU collective runtime whose costs the model charges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Runtime {
    Nccl,
    Rccl,
}

/// A runtime protocol (the MSCCL XML's `proto`, too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Proto {
    LL,
    LL128,
    Simple,
}

impl Proto {
    pub const ALL: [Proto; 3] = [Proto::LL, Proto::LL128, Proto::Simple];

    /// As NCCL and the MSCCL XML spell it: `Simple`, `LL`, `LL128`.
    pub fn name(self) -> &'static str {
        match self {
            Proto::LL => "LL",
            Proto::LL128 => "LL128",
            Proto::Simple => "Simple",
        }
    }

    /// The XML's spelling back ([`Proto::name`]).
    pub fn parse(s: &str) -> Option<Proto> {
        Proto::ALL.into_iter().find(|p| p.name() == s)
    }

    /// `simple`, `ll`, `ll128`, as the language spells it.
    pub fn from_word(s: &str) -> Option<Proto> {
        Proto::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s))
    }

    /// Its column in the tuning tables.
    fn index(self) -> usize {
        match self {
            Proto::LL => 0,
            Proto::LL128 => 1,
            Proto::Simple => 2,
        }
    }
}

/// Hundredths of a microsecond: base, step inside a box, step over the network; each LL,
/// LL128, Simple.
const NCCL: [[i64; 3]; 3] = [[360, 1000, 840], [47, 190, 340], [270, 400, 960]];
const RCCL: [[i64; 3]; 3] = [[2050, 2050, 2790], [230, 230, 270], [200, 200, 450]];

impl Runtime {
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Nccl => "nccl",
            Runtime::Rccl => "rccl",
        }
    }

    pub fn parse(s: &str) -> Option<Runtime> {
        match s {
            "nccl" => Some(Runtime::Nccl),
            "rccl" => Some(Runtime::Rccl),
            _ => None,
        }
    }

    fn table(self) -> &'static [[i64; 3]; 3] {
        match self {
            Runtime::Nccl => &NCCL,
            Runtime::Rccl => &RCCL,
        }
    }

    /// The share of a box link's signalling rate that the runtime's topology model says a link
    /// delivers: NCCL's 20 GB/s per NVLink (`SM80_NVLINK_BW`, src/graph/topo.h) of NVLink's
    /// 25 GB/s per direction; RCCL's 36 GB/s per MI200 xGMI link (`MI200_XGMI_WIDTH`) of
    /// xGMI's 50 GB/s.
    pub fn box_efficiency(self) -> BigRational {
        match self {
            Runtime::Nccl => BigRational::new(BigInt::from(20), BigInt::from(25)),
            Runtime::Rccl => BigRational::new(BigInt::from(36), BigInt::from(50)),
        }
    }

    /// The protocols the runtime weighs: LL128 only inside one box.
    pub fn protocols(self, spans_boxes: bool) -> Vec<Proto> {
        Proto::ALL
            .into_iter()
            .filter(|p| *p != Proto::LL128 || !spans_boxes)
            .collect()
    }

    /// Bytes on the wire per byte of data under `proto`, exact.
    pub fn wire(self, proto: Proto, spans_boxes: bool) -> BigRational {
        let r = |n: i64, d: i64| BigRational::new(BigInt::from(n), BigInt::from(d));
        match (self, proto) {
            (_, Proto::Simple) => r(1, 1),
            (_, Proto::LL128) => r(25, 23),
            (Runtime::Nccl, Proto::LL) if spans_boxes => r(4, 1),
            (Runtime::Nccl, Proto::LL) => r(3, 1),
            (Runtime::Rccl, Proto::LL) => r(5, 1),
        }
    }

    /// The flow model's parameters under `proto`: `base` with the protocol's wire factor and
    /// the tables' step latencies as the per-message overheads (inside a box, over the network)
    /// and base latency per call, unless `base` is calibrated (then its own).
    pub fn params(self, proto: Proto, spans_boxes: bool, base: &FlowParams) -> FlowParams {
        let mut out = base.clone();
        out.runtime = Some((self, Some(proto)));
        out.wire = self.wire(proto, spans_boxes);
        if base.calibrated.is_some() {
            // A calibrated model states its own latencies.
            return out;
        }
        let us = |h: i64| BigRational::new(BigInt::from(h), BigInt::from(100_000_000));
        let t = self.table();
        let p = proto.index();
        out.overhead = us(t[1][p]);
        if self == Runtime::Nccl && proto == Proto::LL && spans_boxes {
            out.overhead *= BigRational::new(BigInt::from(9), BigInt::from(5));
        }
        out.net_overhead = Some(us(t[2][p]));
        out.launch = us(t[0][p]);
        out.box_efficiency = self.box_efficiency();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nccl_simple_is_the_tables_figures() {
        let p = Runtime::Nccl.params(Proto::Simple, true, &FlowParams::default());
        assert_eq!(super::super::fmt_ns(&p.overhead), "3400");
        assert_eq!(
            super::super::fmt_ns(p.net_overhead.as_ref().unwrap()),
            "9600"
        );
        assert_eq!(super::super::fmt_ns(&p.launch), "8400");
        // LL inside a box is 1.8 x 0.47 us when the ranks span boxes.
        let ll = Runtime::Nccl.params(Proto::LL, true, &FlowParams::default());
        assert_eq!(super::super::fmt_ns(&ll.overhead), "846");
        assert_eq!(ll.wire, BigRational::from_integer(4.into()));
        assert_eq!(Runtime::Nccl.protocols(true), [Proto::LL, Proto::Simple]);
        assert_eq!(Runtime::Rccl.protocols(false).len(), 3);
    }
}
