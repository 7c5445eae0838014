//! ForestColl lowering (src/lower/forest.rs) on hand-built forests: every collective the family
//! implements, proved by `ir::verify` for several chunk counts, uneven tree rates and random
//! trees (random forests also through the MSCCL backend and its validator); each tree's share
//! of the data is exact; malformed forests and oversized layouts are refused.

mod forest_fixtures;

use collc::diag::{FileId, Span};
use collc::forest::{Cut, Direction, Forest, ForestEdge, Tree};
use collc::ir::verify::verify;
use collc::ir::{OpKind, Program};
use collc::lower::forest::{LowerError, MAX_SLOTS, needs, program};
use collc::sema::model::{Collective, CollectiveKind, Dtype, ReduceOp};
use num_rational::BigRational;
use proptest::prelude::*;

fn q(n: i64, d: i64) -> BigRational {
    BigRational::new(n.into(), d.into())
}

fn collective(kind: CollectiveKind, n: usize, count: u64, root: Option<usize>) -> Collective {
    Collective {
        kind,
        ranks: (0..n).collect(),
        count,
        dtype: Dtype::F32,
        op: ReduceOp::Sum,
        root,
        span: Span::new(FileId(0), 0, 0),
    }
}

/// A tree from `(parent, child)` pairs (node ids are ranks).
fn tree(root: usize, rate: BigRational, edges: &[(usize, usize)]) -> Tree {
    Tree {
        root,
        rate,
        edges: edges
            .iter()
            .map(|&(from, to)| ForestEdge {
                from,
                to,
                route: Vec::new().into(),
            })
            .collect(),
    }
}

fn forest(direction: Direction, n: usize, trees: Vec<Tree>) -> Forest {
    Forest {
        direction,
        ranks: (0..n).collect(),
        k: 1,
        inv_rate: q(1, 1),
        optimum: q(1, 1),
        bottleneck: Cut {
            nodes: vec![0],
            compute: 1,
            bandwidth: q(1, 1),
        },
        trees,
    }
}

/// The chain `r -> r+1 -> ... -> r-1` (mod n), one tree per root: ring-shaped trees.
fn chains(n: usize, dir: Direction, roots: &[usize]) -> Forest {
    let trees = roots
        .iter()
        .map(|&r| {
            let e: Vec<(usize, usize)> =
                (0..n - 1).map(|i| ((r + i) % n, (r + i + 1) % n)).collect();
            tree(r, q(1, 1), &e)
        })
        .collect();
    forest(dir, n, trees)
}

/// Two trees per root with rates 1 and 2 (shares 1/3 and 2/3): a star and a chain.
fn star_and_chain(n: usize, dir: Direction, roots: &[usize]) -> Forest {
    let mut trees = Vec::new();
    for &r in roots {
        let star: Vec<(usize, usize)> = (1..n).map(|i| (r, (r + i) % n)).collect();
        trees.push(tree(r, q(5, 7), &star));
        let chain: Vec<(usize, usize)> =
            (0..n - 1).map(|i| ((r + i) % n, (r + i + 1) % n)).collect();
        trees.push(tree(r, q(10, 7), &chain));
    }
    forest(dir, n, trees)
}

/// Forests for `c` built by `make` (one per forest the collective needs).
fn build(c: &Collective, chunks: u64, make: &dyn Fn(Direction, &[usize]) -> Forest) -> Program {
    let n = c.ranks.len();
    let all: Vec<usize> = (0..n).collect();
    let forests: Vec<Forest> = needs(c)
        .iter()
        .map(|(roots, dir)| match roots {
            collc::forest::Roots::All => make(*dir, &all),
            collc::forest::Roots::One(r) => make(*dir, &[*r]),
        })
        .collect();
    let refs: Vec<&Forest> = forests.iter().collect();
    program(c, chunks, &refs).unwrap_or_else(|e| panic!("{e:?}"))
}

fn proved(p: &Program) {
    if let Err(f) = verify(p) {
        panic!("{}: {:#?}", p.name, &f[..f.len().min(3)]);
    }
}

const KINDS: [CollectiveKind; 5] = [
    CollectiveKind::Allgather,
    CollectiveKind::ReduceScatter,
    CollectiveKind::Allreduce,
    CollectiveKind::Broadcast,
    CollectiveKind::Reduce,
];

fn count(kind: CollectiveKind, n: usize, per: u64) -> u64 {
    match kind {
        CollectiveKind::Allgather | CollectiveKind::ReduceScatter => per * n as u64,
        _ => per,
    }
}

