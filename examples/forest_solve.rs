//! Solves a `.coll` file's collective as a ForestColl allgather (automatic k) and reports how
//! long `forest::solve` took, then validates the forest (`forest::validate`). A small release
//! binary for the figures the benchmark cannot give, such as peak memory:
//!
//! ```text
//! cargo build --release --example forest_solve
//! /usr/bin/time -v target/release/examples/forest_solve examples/dgx_a100_fat_tree_1024.coll
//! ```

use collc::diag::{SourceMap, render};
use collc::forest::validate::validate;
use collc::forest::{Direction, KChoice, Roots, solve};
use collc::sema::{Options, check};
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: forest_solve FILE.coll");
        return ExitCode::FAILURE;
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut sources = SourceMap::new();
    let id = sources.add(path.clone(), text);
    let c = check(&mut sources, id, &Options::default());
    let Some((topo, ranks)) = c
        .model
        .and_then(|m| Some((m.topology?, m.collective?.ranks)))
    else {
        eprint!("{}", render::to_text(&c.diagnostics, &sources));
        eprintln!("{path}: no topology and collective to solve");
        return ExitCode::FAILURE;
    };
    let start = Instant::now();
    let forest = match solve(&topo, &ranks, Roots::All, KChoice::Auto, Direction::Out) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let took = start.elapsed();
    println!(
        "{} ranks: k = {}, {} trees, optimum {} s/byte, solved in {:.3} s",
        ranks.len(),
        forest.k,
        forest.trees.len(),
        forest.optimum,
        took.as_secs_f64()
    );
    match validate(&topo, &forest) {
        Ok(()) => {
            println!("valid: every tree spans, every link's load fits its bandwidth");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("invalid forest: {e}");
            ExitCode::FAILURE
        }
    }
}
