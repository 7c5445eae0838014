//! The ForestColl report (`collc build --emit report`): what a solved forest promises and what
//! ring could do on the same topology, in exact rationals.
//!
//! Forest figures (../shared/seeds/forestcoll.txt, Sections 3.1 and 4.6): an allgather where
//! every rank holds `M/N` bytes takes `(M/N) * inv_rate`, so its algorithmic bandwidth is
//! `M / T = N / inv_rate`; reduce-scatter likewise with the in-trees; allreduce is both in a row,
//! `N / (inv_rate_in + inv_rate_out)`. The optimum (`Forest::optimum`, any k) is shown beside the
//! forest's own figure when `k` was fixed below the optimal one.
//!
//! Ring figures follow the paper's A100 analysis (Section 5.3): whatever order a ring visits the
//! ranks in, every cut S that separates ranks is crossed by at least one ring edge in each
//! direction, and each ring edge carries `(N-1)/N * M` bytes in an allgather. So a ring allgather
//! takes at least `(N-1)/N * M / lambda`, where `lambda` is the least bandwidth B+(S) of such a
//! cut; the best ring embedding (a ring that crosses the weakest cut once, spread over all its
//! links, as multi-channel rings do) attains it. Reduce-scatter is the same (every node's ingress
//! equals its egress, so B-(S) = B+(S) for every S), allreduce twice. On two DGX A100 boxes
//! `lambda` is one box's 8 x 25 GB/s of InfiniBand and the ring bound is 16/15 * 200 =
//! 213.33 GB/s. `lambda` is a minimum of maxflows: fixing rank `c0`, every separating cut either
//! holds `c0` and misses some rank `v` (so it bounds the flow `c0 -> v`) or the reverse, hence
//! `lambda = min over v of min(F(c0, v), F(v, c0))`; the cut is read off the last residual graph.

use super::Forest;
use super::flow::{FlowNet, INF};
use crate::diag::{Code, Diagnostic, Span};
use crate::sema::model::{AutoOr, Collective, CollectiveKind, Family, Model, NodeId, Topology};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive, Zero};
use petgraph::visit::EdgeRef;
use std::collections::VecDeque;

/// The weakest cut that separates ranks: the ring bound's `lambda`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingCut {
    /// B+(S), bytes per second.
    pub bandwidth: BigRational,
    /// S, ascending.
    pub nodes: Vec<NodeId>,
}

/// The topology's links as an integer flow network: every bandwidth divided by the greatest
/// common divisor of all of them (the returned unit, bytes per second), when each quotient is
/// at most 2^40 and their sum stays below the flow network's infinity; `None` otherwise.
fn integer_net(topo: &Topology) -> Option<(FlowNet, BigRational)> {
    let edges: Vec<_> = topo
        .graph
        .edge_references()
        .filter(|e| e.weight().bandwidth.is_positive() && e.source() != e.target())
        .collect();
    let u = crate::ratio::in_units(edges.iter().map(|e| &e.weight().bandwidth));
    let mut net = FlowNet::new(topo.nodes.len());
    let mut total = 0i64;
    for (e, c) in edges.iter().zip(&u.counts) {
        let c = c.to_i64().filter(|c| *c <= 1 << 40)?;
        total = total.checked_add(c).filter(|t| *t < INF)?;
        net.add_arc(e.source().index(), e.target().index(), c);
    }
    Some((net, u.unit))
}

