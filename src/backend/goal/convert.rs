//! Conversion from the IR of whole programs ([`from_ir`], [`from_verified`], and the shared
//! [`Converter`] the streaming writer uses); the mapping is described in the module doc of
//! [`super`], and each process is converted by [`super::rank`].

use super::matching::FastMap;
use super::rank::{Measure, RankCx, SliceBytes, goal_tags, measure};
use super::{ANY_SOURCE, GoalError, GoalOptions, GoalSchedule, err, validate};
use crate::ir::verify::Proof;
use crate::ir::{Program, Slice};
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

/// How the ops of `s`, a schedule converted from `p` ([`from_verified_at`] at any size), are
/// sized at every size: the GOAL ops of one program do not change with the collective's size,
/// only their bytes and times, and each of those is one measure of one slice (its bytes, or
/// the time to reduce or copy them). Ops that measure the same slice alike form a class; a
/// sweep over sizes converts once, classes once, and sizes only the classes per size
/// ([`Sizing::amounts`]).
pub struct Sizing {
    /// Every op's class, rank by rank in op order.
    pub class: Vec<u32>,
    /// What each class measures.
    keys: Vec<(Measure, Slice)>,
}

/// The classes of `s`'s ops ([`Sizing`]).
pub fn sizing(p: &Program, s: &GoalSchedule) -> Result<Sizing, GoalError> {
    let mut index: FastMap<(Measure, Slice), u32> = FastMap::default();
    let mut keys = Vec::new();
    let mut class = Vec::with_capacity(s.ranks.iter().map(|r| r.ops.len()).sum());
    for (pi, r) in s.ranks.iter().enumerate() {
        for g in &r.ops {
            let key = measure(p, pi, g)?;
            let next = keys.len() as u32;
            let c = *index.entry(key).or_insert_with(|| {
                keys.push(key);
                next
            });
            class.push(c);
        }
    }
    Ok(Sizing { class, keys })
}

impl Sizing {
    /// Each class's amount (bytes, or time in `opts`' ticks) with parts of `part_elements`
    /// elements, by class.
    pub fn amounts(
        &self,
        p: &Program,
        opts: &GoalOptions,
        part_elements: u64,
    ) -> Result<Vec<u64>, GoalError> {
        let bytes = SliceBytes::new(p, part_elements);
        let mut cx = RankCx::new(p, opts, &[], &bytes);
        self.keys.iter().map(|&(m, s)| cx.amount_of(m, s)).collect()
    }
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
