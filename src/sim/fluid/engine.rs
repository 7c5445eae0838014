//! The event loop of the flow-level simulator (see [`super`]).

use super::FlowRun;
use crate::backend::goal::GoalSchedule;
use crate::net::{FlowParams, Net};
use crate::sema::model::NodeId;

/// Runs a GOAL schedule whose rank r sits on node `hosts[r]`, GOAL time units `tick` seconds.
pub fn run(
    _s: &GoalSchedule,
    _hosts: &[NodeId],
    _tick: f64,
    _net: &Net,
    _params: &FlowParams,
    _trace: bool,
) -> FlowRun {
    unimplemented!("landing in the next commit")
}