#[test]
fn every_kind_on_chains_and_mixed_trees_for_several_chunk_counts() {
    for n in [1usize, 2, 3, 5, 8] {
        for kind in KINDS {
            let root = kind.has_root().then_some(n / 2);
            let c = collective(kind, n, count(kind, n, 1000), root);
            for chunks in [1, 2, 3, 7] {
                proved(&build(&c, chunks, &|d, r| chains(n, d, r)));
                if n > 1 {
                    let p = build(&c, chunks, &|d, r| star_and_chain(n, d, r));
                    proved(&p);
                    assert_eq!(p.spec.chunks_per_part % (3 * chunks as u32), 0);
                }
            }
        }
    }
}

/// Allreduce whose in-trees split shards in halves and out-trees in thirds: one layout of sixths.
#[test]
fn allreduce_with_different_splits_in_each_half() {
    let n = 4;
    let c = collective(CollectiveKind::Allreduce, n, 4096, None);
    let halves = |d: Direction, roots: &[usize]| {
        let mut trees = Vec::new();
        for &r in roots {
            let a: Vec<(usize, usize)> = (1..n).map(|i| (r, (r + i) % n)).collect();
            let b: Vec<(usize, usize)> = (0..n - 1)
                .map(|i| ((r + n - i) % n, (r + n - i - 1) % n))
                .collect();
            trees.push(tree(r, q(3, 1), &a));
            trees.push(tree(r, q(3, 1), &b));
        }
        forest(d, n, trees)
    };
    let rs = halves(Direction::In, &[0, 1, 2, 3]);
    let ag = star_and_chain(n, Direction::Out, &[0, 1, 2, 3]);
    for chunks in [1, 4] {
        let p = program(&c, chunks, &[&rs, &ag]).expect("lowers");
        assert_eq!(p.spec.chunks_per_part, 4 * 6 * chunks as u32);
        proved(&p);
    }
}

/// Each tree carries `floor(P*B) - floor(P*A)` elements of its root's part, `A` and `B` its
/// cumulative shares: 1000 elements in shares 1/3, 2/3 are 333 and 667.
#[test]
fn tree_shares_are_exact_integer_apportionments() {
    let n = 3;
    let c = collective(CollectiveKind::Allgather, n, 3000, None);
    for chunks in [1u64, 4] {
        let p = build(&c, chunks, &|d, r| star_and_chain(n, d, r));
        proved(&p);
        // Root 0's sends: tag 0 is its star, tag 1 its chain.
        let mut per_tag = [0u64; 2];
        for op in &p.procs[0].ops {
            if let OpKind::Send { src, tag, peer } = op.kind {
                if tag < 2 && (tag == 0 || peer == 1) {
                    per_tag[tag as usize] += p.slice_bytes(src) / 4;
                }
            }
        }
        // The star sends its share to each of the 2 others.
        assert_eq!(per_tag, [2 * 333, 667], "chunks {chunks}");
    }
}

/// An out-tree's inner node forwards chunk j as soon as it has it: its send of chunk j depends
/// on its receive of chunk j only, not on later chunks.
#[test]
fn inner_nodes_forward_chunk_by_chunk() {
    let n = 4;
    let c = collective(CollectiveKind::Broadcast, n, 1 << 12, Some(0));
    let p = build(&c, 4, &|d, r| chains(n, d, r));
    proved(&p);
    let ops = &p.procs[1].ops;
    let recvs: Vec<usize> = (0..ops.len())
        .filter(|i| matches!(ops[*i].kind, OpKind::Recv { .. }))
        .collect();
    let sends: Vec<usize> = (0..ops.len())
        .filter(|i| matches!(ops[*i].kind, OpKind::Send { .. }))
        .collect();
    assert_eq!((recvs.len(), sends.len()), (4, 4));
    for (r, s) in recvs.iter().zip(&sends) {
        assert_eq!(ops[*s].deps.as_slice(), [*r as u32]);
    }
}

#[test]
fn malformed_forests_are_refused() {
    let n = 4;
    let c = collective(CollectiveKind::Allgather, n, 400, None);
    let err = |f: &Forest| match program(&c, 1, &[f]) {
        Err(LowerError::Malformed(m)) => m,
        other => panic!("{other:?}"),
    };
    // A tree that misses rank 3.
    let mut f = chains(n, Direction::Out, &[0, 1, 2, 3]);
    f.trees[0].edges.pop();
    assert!(err(&f).contains("misses rank 3"), "{}", err(&f));
    // Edges out of order (child before its parent is reached).
    let mut f = chains(n, Direction::Out, &[0, 1, 2, 3]);
    f.trees[1].edges.reverse();
    assert!(err(&f).contains("breadth-first"), "{}", err(&f));
    // No tree for rank 2.
    let f = chains(n, Direction::Out, &[0, 1, 3]);
    assert!(err(&f).contains("rank 2"), "{}", err(&f));
    // A node that is not a participant.
    let mut f = chains(n, Direction::Out, &[0, 1, 2, 3]);
    f.trees[0].edges[0].to = 9;
    assert!(err(&f).contains("not a participant"), "{}", err(&f));
    // The wrong direction.
    let f = chains(n, Direction::In, &[0, 1, 2, 3]);
    assert!(err(&f).contains("direction"), "{}", err(&f));
}

