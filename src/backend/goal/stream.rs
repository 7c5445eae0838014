//! GOAL text for a verified program, written as it is made ([`write_verified`]): what
//! `collc build --target goal` runs. The bytes are exactly those of
//! `write(&from_verified(p, proof, opts)?)`, but no [`super::GoalSchedule`] and no whole text
//! are ever held: processes are converted, checked (the structure step of
//! [`super::validate`], as in `from_verified`) and written a window at a time, each window on
//! all cores ([`crate::par`]) and written in rank order, so memory stays at a few windows of
//! text whatever the program's size. A schedule of millions of ops otherwise holds its GOAL
//! ops and its text (hundreds of megabytes) at once.

use super::GoalError;
use super::convert::{Converter, check_proof, rejected};
use super::validate::{Labels, rank_structure};
use super::write::{head, write_rank};
use super::{GoalOptions, GoalSchedule};
use crate::ir::Program;
use crate::ir::verify::Proof;
use crate::par;
use std::io::Write;

/// IR ops per window: about 15 MB of GOAL text.
const WINDOW_OPS: usize = 1 << 18;

/// Why [`write_verified`] stopped: the program has no GOAL form, or the output failed.
#[derive(Debug)]
pub enum WriteError {
    Goal(GoalError),
    Io(std::io::Error),
}

impl From<std::io::Error> for WriteError {
    fn from(e: std::io::Error) -> WriteError {
        WriteError::Io(e)
    }
}

impl From<GoalError> for WriteError {
    fn from(e: GoalError) -> WriteError {
        WriteError::Goal(e)
    }
}

/// Writes the GOAL text of a verified program to `out` (see the module doc). On an error,
/// part of the text may have been written: callers that write files write a temporary one.
pub fn write_verified(
    p: &Program,
    proof: &Proof,
    opts: &GoalOptions,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    write_verified_in_windows(p, proof, opts, out, WINDOW_OPS)
}

/// [`write_verified`] with windows of about `window_ops` IR ops (at least one process each);
/// tests use small windows to show the text does not depend on them.
#[doc(hidden)]
pub fn write_verified_in_windows(
    p: &Program,
    proof: &Proof,
    opts: &GoalOptions,
    out: &mut dyn Write,
    window_ops: usize,
) -> Result<(), WriteError> {
    check_proof(p, proof)?;
    let conv = Converter::new(p, opts)?;
    let n = p.procs.len();
    if n == 0 {
        // The structure step's own problem for an empty schedule.
        if let Some(problem) = super::validate::structure(&GoalSchedule::default()).first() {
            return Err(rejected(problem).into());
        }
    }
    out.write_all(head(Some(&conv.comment()), n).as_bytes())?;
    let mut from = 0;
    while from < n {
        let mut to = from;
        let mut ops = 0;
        while to < n && (to == from || ops + p.procs[to].ops.len() <= window_ops) {
            ops += p.procs[to].ops.len();
            to += 1;
        }
        let len = to - from;
        let blocks = par::map_blocks(len, par::block_size(len, 16), |range| {
            let mut cx = conv.ranks();
            let mut text = Vec::new();
            let mut problems = Vec::new();
            for r in range.start + from..range.end + from {
                let rank = cx.rank(r)?;
                let mut labels = Labels::default();
                rank_structure(n as u64, r as u32, &rank, &mut labels, &mut problems);
                if let Some(problem) = problems.first() {
                    return Err(rejected(problem));
                }
                write_rank(&mut text, r, &rank);
            }
            Ok(text)
        });
        for b in blocks {
            out.write_all(&b?)?;
        }
        from = to;
    }
    Ok(())
}
