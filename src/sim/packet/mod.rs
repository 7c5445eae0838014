//! Packet-level simulation on the network a `.coll` file describes (issue 15; the Canary
//! paper's Section 5.2 world): host NICs and switch ports with finite buffers, packets of
//! `mtu` bytes with headers, per-packet routing (minimal, ECMP or the paper's adaptive rule),
//! lossless credit-based flow control, switch processes that aggregate per packet, and random
//! uniform background traffic on the hosts outside the collective.
//!
//! - [`params`]: the `model NAME: packet { ... }` parameters and their defaults.
//! - [`route`]: candidates (minimal-path next hops) and the routing rules.
//! - [`engine`]: the discrete-event loop ([`simulate`]), in integer picoseconds; its event
//!   queue is [`crate::sim::radix`] (a radix heap, shared with the flow-level simulator).
//! - [`job`]: an IR program's ops as the engine runs them (switch processes stream).
//! - [`traffic`]: the seeded RNG, random placement and background traffic.
//! - [`bounds`]: what a run must fit before it starts (the clock, the packet counter,
//!   `--max-events`).
//! - [`file`]: a `.coll` file's collective run after run, lowered for where each run places it.
//! - [`report`]: results ([`PacketRun`]): per-rank finish times, goodput, link utilisation
//!   (histogram and average), stalls, events, the Chrome trace; summaries over runs.
//!
//! The engine runs any [`Program`]s: several at once on disjoint host sets (one [`Job`] each,
//! as the paper's concurrent allreduces), plus background hosts. [`plan`] and [`run_seeds`]
//! place a file's collective by the model's `placement` and pick its background hosts for a
//! seed; `--runs N` repeats with seeds `seed..seed+N` in parallel.
//!
//! Where it deviates from the paper's SST setup: store-and-forward switches (SST merlin is
//! cut-through; here a packet costs one serialisation per hop), credits return without delay,
//! no virtual channels, minimal routes only (see [`route`]). Switch aggregation follows the
//! program's static switch processes, or, for Canary ([`canary`]), the protocol's rule table
//! at every switch a packet reaches; [`explore`] is Canary's proof by exploration.

mod bounds;
pub mod canary;
mod canary_faults;
mod canary_leader;
mod canary_worker;
pub mod engine;
pub mod explore;
pub mod file;
pub mod job;
pub mod params;
mod port;
pub mod report;
pub mod route;
pub mod traffic;

/// The hosts' retransmission timeout under `retransmit: auto` (a test holds the P4 target's
/// host program to it).
#[cfg(test)]
pub(crate) use canary_faults::Rto;
pub use engine::simulate;
pub use file::{run_file, run_file_with};
pub use params::{Background, Failure, PacketParams, Routing};
pub use report::{JobRun, PacketRun, Recovery, Summary};

use crate::ir::Program;
use crate::net::Net;
use crate::sema::model::{NodeKind, Topology};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;
use rayon::prelude::*;

/// The most runs `--runs` asks for: each is a whole simulation, kept for the summary.
pub const MAX_RUNS: u64 = 1000;

/// Seconds as whole picoseconds (rounded to the nearest).
pub fn ps_of(s: &BigRational) -> u64 {
    (s * BigRational::from_integer(BigInt::from(1_000_000_000_000u64)))
        .round()
        .to_integer()
        .to_u64()
        .unwrap_or(u64::MAX)
}

/// The network as the packet simulator sees it: links, which nodes are switches, the compute
/// nodes.
pub struct Network {
    pub net: Net,
    pub switch: Vec<bool>,
    pub hosts: Vec<u32>,
    pub name: String,
}

impl Network {
    pub fn new(topo: &Topology) -> Network {
        Network {
            net: Net::new(topo),
            switch: topo
                .nodes
                .iter()
                .map(|n| n.kind == NodeKind::Switch)
                .collect(),
            hosts: topo.compute_nodes().map(|n| n as u32).collect(),
            name: topo.name.clone(),
        }
    }
}

/// A program and the compute nodes its ranks run on (rank r on `hosts[r]`).
pub struct Job<'p> {
    pub program: &'p Program,
    pub hosts: Vec<u32>,
    /// The collective's data size (for goodput): [`data_bytes`].
    pub bytes: u64,
    /// Packets each rank may have sent into switch processes without their results back: a
    /// static-trees allreduce's reserved slots (0: no bound). See [`engine`].
    pub window: u32,
}

/// Everything one run simulates.
pub struct Setup<'p> {
    pub jobs: Vec<Job<'p>>,
    /// Canary allreduces, on host sets disjoint from the jobs' and each other's.
    pub canary: Vec<canary::CanaryJob<'p>>,
    /// Hosts generating random uniform traffic (none of the jobs' hosts).
    pub background: Vec<u32>,
    pub seed: u64,
    /// Keep every op's interval for the Chrome trace.
    pub trace: bool,
}

