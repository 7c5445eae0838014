//! A checked file's host-based schedule as the flow-level simulator and the round model run
//! it: lowered, proved ([`crate::lower::lower_and_verify`]) and converted to GOAL with
//! reductions timed by the flow model's `gamma` in picosecond units; rank r on the compute
//! node the collective puts it on.
//!
//! A sweep over sizes ([`lower_sized`]: `compare`, `schedule auto`) converts each lowered
//! program once, keeps the conversion beside the program ([`Converted`]) with its ops' classes
//! ([`crate::backend::goal::Sizing`]), and gives every other size only its classes' bytes and
//! times ([`Amounts`]): the GOAL ops of a program do not change with the size.

use super::FlowRun;
use crate::backend::goal::{self, GoalOptions, GoalSchedule, OpKind};
use crate::cost::rounds::{RoundCost, round_cost};
use crate::diag::{Code, Diagnostic};
use crate::lower::kept::Kept;
use crate::net::{FlowParams, Net};
use crate::sema::model::{CostModelKind, Model, NodeId};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;
use std::sync::Arc;

/// A lowered schedule placed on the network.
pub struct Lowered {
    pub goal: Arc<GoalSchedule>,
    /// Every op's bytes or time at this size, when `goal` was converted at another size or
    /// under other options ([`lower_sized`]); None when `goal`'s own are this size's.
    pub amounts: Option<Amounts>,
    /// `goal`'s structure as the engine runs it, shared by a sweep's sizes ([`lower_sized`]).
    pub prepared: Option<Arc<super::engine::Prepared>>,
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
    lower_in(m, params, false)
}

/// [`lower`] for one size of a sweep: the GOAL conversion of the program's structure is
/// shared with the sweep's other sizes and this size's bytes and times are
/// [`Lowered::amounts`]. For [`Lowered::simulate`]; the round model sizes a copy.
pub fn lower_sized(m: &Model, params: &FlowParams) -> Result<Lowered, Vec<Diagnostic>> {
    lower_in(m, params, true)
}

