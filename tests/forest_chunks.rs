//! `chunks: auto` on solved examples at 1 GiB: the report's achievable algbw (the forest model
//! at the solver's rates, src/forest/chunking.rs) and the tree-level flow simulation
//! (src/sim/fluid/forest.rs, max-min fair rates on the physical links) agree within 3%, and
//! both reach within 10% of the forest's bandwidth bound, on two 1,024-rank fat trees too.

mod forest_fixtures;

use collc::forest::Forest;
use collc::lower::forest::solve_chunked;
use collc::net::Net;
use collc::sema::model::{AutoOr, Collective, Family, Model};
use collc::sim::fluid::run_forest;
use forest_fixtures::load;
use num_traits::ToPrimitive;

const GIB: u64 = 1 << 30;

/// The model's and the simulation's algbw (GB/s) and the forest's bound, for `m`'s collective
/// at 1 GiB with its `k` and `chunks: auto`; and the chunk count.
fn figures(m: &Model) -> (f64, f64, f64, u64) {
    let c0 = m.collective.as_ref().expect("collective");
    let c = Collective {
        count: GIB / c0.dtype.bytes(),
        ..c0.clone()
    };
    let k = match m.schedule.as_ref().map(|s| &s.family) {
        Some(Family::Forest { k, .. }) => *k,
        _ => AutoOr::Auto,
    };
    let (forests, ch) = solve_chunked(m, &c, k, AutoOr::Auto, c.span)
        .unwrap_or_else(|d| panic!("{}", d[0].message));
    assert!(ch.auto);
    let refs: Vec<&Forest> = forests.iter().collect();
    let topo = m.topology.as_ref().expect("topology");
    let net = Net::new(topo);
    let params = collc::net::for_file(m, None);
    let run = run_forest(topo, &net, &params, &c, &refs, ch.chunks, false);
    let gbs = |s: &num_rational::BigRational| GIB as f64 / s.to_f64().expect("finite") / 1e9;
    (
        gbs(&ch.seconds),
        run.algbw(GIB) / 1e9,
        gbs(&ch.optimum),
        ch.chunks,
    )
}

fn agree(file: &str, params: &[(&str, &str)]) {
    let m = load(file, params);
    let (model, sim, bound, chunks) = figures(&m);
    eprintln!(
        "{file} {params:?}: {chunks} chunks, model {model:.2} GB/s, simulated {sim:.2} GB/s, bound {bound:.2} GB/s"
    );
    assert!(
        (sim - model).abs() <= 0.03 * model,
        "{file}: model {model:.2} vs simulated {sim:.2} GB/s"
    );
    assert!(
        model >= 0.9 * bound,
        "{file}: model {model:.2} of {bound:.2}"
    );
    assert!(
        sim >= 0.9 * bound,
        "{file}: simulated {sim:.2} of {bound:.2}"
    );
}

#[test]
fn dgx_a100_2x8_report_and_simulation_agree() {
    agree("examples/dgx_a100_2x8.coll", &[]);
}

#[test]
fn mi250_2x16_report_and_simulation_agree() {
    agree("examples/mi250_2x16.coll", &[]);
}

/// The 1,024-GPU example's generator with 8 boxes: 64 GPUs behind 2 leaves and 32 spines.
#[test]
fn small_fat_tree_report_and_simulation_agree() {
    agree("examples/dgx_a100_fat_tree_1024.coll", &[("boxes", "8")]);
}

/// The example itself (solving 1,024 ranks: seconds).
#[test]
fn fat_tree_1024_report_and_simulation_agree() {
    agree("examples/dgx_a100_fat_tree_1024.coll", &[]);
}

/// The Canary paper's 1,024 hosts under one fat tree: 2,048 chains 1,023 edges deep.
#[test]
fn canary_fat_tree_1024_report_and_simulation_agree() {
    agree("examples/fat_tree_1024.coll", &[]);
}