/// Max flow from `s` to `t` over the topology's edges (Edmonds-Karp, exact), and the source
/// side of a minimum cut.
fn max_flow(topo: &Topology, s: NodeId, t: NodeId) -> (BigRational, Vec<bool>) {
    let n = topo.nodes.len();
    // Residual arcs in pairs: arc 2i is edge i forward, 2i+1 its reverse.
    let mut head = Vec::new();
    let mut cap: Vec<BigRational> = Vec::new();
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for e in topo.graph.edge_references() {
        let (a, b) = (e.source().index(), e.target().index());
        adj[a].push(head.len());
        head.push(b);
        cap.push(e.weight().bandwidth.clone());
        adj[b].push(head.len());
        head.push(a);
        cap.push(BigRational::zero());
    }
    let mut flow = BigRational::zero();
    loop {
        let mut via = vec![usize::MAX; n];
        let mut seen = vec![false; n];
        seen[s] = true;
        let mut queue = VecDeque::from([s]);
        while let Some(u) = queue.pop_front() {
            for &a in &adj[u] {
                let v = head[a];
                if !seen[v] && cap[a].is_positive() {
                    seen[v] = true;
                    via[v] = a;
                    queue.push_back(v);
                }
            }
        }
        if !seen[t] {
            return (flow, seen);
        }
        let mut push: Option<BigRational> = None;
        let mut v = t;
        while v != s {
            let a = via[v];
            push = Some(match push {
                Some(p) if p <= cap[a] => p,
                _ => cap[a].clone(),
            });
            v = head[a ^ 1];
        }
        let push = push.unwrap_or_default();
        let mut v = t;
        while v != s {
            let a = via[v];
            cap[a] -= &push;
            cap[a ^ 1] += &push;
            v = head[a ^ 1];
        }
        flow += push;
    }
}

/// The weakest cut separating `ranks` (see the module doc); `None` for fewer than two ranks.
/// When the bandwidths scale to small enough integers the flows run on integer capacities
/// (Dinic's, [`FlowNet`]), each stopping once it reaches the weakest cut found so far (it
/// cannot be weaker then); otherwise on exact rationals (Edmonds-Karp), each to its end. Both
/// give the same cut: the first weakest in the order `c0 -> v`, `v -> c0` over `v`, and its
/// smallest source side.
pub fn ring_cut(topo: &Topology, ranks: &[NodeId]) -> Option<RingCut> {
    let (&c0, rest) = ranks.split_first()?;
    if let Some((mut net, unit)) = integer_net(topo) {
        let mut best: Option<(i64, Vec<bool>)> = None;
        for &v in rest {
            for (s, t) in [(c0, v), (v, c0)] {
                let limit = best.as_ref().map_or(INF, |b| b.0);
                let f = net.max_flow(s, t, limit);
                if f < limit {
                    best = Some((f, net.source_side(s)));
                }
            }
        }
        return best.map(|(f, side)| RingCut {
            bandwidth: BigRational::from_integer(f.into()) * unit,
            nodes: (0..side.len()).filter(|&i| side[i]).collect(),
        });
    }
    ring_cut_exact(topo, c0, rest)
}

/// [`ring_cut`] on exact rationals, one Edmonds-Karp flow per direction and rank.
fn ring_cut_exact(topo: &Topology, c0: NodeId, rest: &[NodeId]) -> Option<RingCut> {
    let mut best: Option<RingCut> = None;
    for &v in rest {
        for (s, t) in [(c0, v), (v, c0)] {
            let (f, side) = max_flow(topo, s, t);
            if best.as_ref().is_none_or(|b| f < b.bandwidth) {
                let nodes = (0..side.len()).filter(|&i| side[i]).collect();
                best = Some(RingCut {
                    bandwidth: f,
                    nodes,
                });
            }
        }
    }
    best
}

/// Algorithmic bandwidths, bytes per second; `None` where undefined (one rank).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Figures {
    pub allgather: Option<BigRational>,
    pub reduce_scatter: Option<BigRational>,
    pub allreduce: Option<BigRational>,
}

/// The forest figures for per-root times `ag` (out-trees) and `rs` (in-trees), seconds per byte.
pub fn forest_figures(n: usize, ag: &BigRational, rs: &BigRational) -> Figures {
    let n = BigRational::from_integer(n.into());
    let div = |x: &BigRational| (!x.is_zero()).then(|| &n / x);
    Figures {
        allgather: div(ag),
        reduce_scatter: div(rs),
        allreduce: div(&(ag + rs)),
    }
}