#[test]
fn layouts_beyond_the_limits_are_refused() {
    let n = 4;
    let c = collective(CollectiveKind::Allgather, n, 400, None);
    // Shares 1/p with p prime and large: p units per shard.
    let p = 1_000_003i64;
    let trees = (0..n)
        .flat_map(|r| {
            let e: Vec<(usize, usize)> = (1..n).map(|i| (r, (r + i) % n)).collect();
            [tree(r, q(1, p), &e), tree(r, q(p - 1, p), &e)]
        })
        .collect();
    let f = forest(Direction::Out, n, trees);
    match program(&c, 1, &[&f]) {
        Err(LowerError::TooLarge { slots, .. }) => assert!(slots > MAX_SLOTS),
        other => panic!("{other:?}"),
    }
}

/// A random spanning tree over `n` ranks rooted at `root`, edges in an order where every parent
/// is reached first, from `seed`.
fn random_tree(n: usize, root: usize, rate: BigRational, seed: &mut u64) -> Tree {
    let mut next = || {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    };
    let mut order: Vec<usize> = (0..n).filter(|&x| x != root).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    let mut reached = vec![root];
    let mut edges = Vec::new();
    for v in order {
        let p = reached[(next() % reached.len() as u64) as usize];
        edges.push((p, v));
        reached.push(v);
    }
    tree(root, rate, &edges)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    /// Random trees, random rates (1 to 3 trees per root, the same shares at every root), every kind and chunk count: proved.
    #[test]
    fn random_forests_are_proved(n in 1usize..7, kind in 0usize..5, chunks in 1u64..4, trees in 1usize..4, seed in any::<u64>(), per in 1u64..50) {
        let kind = KINDS[kind];
        let root = kind.has_root().then_some(seed as usize % n);
        let c = collective(kind, n, count(kind, n, per), root);
        let s = seed | 1;
        let make = |d: Direction, roots: &[usize]| {
            let mut s = s;
            let mut t = Vec::new();
            for &r in roots {
                for i in 0..trees {
                    let rate = q(1 + ((seed >> (i * 3)) % 3) as i64, 1 + (seed % 3) as i64);
                    t.push(random_tree(n, r, rate, &mut s));
                }
            }
            forest(d, n, t)
        };
        let p = build(&c, chunks, &make);
        prop_assert!(verify(&p).is_ok(), "{:?}", verify(&p).err().map(|f| f[0].message.clone()));
        // And as MSCCL XML (trees sharing channels), validated by symbolic execution.
        if n > 1 {
            let o = collc::backend::msccl::Options {
                inplace: seed & 2 != 0,
                ..Default::default()
            };
            let e = collc::backend::msccl::emit(&p, &o);
            prop_assert!(e.is_ok(), "{:?}", e.err().map(|ps| ps[0].message.clone()));
        }
    }
}

/// One rank: the solver returns a single empty tree of rate zero; every kind lowers to copies.
#[test]
fn one_rank_with_an_empty_zero_rate_tree() {
    for kind in KINDS {
        let c = collective(kind, 1, 64, kind.has_root().then_some(0));
        let forests: Vec<Forest> = needs(&c)
            .iter()
            .map(|(_, d)| forest(*d, 1, vec![tree(0, q(0, 1), &[])]))
            .collect();
        let refs: Vec<&Forest> = forests.iter().collect();
        let p = program(&c, 3, &refs).expect("lowers");
        proved(&p);
    }
}

/// Forests from the solver (`forest::solve`) for example topologies: every kind the family
/// implements lowers and is proved, for one and three chunks.
#[test]
fn solved_forests_on_examples_are_proved() {
    use collc::sema::model::Family;
    for (file, params) in [
        ("examples/forestcoll_fig2.coll", vec![]),
        ("examples/mi250_8plus8.coll", vec![]),
        ("examples/full_mesh_boxes.coll", vec![("boxes", "2")]),
    ] {
        let m0 = forest_fixtures::load(file, &params);
        for kind in KINDS {
            for chunks in [1, 3] {
                let mut m = m0.clone();
                let c = m.collective.as_mut().expect("collective");
                let n = c.ranks.len();
                c.kind = kind;
                c.root = kind.has_root().then_some(n - 1);
                c.count = count(kind, n, 64);
                if let Some(s) = m.schedule.as_mut() {
                    s.family = Family::Forest {
                        k: collc::sema::model::AutoOr::Auto,
                        chunks: collc::sema::model::AutoOr::Fixed(chunks),
                    };
                }
                if let Err(d) = collc::lower::lower_and_verify(&m) {
                    panic!("{file} {}: {}", kind.name(), d[0].message);
                }
            }
        }
    }
}
