//! The built-in simulator: a discrete-event engine over GOAL schedules
//! ([`crate::backend::goal::GoalSchedule`]), so a `.goal` file from anywhere and a lowered
//! `.coll` file (IR -> [`crate::backend::goal::from_ir`] -> here) run through the same code.
//!
//! Time is an integer number of *ticks*; a [`TimeUnit`] says how long one tick is (1 ns for
//! GOAL files, LogGOPSim's convention; finer when a declared model needs it, see
//! [`TimeUnit::fit`]). Models ([`Model`]):
//!
//! - **LogGP**, with exactly LogGOPSim's semantics (`LogGOPSim.cpp`, see [`engine`]): a send
//!   occupies its CPU for `o+(s-1)O` and its NIC for `g+(s-1)G`; the message arrives `o+L`
//!   after the send started; the receiving host's CPU (the one with the *sender's* cpu index, as
//!   in LogGOPSim) is busy `o+max((s-1)O,(s-1)G)` and its NIC `g+(s-1)G`; a send of at most S
//!   bytes completes after its `o`, a larger one when the receiver matches it; posting a receive
//!   costs nothing; an op that becomes executable is queued at the time its CPU is next free
//!   (sends: its CPU and NIC); a host finishes at the latest free time of its CPUs. Arithmetic is
//!   LogGOPSim's unsigned 64-bit arithmetic, so a 0-byte message behaves as it does there:
//!   `(size-1)*G` is `2^64 - G`, i.e. `-G`, so a 0-byte send frees its CPU at `t+o-O` and its NIC
//!   at `t+g-G`, and a 0-byte receive frees its CPU at `t+o` plus the *unsigned* maximum of
//!   `-O` and `-G`: `t+o-G` when `O = 0` (LogGOPSim's default; the 2-rank barrier ends at
//!   5494 ns, not 5500), `t+o-O` when `G = 0`, `t+o-min(O,G)` otherwise. A time below zero
//!   (`t+g < G`, e.g. `g = 0`) wraps to just under 2^64 as in LogGOPSim (the NIC is then busy
//!   until then). Where a sum passes 2^64 - 1 (a message of about 2^64/G bytes, or an op
//!   waiting for such a wrapped time), LogGOPSim wraps round to an early time; the run stops
//!   there ([`SimResult::overflow`], E0047) unless [`LogGP::wrap`] takes LogGOPSim's value.
//! - **Postal** and **pipelining postal** (the recursive-multiplying paper, Section 3 and the
//!   simulator of Section 6), one definition with `alpha = alpha_p + alpha_r`: a send of n bytes
//!   keeps its CPU busy for `alpha_r + n*beta` (so b sends issued back to back take
//!   `b*(alpha_r + n*beta)`, the non-overlappable part) and arrives `alpha_p` after that (the
//!   part that overlaps with later sends): the last of b messages lands after
//!   `alpha_p + b*(alpha_r + n*beta)`, eq. 3 without the reduction term. Plain postal is
//!   `alpha_p = 0, alpha_r = alpha`: one message at a time, each `alpha + n*beta`. Receiving costs
//!   nothing, a receive completes when both it is posted and its message has arrived, a send
//!   completes when its CPU time ends, and the reductions (`n*gamma`, plus any fixed time) are
//!   the schedule's `calc` ops, which occupy the CPU. An op starts when its dependencies are met
//!   and its CPU is free; a host finishes when its last op completes.
//! - **Flow** ([`fluid`], [`flow`]): the network the file describes ([`crate::net`]): a lowered
//!   host schedule's messages as flows sharing link bandwidth on their routes ([`fluid::run`]),
//!   ForestColl's trees as pipelined fluid flows ([`flow`]).
//! - **Packet** ([`packet`]): the same network at packet level, in integer picoseconds: MTU and
//!   headers, finite switch-port buffers with lossless credit flow control, minimal, ECMP or the
//!   Canary paper's adaptive routing per packet, switch processes that aggregate per packet,
//!   random uniform background traffic, several seeds; a [`packet::PacketRun`].
//!
//! The packet and flow-level simulators share one event queue ([`radix`]).
//!
//! Results ([`SimResult`]): per-rank finish times, the maximum, the event count (LogGOPSim's:
//! one per op and one per message), what was left unmatched, and optionally a timeline, which
//! [`trace::chrome_json`] turns into Chrome trace JSON for Perfetto.

pub mod engine;
pub mod flow;
pub mod fluid;
pub mod packet;
pub mod prefetch;
pub mod radix;
pub mod read;
pub mod stdsort;
pub mod trace;

pub use engine::{simulate, simulate_bounded};

use crate::sema::model::{CostModel, CostModelKind, Family, Model as Checked, ModelParam};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};

