//! How the driver's texts show figures: bandwidths in GB/s and differences in percent.

/// Bytes per second as GB/s with two decimals.
pub(crate) fn gbs(b: f64) -> String {
    format!("{:.2} GB/s", b / 1e9)
}

/// `a` against `b` in percent, with -0.0 shown as 0.0.
pub(crate) fn pct(a: f64, b: f64) -> f64 {
    let p = if b > 0.0 { (a - b) / b * 100.0 } else { 0.0 };
    if p.abs() < 0.05 { 0.0 } else { p }
}
