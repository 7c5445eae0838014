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
//! Most runs reduce at most 32 blocks (32 packets per host) on at most 32 hosts, enough for
//! every slot of a small table to be reused many times, small enough that the exploration takes
//! seconds on the paper's 1,024-host network; every twelfth run is [`SCALE`] times larger in
//! both (no background traffic, which would make it cost minutes).
//!
//! The exploration guarantees that each fault class the file allows occurs, in [`MIN_RUNS`]
//! runs at least: when the cycle above ran too few with collisions (a file whose blocks fit the table), stragglers (a timeout far
//! longer than the packets' spread, as examples/canary_p4.coll's milliseconds on BMv2), lost
//! packets or a failing switch, it runs settings made to force that class ([`Boost`]): a
//! timeout of 0 (every packet after a descriptor's first arrives after its timer), a table of
//! one descriptor over every block, 5% loss, a switch that fails as the first packet reaches
//! it, until the class has occurred in [`MIN_RUNS`] runs or [`BOOST_TRIES`] such runs were
//! made; the exploration says which it needed ([`Exploration::boosted`]). A class the file cannot have is not forced: collisions
//! need two blocks, a failure a switch without hosts whose loss leaves the hosts connected,
//! background traffic hosts outside the allreduce.
//!
//! Run `i` of the cycle has seed `i + 1`, and the forcing runs seeds from [`BOOST_SEED`] up;
//! a setting follows from its seed alone, so [`replay`] (`collc sim FILE --explore-run SEED`,
//! which every E0049 names) runs any of them again by itself.

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
/// How much larger (blocks and hosts) every twelfth run is.
pub const SCALE: u64 = 4;
/// The first seed of the runs that force a fault class.
pub const BOOST_SEED: u64 = 1_000_001;
/// Runs each fault class the file allows must occur in; forcing runs are added until it does.
pub const MIN_RUNS: u64 = 3;
/// Forcing runs tried per fault class at most.
pub const BOOST_TRIES: u64 = 6;
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
    /// Blocks and hosts as multiples of [`BLOCKS`] and [`HOSTS`].
    pub scale: u64,
}

/// The fault classes a forcing run makes happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boost {
    Stragglers,
    Collisions,
    Loss,
    Failure,
}

impl Boost {
    const ALL: [Boost; 4] = [
        Boost::Stragglers,
        Boost::Collisions,
        Boost::Loss,
        Boost::Failure,
    ];

    /// What the class is, in a sentence.
    pub fn class(self) -> &'static str {
        match self {
            Boost::Stragglers => "stragglers",
            Boost::Collisions => "collisions",
            Boost::Loss => "lost packets",
            Boost::Failure => "a failing switch",
        }
    }

    /// How the forcing runs make it happen.
    pub fn how(self) -> &'static str {
        match self {
            Boost::Stragglers => "a timeout of 0",
            Boost::Collisions => "a table of 1 descriptor",
            Boost::Loss => "5% of packets lost per link",
            Boost::Failure => "a switch failing as the first packet reaches it",
        }
    }

    /// The seeds of its forcing runs.
    fn seeds(self) -> impl Iterator<Item = u64> {
        let i = Boost::ALL.iter().position(|b| *b == self).unwrap_or(0) as u64;
        (0..BOOST_TRIES).map(move |k| BOOST_SEED + i + 4 * k)
    }
}

