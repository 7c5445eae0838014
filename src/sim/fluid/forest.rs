//! A forest schedule on the network, tree by tree ([`run_forest`]): every tree is one fluid
//! flow over the physical links its edges' routes cross (a link once per crossing tree edge),
//! the flows share every link max-min fairly ([`crate::net::fair_rates`] on the merged links of
//! [`crate::net::Net`]), and whenever trees finish the rest share the freed bandwidth again
//! (progressive filling, event by event). A solved [`crate::forest::Tree`] of rate `m * y`
//! stands for `m` identical trees of the paper (one packing batch), so it is `m` flows on its
//! path: fair shares then give every tree of the paper at least the solver's `y`.
//!
//! A tree's time is the forest model's ([`crate::forest::chunking`]) with its simulated rate:
//! it moves its `D_t` bytes, and a node has everything once the last chunk has also crossed its
//! path ([`crate::forest::chunking::Reach::tail`] seconds per byte of the chunk) and that
//! path's latency (route latencies and the per-message overhead). The tree holds its share of
//! the links until its transfer is done; the drain and the latencies that follow hold nothing. Phases run one after the other (allreduce:
//! reduce-scatter, then allgather, from the moment the last rank has its reduced part).
//!
//! A sweep over sizes makes the trees' paths once ([`ForestPaths`]) and keeps the fills of
//! their rates by the set of trees still moving: only the bytes change with the size, and a
//! fill depends on nothing else.
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
use rustc_hash::FxHashMap as HashMap;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Trees whose transfers end within this share of the current time of the first to end are
/// taken as ending together (one recomputation of the rates for all of them).
const SAME_TIME: f64 = 1e-9;

/// One tree during the run.
struct Live {
    /// Its index among the model's trees (into [`ForestPaths`]).
    tree: u32,
    /// Bytes it moves.
    bytes: f64,
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
    let paths = ForestPaths::new(topo, net, params, &trees, forests);
    run_forest_in(&paths, &trees, c, forests, chunks, trace)
}

/// What the runs of one forest share at every size (only the trees' bytes and the chunk count
/// change with the size): each tree's links and copies, the links' bandwidths, and the fair
/// rates of the fills made so far, by the trees that shared the links (a fill depends on
/// nothing else, so a kept one is the very fill made again).
pub struct ForestPaths {
    caps: Vec<f64>,
    nodes: usize,
    /// Per tree of the model (as [`chunking::trees`] lists them): its phase and tree, the
    /// links its edges' routes cross (a link once per crossing tree edge), its copies.
    trees: Vec<(usize, usize)>,
    paths: Vec<Vec<LinkId>>,
    copies: Vec<usize>,
    /// Fair rates (per tree, its copies together) by the trees filled, and how many trees
    /// they are for in all (at most [`KEPT_FILLS`]).
    fills: std::sync::Mutex<(Fills, usize)>,
}

/// Fair rates by the trees filled.
type Fills = HashMap<Vec<u32>, Arc<[f64]>>;

/// How many trees' rates the fills a [`ForestPaths`] keeps may hold in all (a tree number
/// and a rate each, 12 MiB).
const KEPT_FILLS: usize = 1 << 20;

impl ForestPaths {
    /// The paths of `trees` (the model's trees of `forests`) on `net` (built from `topo`),
    /// with the links' bandwidths under `params`.
    pub fn new(
        topo: &Topology,
        net: &Net,
        params: &FlowParams,
        trees: &[TreeTime],
        forests: &[&Forest],
    ) -> ForestPaths {
        let link_of = edge_links(topo, net);
        let (paths, copies) = trees
            .iter()
            .map(|t| tree_path(&link_of, forests[t.phase], t))
            .unzip();
        ForestPaths {
            caps: params.caps(net),
            nodes: topo.graph.node_count(),
            trees: trees.iter().map(|t| (t.phase, t.tree)).collect(),
            paths,
            copies,
            fills: Default::default(),
        }
    }

    /// Whether these are `trees`' paths.
    fn of(&self, trees: &[TreeTime]) -> bool {
        self.trees.len() == trees.len()
            && self
                .trees
                .iter()
                .zip(trees)
                .all(|(&(p, i), t)| p == t.phase && i == t.tree)
    }

    /// The fair rates of the trees `active` (indices into the model's trees), each tree's
    /// copies summed: kept from an earlier fill of the same trees, else filled (and kept
    /// while the budget lasts).
    fn rates(&self, active: &[u32]) -> Arc<[f64]> {
        if let Some(r) = self
            .fills
            .lock()
            .ok()
            .and_then(|m| m.0.get(active).cloned())
        {
            return r;
        }
        // A tree of multiplicity m is m flows on one path; its rate is theirs together.
        let mut flows: Vec<&[LinkId]> = Vec::new();
        for &i in active {
            for _ in 0..self.copies[i as usize] {
                flows.push(self.paths[i as usize].as_slice());
            }
        }
        let shares = fair_rates(&self.caps, &flows);
        let mut at = 0;
        let rates: Arc<[f64]> = active
            .iter()
            .map(|&i| {
                let k = self.copies[i as usize];
                let r: f64 = shares[at..at + k].iter().sum();
                at += k;
                r
            })
            .collect();
        if let Ok(mut m) = self.fills.lock()
            && m.1 + active.len() <= KEPT_FILLS
        {
            m.1 += active.len();
            m.0.insert(active.to_vec(), rates.clone());
        }
        rates
    }
}

