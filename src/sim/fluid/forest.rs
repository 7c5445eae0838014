//! A forest schedule on the network, tree by tree ([`run_forest`]): every tree is one fluid
//! flow over the physical links its edges' routes cross (a link once per crossing tree edge),
//! the flows share every link max-min fairly ([`crate::net::fair_rates`] on the merged links of
//! [`crate::net::Net`]), and whenever trees finish the rest share the freed bandwidth again
//! (progressive filling, event by event). A solved [`crate::forest::Tree`] of rate `m * y`
//! stands for `m` identical trees of the paper (one packing batch), so it is `m` flows on its
//! path: fair shares then give every tree of the paper at least the solver's `y`.
//!
//! A tree's time is the forest model's ([`crate::forest::chunking`]) with its simulated rate:
//! it moves `D_t * (c + h - 1) / c` bytes' worth of transfer before a node `h` hops from the
//! source has everything, plus that node's path latency (route latencies and the per-message
//! overhead). The tree holds its share of the links until its deepest node's transfer is done;
//! the latencies that follow hold nothing. Phases run one after the other (allreduce:
//! reduce-scatter, then allgather, from the moment the last rank has its reduced part).
//!
//! The run reports per rank when it has received all of every tree that reaches it (for an
//! in-tree, the data of its subtree; the root, the reduced whole), the bytes every link carried,
//! `tree edges x chunks` messages, and, for `--trace`, one span per tree on its root's row
//! (lane: the tree's place among its root's trees, phase after phase) from the phase's start to
//! the tree's finish.

use super::{FlowRun, LaneSpan};
use crate::forest::chunking::{self, TreeTime};
use crate::forest::{Direction, Forest};
use crate::net::{FlowParams, LinkId, Net, fair_rates};
use crate::sema::model::{Collective, NodeId, Topology};
use num_rational::BigRational;
use num_traits::ToPrimitive;
use serde_json::json;
use std::collections::BTreeMap;

/// Trees whose transfers end within this share of the current time of the first to end are
/// taken as ending together (one recomputation of the rates for all of them).
const SAME_TIME: f64 = 1e-9;

/// One tree during the run.
struct Live {
    path: Vec<LinkId>,
    /// The paper's trees this one stands for: its rate over the forest's rate of one tree.
    copies: usize,
    /// Transfer (bytes' worth) until each distinct hop count has everything, ascending.
    marks: Vec<(u64, f64)>,
    /// When each mark was reached.
    reached: Vec<f64>,
    /// When the transfer ended (the tree's links free again).
    done: f64,
}

/// Simulates `forests` (as `lower::forest::needs` lists them) carrying collective `c` in
/// `chunks` pipelined chunks on `net` (built from `topo`), per-message overhead from `params`.
pub fn run_forest(
    topo: &Topology,
    net: &Net,
    params: &FlowParams,
    c: &Collective,
    forests: &[&Forest],
    chunks: u64,
    trace: bool,
) -> FlowRun {
    let trees = chunking::trees(topo, params, &chunking::per_root(c), forests);
    run_forest_in(topo, net, params, &trees, c, forests, chunks, trace)
}

