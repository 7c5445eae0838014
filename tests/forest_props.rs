//! Property tests of the ForestColl solver on random small topologies with switches
//! (issue 5's Done-when): the optimum equals a brute-force maximum over all cuts, every tree
//! spans all ranks, and the trees' load on every physical link respects its capacity at the
//! reported rate (`forest::validate`). Topologies mix two-way links of uneven bandwidth,
//! parallel links, relay switches and a one-way ring (still Eulerian), so in-trees are built on
//! a graph that differs from its transpose.

mod forest_common;

use collc::forest::net::Net;
use collc::forest::validate::validate;
use collc::forest::{Direction, KChoice, Roots, optimum, plan, solve};
use collc::sema::model::Topology;
use forest_common::*;
use num_rational::BigRational;
use num_traits::Zero;
use petgraph::visit::EdgeRef;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Spec {
    computes: usize,
    switches: usize,
    /// (a, b, GB/s, parallel) over node indices (computes first).
    links: Vec<(usize, usize, u32, u32)>,
    /// A one-way ring over the computes at this bandwidth (0: none).
    ring: u32,
}

impl Spec {
    fn text(&self) -> String {
        let name = |i: usize| {
            if i < self.computes {
                format!("c[{i}]")
            } else {
                format!("w[{}]", i - self.computes)
            }
        };
        let mut s = format!("topology t {{\n    compute c[{}];\n", self.computes);
        if self.switches > 0 {
            s += &format!("    switch w[{}];\n", self.switches);
        }
        for &(a, b, bw, par) in &self.links {
            s += &format!(
                "    link {} <-> {} : {bw} GB/s, parallel {par};\n",
                name(a),
                name(b)
            );
        }
        if self.ring > 0 {
            for i in 0..self.computes {
                let j = (i + 1) % self.computes;
                s += &format!(
                    "    link {} -> {} : {} GB/s;\n",
                    name(i),
                    name(j),
                    self.ring
                );
            }
        }
        s + "}\n"
    }
}

fn spec() -> impl Strategy<Value = Spec> {
    (2usize..6, 0usize..4).prop_flat_map(|(c, w)| {
        let n = c + w;
        // A spanning path keeps the topology connected; extra links add structure.
        let tree = proptest::collection::vec((0usize..1000, 1u32..6, 1u32..3), n - 1);
        let extra = proptest::collection::vec(
            (
                0..n,
                0..n,
                prop_oneof![Just(1u32), Just(2), Just(3), Just(10)],
                1u32..3,
            ),
            0..6,
        );
        let ring = prop_oneof![Just(0u32), Just(0), Just(2)];
        (Just(c), Just(w), tree, extra, ring).prop_map(move |(c, w, tree, extra, ring)| {
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
                ring,
            }
        })
    })
}

/// max over S (not containing every rank) of |S ∩ R| / B+(S), by enumeration, in s/byte.
fn brute_force(topo: &Topology, ranks: &[usize], roots: &[usize], dir: Direction) -> BigRational {
    let n = topo.nodes.len();
    let mut best = BigRational::zero();
    for mask in 0u32..(1 << n) {
        let inside = |v: usize| mask >> v & 1 == 1;
        if ranks.iter().all(|&r| inside(r)) {
            continue;
        }
        let count = roots.iter().filter(|&&r| inside(r)).count();
        if count == 0 {
            continue;
        }
        let mut out = BigRational::zero();
        for e in topo.graph.edge_references() {
            let (a, b) = match dir {
                Direction::Out => (e.source().index(), e.target().index()),
                Direction::In => (e.target().index(), e.source().index()),
            };
            if inside(a) && !inside(b) {
                out += &e.weight().bandwidth;
            }
        }
        let r = BigRational::from_integer(count.into()) / out;
        if r > best {
            best = r;
        }
    }
    best
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_topologies(spec in spec(), k in 0u64..4, one in any::<bool>(), inward in any::<bool>()) {
        let (topo, ranks) = load_text("random.coll", &spec.text());
        let dir = if inward { Direction::In } else { Direction::Out };
        let (roots, root_list) = if one {
            (Roots::One(ranks[ranks.len() - 1]), vec![ranks[ranks.len() - 1]])
        } else {
            (Roots::All, ranks.clone())
        };
        let kc = if k == 0 { KChoice::Auto } else { KChoice::Fixed(k) };
        let f = solve(&topo, &ranks, roots, kc, dir).expect("connected topologies solve");
        prop_assert_eq!(&f.optimum, &brute_force(&topo, &ranks, &root_list, dir), "{}", spec.text());
        prop_assert!(f.inv_rate >= f.optimum);
        if let Err(e) = validate(&topo, &f) {
            prop_assert!(false, "{e}\n{}", spec.text());
        }
        // The reported cut attains the optimum.
        let ratio = BigRational::from_integer(f.bottleneck.compute.into()) / &f.bottleneck.bandwidth;
        prop_assert_eq!(&ratio, &f.optimum);
        let per_root = f.trees.iter().filter(|t| t.root == root_list[0]).count() as u64;
        prop_assert!(per_root >= 1 && per_root <= f.k.max(1) * 64);
        if kc == KChoice::Auto {
            let net = Net::build(&topo, &ranks, roots, dir).expect("builds");
            let k_opt = plan::optimal(&net, &optimum::optimum(&net)).k;
            if k_opt <= plan::AUTO_SCAN {
                // The optimal k is small enough to use: the forest is optimal.
                prop_assert_eq!(f.k, k_opt);
                prop_assert_eq!(&f.inv_rate, &f.optimum);
            } else {
                prop_assert!(f.k <= plan::AUTO_SCAN);
            }
        } else {
            prop_assert_eq!(f.k, k);
        }
    }
}
