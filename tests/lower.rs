//! Lowerings (src/lower/) proved by `ir::verify`: recursive doubling and ring allreduce for every
//! N from 2 to 256, the recursive-multiplying paper's Table 2 schedules, collapse/expand and
//! merge schedules for primes, random valid stage lists (proptest), ring allgather and
//! reduce-scatter, binomial broadcast and reduce with every root, barriers; IR text snapshots of
//! small programs; the `stages: auto` and unsupported-family diagnostics.

use collc::diag::{Code, SourceMap};
use collc::ir::verify::verify;
use collc::ir::{Program, text};
use collc::lower::{lower, lower_and_verify};
use collc::sema::model::{AutoOr, CollectiveKind, Dtype, Family, Model, ReduceOp, Stage};
use collc::sema::schedule::{decode_stage, stage_problem};
use proptest::prelude::*;

fn model(kind: CollectiveKind, n: usize, count: u64, root: Option<usize>, family: Family) -> Model {
    Model::bare(kind, n, count, Dtype::F32, ReduceOp::Sum, root, family)
}

fn stages(s: &str) -> Vec<Stage> {
    s.split(',')
        .map(|x| {
            decode_stage(x.trim())
                .unwrap_or_else(|| panic!("not a stage: {x}"))
                .unwrap_or_else(|e| panic!("{e}"))
        })
        .collect()
}

fn rm(list: &str) -> Family {
    Family::RecursiveMultiplying {
        stages: AutoOr::Fixed(stages(list)),
        model: None,
    }
}

/// Lowers and verifies, panicking with the findings.
fn proved(m: &Model) -> Program {
    match lower_and_verify(m) {
        Ok((p, _)) => p,
        Err(d) => {
            let msgs: Vec<String> = d
                .iter()
                .map(|d| format!("{}: {} [{}]", d.code, d.message, d.primary.message))
                .collect();
            panic!("{}", msgs.join("\n"))
        }
    }
}

fn allreduce(n: usize, family: Family) -> Program {
    proved(&model(CollectiveKind::Allreduce, n, 16, None, family))
}

#[test]
fn recursive_doubling_every_n() {
    for n in 2..=256 {
        let p = allreduce(n, Family::RecursiveDoubling);
        // log2 p stages of pairwise exchange, plus collapse and expand when n is no power of two.
        let pof2 = 1usize << (usize::BITS - 1 - n.leading_zeros());
        let r = n - pof2;
        let messages = pof2 * pof2.trailing_zeros() as usize + 2 * r;
        let proof = verify(&p).expect("proved");
        assert_eq!(proof.messages, messages, "n = {n}");
    }
}

/// Ring allreduce for every N in `range`; split in four so the test harness runs the ranges in
/// parallel (the verifier's work grows as N^3 for N chunks on N ranks).
fn ring_allreduce(range: std::ops::RangeInclusive<usize>) {
    for n in range {
        let p = allreduce(n, Family::ring());
        assert_eq!(p.spec.chunks_per_part as usize, n);
        let proof = verify(&p).expect("proved");
        assert_eq!(proof.messages, 2 * n * (n - 1), "n = {n}");
    }
}

#[test]
fn ring_allreduce_2_to_181() {
    ring_allreduce(2..=181);
}

#[test]
fn ring_allreduce_182_to_215() {
    ring_allreduce(182..=215);
}

#[test]
fn ring_allreduce_216_to_238() {
    ring_allreduce(216..=238);
}

#[test]
fn ring_allreduce_239_to_256() {
    ring_allreduce(239..=256);
}

/// `stages: auto` (the cost module's choice) for every N, and `schedule auto` on allreduce.
#[test]
fn auto_stages_every_n() {
    let auto = || Family::RecursiveMultiplying {
        stages: AutoOr::Auto,
        model: None,
    };
    for n in 2..=256 {
        let p = allreduce(n, auto());
        assert!(p.name.starts_with("recursive_multiplying ["), "{}", p.name);
        let q = allreduce(n, Family::Auto);
        assert_eq!(p, q);
    }
}

