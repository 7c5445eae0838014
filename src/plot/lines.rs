//! Line charts of a rate against a message size ([`svg`]): sizes on a base-2 log axis
//! labelled in binary units at sizes the series have ([`ticks`]: the sizes swept, every other
//! one or fewer where labels would crowd), rates in GB/s on a base-10 log axis; one line per
//! series, each with its own colour and marker and dashed where it overlaps an earlier one
//! ([`super::marks`]), a legend where it hides the least, a title and a subtitle.

use super::{Area, Failure, SIZE, color, heading, marks};
use plotters::coord::combinators::{BindKeyPoints, IntoLogRange};
use plotters::prelude::*;

/// One line: its legend name and its (bytes, GB/s) points in size order; points whose rate is
/// not positive are left out (a log axis cannot show them).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A chart of rates against sizes.
#[derive(Debug, Clone)]
pub struct Chart {
    pub title: String,
    pub subtitle: String,
    /// The y axis's description, e.g. `algbw (GB/s)`.
    pub y_desc: String,
    /// Writes a size (bytes) as the x axis labels it, e.g. `1 KiB`.
    pub size_label: fn(u64) -> String,
    pub series: Vec<Series>,
}

/// Pixels of the x axis: the chart's width less its margins (20 px a side) and the y labels.
const X_PIXELS: f64 = (SIZE.0 - 2 * 20 - 72) as f64;

/// Pixels at least between two labelled sizes (a label such as `256 MiB` is about 60 wide).
const LABEL_GAP: f64 = 80.0;

/// The largest power of ten at most `v`, and the smallest at least `w` (multiplications only).
fn decades(v: f64, w: f64) -> (f64, f64) {
    let mut lo = 1.0;
    while lo > v {
        lo /= 10.0;
    }
    while lo * 10.0 <= v {
        lo *= 10.0;
    }
    let mut hi = lo;
    while hi < w {
        hi *= 10.0;
    }
    (lo, hi.max(lo * 10.0))
}

/// A rate as the y axis shows it: `0.01`, `10`, `100`.
fn rate_label(v: f64) -> String {
    let s = format!("{v:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The points a log-log chart can show.
fn shown(s: &Series) -> Vec<(f64, f64)> {
    s.points
        .iter()
        .filter(|p| p.0 > 0.0 && p.1 > 0.0 && p.1.is_finite())
        .copied()
        .collect()
}

/// The sizes the x axis labels, from `sizes` (ascending, without repeats) on an axis from
/// `x0` to `x1`: the smallest, then each next one at least [`LABEL_GAP`] pixels right of the
/// last labelled (a doubling sweep of 21 sizes is labelled at every other size).
pub fn ticks(sizes: &[f64], (x0, x1): (f64, f64)) -> Vec<f64> {
    let per_octave = X_PIXELS / (x1 / x0).log2().max(1e-9);
    let mut out: Vec<f64> = Vec::new();
    for &x in sizes {
        if out
            .last()
            .is_none_or(|&l| (x / l).log2() * per_octave >= LABEL_GAP)
        {
            out.push(x);
        }
    }
    out
}

/// The chart as SVG text.
pub fn svg(chart: &Chart) -> Result<String, String> {
    let lines: Vec<Vec<(f64, f64)>> = chart.series.iter().map(shown).collect();
    let all: Vec<(f64, f64)> = lines.iter().flatten().copied().collect();
    let (mut x0, mut x1) = all
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), p| (a.min(p.0), b.max(p.0)));
    if all.is_empty() {
        (x0, x1) = (1024.0, 1024.0 * 1024.0);
    }
    if x0 >= x1 {
        (x0, x1) = (x0 / 2.0, x1 * 2.0);
    }
    // Room at either end for the first and last sizes' labels.
    let pad = ((x1 / x0).log2() * 0.04).max(0.25).exp2();
    let (x0, x1) = (x0 / pad, x1 * pad);
    let (y0, y1) = all
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), p| (a.min(p.1), b.max(p.1)));
    let (y0, y1) = if all.is_empty() {
        (0.1, 10.0)
    } else {
        decades(y0, y1)
    };
    let mut sizes: Vec<f64> = all.iter().map(|p| p.0).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    let keys = ticks(&sizes, (x0, x1));
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, SIZE).into_drawing_area();
        draw(&root, chart, &lines, (x0, x1, keys), (y0, y1)).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(text)
}

