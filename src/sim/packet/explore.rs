//! Canary's proof by exploration ([`explore`]): many randomized executions of the protocol in
//! the packet simulator, each checking the allreduce's postcondition ([`super::canary`]: every
//! rank ends with every block's full reduction, each contribution once, the same on every
//! rank, no descriptor left allocated). The runs cycle through settings chosen to make the
//! protocol's hard cases happen on the file's own network: descriptor tables of 1 and 3
//! entries (collisions, so tree restoration), timeouts 50 times shorter than declared
//! (stragglers) and 4 times longer, background traffic from every host outside the allreduce
//! (congestion, so adaptive routes that change per packet), ECMP routes besides the model's,
//! and a fresh random placement and value seed per run. Of the runs without background traffic,
//! every other one loses 1% of the Canary packets on every link (so hosts time out, leaders
//! answer or fail generations, blocks are re-issued and some fall back to the hosts, and
//! switches reclaim the descriptors of failed generations), and one in four has a switch fail
//! mid-run: after a time drawn from the first 3 us, the first switch with no compute node
//! attached whose loss leaves the hosts connected (a fat tree's spine; a leaf's failure would
//! cut its hosts off) that a Canary packet reaches fails as the packet arrives. From then on every
//! Canary packet that reaches or leaves it is lost, its descriptors are gone, and routes avoid
//! it ([`super::PacketParams::failure`]), so the fault tolerance recovers the blocks it held.
//! Each run reduces at most 32 blocks (32 packets per host) on at most 32 hosts, enough for
//! every slot of a small table to be reused many times, small enough that the exploration takes
//! seconds on the paper's 1,024-host network. Run `i` has seed `i + 1` and its setting follows
//! from the seed alone, so [`replay`] (`collc sim FILE --explore-run SEED`, which every E0049
//! names) runs one of them again by itself.

use super::{Background, Routing};
use super::{PacketParams, PacketRun, run_file_with};
use crate::canary::protocol::Protocol;
use crate::diag::{Diagnostic, Span};
use crate::sema::model::{Family, Model};
use num_bigint::BigInt;
use num_rational::BigRational;
use rayon::prelude::*;
use std::collections::BTreeMap;

/// Blocks each exploration run reduces at most, and hosts that take part at most (the first
/// of the declared, or as many placed at random).
pub const BLOCKS: u64 = 32;
pub const HOSTS: usize = 32;
/// Events after which an exploration run is a livelock (see [`super::PacketParams::max_events`]):
/// the largest run of the examples' explorations, a 1,024-host fat tree with background traffic
/// from every other host (examples/fat_tree_1024.coll), takes about 6.2 M; a livelock is
/// stopped after some 20 s instead of running until memory runs out.
pub const MAX_EVENTS: u64 = 50_000_000;

/// One run's setting.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub seed: u64,
    /// Descriptor table entries.
    pub table: u64,
    /// The switch timeout as a multiple of the declared one.
    pub timeout: BigRational,
    pub background: bool,
    pub routing: Routing,
    /// Probability of losing a packet on a link.
    pub loss: f64,
    /// A switch failure: from this time (ps), the first switch without hosts that a Canary
    /// packet reaches fails.
    pub failure: Option<u64>,
}

impl Setting {
    /// How to say it: `seed 7, table 1, timeout 1/50 x 1 us, background, ecmp`.
    pub fn describe(&self, declared: &BigRational) -> String {
        let t = crate::sema::units::Quantity {
            value: declared * &self.timeout,
            dim: crate::sema::units::Dim::TIME,
        };
        format!(
            "seed {}, table_size {}, timeout {t}, {}, routing {}, loss {}%{}",
            self.seed,
            self.table,
            if self.background {
                "background traffic"
            } else {
                "no background"
            },
            self.routing.name(),
            self.loss * 100.0,
            match self.failure {
                Some(at) => format!(
                    ", the first switch without hosts a packet reaches after {} ns fails",
                    crate::sim::TimeUnit::PS.show(at)
                ),
                None => String::new(),
            }
        )
    }
}

