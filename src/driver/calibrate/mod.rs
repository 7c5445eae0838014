//! The calibration job (`collc calibrate`): a flow model fitted to what a user measured with
//! nccl-tests on the file's machine ([`crate::calibrate`]). The log is read and its table
//! picked ([`fit`]: `table`, else the one that measured the file's collective); the log must
//! have measured the file's collective on as many ranks as the file has. The algorithm is
//! `algo`, else the log's `NCCL_ALGO`, else NCCL's ring (`tree`: NCCL's tree, for an
//! allreduce); the runtime `runtime`, else the file's flow model's, else NCCL; the protocol
//! `proto`, else the log's `NCCL_PROTO`, else Simple.
//!
//! A [`Calibration`] holds the fit (every measured size beside the model's time, the
//! parameters), the fit as the table `collc calibrate` prints ([`table`]) and the `model`
//! declaration to paste into the file (imported files may not declare models).
//!
//! [`calibrate`] fits on a loaded [`Session`]; [`calibrate_file`] reads and checks the file
//! itself without resolving `schedule auto` (a calibration never builds the schedule, and
//! resolving it can solve forests for a minute), reporting the file's and the log's problems
//! together.

mod fit;
mod table;

use super::{Failure, Input, LoadOptions, Session, checked, read};
use crate::calibrate::{Fit, nccl_tests};
use crate::diag::{Code, Diagnostic, FileId, SourceMap, Span};
use crate::net::gpu::{Proto, Runtime};
use crate::sema::model::{Family, Model};

/// How to read the log and what to call the model, each option as `collc calibrate` takes it.
#[derive(Clone, Debug)]
pub struct CalibrateRequest {
    /// `--algo`: the algorithm that produced the log (NCCL_ALGO), `ring`, or `tree` for an
    /// allreduce. None: the log's NCCL_ALGO, else `ring`.
    pub algo: Option<String>,
    /// `--runtime`: `nccl` or `rccl`. None: the file's flow model's, else `nccl`.
    pub runtime: Option<String>,
    /// `--proto`: `simple`, `ll` or `ll128`. None: the log's NCCL_PROTO, else `simple`.
    pub proto: Option<String>,
    /// `--table`: which table of the log, 1 for the first. None: the first that measured the
    /// file's collective, else the first.
    pub table: Option<usize>,
    /// `--name`: the name of the written model.
    pub name: String,
}

impl Default for CalibrateRequest {
    fn default() -> CalibrateRequest {
        CalibrateRequest {
            algo: None,
            runtime: None,
            proto: None,
            table: None,
            name: "calibrated".into(),
        }
    }
}

/// A finished calibration.
#[derive(Clone, Debug)]
pub struct Calibration {
    /// The fit: every measured size (bytes, measured and modelled seconds), the fitted
    /// parameters, the latency scale, which efficiencies the log constrained.
    pub fit: Fit,
    /// What the fit ran: the algorithm, runtime and protocol.
    pub family: Family,
    pub runtime: Runtime,
    pub proto: Proto,
    /// The fit as `collc calibrate` prints it: a line saying what was fitted, the sizes with
    /// their error, the parameters.
    pub table: String,
    /// The `model NAME: flow { ... }` declaration, with a comment naming the log.
    pub declaration: String,
    /// Warnings on the log (a table that does not say how many ranks ran), and the sources
    /// they point into.
    pub warnings: Vec<Diagnostic>,
    pub files: SourceMap,
}

/// Fits the flow model to the nccl-tests output `log`, measured on the machine of the file
/// `session` was loaded from.
pub fn calibrate(
    session: &Session,
    log: &Input,
    req: &CalibrateRequest,
) -> Result<Calibration, Failure> {
    let mut files = session.files().clone();
    let limit = session.options().max_input_bytes;
    let parsed = match read_log(log, &mut files, limit) {
        Ok(id) => parse(id, &files),
        Err(d) => Err(vec![d]),
    };
    match parsed {
        Ok(l) => finish(session.model(), log, &l, req, files, Vec::new()),
        Err(diagnostics) => Err(Failure::new(diagnostics, files)),
    }
}

/// [`calibrate`] on the `.coll` file `input`, read and checked with `opts` (its `schedule auto`
/// left unresolved); the file's diagnostics and the log's come together.
pub fn calibrate_file(
    input: &Input,
    opts: &LoadOptions,
    log: &Input,
    req: &CalibrateRequest,
) -> Result<Calibration, Failure> {
    let mut files = SourceMap::new();
    let mut diags = Vec::new();
    let model = checked::check_into(input, opts, &mut files)
        .1
        .map_err(|d| diags.extend(d))
        .ok();
    let parsed = match read_log(log, &mut files, opts.max_input_bytes) {
        Ok(id) => parse(id, &files).map_err(|d| diags.extend(d)).ok(),
        Err(d) => {
            diags.push(d);
            None
        }
    };
    match (model, parsed) {
        (Some(m), Some(l)) if diags.is_empty() => finish(&m, log, &l, req, files, diags),
        _ => Err(Failure::new(diags, files)),
    }
}

/// Reads the log into `files` (at most `limit` bytes of text, as any input).
fn read_log(log: &Input, files: &mut SourceMap, limit: u64) -> Result<FileId, Diagnostic> {
    if let Input::Path(path) = log
        && let Err(e) = std::fs::File::open(path)
    {
        let shown = path.display().to_string();
        let f = files.add("<command line>", shown.clone());
        return Err(Diagnostic::error(
            Code::Io,
            Span::new(f, 0, shown.len()),
            format!("cannot read the log `{shown}`: {e}"),
        )
        .label("this file")
        .help("give the path of a file with nccl-tests output"));
    }
    read(log, files, limit).map_err(|d| *d)
}

/// The log in `files` at `id`, as nccl-tests printed it.
fn parse(id: FileId, files: &SourceMap) -> Result<nccl_tests::Log, Vec<Diagnostic>> {
    nccl_tests::parse(id, &files.get(id).text)
}

/// The fit of `log` on `m`, `warnings` kept (and the fit's own added); its errors (with the
/// warnings before them) as a [`Failure`].
fn finish(
    m: &Model,
    log: &Input,
    parsed: &nccl_tests::Log,
    req: &CalibrateRequest,
    mut files: SourceMap,
    mut warnings: Vec<Diagnostic>,
) -> Result<Calibration, Failure> {
    match fit::run(m, parsed, &log.name(), req, &mut files, &mut warnings) {
        Ok(done) => Ok(Calibration {
            fit: done.fit,
            family: done.family,
            runtime: done.runtime,
            proto: done.proto,
            table: done.table,
            declaration: done.declaration,
            warnings,
            files,
        }),
        Err(d) => {
            warnings.extend(d);
            Err(Failure::new(warnings, files))
        }
    }
}

#[cfg(test)]
mod tests;
