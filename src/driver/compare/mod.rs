//! The comparison job (`collc compare`): every schedule family of a file's collective simulated
//! over a sweep ([`crate::compare`]), from a [`CompareRequest`] that holds the options as the
//! command line writes them (`--sizes 1KiB..1GiB`, `--vary hosts=4,8`, `--shard 2/3`), so a bad
//! value is a diagnostic pointing into it, whichever front end passed it.
//!
//! - [`Session::compare`] sweeps a loaded file over sizes; [`compare`] reads and checks the file
//!   itself (without resolving `schedule auto`, which a comparison never builds), and with
//!   `vary` checks it once per combination of the varied `param`s ([`vary`]).
//! - The engine comes from `model` ([`flags::engine`]): a declared flow or packet model, else
//!   the `sim` target's packet model, else the file's flow model or the defaults.
//! - `shard` evaluates one part of the sweep and `merge` puts parts back together ([`parts`]);
//!   [`CompareRequest::part`] is the text a shard writes.
//! - The options' cancel flag ([`LoadOptions::cancel`]) is polled while the file is checked,
//!   between the files of a `vary` sweep and between the cells of every sweep; once it is set
//!   the job ends with E0061 ([`crate::compare::cancelled`]).
//!
//! The result is a [`Comparison`]; [`crate::compare::render`] and [`crate::compare::chart`]
//! turn it into a table, CSV, JSON or an SVG chart.

mod flags;
mod parts;
mod vary;

use super::{Failure, Input, LoadOptions, Session, checked};
use crate::compare::{self, Comparison, sizes};
use crate::diag::{Diagnostic, SourceMap, Span};
use crate::progress::{Phase, Progress};
use crate::sema::model::Model;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What to compare, each option as `collc compare` takes it.
#[derive(Clone, Debug)]
pub struct CompareRequest {
    /// `--sizes`: a range doubling from its first size (`1KiB..1GiB`), a range with another
    /// factor (`1KiB..1GiB*4`) or a list (`8B,1MiB`). None: 1KiB..1GiB under a flow model, the
    /// collective's declared size under a packet model.
    pub sizes: Option<String>,
    /// `--vary NAME=V1,V2,...`, one per varied `param`: instead of sizes, one row per
    /// combination of values (the first `param` slowest), the file checked with each. Not
    /// together with `sizes` (E0055).
    pub vary: Vec<String>,
    /// `--model`: the declared `flow` or `packet` model to simulate with.
    pub model: Option<String>,
    /// `--families`: only these families (all when empty).
    pub families: Vec<String>,
    /// Packet models: the seed of the first run, and runs per figure (1 to
    /// [`crate::sim::packet::MAX_RUNS`]; each figure is their median).
    pub seed: u64,
    pub runs: u64,
    /// `--shard K/N`: evaluate only rows K, K+N, ... (see [`CompareRequest::part`]).
    pub shard: Option<String>,
    /// `--merge`: the parts that shards of this sweep wrote, put back together instead of
    /// simulating (a path, or the part's text under the name diagnostics show). Not together
    /// with `shard` (E0055).
    pub merge: Vec<Input>,
}

impl Default for CompareRequest {
    fn default() -> CompareRequest {
        CompareRequest {
            sizes: None,
            vary: Vec::new(),
            model: None,
            families: Vec::new(),
            seed: 1,
            runs: 1,
            shard: None,
            merge: Vec::new(),
        }
    }
}

impl CompareRequest {
    /// What a shard writes for `--merge` (JSON), when the request is one (`shard`); None for
    /// a whole sweep.
    pub fn part(&self, cmp: &Comparison) -> Option<String> {
        let (k, n) = compare::shard::parse(self.shard.as_deref()?).ok()?;
        Some(compare::shard::part(cmp, k, n))
    }
}