impl Setting {
    /// How to say it: `seed 7, table 1, timeout 1/50 x 1 us, background, ecmp`.
    pub fn describe(&self, declared: &BigRational) -> String {
        let t = crate::sema::units::Quantity {
            value: declared * &self.timeout,
            dim: crate::sema::units::Dim::TIME,
        };
        format!(
            "seed {}, table_size {}, timeout {t}, {}, routing {}, loss {}%{}{}",
            self.seed,
            self.table,
            if self.background {
                "background traffic"
            } else {
                "no background"
            },
            self.routing.name(),
            self.loss * 100.0,
            if self.scale > 1 {
                format!(
                    ", up to {} blocks on {} hosts",
                    BLOCKS * self.scale,
                    HOSTS as u64 * self.scale
                )
            } else {
                String::new()
            },
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
    /// The fault classes the cycle had in fewer than [`MIN_RUNS`] runs: how many it had, and
    /// the forcing runs it took to reach [`MIN_RUNS`] (`None`: not within [`BOOST_TRIES`]).
    pub boosted: Vec<(Boost, u64, Option<u64>)>,
    /// Runs with more than [`BLOCKS`] blocks or [`HOSTS`] hosts, and the most of each one had.
    pub large: u64,
    pub most_blocks: u64,
    pub most_hosts: u64,
}

/// What a file allows the exploration: background traffic (hosts outside the allreduce),
/// a switch failure (a switch without hosts whose loss leaves them connected).
#[derive(Debug, Clone, Copy)]
pub struct Scope {
    pub table: u64,
    pub background: bool,
    pub routing: Routing,
    pub failures: bool,
}

/// The setting of the run with seed `seed` (see the module doc).
pub fn setting_of(seed: u64, sc: &Scope) -> Setting {
    let r = |n: i64, d: i64| BigRational::new(BigInt::from(n), BigInt::from(d));
    if seed >= BOOST_SEED {
        let boost = Boost::ALL[((seed - BOOST_SEED) % 4) as usize];
        return Setting {
            seed,
            table: if boost == Boost::Collisions {
                1
            } else {
                sc.table
            },
            timeout: if boost == Boost::Stragglers {
                r(0, 1)
            } else {
                r(1, 1)
            },
            background: false,
            routing: sc.routing,
            loss: if boost == Boost::Loss { 0.05 } else { 0.0 },
            failure: (boost == Boost::Failure).then_some(0),
            scale: 1,
        };
    }
    let i = seed.saturating_sub(1);
    let scaled = i % 12 == 11;
    let background = sc.background && i / 9 % 2 == 1 && !scaled;
    Setting {
        seed,
        table: [sc.table, 1, 3][(i % 3) as usize],
        timeout: [r(1, 1), r(1, 50), r(4, 1)][(i / 3 % 3) as usize].clone(),
        background,
        routing: if i / 18 % 2 == 1 {
            Routing::Ecmp
        } else {
            sc.routing
        },
        // Loss without background: a lossy block recovers over several retransmission
        // timeouts, and line-rate background traffic over all of them costs minutes.
        loss: if i % 2 == 1 && !background { 0.01 } else { 0.0 },
        failure: (i % 4 == 2 && !background && sc.failures)
            .then(|| super::route::mix(i + 1, 0x6661_696c) % 3_000_000),
        scale: if scaled { SCALE } else { 1 },
    }
}

/// The settings of the cycle's first `runs` runs (seeds 1..=runs).
pub fn settings(runs: u64, sc: &Scope) -> Vec<Setting> {
    (1..=runs).map(|seed| setting_of(seed, sc)).collect()
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

/// Runs the first `runs` explorations of `m`'s Canary schedule (parameters `params` for
/// everything the settings leave alone) with `protocol`, then the forcing runs of each fault
/// class the file allows that did not occur; None when the schedule is not Canary.
pub fn explore(
    m: &Model,
    span: Span,
    params: &PacketParams,
    runs: u64,
    protocol: &Protocol,
) -> Option<Exploration> {
    let plan = Plan::of(m, params)?;
    let mut out = Exploration {
        runs: 0,
        rules: BTreeMap::new(),
        colliding: 0,
        straggling: 0,
        congested: 0,
        lossy: 0,
        failing: 0,
        lost: 0,
        reclaimed: 0,
        failure: None,
        boosted: Vec::new(),
        large: 0,
        most_blocks: 0,
        most_hosts: 0,
    };
    plan.tally(
        &mut out,
        settings(runs, &plan.scope),
        m,
        span,
        params,
        protocol,
    );
    for b in Boost::ALL {
        if out.failure.is_some() || !plan.allows(b) || out.occurred(b) {
            continue;
        }
        let before = out.runs_with(b);
        let mut took = None;
        for (k, seed) in b.seeds().enumerate() {
            let st = setting_of(seed, &plan.scope);
            plan.tally(&mut out, vec![st], m, span, params, protocol);
            if out.failure.is_some() || out.occurred(b) {
                took = out.occurred(b).then_some(k as u64 + 1);
                break;
            }
        }
        out.boosted.push((b, before, took));
    }
    out.reclaimed = out.rules.get("reclaim").copied().unwrap_or(0);
    Some(out)
}

impl Exploration {
    /// Runs so far that had fault class `b`.
    pub fn runs_with(&self, b: Boost) -> u64 {
        match b {
            Boost::Stragglers => self.straggling,
            Boost::Collisions => self.colliding,
            Boost::Loss => self.lossy,
            Boost::Failure => self.failing,
        }
    }

    /// Whether fault class `b` occurred in [`MIN_RUNS`] runs at least.
    pub fn occurred(&self, b: Boost) -> bool {
        self.runs_with(b) >= MIN_RUNS
    }
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

/// The exploration of a Canary schedule: its parameters, what the file allows ([`Scope`]),
/// whether runs place their hosts at random, and the switches that may fail.
struct Plan<'a> {
    cp: &'a crate::sema::model::CanaryParams,
    scope: Scope,
    free: bool,
    spines: Vec<u32>,
    /// Blocks and hosts of the file's allreduce.
    blocks: u64,
    hosts: usize,
}

impl<'a> Plan<'a> {
    /// None when `m`'s schedule is not Canary (or it has no topology or collective).
    fn of(m: &'a Model, params: &PacketParams) -> Option<Plan<'a>> {
        let Family::Canary(cp) = &m.schedule.as_ref()?.family else {
            return None;
        };
        let (topo, c) = (m.topology.as_ref()?, m.collective.as_ref()?);
        let (free, spines) = scope(topo, c);
        let scope = Scope {
            table: cp.table_size,
            background: free,
            routing: params.routing,
            failures: !spines.is_empty(),
        };
        Some(Plan {
            cp,
            scope,
            free,
            spines,
            blocks: c.count.div_ceil(cp.elements_per_packet.max(1)),
            hosts: c.ranks.len(),
        })
    }

    /// Whether the file can have fault class `b` at all.
    fn allows(&self, b: Boost) -> bool {
        match b {
            Boost::Stragglers => self.hosts >= 2,
            Boost::Collisions => self.blocks >= 2,
            Boost::Loss => true,
            Boost::Failure => self.scope.failures,
        }
    }

    /// Blocks and hosts of a run with setting `st`.
    fn size(&self, st: &Setting) -> (u64, usize) {
        (
            self.blocks.min(BLOCKS * st.scale),
            self.hosts.min(HOSTS * st.scale as usize),
        )
    }

    /// Runs `sts` (in parallel) and adds what they saw to `out`; the first failure in setting
    /// order is kept.
    fn tally(
        &self,
        out: &mut Exploration,
        sts: Vec<Setting>,
        m: &Model,
        span: Span,
        params: &PacketParams,
        protocol: &Protocol,
    ) {
        let results: Vec<Result<PacketRun, Vec<Diagnostic>>> = sts
            .par_iter()
            .map(|st| self.run(m, span, params, st, protocol))
            .collect();
        for (st, r) in sts.into_iter().zip(results) {
            out.runs += 1;
            let (blocks, hosts) = self.size(&st);
            out.large += u64::from(blocks > BLOCKS || hosts > HOSTS);
            out.most_blocks = out.most_blocks.max(blocks);
            out.most_hosts = out.most_hosts.max(hosts as u64);
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
        let (blocks, hosts) = self.size(st);
        let mut mm = m.clone();
        if let Some(cc) = mm.collective.as_mut() {
            cc.count = cc.count.min(blocks * cp.elements_per_packet.max(1));
            cc.ranks.truncate(hosts);
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
    if seed == 0 {
        return None;
    }
    let plan = Plan::of(m, params)?;
    let st = setting_of(seed, &plan.scope);
    let r = plan.run(m, span, params, &st, protocol);
    Some((st, r))
}