/// The declared model `collc sim` runs under: `asked`, else the `sim` target's, else the
/// schedule's, else the only declared postal, pipelining postal or LogGP model; None when no
/// rule names one (the flow model on the topology, or LogGP defaults without a topology).
pub fn model_name(m: &Checked, asked: Option<&str>) -> Option<String> {
    let runnable = |k: CostModelKind| {
        matches!(
            k,
            CostModelKind::Postal | CostModelKind::PipeliningPostal | CostModelKind::LogGP
        )
    };
    let from_target = m.sim_target_model().map(str::to_string);
    let from_schedule = m.schedule.as_ref().and_then(|s| match &s.family {
        Family::RecursiveMultiplying { model, .. } => model.clone(),
        _ => None,
    });
    let only = {
        let r: Vec<&str> = m
            .models
            .iter()
            .filter(|x| runnable(x.kind))
            .map(|x| x.name.as_str())
            .collect();
        (r.len() == 1).then(|| r[0].to_string())
    };
    asked
        .map(str::to_string)
        .or(from_target)
        .or(from_schedule)
        .or(only)
}

/// LogGP parameters in ticks (per byte for `G` and `O`); `S` in bytes.
#[allow(non_snake_case)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogGP {
    pub L: u64,
    pub o: u64,
    pub g: u64,
    pub G: u64,
    pub O: u64,
    pub S: u64,
    /// Where LogGOPSim's unsigned sums pass 2^64 - 1 and wrap round to an early time (a
    /// 2^64-1 byte message, an op waiting for a 0-byte message's wrapped time): true takes
    /// LogGOPSim's wrapped value, false (the default) stops the run there (E0047).
    pub wrap: bool,
}

impl Default for LogGP {
    /// LogGOPSim's defaults (in ns): L=2500, o=1500, g=1000, G=6, O=0, S=65535.
    fn default() -> Self {
        LogGP {
            L: 2500,
            o: 1500,
            g: 1000,
            G: 6,
            O: 0,
            S: 65535,
            wrap: false,
        }
    }
}

/// The (pipelining) postal model in ticks; `beta` per byte. Plain postal has `alpha_p = 0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Postal {
    pub alpha_p: u64,
    pub alpha_r: u64,
    pub beta: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    LogGP(LogGP),
    Postal(Postal),
}

impl Model {
    /// One line naming the model and its parameters in `unit`.
    pub fn describe(&self, unit: TimeUnit) -> String {
        let t = |x: u64| unit.show(x);
        match self {
            Model::LogGP(m) => format!(
                "LogGP: L={}, o={} g={}, G={}, O={}, S={} (times in ns{})",
                t(m.L),
                t(m.o),
                t(m.g),
                t(m.G),
                t(m.O),
                m.S,
                if m.wrap { ", modulo 2^64" } else { "" }
            ),
            Model::Postal(m) if m.alpha_p == 0 => format!(
                "postal: alpha={}, beta={} per byte (times in ns)",
                t(m.alpha_r),
                t(m.beta)
            ),
            Model::Postal(m) => format!(
                "pipelining postal: alpha_p={}, alpha_r={}, beta={} per byte (times in ns)",
                t(m.alpha_p),
                t(m.alpha_r),
                t(m.beta)
            ),
        }
    }
}

/// The length of one tick, in femtoseconds (1 ns = 1,000,000).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeUnit {
    pub fs_per_tick: u64,
}

impl TimeUnit {
    pub const NS: TimeUnit = TimeUnit {
        fs_per_tick: 1_000_000,
    };
    pub const PS: TimeUnit = TimeUnit { fs_per_tick: 1_000 };
    pub const FS: TimeUnit = TimeUnit { fs_per_tick: 1 };

    /// The tick in seconds, exactly.
    pub fn seconds(self) -> BigRational {
        BigRational::new(
            BigInt::from(self.fs_per_tick),
            BigInt::from(1_000_000_000_000_000u64),
        )
    }

    /// The coarsest of ns, ps and fs in which every time (seconds) is a whole number of ticks
    /// (fs, rounding, if none is).
    pub fn fit<'a>(times: impl IntoIterator<Item = &'a BigRational> + Clone) -> TimeUnit {
        [TimeUnit::NS, TimeUnit::PS]
            .into_iter()
            .find(|u| {
                let tick = u.seconds();
                times.clone().into_iter().all(|t| (t / &tick).is_integer())
            })
            .unwrap_or(TimeUnit::FS)
    }

    /// `secs` in ticks, rounded to the nearest tick; None if negative or too large.
    pub fn ticks(self, secs: &BigRational) -> Option<u64> {
        let q = secs / self.seconds();
        let half = BigRational::new(BigInt::one(), BigInt::from(2));
        (q + half).floor().to_integer().to_u64()
    }

    /// Ticks as nanoseconds.
    pub fn ns(self, ticks: u64) -> f64 {
        ticks as f64 * self.fs_per_tick as f64 / 1e6
    }

    /// Ticks as nanoseconds, exactly, e.g. `1442.8`.
    pub fn show(self, ticks: u64) -> String {
        let fs = u128::from(ticks) * u128::from(self.fs_per_tick);
        let whole = fs / 1_000_000;
        let frac = fs % 1_000_000;
        if frac == 0 {
            return whole.to_string();
        }
        let f = format!("{frac:06}");
        format!("{whole}.{}", f.trim_end_matches('0'))
    }
}