/// Table 2 of the paper: the best schedule found for each N.
#[test]
fn table_2_schedules() {
    for (n, list) in [
        (4, "a4"),
        (6, "a6"),
        (8, "a2, a4"),
        (12, "a3, a4"),
        (16, "a4, a4"),
        (24, "a4, a6"),
        (32, "a8, a4"),
        (48, "a8, a6"),
        (64, "a8, a8"),
        (96, "a8, a3, a4"),
        (128, "a8, a4, a4"),
    ] {
        let p = allreduce(n, rm(list));
        assert_eq!(p.name, format!("recursive_multiplying [{list}]"));
        // Every rank sends to b_i peers per stage.
        let per_rank: usize = stages(list)
            .iter()
            .map(|s| match s {
                Stage::Factor { base } => *base as usize - 1,
                _ => 0,
            })
            .sum();
        assert_eq!(verify(&p).expect("proved").messages, n * per_rank, "{list}");
    }
}

#[test]
fn collapse_expand_for_primes() {
    for (n, list) in [
        (7, "c6m2, a2, a2, e6m2"),
        (7, "c6m3, a3, e6m3"),
        (7, "c3m3, a5, e3m3"),
        (13, "c10m2, a2, a4, e10m2"),
        (13, "c9m3, a7, e9m3"),
        (13, "c6m2, a10, e6m2"),
        (31, "c30m2, a4, a4, e30m2"),
        (31, "c9m3, a5, a5, e9m3"),
        (31, "c12m4, a2, a11, e12m4"),
        (127, "c126m2, a4, a4, a4, e126m2"),
        (127, "c33m3, a3, a5, a7, e33m3"),
        (127, "c69m3, a3, a3, a9, e69m3"),
        (127, "c36m4, a4, a25, e36m4"),
        // Nested collapses, and a collapse down to a single rank.
        (11, "c10m2, c4m2, a4, e4m2, e10m2"),
        (2, "c2m2, e2m2"),
        (5, "c5m5, e5m5"),
    ] {
        assert_eq!(stage_problem(&stages(list), n as u64), None, "{list}");
        allreduce(n, rm(list));
    }
}

#[test]
fn merges() {
    for (n, list) in [
        (7, "m1g1a3, n1g1a2"),
        (7, "m1g2a3, n1g2a2"),
        (7, "m1g1a2, n1g1a3"),
        (7, "m3g2a2, n3g2a2"),
        (7, "m3g1a2, n3g1a2"),
        (11, "m1g1a2, n1g1a5"),
        (13, "m1g1a3, n1g1a4"),
        (13, "m1g2a2, a3, n1g2a2"),
        (8, "m2g1a3, n2g1a2"),
        (8, "m2g2a3, n2g2a2"),
        (9, "m1g4a2, n1g4a4"),
        (10, "m2g4a2, n2g4a4"),
        (31, "m1g3a2, a3, n1g3a5"),
        (37, "m5g4a2, a4, n5g4a4"),
        // A merge inside a collapse.
        (16, "c6m2, m1g1a3, n1g1a4, e6m2"),
    ] {
        assert_eq!(stage_problem(&stages(list), n as u64), None, "{list}");
        allreduce(n, rm(list));
    }
}

#[test]
fn ring_allgather_and_reduce_scatter() {
    for n in 2..=64 {
        for kind in [CollectiveKind::Allgather, CollectiveKind::ReduceScatter] {
            let p = proved(&model(kind, n, 4 * n as u64, None, Family::ring()));
            assert_eq!(p.spec.part_elements, 4);
            assert_eq!(verify(&p).expect("proved").messages, n * (n - 1));
        }
    }
}

/// `ranks` shuffled by a fixed permutation: rank r runs on node `perm[r]`, so the ring runs in
/// node order, not rank order.
fn shuffled(mut m: Model, seed: u64) -> Model {
    let c = m.collective.as_mut().expect("a collective");
    let n = c.ranks.len();
    let mut x = seed;
    for i in (1..n).rev() {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        c.ranks.swap(i, (x >> 33) as usize % (i + 1));
    }
    m
}