/// [`run_forest`] with the model's trees already made ([`chunking::trees`] with the
/// parameters' overhead, sized for `c` with [`chunking::resize`]), for sweeps over sizes.
#[allow(clippy::too_many_arguments)]
pub fn run_forest_in(
    topo: &Topology,
    net: &Net,
    params: &FlowParams,
    trees: &[TreeTime],
    c: &Collective,
    forests: &[&Forest],
    chunks: u64,
    trace: bool,
) -> FlowRun {
    let link_of = edge_links(topo, net);
    // Each node's rank (by node index), if it has one.
    let mut rank_of: Vec<Option<usize>> = vec![None; topo.graph.node_count()];
    for (r, &n) in c.ranks.iter().enumerate() {
        if let Some(x) = rank_of.get_mut(n) {
            *x = Some(r);
        }
    }
    let caps = params.caps(net);
    // Bytes per link (None: no tree crossed it), summed tree by tree in path order.
    let mut link_bytes: Vec<Option<f64>> = vec![None; net.links.len()];
    let mut finish = vec![0.0f64; c.ranks.len()];
    let mut spans = trace.then(Vec::new);
    let mut messages = 0u64;
    let mut start = 0.0f64;
    let mut lane0 = 0u32;
    for (phase, f) in forests.iter().enumerate() {
        let mine: Vec<&TreeTime> = trees.iter().filter(|t| t.phase == phase).collect();
        let mut live: Vec<Live> = mine
            .iter()
            .map(|t| live_tree(&link_of, f, t, chunks))
            .collect();
        for (t, l) in mine.iter().zip(&live) {
            let bytes = t.bytes.to_f64().unwrap_or(0.0);
            for &link in &l.path {
                *link_bytes[link as usize].get_or_insert(0.0) += bytes;
            }
            messages += f.trees[t.tree].edges.len() as u64 * chunks;
        }
        let rates0 = flow_phase(&caps, &mut live, start);
        let mut end = start;
        let mut lanes: BTreeMap<NodeId, u32> = BTreeMap::new();
        for ((t, l), r0) in mine.iter().zip(&live).zip(&rates0) {
            for (reach, &latency) in t.reach.iter().zip(t.reach_seconds.iter()) {
                let i = l.marks.partition_point(|m| m.0 < reach.hops);
                let at = l.reached.get(i).copied().unwrap_or(l.done) + latency;
                if let Some(&Some(r)) = rank_of.get(reach.node) {
                    finish[r] = finish[r].max(at);
                }
                end = end.max(at);
            }
            if let Some(s) = spans.as_mut() {
                let lane = lanes.entry(t.root).or_insert(0);
                s.push(span(
                    f.direction,
                    t,
                    *r0,
                    chunks,
                    start,
                    l.done,
                    lane0 + *lane,
                    &rank_of,
                ));
                *lane += 1;
            }
        }
        lane0 += lanes.values().copied().max().unwrap_or(0);
        start = end;
    }
    FlowRun {
        finish,
        link_bytes: super::outcome::loaded(link_bytes),
        messages,
        spans,
    }
}

/// The flow of tree `t`: its links, one entry per crossing tree edge, and its marks.
fn live_tree(link_of: &[Option<LinkId>], f: &Forest, t: &TreeTime, chunks: u64) -> Live {
    let mut path = Vec::new();
    for e in &f.trees[t.tree].edges {
        path.extend(
            e.route
                .iter()
                .filter_map(|&g| link_of.get(g).copied().flatten()),
        );
    }
    let mut hops: Vec<u64> = t.reach.iter().map(|r| r.hops).collect();
    hops.sort_unstable();
    hops.dedup();
    let bytes = t.bytes.to_f64().unwrap_or(0.0);
    let marks: Vec<(u64, f64)> = hops
        .into_iter()
        .map(|h| {
            // `chunking::pipeline` in f64: both counts are exact and IEEE division rounds
            // correctly, so this is the rational's nearest f64 without big integers.
            let c = chunks.max(1);
            let share = (c + h.max(1) - 1) as f64 / c as f64;
            (h, bytes * share)
        })
        .collect();
    // One tree of the paper carries y = 1 / (k * inv_rate); a batch of m carries m * y.
    let one = &f.inv_rate * BigRational::from_integer(f.k.into());
    let copies = (&t.rate * one).round().to_integer().to_usize().unwrap_or(1);
    Live {
        path,
        copies: copies.clamp(1, 1 << 16),
        marks,
        reached: Vec::new(),
        done: 0.0,
    }
}

/// The merged network link of every edge of `topo` (by edge index; None for an edge the
/// network does not hold): what a tree edge's route, a list of topology edges, crosses.
fn edge_links(topo: &Topology, net: &Net) -> Vec<Option<LinkId>> {
    let link_of: BTreeMap<(NodeId, NodeId), LinkId> = net
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| ((l.from, l.to), i as LinkId))
        .collect();
    topo.graph
        .edge_indices()
        .map(|e| {
            let (a, b) = topo.graph.edge_endpoints(e)?;
            link_of.get(&(a.index(), b.index())).copied()
        })
        .collect()
}

