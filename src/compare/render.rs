//! A [`Comparison`] as text: a table for people ([`super::table`]), CSV and JSON for tools.
//! Each says which model and parameters made its figures: the table in its header, CSV in
//! columns of every row, JSON in its `model` object. Numbers are formatted by Rust's exact float formatting, so the same
//! comparison gives the same bytes.

use super::{Axis, Cell, Comparison, label, sizes::show};
use serde::Serialize;

/// The sweep's sizes as `1 KiB to 1 GiB (21 sizes)`, or the varied `param`'s values as
/// `hosts = 51, 102, 256 (3 values), 4 MiB`.
pub(super) fn span_of(c: &Comparison) -> String {
    if let Axis::Param { names, points } = &c.axis {
        let same = c.sizes.iter().all(|&b| Some(&b) == c.sizes.first());
        let size = match c.sizes.first() {
            Some(&b) if same => format!(", {}", show(b)),
            _ => String::new(),
        };
        let n = points.len();
        let plural = if n == 1 { "" } else { "s" };
        return match names.as_slice() {
            [name] => {
                let values: Vec<&str> = points
                    .iter()
                    .filter_map(|p| p.values.first().map(String::as_str))
                    .collect();
                format!("{name} = {} ({n} value{plural}){size}", values.join(", "))
            }
            _ => format!("{} ({n} combination{plural}){size}", names.join(" x ")),
        };
    }
    match (c.sizes.first(), c.sizes.last()) {
        (Some(&a), Some(&b)) if a != b => {
            format!("{} to {} ({} sizes)", show(a), show(b), c.sizes.len())
        }
        (Some(&a), _) => show(a),
        _ => "no sizes".into(),
    }
}

/// The model line: `flow-level model: overhead ... (model `m`)`.
pub fn model_line(c: &Comparison) -> String {
    c.engine.describe()
}

/// What is compared: `allreduce of f16 on `a100` (16 ranks)`.
pub fn subject(c: &Comparison) -> String {
    format!(
        "{} of {} on `{}` ({} ranks)",
        c.kind.name(),
        c.dtype.name(),
        c.topology,
        c.ranks
    )
}

/// A time with a readable unit and three or four significant digits (one formatter for every
/// simulated time collc prints).
pub use crate::sim::fluid::show_seconds as time;

/// Bytes per second as GB/s with three significant digits (comparisons only, so no platform
/// maths decides a digit); below 0.001 GB/s in scientific notation.
pub fn gbs(bps: f64) -> String {
    let v = bps / 1e9;
    if v > 0.0 && v < 0.001 {
        return format!("{v:.2e}");
    }
    let decimals = [100.0, 10.0, 1.0, 0.1, 0.01]
        .iter()
        .position(|&t| v >= t)
        .unwrap_or(5);
    format!("{v:.decimals$}")
}

/// The table `collc compare` prints by default ([`super::table`]).
pub use super::table::table;

/// One field of a CSV row, quoted when it needs to be (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One row per (size, family), with the model in every row; a failed cell has empty figures and
/// the failure in `error`.
pub fn csv(c: &Comparison) -> String {
    let mut out = String::from(
        "topology,collective,ranks,dtype,model,overhead_s,gamma_s_per_byte,size_bytes,family,schedule,time_s,algbw_GBps,busbw_GBps,winner,error",
    );
    let points: &[super::Point] = match &c.axis {
        Axis::Param { names, points } => {
            for name in names {
                out.push_str(&format!(",{}", field(name)));
            }
            points
        }
        Axis::Size => &[],
    };
    out.push('\n');
    let defaults = format!("{} defaults", c.engine.kind());
    for (s, row) in c.cells.iter().enumerate() {
        let winner = c.winner(s);
        for (f, cell) in row.iter().enumerate() {
            let (t, a, b, e) = match cell {
                Cell::Done {
                    seconds,
                    algbw,
                    busbw,
                } => (
                    seconds.to_string(),
                    (algbw / 1e9).to_string(),
                    (busbw / 1e9).to_string(),
                    String::new(),
                ),
                Cell::Failed { code, message } => (
                    String::new(),
                    String::new(),
                    String::new(),
                    format!("{code}: {message}"),
                ),
            };
            let point = points.get(s);
            let engine = point.map_or(&c.engine, |p| &p.engine);
            let model = engine.declared().unwrap_or(&defaults);
            let mut cols = vec![
                field(&c.topology),
                c.kind.name().to_string(),
                point.map_or(c.ranks, |p| p.ranks).to_string(),
                c.dtype.name().to_string(),
                field(model),
                engine.overhead_s().to_string(),
                engine.gamma_s().to_string(),
                c.sizes[s].to_string(),
                c.families[f].name().to_string(),
                field(&label(&c.families[f])),
                t,
                a,
                b,
                (winner == Some(f)).to_string(),
                field(&e),
            ];
            if let Some(p) = point {
                cols.extend(p.values.iter().map(|v| field(v)));
            }
            out.push_str(&cols.join(","));
            out.push('\n');
        }
    }
    out
}