impl Session {
    /// Compares the schedule families of this file over the sizes `req` asks for, or with
    /// `vary` over the combinations of the varied `param`s (the session's text checked again
    /// per combination), one [`Progress::step`] per cell.
    pub fn compare(
        &self,
        req: &CompareRequest,
        progress: &dyn Progress,
    ) -> Result<Comparison, Failure> {
        flags::conflicts(req)?;
        let cancel = self.options().cancel.clone();
        if is_set(&cancel) {
            let m = self.model();
            let span = m.collective.as_ref().map_or(m.build_span(None), |c| c.span);
            return Err(self.fail(vec![compare::cancelled(span)]));
        }
        if !req.vary.is_empty() {
            // The text the session was loaded from, under its name (imports are found beside
            // it), checked again per combination.
            let text = self
                .files()
                .find(self.name())
                .map(|id| self.files().get(id).text.clone())
                .unwrap_or_default();
            progress.phase(Phase::Check, None);
            let input = Input::text(self.name(), text);
            return vary::compare(&input, self.options(), req, progress);
        }
        over_sizes(self.model(), self.files().clone(), cancel, req, progress)
    }
}

/// Reads and checks `input` (not resolving `schedule auto`) and compares its schedule families
/// as `req` asks: over sizes, or with `vary` over the combinations of the varied `param`s,
/// the file checked once per combination.
pub fn compare(
    input: &Input,
    opts: &LoadOptions,
    req: &CompareRequest,
    progress: &dyn Progress,
) -> Result<Comparison, Failure> {
    flags::conflicts(req)?;
    progress.phase(Phase::Check, None);
    if !req.vary.is_empty() {
        return vary::compare(input, opts, req, progress);
    }
    let mut files = SourceMap::new();
    let (id, model) = checked::check_into(input, opts, &mut files);
    if let (Some(id), true) = (id, is_set(&opts.cancel)) {
        return Err(Failure::new(
            vec![compare::cancelled(Span::new(id, 0, 0))],
            files,
        ));
    }
    match model {
        Ok(m) => over_sizes(&m, files, opts.cancel.clone(), req, progress),
        Err(diagnostics) => Err(Failure::new(diagnostics, files)),
    }
}

/// Whether the cancel flag is set.
fn is_set(cancel: &Option<Arc<AtomicBool>>) -> bool {
    cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed))
}

/// The sweep of the checked file `m` (its sources `files`) over `req`'s sizes.
fn over_sizes(
    m: &Model,
    mut files: SourceMap,
    cancel: Option<Arc<AtomicBool>>,
    req: &CompareRequest,
    progress: &dyn Progress,
) -> Result<Comparison, Failure> {
    let mut diags = Vec::new();
    let engine = flags::engine(m, req, &mut files)
        .map_err(|d| diags.push(d))
        .ok();
    let declared = m
        .collective
        .as_ref()
        .map(|c| sizes::show(c.count.saturating_mul(c.dtype.bytes())).replace(' ', ""));
    let spec = match (&req.sizes, &engine) {
        (Some(s), _) => s.clone(),
        (None, Some(compare::Engine::Packet { .. })) => {
            declared.unwrap_or_else(|| sizes::DEFAULT.to_string())
        }
        _ => sizes::DEFAULT.to_string(),
    };
    let sizes = flags::sizes(&spec, &mut files)
        .map_err(|d| diags.push(d))
        .unwrap_or_default();
    if let Some(e) = &engine {
        diags.extend(flags::families(req, m, e, &mut files));
    }
    let engine = match engine {
        Some(e) if diags.is_empty() => e,
        _ => {
            return Err(Failure::new(diags, files));
        }
    };
    let fail = |diagnostics: Vec<Diagnostic>, files: SourceMap| Failure::new(diagnostics, files);
    let (split, prints) = match parts::split(req, cancel, &mut files) {
        Ok(s) => s,
        Err(d) => return Err(fail(vec![d], files)),
    };
    let cmp = match compare::compare_split(m, &sizes, &engine, &req.families, progress, &split) {
        Ok(c) => c,
        Err(d) => return Err(fail(d, files)),
    };
    match parts::same_sweep(&cmp, &prints, &mut files) {
        Ok(()) => Ok(cmp),
        Err(d) => Err(fail(vec![d], files)),
    }
}

#[cfg(test)]
mod tests;