/// Runs one phase from `start`: every tree's transfer at max-min fair rates, recomputed when
/// trees end. Fills each tree's `reached` and `done`; returns the first rates.
fn flow_phase(caps: &[f64], live: &mut [Live], start: f64) -> Vec<f64> {
    let n = live.len();
    let mut moved = vec![0.0f64; n];
    let mut active: Vec<usize> = (0..n).filter(|&i| !live[i].marks.is_empty()).collect();
    for l in live.iter_mut().filter(|l| l.marks.is_empty()) {
        l.done = start;
    }
    let mut first = vec![0.0f64; n];
    let mut now = start;
    let mut round = 0;
    while !active.is_empty() {
        // A tree of multiplicity m is m flows on one path; its rate is theirs together.
        let mut paths: Vec<&[LinkId]> = Vec::new();
        for &i in &active {
            for _ in 0..live[i].copies {
                paths.push(live[i].path.as_slice());
            }
        }
        let shares = fair_rates(caps, &paths);
        let mut at = 0;
        let rates: Vec<f64> = active
            .iter()
            .map(|&i| {
                let k = live[i].copies;
                let r: f64 = shares[at..at + k].iter().sum();
                at += k;
                r
            })
            .collect();
        if round == 0 {
            for (k, &i) in active.iter().enumerate() {
                first[i] = rates[k];
            }
        }
        round += 1;
        // Seconds until each transfer ends at these rates; the next to end.
        let left: Vec<f64> = active
            .iter()
            .zip(&rates)
            .map(|(&i, &r)| {
                let total = live[i].marks.last().map_or(0.0, |m| m.1);
                if r.is_infinite() {
                    0.0
                } else if r > 0.0 {
                    (total - moved[i]).max(0.0) / r
                } else {
                    f64::INFINITY
                }
            })
            .collect();
        let dt = left.iter().copied().fold(f64::INFINITY, f64::min);
        if !dt.is_finite() {
            // Nothing can move (no capacity): the rest never finish.
            for &i in &active {
                live[i].done = f64::INFINITY;
            }
            break;
        }
        let horizon = dt + SAME_TIME * (now + dt);
        let mut still = Vec::with_capacity(active.len());
        for (k, &i) in active.iter().enumerate() {
            let r = rates[k];
            let ends = left[k] <= horizon;
            let step = if ends { left[k] } else { dt };
            let l = &mut live[i];
            // Marks crossed during this step.
            while l.reached.len() < l.marks.len() {
                let mark = l.marks[l.reached.len()].1;
                let need = (mark - moved[i]).max(0.0);
                let at = if r.is_infinite() || need == 0.0 {
                    0.0
                } else {
                    need / r
                };
                if at <= step || ends && l.reached.len() + 1 == l.marks.len() {
                    l.reached.push(now + at.min(step));
                } else {
                    break;
                }
            }
            if ends {
                l.done = now + step;
                moved[i] = l.marks.last().map_or(0.0, |m| m.1);
            } else {
                moved[i] += if r.is_infinite() { 0.0 } else { r * dt };
                still.push(i);
            }
        }
        now += dt;
        active = still;
    }
    first
}

/// The timeline span of one tree.
#[allow(clippy::too_many_arguments)]
fn span(
    dir: Direction,
    t: &TreeTime,
    rate: f64,
    chunks: u64,
    start: f64,
    done: f64,
    lane: u32,
    rank_of: &[Option<usize>],
) -> LaneSpan {
    let root = rank_of.get(t.root).copied().flatten().unwrap_or(0) as u32;
    let what = match dir {
        Direction::Out => "out-tree",
        Direction::In => "in-tree",
    };
    let end = done + t.latency().to_f64().unwrap_or(0.0);
    LaneSpan {
        pid: root,
        lane,
        name: format!("{what} {} of rank {root}", t.tree),
        start,
        end,
        args: vec![
            ("bytes".into(), json!(t.bytes.to_f64().unwrap_or(0.0))),
            ("chunks".into(), json!(chunks)),
            ("depth".into(), json!(t.depth)),
            ("first_rate_gbs".into(), json!(rate / 1e9)),
            (
                "solver_rate_gbs".into(),
                json!(t.rate.to_f64().unwrap_or(0.0) / 1e9),
            ),
        ],
    }
}
