//! Static in-network reduction trees: the baseline the Canary paper measures itself against
//! (../shared/seeds/canary.txt, Section 5.2): one tree, as SHARP, SwitchML and ATP use, or N
//! trees with the data's blocks assigned to them round robin, as PANAMA does. Switches are
//! processes of the program ([`crate::ir::ProcKind::Switch`]) that aggregate a block from their
//! tree children and forward the partial result to their parent; the root multicasts the result
//! down the same tree.
//!
//! **Trees.** A tree is rooted at a switch. Roots are named (`roots: [spine[0], spine[1]]`) or
//! drawn by `seed` among the most central switches: those whose largest hop distance (through
//! switches) to a switch next to a participant is smallest, which in a two-level fat tree are
//! the spines. From its root a tree is a breadth-first tree over switch-to-switch links (where a
//! switch has several parents at the same distance, a fixed hash of the tree and the switch
//! picks one, spreading trees over links); each participant hangs from its neighbouring switch
//! nearest the root; switches with no participant below them are pruned. Only links present in
//! both directions are used, since the result travels back down the same links.
//!
//! **Blocks.** The data is cut into `trees` blocks (fewer when there are fewer elements), block
//! `b` on tree `b mod trees`, each block one chunk: the paper's per-packet round robin at the
//! granularity of the IR. How a block is cut into packets, and switches forwarding packet by
//! packet, is the packet simulator's business (src/sim/packet).
//!
//! **Collectives.** Allreduce: every participant sends its block towards the root, each switch
//! receives it from its children in a fixed order (the first overwrites its scratch slot, the
//! others reduce into it), sends the partial sum to its parent, then receives the result from it
//! and sends it to its children; the root switch sends the result down at once. So every rank
//! gets the same combination, bit for bit. Reduce and broadcast orient the same tree towards the
//! collective's root rank instead: data flows along the tree to it (reduce) or away from it
//! (broadcast), through the root switch like any other.

use super::builder::Builder;
use crate::diag::{Code, Diagnostic, Span};
use crate::ir::{Buf, ProcId, Program, Slice};
use crate::sema::model::{Collective, CollectiveKind, NodeId, NodeKind, Topology, TreeRoots};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Lowers `c` on `topo` with `trees` static trees rooted as `roots` says.
pub(super) fn lower(
    topo: &Topology,
    c: &Collective,
    trees: u64,
    roots: &TreeRoots,
    span: Span,
) -> Result<Program, Vec<Diagnostic>> {
    let fail = |msg: String, help: String| {
        vec![
            Diagnostic::error(Code::LowerUnsupported, span, msg)
                .label("static trees cannot be built")
                .help(help),
        ]
    };
    let adj = both_ways(topo);
    let roots = pick_roots(topo, &adj, c, trees, roots).map_err(|(m, h)| fail(m, h))?;
    let blocks = u64::try_from(roots.len())
        .unwrap_or(u64::MAX)
        .min(c.count.max(1));
    let mut shapes = Vec::new();
    for (t, &root) in roots.iter().enumerate().take(blocks as usize) {
        shapes.push(tree(topo, &adj, c, root, t as u64).map_err(|(m, h)| fail(m, h))?);
    }
    let root_names: Vec<&str> = roots.iter().map(|&r| topo.nodes[r].name.as_str()).collect();
    let name = format!(
        "static_trees {} roots [{}]",
        roots.len(),
        root_names.join(", ")
    );
    let mut b = Builder::new(name, super::spec(c, blocks as u32));
    // Processes: ranks first, then every switch of any tree in node order.
    let mut proc_of: BTreeMap<NodeId, ProcId> = BTreeMap::new();
    for (r, &node) in c.ranks.iter().enumerate() {
        proc_of.insert(node, r as ProcId);
    }
    let switches: BTreeSet<NodeId> = shapes
        .iter()
        .flat_map(|s| s.keys().copied())
        .filter(|v| topo.nodes[*v].kind == NodeKind::Switch)
        .collect();
    for s in switches {
        let id = b.add_switch(topo.nodes[s].name.clone());
        proc_of.insert(s, id);
    }
    for (blk, shape) in shapes.iter().enumerate() {
        let sink = match c.kind {
            CollectiveKind::Reduce | CollectiveKind::Broadcast => c.ranks[c.root.unwrap_or(0)],
            _ => roots[blk],
        };
        let toward = orient(shape, sink);
        emit_block(&mut b, c.kind, blk as u32, sink, &toward, &proc_of, topo);
    }
    Ok(b.finish())
}