/// What to simulate with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimOptions {
    pub model: Model,
    /// Record every op's interval (for [`trace::chrome_json`]).
    pub trace: bool,
}

/// One op's place on the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpSpan {
    pub rank: u32,
    pub op: u32,
    pub cpu: u8,
    /// Start and end of the CPU time the op takes (a receive: the overhead of taking its
    /// message in; a postal receive: the instant it completes).
    pub start: u64,
    pub end: u64,
    /// When the op became executable and was issued (a receive: when it was posted).
    pub issued: u64,
    /// When its dependents could go ahead.
    pub completed: u64,
}

/// A send or receive left in LogGOPSim's queues at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leftover {
    /// The rank whose queue holds it.
    pub host: u32,
    /// The other side (the sender of a message, the source a receive waits for).
    pub peer: u32,
    pub tag: u32,
    /// The op: (rank, index) of the send or of the receive.
    pub op: (u32, u32),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimResult {
    /// Per rank, in ticks.
    pub finish: Vec<u64>,
    pub max: u64,
    /// The first rank that finishes last.
    pub max_rank: u32,
    /// LogGOPSim's count: one per op issued and one per message.
    pub events: u64,
    pub messages: u64,
    pub ops_run: usize,
    pub ops_total: usize,
    pub cpus: u32,
    pub nics: u32,
    /// Messages no receive took ("unexpected queue").
    pub unexpected: Vec<Leftover>,
    /// Receives no message reached ("receive queue").
    pub unmatched: Vec<Leftover>,
    /// Per op, when traced: `timeline[rank][op]`, None for ops that never ran.
    pub timeline: Option<Vec<Vec<Option<OpSpan>>>>,
    /// The first op (rank, op) whose simulated time went past `u64::MAX` ticks (or below 0);
    /// the run stopped there.
    pub overflow: Option<(u32, u32)>,
    /// The first op (rank, op) whose LogGP time went below zero and wrapped to just under
    /// 2^64, as in LogGOPSim: a 0-byte message's `(0-1)*G` with `t + g < G` (see the module
    /// doc). The run goes on with LogGOPSim's value.
    pub wrapped: Option<(u32, u32)>,
    /// Whether the run stopped at the event limit.
    pub stopped: bool,
}

impl SimResult {
    /// True when LogGOPSim would print times: empty queues and every op run.
    pub fn complete(&self) -> bool {
        self.unexpected.is_empty() && self.unmatched.is_empty() && self.ops_run == self.ops_total
    }
}

/// Why a declared cost model cannot drive the simulator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    pub message: String,
    pub help: String,
}

fn param(m: &CostModel, name: &str) -> BigRational {
    match m.params.get(name) {
        Some(ModelParam::Quantity(q)) => q.value.clone(),
        _ => BigRational::zero(),
    }
}

/// A declared cost model as a simulator model: the model, its time unit, and the time per
/// byte of a reduction (`gamma`; LogGP has none) in seconds.
pub fn from_cost_model(m: &CostModel) -> Result<(Model, TimeUnit, BigRational), ModelError> {
    let names: &[&str] = match m.kind {
        CostModelKind::LogGP => &["L", "o", "g", "G", "O"],
        CostModelKind::Postal => &["alpha", "beta", "gamma"],
        CostModelKind::PipeliningPostal => &["alpha_p", "alpha_r", "beta", "gamma"],
        CostModelKind::Flow | CostModelKind::Packet => {
            return Err(ModelError {
                message: format!(
                    "model `{}` is a {} model, which simulates the file's network rather than a GOAL schedule",
                    m.name,
                    m.kind.name()
                ),
                help: "run it with `collc sim FILE.coll --model NAME` on a file with a topology, or pick a `postal`, `pipelining_postal` or `loggp` model".into(),
            });
        }
    };
    let values: Vec<BigRational> = names.iter().map(|n| param(m, n)).collect();
    let unit = TimeUnit::fit(values.iter());
    let t = |i: usize| {
        unit.ticks(&values[i]).ok_or_else(|| ModelError {
            message: format!("`{}` of model `{}` is out of range", names[i], m.name),
            help: "use a time between 0 and about 5 hours".into(),
        })
    };
    let model = match m.kind {
        CostModelKind::LogGP => Model::LogGP(LogGP {
            L: t(0)?,
            o: t(1)?,
            g: t(2)?,
            G: t(3)?,
            O: t(4)?,
            S: param(m, "S").to_integer().to_u64().unwrap_or(u64::MAX),
            wrap: false,
        }),
        CostModelKind::Postal => Model::Postal(Postal {
            alpha_p: 0,
            alpha_r: t(0)?,
            beta: t(1)?,
        }),
        _ => Model::Postal(Postal {
            alpha_p: t(0)?,
            alpha_r: t(1)?,
            beta: t(2)?,
        }),
    };
    let gamma = match m.kind {
        CostModelKind::LogGP => BigRational::zero(),
        CostModelKind::Postal => values[2].clone(),
        _ => values[3].clone(),
    };
    Ok((model, unit, gamma))
}