#[derive(Serialize)]
struct Json<'a> {
    topology: &'a str,
    collective: &'static str,
    ranks: usize,
    dtype: &'static str,
    model: JsonModel<'a>,
    /// The varied `param`s, when the rows are combinations of their values.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    vary: Vec<&'a str>,
    bus_factor: f64,
    families: Vec<JsonFamily>,
    sizes: Vec<JsonSize<'a>>,
    crossovers: Vec<JsonCrossover<'a>>,
    notes: Vec<String>,
}

#[derive(Serialize)]
struct JsonModel<'a> {
    kind: &'static str,
    /// The declared `flow` model, or null for the defaults.
    name: Option<&'a str>,
    overhead_s: f64,
    gamma_s_per_byte: f64,
    description: String,
}

#[derive(Serialize)]
struct JsonFamily {
    family: &'static str,
    schedule: String,
    simulated: bool,
}

#[derive(Serialize)]
struct JsonSize<'a> {
    bytes: u64,
    /// The `param`s' values (in `vary` order), the ranks and the model at this row, when
    /// `param`s vary.
    #[serde(skip_serializing_if = "Option::is_none")]
    values: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ranks: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    winner: Option<&'static str>,
    results: Vec<JsonCell<'a>>,
}

#[derive(Serialize)]
struct JsonCell<'a> {
    family: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    time_s: Option<f64>,
    #[serde(rename = "algbw_GBps", skip_serializing_if = "Option::is_none")]
    algbw: Option<f64>,
    #[serde(rename = "busbw_GBps", skip_serializing_if = "Option::is_none")]
    busbw: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<JsonError<'a>>,
}

#[derive(Serialize)]
struct JsonError<'a> {
    code: crate::diag::Code,
    message: &'a str,
}

#[derive(Serialize)]
struct JsonCrossover<'a> {
    bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    values: Option<&'a [String]>,
    from: &'a str,
    to: &'a str,
}

/// The comparison as one JSON object (pretty-printed, keys in a fixed order).
pub fn json(c: &Comparison) -> String {
    let name = |f: usize| c.families[f].name();
    let points: &[super::Point] = match &c.axis {
        Axis::Param { points, .. } => points,
        Axis::Size => &[],
    };
    let doc = Json {
        topology: &c.topology,
        collective: c.kind.name(),
        ranks: c.ranks,
        dtype: c.dtype.name(),
        model: JsonModel {
            kind: c.engine.kind(),
            name: c.engine.declared(),
            overhead_s: c.engine.overhead_s(),
            gamma_s_per_byte: c.engine.gamma_s(),
            description: model_line(c),
        },
        vary: match &c.axis {
            Axis::Param { names, .. } => names.iter().map(String::as_str).collect(),
            Axis::Size => Vec::new(),
        },
        bus_factor: c.bus_factor(),
        families: (0..c.families.len())
            .map(|f| JsonFamily {
                family: name(f),
                schedule: label(&c.families[f]),
                simulated: c.evaluated(f),
            })
            .collect(),
        sizes: c
            .cells
            .iter()
            .enumerate()
            .map(|(s, row)| JsonSize {
                bytes: c.sizes[s],
                values: points.get(s).map(|p| p.values.as_slice()),
                ranks: points.get(s).map(|p| p.ranks),
                model: points.get(s).map(|p| p.engine.describe()),
                winner: c.winner(s).map(name),
                results: row
                    .iter()
                    .enumerate()
                    .map(|(f, cell)| match cell {
                        Cell::Done {
                            seconds,
                            algbw,
                            busbw,
                        } => JsonCell {
                            family: name(f),
                            time_s: Some(*seconds),
                            algbw: Some(algbw / 1e9),
                            busbw: Some(busbw / 1e9),
                            error: None,
                        },
                        Cell::Failed { code, message } => JsonCell {
                            family: name(f),
                            time_s: None,
                            algbw: None,
                            busbw: None,
                            error: Some(JsonError {
                                code: *code,
                                message,
                            }),
                        },
                    })
                    .collect(),
            })
            .collect(),
        crossovers: c
            .crossovers()
            .iter()
            .map(|x| JsonCrossover {
                bytes: x.bytes,
                values: points.get(x.row).map(|p| p.values.as_slice()),
                from: name(x.from),
                to: name(x.to),
            })
            .collect(),
        notes: c.notes(),
    };
    let mut s =
        serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