#[test]
fn rings_in_node_order_and_sliced_rings_are_proved() {
    for n in [1, 2, 3, 5, 8, 13, 32] {
        for seed in 0..3 {
            for kind in [CollectiveKind::Allgather, CollectiveKind::ReduceScatter] {
                let m = shuffled(model(kind, n, 4 * n as u64, None, Family::ring()), seed);
                let p = proved(&m);
                assert_eq!(verify(&p).expect("proved").messages, n * (n - 1));
            }
            for s in [1u64, 2, 3, 4] {
                let family = Family::Ring {
                    slices: AutoOr::Fixed(s),
                    channels: AutoOr::Fixed(1),
                };
                let m = shuffled(
                    model(CollectiveKind::Allreduce, n, 16 * n as u64, None, family),
                    seed,
                );
                let p = proved(&m);
                assert_eq!(p.spec.chunks_per_part as usize, n * s as usize);
                let messages = verify(&p).expect("proved").messages;
                assert_eq!(messages, 2 * n * (n - 1) * s as usize, "n {n} slices {s}");
            }
        }
    }
    // The ring follows the nodes: on nodes 3, 0, 2, 1 rank 1 (node 0) sends to rank 3 (node 1).
    let mut m = model(CollectiveKind::Allgather, 4, 16, None, Family::ring());
    m.collective.as_mut().expect("a collective").ranks = vec![3, 0, 2, 1];
    let p = proved(&m);
    let text = text::print(&p);
    let proc1: Vec<&str> = text
        .split("proc ")
        .find(|b| b.starts_with("1 rank"))
        .expect("rank 1")
        .lines()
        .filter(|l| l.contains(": send"))
        .collect();
    assert_eq!(proc1.len(), 3, "{text}");
    assert!(proc1.iter().all(|l| l.contains("-> 3 ")), "{text}");
}

#[test]
fn binomial_broadcast_and_reduce() {
    for n in 2..=64usize {
        let roots: Vec<usize> = if n <= 16 {
            (0..n).collect()
        } else {
            vec![0, 1, n / 2, n - 1]
        };
        for root in roots {
            for kind in [CollectiveKind::Broadcast, CollectiveKind::Reduce] {
                let p = proved(&model(kind, n, 8, Some(root), Family::Binomial));
                assert_eq!(verify(&p).expect("proved").messages, n - 1, "{n} {root}");
            }
        }
    }
}

#[test]
fn barriers() {
    for n in [2, 3, 5, 8, 13, 64] {
        for family in [
            Family::RecursiveDoubling,
            Family::ring(),
            rm(collc::sema::schedule::suggestions(n as u64)[0].trim_matches(['`', '[', ']'])),
        ] {
            let p = proved(&model(CollectiveKind::Barrier, n, 0, None, family));
            assert_eq!(p.spec.part_elements, 0);
        }
    }
}

#[test]
fn single_rank() {
    for family in [Family::RecursiveDoubling, Family::ring()] {
        proved(&model(CollectiveKind::Allreduce, 1, 4, None, family));
    }
    proved(&model(
        CollectiveKind::Allgather,
        1,
        4,
        None,
        Family::ring(),
    ));
    proved(&model(
        CollectiveKind::ReduceScatter,
        1,
        4,
        None,
        Family::ring(),
    ));
    proved(&model(
        CollectiveKind::Broadcast,
        1,
        4,
        Some(0),
        Family::Binomial,
    ));
    proved(&model(
        CollectiveKind::Reduce,
        1,
        4,
        Some(0),
        Family::Binomial,
    ));
}