/// A run that could not finish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stuck {
    pub job: u32,
    pub ops_left: usize,
    pub why: String,
    pub kind: StuckKind,
}

/// What stopped a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StuckKind {
    /// Nothing can move, or the result is wrong.
    Stuck,
    /// The limit `flag` at the value given ([`PacketParams::max_events`],
    /// [`PacketParams::max_packets`]), and the least value the run needs when known (else 0).
    Limit(&'static str, u64, u64),
    /// A time parameter above [`bounds::PARAM_MAX`] or a simulated time above
    /// [`bounds::CLOCK_MAX`] picoseconds.
    Clock,
}

/// The collective's data size as the paper's goodput counts it: each rank's vector for
/// allreduce, broadcast and reduce; the gathered output of allgather; the input of
/// reduce-scatter.
pub fn data_bytes(p: &Program) -> u64 {
    let parts = p.spec.input_parts().max(p.spec.output_parts());
    p.spec.part_elements * u64::from(parts) * p.spec.dtype.bytes()
}

/// Where a file's collective runs for `seed`: its ranks' hosts (the declared participants, or
/// a random subset of the compute nodes under `placement: random`) and the background hosts
/// (the model's share or count of the other compute nodes, drawn at random). Err says why the
/// model does not fit the network.
pub fn plan(
    network: &Network,
    declared: &[u32],
    params: &PacketParams,
    seed: u64,
) -> Result<(Vec<Vec<u32>>, Vec<u32>), String> {
    let n = declared.len();
    let k = params.concurrent.max(1) as usize;
    if n.saturating_mul(k) > network.hosts.len() {
        return Err(if k == 1 {
            format!(
                "the collective has {n} participants but the network only {} compute nodes",
                network.hosts.len()
            )
        } else {
            format!(
                "{k} concurrent instances of {n} participants need {} compute nodes; the network has {}",
                n * k,
                network.hosts.len()
            )
        });
    }
    let mut rng = traffic::Rng::new(seed);
    // Instance 0 runs where the collective is placed; under `concurrent: K` the others take
    // hosts drawn at random from the rest (random placement draws all K x n at once).
    let instances: Vec<Vec<u32>> = if params.random_placement {
        let all = traffic::place(&network.hosts, &mut rng);
        all.chunks(n.max(1)).take(k).map(<[u32]>::to_vec).collect()
    } else {
        let mut out = vec![declared.to_vec()];
        if k > 1 {
            let mut others: Vec<u32> = network
                .hosts
                .iter()
                .copied()
                .filter(|h| !declared.contains(h))
                .collect();
            rng.shuffle(&mut others);
            out.extend(others.chunks(n.max(1)).take(k - 1).map(<[u32]>::to_vec));
        }
        out
    };
    let mut taken = vec![false; network.switch.len()];
    for &h in instances.iter().flatten() {
        taken[h as usize] = true;
    }
    let free: Vec<u32> = network
        .hosts
        .iter()
        .copied()
        .filter(|&h| !taken[h as usize])
        .collect();
    let count = match params.background {
        Background::Fraction(f) => (f * free.len() as f64).floor() as usize,
        Background::Hosts(c) if c as usize > free.len() => {
            return Err(format!(
                "`background_hosts: {c}` asks for more hosts than the {} outside the collective",
                free.len()
            ));
        }
        Background::Hosts(c) => c as usize,
    };
    Ok((instances, traffic::congesting(&free, count, &mut rng)))
}

/// Runs `program` (a file's collective on ranks `declared`) with seeds `seed..seed+runs`, in
/// parallel; the runs in seed order. No window bounds its ranks (a file's static trees get
/// theirs from [`run_file`]).
pub fn run_seeds(
    network: &Network,
    program: &Program,
    declared: &[u32],
    params: &PacketParams,
    seed: u64,
    runs: u64,
    trace: bool,
) -> Result<Vec<PacketRun>, Stuck> {
    let bytes = data_bytes(program);
    (seed..seed.saturating_add(runs.max(1)))
        .into_par_iter()
        .map(|s| {
            let (instances, background) =
                plan(network, declared, params, s).map_err(|why| Stuck {
                    job: 0,
                    ops_left: program.op_count(),
                    why,
                    kind: StuckKind::Stuck,
                })?;
            let setup = Setup {
                jobs: instances
                    .into_iter()
                    .map(|hosts| Job {
                        program,
                        hosts,
                        bytes,
                        window: 0,
                    })
                    .collect(),
                canary: Vec::new(),
                background,
                seed: s,
                trace,
            };
            simulate(&network.net, &network.switch, params, &setup)
        })
        .collect()
}
