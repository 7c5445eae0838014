//! Per-packet routing on any topology ([`Router`]).
//!
//! The candidates of a packet at node `at` bound for `dst` are the *minimal-path next hops*: the
//! out-links of `at` whose far end is one hop closer to `dst` (hop distances by breadth-first
//! search from each destination, computed when first needed). In a two-level fat tree these are
//! exactly the Canary paper's up ports while a packet goes up (every spine is one hop closer to
//! a host under another leaf) and the single down port while it goes down. Topologies without a
//! hierarchy (tori, dragonflies, meshes, rings) have no "up": there the candidates are the
//! minimal-path next hops, and adaptive routing chooses among them the same way, so packets
//! never take a longer path (no Valiant/UGAL detours: a deviation from what dragonfly networks
//! deploy, kept because minimal routing cannot livelock and keeps hop counts comparable).
//!
//! - `minimal`: the one path the flow model uses ([`crate::net::Net::route`], a fixed hash of
//!   the source and destination), so packet and flow runs load the same links.
//! - `ecmp`: at every hop, the candidate chosen by a hash of the flow (message) id and the node:
//!   all packets of a message follow one path, different messages spread.
//! - `adaptive` (the paper's, Section 5.2): the ECMP candidate by default, unless that port
//!   holds more than half its buffer (`queue / 2` bytes queued), then the candidate with the
//!   fewest queued bytes (ties to the default, then to the lowest link index). Per packet.

use super::params::Routing;
use crate::net::{LinkId, Net};

/// The routing state of one run; see the module doc.
pub struct Router<'n> {
    net: &'n Net,
    routing: Routing,
    /// Bytes above which a port counts as more than half full.
    half: u64,
    out: Vec<Vec<LinkId>>,
    into: Vec<Vec<LinkId>>,
    /// Hop distances to each destination, when computed.
    dist: Vec<Option<Box<[u32]>>>,
    /// For `minimal`: paths by (source, destination), and their ids.
    paths: Vec<Box<[LinkId]>>,
    path_of: rustc_hash::FxHashMap<(u32, u32), u32>,
    /// Candidates by (node, destination), as ranges of `flat`, when first asked for: on
    /// networks of at most [`DENSE_NODES`] nodes in `dense` (per node, once it routes, a row
    /// indexed by destination, [`UNKNOWN`] until asked), else in `cands`.
    cands: rustc_hash::FxHashMap<(u32, u32), (u32, u32)>,
    dense: Vec<Vec<(u32, u32)>>,
    /// Whether every node reaches every other (no failure yet): then a node with one out-link
    /// has that link as its only candidate towards any other node.
    connected: bool,
    flat: Vec<LinkId>,
    /// Each distinct candidate list's range of `flat`: lists are shared (every packet going
    /// up from a leaf has the same up ports, whatever its destination), so `flat` stays small
    /// enough to stay in cache.
    lists: rustc_hash::FxHashMap<Box<[LinkId]>, u32>,
    /// Links of a failed switch (empty until one fails): never chosen again.
    dead: Vec<bool>,
}

/// The most nodes whose candidates [`Router`] keeps in direct-indexed rows (a row of 8 bytes
/// per node for each node that routes).
const DENSE_NODES: usize = 2048;

/// A candidate range not computed yet.
const UNKNOWN: (u32, u32) = (u32::MAX, 0);