fn lower_in(m: &Model, params: &FlowParams, shared: bool) -> Result<Lowered, Vec<Diagnostic>> {
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
    let diag = |e: goal::GoalError| vec![e.diagnostic(span)];
    let (goal, amounts, prepared) = if shared {
        let c = converted(&proved, &opts, part).map_err(diag)?;
        let amounts = if c.part == part && c.opts == opts {
            None
        } else {
            let table = c.sizing.amounts(program, &opts, part).map_err(diag)?;
            Some(Amounts {
                table,
                converted: c.clone(),
            })
        };
        (c.goal.clone(), amounts, Some(c.prepared.clone()))
    } else {
        let goal = goal::from_verified_at(program, proof, &opts, part).map_err(diag)?;
        (Arc::new(goal), None, None)
    };
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
        amounts,
        prepared,
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
        let amounts = self.amounts.as_ref().map(|a| super::engine::Sizes {
            table: &a.table,
            laid: &a.converted.laid,
        });
        let prepared = self.prepared.as_deref();
        let (goal, hosts) = (&self.goal, &self.hosts);
        super::run(goal, amounts, prepared, hosts, t, net, params, trace).map_err(|s| {
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
        match &self.amounts {
            None => round_cost(&self.goal, &self.hosts, &self.tick, net, params),
            Some(a) => {
                let sized = sized(&self.goal, &a.global());
                round_cost(&sized, &self.hosts, &self.tick, net, params)
            }
        }
    }
}

/// `s` with every op's bytes or time from `amounts` (by global op index).
fn sized(s: &GoalSchedule, amounts: &[u64]) -> GoalSchedule {
    let mut out = s.clone();
    let ops = out.ranks.iter_mut().flat_map(|r| r.ops.iter_mut());
    for (op, &x) in ops.zip(amounts) {
        match &mut op.kind {
            OpKind::Send { size, .. } | OpKind::Recv { size, .. } => *size = x,
            OpKind::Calc { time } => *time = x,
        }
    }
    out
}

/// A program's GOAL conversion at one size and options, kept beside it for a sweep's other
/// sizes ([`lower_sized`]).
struct Converted {
    part: u64,
    opts: GoalOptions,
    goal: Arc<GoalSchedule>,
    prepared: Arc<super::engine::Prepared>,
    /// The ops' classes, and each op's class in `prepared`'s layout.
    sizing: goal::Sizing,
    laid: Vec<u32>,
}

/// One size's bytes and times of a conversion made at another ([`lower_sized`]): by class.
pub struct Amounts {
    table: Vec<u64>,
    converted: Arc<Converted>,
}

impl Amounts {
    /// Every op's bytes or time, by global op index.
    pub fn global(&self) -> Vec<u64> {
        let class = &self.converted.sizing.class;
        class.iter().map(|&c| self.table[c as usize]).collect()
    }
}

/// A lowered program as a key: the very program (held, so no other program takes its
/// address while its conversion is kept).
struct Program(crate::lower::reuse::Proved);

impl PartialEq for Program {
    fn eq(&self, o: &Program) -> bool {
        Arc::ptr_eq(&self.0, &o.0)
    }
}

/// Conversions kept, up to [`crate::lower::reuse::BUDGET`] ops in all.
static CONVERTED: Kept<Program, Arc<Converted>> = Kept::new(crate::lower::reuse::BUDGET);

/// `proved`'s conversion: kept from an earlier size, else made at `part` under `opts`.
fn converted(
    proved: &crate::lower::reuse::Proved,
    opts: &GoalOptions,
    part: u64,
) -> Result<Arc<Converted>, goal::GoalError> {
    let make = || {
        let goal = goal::from_verified_at(&proved.0, &proved.1, opts, part)?;
        let sizing = goal::sizing(&proved.0, &goal)?;
        let prepared = super::engine::Prepared::new(&goal);
        let laid = prepared.laid(&sizing.class);
        Ok(Arc::new(Converted {
            part,
            opts: opts.clone(),
            prepared: Arc::new(prepared),
            goal: Arc::new(goal),
            sizing,
            laid,
        }))
    };
    CONVERTED.get(Program(proved.clone()), make, |_| proved.0.op_count())
}

#[cfg(test)]
mod tests {
    use super::{lower, lower_sized};
    use crate::net::{Net, for_file};

    /// A ring allreduce of `bytes` over 6 hosts of two switches, reductions at 0.5 ns a byte.
    fn file(bytes: u64) -> crate::sema::model::Model {
        let src = format!(
            "topology t {{ compute h[6]; switch a; switch b; \
             for i in 0..3 {{ link h[i] <-> a : 25 GB/s; link h[i + 3] <-> b : 25 GB/s; }} \
             link a <-> b : 50 GB/s; }} \
             collective allreduce {{ size: {bytes} B; dtype: f32; op: sum; }} \
             schedule ring {{ channels: 2; }} \
             model m: flow {{ gamma: 0.5 ns/B; }}"
        );
        crate::sema::checked(&src)
    }

    /// A sweep's sizes share one conversion and differ in their ops' bytes and times only:
    /// sized from another size's conversion, a program is op for op the one converted at its
    /// own size (uneven chunks and reduction times included), and simulates to the same run.
    #[test]
    fn a_size_sized_from_another_sizes_conversion_is_its_own() {
        let first = file(48_000);
        let params = for_file(&first, None);
        let a = lower_sized(&first, &params).expect("lowers");
        assert!(
            a.amounts.is_none(),
            "the first size is the conversion's own"
        );
        // 12,004 bytes: 3,001 elements, which six ranks and two channels do not divide.
        for bytes in [12_004, 1_000_004, 48_000] {
            let m = file(bytes);
            let sized = lower_sized(&m, &params).expect("lowers");
            // (Another test's programs may have pushed this one's conversion out of the cache;
            // then this size is converted for itself, and the comparison below still holds.)
            let own = lower(&m, &params).expect("lowers");
            let goal = match &sized.amounts {
                Some(x) => super::sized(&sized.goal, &x.global()),
                None => (*sized.goal).clone(),
            };
            assert_eq!(goal, *own.goal, "{bytes} B");
            let net = Net::new(m.topology.as_ref().expect("a topology"));
            let run = |l: &super::Lowered| l.simulate(&net, &params, false).expect("runs");
            assert_eq!(run(&sized), run(&own), "{bytes} B");
        }
    }
}
