use super::*;
use crate::forest::ForestEdge;

fn q(n: i64) -> BigRational {
    BigRational::from_integer(n.into())
}

/// Root 0 with children 1 (a chain 1 <- 2 <- 3 of cheap hops) and 4 (one expensive hop): the
/// root keeps both chains, (3 hops, 3 s) and (1 hop, 10 s); node 1 the chain (2, 2).
#[test]
fn in_trees_keep_every_chain_no_other_beats() {
    let e = |from, to, lat: i64| ForestEdge {
        from,
        to,
        route: vec![lat as usize].into(),
    };
    let t = Tree {
        root: 0,
        rate: q(1),
        edges: vec![e(0, 1, 1), e(0, 4, 10), e(1, 2, 1), e(2, 3, 1)],
    };
    // The "route" holds the hop's latency here.
    let hop = |x: &ForestEdge| q(x.route[0] as i64);
    let mut r: Vec<(NodeId, u64, BigRational)> = in_reach(&t, &hop)
        .into_iter()
        .map(|(hops, node, latency)| (node, hops, latency))
        .collect();
    r.sort();
    assert_eq!(
        r,
        vec![(0, 1, q(10)), (0, 3, q(3)), (1, 2, q(2)), (2, 1, q(1)),]
    );
    let mut o: Vec<(NodeId, u64, BigRational)> = out_reach(&t, &hop)
        .into_iter()
        .map(|(hops, node, latency)| (node, hops, latency))
        .collect();
    o.sort();
    assert_eq!(
        o,
        vec![(1, 1, q(1)), (2, 2, q(2)), (3, 3, q(3)), (4, 1, q(10))]
    );
}

#[test]
fn the_pipeline_share_falls_with_chunks() {
    assert_eq!(pipeline(1, 1), q(1));
    assert_eq!(pipeline(4, 1), q(4));
    assert_eq!(pipeline(4, 8), BigRational::new(11.into(), 8.into()));
    // A node zero hops away (a root) waits for the whole transfer, as one hop does.
    assert_eq!(pipeline(0, 8), q(1));
}

/// The model's trees in machine integers (over the latencies' common denominator) are the
/// rational ones exactly: on the ForestColl figure-2 network as written and with odd,
/// fractional latencies on its links.
#[test]
fn integer_latencies_give_the_exact_trees() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/forestcoll_fig2.coll"),
    )
    .expect("example");
    for (from, to) in [
        ("", ""),
        ("latency 1 us", "latency 0.333 us"),
        ("latency 2 us", "latency 7.77 ns"),
    ] {
        let mut files = crate::diag::SourceMap::new();
        let id = files.add("f.coll", text.replace(from, to));
        let m = crate::sema::check(&mut files, id, &crate::sema::Options::default())
            .model
            .expect("checks");
        let (c, topo) = (
            m.collective.as_ref().expect("c"),
            m.topology.as_ref().expect("t"),
        );
        let both = Collective {
            kind: CollectiveKind::Allreduce,
            root: None,
            ..c.clone()
        };
        let forests = crate::lower::forest::solve(&m, &both, AutoOr::Auto, c.span).expect("solves");
        let refs: Vec<&Forest> = forests.iter().collect();
        let overhead = BigRational::new(3.into(), 7_000_000.into());
        let per = per_root(c);
        assert!(Scaled::new(topo, &overhead, &overhead).is_some());
        let params = FlowParams {
            overhead: overhead.clone(),
            ..FlowParams::default()
        };
        let fast = trees(topo, &params, &per, &refs);
        assert!(
            fast.iter().any(|t| t.reach.len() > 1),
            "trees with several nodes"
        );
        assert_eq!(
            fast,
            trees_exact(topo, &|_| false, &overhead, &overhead, &per, &refs),
            "{to}"
        );
    }
}
