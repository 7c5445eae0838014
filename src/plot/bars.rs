//! SVG bar charts with `plotters`, in the style of [`super::svg`]'s line charts (same size,
//! colours and fonts, SVG text, integer coordinates, so the same chart gives the same bytes):
//!
//! - [`Histogram`]: a distribution over labelled bins, one bar per series in each bin, as the
//!   share of the samples: the Canary paper's link-utilisation distributions (Fig. 7b, 10b).
//! - [`Grouped`]: values in groups, one bar per series in each (a comparison over a `param`).
//! - [`Bars`]: one bar per item with a whisker from its minimum to its maximum, as the paper's
//!   goodput over five runs (Fig. 7a).

use super::{Area, Failure, SIZE, color, heading};
use plotters::prelude::*;

/// A distribution: `series` of sample counts per bin (as many as `bins`).
#[derive(Debug, Clone)]
pub struct Histogram {
    pub title: String,
    pub subtitle: String,
    pub x_desc: String,
    pub bins: Vec<String>,
    pub series: Vec<(String, Vec<u64>)>,
}

/// Items with a median and a range.
#[derive(Debug, Clone)]
pub struct Bars {
    pub title: String,
    pub subtitle: String,
    pub y_desc: String,
    /// (label, median, min, max)
    pub items: Vec<(String, f64, f64, f64)>,
}

/// A share as the y axis shows it: `25%`.
fn percent(v: f64) -> String {
    format!("{:.0}%", v * 100.0)
}

impl Histogram {
    /// The chart as SVG text; each series is drawn as shares of its own sample count.
    pub fn svg(&self) -> Result<String, String> {
        let mut text = String::new();
        {
            let root = SVGBackend::with_string(&mut text, SIZE).into_drawing_area();
            self.draw(&root).map_err(|e| e.to_string())?;
            root.present().map_err(|e| e.to_string())?;
        }
        Ok(text)
    }

    fn draw<'a>(&self, root: &Area<'a>) -> Result<(), Failure<'a>> {
        let shares: Vec<Vec<f64>> = self
            .series
            .iter()
            .map(|(_, counts)| {
                let total: u64 = counts.iter().sum();
                counts
                    .iter()
                    .map(|&c| {
                        if total == 0 {
                            0.0
                        } else {
                            c as f64 / total as f64
                        }
                    })
                    .collect()
            })
            .collect();
        let top = shares.iter().flatten().fold(0.0f64, |a, &b| a.max(b));
        let top = ((top * 10.0).ceil() / 10.0).clamp(0.1, 1.0);
        let body = heading(root, &self.title, &self.subtitle)?;
        let names: Vec<&str> = self.series.iter().map(|(n, _)| n.as_str()).collect();
        let axes = Axes {
            x_desc: &self.x_desc,
            y_desc: "share of samples",
            top,
            y_labels: 11,
            y_label: &|v| percent(*v),
        };
        groups(&body, &self.bins, &names, &shares, &axes)
    }
}

/// Values in groups: one bar per series in each group (the paper's Fig. 8 and 10a).
#[derive(Debug, Clone)]
pub struct Grouped {
    pub title: String,
    pub subtitle: String,
    pub x_desc: String,
    pub y_desc: String,
    pub groups: Vec<String>,
    /// Per series its name and one value per group (0 where it has none).
    pub series: Vec<(String, Vec<f64>)>,
}

impl Grouped {
    /// The chart as SVG text.
    pub fn svg(&self) -> Result<String, String> {
        let mut text = String::new();
        {
            let root = SVGBackend::with_string(&mut text, SIZE).into_drawing_area();
            let top = self
                .series
                .iter()
                .flat_map(|s| s.1.iter())
                .fold(0.0f64, |a, &b| a.max(b))
                .max(1e-9)
                // Room above the bars for the legend.
                * (1.15 + 0.06 * self.series.len() as f64);
            let names: Vec<&str> = self.series.iter().map(|(n, _)| n.as_str()).collect();
            let values: Vec<Vec<f64>> = self.series.iter().map(|s| s.1.clone()).collect();
            let draw = |root: &Area| -> Result<(), Failure> {
                let body = heading(root, &self.title, &self.subtitle)?;
                let axes = Axes {
                    x_desc: &self.x_desc,
                    y_desc: &self.y_desc,
                    top,
                    y_labels: 10,
                    y_label: &|v| axis_number(*v),
                };
                groups(&body, &self.groups, &names, &values, &axes)
            };
            draw(&root).map_err(|e| e.to_string())?;
            root.present().map_err(|e| e.to_string())?;
        }
        Ok(text)
    }
}

/// A y axis value: three significant digits at most, no trailing zeros.
fn axis_number(v: f64) -> String {
    let s = if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The axes of a grouped bar chart.
struct Axes<'x> {
    x_desc: &'x str,
    y_desc: &'x str,
    top: f64,
    y_labels: usize,
    y_label: &'x dyn Fn(&f64) -> String,
}

