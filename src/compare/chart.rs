//! A [`Comparison`] as an SVG line chart ([`crate::plot`]): algbw against size on log-log axes,
//! one line per simulated family, titled with the collective and topology and subtitled with
//! the model and its parameters; over a `param`'s values, grouped bars ([`grouped`]).

use super::{Axis, Cell, Comparison, label, render};
use crate::plot::bars::Grouped;
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

/// A comparison over a `param`'s values as grouped bars: per value one bar per simulated
/// family, its algbw (the paper's goodput: size over time).
pub fn grouped(c: &Comparison) -> Grouped {
    let name = match &c.axis {
        Axis::Param { names, .. } => names.join(" and "),
        Axis::Size => "size".to_string(),
    };
    let subject = match &c.axis {
        Axis::Param { points, .. } if points.iter().any(|p| p.ranks != c.ranks) => {
            format!(
                "{} of {} on `{}`",
                c.kind.name(),
                c.dtype.name(),
                c.topology
            )
        }
        _ => render::subject(c),
    };
    Grouped {
        title: format!("algbw of {subject} as {name} varies"),
        subtitle: render::model_line(c),
        x_desc: name.clone(),
        y_desc: "algbw = size / time (GB/s)".into(),
        groups: (0..c.cells.len()).map(|s| c.row_label(s)).collect(),
        series: c
            .families
            .iter()
            .enumerate()
            .filter(|(f, _)| c.evaluated(*f))
            .map(|(f, fam)| {
                let values = c
                    .cells
                    .iter()
                    .map(|row| match row.get(f) {
                        Some(Cell::Done { algbw, .. }) => algbw / 1e9,
                        _ => 0.0,
                    })
                    .collect();
                (label(fam), values)
            })
            .collect(),
    }
}

/// The chart as SVG text: lines against size, or grouped bars over a `param`'s values.
pub fn svg(c: &Comparison) -> Result<String, String> {
    match c.axis {
        Axis::Size => crate::plot::svg(&chart(c)),
        Axis::Param { .. } => grouped(c).svg(),
    }
}