/// A tree: its root switch and every other node's parent towards it.
pub(crate) type Rooted = (NodeId, BTreeMap<NodeId, NodeId>);

/// The trees of `trees` static trees rooted as `roots` says, each as its root switch and every
/// other node's parent towards it (participants and switches): what the P4 target configures
/// its switches with. Errors are (message, help).
pub(crate) fn parents(
    topo: &Topology,
    c: &Collective,
    trees: u64,
    roots: &TreeRoots,
) -> Result<Vec<Rooted>, Why> {
    let adj = both_ways(topo);
    let roots = pick_roots(topo, &adj, c, trees, roots)?;
    let mut out = Vec::new();
    for (t, &root) in roots.iter().enumerate() {
        let shape = tree(topo, &adj, c, root, t as u64)?;
        out.push((root, orient(&shape, root).parent));
    }
    Ok(out)
}

/// For each node, its neighbours through links present in both directions.
fn both_ways(topo: &Topology) -> Vec<BTreeSet<NodeId>> {
    let mut out: Vec<BTreeSet<NodeId>> = vec![BTreeSet::new(); topo.nodes.len()];
    let edges: BTreeSet<(NodeId, NodeId)> = topo
        .graph
        .edge_indices()
        .filter_map(|e| topo.graph.edge_endpoints(e))
        .map(|(a, b)| (a.index(), b.index()))
        .collect();
    for &(a, b) in &edges {
        if a != b && edges.contains(&(b, a)) {
            out[a].insert(b);
        }
    }
    out
}

/// A fixed mix of a few numbers (splitmix64), for choices that must look random but repeat.
fn mix(parts: &[u64]) -> u64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
    for &p in parts {
        h ^= p;
        h = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = h;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h = z ^ (z >> 31);
    }
    h
}

/// Hop distances from `from` through switches only (`from` itself may be anything).
fn switch_bfs(topo: &Topology, adj: &[BTreeSet<NodeId>], from: NodeId) -> Vec<Option<u32>> {
    let mut dist = vec![None; topo.nodes.len()];
    dist[from] = Some(0);
    let mut q = VecDeque::from([from]);
    while let Some(v) = q.pop_front() {
        let d = dist[v].unwrap_or(0);
        for &w in &adj[v] {
            if dist[w].is_none() && topo.nodes[w].kind == NodeKind::Switch {
                dist[w] = Some(d + 1);
                q.push_back(w);
            }
        }
    }
    dist
}

type Why = (String, String);

/// The most central switches for participants `ranks`: those whose largest hop distance
/// (through switches) to a switch next to a participant is smallest, in node order (empty when
/// no participant is linked to a switch in both directions).
pub(crate) fn central_switches(topo: &Topology, ranks: &[NodeId]) -> Vec<NodeId> {
    let adj = both_ways(topo);
    let edge: BTreeSet<NodeId> = ranks
        .iter()
        .flat_map(|&h| adj[h].iter().copied())
        .filter(|&s| topo.nodes[s].kind == NodeKind::Switch)
        .collect();
    if edge.is_empty() {
        return Vec::new();
    }
    let ecc: Vec<(u32, NodeId)> = (0..topo.nodes.len())
        .filter(|&s| topo.nodes[s].kind == NodeKind::Switch)
        .filter_map(|s| {
            let d = switch_bfs(topo, &adj, s);
            edge.iter()
                .map(|&e| d[e])
                .try_fold(0u32, |m, x| x.map(|x| m.max(x)))
                .map(|e| (e, s))
        })
        .collect();
    let best = ecc.iter().map(|x| x.0).min();
    ecc.iter()
        .filter(|x| Some(x.0) == best)
        .map(|x| x.1)
        .collect()
}

