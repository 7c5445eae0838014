//! `shard` and `merge` ([`crate::compare::shard`]): which cells of a sweep a run evaluates, the
//! cells that parts of earlier runs give, and the check, once the sweep is known, that every
//! part was made by this sweep (its fingerprint).

use super::CompareRequest;
use super::flags::at_flag;
use crate::compare::{self, shard::Split};
use crate::diag::{Code, Diagnostic, SourceMap};
use crate::driver::Input;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// The cells to evaluate: `shard`'s rows, or none with `merge` (the parts' cells, and each
/// part's name and fingerprint to check once the sweep is known); `cancel` stops the sweep.
/// A diagnostic for a bad `shard` or part.
pub(super) fn split(
    req: &CompareRequest,
    cancel: Option<Arc<AtomicBool>>,
    files: &mut SourceMap,
) -> Result<(Split, Vec<(String, String)>), Diagnostic> {
    let mut out = Split {
        cancel,
        ..Split::default()
    };
    if let Some(spec) = &req.shard {
        out.shard = Some(compare::shard::parse(spec).map_err(|why| {
            Diagnostic::error(
                Code::BadValue,
                at_flag(files, "shard", spec, 0..spec.len()),
                format!("`--shard {spec}`: {why}"),
            )
            .label("expected K/N")
            .help("write e.g. `--shard 2/3` for the second of three shards")
        })?);
    }
    if req.merge.is_empty() {
        return Ok((out, Vec::new()));
    }
    let mut given = rustc_hash::FxHashMap::default();
    let mut prints = Vec::new();
    for input in &req.merge {
        let shown = input.name();
        let bad = |files: &mut SourceMap, why: String| {
            Diagnostic::error(
                Code::BadValue,
                at_flag(files, "merge", &shown, 0..shown.len()),
                format!("`{shown}` is not a part of a sharded sweep: {why}"),
            )
            .label("this part")
            .help("give `--merge` the files `collc compare --shard K/N` wrote")
        };
        let text = match input {
            Input::Path(path) => {
                std::fs::read_to_string(path).map_err(|e| bad(files, e.to_string()))?
            }
            Input::Text { text, .. } => text.clone(),
        };
        let part = compare::shard::read(&text).map_err(|why| bad(files, why))?;
        given.extend(part.cells);
        prints.push((shown, part.fingerprint));
    }
    out.given = Some(given);
    Ok((out, prints))
}

/// With `merge`: every part's fingerprint is the merged sweep's, else a diagnostic.
pub(super) fn same_sweep(
    cmp: &compare::Comparison,
    prints: &[(String, String)],
    files: &mut SourceMap,
) -> Result<(), Diagnostic> {
    let want = compare::shard::fingerprint(cmp);
    match prints.iter().find(|(_, f)| *f != want) {
        None => Ok(()),
        Some((shown, theirs)) => Err(Diagnostic::error(
            Code::BadValue,
            at_flag(files, "merge", shown, 0..shown.len()),
            format!("`{shown}` is a part of another sweep"),
        )
        .label("this part")
        .help(format!(
            "merge with the file and flags the parts were made with; this sweep is `{want}`, the part's `{theirs}`"
        ))),
    }
}
