//! Solves a `.coll` file's collective as a ForestColl allgather (automatic k) and reports how
//! long `forest::solve` took, split by step (capacities, optimum, k and y, switch removal and
//! packing, routes), then validates the forest (`forest::validate`). A small release
//! binary for the figures the benchmark cannot give, such as peak memory:
//!
//! ```text
//! cargo build --release --example forest_solve
//! /usr/bin/time -v target/release/examples/forest_solve examples/dgx_a100_fat_tree_1024.coll
//! ```

use collc::diag::{SourceMap, render};
use collc::forest::validate::validate;
use collc::forest::{Direction, KChoice, Roots, solve_with};
use collc::progress::{Phase, Progress};
use collc::sema::{Options, check};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

/// When each of the solver's steps began.
#[derive(Default)]
struct Steps(Mutex<Vec<(Phase, Instant)>>);

impl Progress for Steps {
    fn phase(&self, p: Phase, _: Option<u64>) {
        if let Ok(mut v) = self.0.lock() {
            v.push((p, Instant::now()));
        }
    }
}

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
    let steps = Steps::default();
    let solved = solve_with(
        &topo,
        &ranks,
        Roots::All,
        KChoice::Auto,
        Direction::Out,
        &steps,
    );
    let end = Instant::now();
    let forest = match solved {
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
    let marks = steps.0.into_inner().unwrap_or_default();
    for (i, (p, at)) in marks.iter().enumerate() {
        let until = marks.get(i + 1).map_or(end, |m| m.1);
        println!("  {:<36} {:>9.3} s", p.name(), (until - *at).as_secs_f64());
    }
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