/// The ring bound for `n` ranks over a weakest cut of `lambda` bytes per second.
pub fn ring_figures(n: usize, lambda: &BigRational) -> Figures {
    if n < 2 {
        return Figures {
            allgather: None,
            reduce_scatter: None,
            allreduce: None,
        };
    }
    let one_way = lambda * BigRational::new(n.into(), (n - 1).into());
    Figures {
        allgather: Some(one_way.clone()),
        reduce_scatter: Some(one_way.clone()),
        allreduce: Some(one_way / BigRational::from_integer(2.into())),
    }
}

/// `r` bytes per second in GB/s with two decimals, and the exact value when that rounds.
pub fn gbs(r: &BigRational) -> String {
    let g = r / BigRational::from_integer(1_000_000_000.into());
    let hundredths = (&g * BigRational::from_integer(100.into()))
        .round()
        .to_integer();
    let whole = &hundredths / BigInt::from(100);
    let frac = (&hundredths % BigInt::from(100)).abs();
    let shown = format!("{whole}.{frac:02} GB/s");
    let exact = BigRational::new(hundredths, BigInt::from(100)) == g;
    if exact {
        shown
    } else {
        format!("{shown} (exactly {} GB/s)", g)
    }
}

/// Names of a node set: listed when short, else by what it leaves out.
fn names(topo: &Topology, nodes: &[NodeId]) -> String {
    let list = |ids: &[NodeId]| {
        let shown: Vec<&str> = ids
            .iter()
            .take(12)
            .map(|&i| topo.nodes[i].name.as_str())
            .collect();
        let more = if ids.len() > 12 {
            format!(", ... ({} in all)", ids.len())
        } else {
            String::new()
        };
        format!("{}{more}", shown.join(", "))
    };
    let rest: Vec<NodeId> = (0..topo.nodes.len())
        .filter(|i| nodes.binary_search(i).is_err())
        .collect();
    if rest.len() < nodes.len() {
        format!("every node except {}", list(&rest))
    } else {
        list(nodes)
    }
}

fn row(name: &str, cells: [Option<&BigRational>; 3]) -> String {
    let cell = |c: Option<&BigRational>| c.map(gbs).unwrap_or_else(|| "-".into());
    let [a, b, c] = cells;
    format!("  {name:<15} {:<36} {:<36} {}\n", cell(a), cell(b), cell(c))
}

