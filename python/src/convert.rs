//! Python arguments into the driver's options, and the driver's values into Python ones:
//! diagnostics as dicts (the fields of [`collc::driver::Record`]) and a [`Failure`] as the
//! exception `Failure(rendered, diagnostics)`.

use crate::Failure as PyFailure;
use collc::driver::sim::LogGPOverrides;
use collc::driver::{Failure, Input, LoadOptions, Record};
use collc::sema::elab::Limits;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// What a job reads: exactly one of `path` and `text` (`text` under `name`, `<text>` unless
/// given).
pub fn input(path: Option<PathBuf>, text: Option<String>, name: Option<String>) -> PyResult<Input> {
    match (path, text) {
        (Some(p), None) => Ok(Input::path(p)),
        (None, Some(t)) => Ok(Input::text(name.unwrap_or_else(|| "<text>".into()), t)),
        (Some(_), Some(_)) => Err(PyValueError::new_err("give `path` or `text`, not both")),
        (None, None) => Err(PyValueError::new_err("give a `path` or a `text`")),
    }
}

/// Every limit by name, as `limits` takes them, with its value in `l`.
fn limits_of(l: &Limits) -> Vec<(&'static str, u64)> {
    vec![
        ("max_nodes", l.max_nodes as u64),
        ("max_links", l.max_links as u64),
        ("max_iterations", l.max_iterations),
        ("max_depth", l.max_depth as u64),
        ("max_ops", l.max_ops),
        ("max_slots", l.max_slots),
        ("max_events", l.max_events),
        ("max_packets", l.max_packets),
    ]
}

/// The defaults of every limit, by name.
pub fn default_limits() -> Vec<(&'static str, u64)> {
    limits_of(&Limits::default())
}

/// Sets limit `name` of `l` to `value`.
fn set_limit(l: &mut Limits, name: &str, value: u64) -> PyResult<()> {
    let size = |v: u64| {
        usize::try_from(v)
            .map_err(|_| PyValueError::new_err(format!("limit {name} = {v} is too large")))
    };
    match name {
        "max_nodes" => l.max_nodes = size(value)?,
        "max_links" => l.max_links = size(value)?,
        "max_iterations" => l.max_iterations = value,
        "max_depth" => l.max_depth = size(value)?,
        "max_ops" => l.max_ops = value,
        "max_slots" => l.max_slots = value,
        "max_events" => l.max_events = value,
        "max_packets" => l.max_packets = value,
        _ => {
            let names: Vec<&str> = default_limits().iter().map(|(n, _)| *n).collect();
            return Err(PyValueError::new_err(format!(
                "no limit named {name:?} (the limits: {})",
                names.join(", ")
            )));
        }
    }
    Ok(())
}

/// [`LoadOptions`] from `param` overrides (each value in the language's syntax), limits by
/// name and the job's cancel flag.
pub fn options(
    params: Vec<(String, String)>,
    limits: Option<HashMap<String, u64>>,
    cancel: Option<Arc<AtomicBool>>,
) -> PyResult<LoadOptions> {
    let mut opts = LoadOptions {
        params,
        cancel,
        ..LoadOptions::default()
    };
    let mut given: Vec<(String, u64)> = limits.unwrap_or_default().into_iter().collect();
    given.sort();
    for (name, value) in given {
        set_limit(&mut opts.limits, &name, value)?;
    }
    Ok(opts)
}

/// One diagnostic as a dict with the fields of [`Record`].
fn record<'py>(py: Python<'py>, r: &Record) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("code", &r.code)?;
    d.set_item("severity", &r.severity)?;
    d.set_item("message", &r.message)?;
    d.set_item("file", &r.file)?;
    d.set_item("line", r.line)?;
    d.set_item("column", r.column)?;
    d.set_item("end_line", r.end_line)?;
    d.set_item("end_column", r.end_column)?;
    d.set_item("label", &r.label)?;
    d.set_item("help", &r.help)?;
    d.set_item("notes", &r.notes)?;
    d.set_item("rendered", &r.rendered)?;
    Ok(d)
}

/// Diagnostics as a list of dicts.
pub fn records<'py>(py: Python<'py>, rs: &[Record]) -> PyResult<Bound<'py, PyList>> {
    let items = rs
        .iter()
        .map(|r| record(py, r))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// A job's failure as the exception `Failure(rendered, diagnostics)`.
pub fn failure(py: Python<'_>, f: &Failure) -> PyErr {
    match records(py, &f.records()) {
        Ok(list) => PyFailure::new_err((f.render(), list.unbind())),
        Err(e) => e,
    }
}

/// LogGP overrides by parameter name (`L`, `o`, `g`, `G`, `O`, `S` in the model's ticks, `S`
/// in bytes; `wrap` true for LogGOPSim's wrapped times).
pub fn loggp(given: Option<HashMap<String, u64>>) -> PyResult<LogGPOverrides> {
    let mut o = LogGPOverrides::default();
    for (name, v) in given.unwrap_or_default() {
        match name.as_str() {
            "L" => o.L = Some(v),
            "o" => o.o = Some(v),
            "g" => o.g = Some(v),
            "G" => o.G = Some(v),
            "O" => o.O = Some(v),
            "S" => o.S = Some(v),
            "wrap" => o.wrap = v != 0,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "no LogGP parameter named {name:?} (the parameters: L, o, g, G, O, S, wrap)"
                )));
            }
        }
    }
    Ok(o)
}
