//! `collc._collc.Comparison`: a finished sweep ([`collc::compare::Comparison`]) and its
//! renderings by the command line's own renderers: JSON (which the Python half reads its data
//! from), the table, CSV and the SVG chart.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// A finished comparison.
#[pyclass(frozen, module = "collc._collc")]
pub struct Comparison {
    inner: collc::compare::Comparison,
    part: Option<String>,
}

impl Comparison {
    pub fn new(inner: collc::compare::Comparison, part: Option<String>) -> Comparison {
        Comparison { inner, part }
    }
}

#[pymethods]
impl Comparison {
    /// `collc compare --format json`.
    fn json(&self) -> String {
        collc::compare::render::json(&self.inner)
    }

    /// `collc compare` (the table).
    fn table(&self) -> String {
        collc::compare::render::table(&self.inner)
    }

    /// `collc compare --format csv`.
    fn csv(&self) -> String {
        collc::compare::render::csv(&self.inner)
    }

    /// `collc compare --plot OUT.svg`: the chart as SVG text.
    fn svg(&self) -> PyResult<String> {
        collc::compare::chart::svg(&self.inner)
            .map_err(|e| PyRuntimeError::new_err(format!("cannot draw the chart: {e}")))
    }

    /// What a `shard` run writes for `merge` (JSON), or `None` for a whole sweep.
    fn part(&self) -> Option<String> {
        self.part.clone()
    }
}
