//! Canary, congestion-aware in-network allreduce with dynamic trees
//! (../shared/seeds/canary.txt): the protocol described once, as data, for every executor.
//!
//! - [`protocol`]: the header (Section 4.1), the block descriptor, and the switch logic as an
//!   ordered match-action rule table.
//! - [`switch`]: the interpreter of that table at one switch (what the packet simulator runs,
//!   and what the P4 target is to emit).
//! - [`host`]: blocks, leaders and roots, the workers' packets, the leader's state machine.
//!
//! The packet simulator runs a Canary allreduce with these ([`crate::sim::packet::canary`])
//! and checks the collective's postcondition on every run.

pub mod host;
pub mod protocol;
pub mod switch;
