//! The analytic cost model (src/cost: the recursive-multiplying paper's eq. 3, eq. 4 and the
//! summation over a factorisation) against the built-in simulator's pipelining postal and postal
//! models (src/sim) on lowered schedules (src/lower -> GOAL -> simulate).
//!
//! Where the model applies, schedules of factor stages only, the two agree exactly: for uniform
//! factors on power-of-b rank counts (eq. 4) and for mixed factorisations (the sum form), with
//! and without the `n beta` and `n gamma` terms. The simulator charges a stage's busiest rank
//! exactly eq. 3: it issues its `b` sends back to back (`b (alpha_r + n beta)`), every peer sends
//! to it last (Algorithm 2's peer order), so its `b` values land together `alpha_p` later and it
//! then folds them (`b n gamma`). For collapse/expand and merges the model is a synchronous
//! upper bound (ranks outside a collapse go ahead, and the simulator charges nothing for taking a
//! message in), which is checked too.

use collc::backend::goal::{self, GoalOptions};
use collc::cost::{Params, auto_with, doubling_stages, schedule_cost, uniform_cost};
use collc::sema::model::{Model, Stage};
use collc::sema::schedule::decode_stage;
use collc::sim::{SimOptions, from_cost_model, simulate};
use num_rational::BigRational;

/// The paper's Section 6 settings (gamma: 10 ns compute for an 8-byte message).
const SECTION6: &str = "model m: pipelining_postal { alpha_p: 500 ns; alpha_r: 100 ns; beta: 0.4 ns/B; gamma: 1.25 ns/B; }";
/// Table 1's minimum values, latency only.
const TABLE1: &str =
    "model m: pipelining_postal { alpha_p: 1.34 us; alpha_r: 0.34 us; beta: 0 ns/B; }";
const POSTAL: &str = "model m: postal { alpha: 2 us; beta: 1 ns/B; gamma: 0.5 ns/B; }";

fn source(n: u64, bytes: u64, stages: &[Stage], model: &str) -> String {
    let list: Vec<String> = stages.iter().map(|s| s.to_string()).collect();
    format!(
        "generator mesh(n: int) {{\n    compute host[n];\n    for i in 0..n {{\n        for j in i + 1..n {{\n            link host[i] <-> host[j] : 10 GB/s;\n        }}\n    }}\n}}\ntopology t = mesh({n});\ncollective allreduce {{ size: {bytes} B; dtype: i64; op: sum; }}\n{model}\nschedule recursive_multiplying {{ stages: [{}]; model: m; }}\n",
        list.join(", ")
    )
}

fn checked(src: &str) -> Model {
    let mut files = collc::diag::SourceMap::new();
    let id = files.add("test.coll", src.to_string());
    let c = collc::sema::check(&mut files, id, &collc::sema::Options::default());
    c.model.unwrap_or_else(|| panic!("{:#?}", c.diagnostics))
}

/// The simulated time and the model's cost (seconds) of `stages` on `n` ranks.
fn sim_and_model(n: u64, bytes: u64, stages: &[Stage], decl: &str) -> (BigRational, BigRational) {
    let model = checked(&source(n, bytes, stages, decl));
    let cm = &model.models[0];
    let program = collc::lower::lower(&model).unwrap_or_else(|d| panic!("{d:#?}"));
    let (sim_model, unit, gamma) = from_cost_model(cm).expect("simulable");
    let opts = GoalOptions {
        tick: unit.seconds(),
        reduce_per_byte: gamma,
        ..GoalOptions::default()
    };
    let g = goal::from_ir(&program, &opts).expect("converts");
    let r = simulate(
        &g,
        &SimOptions {
            model: sim_model,
            trace: false,
        },
    );
    assert!(r.complete());
    let sim = unit.seconds() * BigRational::from_integer(r.max.into());
    (sim, schedule_cost(stages, n, cm, bytes))
}

fn list(s: &str) -> Vec<Stage> {
    s.split(',')
        .map(|x| decode_stage(x.trim()).unwrap().unwrap())
        .collect()
}

fn show(stages: &[Stage]) -> String {
    let s: Vec<String> = stages.iter().map(|s| s.to_string()).collect();
    s.join(",")
}

