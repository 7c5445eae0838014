//! `collc._collc.Session`: a loaded `.coll` file ([`collc::driver::Session`]) and the jobs on
//! it. The driver's session is `Send + Sync`, so one Python session may be used from several
//! Python threads at once; each job runs with the interpreter released ([`crate::run`]).

use crate::convert;
use crate::run;
use collc::driver;
use collc::progress::Quiet;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// A checked `.coll` file, `schedule auto` resolved.
#[pyclass(frozen, module = "collc._collc")]
pub struct Session {
    inner: Arc<driver::Session>,
    cancel: Arc<AtomicBool>,
}

impl Session {
    pub fn new(inner: driver::Session, cancel: Arc<AtomicBool>) -> Session {
        Session {
            inner: Arc::new(inner),
            cancel,
        }
    }

    /// Runs `job` on the session ([`run::run`]).
    fn job<T: Send + 'static>(
        &self,
        py: Python<'_>,
        job: impl FnOnce(&driver::Session) -> T + Send + 'static,
    ) -> PyResult<T> {
        let s = self.inner.clone();
        run::run(py, &self.cancel, move || job(&s))
    }
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
    /// lowering made (a list of diagnostic dicts); raises `Failure` when it cannot be lowered.
    fn ir<'py>(&self, py: Python<'py>) -> PyResult<(String, Bound<'py, PyList>)> {
        let out = self.job(py, |s| {
            s.ir_text(&Quiet)
                .map(|(text, warnings)| (text, driver::records(&warnings, s.files())))
        })?;
        match out {
            Ok((text, warnings)) => Ok((text, convert::records(py, &warnings)?)),
            Err(f) => Err(convert::failure(py, &f)),
        }
    }

    fn __repr__(&self) -> String {
        format!("<collc._collc.Session {:?}>", self.inner.name())
    }
}
