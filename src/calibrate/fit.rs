//! The least-squares fit of [`super`]: a GPU runtime's flow parameters for one protocol,
//! scaled and with link efficiencies, that reproduce measured times of one host-based family
//! (lowered and proved once per size, then simulated under each trial's parameters as
//! `choose::evaluate` does: the protocol's bytes on the wire, its launch latency added).

use crate::choose::with_family_and_size;
use crate::diag::Diagnostic;
use crate::net::gpu::{Proto, Runtime};
use crate::net::{FlowParams, Net};
use crate::sema::model::{Family, Model};
use crate::sim::fluid::{Lowered, lower};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;
use rayon::prelude::*;

/// One measured size beside the fitted model.
#[derive(Debug, Clone, PartialEq)]
pub struct FitRow {
    pub bytes: u64,
    /// Measured seconds.
    pub measured: f64,
    /// The fitted model's seconds.
    pub model: f64,
}

impl FitRow {
    /// The model's error relative to the measurement (0.1: 10% slow).
    pub fn error(&self) -> f64 {
        self.model / self.measured - 1.0
    }
}

/// What the fit found.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// The fitted parameters (calibrated, naming the source).
    pub params: FlowParams,
    /// The scale of the runtime's latencies.
    pub latency_scale: f64,
    /// Whether the log constrained each efficiency (inside a box, network).
    pub constrained: (bool, bool),
    pub rows: Vec<FitRow>,
}

/// Sizes the fit simulates at most (spread over the measured ones, the first and last kept).
const MAX_ROWS: usize = 12;
/// Coordinate-descent rounds and golden-section steps per parameter and round.
const ROUNDS: usize = 2;
const STEPS: usize = 14;

/// Fits `runtime`'s costs under `proto` to `measured` (bytes, seconds) of `family` on `m`'s
/// topology and collective; `source` names the measurements in the result.
pub fn fit(
    m: &Model,
    family: &Family,
    runtime: Runtime,
    proto: Proto,
    measured: &[(u64, f64)],
    source: &str,
) -> Result<Fit, Vec<Diagnostic>> {
    let spans = crate::net::file_spans_boxes(m);
    let table = runtime.params(proto, spans, &FlowParams::default());
    let rows = spread(measured);
    let params = |x: &[f64; 3]| calibrated(&table, x, source);
    // Each size's program is lowered and proved once; every trial of the search simulates it
    // again under its parameters (what `choose::evaluate` does for one protocol).
    let Some(topo) = m.topology.as_ref() else {
        return Err(Vec::new());
    };
    let net = Net::new(topo);
    let programs: Vec<Lowered> = rows
        .par_iter()
        .map(|&(b, _)| {
            let wire = (BigRational::from_integer(b.into()) * &table.wire).ceil();
            let wire = wire.to_integer().to_u64().unwrap_or(u64::MAX);
            lower(&with_family_and_size(m, family, wire), &table)
        })
        .collect::<Result<_, _>>()?;
    let run = |x: &[f64; 3]| -> Result<Vec<f64>, Vec<Diagnostic>> {
        let p = params(x);
        let launch = p.launch.to_f64().unwrap_or(0.0);
        programs
            .par_iter()
            .map(|low| low.simulate(&net, &p, false).map(|r| r.seconds() + launch))
            .collect()
    };
    let cost = |x: &[f64; 3]| -> Result<f64, Vec<Diagnostic>> {
        let t = run(x)?;
        Ok(t.iter()
            .zip(&rows)
            .map(|(model, (_, meas))| {
                let e = (model.max(1e-15) / meas).ln();
                e * e
            })
            .sum())
    };
    // x = [ln latency scale, box efficiency, network efficiency].
    let mut x = [0.0f64, 1.0, 1.0];
    let bounds = [(0.05f64.ln(), 50.0f64.ln()), (0.05, 1.0), (0.05, 1.0)];
    for _ in 0..ROUNDS {
        for (i, &(lo, hi)) in bounds.iter().enumerate() {
            x[i] = golden(lo, hi, |v| {
                let mut y = x;
                y[i] = v;
                cost(&y)
            })?;
        }
    }
    // An efficiency the log does not constrain goes back to 1.
    let at = cost(&x)?;
    let mut constrained = [true; 2];
    for (k, c) in constrained.iter_mut().enumerate() {
        let mut y = x;
        y[k + 1] = 1.0;
        if (cost(&y)? - at).abs() <= 1e-9 * at.max(1e-12) {
            x[k + 1] = 1.0;
            *c = false;
        }
    }
    let fitted = params(&x);
    let times = run(&x)?;
    Ok(Fit {
        latency_scale: round3(x[0].exp()),
        constrained: (constrained[0], constrained[1]),
        rows: rows
            .iter()
            .zip(times)
            .map(|(&(bytes, measured), model)| FitRow {
                bytes,
                measured,
                model,
            })
            .collect(),
        params: fitted,
    })
}

/// At most [`MAX_ROWS`] of `measured`, evenly by index, the first and last kept.
fn spread(measured: &[(u64, f64)]) -> Vec<(u64, f64)> {
    let n = measured.len();
    if n <= MAX_ROWS {
        return measured.to_vec();
    }
    (0..MAX_ROWS)
        .map(|i| measured[i * (n - 1) / (MAX_ROWS - 1)])
        .collect()
}

/// `x` rounded to three decimals (the precision the declaration keeps).
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// `table`'s latencies times `e^x[0]` (to the nanosecond) and the efficiencies `x[1]`, `x[2]`
/// (to three decimals), calibrated from `source`.
fn calibrated(table: &FlowParams, x: &[f64; 3], source: &str) -> FlowParams {
    let scale = BigRational::new(
        BigInt::from((round3(x[0].exp()) * 1000.0) as i64),
        BigInt::from(1000),
    );
    let ns = |v: &BigRational| {
        let t = (v * &scale * BigRational::from_integer(1_000_000_000i64.into())).round();
        t / BigRational::from_integer(1_000_000_000i64.into())
    };
    let eff = |v: f64| BigRational::new(BigInt::from((round3(v) * 1000.0) as i64), 1000.into());
    let mut p = table.clone();
    p.launch = ns(&table.launch);
    p.overhead = ns(&table.overhead);
    p.net_overhead = table.net_overhead.as_ref().map(ns);
    p.box_efficiency = eff(x[1]);
    p.net_efficiency = eff(x[2]);
    p.calibrated = Some(source.to_string());
    p
}

/// The minimum of `f` on [lo, hi] by golden-section search ([`STEPS`] steps).
fn golden(
    lo: f64,
    hi: f64,
    mut f: impl FnMut(f64) -> Result<f64, Vec<Diagnostic>>,
) -> Result<f64, Vec<Diagnostic>> {
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (lo, hi);
    let mut c = b - g * (b - a);
    let mut d = a + g * (b - a);
    let (mut fc, mut fd) = (f(c)?, f(d)?);
    for _ in 0..STEPS {
        if fc <= fd {
            b = d;
            d = c;
            fd = fc;
            c = b - g * (b - a);
            fc = f(c)?;
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + g * (b - a);
            fd = f(d)?;
        }
    }
    // The ends too: an efficiency of exactly 1 (unconstrained) sits on the boundary.
    let mut best = (if fc <= fd { c } else { d }, fc.min(fd));
    for end in [lo, hi] {
        let v = f(end)?;
        if v < best.1 {
            best = (end, v);
        }
    }
    Ok(best.0)
}