/// `schedule auto` picks the ring for allgather and reduce-scatter, a binomial tree for
/// broadcast and reduce.
#[test]
fn auto_family_per_collective() {
    for (kind, root, name) in [
        (CollectiveKind::Allgather, None, "ring"),
        (CollectiveKind::ReduceScatter, None, "ring"),
        (CollectiveKind::Broadcast, Some(3), "binomial"),
        (CollectiveKind::Reduce, Some(5), "binomial"),
    ] {
        let p = proved(&model(kind, 12, 24, root, Family::Auto));
        assert_eq!(p.name, name);
    }
    let p = proved(&model(CollectiveKind::Barrier, 12, 0, None, Family::Auto));
    assert!(p.name.starts_with("recursive_multiplying"), "{}", p.name);
}

#[test]
fn unlowered_families_are_e0039() {
    // Forest lowers (tests/forest_lower.rs), but needs a topology to solve on.
    let forest = Family::Forest {
        k: AutoOr::Auto,
        chunks: AutoOr::Fixed(1),
    };
    let d = lower(&model(CollectiveKind::Allreduce, 8, 16, None, forest)).expect_err("no topology");
    assert_eq!(d[0].code, Code::MissingDeclaration);
    // Static trees need switches to aggregate in (tests/static_trees.rs lowers them).
    let family = Family::static_trees(2);
    let d = lower(&model(CollectiveKind::Allreduce, 8, 16, None, family)).expect_err("no topology");
    assert_eq!(d[0].code, Code::LowerUnsupported);
    assert!(d[0].message.contains("need a topology"), "{}", d[0].message);
    // A family that does not implement the collective.
    let d = lower(&model(
        CollectiveKind::Broadcast,
        8,
        16,
        Some(0),
        Family::ring(),
    ))
    .expect_err("ring has no broadcast");
    assert_eq!(d[0].code, Code::LowerUnsupported);
    // An inconsistent stage list in a hand-built model is reported, not lowered.
    let d = lower(&model(
        CollectiveKind::Allreduce,
        10,
        16,
        None,
        rm("a3, a4"),
    ))
    .expect_err("product");
    assert_eq!(d[0].code, Code::StageProduct);
}

/// From source text through `sema::check` to a proved program.
#[test]
fn from_source() {
    let src = "generator ring_of(n: int, bw: bandwidth) {
    compute host[n];
    for i in 0..n {
        link host[i] <-> host[(i + 1) % n] : bw;
    }
}
topology t = ring_of(7, 25 GB/s);
collective allreduce { count: 4; dtype: f64; op: sum; }
schedule recursive_multiplying { stages: [m1g1a3, n1g1a2]; }
";
    let mut sources = SourceMap::new();
    let id = sources.add("seven.coll", src.to_string());
    let checked = collc::sema::check(&mut sources, id, &collc::sema::Options::default());
    assert!(checked.diagnostics.is_empty());
    let m = checked.model.expect("model");
    let (p, proof) = lower_and_verify(&m).unwrap_or_else(|d| panic!("{}", d[0].message));
    assert_eq!(p.spec.ranks, 7);
    // Stage 1: 6 ranks send to 2 peers, the remainder to 3; stage 2: 6 ranks send to 1 peer,
    // and one group of 2 sends to the remainder.
    assert_eq!(proof.messages, 6 * 2 + 3 + 6 + 2);
}

#[test]
fn ir_snapshots() {
    for (name, n, family) in [
        ("rd_4", 4, Family::RecursiveDoubling),
        ("rd_6", 6, Family::RecursiveDoubling),
        ("rm_7_merge", 7, rm("m1g1a3, n1g1a2")),
        ("ring_4", 4, Family::ring()),
    ] {
        let p = allreduce(n, family);
        let t = text::print(&p);
        // The text form round-trips.
        let mut sources = SourceMap::new();
        let id = sources.add(format!("{name}.ir"), t.clone());
        let parsed = text::parse(id, &t).unwrap_or_else(|d| panic!("{}", d.message));
        assert_eq!(parsed.program, p);
        insta::assert_snapshot!(name, t);
    }
}

