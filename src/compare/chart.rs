//! A [`Comparison`] as an SVG line chart ([`crate::plot`]): algbw against size on log-log axes,
//! one line per simulated family, titled with the collective and topology and subtitled with
//! the model and its parameters.

use super::{Cell, Comparison, label, render};
use crate::plot::{Chart, Series};

/// The chart `collc compare --plot` writes.
pub fn chart(c: &Comparison) -> Chart {
    let series = c
        .families
        .iter()
        .enumerate()
        .filter(|(f, _)| c.evaluated(*f))
        .map(|(f, fam)| Series {
            name: label(fam),
            points: c
                .cells
                .iter()
                .zip(&c.sizes)
                .filter_map(|(row, &bytes)| match row.get(f) {
                    Some(Cell::Done { algbw, .. }) => Some((bytes as f64, algbw / 1e9)),
                    _ => None,
                })
                .collect(),
        })
        .collect();
    Chart {
        title: format!("algbw of {}", render::subject(c)),
        subtitle: render::model_line(c),
        y_desc: "algbw (GB/s)".into(),
        size_label: super::sizes::show,
        series,
    }
}

/// The chart as SVG text.
pub fn svg(c: &Comparison) -> Result<String, String> {
    crate::plot::svg(&chart(c))
}