/// A fixed count below what the trees' depth needs gets E0045 from lowering, at `chunks`, with
/// the auto choice in its help line; `chunks: auto` and an omitted `chunks` get none.
#[test]
fn few_fixed_chunks_warn_and_auto_does_not() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/forestcoll_fig2.coll"),
    )
    .expect("example");
    let warnings = |t: &str| {
        let mut files = collc::diag::SourceMap::new();
        let id = files.add("f.coll", t.to_string());
        let m = collc::sema::check(&mut files, id, &collc::sema::Options::default())
            .model
            .expect("checks");
        let (_, w) = collc::lower::lower_with(&m, &collc::progress::Quiet).expect("lowers");
        (w, t.find("chunks: ").unwrap_or(0))
    };
    let (w, at) = warnings(&text.replace("chunks: 8;", "chunks: 2;"));
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].code, collc::diag::Code::ForestChunksLose);
    assert_eq!(w[0].severity, collc::diag::Severity::Warning);
    assert_eq!(w[0].primary.span.start as usize, at);
    let help = w[0].help.clone().unwrap_or_default();
    assert!(help.contains("`chunks: auto` would choose"), "{help}");
    assert!(
        warnings(&text.replace("chunks: 8;", "chunks: auto;"))
            .0
            .is_empty()
    );
    assert!(warnings(&text.replace("chunks: 8;", "")).0.is_empty());
}

/// A model's kept forests (`Model::solved`, which the MSCCL target's chunk search sets) are
/// what lowering takes for the collective and `k` they were solved for, so every chunk count
/// lowers to the same program as from a fresh solve; for another `k` or another collective
/// they are not taken.
#[test]
fn kept_forests_are_reused_only_for_what_they_were_solved_for() {
    use collc::lower::forest::{Solved, solve};
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/forestcoll_fig2.coll"),
    )
    .expect("example");
    let mut files = collc::diag::SourceMap::new();
    let id = files.add("f.coll", text);
    let m = collc::sema::check(&mut files, id, &collc::sema::Options::default())
        .model
        .expect("checks");
    let c = m.collective.clone().expect("a collective");
    let fresh = |m: &Model, k| solve(m, &c, k, c.span).expect("solves");
    let auto = fresh(&m, AutoOr::Auto);
    let kept = Solved::new(&m, &[&c], AutoOr::Auto, &collc::progress::Quiet).expect("solves");
    // Forests that differ from every real solve (their k marked), to see which are taken.
    let mut marked = Solved::new(&m, &[&c], AutoOr::Auto, &collc::progress::Quiet).expect("solves");
    marked.mark_for_tests();
    let with = |s| Model {
        solved: Some(std::sync::Arc::new(s)),
        ..m.clone()
    };
    assert_eq!(fresh(&with(kept), AutoOr::Auto), auto);
    let m2 = with(marked);
    assert!(
        fresh(&m2, AutoOr::Auto).iter().all(|f| f.k == 0),
        "taken for its k"
    );
    assert_eq!(fresh(&m2, AutoOr::Fixed(1)), fresh(&m, AutoOr::Fixed(1)));
    let mut other = c.clone();
    other.ranks.pop();
    let (a, b) = (
        solve(&m2, &other, AutoOr::Auto, c.span),
        solve(&m, &other, AutoOr::Auto, c.span),
    );
    assert_eq!(a.map_err(|e| e.len()), b.map_err(|e| e.len()));
    // Each chunk count lowers to the same program with the kept forests as without.
    for chunks in [1, 3] {
        let fixed = |m: &Model| {
            let mut m = m.clone();
            if let Some(s) = m.schedule.as_mut() {
                s.family = Family::Forest {
                    k: AutoOr::Auto,
                    chunks: AutoOr::Fixed(chunks),
                };
            }
            collc::lower::lower(&m).expect("lowers")
        };
        let kept = Solved::new(&m, &[&c], AutoOr::Auto, &collc::progress::Quiet).expect("solves");
        assert_eq!(
            format!("{:?}", fixed(&with(kept))),
            format!("{:?}", fixed(&m))
        );
    }
}
