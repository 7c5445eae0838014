//! The fit as `collc calibrate` prints it: what was fitted, every fitted size measured and
//! modelled with the model's error, and the fitted parameters.

use crate::calibrate::Fit;
use crate::net::gpu::{Proto, Runtime};

/// The table of `fit`: `kind` on `n` ranks by `family` under `runtime`'s `proto` costs.
pub(super) fn render(
    fit: &Fit,
    runtime: Runtime,
    proto: Proto,
    kind: &str,
    n: u32,
    family: &str,
) -> String {
    let mut s = format!(
        "calibrate: {kind} on {n} ranks, {family} under {} {} costs, fitted by least squares on log time\n",
        runtime.name(),
        proto.name()
    );
    s.push_str(&format!(
        "{:>12} {:>14} {:>14} {:>8}\n",
        "size", "measured", "model", "error"
    ));
    for r in &fit.rows {
        s.push_str(&format!(
            "{:>12} {:>14} {:>14} {:>+7.1}%\n",
            crate::compare::sizes::show(r.bytes),
            crate::sim::fluid::show_seconds(r.measured),
            crate::sim::fluid::show_seconds(r.model),
            r.error() * 100.0
        ));
    }
    let p = &fit.params;
    let eff = |v: &num_rational::BigRational, constrained: bool| {
        let shown = crate::sema::units::fmt_rational(v);
        if constrained {
            shown
        } else {
            format!("{shown} (no link of this class limits the measured sizes)")
        }
    };
    s.push_str(&format!(
        "latency scale {} (launch {} ns, step {} ns inside a box, {} ns over the network)\n",
        fit.latency_scale,
        crate::net::fmt_ns(&p.launch),
        crate::net::fmt_ns(&p.overhead),
        crate::net::fmt_ns(p.net_overhead.as_ref().unwrap_or(&p.overhead)),
    ));
    s.push_str(&format!(
        "link efficiency inside a box {}, over the network {}\n",
        eff(&p.box_efficiency, fit.constrained.0),
        eff(&p.net_efficiency, fit.constrained.1)
    ));
    s
}
