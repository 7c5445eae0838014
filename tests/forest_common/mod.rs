//! Shared helpers of the ForestColl tests: loading topologies through the front end and algbw.

#![allow(dead_code)]

use collc::diag::{SourceMap, render};
use collc::forest::Forest;
use collc::sema::model::Topology;
use collc::sema::{Options, check};
use num_rational::BigRational;
use num_traits::One;
use std::path::Path;

/// Checks `text` as a `.coll` file named `name`; returns its topology and the collective's ranks
/// (all compute nodes when it declares no collective).
pub fn load_text(name: &str, text: &str) -> (Topology, Vec<usize>) {
    let mut sources = SourceMap::new();
    let id = sources.add(name.to_string(), text.to_string());
    let c = check(&mut sources, id, &Options::default());
    assert!(
        c.diagnostics
            .iter()
            .all(|d| d.severity != collc::diag::Severity::Error),
        "{name}:\n{}",
        render::to_text(&c.diagnostics, &sources)
    );
    let model = c.model.expect("a model");
    let topo = model.topology.expect("a topology");
    let ranks = match model.collective {
        Some(c) => c.ranks,
        None => topo.compute_nodes().collect(),
    };
    (topo, ranks)
}

/// Loads a file of the repository (e.g. `examples/dgx_a100_2x8.coll`).
pub fn load(rel: &str) -> (Topology, Vec<usize>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let text = std::fs::read_to_string(&path).expect("readable file");
    load_text(rel, &text)
}

/// Allgather algbw in GB/s: N * M / T with T = M * inv_rate.
pub fn algbw_gbs(n: usize, inv_rate: &BigRational) -> BigRational {
    BigRational::from_integer(n.into()) / inv_rate / BigRational::from_integer(1_000_000_000.into())
}

/// algbw of the forest's rate.
pub fn forest_algbw(f: &Forest) -> BigRational {
    algbw_gbs(f.ranks.len(), &f.inv_rate)
}

pub fn optimum_algbw(f: &Forest) -> BigRational {
    algbw_gbs(f.ranks.len(), &f.optimum)
}

pub fn ratio(n: i64, d: i64) -> BigRational {
    BigRational::new(n.into(), d.into())
}

pub fn one() -> BigRational {
    BigRational::one()
}

/// Rounds to two decimals (for figures the paper prints rounded).
pub fn two_decimals(r: &BigRational) -> String {
    let scaled = (r * BigRational::from_integer(100.into())).round();
    let v = scaled.to_integer();
    let s = v.to_string();
    format!("{}.{}", &s[..s.len() - 2], &s[s.len() - 2..])
}