/// [`run_forest`] with the model's trees already made ([`chunking::trees`] with the
/// parameters' overhead, sized for `c` with [`chunking::resize`]) and their paths, for sweeps
/// over sizes. `paths` must be made from the same trees (at any size).
pub fn run_forest_in(
    paths: &ForestPaths,
    trees: &[TreeTime],
    c: &Collective,
    forests: &[&Forest],
    chunks: u64,
    trace: bool,
) -> FlowRun {
    assert!(paths.of(trees), "forest paths made for other trees");
    // Each node's rank (by node index), if it has one.
    let mut rank_of: Vec<Option<usize>> = vec![None; paths.nodes];
    for (r, &n) in c.ranks.iter().enumerate() {
        if let Some(x) = rank_of.get_mut(n) {
            *x = Some(r);
        }
    }
    // Bytes per link (None: no tree crossed it), summed tree by tree in path order.
    let mut link_bytes: Vec<Option<f64>> = vec![None; paths.caps.len()];
    let mut finish = vec![0.0f64; c.ranks.len()];
    let mut spans = trace.then(Vec::new);
    let mut messages = 0u64;
    let mut start = 0.0f64;
    let mut lane0 = 0u32;
    for (phase, f) in forests.iter().enumerate() {
        let mine: Vec<(usize, &TreeTime)> = trees
            .iter()
            .enumerate()
            .filter(|(_, t)| t.phase == phase)
            .collect();
        let mut live: Vec<Live> = mine
            .iter()
            .map(|&(i, t)| Live {
                tree: i as u32,
                bytes: t.bytes.to_f64().unwrap_or(0.0),
                done: 0.0,
            })
            .collect();
        for &(i, t) in &mine {
            let bytes = t.bytes.to_f64().unwrap_or(0.0);
            for &link in &paths.paths[i] {
                *link_bytes[link as usize].get_or_insert(0.0) += bytes;
            }
            messages += f.trees[t.tree].edges.len() as u64 * chunks;
        }
        let mine: Vec<&TreeTime> = mine.into_iter().map(|(_, t)| t).collect();
        let rates0 = flow_phase(paths, &mut live, start);
        let mut end = start;
        let mut lanes: BTreeMap<NodeId, u32> = BTreeMap::new();
        for ((t, l), r0) in mine.iter().zip(&live).zip(&rates0) {
            // The last chunk drains behind the transfer (`TreeTime::drain`).
            let chunk = l.bytes / chunks.max(1) as f64;
            let mut last = l.done;
            for ((reach, &latency), &tail) in t
                .reach
                .iter()
                .zip(t.reach_seconds.iter())
                .zip(t.reach_tail.iter())
            {
                let at = l.done + chunk * tail + latency;
                if let Some(&Some(r)) = rank_of.get(reach.node) {
                    finish[r] = finish[r].max(at);
                }
                last = last.max(at);
            }
            end = end.max(last);
            if let Some(s) = spans.as_mut() {
                let lane = lanes.entry(t.root).or_insert(0);
                s.push(span(
                    f.direction,
                    t,
                    *r0,
                    chunks,
                    start,
                    last,
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

/// The links of tree `t` of forest `f` (one entry per crossing tree edge) and the copies of
/// the paper's trees it stands for.
fn tree_path(link_of: &[Option<LinkId>], f: &Forest, t: &TreeTime) -> (Vec<LinkId>, usize) {
    let mut path = Vec::new();
    for e in &f.trees[t.tree].edges {
        path.extend(
            e.route
                .iter()
                .filter_map(|&g| link_of.get(g).copied().flatten()),
        );
    }
    // One tree of the paper carries y = 1 / (k * inv_rate); a batch of m carries m * y.
    let one = &f.inv_rate * BigRational::from_integer(f.k.into());
    let copies = (&t.rate * one).round().to_integer().to_usize().unwrap_or(1);
    (path, copies.clamp(1, 1 << 16))
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
/// trees end. Fills each tree's `done`; returns the first rates.
fn flow_phase(paths: &ForestPaths, live: &mut [Live], start: f64) -> Vec<f64> {
    let n = live.len();
    let mut moved = vec![0.0f64; n];
    let mut active: Vec<usize> = (0..n).filter(|&i| live[i].bytes > 0.0).collect();
    for l in live.iter_mut().filter(|l| l.bytes <= 0.0) {
        l.done = start;
    }
    let mut first = vec![0.0f64; n];
    let mut now = start;
    let mut round = 0;
    while !active.is_empty() {
        let trees: Vec<u32> = active.iter().map(|&i| live[i].tree).collect();
        let rates = paths.rates(&trees);
        if round == 0 {
            for (k, &i) in active.iter().enumerate() {
                first[i] = rates[k];
            }
        }
        round += 1;
        // Seconds until each transfer ends at these rates; the next to end.
        let left: Vec<f64> = active
            .iter()
            .zip(rates.iter())
            .map(|(&i, &r)| {
                let total = live[i].bytes;
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
            if ends {
                l.done = now + step;
                moved[i] = l.bytes;
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
    end: f64,
    lane: u32,
    rank_of: &[Option<usize>],
) -> LaneSpan {
    let root = rank_of.get(t.root).copied().flatten().unwrap_or(0) as u32;
    let what = match dir {
        Direction::Out => "out-tree",
        Direction::In => "in-tree",
    };
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
