use super::reach::*;
use super::*;
use crate::forest::{ForestEdge, Tree};

fn q(n: i64) -> BigRational {
    BigRational::from_integer(n.into())
}

/// Root 0 with children 1 (a chain 1 <- 2 <- 3 of cheap hops) and 4 (one expensive hop): the
/// root keeps both chains, 3 hops (tail 2 s/B, latency 3 s) and 1 hop (tail 0, 10 s); node 1
/// the chain of 2 hops (tail 1, 2 s). Every hop's slowest link takes 1 s per byte here.
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
    let hop = |x: &ForestEdge| (q(x.route[0] as i64), q(1));
    let flat = |r: Vec<(NodeId, Chain<BigRational>)>| {
        let mut r: Vec<(NodeId, u64, BigRational, BigRational)> = r
            .into_iter()
            .map(|(node, c)| (node, c.hops, c.tail(), c.latency))
            .collect();
        r.sort();
        r
    };
    assert_eq!(
        flat(in_reach(&t, &hop)),
        vec![
            (0, 1, q(0), q(10)),
            (0, 3, q(2), q(3)),
            (1, 2, q(1), q(2)),
            (2, 1, q(0), q(1)),
        ]
    );
    assert_eq!(
        flat(out_reach(&t, &hop)),
        vec![
            (1, 1, q(0), q(1)),
            (2, 2, q(1), q(2)),
            (3, 3, q(2), q(3)),
            (4, 1, q(0), q(10)),
        ]
    );
    assert_eq!(depth(&t), 3);
}

/// A chain's tail leaves out its slowest hop (the transfer runs at that one), and a chain is
/// dropped only where another is at least as late now and after any extension: a slow hop
/// below a fast one makes a later fast extension cost a whole hop, a fast one does not.
#[test]
fn a_chain_covers_another_only_for_every_extension() {
    let link = |lat: i64, per_byte: i64| (q(lat), q(per_byte));
    let slow = Chain::default().then(&link(1, 4));
    let fast = Chain::default().then(&link(1, 1)).then(&link(1, 1));
    // Now: slow has tail 0, fast tail 1 and more latency.
    assert_eq!((slow.tail(), fast.tail()), (q(0), q(1)));
    assert!(!slow.covers(&fast));
    // Nor fast slow: after a slower hop still, slow's tail is ahead.
    assert!(!fast.covers(&slow));
    let up = link(0, 8);
    assert_eq!(slow.then(&up).tail(), q(4));
    assert_eq!(fast.then(&up).tail(), q(2));
    assert_eq!(uncovered(vec![slow.clone(), fast.clone()]).len(), 2);
    assert_eq!(
        uncovered(vec![fast.clone(), fast.then(&link(0, 0))]).len(),
        1
    );
}

/// A tree alone on its links at their rate is the classic store-and-forward pipeline: `c`
/// chunks over `h` equal hops take `(c + h - 1) / c` of the transfer.
#[test]
fn a_lone_tree_is_the_store_and_forward_pipeline() {
    let e = |from, to| ForestEdge {
        from,
        to,
        route: vec![0].into(),
    };
    let t = Tree {
        root: 0,
        rate: q(2),
        edges: vec![e(0, 1), e(1, 2), e(2, 3), e(3, 4)],
    };
    let half = BigRational::new(1.into(), 2.into());
    let hop = |_: &ForestEdge| (q(0), half.clone());
    let reach = out_reach(&t, &hop);
    let tail = reach.iter().map(|r| r.1.tail()).max().expect("nodes");
    let front = frontier(reach.iter().map(|r| (r.1.tail(), r.1.latency.clone())));
    let tt = TreeTime {
        phase: 0,
        tree: 0,
        root: 0,
        bytes: q(64),
        share: q(1),
        rate: q(2),
        depth: 4,
        reach: Arc::new([]),
        reach_seconds: Arc::new([]),
        reach_tail: Arc::new([]),
        frontier: front.into_iter().collect(),
    };
    assert_eq!(tail, q(3) * &half);
    for c in [1u64, 2, 8] {
        let want = q(64) / q(2) * BigRational::new((c + 3).into(), c.into());
        assert_eq!(tt.finish(&q(2), c), want, "{c} chunks");
    }
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

/// [`seconds`] (alike trees timed once) gives the exact figure that timing every tree does:
/// on trees whose finishes differ by less than an `f64` can tell (one part in 10^30), on
/// copies of one tree, on trees without bytes or rate, and over two phases.
#[test]
fn seconds_of_each_kind_of_tree_equal_every_tree_timed_exactly() {
    let r = |n: i64, d: i64| BigRational::new(n.into(), d.into());
    let tiny = BigRational::new(1.into(), num_bigint::BigInt::from(10u8).pow(30));
    let tree = |phase: usize,
                bytes: BigRational,
                rate: BigRational,
                front: Vec<(BigRational, BigRational)>| TreeTime {
        phase,
        tree: 0,
        root: 0,
        bytes,
        share: q(1),
        rate,
        depth: 3,
        reach: Arc::new([]),
        reach_seconds: Arc::new([]),
        reach_tail: Arc::new([]),
        frontier: front.into_iter().collect(),
    };
    let front = vec![(r(1, 3), r(7, 1_000_000)), (r(0, 1), r(9, 1_000_000))];
    let mut later = front.clone();
    later[0].1 = &later[0].1 + &tiny;
    let trees = vec![
        tree(0, q(1 << 20), r(25_000_000_000, 1), front.clone()),
        tree(0, q(1 << 20), r(25_000_000_000, 1), front.clone()),
        // Slower than the two above by 10^-30 s: only the exact figure sees it.
        tree(0, q(1 << 20), r(25_000_000_000, 1), later),
        tree(0, q(1 << 19), r(25_000_000_000, 1), front.clone()),
        tree(0, q(0), r(1, 1), vec![(q(0), r(1, 1000))]),
        tree(1, q(1 << 20), r(0, 1), vec![(q(0), r(2, 1000))]),
        tree(1, q(3 << 18), r(30_000_000_000, 1), front.clone()),
    ];
    for chunks in [1u64, 2, 7, 64] {
        let mut slowest = [BigRational::zero(), BigRational::zero()];
        for t in &trees {
            let f = t.finish(&t.rate, chunks);
            if f > slowest[t.phase] {
                slowest[t.phase] = f;
            }
        }
        let want: BigRational = slowest.into_iter().sum();
        assert_eq!(seconds(&trees, 2, chunks), want, "{chunks} chunks");
    }
    // The tree 10^-30 s slower decides phase 0 at every chunk count.
    let alone = seconds(&trees[..2], 1, 4);
    assert_eq!(seconds(&trees[..3], 1, 4), alone + &tiny);
}
