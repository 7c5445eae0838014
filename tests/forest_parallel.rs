//! ForestColl on parallel links (issue 19): the tree count is floored per merged edge (all
//! copies of a link together, `parallel N` and repeated `link` lines alike), not per physical
//! copy, and the trees are still spread over the copies within each copy's bandwidth.
//!
//! The property test compares the fixed-k result with an oracle written here from the paper's
//! fixed-k formulation (../shared/seeds/forestcoll.txt, Section 4.5, Theorems 5, 10 and 14): k
//! trees per root fit at U (each tree carries 1/U) iff in D_k = G(floor(U B_e)) plus a source
//! with k arcs to every root, every rank receives |R| k; by the max-flow min-cut theorem, iff
//! every node set T holding a rank has floor-capacity entering it of at least k times the number
//! of roots outside it. The best U is a breakpoint m / B of some merged bandwidth B, and
//! feasibility is monotone in U (Theorem 14), so the oracle binary-searches m for each B and
//! checks every T by enumeration. All links are two-way, so the floored graph stays Eulerian and
//! switches can always be split off (Theorem 10): the condition is exact with switches too. The
//! oracle works on the spec's own numbers (GB/s, merged by hand), not on the solver's `Net`.

mod forest_common;

use collc::forest::validate::validate;
use collc::forest::{Direction, KChoice, Roots, solve};
use forest_common::*;
use num_rational::BigRational;
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
struct Spec {
    computes: usize,
    switches: usize,
    /// (a, b, GB/s, parallel) over node indices (computes first); pairs may repeat.
    links: Vec<(usize, usize, u32, u32)>,
}

impl Spec {
    fn name(&self, i: usize) -> String {
        if i < self.computes {
            format!("c[{i}]")
        } else {
            format!("w[{}]", i - self.computes)
        }
    }

    fn text(&self) -> String {
        let mut s = format!("topology t {{\n    compute c[{}];\n", self.computes);
        if self.switches > 0 {
            s += &format!("    switch w[{}];\n", self.switches);
        }
        for &(a, b, bw, par) in &self.links {
            s += &format!(
                "    link {} <-> {} : {bw} GB/s, parallel {par};\n",
                self.name(a),
                self.name(b)
            );
        }
        s + "}\n"
    }

    /// Merged bandwidth per ordered pair, GB/s.
    fn merged(&self) -> BTreeMap<(usize, usize), i64> {
        let mut m = BTreeMap::new();
        for &(a, b, bw, par) in &self.links {
            let total = i64::from(bw) * i64::from(par);
            *m.entry((a, b)).or_insert(0) += total;
            *m.entry((b, a)).or_insert(0) += total;
        }
        m
    }
}

fn spec() -> impl Strategy<Value = Spec> {
    (2usize..5, 0usize..3).prop_flat_map(|(c, w)| {
        let n = c + w;
        // A spanning path keeps it connected; extra links repeat pairs or add new ones.
        let tree = proptest::collection::vec((0usize..1000, 1u32..4, 1u32..4), n - 1);
        let extra = proptest::collection::vec((0..n, 0..n, 1u32..4, 1u32..3), 0..4);
        (Just(c), Just(w), tree, extra).prop_map(move |(c, w, tree, extra)| {
            let mut links = Vec::new();
            for (i, (p, bw, par)) in tree.into_iter().enumerate() {
                let v = i + 1;
                links.push((p % v, v, bw, par));
            }
            links.extend(extra.into_iter().filter(|(a, b, _, _)| a != b));
            Spec {
                computes: c,
                switches: w,
                links,
            }
        })
    })
}

/// Whether k trees per root fit when one tree carries 1/U GB/s, U = m / b (see the module doc).
fn fits(spec: &Spec, roots: &[usize], k: i64, m: i64, b: i64) -> bool {
    let n = spec.computes + spec.switches;
    let merged = spec.merged();
    (1u32..(1 << n)).all(|mask| {
        let inside = |v: usize| mask >> v & 1 == 1;
        if !(0..spec.computes).any(inside) {
            return true;
        }
        let entering: i64 = merged
            .iter()
            .filter(|((x, y), _)| !inside(*x) && inside(*y))
            .map(|(_, &bw)| m * bw / b)
            .sum();
        let outside = roots.iter().filter(|&&r| !inside(r)).count() as i64;
        entering >= k * outside
    })
}

