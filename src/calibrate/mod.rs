//! Calibration from measurements (DESIGN.md, "Figures that match the hardware"): what a user
//! measured on their machine, read ([`nccl_tests`]) and turned into a flow model whose figures
//! reproduce it ([`fit`]), written as a `model` declaration to keep beside the topology
//! ([`declaration`]). `collc calibrate` (src/cli/calibrate.rs) is the front end.
//!
//! The fit runs the algorithm that produced the log (NCCL's ring,
//! [`crate::sema::model::Family::channel_rings`], or its tree,
//! [`crate::sema::model::Family::NcclTree`]) on the file's topology under a GPU runtime's costs for one protocol, and finds three free
//! parameters by least squares on the logarithm of the times (every size weighs the same,
//! whatever its magnitude):
//!
//! - a scale of the runtime's latencies (launch and per-step, inside a box and over the
//!   network, together: one log of one algorithm cannot tell them apart);
//! - the efficiency of the links inside a box and of the links of the network (the share of
//!   their bandwidth that a collective gets), each in (0, 1].
//!
//! The search is coordinate descent with a golden-section search per parameter (the latency
//! scale on a log scale), a fixed number of rounds, so it is deterministic. A parameter the
//! log does not constrain (no link of its class is a bottleneck at any measured size) keeps
//! its starting value, 1, and the report says so.

pub mod fit;
pub mod nccl_tests;

pub use fit::{Fit, FitRow, fit};

use crate::net::FlowParams;
use crate::sema::units::fmt_rational;

/// The `model NAME: flow { ... }` declaration of fitted parameters, with a comment that says
/// where they came from; `source` names the log.
pub fn declaration(name: &str, p: &FlowParams, about: &str) -> String {
    let mut s = String::new();
    for line in about.lines() {
        s.push_str(&format!("// {line}\n"));
    }
    s.push_str(&format!("model {name}: flow {{\n"));
    if let Some((rt, proto)) = p.runtime {
        s.push_str(&format!("    runtime: {};\n", rt.name()));
        if let Some(proto) = proto {
            s.push_str(&format!(
                "    proto: {};\n",
                proto.name().to_ascii_lowercase()
            ));
        }
    }
    let ns = |x: &num_rational::BigRational| format!("{} ns", crate::net::fmt_ns(x));
    s.push_str(&format!("    launch: {};\n", ns(&p.launch)));
    s.push_str(&format!("    overhead: {};\n", ns(&p.overhead)));
    if let Some(n) = &p.net_overhead {
        s.push_str(&format!("    net_overhead: {};\n", ns(n)));
    }
    s.push_str(&format!(
        "    box_efficiency: {};\n",
        fmt_rational(&p.box_efficiency)
    ));
    s.push_str(&format!(
        "    net_efficiency: {};\n",
        fmt_rational(&p.net_efficiency)
    ));
    if let Some(src) = &p.calibrated {
        s.push_str(&format!("    calibrated: {src:?};\n"));
    }
    s.push_str("}\n");
    s
}
