//! `vary` (`collc compare --vary NAME=V1,V2,...`, repeatable): instead of sizes, one row per
//! combination of values of the file's `param`s, the first slowest; the file is checked once
//! per combination (the `param`s set as `--param` would), each row at its collective's size
//! and under its own engine ([`crate::compare::compare_over`]). Checking stops at the first
//! combination with errors, which carry a note naming it.

use super::{CompareRequest, flags, is_set, parts};
use crate::compare::{self, Comparison, Engine};
use crate::diag::{Code, Diagnostic, SourceMap, Span};
use crate::driver::{Failure, Input, LoadOptions, checked};
use crate::progress::Progress;
use crate::sema::model::Model;

/// The comparison over the combinations of `req.vary`, `input` checked with `opts` and each.
pub(super) fn compare(
    input: &Input,
    opts: &LoadOptions,
    req: &CompareRequest,
    progress: &dyn Progress,
) -> Result<Comparison, Failure> {
    let mut files = SourceMap::new();
    let mut diags = Vec::new();
    let mut vary = Vec::new();
    for spec in &req.vary {
        match parse(spec, &mut files) {
            Ok(v) => vary.push(v),
            Err(d) => diags.push(d),
        }
    }
    let fail = |diagnostics: Vec<Diagnostic>, files: SourceMap| Failure::new(diagnostics, files);
    if !diags.is_empty() {
        return Err(fail(diags, files));
    }
    let points = points(input, opts, req, &vary, &mut files, &mut diags)?;
    if let Some((_, m, e)) = points.first() {
        diags.extend(flags::families(req, m, e, &mut files));
    }
    if !diags.is_empty() || points.is_empty() {
        return Err(fail(diags, files));
    }
    let (split, prints) = match parts::split(req, opts.cancel.clone(), &mut files) {
        Ok(s) => s,
        Err(d) => return Err(fail(vec![d], files)),
    };
    let names: Vec<String> = vary.into_iter().map(|(n, _)| n).collect();
    let cmp = match compare::compare_over_split(&names, &points, &req.families, progress, &split) {
        Ok(c) => c,
        Err(d) => return Err(fail(d, files)),
    };
    match parts::same_sweep(&cmp, &prints, &mut files) {
        Ok(()) => Ok(cmp),
        Err(d) => Err(fail(vec![d], files)),
    }
}

/// `NAME=V1,V2,...` as the name and its values; commas inside brackets, parentheses or quotes
/// do not split.
fn parse(spec: &str, files: &mut SourceMap) -> Result<(String, Vec<String>), Diagnostic> {
    let bad = |files: &mut SourceMap, at: std::ops::Range<usize>, why: &str| {
        Diagnostic::error(
            Code::Syntax,
            flags::at_flag(files, "vary", spec, at),
            format!("`--vary {spec}`: {why}"),
        )
        .label("expected NAME=V1,V2,...")
        .help("write e.g. `--vary hosts=51,256,512`, naming a `param` of the file")
    };
    let Some((name, list)) = spec.split_once('=') else {
        return Err(bad(files, 0..spec.len(), "no `=`"));
    };
    let (name, base) = (name.trim(), spec.len() - list.len());
    if name.is_empty() {
        return Err(bad(files, 0..base, "no parameter name"));
    }
    let mut values = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0);
    for (i, ch) in list
        .char_indices()
        .chain(std::iter::once((list.len(), ',')))
    {
        match ch {
            '"' => quoted = !quoted,
            '[' | '(' if !quoted => depth += 1,
            ']' | ')' if !quoted => depth -= 1,
            ',' if !quoted && depth <= 0 => {
                let v = list[start..i].trim();
                if v.is_empty() {
                    return Err(bad(files, base + start..base + i, "an empty value"));
                }
                values.push(v.to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    Ok((name.to_string(), values))
}

/// Every combination of the varied values, the first `param` slowest.
fn combinations(vary: &[(String, Vec<String>)]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    for (_, values) in vary {
        out = out
            .into_iter()
            .flat_map(|head| {
                values.iter().map(move |v| {
                    let mut row = head.clone();
                    row.push(v.clone());
                    row
                })
            })
            .collect();
    }
    out
}

/// One row of the sweep: the combination's values, the file checked with them, its engine.
type Point = (Vec<String>, Model, Engine);

/// The file checked once per combination of `vary`'s values, each with its engine; checking
/// stops at the first combination with errors (in `diags`, with a note naming it), and the
/// job ends (E0061) once `opts.cancel` is set.
fn points(
    input: &Input,
    opts: &LoadOptions,
    req: &CompareRequest,
    vary: &[(String, Vec<String>)],
    files: &mut SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> Result<Vec<Point>, Failure> {
    let mut out = Vec::new();
    for values in combinations(vary) {
        let mut o = opts.clone();
        o.params.retain(|(k, _)| !vary.iter().any(|(n, _)| n == k));
        let mut with = Vec::new();
        for ((name, _), v) in vary.iter().zip(&values) {
            o.params.push((name.clone(), v.clone()));
            with.push(format!("`{name}` = {v}"));
        }
        let (id, model) = checked::check_into(input, &o, files);
        if let (Some(id), true) = (id, is_set(&opts.cancel)) {
            return Err(Failure::new(
                vec![compare::cancelled(Span::new(id, 0, 0))],
                files.clone(),
            ));
        }
        let m = match model {
            Ok(m) => m,
            Err(here) => {
                let note = format!("with {} (`--vary`)", with.join(", "));
                diags.extend(here.into_iter().map(|d| d.note(note.clone())));
                break;
            }
        };
        match flags::engine(&m, req, files) {
            Ok(e) => out.push((values, m, e)),
            Err(d) => {
                diags.push(d);
                break;
            }
        }
    }
    Ok(out)
}