/// What the exploration saw.
#[derive(Debug, Clone, PartialEq)]
pub struct Exploration {
    pub runs: u64,
    /// Rule hits summed over the runs.
    pub rules: BTreeMap<String, u64>,
    /// Runs with collisions, with stragglers, with background traffic, with lost packets;
    /// blocks whose generation failed, and that fell back to the hosts, over all runs.
    pub colliding: u64,
    pub straggling: u64,
    pub congested: u64,
    pub lossy: u64,
    /// Runs in which a switch failed and packets were lost there.
    pub failing: u64,
    pub lost: u64,
    pub reclaimed: u64,
    /// The first failing run's setting and why, in setting order.
    pub failure: Option<(Setting, Vec<Diagnostic>)>,
}

/// The settings of `runs` runs for a table of `table` entries (cycled; see the module doc);
/// `failures` says whether a switch may fail.
pub fn settings(
    runs: u64,
    table: u64,
    background: bool,
    routing: Routing,
    failures: bool,
) -> Vec<Setting> {
    let r = |n: i64, d: i64| BigRational::new(BigInt::from(n), BigInt::from(d));
    (0..runs)
        .map(|i| Setting {
            seed: i + 1,
            table: [table, 1, 3][(i % 3) as usize],
            timeout: [r(1, 1), r(1, 50), r(4, 1)][(i / 3 % 3) as usize].clone(),
            background: background && i / 9 % 2 == 1,
            routing: if i / 18 % 2 == 1 {
                Routing::Ecmp
            } else {
                routing
            },
            // Loss without background: a lossy block recovers over several retransmission
            // timeouts, and line-rate background traffic over all of them costs minutes.
            loss: if i % 2 == 1 && !(background && i / 9 % 2 == 1) {
                0.01
            } else {
                0.0
            },
            failure: (i % 4 == 2 && !(background && i / 9 % 2 == 1) && failures)
                .then(|| super::route::mix(i + 1, 0x6661_696c) % 3_000_000),
        })
        .collect()
}

/// Whether every compute node still reaches every other (over links in both directions) when
/// node `dead` is gone.
fn survives(topo: &crate::sema::model::Topology, dead: usize) -> bool {
    use petgraph::graph::NodeIndex;
    let compute: Vec<usize> = topo.compute_nodes().collect();
    let Some(&start) = compute.first() else {
        return true;
    };
    let mut seen = vec![false; topo.nodes.len()];
    seen[dead] = true;
    seen[start] = true;
    let mut stack = vec![start];
    while let Some(n) = stack.pop() {
        for x in topo.graph.neighbors(NodeIndex::new(n)) {
            if !seen[x.index()] {
                seen[x.index()] = true;
                stack.push(x.index());
            }
        }
    }
    compute.iter().all(|&c| seen[c])
}

/// Runs `runs` explorations of `m`'s Canary schedule (parameters `params` for everything the
/// settings leave alone) with `protocol`; None when the schedule is not Canary.
pub fn explore(
    m: &Model,
    span: Span,
    params: &PacketParams,
    runs: u64,
    protocol: &Protocol,
) -> Option<Exploration> {
    let plan = Plan::of(m, params, runs)?;
    let results: Vec<Result<PacketRun, Vec<Diagnostic>>> = plan
        .settings
        .par_iter()
        .map(|st| plan.run(m, span, params, st, protocol))
        .collect();
    let all = plan.settings;
    let mut out = Exploration {
        runs,
        rules: BTreeMap::new(),
        colliding: 0,
        straggling: 0,
        congested: 0,
        lossy: 0,
        failing: 0,
        lost: 0,
        reclaimed: 0,
        failure: None,
    };
    for (st, r) in all.into_iter().zip(results) {
        match r {
            Ok(run) => {
                let hit = |name: &str| run.rules.iter().any(|(n, k)| n == name && *k > 0);
                out.colliding += u64::from(hit("collision"));
                out.straggling += u64::from(hit("straggler"));
                out.congested += u64::from(run.bg_hosts > 0);
                out.lossy += u64::from(run.drops > 0 && st.loss > 0.0);
                out.failing += u64::from(st.failure.is_some() && run.drops > 0);
                out.lost += run.drops;
                for (n, k) in &run.rules {
                    *out.rules.entry(n.clone()).or_insert(0) += k;
                }
            }
            Err(d) => {
                if out.failure.is_none() {
                    out.failure = Some((st, d));
                }
            }
        }
    }
    out.reclaimed = out.rules.get("reclaim").copied().unwrap_or(0);
    Some(out)
}

