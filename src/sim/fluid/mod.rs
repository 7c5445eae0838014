//! Flow-level simulation on the network the file describes ([`crate::net`]): messages are flows
//! on their routes that share link bandwidth max-min fairly, arriving their route's latency
//! plus the model's per-message overhead after their last byte left; small messages are
//! latency-bound and large ones bandwidth-bound. Host-based schedules run as their lowered
//! GOAL programs ([`run`]); forests run tree by tree ([`run_forest`]). Both give a
//! [`FlowRun`].
//!
//! Simulated time is `f64` seconds: rates shared among flows are not exact fractions worth
//! keeping, and IEEE arithmetic in a fixed order gives the same bits on every machine.

pub mod engine;
mod flows;
pub mod forest;
mod layout;
pub mod lowered;
pub mod outcome;
mod pair;
mod routes;

pub use engine::{Stuck, run};
pub use forest::{run_forest, run_forest_in};
pub use lowered::{Lowered, lower, lower_sized};
pub use outcome::{FlowRun, LaneSpan, bus_factor};
pub(crate) use pair::{NONE, pair};

/// Seconds in the most readable unit, with three or four significant digits: `150.0 ns`,
/// `25.00 us`, `12.30 ms`, `2.000 s`.
pub fn show_seconds(s: f64) -> String {
    if s < 1e-6 {
        format!("{:.1} ns", s * 1e9)
    } else if s < 1e-3 {
        format!("{:.2} us", s * 1e6)
    } else if s < 1.0 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{s:.3} s")
    }
}
