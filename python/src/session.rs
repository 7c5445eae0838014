//! `collc._collc.Session`: a loaded `.coll` file ([`collc::driver::Session`]) and the jobs on
//! it. The driver's session is `Send + Sync`, so one Python session may be used from several
//! Python threads at once; each job runs with the interpreter released ([`crate::run`]).
//!
//! The driver's jobs on a session poll the cancel flag the session was loaded with
//! ([`collc::driver::LoadOptions::cancel`]), so the flag belongs to the session, not to one
//! job: Ctrl-C during a job stops every job of that session running at the time, and the
//! flag is cleared when the last of them has returned ([`Jobs`]).

use crate::compare::Comparison;
use crate::convert;
use crate::run;
use collc::driver::sim::{Engine, SimRequest};
use collc::driver::{self, BuildRequest, Input, MscclOverrides, Output};
use collc::progress::Quiet;
use collc::sema::model::TargetKind;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A checked `.coll` file, `schedule auto` resolved.
#[pyclass(frozen, module = "collc._collc")]
pub struct Session {
    inner: Arc<driver::Session>,
    jobs: Arc<Jobs>,
}

/// The jobs running on one session, and the cancel flag they share.
struct Jobs {
    cancel: Arc<AtomicBool>,
    running: Mutex<usize>,
}

impl Jobs {
    /// A job starts; it has ended when the guard is dropped (returned or panicked).
    fn start(self: &Arc<Jobs>) -> Running {
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        Running(self.clone())
    }
}

/// A running job of a session: the last one to end clears the flag a Ctrl-C set.
struct Running(Arc<Jobs>);

impl Drop for Running {
    fn drop(&mut self) {
        let mut n = self.0.running.lock().unwrap_or_else(|e| e.into_inner());
        *n -= 1;
        if *n == 0 {
            self.0.cancel.store(false, Ordering::SeqCst);
        }
    }
}

impl Session {
    pub fn new(inner: driver::Session, cancel: Arc<AtomicBool>) -> Session {
        Session {
            inner: Arc::new(inner),
            jobs: Arc::new(Jobs {
                cancel,
                running: Mutex::new(0),
            }),
        }
    }

    /// Runs `job` on the session ([`run::run`]).
    fn job<T: Send + 'static>(
        &self,
        py: Python<'_>,
        job: impl FnOnce(&driver::Session) -> T + Send + 'static,
    ) -> PyResult<T> {
        let s = self.inner.clone();
        let running = self.jobs.start();
        run::run(py, &self.jobs.cancel, move || {
            let _running = running;
            job(&s)
        })
    }

    /// Runs `job`, raising its [`driver::Failure`] as `Failure`.
    fn try_job<T: Send + 'static>(
        &self,
        py: Python<'_>,
        job: impl FnOnce(&driver::Session) -> Result<T, driver::Failure> + Send + 'static,
    ) -> PyResult<T> {
        self.job(py, job)?.map_err(|f| convert::failure(py, &f))
    }

    /// Diagnostics of this session's files as a list of dicts.
    fn diagnostics<'py>(
        &self,
        py: Python<'py>,
        diags: &[collc::diag::Diagnostic],
    ) -> PyResult<Bound<'py, PyList>> {
        convert::records(py, &driver::records(diags, self.inner.files()))
    }
}

/// What `Session.build` returns.
fn build_result<'py>(
    py: Python<'py>,
    target: TargetKind,
    artifact: Option<Bound<'py, PyAny>>,
    warnings: Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("target", target.name())?;
    d.set_item("artifact", artifact)?;
    d.set_item("warnings", warnings)?;
    Ok(d)
}

/// The simulator's name, as the Python half's `SimResult.kind` gives it.
fn engine_name(e: Engine) -> &'static str {
    match e {
        Engine::LogGP => "loggp",
        Engine::Postal => "postal",
        Engine::Flow => "flow",
        Engine::Forest => "forest",
        Engine::Packet => "packet",
        Engine::Replay => "replay",
    }
}

/// A target by its name in the language (`msccl`, `mpi`, `p4`, `goal`, ...).
fn target_kind(name: &str) -> PyResult<TargetKind> {
    TargetKind::ALL
        .iter()
        .find(|k| k.0 == name)
        .map(|k| k.1)
        .ok_or_else(|| {
            let all: Vec<&str> = TargetKind::ALL.iter().map(|k| k.0).collect();
            PyValueError::new_err(format!(
                "no target named {name:?} (the targets: {})",
                all.join(", ")
            ))
        })
}