/// The smallest U (per GB/s) at which k trees per root fit, by the oracle.
fn best_u(spec: &Spec, roots: &[usize], k: i64) -> BigRational {
    let mut bws: Vec<i64> = spec.merged().values().copied().collect();
    bws.sort_unstable();
    bws.dedup();
    let mut best: Option<BigRational> = None;
    for &b in &bws {
        // At U = k |R| every edge carries all trees: feasible on a connected graph.
        let (mut lo, mut hi) = (1i64, k * roots.len() as i64 * b);
        if !fits(spec, roots, k, hi, b) {
            continue;
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if fits(spec, roots, k, mid, b) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let u = ratio(hi, b);
        if best.as_ref().is_none_or(|x| u < *x) {
            best = Some(u);
        }
    }
    best.expect("a connected topology fits at some U")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn fixed_k_on_parallel_links_matches_the_oracle(
        spec in spec(),
        k in 1u64..4,
        one in any::<bool>(),
        inward in any::<bool>(),
    ) {
        let (topo, ranks) = load_text("parallel.coll", &spec.text());
        prop_assert_eq!(ranks.clone(), (0..spec.computes).collect::<Vec<_>>());
        let (roots, root_list) = if one {
            (Roots::One(ranks[ranks.len() - 1]), vec![ranks[ranks.len() - 1]])
        } else {
            (Roots::All, ranks.clone())
        };
        let dir = if inward { Direction::In } else { Direction::Out };
        let f = solve(&topo, &ranks, roots, KChoice::Fixed(k), dir).expect("solves");
        prop_assert_eq!(f.k, k);
        // inv_rate = U / k seconds per byte with U per byte/s = U_oracle / 1e9.
        let u = best_u(&spec, &root_list, k as i64);
        let want = u / BigRational::from_integer((k as i64 * 1_000_000_000).into());
        prop_assert_eq!(&f.inv_rate, &want, "{}", spec.text());
        if let Err(e) = validate(&topo, &f) {
            prop_assert!(false, "{e}\n{}", spec.text());
        }
    }
}

/// The example: two 1 GB/s copies carry one 2 GB/s tree each way at k = 1, so the
/// allgather reaches 4 GB/s (2 GB/s per copy floored apart gave 2 GB/s).
#[test]
fn two_parallel_copies_give_four_gbs_at_k_one() {
    for text in [
        "topology t { compute c[2]; link c[0] <-> c[1] : 1 GB/s, parallel 2; }",
        "topology t { compute c[2]; link c[0] <-> c[1] : 1 GB/s; link c[0] <-> c[1] : 1 GB/s; }",
    ] {
        let (topo, ranks) = load_text("two.coll", text);
        let f =
            solve(&topo, &ranks, Roots::All, KChoice::Fixed(1), Direction::Out).expect("solves");
        assert_eq!(forest_algbw(&f), ratio(4, 1), "{text}");
        validate(&topo, &f).expect("within each copy's bandwidth");
        // Each tree is spread over both copies: every copy carries exactly 1 GB/s each way.
        let mut load: BTreeMap<usize, BigRational> = BTreeMap::new();
        for t in &f.trees {
            for e in &t.edges {
                for &g in e.route.iter() {
                    *load.entry(g).or_insert_with(|| ratio(0, 1)) += &t.rate;
                }
            }
        }
        assert_eq!(load.len(), 4, "{load:?}");
        assert!(
            load.values().all(|l| *l == ratio(1_000_000_000, 1)),
            "{load:?}"
        );
        // k: auto finds k = 1 optimal on the merged edge (per copy, Proposition 3 gave k = 2).
        let f = solve(&topo, &ranks, Roots::All, KChoice::Auto, Direction::Out).expect("solves");
        assert_eq!((f.k, forest_algbw(&f)), (1, ratio(4, 1)), "{text}");
    }
}

/// Uneven copies: 3 GB/s and 1 GB/s between two nodes behave as one 4 GB/s edge.
#[test]
fn uneven_copies_fill_in_order() {
    let text =
        "topology t { compute c[2]; link c[0] <-> c[1] : 3 GB/s; link c[0] <-> c[1] : 1 GB/s; }";
    let (topo, ranks) = load_text("uneven.coll", text);
    for k in 1..=3 {
        let f =
            solve(&topo, &ranks, Roots::All, KChoice::Fixed(k), Direction::Out).expect("solves");
        assert_eq!(forest_algbw(&f), ratio(8, 1), "k = {k}");
        validate(&topo, &f).expect("within each copy's bandwidth");
    }
}
