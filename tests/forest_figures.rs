//! The figures issue 5 asks ForestColl to reproduce exactly: DGX-A100 2x8, MI250 2x16 and the
//! paper's Figure 2 (../shared/seeds/forestcoll.txt, Sections 3.1, 4.5, 5.3). Every forest is
//! also checked by `forest::validate` (spanning, routes, link loads).

mod forest_common;

use collc::forest::net::Net;
use collc::forest::validate::validate;
use collc::forest::{Direction, KChoice, Roots, optimum, plan, solve};
use forest_common::*;
use num_rational::BigRational;

const FIGURE2: &str = "
topology fig2 {
    compute c1[4];
    compute c2[4];
    switch w0;
    switch w1;
    switch w2;
    for i in 0..4 {
        link c1[i] <-> w1 : 10 GB/s;
        link c2[i] <-> w2 : 10 GB/s;
        link c1[i] <-> w0 : 1 GB/s;
        link c2[i] <-> w0 : 1 GB/s;
    }
}
";

#[test]
fn dgx_a100_2x8_optimum_is_a_single_gpu_ingress() {
    let (topo, ranks) = load("examples/dgx_a100_2x8.coll");
    let f = solve(&topo, &ranks, Roots::All, KChoice::Auto, Direction::Out).expect("solves");
    // 16 * 325 / 15 GB/s.
    assert_eq!(optimum_algbw(&f), ratio(16 * 325, 15));
    assert_eq!(two_decimals(&optimum_algbw(&f)), "346.67");
    // The bottleneck: everything but one GPU, 15 ranks inside, 325 GB/s (its ingress) leaving.
    assert_eq!(f.bottleneck.compute, 15);
    assert_eq!(f.bottleneck.nodes.len(), topo.nodes.len() - 1);
    let out = (0..topo.nodes.len())
        .find(|v| !f.bottleneck.nodes.contains(v))
        .unwrap();
    assert!(ranks.contains(&out), "the node outside the cut is a GPU");
    assert_eq!(
        f.bottleneck.bandwidth,
        BigRational::from_integer(325_000_000_000i64.into())
    );
    validate(&topo, &f).expect("valid forest");
    // Auto: optimal k = 13 is above 9; the best k in 1..=9 is 7 (33600/97 = 346.39 GB/s).
    assert_eq!(f.k, 7);
    assert_eq!(forest_algbw(&f), ratio(33600, 97));
}

#[test]
fn dgx_a100_2x8_optimal_k_reaches_the_optimum() {
    let (topo, ranks) = load("examples/dgx_a100_2x8.coll");
    // Proposition 3: 1/x* = 15/325 GB/s -> k = 13.
    let f = solve(
        &topo,
        &ranks,
        Roots::All,
        KChoice::Fixed(13),
        Direction::Out,
    )
    .expect("solves");
    assert_eq!(f.inv_rate, f.optimum);
    assert_eq!(forest_algbw(&f), ratio(16 * 325, 15));
    validate(&topo, &f).expect("valid forest");
}

#[test]
fn dgx_a100_2x8_with_k_1() {
    let (topo, ranks) = load("examples/dgx_a100_2x8.coll");
    let f = solve(&topo, &ranks, Roots::All, KChoice::Fixed(1), Direction::Out).expect("solves");
    assert_eq!(f.k, 1);
    assert_eq!(two_decimals(&forest_algbw(&f)), "342.86");
    assert_eq!(forest_algbw(&f), ratio(2400, 7));
    assert_eq!(f.trees.len(), 16);
    validate(&topo, &f).expect("valid forest");
}

#[test]
fn figure_2_optimum_is_m_over_8b_with_k_1() {
    let (topo, ranks) = load_text("fig2.coll", FIGURE2);
    let f = solve(&topo, &ranks, Roots::All, KChoice::Auto, Direction::Out).expect("solves");
    // The paper's T = M / (8b) for M bytes in total, i.e. M / 8 per rank: each rank's data
    // moves at x* = b (inv_rate = 1 / b) and the allgather algbw N x* is 8b, b = 1 GB/s.
    assert_eq!(f.optimum, ratio(1, 1_000_000_000));
    assert_eq!(optimum_algbw(&f), ratio(8, 1));
    assert_eq!(f.inv_rate, f.optimum);
    assert_eq!(f.k, 1);
    // The bottleneck is one cluster with its switch: 4 ranks, 4b leaving.
    assert_eq!(f.bottleneck.compute, 4);
    assert_eq!(
        f.bottleneck.bandwidth,
        BigRational::from_integer(4_000_000_000i64.into())
    );
    assert_eq!(f.bottleneck.nodes.len(), 5);
    assert_eq!(f.trees.len(), 8);
    validate(&topo, &f).expect("valid forest");
}