/// The root switch of each tree.
fn pick_roots(
    topo: &Topology,
    adj: &[BTreeSet<NodeId>],
    c: &Collective,
    trees: u64,
    roots: &TreeRoots,
) -> Result<Vec<NodeId>, Why> {
    match roots {
        TreeRoots::Named(names) => names
            .iter()
            .map(|n| {
                topo.nodes.iter().position(|x| &x.name == n).ok_or_else(|| {
                    (
                        format!("the root switch `{n}` is not in the topology"),
                        "name switches of this topology in `roots`".to_string(),
                    )
                })
            })
            .collect(),
        TreeRoots::Random { seed } => {
            // Switches next to participants, and each switch's farthest such switch.
            let edge: BTreeSet<NodeId> = c
                .ranks
                .iter()
                .flat_map(|&h| adj[h].iter().copied())
                .filter(|&s| topo.nodes[s].kind == NodeKind::Switch)
                .collect();
            if edge.is_empty() {
                return Err((
                    "no participant is linked to a switch".into(),
                    "link the participants to switches (both directions), or use a host-based schedule such as `ring`".into(),
                ));
            }
            let mut ranked: Vec<(u32, u64, NodeId)> = Vec::new();
            for s in (0..topo.nodes.len()).filter(|&s| topo.nodes[s].kind == NodeKind::Switch) {
                let d = switch_bfs(topo, adj, s);
                let ecc = edge
                    .iter()
                    .map(|&e| d[e])
                    .try_fold(0u32, |m, x| x.map(|x| m.max(x)));
                if let Some(ecc) = ecc {
                    ranked.push((ecc, mix(&[*seed, s as u64]), s));
                }
            }
            ranked.sort();
            if (ranked.len() as u64) < trees {
                return Err((
                    format!(
                        "{trees} trees need {trees} root switches, but only {} reach{} every participant",
                        match ranked.len() {
                            1 => "1 switch".to_string(),
                            n => format!("{n} switches"),
                        },
                        if ranked.len() == 1 { "es" } else { "" }
                    ),
                    format!("use at most `trees: {}`", ranked.len().max(1)),
                ));
            }
            Ok(ranked.iter().take(trees as usize).map(|x| x.2).collect())
        }
    }
}

/// One tree: for every node in it, its neighbours in the tree (undirected), pruned to the
/// switches with participants below them.
fn tree(
    topo: &Topology,
    adj: &[BTreeSet<NodeId>],
    c: &Collective,
    root: NodeId,
    t: u64,
) -> Result<BTreeMap<NodeId, BTreeSet<NodeId>>, Why> {
    let dist = switch_bfs(topo, adj, root);
    // Parent of each switch: a neighbour one hop nearer the root, picked by hash.
    let parent_of = |v: NodeId, dv: u32| -> Option<NodeId> {
        adj[v]
            .iter()
            .copied()
            .filter(|&w| topo.nodes[w].kind == NodeKind::Switch && dist[w] == Some(dv - 1))
            .min_by_key(|&w| (mix(&[t, v as u64, w as u64]), w))
    };
    let mut tree: BTreeMap<NodeId, BTreeSet<NodeId>> = BTreeMap::new();
    let mut climbed: BTreeSet<NodeId> = BTreeSet::new();
    let link = |tree: &mut BTreeMap<NodeId, BTreeSet<NodeId>>, a: NodeId, b: NodeId| {
        tree.entry(a).or_default().insert(b);
        tree.entry(b).or_default().insert(a);
    };
    for &h in &c.ranks {
        let Some(&s) = adj[h]
            .iter()
            .filter(|&&s| topo.nodes[s].kind == NodeKind::Switch && dist[s].is_some())
            .min_by_key(|&&s| (dist[s], s))
        else {
            return Err((
                format!(
                    "`{}` has no switch that reaches the root `{}`",
                    topo.nodes[h].name, topo.nodes[root].name
                ),
                "link every participant to a switch (both directions), or use a host-based schedule such as `ring`".into(),
            ));
        };
        link(&mut tree, h, s);
        // Up to the root; each switch has one parent, so the paths make a tree.
        let mut v = s;
        while v != root && climbed.insert(v) {
            let Some(p) = parent_of(v, dist[v].unwrap_or(1)) else {
                break;
            };
            link(&mut tree, v, p);
            v = p;
        }
    }
    Ok(tree)
}

