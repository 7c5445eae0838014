use super::*;

#[test]
fn fair_rates_share_a_bottleneck_equally_and_give_the_rest_to_others() {
    // Links 0 (10) and 1 (4); flow a on 0, flow b on 0 and 1, flow c on 1.
    let caps = [10.0, 4.0];
    let r = fair_rates(&caps, &[&[0], &[0, 1], &[1]]);
    assert_eq!(r, vec![8.0, 2.0, 2.0]);
}

#[test]
fn a_flow_crossing_a_link_twice_counts_twice() {
    let r = fair_rates(&[6.0], &[&[0, 0], &[0]]);
    assert_eq!(r, vec![2.0, 2.0]);
}

#[test]
fn an_empty_route_is_unbounded() {
    let r = fair_rates(&[1.0], &[&[]]);
    assert!(r[0].is_infinite());
}

/// The route by a search to `b` itself, as [`Net::route`] was before hosts borrowed their
/// switch's distances: the oracle for `routes_through_a_sole_link_are_unchanged`.
fn route_by_own_search(net: &Net, a: NodeId, b: NodeId) -> Vec<LinkId> {
    let mut d = vec![u32::MAX; net.node_count()];
    let mut q = VecDeque::from([b]);
    d[b] = 0;
    while let Some(v) = q.pop_front() {
        for &l in &net.into[v] {
            let u = net.links[l as usize].from;
            if d[u] == u32::MAX {
                d[u] = d[v] + 1;
                q.push_back(u);
            }
        }
    }
    let mut path = Vec::new();
    if d[a] == u32::MAX {
        return path;
    }
    let mut at = a;
    while at != b {
        let next: Vec<LinkId> = net.out[at]
            .iter()
            .copied()
            .filter(|&l| d[net.links[l as usize].to] == d[at] - 1)
            .collect();
        let pick = next[(mix(a as u64, b as u64, path.len() as u64) % next.len() as u64) as usize];
        path.push(pick);
        at = net.links[pick as usize].to;
    }
    path
}

fn topology(src: &str) -> crate::sema::model::Topology {
    let mut files = crate::diag::SourceMap::new();
    let id = files.add("test.coll", src.to_string());
    let c = crate::sema::check(&mut files, id, &crate::sema::Options::default());
    assert!(c.diagnostics.is_empty(), "{:#?}", c.diagnostics);
    c.model.and_then(|m| m.topology).expect("a topology")
}

/// Every route, between every pair of nodes, is the one a search to the destination itself
/// gives: on a dragonfly (hosts on one link), a DGX box and a torus (no node has one link in),
/// and on hosts hanging off a switch and off a host, and a one-way link.
#[test]
fn routes_through_a_sole_link_are_unchanged() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources: Vec<String> = [
        "dragonfly_small.coll",
        "dgx_a100_2x8.coll",
        "torus_4x4.coll",
    ]
    .iter()
    .map(|f| std::fs::read_to_string(root.join("examples").join(f)).expect("example"))
    .collect();
    sources.push(
        "topology t { compute a; compute b; compute c; compute d; switch e; switch s; \
         link a <-> s : 1 GB/s; link b <-> s : 1 GB/s; link c <-> b : 1 GB/s; \
         link d <-> c : 1 GB/s; link s -> e : 1 GB/s; }
         collective allgather { size: 1024 B; dtype: f32; }
         schedule ring;"
            .to_string(),
    );
    let mut leaves_seen = Vec::new();
    for src in &sources {
        let net = Net::new(&topology(src));
        let n = net.node_count();
        let mut leaves = 0;
        for b in 0..n {
            leaves += usize::from(net.into[b].len() == 1);
            for a in 0..n {
                assert_eq!(
                    net.route(a, b),
                    route_by_own_search(&net, a, b),
                    "{a} -> {b}"
                );
            }
        }
        leaves_seen.push(leaves);
    }
    // The dragonfly's 40 hosts have one link in, and so do a, d and e of the last.
    assert_eq!(leaves_seen, vec![40, 0, 0, 3]);
}

#[test]
fn spread_flows_load_links_by_their_shares() {
    // Links 0 and 1 (4 each); a flow spread half and half, and a flow on link 0 alone: link 0
    // carries r / 2 + r, so both flows freeze there at r = 4 / 1.5.
    let r = fair_rates_spread(&[4.0, 4.0], &[&[(0, 0.5), (1, 0.5)], &[(0, 1.0)]]);
    let want = 4.0 / 1.5;
    assert!(
        (r[0] - want).abs() < 1e-12 && (r[1] - want).abs() < 1e-12,
        "{r:?}"
    );
    // With every share 1 it is `fair_rates`.
    let caps = [10.0, 4.0];
    assert_eq!(
        fair_rates_spread(&caps, &[&[(0, 1.0)], &[(0, 1.0), (1, 1.0)], &[(1, 1.0)]]),
        fair_rates(&caps, &[&[0], &[0, 1], &[1]])
    );
}