/// The MSCCL options (`MscclOverrides`) from the dict the Python layer passes: the command
/// line's flags by name (`proto`, `channels`, `instances`, `inplace`, `min_bytes`,
/// `max_bytes`, `max_steps`), each absent or `None` for the file's own.
fn msccl(d: Option<&Bound<'_, PyDict>>) -> PyResult<MscclOverrides> {
    fn get<'py, T: FromPyObjectOwned<'py>>(
        d: Option<&Bound<'py, PyDict>>,
        key: &str,
    ) -> PyResult<Option<T>> {
        match d.map(|d| d.get_item(key)).transpose()?.flatten() {
            Some(v) if !v.is_none() => Ok(Some(v.extract().map_err(Into::into)?)),
            _ => Ok(None),
        }
    }
    if let Some(d) = d {
        const KNOWN: [&str; 7] = [
            "proto",
            "channels",
            "instances",
            "inplace",
            "min_bytes",
            "max_bytes",
            "max_steps",
        ];
        for k in d.keys() {
            let k: String = k.extract()?;
            if !KNOWN.contains(&k.as_str()) {
                return Err(PyValueError::new_err(format!("no MSCCL option {k:?}")));
            }
        }
    }
    let proto: Option<String> = get(d, "proto")?;
    if let Some(p) = &proto
        && !["simple", "ll", "ll128"].contains(&p.as_str())
    {
        return Err(PyValueError::new_err(format!(
            "proto is \"simple\", \"ll\" or \"ll128\", not {p:?}"
        )));
    }
    Ok(MscclOverrides {
        proto,
        channels: get(d, "channels")?,
        instances: get(d, "instances")?,
        inplace: get(d, "inplace")?,
        min_bytes: get(d, "min_bytes")?,
        max_bytes: get(d, "max_bytes")?,
        max_steps: get(d, "max_steps")?,
    })
}

#[pymethods]
impl Session {
    /// The name of the file it was loaded from.
    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// The elaborated model as text (`collc build --emit model`).
    fn model_text(&self) -> String {
        self.inner.model_text()
    }