fn draw<'a>(
    root: &Area<'a>,
    chart: &Chart,
    lines: &[Vec<(f64, f64)>],
    (x0, x1, keys): (f64, f64, Vec<f64>),
    (y0, y1): (f64, f64),
) -> Result<(), Failure<'a>> {
    let body = heading(root, &chart.title, &chart.subtitle)?;
    let x = (x0..x1).log_scale().base(2.0).with_key_points(keys);
    let mut c = ChartBuilder::on(&body)
        .margin(20)
        .x_label_area_size(56)
        .y_label_area_size(72)
        .build_cartesian_2d(x, (y0..y1).log_scale())?;
    c.configure_mesh()
        // At most 9 labels keep the y axis free of labels between powers (plotters adds
        // them only when it has room for ten times more labels than powers).
        .y_labels(9)
        .max_light_lines(0)
        .x_label_formatter(&|v| (chart.size_label)(v.round().max(1.0) as u64))
        .y_label_formatter(&|v| rate_label(*v))
        .x_desc("message size")
        .y_desc(chart.y_desc.clone())
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 18))
        .draw()?;
    let names: Vec<String> = chart.series.iter().map(|s| s.name.clone()).collect();
    let entries: Vec<String> = (0..lines.len())
        .map(|i| marks::legend(&names, lines, i, chart.size_label))
        .collect();
    for (i, (pts, entry)) in lines.iter().zip(&entries).enumerate() {
        let col = color(i);
        let style = col.stroke_width(2);
        let dashed = marks::overlap(lines, i).is_some();
        let drawn = if dashed {
            c.draw_series(DashedLineSeries::new(pts.clone(), 10, 6, style))?
        } else {
            c.draw_series(LineSeries::new(pts.clone(), style))?
        };
        let anno = drawn.label(entry.clone());
        // The legend's sample: the line (in three pieces, with gaps between them when
        // dashed) with the series' marker on it.
        let g = if dashed { 2 } else { 0 };
        marks::with_marker!(i, col, |m| {
            anno.legend(move |(x, y)| {
                let piece = |a: i32, b: i32| PathElement::new(vec![(a, 0), (b, 0)], style);
                EmptyElement::at((x - 6, y))
                    + piece(0, 9 - g)
                    + piece(9 + g, 19 - g)
                    + piece(19 + g, 28)
                    + (EmptyElement::at((14, 0)) + m())
            });
        });
        marks::with_marker!(i, col, |m| {
            c.draw_series(pts.iter().map(|&p| EmptyElement::at(p) + m()))?;
        });
    }
    let pixels: Vec<Vec<(i32, i32)>> = lines
        .iter()
        .map(|l| l.iter().map(|p| c.backend_coord(p)).collect())
        .collect();
    let area = c.plotting_area().get_pixel_range();
    c.configure_series_labels()
        .position(marks::corner(&pixels, area, marks::legend_size(&entries)))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(160, 160, 160))
        .label_font(("sans-serif", 18))
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_swept_sizes_apart_enough_to_read() {
        let doubling: Vec<f64> = (0..=20).map(|e| f64::from(1u32 << e) * 1024.0).collect();
        let t = ticks(&doubling, (1024.0, (1u64 << 30) as f64));
        let every_other: Vec<f64> = doubling.iter().step_by(2).copied().collect();
        assert_eq!(t, every_other);
        let by8: Vec<f64> = (0..7).map(|k| 1024.0 * 8f64.powi(k)).collect();
        assert_eq!(ticks(&by8, (by8[0], by8[6])), by8, "a x8 sweep: every size");
    }
}