/// On a two-level fat tree a message between leaves splits evenly over the spines; within a
/// leaf it has one path; the shares out of the source and into the destination sum to 1, and
/// every link loaded is on some minimal path (its route's hop count).
#[test]
fn a_spread_route_splits_evenly_over_the_spines() {
    use num_rational::BigRational;
    let net = Net::new(&topology(
        "import fat_tree;\ntopology t = fat_tree(4, 4, 2, 25 GB/s, 25 GB/s);\n\
         collective allgather { size: 1 MiB; dtype: f32; }\nschedule ring;",
    ));
    let hosts: Vec<usize> = (0..net.node_count())
        .filter(|&v| net.into[v].len() == 1)
        .collect();
    assert_eq!(hosts.len(), 16, "{:?}", net.names);
    let (a, far, near) = (hosts[0], hosts[15], hosts[1]);
    let s = net.spread(a, far);
    let half = BigRational::new(1.into(), 2.into());
    let one = BigRational::from_integer(1.into());
    let out: BigRational = s
        .iter()
        .filter(|(l, _)| net.links[*l as usize].from == a)
        .map(|x| x.1.clone())
        .sum();
    let into: BigRational = s
        .iter()
        .filter(|(l, _)| net.links[*l as usize].to == far)
        .map(|x| x.1.clone())
        .sum();
    assert_eq!((out, into), (one.clone(), one.clone()));
    // Host, leaf, two spines, leaf, host: 2 single links and 4 halves.
    let halves = s.iter().filter(|x| x.1 == half).count();
    assert_eq!((s.len(), halves), (6, 4), "{s:?}");
    // Inside a leaf: the route itself.
    let inside: Vec<LinkId> = net.spread(a, near).iter().map(|x| x.0).collect();
    let mut route = net.route(a, near);
    route.sort_unstable();
    assert_eq!(inside, route);
    assert!(net.spread(a, a).is_empty());
}

#[test]
fn total_keys_order_as_total_cmp_and_give_the_same_bits_back() {
    let mut xs = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        5e-324,
        -5e-324,
        f64::MAX,
        f64::MIN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
        1.5e-6,
        1.5e-6 + 1e-21,
        12.5e9,
    ];
    let mut z = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..2000 {
        z ^= z << 13;
        z ^= z >> 7;
        z ^= z << 17;
        xs.push(f64::from_bits(z));
    }
    for &a in &xs {
        assert_eq!(Total::from_key(Total(a).key()).to_bits(), a.to_bits());
        for &b in xs.iter().take(40) {
            assert_eq!(
                Total(a).key().cmp(&Total(b).key()),
                a.total_cmp(&b),
                "{a} {b}"
            );
        }
    }
}

/// A flow filled alone (the short way) gets, bit for bit, the rate the progressive filling
/// gives it beside a second flow that shares none of its links: routes that cross a link more
/// than once, uneven shares summed in route order, bandwidths that tie.
#[test]
fn a_flow_alone_gets_the_fills_rate_bit_for_bit() {
    let mut z = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        z ^= z << 13;
        z ^= z >> 7;
        z ^= z << 17;
        z
    };
    // Links 0..12 for the flow, 12..24 for the other.
    let caps: Vec<f64> = (0..24)
        .map(|i| [12.5e9, 25e9, 300e9, 1e9 / 3.0][i % 4])
        .collect();
    let mut filler = Filler::default();
    for case in 0..2000 {
        let len = 1 + (next() % 40) as usize;
        let route: Vec<(LinkId, f64)> = (0..len)
            .map(|_| ((next() % 12) as LinkId, 1.0 / (1 + next() % 7) as f64))
            .collect();
        let other: Vec<(LinkId, f64)> = route.iter().map(|&(l, w)| (l + 12, w)).collect();
        for spread in [false, true] {
            let share = |w: f64| if spread { w } else { 1.0 };
            let alone = filler.fill(&caps, 1, |_| route.iter().map(|&(l, w)| (l, share(w))))[0];
            let beside = filler.fill(&caps, 2, |f| {
                let r = if f == 0 { &route } else { &other };
                r.iter().map(|&(l, w)| (l, share(w)))
            })[0];
            assert_eq!(
                alone.to_bits(),
                beside.to_bits(),
                "case {case}, spread {spread}"
            );
        }
    }
    assert!(filler.fill(&caps, 1, |_| std::iter::empty())[0].is_infinite());
}
