//! Conversion from the IR of whole programs ([`from_ir`], [`from_verified`], and the shared
//! [`Converter`] the streaming writer uses); the mapping is described in the module doc of
//! [`super`], and each process is converted by [`super::rank`].

use super::rank::{RankCx, SliceBytes, goal_tags};
use super::{ANY_SOURCE, GoalError, GoalOptions, GoalSchedule, err, validate};
use crate::ir::Program;
use crate::ir::verify::Proof;
use crate::par;
use num_rational::BigRational;
use num_traits::Zero;

/// Converts a program to GOAL; see the module doc. The result is checked with [`validate`].
pub fn from_ir(p: &Program, opts: &GoalOptions) -> Result<GoalSchedule, GoalError> {
    convert(p, opts, true, p.spec.part_elements)
}

/// [`from_ir`] for a program that [`crate::ir::verify::verify`] proved (`proof` is its
/// answer; a proof of another program is refused): the result is checked by [`validate`]'s
/// structure step only, without its run check. A verified program pairs every receive with one
/// send and has no cycle through dependencies and messages; the conversion gives each message
/// its own (source, tag) and keeps every dependency (an elided copy passes on its own), so the
/// GOAL schedule runs to the end by construction. tests/goal.rs checks that claim with the full
/// [`validate`] on converted programs of every schedule family.
pub fn from_verified(
    p: &Program,
    proof: &Proof,
    opts: &GoalOptions,
) -> Result<GoalSchedule, GoalError> {
    check_proof(p, proof)?;
    convert(p, opts, false, p.spec.part_elements)
}

/// [`from_verified`] with parts of `part_elements` elements instead of the program's own: a
/// program's ops name slots, so the same proved program sized for another collective size
/// (`lower::reuse`).
pub fn from_verified_at(
    p: &Program,
    proof: &Proof,
    opts: &GoalOptions,
    part_elements: u64,
) -> Result<GoalSchedule, GoalError> {
    check_proof(p, proof)?;
    convert(p, opts, false, part_elements)
}

/// Every op's bytes (sends, receives) or time (calcs) in `s`, a schedule converted from `p`
/// ([`from_verified_at`] at any size), with parts of `part_elements` elements instead, rank by
/// rank in op order: the GOAL ops of one program do not change with the collective's size,
/// only these numbers, so a sweep over sizes converts once and sizes per size.
pub fn amounts_at(
    p: &Program,
    s: &GoalSchedule,
    opts: &GoalOptions,
    part_elements: u64,
) -> Result<Vec<u64>, GoalError> {
    let bytes = SliceBytes::new(p, part_elements);
    let n = s.ranks.len();
    in_order(par::map_blocks(n, par::block_size(n, 64), |r| {
        let mut cx = RankCx::new(p, opts, &[], &bytes);
        let mut out = Vec::new();
        for pi in r {
            for g in &s.ranks[pi].ops {
                out.push(cx.amount(pi, g)?);
            }
        }
        Ok(out)
    }))
}

/// Refuses a proof of another program (see [`from_verified`]).
pub(super) fn check_proof(p: &Program, proof: &Proof) -> Result<(), GoalError> {
    if proof.ops != p.op_count() {
        return Err(err(
            format!(
                "the proof given is for a program of {} ops, this one has {}",
                proof.ops,
                p.op_count()
            ),
            "pass the proof `ir::verify::verify` returned for this program",
        ));
    }
    Ok(())
}

/// What converting any process needs, computed once: the checked options, the GOAL tag of
/// every send and the chunk sizes.
pub(super) struct Converter<'a> {
    p: &'a Program,
    opts: &'a GoalOptions,
    sends_of: Vec<Vec<(u32, u32, u32)>>,
    bytes: SliceBytes,
}

impl<'a> Converter<'a> {
    /// A converter of `p` with parts of `part_elements` elements.
    pub(super) fn new(
        p: &'a Program,
        opts: &'a GoalOptions,
        part_elements: u64,
    ) -> Result<Self, GoalError> {
        if opts.tick <= BigRational::zero() {
            return Err(err(
                "the GOAL time unit must be positive".into(),
                "use 1 ns, LogGOPSim's unit",
            ));
        }
        let n = p.procs.len();
        if n as u64 >= u64::from(ANY_SOURCE) {
            return Err(err(
                format!("{n} processes do not fit GOAL's 32-bit rank numbers"),
                "simulate fewer ranks",
            ));
        }
        // GOAL tags: per ordered pair, messages numbered in the sender's program order; the
        // receive matched statically (k-th of (p, q, t)) takes the same number.
        // Processes are converted independently, in blocks on all cores (`crate::par`);
        // results and the first error come in process order whatever the threads do.
        let sends_of = in_order(par::map_blocks(n, par::block_size(n, 64), |r| {
            r.map(|pi| goal_tags(pi, &p.procs[pi]))
                .collect::<Result<Vec<_>, _>>()
        }))?;
        Ok(Converter {
            p,
            opts,
            sends_of,
            bytes: SliceBytes::new(p, part_elements),
        })
    }

    /// The comment written before `num_ranks`.
    pub(super) fn comment(&self) -> String {
        let p = self.p;
        format!(
            "GOAL schedule written by collc from {:?} ({} {}, {} processes)",
            p.name,
            p.spec.kind.name(),
            p.spec.dtype.name(),
            p.procs.len()
        )
    }

    /// A converter of single processes; one per block of processes.
    pub(super) fn ranks(&self) -> RankCx<'_> {
        RankCx::new(self.p, self.opts, &self.sends_of, &self.bytes)
    }
}

/// A structure problem of the GOAL output, as the error every conversion gives for it.
pub(super) fn rejected(problem: &super::Problem) -> GoalError {
    err(
        format!("the GOAL output would be rejected: {}", problem.message),
        "this is a bug in collc's GOAL backend or an unverified program; run `collc check` on the IR",
    )
}

fn convert(
    p: &Program,
    opts: &GoalOptions,
    run_check: bool,
    part_elements: u64,
) -> Result<GoalSchedule, GoalError> {
    let conv = Converter::new(p, opts, part_elements)?;
    let n = p.procs.len();
    let ranks = in_order(par::map_blocks(n, par::block_size(n, 64), |r| {
        let mut cx = conv.ranks();
        r.map(|pi| cx.rank(pi)).collect::<Result<Vec<_>, _>>()
    }))?;
    let sched = GoalSchedule {
        comment: Some(conv.comment()),
        ranks,
    };
    let problems = if run_check {
        validate(&sched)
    } else {
        super::validate::structure(&sched)
    };
    match problems.first() {
        Some(problem) => Err(rejected(problem)),
        None => Ok(sched),
    }
}

/// Block results in order, flattened; the first error.
fn in_order<T>(blocks: Vec<Result<Vec<T>, GoalError>>) -> Result<Vec<T>, GoalError> {
    let mut out = Vec::with_capacity(blocks.iter().map(|b| b.as_ref().map_or(0, Vec::len)).sum());
    for b in blocks {
        out.extend(b?);
    }
    Ok(out)
}
