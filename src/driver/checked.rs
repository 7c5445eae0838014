//! A `.coll` file read and checked without resolving `schedule auto`: for the jobs that use
//! the file's topology, collective and models but never build its schedule (a comparison
//! over sizes, a calibration). Resolving `auto` simulates every family at the file's size
//! (on two MI250 boxes that solves forests for most of a minute), which such a job would pay
//! for nothing.

use super::{Input, LoadOptions, read};
use crate::diag::{Diagnostic, FileId, SourceMap};
use crate::sema::{self, model::Model};

/// Reads `input` into `files` and checks it with `opts` (its `param` overrides, limits and
/// cancel flag); the model when the file has no diagnostic, else every diagnostic. The id of
/// the file read comes back either way when it could be read.
pub(crate) fn check_into(
    input: &Input,
    opts: &LoadOptions,
    files: &mut SourceMap,
) -> (Option<FileId>, Result<Model, Vec<Diagnostic>>) {
    let id = match read(input, files, opts.max_input_bytes) {
        Ok(id) => id,
        Err(d) => return (None, Err(vec![*d])),
    };
    let checked = sema::check(files, id, &opts.sema());
    let model = match checked.model {
        Some(m) if checked.diagnostics.is_empty() => Ok(m),
        _ => Err(checked.diagnostics),
    };
    (Some(id), model)
}