/// A fixed 64-bit mix (splitmix64's finaliser of a combination): the same on every machine.
pub fn mix(a: u64, b: u64) -> u64 {
    let mut z = a
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(b.wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
        .wrapping_add(0x1656_67B1_9E37_79F9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl<'n> Router<'n> {
    pub fn new(net: &'n Net, routing: Routing, queue: u64) -> Router<'n> {
        let n = net.node_count();
        let mut out = vec![Vec::new(); n];
        let mut into = vec![Vec::new(); n];
        for (i, l) in net.links.iter().enumerate() {
            out[l.from].push(i as LinkId);
            into[l.to].push(i as LinkId);
        }
        let connected = n > 0 && reaches_all(&out, net) && reaches_all(&into, net);
        Router {
            net,
            routing,
            half: queue / 2,
            out,
            into,
            dist: vec![None; n],
            paths: Vec::new(),
            path_of: Default::default(),
            cands: Default::default(),
            dense: if n <= DENSE_NODES {
                vec![Vec::new(); n]
            } else {
                Vec::new()
            },
            connected,
            flat: Vec::new(),
            lists: Default::default(),
            dead: Vec::new(),
        }
    }

    /// Node `n` has failed: its links are never chosen again (routes stay minimal, so a
    /// destination whose every minimal next hop runs through `n` becomes unreachable).
    pub fn fail_node(&mut self, n: usize) {
        if self.dead.is_empty() {
            self.dead = vec![false; self.net.links.len()];
        }
        for &l in self.out[n].iter().chain(&self.into[n]) {
            self.dead[l as usize] = true;
        }
        // Routes reconverge around the failed node: distances and next hops are computed
        // afresh without its links. Filtering the dead links at the failed node's neighbours
        // alone is not enough where it is more than one hop from the choice: in a three-level
        // fat tree an edge switch of another pod would keep sending packets up towards the
        // failed aggregation switch's core switches, which have no way left into its pod (a
        // livelock: the packets, and the requests that ask for them, are lost for ever).
        for d in &mut self.dist {
            *d = None;
        }
        self.connected = false;
        self.cands.clear();
        for row in &mut self.dense {
            *row = Vec::new();
        }
        self.flat.clear();
        self.lists.clear();
    }

    /// The node link `l` leaves.
    pub fn link_from(&self, l: LinkId) -> u32 {
        self.net.links[l as usize].from as u32
    }

    /// Whether link `l` belongs to a failed node.
    pub fn is_dead(&self, l: LinkId) -> bool {
        self.dead.get(l as usize).copied().unwrap_or(false)
    }

    pub fn node_name(&self, n: usize) -> &str {
        &self.net.names[n]
    }

    pub fn routing(&self) -> Routing {
        self.routing
    }

    fn ensure(&mut self, dst: usize) {
        if self.dist[dst].is_some() {
            return;
        }
        let mut d = vec![u32::MAX; self.out.len()];
        let mut q = std::collections::VecDeque::new();
        d[dst] = 0;
        q.push_back(dst);
        while let Some(v) = q.pop_front() {
            for &l in &self.into[v] {
                if self.dead.get(l as usize).copied().unwrap_or(false) {
                    continue;
                }
                let u = self.net.links[l as usize].from;
                if d[u] == u32::MAX {
                    d[u] = d[v] + 1;
                    q.push_back(u);
                }
            }
        }
        self.dist[dst] = Some(d.into_boxed_slice());
    }

    /// The candidates at `at` towards `dst` as a range (start, length) of `flat`, computed
    /// when first asked for; None when no distances to `dst` can be had.
    fn candidates(&mut self, at: usize, dst: usize) -> Option<(u32, u32)> {
        let known = if self.dense.is_empty() {
            self.cands.get(&(at as u32, dst as u32)).copied()
        } else {
            self.dense[at].get(dst).copied().filter(|&r| r != UNKNOWN)
        };
        if let Some(r) = known {
            return Some(r);
        }
        self.ensure(dst);
        let d = self.dist[dst].as_deref()?;
        let here = d[at];
        let start = self.flat.len() as u32;
        if here != u32::MAX && here > 0 {
            let links = &self.net.links;
            self.flat.extend(
                self.out[at]
                    .iter()
                    .copied()
                    .filter(|&l| d[links[l as usize].to] == here - 1),
            );
        }
        let len = self.flat.len() as u32 - start;
        let list: &[LinkId] = &self.flat[start as usize..];
        let r = match self.lists.get(list) {
            Some(&s) => {
                self.flat.truncate(start as usize);
                (s, len)
            }
            None => {
                self.lists.insert(list.into(), start);
                (start, len)
            }
        };
        if self.dense.is_empty() {
            self.cands.insert((at as u32, dst as u32), r);
        } else {
            if self.dense[at].is_empty() {
                self.dense[at] = vec![UNKNOWN; self.out.len()];
            }
            self.dense[at][dst] = r;
        }
        Some(r)
    }

    /// True when `dst` can be reached from `src`.
    pub fn reachable(&mut self, src: usize, dst: usize) -> bool {
        self.ensure(dst);
        self.dist[dst].as_ref().is_some_and(|d| d[src] != u32::MAX)
    }

    /// The id of the `minimal` path from `src` to `dst`.
    pub fn path(&mut self, src: u32, dst: u32) -> u32 {
        if let Some(&p) = self.path_of.get(&(src, dst)) {
            return p;
        }
        let p = self.net.route(src as usize, dst as usize);
        self.paths.push(p.into_boxed_slice());
        let id = (self.paths.len() - 1) as u32;
        self.path_of.insert((src, dst), id);
        id
    }

    /// The links of path `path`, in order.
    pub fn path_links(&self, path: u32) -> &[LinkId] {
        &self.paths[path as usize]
    }

    /// Hop `hop` of path `path` (for `minimal` routing).
    pub fn path_link(&self, path: u32, hop: u32) -> LinkId {
        self.paths[path as usize][hop as usize]
    }

    /// The next hop at `at` toward `dst` for a packet of flow `key`, given each link's queued
    /// bytes; None when `dst` is unreachable. (`minimal` packets use [`Router::path_link`].)
    pub fn next(
        &mut self,
        at: usize,
        dst: usize,
        key: u64,
        queued: impl Fn(LinkId) -> u64,
    ) -> Option<LinkId> {
        self.next_from(at, dst, mix(key, at as u64), queued)
    }

    /// As [`Router::next`], with the default candidate `pick mod candidates` (the same index
    /// at every node: Canary's default up port depends on the destination only, so the
    /// packets of a block meet at the same switches unless congestion diverts them).
    pub fn next_from(
        &mut self,
        at: usize,
        dst: usize,
        pick: u64,
        queued: impl Fn(LinkId) -> u64,
    ) -> Option<LinkId> {
        let one;
        let all = if self.connected && at != dst && self.out[at].len() == 1 {
            // The only way out is one hop closer to every other node.
            one = [self.out[at][0]];
            &one[..]
        } else {
            let (start, len) = self.candidates(at, dst)?;
            if len == 0 {
                return None;
            }
            &self.flat[start as usize..(start + len) as usize]
        };
        let alive: Vec<LinkId>;
        let cand = if self.dead.is_empty() {
            all
        } else {
            alive = all.iter().copied().filter(|&l| !self.is_dead(l)).collect();
            if alive.is_empty() {
                return None;
            }
            &alive
        };
        let len = cand.len() as u32;
        let default = cand[if len.is_power_of_two() {
            // The same as the remainder, without a division.
            (pick & u64::from(len - 1)) as usize
        } else {
            (pick % u64::from(len)) as usize
        }];
        if self.routing != Routing::Adaptive || len == 1 || queued(default) <= self.half {
            return Some(default);
        }
        let mut best = (queued(default), default);
        for &l in cand {
            let q = queued(l);
            if q < best.0 {
                best = (q, l);
            }
        }
        Some(best.1)
    }
}

/// Whether every node is reached from node 0 along `adj` (out-links, or in-links read
/// backwards).
fn reaches_all(adj: &[Vec<LinkId>], net: &Net) -> bool {
    let mut seen = vec![false; adj.len()];
    let mut stack = vec![0usize];
    seen[0] = true;
    let mut count = 1;
    while let Some(v) = stack.pop() {
        for &l in &adj[v] {
            let link = &net.links[l as usize];
            let u = if link.from == v { link.to } else { link.from };
            if !seen[u] {
                seen[u] = true;
                count += 1;
                stack.push(u);
            }
        }
    }
    count == adj.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::SourceMap;

    fn fat_tree() -> Net {
        let mut sources = SourceMap::new();
        let src = "import fat_tree;\ntopology t = fat_tree(leaves: 2, hosts_per_leaf: 2, spines: 3, host_bw: 100 Gbps, spine_bw: 100 Gbps);";
        let id = sources.add("t.coll", src.to_string());
        let m = crate::sema::check(&mut sources, id, &Default::default())
            .model
            .expect("checks");
        Net::new(m.topology.as_ref().expect("topology"))
    }

    fn name(net: &Net, l: LinkId) -> String {
        net.link_name(l)
    }

    #[test]
    fn candidates_are_the_up_ports_going_up_and_one_port_going_down() {
        let net = fat_tree();
        // Nodes: host[0][0], host[0][1], host[1][0], host[1][1], leaf[0], leaf[1], spine[0..3].
        let mut r = Router::new(&net, Routing::Ecmp, 1000);
        let ups: std::collections::BTreeSet<String> = (0..64)
            .map(|key| name(&net, r.next(4, 2, key, |_| 0).unwrap()))
            .collect();
        assert_eq!(ups.len(), 3, "every spine is a candidate: {ups:?}");
        assert!(ups.iter().all(|n| n.starts_with("leaf[0] -> spine")));
        for key in 0..8 {
            assert_eq!(
                name(&net, r.next(6, 2, key, |_| 0).unwrap()),
                "spine[0] -> leaf[1]"
            );
            assert_eq!(
                name(&net, r.next(5, 2, key, |_| 0).unwrap()),
                "leaf[1] -> host[1][0]"
            );
        }
        assert_eq!(r.next(2, 2, 0, |_| 0), None);
    }

    #[test]
    fn adaptive_leaves_a_port_more_than_half_full_for_the_emptiest() {
        let net = fat_tree();
        let mut ecmp = Router::new(&net, Routing::Ecmp, 1000);
        let mut adaptive = Router::new(&net, Routing::Adaptive, 1000);
        let default = ecmp.next(4, 2, 7, |_| 0).unwrap();
        let emptiest = (0..net.links.len() as LinkId)
            .find(|&l| {
                net.links[l as usize].from == 4 && net.links[l as usize].to >= 6 && l != default
            })
            .unwrap();
        let load = |l: LinkId| {
            if l == default {
                501
            } else if l == emptiest {
                10
            } else {
                20
            }
        };
        // Half full (500 of 1000 bytes) is not more than half: the default stays.
        assert_eq!(
            adaptive.next(4, 2, 7, |l| if l == default { 500 } else { 0 }),
            Some(default)
        );
        assert_eq!(adaptive.next(4, 2, 7, load), Some(emptiest));
        assert_eq!(ecmp.next(4, 2, 7, load), Some(default));
    }

    #[test]
    fn mix_is_fixed() {
        // Pinned values (splitmix64's finaliser, checked by hand): routes must be the same on
        // every machine and run.
        assert_eq!(mix(1, 2), 0x4795_d518_8e81_6f0d);
        assert_eq!(mix(0, 0), 0xb393_62cb_9460_13e3);
        assert_ne!(mix(1, 2), mix(2, 1));
    }
}
