//! Unit tests of stage decoding, the stage-list check and the suggestions.

use super::check::merge_example;
use super::*;
use crate::sema::model::{Family, Stage};

fn list(s: &str) -> Vec<Stage> {
    s.split(',')
        .map(|x| decode_stage(x.trim()).unwrap().unwrap())
        .collect()
}

#[test]
fn paper_examples_fit() {
    assert_eq!(stage_problem(&list("a3, a4"), 12), None);
    assert_eq!(stage_problem(&list("c4m2, a2, a2, e4m2"), 6), None);
    assert_eq!(stage_problem(&list("m1g1a3, n1g1a2"), 7), None);
    assert_eq!(stage_problem(&list("a8, a3, a4"), 96), None);
}

#[test]
fn product_mismatch_names_product() {
    assert_eq!(
        stage_problem(&list("a3, a4"), 10),
        Some(StageProblem::Product {
            product: 12,
            size: 10,
            group: None
        })
    );
    let s = suggestions(10);
    assert!(s.contains(&"`[a2, a5]`".to_string()), "{s:?}");
}

#[test]
fn product_inside_a_group_names_the_group() {
    assert_eq!(
        stage_problem(&list("c4m2, a2, a4, e4m2"), 6),
        Some(StageProblem::Product {
            product: 8,
            size: 4,
            group: Some((0, 3))
        })
    );
    assert_eq!(
        stage_problem(&list("m1g1a3, n1g1a3"), 7),
        Some(StageProblem::Product {
            product: 9,
            size: 6,
            group: Some((0, 1))
        })
    );
}

/// Every suggested stage list fits its rank count, and none is offered twice.
#[test]
fn suggestions_fit() {
    for n in 2..=64u64 {
        let sugg = suggestions(n);
        assert!(!sugg.is_empty(), "no suggestion for {n}");
        for (i, sug) in sugg.iter().enumerate() {
            assert!(!sugg[..i].contains(sug), "{sug} twice for {n}: {sugg:?}");
            let inner = sug.trim_matches('`').trim_matches(['[', ']']);
            assert_eq!(stage_problem(&list(inner), n), None, "{sug} for {n}");
        }
    }
}

/// The examples in help lines are valid too.
#[test]
fn help_examples_fit() {
    for n in 3..=64u64 {
        let p = 1u64 << (63 - n.leading_zeros());
        if p != n {
            let t = 2 * (n - p);
            let doubling = vec!["a2"; p.trailing_zeros() as usize].join(", ");
            let l = format!("c{t}m2, {doubling}, e{t}m2");
            assert_eq!(stage_problem(&list(&l), n), None, "{l} for {n}");
        }
        for g in 1..=3 {
            if let Some(e) = merge_example(n - 1, 1, g) {
                let l = e.trim_matches(['[', ']']);
                assert_eq!(stage_problem(&list(l), n), None, "{l} for {n}");
            }
        }
    }
}

#[test]
fn collapse_threshold_must_divide() {
    assert!(matches!(
        stage_problem(&list("c5m2, a4, e5m2"), 6),
        Some(StageProblem::Collapse(Fault { at: 0, .. }))
    ));
}

#[test]
fn faults_point_at_their_stage() {
    let at = |l: &str, n: u64| match stage_problem(&list(l), n) {
        Some(StageProblem::Collapse(f) | StageProblem::Merge(f)) => (f.at, f.partner.map(|p| p.0)),
        other => panic!("{l} on {n}: {other:?}"),
    };
    assert_eq!(at("c4m2, a2, a2, e6m2", 6), (3, Some(0)));
    assert_eq!(at("c4m2, a2, a2", 6), (0, None));
    assert_eq!(at("a2, e4m2", 6), (1, None));
    assert_eq!(at("a2, c4m2, a2, e4m2", 6), (1, None));
    assert_eq!(at("c8m2, a2, a2, e8m2", 6), (0, None));
    assert_eq!(at("m1g1a4, n1g1a2", 7), (0, None));
    assert_eq!(at("m1g3a3, n1g3a2", 7), (0, None));
    assert_eq!(at("m1g1a3, n1g2a2", 7), (1, Some(0)));
    assert_eq!(at("m1g1a3, e4m2", 7), (1, Some(0)));
    assert_eq!(at("c4m2, a2, n1g1a2", 6), (2, Some(0)));
    assert_eq!(at("m1g1a3", 7), (0, None));
}

#[test]
fn decode_rejects_garbage() {
    assert!(decode_stage("x3").is_none());
    assert!(decode_stage("a").is_none());
    assert!(decode_stage("a1").unwrap().is_err());
    assert!(decode_stage("c8m").is_none());
}

/// The `canary` parameters of a star of `n` hosts under `coll` and `sched`, plus `extra`.
fn canary(n: u32, dtype: &str, sched: &str, extra: &str) -> crate::sema::model::CanaryParams {
    let mut sources = crate::diag::SourceMap::new();
    let src = format!(
        "topology t {{ compute host[{n}]; switch sw; for i in 0..{n} {{ link host[i] <-> sw : 100 Gbps; }} }}\ncollective allreduce {{ size: 1 MiB; dtype: {dtype}; }}\nschedule canary {{ {sched} }}\n{extra}"
    );
    let id = sources.add("t.coll", src);
    let m = crate::sema::check(&mut sources, id, &Default::default())
        .model
        .expect("checks");
    match m.schedule.map(|s| s.family) {
        Some(Family::Canary(p)) => *p,
        other => panic!("not canary: {other:?}"),
    }
}

#[test]
fn canary_defaults_are_the_papers() {
    let p = canary(8, "i32", "", "");
    assert_eq!(
        p.timeout,
        num_rational::BigRational::new(1.into(), 1_000_000.into())
    );
    assert_eq!(p.table_size, 32_768);
    assert_eq!(p.elements_per_packet, 256);
    assert_eq!((p.ports, p.shards), (8, 1));
    assert_eq!(p.leader, crate::sema::model::LeaderPolicy::RoundRobin);
    assert_eq!(p.retransmit, crate::sema::model::AutoOr::Auto);
    assert_eq!(p.retries, 3);
    assert_eq!(p.fixed_point, None);
}

#[test]
fn default_shards_keep_at_most_16_ports() {
    assert_eq!(default_shards(64), 4);
    assert_eq!(default_shards(32), 2);
    assert_eq!(default_shards(16), 1);
    assert_eq!(default_shards(17), 17);
    assert_eq!(default_shards(48), 3);
}

#[test]
fn default_elements_fit_the_mtu() {
    // 256 eight-byte elements are 2048 B: halved to 128 (1024 B) under 1500 B.
    assert_eq!(canary(4, "i64", "", "").elements_per_packet, 128);
    // Floats travel as 4-byte fixed point.
    let p = canary(4, "f64", "fixed_point: 20;", "");
    assert_eq!((p.elements_per_packet, p.wire_bytes), (256, 4));
    // A packet model of 569 B on the wire leaves 512 B: 128 four-byte elements.
    let p = canary(4, "i32", "", "model m: packet { mtu: 569 B; }");
    assert_eq!(p.elements_per_packet, 128);
}