/// Eq. 4: uniform factors on N = (b+1)^k; model, closed form and simulation agree exactly.
#[test]
fn uniform_factors_agree_with_simulation() {
    for (base, max) in [(2u64, 64u64), (3, 81), (4, 64), (5, 125), (8, 64)] {
        let mut n = base;
        while n <= max {
            let k = n.ilog(base) as usize;
            let stages = vec![Stage::Factor { base }; k];
            for (decl, bytes) in [
                (SECTION6, 8u64),
                (SECTION6, 1024),
                (TABLE1, 8),
                (POSTAL, 64),
            ] {
                let (sim, model) = sim_and_model(n, bytes, &stages, decl);
                assert_eq!(sim, model, "a{base} x {k} on {n} ranks, {bytes} B, {decl}");
                let cm = &checked(&source(n, bytes, &stages, decl)).models[0];
                let p = Params::for_model(Some(cm));
                assert_eq!(uniform_cost(&p, base - 1, n, bytes), Some(model));
            }
            n *= base;
        }
    }
}

/// The summation form over mixed factorisations, in any order.
#[test]
fn mixed_factorisations_agree_with_simulation() {
    for (n, s) in [
        (12u64, "a3, a4"),
        (12, "a4, a3"),
        (24, "a4, a6"),
        (32, "a8, a4"),
        (48, "a8, a6"),
        (96, "a8, a3, a4"),
        (30, "a2, a3, a5"),
        (36, "a6, a2, a3"),
    ] {
        for decl in [SECTION6, TABLE1, POSTAL] {
            let (sim, model) = sim_and_model(n, 8, &list(s), decl);
            assert_eq!(sim, model, "{s} on {n} ranks, {decl}");
        }
    }
}

/// Collapse/expand and merges (and MPICH's recursive doubling for every N up to 40): the model
/// is an upper bound of the simulated time.
#[test]
fn collapse_and_merge_are_bounded_by_the_model() {
    let mut cases: Vec<(u64, Vec<Stage>)> = vec![
        (7, list("c6m2, a2, a2, e6m2")),
        (7, list("m1g1a3, n1g1a2")),
        (7, list("m3g2a2, n3g2a2")),
        (10, list("c6m3, a2, a3, e6m3")),
        (15, list("m3g3a3, a2, n3g3a2")),
        (13, list("m1g1a4, n1g1a3")),
    ];
    for n in 3..=40u64 {
        cases.push((n, doubling_stages(n)));
    }
    for (n, stages) in &cases {
        for decl in [SECTION6, POSTAL] {
            let (sim, model) = sim_and_model(*n, 8, stages, decl);
            assert!(
                sim <= model,
                "{} on {n}: sim {sim} > model {model}",
                show(stages)
            );
        }
    }
    // On 7 ranks the critical path runs through a collapsed pair in every stage: exact.
    let (sim, model) = sim_and_model(7, 8, &list("c6m2, a2, a2, e6m2"), SECTION6);
    assert_eq!(sim, model);
}

/// `stages: auto` under the Section 6 settings: its choice simulates no slower than the model
/// says, exactly as fast when it is a plain factorisation, and no slower than recursive doubling
/// simulates (the paper's claim, here within the model's own world).
#[test]
fn auto_choices_simulate_as_modelled() {
    let p = Params::paper_section6();
    for n in 2..=48u64 {
        let choice = auto_with(n, &p, 8);
        let (sim, model) = sim_and_model(n, 8, &choice.stages, SECTION6);
        assert_eq!(model, choice.cost);
        if choice
            .stages
            .iter()
            .all(|s| matches!(s, Stage::Factor { .. }))
        {
            assert_eq!(sim, model, "{n}: {}", show(&choice.stages));
        } else {
            assert!(sim <= model, "{n}: {}", show(&choice.stages));
        }
        let (rd_sim, _) = sim_and_model(n, 8, &doubling_stages(n), SECTION6);
        assert!(
            sim <= rd_sim,
            "{n}: {} simulates slower than recursive doubling",
            show(&choice.stages)
        );
    }
}