#[test]
fn mi250_2x16_optimum() {
    let (topo, ranks) = load("examples/mi250_2x16.coll");
    let f = solve(&topo, &ranks, Roots::All, KChoice::Auto, Direction::Out).expect("solves");
    assert_eq!(two_decimals(&optimum_algbw(&f)), "354.13");
    assert_eq!(optimum_algbw(&f), ratio(5312, 15));
    // Section 4.5: the optimum needs k = 83; the best k below 10 is 9 here.
    let net = Net::build(&topo, &ranks, Roots::All, Direction::Out).expect("builds");
    assert_eq!(plan::optimal(&net, &optimum::optimum(&net)).k, 83);
    assert_eq!(f.k, 9);
    assert_eq!(forest_algbw(&f), ratio(14400, 41));
    validate(&topo, &f).expect("valid forest");
    eprintln!(
        "mi250 auto: k = {}, algbw = {}, optimum {}",
        f.k,
        forest_algbw(&f),
        optimum_algbw(&f)
    );
}

#[test]
fn mi250_2x16_with_k_2_matches_the_paper() {
    // Section 4.5: "the most performant schedule with k = 2 can already achieve 341.33GB/s".
    let (topo, ranks) = load("examples/mi250_2x16.coll");
    let f = solve(&topo, &ranks, Roots::All, KChoice::Fixed(2), Direction::Out).expect("solves");
    assert_eq!(forest_algbw(&f), ratio(1024, 3));
    assert_eq!(two_decimals(&forest_algbw(&f)), "341.33");
    validate(&topo, &f).expect("valid forest");
}

#[test]
fn reduce_scatter_and_single_root_forests_are_valid() {
    let (topo, ranks) = load("examples/dgx_a100_2x8.coll");
    let f = solve(&topo, &ranks, Roots::All, KChoice::Fixed(2), Direction::In).expect("solves");
    assert_eq!(f.direction, Direction::In);
    validate(&topo, &f).expect("valid in-forest");
    for dir in [Direction::Out, Direction::In] {
        let f = solve(&topo, &ranks, Roots::One(ranks[3]), KChoice::Auto, dir).expect("solves");
        assert!(f.trees.iter().all(|t| t.root == ranks[3]));
        validate(&topo, &f).expect("valid single-root forest");
        // One root: the other box is reached only over InfiniBand, 8 x 25 GB/s.
        assert_eq!(f.optimum, ratio(1, 200_000_000_000));
        assert_eq!(f.bottleneck.compute, 1);
    }
}

#[test]
fn degenerate_inputs_are_errors_or_trivial() {
    let (topo, ranks) = load_text("fig2.coll", FIGURE2);
    let bad = solve(&topo, &ranks, Roots::All, KChoice::Fixed(0), Direction::Out);
    assert!(matches!(
        bad,
        Err(collc::forest::ForestError::BadK { k: 0, .. })
    ));
    let one = solve(
        &topo,
        &ranks[..1],
        Roots::All,
        KChoice::Auto,
        Direction::Out,
    )
    .expect("trivial");
    assert_eq!(one.trees.len(), 1);
    assert!(one.trees[0].edges.is_empty());
    let none = solve(&topo, &[], Roots::All, KChoice::Auto, Direction::Out).expect("trivial");
    assert!(none.trees.is_empty());
    // Two ranks joined by a one-way link only: the second cannot send to the first.
    let (topo, ranks) = load_text(
        "oneway.coll",
        "topology t {\n    compute c[2];\n    link c[0] -> c[1] : 1 GB/s;\n}\n",
    );
    let err = solve(&topo, &ranks, Roots::All, KChoice::Auto, Direction::Out).unwrap_err();
    assert_eq!(
        err,
        collc::forest::ForestError::Unreachable {
            from: ranks[1],
            to: ranks[0]
        }
    );
}
