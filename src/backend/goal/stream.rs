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
use crate::ir::verify::{Finding, Proof};
use crate::par;
use std::io::Write;

/// IR ops per window: about 15 MB of GOAL text.
const WINDOW_OPS: usize = 1 << 18;

/// Why [`write_verified`] stopped: the program has no GOAL form, or the output failed.
#[derive(Debug)]
pub enum WriteError {
    Goal(GoalError),
    Io(std::io::Error),
    /// [`verify_and_write`] only: the program is not proved; what was written must go.
    Refuted(Vec<Finding>),
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
    out: &mut (dyn Write + Send),
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
    out: &mut (dyn Write + Send),
    window_ops: usize,
) -> Result<(), WriteError> {
    check_proof(p, proof)?;
    stream(p, opts, out, window_ops)
}

/// Verifies `p` ([`crate::ir::verify::verify_beside`]) and writes its GOAL text at the same
/// time, on the cores the proof leaves idle: the bytes are those of [`write_verified`] with
/// the proof. The text is written before the proof is complete, so when this returns an error
/// (a [`WriteError::Refuted`] above all) the caller must discard what was written; the CLI
/// writes a temporary file that is renamed only on success.
pub fn verify_and_write(
    p: &Program,
    opts: &GoalOptions,
    out: &mut (dyn Write + Send),
) -> Result<Proof, WriteError> {
    let (proof, written) = crate::ir::verify::verify_beside(p, || stream(p, opts, out, WINDOW_OPS));
    let proof = proof.map_err(WriteError::Refuted)?;
    written.unwrap_or(Ok(()))?;
    Ok(proof)
}

/// Converts, checks and writes `p` a window at a time (the module doc); `p` must be well
/// formed (step 1 of the verifier), and its GOAL is right only if it is also proved.
fn stream(
    p: &Program,
    opts: &GoalOptions,
    out: &mut (dyn Write + Send),
    window_ops: usize,
) -> Result<(), WriteError> {
    let conv = Converter::new(p, opts, p.spec.part_elements)?;
    let n = p.procs.len();
    if n == 0 {
        // The structure step's own problem for an empty schedule.
        if let Some(problem) = super::validate::structure(&GoalSchedule::default()).first() {
            return Err(rejected(problem).into());
        }
    }
    out.write_all(head(Some(&conv.comment()), n).as_bytes())?;
    if par::threads() <= 1 {
        let mut from = 0;
        while from < n {
            let to = window_end(p, from, window_ops);
            for text in convert_window(&conv, p, from..to)? {
                out.write_all(&text)?;
            }
            from = to;
        }
        return Ok(());
    }
    // Windows are made on all cores while a writer thread writes the previous ones (at most
    // two wait), so the copy into the output overlaps the conversion. A write error stops the
    // writer, which makes the next hand-over fail and the conversion stop.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Vec<u8>>>(2);
    std::thread::scope(|scope| {
        let writer = scope.spawn(move || -> std::io::Result<()> {
            for window in rx {
                for text in window {
                    out.write_all(&text)?;
                }
            }
            Ok(())
        });
        let made = (|| {
            let mut from = 0;
            while from < n {
                let to = window_end(p, from, window_ops);
                let window = convert_window(&conv, p, from..to)?;
                if tx.send(window).is_err() {
                    break;
                }
                from = to;
            }
            Ok::<(), GoalError>(())
        })();
        drop(tx);
        let written = writer
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        made?;
        written?;
        Ok(())
    })
}

/// The end of the window that starts at process `from`: about `window_ops` IR ops, at least
/// one process.
fn window_end(p: &Program, from: usize, window_ops: usize) -> usize {
    let mut to = from;
    let mut ops = 0;
    while to < p.procs.len() && (to == from || ops + p.procs[to].ops.len() <= window_ops) {
        ops += p.procs[to].ops.len();
        to += 1;
    }
    to
}

/// The GOAL text of processes `window`, converted and checked in blocks on all cores; the
/// blocks' texts in rank order.
fn convert_window(
    conv: &Converter,
    p: &Program,
    window: std::ops::Range<usize>,
) -> Result<Vec<Vec<u8>>, GoalError> {
    let n = p.procs.len();
    let from = window.start;
    let len = window.len();
    let blocks = par::map_blocks(len, par::block_size(len, 16), |range| {
        let ranks = range.start + from..range.end + from;
        let mut cx = conv.ranks();
        // About 50 bytes of text per IR op.
        let ops: usize = ranks.clone().map(|r| p.procs[r].ops.len()).sum();
        let mut text = Vec::with_capacity(64 * ops + 32 * range.len());
        let mut problems = Vec::new();
        for r in ranks {
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
    blocks.into_iter().collect()
}
