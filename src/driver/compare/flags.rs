//! A comparison's options read against the checked file: the engine `model` names (and `runs`
//! in range), the sweep `sizes` writes, and `families` that the file has; and options that do
//! not go together. Each bad value is a diagnostic pointing into the option as the command
//! line writes it ([`at_flag`]).

use super::CompareRequest;
use crate::compare::{self, sizes};
use crate::diag::{Code, Diagnostic, SourceMap};
pub(super) use crate::driver::flag::at_flag;
use crate::net;
use crate::sema::model::{CostModel, CostModelKind, Model};
use crate::sim::packet::{MAX_RUNS, PacketParams};

/// The engine `req.model` asks for (a flow or packet model), or the file's: the `sim` target's
/// packet model, else its flow parameters ([`net::for_file`]).
pub(super) fn engine(
    m: &Model,
    req: &CompareRequest,
    files: &mut SourceMap,
) -> Result<compare::Engine, Diagnostic> {
    if !(1..=MAX_RUNS).contains(&req.runs) {
        let shown = req.runs.to_string();
        return Err(Diagnostic::error(
            Code::CommandLine,
            at_flag(files, "runs", &shown, 0..shown.len()),
            format!("`--runs {shown}`: {shown} is not in 1..={MAX_RUNS}"),
        )
        .label("runs per figure")
        .help(format!(
            "each figure is the median of 1 to {MAX_RUNS} seeded runs"
        )));
    }
    let packet = |x: &CostModel| {
        PacketParams::from_model(x).map(|params| compare::Engine::Packet {
            params,
            seed: req.seed,
            runs: req.runs,
        })
    };
    let Some(name) = req.model.as_deref() else {
        let target = m
            .sim_target_model()
            .and_then(|t| m.models.iter().find(|x| x.name == t))
            .and_then(packet);
        return Ok(target.unwrap_or_else(|| compare::Engine::Flow(net::for_file(m, None))));
    };
    let span = at_flag(files, "model", name, 0..name.len());
    let flows: Vec<&str> = m
        .models
        .iter()
        .filter(|x| matches!(x.kind, CostModelKind::Flow | CostModelKind::Packet))
        .map(|x| x.name.as_str())
        .collect();
    let help = if flows.is_empty() {
        "declare one, e.g. `model fluid: flow { overhead: 2 us; }`, or leave out `--model` for the defaults".to_string()
    } else {
        format!("declared flow and packet models: {}", flows.join(", "))
    };
    match m.models.iter().find(|x| x.name == name) {
        None => Err(Diagnostic::error(
            Code::UnknownName,
            span,
            format!("the file declares no model named `{name}`"),
        )
        .label("no such model")
        .help(help)),
        Some(x) => packet(x)
            .or_else(|| net::FlowParams::from_model(x).map(compare::Engine::Flow))
            .ok_or_else(|| {
            Diagnostic::error(
                Code::BadValue,
                span,
                format!(
                    "`{name}` is a `{}` model; `collc compare` simulates with a `flow` or `packet` model",
                    x.kind.name()
                ),
            )
            .label("not a flow or packet model")
            .help(help)
        }),
    }
}

/// The sizes of `--sizes SPEC` in bytes ([`sizes::parse`]), else a diagnostic in the flag.
pub(super) fn sizes(spec: &str, files: &mut SourceMap) -> Result<Vec<u64>, Diagnostic> {
    sizes::parse(spec).map_err(|e| {
        let span = at_flag(files, "sizes", spec, e.at);
        Diagnostic::error(e.code, span, e.message)
            .label(e.label)
            .help(e.help)
    })
}

/// A diagnostic per name of `req.families` that is not a family of `m` under `e`.
pub(super) fn families(
    req: &CompareRequest,
    m: &Model,
    e: &compare::Engine,
    files: &mut SourceMap,
) -> Vec<Diagnostic> {
    let known: Vec<&'static str> = compare::families_for(m, e)
        .iter()
        .map(|f| f.name())
        .collect();
    let spec = req.families.join(",");
    let mut out = Vec::new();
    let mut at = 0;
    for name in &req.families {
        if !known.contains(&name.as_str()) {
            let span = at_flag(files, "families", &spec, at..at + name.len());
            out.push(
                Diagnostic::error(
                    Code::UnknownName,
                    span,
                    format!("`{name}` is not a family this comparison runs"),
                )
                .label("no such family here")
                .help(format!(
                    "families of this file under this model: {}",
                    known.join(", ")
                )),
            );
        }
        at += name.len() + 1;
    }
    out
}

/// Options that do not go together (the command line's parser refuses them first): `sizes`
/// with `vary`, `shard` with `merge`. E0055 on the second.
pub(super) fn conflicts(req: &CompareRequest) -> Result<(), crate::driver::Failure> {
    let mut files = SourceMap::new();
    let clash = |files: &mut SourceMap, flag: &str, value: &str, other: &str| {
        Diagnostic::error(
            Code::CommandLine,
            at_flag(files, flag, value, 0..value.len()),
            format!("`--{flag}` cannot be used with `--{other}`"),
        )
        .label(format!("not with `--{other}`"))
        .help(format!("give `--{flag}` or `--{other}`, not both"))
    };
    let mut diagnostics = Vec::new();
    if let (Some(s), false) = (&req.sizes, req.vary.is_empty()) {
        diagnostics.push(clash(&mut files, "sizes", s, "vary"));
    }
    if let (Some(s), false) = (&req.shard, req.merge.is_empty()) {
        diagnostics.push(clash(&mut files, "shard", s, "merge"));
    }
    if diagnostics.is_empty() {
        Ok(())
    } else {
        Err(crate::driver::Failure::new(diagnostics, files))
    }
}