    /// The targets the file declares that a build without a target makes.
    fn declared_targets(&self) -> Vec<&'static str> {
        driver::declared(self.inner.model())
            .into_iter()
            .map(TargetKind::name)
            .collect()
    }

    /// What `schedule auto` chose, as a dict (`family`, `bytes`, `params`, `description`,
    /// `times`: a list of `(family, seconds or None, reason or None)`), or `None` when the file
    /// names its schedule.
    fn auto_pick<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(p) = self.inner.auto_pick() else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("family", collc::compare::short(&p.family))?;
        d.set_item("bytes", p.bytes)?;
        d.set_item("params", &p.params)?;
        d.set_item("description", p.describe())?;
        let times: Vec<(String, Option<f64>, Option<String>)> = p
            .times
            .iter()
            .map(|(f, t)| {
                let (s, why) = match t {
                    Ok(s) => (Some(*s), None),
                    Err(e) => (None, Some(e.clone())),
                };
                (collc::compare::short(f), s, why)
            })
            .collect();
        d.set_item("times", times)?;
        Ok(Some(d))
    }

    /// The lowered and verified program as IR text (`collc build --emit ir`) and the warnings
    /// lowering made; raises `Failure` when it cannot be lowered.
    fn ir<'py>(&self, py: Python<'py>) -> PyResult<(String, Bound<'py, PyList>)> {
        let (text, warnings) = self.try_job(py, |s| s.ir_text(&Quiet))?;
        Ok((text, self.diagnostics(py, &warnings)?))
    }

    /// The report (`collc build --emit report`) under the MSCCL options (a dict, see
    /// `msccl`): a dict with `sections` (a list of `(title, lines, warnings)`), `warnings` and
    /// `text`.
    #[pyo3(signature = (msccl=None))]
    fn report<'py>(
        &self,
        py: Python<'py>,
        msccl: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let o = self::msccl(msccl)?;
        let r = self.try_job(py, move |s| s.report(&o))?;
        let sections = r
            .sections
            .iter()
            .map(|s| Ok((&s.title, &s.lines, self.diagnostics(py, &s.warnings)?)))
            .collect::<PyResult<Vec<_>>>()?;
        let d = PyDict::new(py);
        d.set_item("sections", sections)?;
        d.set_item("warnings", self.diagnostics(py, &r.warnings)?)?;
        d.set_item("text", r.render())?;
        Ok(d)
    }

    /// Builds `target` (else the one the file declares): into memory, a dict with `target`,
    /// `artifact` (bytes for a file, a list of `(path, bytes)` for a directory) and `warnings`;
    /// or, with `out`, written there atomically (`artifact` is then `None`). `name` is the artifact's name in memory (an MPI project is named after it).
    #[pyo3(signature = (target=None, out=None, name=None, msccl=None))]
    fn build<'py>(
        &self,
        py: Python<'py>,
        target: Option<&str>,
        out: Option<PathBuf>,
        name: Option<String>,
        msccl: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let target = target.map(target_kind).transpose()?;
        let req = BuildRequest {
            msccl: self::msccl(msccl)?,
            output_name: name,
        };
        if let Some(path) = out {
            let (kind, warnings) = self.try_job(py, move |s| {
                let kind = s.target(target)?;
                Ok((kind, s.build_into(Some(kind), &req, &path, &Quiet)?))
            })?;
            return build_result(py, kind, None, self.diagnostics(py, &warnings)?);
        }
        let built = self.try_job(py, move |s| s.build(target, &req))?;
        let artifact = match &built.output {
            Output::File(bytes) => PyBytes::new(py, bytes).into_any(),
            Output::Dir(files) => {
                let items = files
                    .iter()
                    .map(|(p, b)| (p.as_str(), PyBytes::new(py, b)))
                    .collect::<Vec<_>>();
                PyList::new(py, items)?.into_any()
            }
        };
        build_result(
            py,
            built.target,
            Some(artifact),
            self.diagnostics(py, &built.warnings)?,
        )
    }

    /// Compares the schedule families over sizes (`collc compare`); each option as the
    /// command line writes it. Raises `Failure` on a bad option or a cancelled sweep (E0061).
    #[pyo3(signature = (sizes=None, vary=Vec::new(), model=None, families=Vec::new(), seed=1, runs=1, shard=None, merge=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn compare(
        &self,
        py: Python<'_>,
        sizes: Option<String>,
        vary: Vec<String>,
        model: Option<String>,
        families: Vec<String>,
        seed: u64,
        runs: u64,
        shard: Option<String>,
        merge: Vec<(Option<PathBuf>, Option<String>, Option<String>)>,
    ) -> PyResult<Comparison> {
        let merge = merge
            .into_iter()
            .map(|(path, text, name)| convert::input(path, text, name))
            .collect::<PyResult<Vec<Input>>>()?;
        let req = driver::compare::CompareRequest {
            sizes,
            vary,
            model,
            families,
            seed,
            runs,
            shard,
            merge,
        };
        let (cmp, part) = self.try_job(py, move |s| {
            let cmp = s.compare(&req, &Quiet)?;
            let part = req.part(&cmp);
            Ok((cmp, part))
        })?;
        Ok(Comparison::new(cmp, part))
    }

    /// Simulates the schedule (`collc sim FILE`) under `model` (else the engine the file
    /// implies): a dict of the outcome's figures (seconds, bytes per second), its text, trace
    /// and chart when asked for, and its warnings; `unfinished` holds the errors of a schedule
    /// that could not finish.
    #[pyo3(signature = (model=None, seed=None, runs=None, trace=false, plot=false, reduce_ns=0, loggp=None, explore_run=None))]
    #[allow(clippy::too_many_arguments)]
    fn sim<'py>(
        &self,
        py: Python<'py>,
        model: Option<String>,
        seed: Option<u64>,
        runs: Option<u64>,
        trace: bool,
        plot: bool,
        reduce_ns: u64,
        loggp: Option<HashMap<String, u64>>,
        explore_run: Option<u64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let req = SimRequest {
            model,
            seed,
            runs,
            trace,
            plot,
            batch: false,
            reduce_ns,
            loggp: convert::loggp(loggp)?,
            explore_run,
        };
        let o = self.try_job(py, move |s| s.sim(&req, &Quiet))?;
        let d = PyDict::new(py);
        d.set_item("engine", &o.engine)?;
        d.set_item("kind", engine_name(o.kind))?;
        d.set_item("seconds", o.seconds)?;
        d.set_item("ranks", &o.ranks)?;
        d.set_item("bytes", o.bytes)?;
        d.set_item("algbw", o.algbw)?;
        d.set_item("busbw", o.busbw)?;
        d.set_item("utilisation", o.utilisation)?;
        d.set_item("complete", o.complete)?;
        d.set_item("chunks", o.chunks)?;
        d.set_item("text", &o.text)?;
        d.set_item("trace_json", &o.trace_json)?;
        d.set_item("plot_svg", &o.plot_svg)?;
        d.set_item("warnings", self.diagnostics(py, &o.warnings)?)?;
        let unfinished = match &o.unfinished {
            Some(f) => Some(convert::records(py, &f.records())?),
            None => None,
        };
        d.set_item("unfinished", unfinished)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!("<collc._collc.Session {:?}>", self.inner.name())
    }
}