/// Draws `values[series][group]` as bars, the series side by side in each group.
fn groups<'a>(
    body: &Area<'a>,
    labels: &[String],
    names: &[&str],
    values: &[Vec<f64>],
    axes: &Axes,
) -> Result<(), Failure<'a>> {
    let nb = labels.len().max(1);
    // One unit per group; the series' bars share the middle 80% of it.
    let mut c = ChartBuilder::on(body)
        .margin(20)
        .x_label_area_size(56)
        .y_label_area_size(72)
        .build_cartesian_2d(0f64..nb as f64, 0f64..axes.top)?;
    c.configure_mesh()
        .x_labels(nb * 2 + 1)
        .y_labels(axes.y_labels)
        .disable_x_mesh()
        .max_light_lines(0)
        .x_label_formatter(&|v| {
            // Labels at group centres only.
            let i = v.floor() as usize;
            if (v - v.floor() - 0.5).abs() < 1e-6 && i < labels.len() {
                labels[i].clone()
            } else {
                String::new()
            }
        })
        .y_label_formatter(axes.y_label)
        .x_desc(axes.x_desc)
        .y_desc(axes.y_desc)
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 18))
        .draw()?;
    let width = 0.8 / names.len().max(1) as f64;
    for (si, name) in names.iter().enumerate() {
        let col = color(si);
        let bars = values[si].iter().enumerate().map(move |(b, &h)| {
            let x0 = b as f64 + 0.1 + si as f64 * width;
            Rectangle::new([(x0, 0.0), (x0 + width, h)], col.filled())
        });
        c.draw_series(bars)?
            .label(name.to_string())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 18, y + 5)], col.filled()));
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(160, 160, 160))
        .label_font(("sans-serif", 18))
        .draw()?;
    Ok(())
}

impl Bars {
    /// The chart as SVG text.
    pub fn svg(&self) -> Result<String, String> {
        let mut text = String::new();
        {
            let root = SVGBackend::with_string(&mut text, SIZE).into_drawing_area();
            self.draw(&root).map_err(|e| e.to_string())?;
            root.present().map_err(|e| e.to_string())?;
        }
        Ok(text)
    }

    fn draw<'a>(&self, root: &Area<'a>) -> Result<(), Failure<'a>> {
        let body = heading(root, &self.title, &self.subtitle)?;
        let n = self.items.len().max(1);
        let top = self
            .items
            .iter()
            .map(|x| x.3.max(x.1))
            .fold(0.0f64, f64::max)
            .max(1e-9)
            * 1.15;
        let mut c = ChartBuilder::on(&body)
            .margin(20)
            .x_label_area_size(56)
            .y_label_area_size(72)
            .build_cartesian_2d(0f64..n as f64, 0f64..top)?;
        let items = &self.items;
        c.configure_mesh()
            .x_labels(n * 2 + 1)
            .y_labels(10)
            .disable_x_mesh()
            .max_light_lines(0)
            .x_label_formatter(&|v| {
                let i = v.floor() as usize;
                if (v - v.floor() - 0.5).abs() < 1e-6 && i < items.len() {
                    items[i].0.clone()
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|v| format!("{v:.0}"))
            .y_desc(self.y_desc.clone())
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 18))
            .draw()?;
        for (i, (_, med, lo, hi)) in self.items.iter().enumerate() {
            let col = color(i);
            let x = i as f64;
            c.draw_series(std::iter::once(Rectangle::new(
                [(x + 0.2, 0.0), (x + 0.8, *med)],
                col.filled(),
            )))?;
            c.draw_series(std::iter::once(PathElement::new(
                vec![(x + 0.5, *lo), (x + 0.5, *hi)],
                BLACK.stroke_width(2),
            )))?;
            for y in [*lo, *hi] {
                c.draw_series(std::iter::once(PathElement::new(
                    vec![(x + 0.4, y), (x + 0.6, y)],
                    BLACK.stroke_width(2),
                )))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_and_bars_are_deterministic_svg() {
        let h = Histogram {
            title: "link utilisation".into(),
            subtitle: "packet model".into(),
            x_desc: "utilisation".into(),
            bins: (0..10)
                .map(|i| format!("{}-{}%", i * 10, i * 10 + 10))
                .collect(),
            series: vec![
                ("one tree".into(), vec![5, 1, 0, 0, 0, 0, 0, 0, 0, 4]),
                ("four trees".into(), vec![2, 2, 2, 2, 2, 0, 0, 0, 0, 0]),
            ],
        };
        let a = h.svg().expect("svg");
        assert_eq!(a, h.svg().expect("svg"));
        assert!(a.starts_with("<svg") && a.contains("one tree") && a.contains("90-100%"));
        let b = Bars {
            title: "goodput".into(),
            subtitle: "5 runs".into(),
            y_desc: "Gb/s".into(),
            items: vec![
                ("ring".into(), 40.0, 38.0, 41.0),
                ("4 trees".into(), 80.0, 70.0, 85.0),
            ],
        };
        let s = b.svg().expect("svg");
        assert!(s.contains("4 trees") && s.contains("<rect"));
        let g = Grouped {
            title: "goodput".into(),
            subtitle: "packet model".into(),
            x_desc: "hosts".into(),
            y_desc: "Gb/s".into(),
            groups: vec!["hosts=51".into(), "hosts=512".into()],
            series: vec![
                ("canary".into(), vec![80.0, 90.0]),
                ("ring".into(), vec![0.0, 17.5]),
            ],
        };
        let a = g.svg().expect("svg");
        assert_eq!(a, g.svg().expect("svg"));
        assert!(a.contains("hosts=512") && a.contains("canary") && a.contains("<rect"));
    }
}