/// Parent (towards `sink`) and children of every node of `tree`.
struct Oriented {
    parent: BTreeMap<NodeId, NodeId>,
    children: BTreeMap<NodeId, Vec<NodeId>>,
}

fn orient(tree: &BTreeMap<NodeId, BTreeSet<NodeId>>, sink: NodeId) -> Oriented {
    let mut parent = BTreeMap::new();
    let mut children: BTreeMap<NodeId, Vec<NodeId>> = BTreeMap::new();
    let mut q = VecDeque::from([sink]);
    let mut seen = BTreeSet::from([sink]);
    while let Some(v) = q.pop_front() {
        for &w in tree.get(&v).into_iter().flatten() {
            if seen.insert(w) {
                parent.insert(w, v);
                children.entry(v).or_default().push(w);
                q.push_back(w);
            }
        }
    }
    Oriented { parent, children }
}

/// The ops of block `blk` on every process of its tree.
fn emit_block(
    b: &mut Builder,
    kind: CollectiveKind,
    blk: u32,
    sink: NodeId,
    t: &Oriented,
    proc_of: &BTreeMap<NodeId, ProcId>,
    topo: &Topology,
) {
    let p = |v: NodeId| proc_of[&v];
    let tag = blk;
    let input = Slice::one(Buf::Input, blk);
    let output = Slice::one(Buf::Output, blk);
    let scratch = Slice::one(Buf::Scratch, blk);
    let nodes: Vec<NodeId> = std::iter::once(sink)
        .chain(t.parent.keys().copied())
        .collect();
    for v in nodes {
        let me = p(v);
        let up = t.parent.get(&v).map(|&u| p(u));
        let down: Vec<ProcId> = t
            .children
            .get(&v)
            .into_iter()
            .flatten()
            .map(|&w| p(w))
            .collect();
        let host = topo.nodes[v].kind == NodeKind::Compute;
        match (kind, host) {
            (CollectiveKind::Broadcast, true) => match up {
                // The source: its data to its output and into the tree.
                None => {
                    b.copy(me, output, input);
                    for &d in &down {
                        b.send(me, d, input, tag);
                    }
                }
                Some(u) => {
                    b.recv(me, u, output, tag);
                }
            },
            (CollectiveKind::Broadcast, false) => {
                if let Some(u) = up {
                    b.recv(me, u, scratch, tag);
                }
                for &d in &down {
                    b.send(me, d, scratch, tag);
                }
            }
            (_, true) => match up {
                // The reduce's root: its own data, then the tree's.
                None => {
                    b.copy(me, output, input);
                    for &d in &down {
                        b.recv_reduce(me, d, output, tag);
                    }
                }
                Some(u) => {
                    b.send(me, u, input, tag);
                    if kind == CollectiveKind::Allreduce {
                        b.recv(me, u, output, tag);
                    }
                }
            },
            (_, false) => {
                for (i, &d) in down.iter().enumerate() {
                    if i == 0 {
                        b.recv(me, d, scratch, tag);
                    } else {
                        b.recv_reduce(me, d, scratch, tag);
                    }
                }
                match up {
                    Some(u) => {
                        b.send(me, u, scratch, tag);
                        if kind == CollectiveKind::Allreduce {
                            b.recv(me, u, scratch, tag);
                            for &d in &down {
                                b.send(me, d, scratch, tag);
                            }
                        }
                    }
                    // The allreduce's root switch: the result, down at once.
                    None => {
                        for &d in &down {
                            b.send(me, d, scratch, tag);
                        }
                    }
                }
            }
        }
    }
}