/// The report for the allgather out-forest `ag` and the reduce-scatter in-forest `rs` of one
/// topology (both over the same ranks).
pub fn text(topo: &Topology, ag: &Forest, rs: &Forest) -> String {
    let n = ag.ranks.len();
    let mut out = format!(
        "ForestColl on `{}`: {n} ranks, {} nodes, {} directed links\n",
        topo.name,
        topo.nodes.len(),
        topo.edge_count()
    );
    for (what, f) in [("allgather out-trees", ag), ("reduce-scatter in-trees", rs)] {
        let k = BigRational::from_integer(f.k.into());
        let y = if f.inv_rate.is_zero() {
            BigRational::zero()
        } else {
            (&f.inv_rate * &k).recip()
        };
        out.push_str(&format!("{what}:\n"));
        let c = &f.bottleneck;
        out.push_str(&format!(
            "  optimum x* = {} per rank (1/x* = |S ∩ Vc| / B+(S) = {} / {})\n",
            if f.optimum.is_zero() {
                "-".to_string()
            } else {
                gbs(&f.optimum.recip())
            },
            c.compute,
            gbs(&c.bandwidth)
        ));
        out.push_str(&format!("  bottleneck cut S: {}\n", names(topo, &c.nodes)));
        out.push_str(&format!(
            "  k = {} tree{} per rank at y = {} each; {} trees in {} batches\n",
            f.k,
            if f.k == 1 { "" } else { "s" },
            gbs(&y),
            f.k * n as u64,
            f.trees.len()
        ));
        if f.inv_rate != f.optimum {
            out.push_str(&format!(
                "  with this k: {} per rank ({:.2}% of the optimum)\n",
                gbs(&f.inv_rate.recip()),
                ratio(&f.optimum, &f.inv_rate)
            ));
        }
    }
    let forest = forest_figures(n, &ag.inv_rate, &rs.inv_rate);
    let best = forest_figures(n, &ag.optimum, &rs.optimum);
    let cut = ring_cut(topo, &ag.ranks);
    let zero = BigRational::zero();
    let ring = ring_figures(n, cut.as_ref().map_or(&zero, |c| &c.bandwidth));
    out.push_str("theoretical algorithmic bandwidth (data size / time):\n");
    out.push_str(&format!(
        "  {:<15} {:<36} {:<36} {}\n",
        "collective", "forest (this k)", "forest (optimal k)", "ring (best embedding)"
    ));
    for (name, f, b, r) in [
        (
            "allgather",
            &forest.allgather,
            &best.allgather,
            &ring.allgather,
        ),
        (
            "reduce_scatter",
            &forest.reduce_scatter,
            &best.reduce_scatter,
            &ring.reduce_scatter,
        ),
        (
            "allreduce",
            &forest.allreduce,
            &best.allreduce,
            &ring.allreduce,
        ),
    ] {
        out.push_str(&row(name, [f.as_ref(), b.as_ref(), r.as_ref()]));
    }
    if let (Some(c), Some(f), Some(r)) = (&cut, &forest.allgather, &ring.allgather) {
        out.push_str(&format!(
            "ring bound: every ring crosses the cut {{{}}} ({} leaving) at least once each way\n",
            names(topo, &c.nodes),
            gbs(&c.bandwidth)
        ));
        if !r.is_zero() {
            out.push_str(&format!(
                "forest over ring: {:.2}x for allgather\n",
                ratio(f, r) / 100.0
            ));
        }
    }
    out
}

/// The report for a checked model (what `collc build --emit report` prints): its topology's
/// allgather and reduce-scatter forests over the collective's ranks, with the schedule's `k` when
/// it is a `forest` schedule and `k: auto` otherwise; then the chunk count the collective runs
/// with at its size and what it reaches ([`super::chunking`]). With the E0045 warning when a
/// fixed `chunks` loses much.
pub fn for_model(m: &Model) -> Result<(String, Vec<Diagnostic>), Vec<Diagnostic>> {
    let (Some(c), Some(topo)) = (m.collective.as_ref(), m.topology.as_ref()) else {
        return Err(vec![
            Diagnostic::error(
                Code::MissingDeclaration,
                m.topology.as_ref().map_or(Span::default(), |t| t.span),
                "the report needs a topology and a collective",
            )
            .label("nothing to report on")
            .help("declare both, e.g. `collective allgather { size: 64 MiB; }`"),
        ]);
    };
    let span = m.schedule.as_ref().map_or(c.span, |s| s.span);
    let (k, chunks) = match m.schedule.as_ref().map(|s| &s.family) {
        Some(Family::Forest { k, chunks }) => (*k, *chunks),
        _ => (AutoOr::Auto, AutoOr::Auto),
    };
    // Allreduce needs exactly the two forests: reduce-scatter in-trees, then allgather out-trees.
    let both = Collective {
        kind: CollectiveKind::Allreduce,
        root: None,
        ..c.clone()
    };
    let f = crate::lower::forest::solve(m, &both, k, span)?;
    let [rs, ag] = f.as_slice() else {
        return Err(vec![
            Diagnostic::error(
                Code::ForestUnschedulable,
                span,
                "the solver did not return the reduce-scatter and allgather forests",
            )
            .label("here")
            .help("try `k: 1;`")
            .note("this is a bug in collc; please report it with this file"),
        ]);
    };
    let mut out = text(topo, ag, rs);
    // The forests the collective itself runs on.
    let single;
    let mine: Vec<&Forest> = match c.kind {
        CollectiveKind::Allgather => vec![ag],
        CollectiveKind::ReduceScatter => vec![rs],
        CollectiveKind::Allreduce => vec![rs, ag],
        CollectiveKind::Barrier | CollectiveKind::Alltoall => return Ok((out, Vec::new())),
        CollectiveKind::Broadcast | CollectiveKind::Reduce => {
            single = crate::lower::forest::solve(m, c, k, span)?;
            single.iter().collect()
        }
    };
    let params = crate::net::for_file(m, None);
    let ch = super::chunking::choose(topo, &params, c, chunks, &mine);
    let per_root = super::chunking::per_root(c);
    let depth = super::chunking::trees(topo, &params, &per_root, &mine)
        .iter()
        .map(|t| t.depth)
        .max()
        .unwrap_or(0);
    for l in ch.describe(c, depth, &params) {
        out.push_str(&l);
        out.push('\n');
    }
    let at = m.schedule.as_ref().map_or(span, |s| s.prop_span("chunks"));
    let warnings = crate::lower::forest::chunk_warning(c, &ch, at)
        .into_iter()
        .collect();
    Ok((out, warnings))
}

