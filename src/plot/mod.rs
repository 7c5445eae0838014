//! SVG line charts of a rate against a message size, with `plotters`' SVG backend (no system
//! fonts: text is written as SVG `<text>` for the viewer to render, and the naive font metrics
//! only place it). Log-log axes: sizes on a base-2 axis labelled in binary units, rates in GB/s
//! on a base-10 axis; one line with a marker per point for each series, a legend, a title and a
//! subtitle (say there which model made the figures). Everything is integer pixel coordinates
//! and fixed colours, so the same chart gives the same bytes. [`bars`] draws distributions and
//! bars with ranges in the same style.

pub mod bars;

use plotters::coord::combinators::IntoLogRange;
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

/// Width and height in pixels.
pub const SIZE: (u32, u32) = (1000, 640);

/// Series colours, in order (Tableau 10); series past the tenth reuse them.
pub const COLORS: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

/// The colour of series `i`.
pub fn color(i: usize) -> RGBColor {
    let (r, g, b) = COLORS[i % COLORS.len()];
    RGBColor(r, g, b)
}

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

/// The chart as SVG text.
pub fn svg(chart: &Chart) -> Result<String, String> {
    let shown = |p: &&(f64, f64)| p.0 > 0.0 && p.1 > 0.0 && p.1.is_finite();
    let all: Vec<(f64, f64)> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().filter(shown).copied())
        .collect();
    let (mut x0, mut x1) = all
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), p| (a.min(p.0), b.max(p.0)));
    if all.is_empty() {
        (x0, x1) = (1024.0, 1024.0 * 1024.0);
    }
    if x0 >= x1 {
        (x0, x1) = (x0 / 2.0, x1 * 2.0);
    }
    let (y0, y1) = all
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), p| (a.min(p.1), b.max(p.1)));
    let (y0, y1) = if all.is_empty() {
        (0.1, 10.0)
    } else {
        decades(y0, y1)
    };
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, SIZE).into_drawing_area();
        draw(&root, chart, (x0, x1), (y0, y1)).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(text)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type Failure<'a> = DrawingAreaErrorKind<<SVGBackend<'a> as DrawingBackend>::ErrorType>;

fn draw<'a>(
    root: &Area<'a>,
    chart: &Chart,
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> Result<(), Failure<'a>> {
    root.fill(&WHITE)?;
    let (head, body) = root.split_vertically(72);
    head.draw(&Text::new(
        chart.title.clone(),
        (24, 12),
        ("sans-serif", 26).into_font().color(&BLACK),
    ))?;
    head.draw(&Text::new(
        chart.subtitle.clone(),
        (24, 44),
        ("sans-serif", 18).into_font().color(&RGBColor(80, 80, 80)),
    ))?;
    let mut c = ChartBuilder::on(&body)
        .margin(20)
        .x_label_area_size(56)
        .y_label_area_size(72)
        .build_cartesian_2d((x0..x1).log_scale().base(2.0), (y0..y1).log_scale())?;
    c.configure_mesh()
        // At most 9 labels keep the log axes free of labels between powers (plotters adds
        // them only when it has room for ten times more labels than powers).
        .x_labels(9)
        .y_labels(9)
        .max_light_lines(0)
        .x_label_formatter(&|v| (chart.size_label)(v.round().max(1.0) as u64))
        .y_label_formatter(&|v| rate_label(*v))
        .x_desc("message size")
        .y_desc(chart.y_desc.clone())
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 18))
        .draw()?;
    for (i, s) in chart.series.iter().enumerate() {
        let col = color(i);
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter(|p| p.0 > 0.0 && p.1 > 0.0 && p.1.is_finite())
            .copied()
            .collect();
        c.draw_series(LineSeries::new(pts.clone(), col.stroke_width(2)))?
            .label(s.name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 18, y + 5)], col.filled()));
        c.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, col.filled())))?;
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(160, 160, 160))
        .label_font(("sans-serif", 18))
        .draw()?;
    Ok(())
}
