//! `collc._collc`, the native half of the Python package `collc`: a thin layer over the
//! library driver (`collc::driver`). Each function here parses its Python arguments into the
//! driver's options, runs the job on a worker thread with the interpreter released and Ctrl-C
//! honoured ([`run`]), and hands back plain Python values (dicts, lists, bytes, text); the
//! Python half (`python/collc/`) turns those into dataclasses, and `Failure` into
//! `collc.CheckError`. Nothing here prints.

mod compare;
mod convert;
mod run;
mod session;

use collc::driver;
use pyo3::prelude::*;
use std::collections::HashMap;
use std::path::PathBuf;

pyo3::create_exception!(
    _collc,
    Failure,
    pyo3::exceptions::PyException,
    "A job stopped on its input: args are (rendered text, list of diagnostic dicts). The \
     package `collc` raises it as `collc.CheckError`."
);

/// Checks one file of any kind collc reads (`.coll`, MSCCL XML, `.ir`, `.goal`), given as
/// `path` or as `text` under `name`; returns `(kind, diagnostics)` where `kind` is `"coll"`,
/// `"xml"`, `"ir"`, `"goal"` or `None` and each diagnostic is a dict.
#[pyfunction]
#[pyo3(signature = (path=None, text=None, name=None, params=Vec::new(), limits=None, strict=false))]
fn check<'py>(
    py: Python<'py>,
    path: Option<PathBuf>,
    text: Option<String>,
    name: Option<String>,
    params: Vec<(String, String)>,
    limits: Option<HashMap<String, u64>>,
    strict: bool,
) -> PyResult<(Option<&'static str>, Bound<'py, pyo3::types::PyList>)> {
    let input = convert::input(path, text, name)?;
    let cancel = run::flag();
    let opts = convert::options(params, limits, Some(cancel.clone()))?;
    let checked = run::run(py, &cancel, move || driver::check(&input, &opts, strict))?;
    let kind = checked.kind.map(|k| match k {
        driver::Kind::Coll => "coll",
        driver::Kind::Xml => "xml",
        driver::Kind::Ir => "ir",
        driver::Kind::Goal => "goal",
    });
    Ok((kind, convert::records(py, &checked.records())?))
}

/// Checks a `.coll` file (`path`, or `text` under `name`) and resolves `schedule auto` into a
/// [`session::Session`]; raises `Failure` when the file has any problem.
#[pyfunction]
#[pyo3(signature = (path=None, text=None, name=None, params=Vec::new(), limits=None))]
fn load(
    py: Python<'_>,
    path: Option<PathBuf>,
    text: Option<String>,
    name: Option<String>,
    params: Vec<(String, String)>,
    limits: Option<HashMap<String, u64>>,
) -> PyResult<session::Session> {
    let input = convert::input(path, text, name)?;
    let cancel = run::flag();
    let opts = convert::options(params, limits, Some(cancel.clone()))?;
    let loaded = run::run(py, &cancel, move || driver::load(&input, &opts))?;
    match loaded {
        Ok(s) => Ok(session::Session::new(s, cancel)),
        Err(f) => Err(convert::failure(py, &f)),
    }
}

/// The limits `load` and `check` accept in `limits`, with their defaults.
#[pyfunction]
fn default_limits() -> Vec<(&'static str, u64)> {
    convert::default_limits()
}

#[pymodule]
fn _collc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("Failure", m.py().get_type::<Failure>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(default_limits, m)?)?;
    m.add_class::<session::Session>()?;
    m.add_class::<compare::Comparison>()?;
    Ok(())
}
