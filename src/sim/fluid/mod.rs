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
pub mod forest;
mod outcome;

pub use engine::run;
pub use forest::{run_forest, run_forest_in};
pub use outcome::{FlowRun, LaneSpan, bus_factor};
