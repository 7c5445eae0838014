//! The one-line description of an [`Optimum`]: time for a block size, and what bounds it (the
//! tight cut's nodes and capacity, or the bracket when not proved). Numbers are rounded for
//! reading only; the exact values are the Optimum's fields.

use super::{Optimum, approx};
use crate::sema::model::Topology;
use num_rational::BigRational;

pub fn describe(opt: &Optimum, topo: &Topology, block_bytes: u64) -> String {
    let (lo, hi) = opt.time(block_bytes);
    let size = bytes(block_bytes);
    let time = if opt.proved() {
        format!("optimal all-to-all time {}", seconds(&lo))
    } else {
        format!(
            "all-to-all time between {} and {} (not proved optimal)",
            seconds(&lo),
            seconds(&hi)
        )
    };
    let bound = match &opt.cut {
        Some(c) => {
            let mut names: Vec<&str> = c
                .nodes
                .iter()
                .filter_map(|&v| topo.nodes.get(v).map(|n| n.name.as_str()))
                .collect();
            if names.len() > 6 {
                let more = names.len() - 4;
                names.truncate(4);
                let list = names.join(", ");
                format!(
                    "the cut around {{{list}, and {more} more}} of {}",
                    rate(&c.capacity)
                )
            } else {
                format!(
                    "the cut around {{{}}} of {}",
                    names.join(", "),
                    rate(&c.capacity)
                )
            }
        }
        None => "a weighted sum of cuts (no single cut is tight)".to_string(),
    };
    format!("{time} for {size} blocks (bound: {bound})")
}

fn seconds(t: &BigRational) -> String {
    let t = approx(t);
    if t >= 1.0 {
        format!("{t:.3} s")
    } else if t >= 1e-3 {
        format!("{:.3} ms", t * 1e3)
    } else if t >= 1e-6 {
        format!("{:.3} us", t * 1e6)
    } else {
        format!("{:.3} ns", t * 1e9)
    }
}

fn rate(bw: &BigRational) -> String {
    format!("{} GB/s", trim(approx(bw) / 1e9))
}

fn bytes(b: u64) -> String {
    for (unit, size) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if b >= size {
            return format!("{} {unit}", trim(b as f64 / size as f64));
        }
    }
    format!("{b} B")
}

/// Up to three decimals, trailing zeros dropped.
fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