/// `a / b` in percent, for display.
fn ratio(a: &BigRational, b: &BigRational) -> f64 {
    if b.is_zero() {
        return 0.0;
    }
    (a / b * BigRational::from_integer(100.into()))
        .to_f64()
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On random networks of hosts and switches, one-way and two-way links and uneven
    /// bandwidths (some fractional), the integer flows with early stops find the exact
    /// rational search's cut, bandwidth and source side alike.
    #[test]
    fn integer_ring_cut_is_the_exact_one() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let mut connected = 0;
        for case in 0..60 {
            let (hosts, switches) = (2 + next(6), next(3));
            let mut text = format!("topology t {{ compute h[{hosts}];");
            if switches > 0 {
                text += &format!(" switch s[{switches}];");
            }
            let nodes = hosts + switches;
            let name = |i: u64| {
                if i < hosts {
                    format!("h[{i}]")
                } else {
                    format!("s[{}]", i - hosts)
                }
            };
            for a in 0..nodes {
                for b in a + 1..nodes {
                    if next(3) == 0 {
                        continue;
                    }
                    let arrow = ["<->", "->"][next(2) as usize];
                    let bw = ["25 GB/s", "12.5 GB/s", "100 GB/s", "1.25 GB/s", "7 GB/s"]
                        [next(5) as usize];
                    text += &format!(" link {} {arrow} {} : {bw};", name(a), name(b));
                }
            }
            text += " }";
            let mut files = crate::diag::SourceMap::new();
            let id = files.add("t.coll", text.clone());
            let Some(m) =
                crate::sema::check(&mut files, id, &crate::sema::Options::default()).model
            else {
                panic!("case {case} does not check: {text}");
            };
            let Some(topo) = m.topology.as_ref() else {
                panic!("case {case}: no topology");
            };
            let ranks: Vec<NodeId> = topo.compute_nodes().collect();
            assert!(integer_net(topo).is_some(), "case {case}");
            let cut = ring_cut(topo, &ranks);
            assert_eq!(
                cut,
                ring_cut_exact(topo, ranks[0], &ranks[1..]),
                "case {case}: {text}"
            );
            connected += usize::from(cut.is_some_and(|c| c.bandwidth.is_positive()));
        }
        assert!(
            connected >= 20,
            "only {connected} cases with a positive cut"
        );
    }

    #[test]
    fn gbs_rounds_and_shows_exact_values() {
        let q = |n: i64, d: i64| BigRational::new(n.into(), d.into());
        assert_eq!(gbs(&q(200_000_000_000, 1)), "200.00 GB/s");
        assert_eq!(
            gbs(&q(1_040_000_000_000, 3)),
            "346.67 GB/s (exactly 1040/3 GB/s)"
        );
        assert_eq!(gbs(&q(1, 1)), "0.00 GB/s (exactly 1/1000000000 GB/s)");
    }
}