/// A small deterministic generator (xorshift64*) for the property test's stage lists.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn pick(&mut self, xs: &[u64]) -> Option<u64> {
        (!xs.is_empty()).then(|| xs[self.below(xs.len() as u64) as usize])
    }
}

fn divisors(n: u64) -> Vec<u64> {
    (2..=n).filter(|d| n % d == 0).collect()
}

/// A random factorisation of `n` as factor stages (empty for 1).
fn random_factors(n: u64, rng: &mut Rng) -> Vec<String> {
    let mut out = Vec::new();
    let mut m = n;
    while m > 1 {
        let d = rng.pick(&divisors(m)).unwrap_or(m);
        out.push(format!("a{d}"));
        m /= d;
    }
    out
}

/// A random stage list for a group of `n` ranks: factors, a collapse around a random inner
/// group, or a merge, `depth` levels deep at most.
fn random_group(n: u64, rng: &mut Rng, depth: u32) -> Vec<String> {
    if n <= 1 {
        return Vec::new();
    }
    match rng.below(if depth == 0 { 1 } else { 3 }) {
        1 => {
            let b = 2 + rng.below(n.min(8) - 1);
            let j = 1 + rng.below(n / b);
            let t = j * b;
            let mut out = vec![format!("c{t}m{b}")];
            out.extend(random_group(n - t + j, rng, depth - 1));
            out.push(format!("e{t}m{b}"));
            out
        }
        2 if n >= 5 => {
            let r = 1 + rng.below((n - 4).min(8));
            let inner = n - r;
            // The merge's factor and the inverse merge's factor, both at least 2.
            let firsts: Vec<u64> = divisors(inner)
                .into_iter()
                .filter(|b| inner / b >= 2)
                .collect();
            let Some(b) = rng.pick(&firsts) else {
                return random_factors(n, rng);
            };
            let g = 1 + rng.below(inner / b);
            let rest = inner / b;
            let last = rng.pick(&divisors(rest)).unwrap_or(rest);
            let mut out = vec![format!("m{r}g{g}a{b}")];
            out.extend(random_factors(rest / last, rng));
            out.push(format!("n{r}g{g}a{last}"));
            out
        }
        _ => random_factors(n, rng),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// Random valid stage lists on random rank counts lower to programs the verifier proves.
    #[test]
    fn random_stage_lists_are_proved(n in 2u64..200, seed in any::<u64>()) {
        let mut rng = Rng(seed | 1);
        let list = random_group(n, &mut rng, 2).join(", ");
        let st = stages(&list);
        prop_assume!(stage_problem(&st, n).is_none());
        let m = model(CollectiveKind::Allreduce, n as usize, 8, None, rm(&list));
        let r = lower_and_verify(&m);
        prop_assert!(r.is_ok(), "{list} on {n}: {}", r.err().map(|d| d[0].message.clone()).unwrap_or_default());
    }
}

/// `collc build FILE --emit ir` prints the proved program; an unlowerable schedule is E0039
/// with exit code 1.
#[test]
fn cli_emit_ir() {
    let dir = std::env::temp_dir().join(format!("collc-lower-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let topo = "topology t {
    compute host[6];
    switch sw;
    for i in 0..6 { link host[i] <-> sw : 25 GB/s; }
}
";
    let good = dir.join("six.coll");
    std::fs::write(
        &good,
        format!("{topo}collective allreduce {{ count: 8; dtype: f32; op: sum; }}\nschedule recursive_doubling;\n"),
    )
    .expect("write");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(["build", "--emit", "ir"])
        .arg(&good)
        .output()
        .expect("run collc");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = String::from_utf8(out.stdout).expect("utf-8");
    assert!(
        t.starts_with("collc-ir 1\nname \"recursive_doubling [c4m2, a2, a2, e4m2]\""),
        "{t}"
    );
    let mut sources = SourceMap::new();
    let id = sources.add("six.ir", t.clone());
    let parsed = text::parse(id, &t).unwrap_or_else(|d| panic!("{}", d.message));
    verify(&parsed.program).expect("proved");
    let bad = dir.join("static.coll");
    std::fs::write(
        &bad,
        format!(
            "{topo}collective allreduce {{ size: 1 MiB; }}\nschedule static_trees {{ trees: 2; }}\n"
        ),
    )
    .expect("write");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(["build", "--emit", "ir", "--color", "never"])
        .arg(&bad)
        .output()
        .expect("run collc");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("error[E0039]"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Rings over channels on the paper's two DGX A100 boxes: one ring per NIC rail (8), each
/// carrying an eighth of every part, proved for every ring collective and for fixed counts.
#[test]
fn rings_over_channels_are_proved() {
    for (kind, size) in [
        ("allgather", "size: 64 KiB; dtype: f32;"),
        ("reduce_scatter", "size: 64 KiB; dtype: f32; op: sum;"),
        ("allreduce", "size: 64 KiB; dtype: f32; op: sum;"),
    ] {
        for (channels, want) in [("auto", 8u32), ("3", 3), ("1", 1)] {
            let src = format!(
                "import dgx_a100;\ntopology a = dgx_a100(clusters: 2);\n\
                 collective {kind} {{ {size} }}\nschedule ring {{ channels: {channels}; }}\n"
            );
            let mut sources = SourceMap::new();
            let id = sources.add("rings.coll", src);
            let checked = collc::sema::check(&mut sources, id, &collc::sema::Options::default());
            assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
            let m = checked.model.expect("model");
            let p = proved(&m);
            let per_ring = if kind == "allreduce" { 16 } else { 1 };
            assert_eq!(p.spec.chunks_per_part, want * per_ring, "{kind} {channels}");
            let messages = verify(&p).expect("proved").messages;
            let steps = if kind == "allreduce" { 2 * 15 } else { 15 };
            assert_eq!(messages, (want * 16 * steps) as usize, "{kind}");
        }
    }
}

/// NCCL's tree (double binary tree over boxes, a chain in each, a pair per NIC rail): proved on
/// one, two and three DGX A100 boxes and without a topology, at several chunk counts, with every rank's result the
/// root's; each tree edge carries one message up and one down per chunk.
#[test]
fn nccl_trees_are_proved() {
    for (clusters, chunks) in [(2, "auto"), (2, "3"), (3, "1"), (1, "2")] {
        let src = format!(
            "import dgx_a100;\ntopology a = dgx_a100(clusters: {clusters});\n\
             collective allreduce {{ size: 4 MiB; dtype: f32; op: sum; }}\n\
             schedule nccl_tree {{ chunks: {chunks}; }}\n"
        );
        let mut sources = SourceMap::new();
        let id = sources.add("tree.coll", src);
        let checked = collc::sema::check(&mut sources, id, &collc::sema::Options::default());
        assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
        let m = checked.model.expect("model");
        let p = proved(&m);
        let n = 8 * clusters;
        // A tree pair per rail (8) across boxes, one in a single box.
        let ch = if clusters > 1 { 8 } else { 1 };
        let per_tree = match chunks {
            "auto" => ((4usize << 20) / (2 * ch) / (256 << 10)).max(1),
            k => k.parse().expect("a count"),
        };
        assert_eq!(
            p.spec.chunks_per_part as usize,
            2 * ch * per_tree,
            "{clusters} {chunks}"
        );
        // 2 x ch trees of n - 1 edges, a message each way per edge and chunk.
        let messages = verify(&p).expect("proved").messages;
        assert_eq!(
            messages,
            2 * ch * per_tree * 2 * (n - 1),
            "{clusters} {chunks}"
        );
    }
    for n in [1, 2, 3, 5, 8] {
        let family = Family::NcclTree {
            chunks: AutoOr::Fixed(2),
        };
        let p = proved(&model(
            CollectiveKind::Allreduce,
            n,
            4 * n as u64,
            None,
            family,
        ));
        assert_eq!(verify(&p).expect("proved").messages, 2 * 2 * 2 * (n - 1));
    }
}
