//! A checked file's host-based schedule as the flow-level simulator and the round model run
//! it: lowered, proved ([`crate::lower::lower_and_verify`]) and converted to GOAL with
//! reductions timed by the flow model's `gamma` in picosecond units; rank r on the compute
//! node the collective puts it on.

use super::FlowRun;
use crate::backend::goal::{self, GoalOptions, GoalSchedule};
use crate::cost::rounds::{RoundCost, round_cost};
use crate::diag::{Code, Diagnostic};
use crate::net::{FlowParams, Net};
use crate::sema::model::{CostModelKind, Model, NodeId};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;

/// A lowered schedule placed on the network.
pub struct Lowered {
    pub goal: GoalSchedule,
    pub hosts: Vec<NodeId>,
    /// Seconds per GOAL time unit.
    pub tick: BigRational,
    /// Where a run that cannot finish is reported (the schedule).
    pub span: crate::diag::Span,
}

/// One GOAL time unit: 1 ps.
fn tick() -> BigRational {
    BigRational::new(BigInt::from(1), BigInt::from(1_000_000_000_000u64))
}

/// Lowers, proves and converts `m`'s schedule (any family that lowers to host processes).
pub fn lower(m: &Model, params: &FlowParams) -> Result<Lowered, Vec<Diagnostic>> {
    // The program and proof of this structure, lowered once for every size (`lower::reuse`).
    let proved = crate::lower::reuse::lowered(m, || crate::lower::lower_and_verify(m))?;
    let (program, proof) = (&proved.0, &proved.1);
    let part = m
        .collective
        .as_ref()
        .map_or(program.spec.part_elements, crate::lower::part_elements);
    let opts = GoalOptions {
        tick: tick(),
        reduce_per_byte: params.gamma.clone(),
        ..GoalOptions::default()
    };
    let span = m.build_span(None);
    let goal = goal::from_verified_at(program, proof, &opts, part)
        .map_err(|e| vec![e.diagnostic(span)])?;
    let ranks = m
        .collective
        .as_ref()
        .map(|c| c.ranks.clone())
        .unwrap_or_default();
    if goal.ranks.len() > ranks.len() {
        return Err(vec![
            Diagnostic::error(
                Code::BadValue,
                span,
                "this schedule has processes that are not ranks (switches); the flow model runs host-based schedules",
            )
            .label("an in-network schedule")
            .help(packet_help(m)),
        ]);
    }
    Ok(Lowered {
        goal,
        hosts: ranks,
        tick: tick(),
        span,
    })
}

/// Where to simulate an in-network schedule instead: under one of the file's `packet` models,
/// named, or under one to declare.
fn packet_help(m: &Model) -> String {
    let names: Vec<String> = m
        .models
        .iter()
        .filter(|x| x.kind == CostModelKind::Packet)
        .map(|x| format!("`--model {}`", x.name))
        .collect();
    match names.as_slice() {
        [] => "simulate it at packet level: declare `model pkt: packet;` and run `collc sim FILE --model pkt`".into(),
        [one] => format!("simulate it at packet level with {one}"),
        [init @ .., last] => format!(
            "simulate it at packet level with one of the file's packet models: {} or {last}",
            init.join(", ")
        ),
    }
}

impl Lowered {
    /// The flow-level simulation; a program that cannot finish (a proved one always can) is
    /// reported as a bug in collc.
    pub fn simulate(
        &self,
        net: &Net,
        params: &FlowParams,
        trace: bool,
    ) -> Result<FlowRun, Vec<Diagnostic>> {
        let t = self.tick.to_f64().unwrap_or(0.0);
        super::run(&self.goal, &self.hosts, t, net, params, trace).map_err(|s| {
            vec![
                Diagnostic::error(
                    Code::GoalInvalid,
                    self.span,
                    format!(
                        "the schedule cannot finish: {} ops never ran (first at rank {})",
                        s.ops_left, s.rank
                    ),
                )
                .label("this schedule")
                .help("this is a bug in collc: please report it with the file"),
            ]
        })
    }

    /// The round model's cost ([`crate::cost::rounds`]).
    pub fn round_cost(&self, net: &Net, params: &FlowParams) -> Option<RoundCost> {
        round_cost(&self.goal, &self.hosts, &self.tick, net, params)
    }
}