/// Whether exploration runs place their hosts at random (the topology has more compute nodes
/// than take part), and the switches that may fail: those with no compute node attached whose
/// loss leaves every compute node reachable from every other (a fat tree's spines, not a
/// chain's cores).
fn scope(
    topo: &crate::sema::model::Topology,
    c: &crate::sema::model::Collective,
) -> (bool, Vec<u32>) {
    let free = topo.compute_nodes().count() > c.ranks.len().min(HOSTS);
    let spines: Vec<u32> = topo
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, n)| {
            n.kind == crate::sema::model::NodeKind::Switch
                && !topo
                    .graph
                    .neighbors(petgraph::graph::NodeIndex::new(*i))
                    .any(|x| topo.nodes[x.index()].kind == crate::sema::model::NodeKind::Compute)
                && survives(topo, *i)
        })
        .map(|(i, _)| i as u32)
        .collect();
    (free, spines)
}

/// The first `runs` exploration runs of a Canary schedule: its parameters, the runs'
/// settings, and [`scope`]'s answer (random placement, the switches that may fail).
struct Plan<'a> {
    cp: &'a crate::sema::model::CanaryParams,
    settings: Vec<Setting>,
    free: bool,
    spines: Vec<u32>,
}

impl<'a> Plan<'a> {
    /// None when `m`'s schedule is not Canary (or it has no topology or collective).
    fn of(m: &'a Model, params: &PacketParams, runs: u64) -> Option<Plan<'a>> {
        let Family::Canary(cp) = &m.schedule.as_ref()?.family else {
            return None;
        };
        let (topo, c) = (m.topology.as_ref()?, m.collective.as_ref()?);
        let (free, spines) = scope(topo, c);
        let settings = settings(
            runs,
            cp.table_size,
            free,
            params.routing,
            !spines.is_empty(),
        );
        Some(Plan {
            cp,
            settings,
            free,
            spines,
        })
    }

    /// One exploration run: `st` on `m` (see [`explore`]).
    fn run(
        &self,
        m: &Model,
        span: Span,
        params: &PacketParams,
        st: &Setting,
        protocol: &Protocol,
    ) -> Result<PacketRun, Vec<Diagnostic>> {
        let (cp, free, spines) = (self.cp, self.free, &self.spines);
        let mut mm = m.clone();
        if let Some(cc) = mm.collective.as_mut() {
            cc.count = cc.count.min(BLOCKS * cp.elements_per_packet.max(1));
            cc.ranks.truncate(HOSTS);
        }
        if let Some(Family::Canary(p)) = mm.schedule.as_mut().map(|s| &mut s.family) {
            p.table_size = st.table;
            p.timeout = &cp.timeout * &st.timeout;
        }
        let mut pp = params.clone();
        pp.max_events = MAX_EVENTS;
        pp.routing = st.routing;
        pp.random_placement = free;
        pp.background = Background::Fraction(if st.background { 1.0 } else { 0.0 });
        pp.loss = st.loss;
        pp.failure = st.failure.map(|at| super::Failure {
            at,
            among: spines.to_vec(),
        });
        run_file_with(&mm, span, &pp, st.seed, 1, false, protocol).map(|mut v| v.remove(0))
    }
}

/// Replays the exploration run with seed `seed` (the `seed`-th of [`settings`]) of `m`'s
/// Canary schedule: its setting and outcome; None when the schedule is not Canary or the
/// seed is 0.
pub fn replay(
    m: &Model,
    span: Span,
    params: &PacketParams,
    seed: u64,
    protocol: &Protocol,
) -> Option<(Setting, Result<PacketRun, Vec<Diagnostic>>)> {
    let mut plan = Plan::of(m, params, seed)?;
    let st = plan.settings.pop()?;
    let r = plan.run(m, span, params, &st, protocol);
    Some((st, r))
}
