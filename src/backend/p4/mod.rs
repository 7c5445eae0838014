//! The `p4` target: what it takes to run an in-network schedule on P4 switches of the v1model
//! architecture (BMv2's `simple_switch`; the limits of a Tofino are a profile away).
//!
//! - [`canary`]: Canary's switch, compiled from the protocol's rule table.
//! - [`trees`]: static in-network trees' switch.
//! - [`schema`]: the program's tables, actions and registers with the P4Runtime ids collc fixes
//!   (`@id`), and the P4Info that lists them.
//! - [`project`]: the host program, a Cargo project in `host/` (its sources are in `host/`).
//! - [`emulate`]: collc's own execution of the switches over UDP, for the host program.
//! - [`run`]: `run.sh`, which runs it all on BMv2 in network namespaces.
//! - [`limits`]: the capability check (E0050) against a switch profile, and the report's lines.
//! - [`fabric`]: addresses, ports, routes and the sharded multicast groups of the topology.
//! - [`entries`]: each switch's control-plane state as `simple_switch_CLI` commands and as a
//!   P4Runtime `WriteRequest`.
//! - [`textproto`]: a reader of protobuf text, with which the target's validator reads the
//!   P4Info and the write requests back and checks every entry against the P4Info.
//!
//! [`Limits`] are the target's: lanes (elements per packet), descriptors, multicast groups,
//! ports and frame size; a schedule over one is error E0050 ([`P4Error`]).

pub mod canary;
pub mod emulate;
pub mod entries;
pub mod fabric;
pub mod limits;
pub mod project;
pub mod run;
pub mod schema;
pub mod textproto;
pub mod trees;

use crate::canary::protocol::Protocol;
use crate::sema::model::{CanaryParams, Collective, Family, Model, Schedule, Topology};
use entries::Entry;
use fabric::{Fabric, Shards};
pub use limits::{BMV2, ETHERNET, Limits, P4Error, P4Options, TOFINO, check, report};
use limits::{err, not_emitted};
use num_traits::ToPrimitive;

/// Whole microseconds of `s` seconds, rounded up, at least 1 (BMv2 counts time in
/// microseconds).
pub fn micros(s: &num_rational::BigRational) -> u64 {
    let us = s * num_rational::BigRational::from_integer(1_000_000.into());
    us.ceil().to_integer().to_u64().unwrap_or(u64::MAX).max(1)
}

/// A program for one family: its source, its control-plane objects, what each switch loads,
/// and the README's lines about it.
struct Built {
    /// File stem of the program and its P4Info (`canary`, `static_trees`).
    stem: &'static str,
    source: String,
    schema: schema::Schema,
    /// Per switch of the fabric, in order: its entries.
    entries: Vec<Vec<Entry>>,
    about: String,
    /// Elements per packet, and the hosts' retransmission timeout (microseconds): where it
    /// starts when `adaptive` (`retransmit: auto`, the hosts estimate it as TCP does), else
    /// fixed.
    lanes: u64,
    retransmit_us: u64,
    adaptive: bool,
}

/// Elements per packet of the static-trees program: a Tofino's 32 four-byte elements.
pub const TREE_LANES: u32 = 32;

/// The hosts' retransmission timeout and the switches' reclaim age, microseconds: the target's
/// `retransmit` or the schedule's (2 RTT on the declared network by default, where the hosts
/// start from when they adapt it, [`adaptive`]), and `retransmit x (retries + 2)`.
fn timers(m: &Model, o: &P4Options, cp: &CanaryParams) -> (u64, u64) {
    let retransmit = o
        .retransmit_us
        .unwrap_or_else(|| crate::cost::canary::retransmit(m, cp).map_or(1, |r| micros(&r)));
    (
        retransmit,
        crate::cost::canary::reclaim_after(retransmit, cp),
    )
}

/// True when the hosts adapt their retransmission timeout (the schedule's `retransmit: auto`
/// and no `retransmit` of the target's): as collc's packet simulator does, each estimates it
/// from its blocks' round trips as TCP does (RFC 6298), from the planned value up.
fn adaptive(o: &P4Options, cp: &CanaryParams) -> bool {
    o.retransmit_us.is_none() && matches!(cp.retransmit, crate::sema::model::AutoOr::Auto)
}

/// The schedule, topology and collective the target needs, or why `m` has none to emit.
fn parts(m: &Model) -> Result<(&Schedule, &Topology, &Collective), P4Error> {
    match (&m.schedule, &m.topology, &m.collective) {
        (Some(s), Some(t), Some(c)) => Ok((s, t, c)),
        _ => Err(err(
            "the file declares no collective on a topology".into(),
            "nothing to emit",
            "declare a topology, a collective and a schedule".into(),
        )),
    }
}

/// The trees of a static-trees schedule (E0050 when they cannot be built).
fn trees_of(
    topo: &Topology,
    c: &Collective,
    trees: u64,
    roots: &crate::sema::model::TreeRoots,
) -> Result<Vec<crate::lower::static_trees::Rooted>, P4Error> {
    crate::lower::static_trees::parents(topo, c, trees, roots)
        .map_err(|(msg, help)| err(msg, "static trees cannot be built", help))
}

/// What [`emulate::start`] needs to run `m`'s switches: the fabric, the program and the lanes.
pub fn emulation(m: &Model, o: &P4Options) -> Result<(Fabric, emulate::Program, usize), P4Error> {
    let (s, topo, c) = parts(m)?;
    let fabric = Fabric::new(topo);
    match &s.family {
        Family::Canary(cp) => {
            let (_, reclaim) = timers(m, o, cp);
            let program = emulate::Program::Canary {
                protocol: Protocol::paper(),
                timeout_us: micros(&cp.timeout),
                reclaim_us: reclaim,
                table_size: cp.table_size as u32,
                wire: Shards::new(fabric.max_ports(), cp.shards as u32),
            };
            Ok((fabric, program, cp.elements_per_packet as usize))
        }
        Family::StaticTrees {
            trees,
            roots,
            slots,
        } => {
            let shapes = trees_of(topo, c, *trees, roots)?;
            let program = emulate::Program::Trees {
                trees: shapes,
                slots: *slots,
            };
            Ok((fabric, program, TREE_LANES as usize))
        }
        f => Err(not_emitted(f)),
    }
}

fn build_canary(m: &Model, o: &P4Options, cp: &CanaryParams, fabric: &Fabric) -> Built {
    let topo = m.topology.as_ref().map_or("", |t| t.name.as_str());
    let wire = Shards::new(fabric.max_ports(), cp.shards as u32);
    let shards = Shards::multicast(fabric.max_ports(), canary::GROUP_WIDTH);
    let shape = canary::Shape {
        lanes: cp.elements_per_packet as u32,
        slots: cp.table_size,
        shards,
        wire,
        nodes: fabric.names.len() as u64,
    };
    let schema = canary::schema(&shape);
    let title = format!(
        "Canary switch for topology `{topo}`: {} elements per packet, {} descriptors",
        cp.elements_per_packet, cp.table_size
    );
    let timeout = micros(&cp.timeout);
    let (retransmit, reclaim) = timers(m, o, cp);
    let mut entries = Vec::new();
    for sw in &fabric.switches {
        let mut es = vec![Entry::Default {
            table: "config".into(),
            action: "set_switch".into(),
            args: vec![sw.node as u64, timeout, reclaim],
        }];
        for k in 0..sw.ports.len() as u32 {
            es.push(Entry::Add {
                table: "port".into(),
                keys: vec![u64::from(k)],
                action: "port_bits".into(),
                args: vec![1u64 << k.min(63), u64::from(wire.wire(k))],
            });
        }
        for &(d, k) in &sw.routes {
            es.push(Entry::Add {
                table: "route".into(),
                keys: vec![d as u64],
                action: "to_port".into(),
                args: vec![u64::from(k)],
            });
        }
        for (id, ports) in shards.switch_groups(sw.ports.len() as u32) {
            es.push(Entry::Group { id, ports });
        }
        es.push(Entry::Clone {
            session: canary::CLONE_SESSION,
            port: 0,
        });
        entries.push(es);
    }
    let scan = shape.slots.saturating_mul(o.clock_period_us);
    let hosts = if adaptive(o, cp) {
        format!(
            "the hosts retransmit after {retransmit} us at first, then each after SRTT + 4 RTTVAR of the round trips of its blocks, never sooner, doubling per timeout of a block (`retransmit: auto`, as TCP, RFC 6298)"
        )
    } else {
        format!("the hosts retransmit after {retransmit} us")
    };
    let about = format!(
        "Frames: Ethernet (EtherType 0x{:04X}), the 19-byte Canary header, {} 32-bit elements.\n\
Timers: a switch scans one descriptor per clock packet (kind {}) arriving on its clock port (its last port); with a clock packet every {} us, a timeout of {timeout} us fires up to {scan} us late. Descriptors older than {reclaim} us are reclaimed ({hosts}).\n\
Multicast: groups of up to {} ports ({} per switch at most); a children bitmap over several shards is sent one shard per pass, recirculating the rest.\n",
        canary::ETHERTYPE,
        shape.lanes,
        canary::CLOCK_KIND,
        o.clock_period_us,
        canary::GROUP_WIDTH,
        shards.switch_groups(fabric.max_ports()).len(),
    );
    Built {
        lanes: cp.elements_per_packet,
        retransmit_us: retransmit,
        adaptive: adaptive(o, cp),
        stem: "canary",
        source: canary::program(&Protocol::paper(), &shape, &title),
        schema,
        entries,
        about,
    }
}

fn build_trees(
    topo: &Topology,
    c: &Collective,
    trees: u64,
    roots: &crate::sema::model::TreeRoots,
    slots: u64,
    fabric: &Fabric,
) -> Result<Built, P4Error> {
    let shapes = trees_of(topo, c, trees, roots)?;
    let mut entries = Vec::new();
    for sw in &fabric.switches {
        let mut es = Vec::new();
        for (t, (root, parent)) in shapes.iter().enumerate() {
            let children: Vec<u32> = sw
                .ports
                .iter()
                .enumerate()
                .filter(|(_, w)| parent.get(w) == Some(&sw.node))
                .map(|(k, _)| k as u32)
                .collect();
            let up = parent
                .get(&sw.node)
                .and_then(|p| sw.ports.iter().position(|x| x == p));
            if children.is_empty() || (up.is_none() && *root != sw.node) {
                continue;
            }
            let group = t as u32 + 1;
            es.push(Entry::Add {
                table: "tree".into(),
                keys: vec![t as u64],
                action: "tree_node".into(),
                args: vec![
                    children.len() as u64,
                    u64::from(*root == sw.node),
                    up.unwrap_or(0) as u64,
                    u64::from(group),
                ],
            });
            es.push(Entry::Group {
                id: group,
                ports: children,
            });
        }
        entries.push(es);
    }
    let names: Vec<&str> = shapes
        .iter()
        .map(|(r, _)| fabric.names[*r].as_str())
        .collect();
    Ok(Built {
        lanes: u64::from(TREE_LANES),
        retransmit_us: 0,
        adaptive: false,
        stem: "static_trees",
        source: trees::program(
            TREE_LANES,
            slots,
            &format!(
                "Static trees for topology `{}`: {} trees rooted at {}",
                topo.name,
                shapes.len(),
                names.join(", ")
            ),
        ),
        schema: trees::schema(TREE_LANES, slots),
        entries,
        about: format!(
            "Frames: Ethernet (EtherType 0x{:04X}), the 19-byte Canary header (its `switch` field names the tree: block b on tree b mod {}), {TREE_LANES} 32-bit elements.\n\
Trees: rooted at {}; a switch aggregates a block from its tree children, sends the sum to its parent, and the root multicasts the result down. Slots are the block sequence mod {}: hosts keep at most that many blocks in flight.\n",
            canary::ETHERTYPE,
            shapes.len(),
            names.join(", "),
            slots
        ),
    })
}

/// Everything the target writes for `m` (which passed [`check`]): paths and bytes, in path
/// order.
pub fn emit(m: &Model, o: &P4Options) -> Result<Vec<(String, Vec<u8>)>, P4Error> {
    let (s, topo, c) = parts(m)?;
    let fabric = Fabric::new(topo);
    let built = match &s.family {
        Family::Canary(cp) => build_canary(m, o, cp, &fabric),
        Family::StaticTrees {
            trees,
            roots,
            slots,
        } => build_trees(topo, c, *trees, roots, *slots, &fabric)?,
        f => return Err(not_emitted(f)),
    };
    let mut files = vec![
        (format!("{}.p4", built.stem), built.source.into_bytes()),
        (
            format!("{}.p4info.txtpb", built.stem),
            built.schema.p4info().into_bytes(),
        ),
    ];
    let mut wiring =
        String::from("# switch port node (each switch's last port is its clock port)\n");
    for (device, (sw, es)) in fabric.switches.iter().zip(&built.entries).enumerate() {
        for (k, &to) in sw.ports.iter().enumerate() {
            wiring.push_str(&format!("{} {k} {}\n", sw.name, fabric.names[to]));
        }
        wiring.push_str(&format!("{} {} clock\n", sw.name, sw.ports.len()));
        let stem = file_name(&sw.name);
        files.push((
            format!("switches/{stem}.cli.txt"),
            entries::cli(&built.schema, es).into_bytes(),
        ));
        files.push((
            format!("switches/{stem}.p4runtime.txtpb"),
            entries::p4runtime(&built.schema, es, device).into_bytes(),
        ));
    }
    files.push(("wiring.txt".into(), wiring.into_bytes()));
    let timer = (built.retransmit_us, built.adaptive);
    let plan = project::plan(m, &fabric, built.lanes, timer).map_err(|e| {
        err(
            e,
            "the host program cannot be planned",
            "link every participant to a switch".into(),
        )
    })?;
    files.extend(project::files(plan, &o.package));
    let clock_us = matches!(s.family, Family::Canary(_)).then_some(o.clock_period_us);
    files.push((
        "run.sh".into(),
        run::script(
            &fabric,
            &run::Run {
                package: &o.package,
                stem: built.stem,
                ranks: &c.ranks,
                clock_us,
            },
        )
        .into_bytes(),
    ));
    let hosts: Vec<String> = c
        .ranks
        .iter()
        .map(|&r| format!("{} {}", fabric.names[r], r))
        .collect();
    files.push((
        "hosts.txt".into(),
        format!("# rank order: host node-address\n{}\n", hosts.join("\n")).into_bytes(),
    ));
    let readme = format!(
        "{MARK}\n\n`{}` for topology `{}` ({} switches), v1model, limits of `{}`.\n\n\
- `{stem}.p4`: the switch program (P4_16, v1model); compile with\n  `p4c --target bmv2 --arch v1model -o build {stem}.p4`.\n\
- `{stem}.p4info.txtpb`: its P4Info; the program fixes every id with `@id`, so p4c's P4Info lists the same ids.\n\
- `switches/NAME.cli.txt`: a switch's table entries, multicast groups and clone session for `simple_switch_CLI` (load into a fresh switch: multicast node handles count from 0).\n\
- `switches/NAME.p4runtime.txtpb`: the same state as a P4Runtime `WriteRequest` (protobuf text).\n\
- `wiring.txt`: which node each switch port leads to; `hosts.txt`: the ranks' hosts and addresses.\n\
- `run.sh`: runs it on BMv2 (as root): compiles the program, builds the host program, wires one network namespace per host to one `simple_switch` per switch, loads the entries, starts the clock packets and every rank with `--check`.\n\
- `host/`: the hosts' program (a Cargo project; `cargo build --release` in it): `--rank R --iface IF` on a host wired to a switch, `--check` to compare with a host-side reduction, `--bench N`; `clock --iface IF,...` sends the switches' clock packets.\n\n{}",
        s.family.name(),
        topo.name,
        fabric.switches.len(),
        o.limits.name,
        built.about,
        stem = built.stem,
    );
    files.push(("README.md".into(), readme.into_bytes()));
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

/// A node name as a file name: `leaf[0]` is `leaf_0` (brackets and other punctuation become
/// `_`, trailing ones go).
pub fn file_name(node: &str) -> String {
    let s: String = node
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut t = String::new();
    for c in s.chars() {
        if !(c == '_' && t.ends_with('_')) {
            t.push(c);
        }
    }
    t.trim_end_matches('_').to_string()
}

/// The first line of the README, by which an existing output directory is recognised.
pub const MARK: &str = "# collc P4 target";

/// The host program's plan, compiled here too so a test can hold it to the simulator's.
#[cfg(test)]
#[path = "host/plan.rs"]
#[allow(dead_code)]
mod host_plan;

/// The host program's retransmission timeout, compiled here too so a test can hold it to the
/// simulator's.
#[cfg(test)]
#[path = "host/rto.rs"]
mod host_rto;

#[cfg(test)]
mod tests {
    use super::host_plan;
    use crate::canary::host::Plan;
    use crate::sema::model::LeaderPolicy;

    #[test]
    fn a_trees_plan_must_give_the_window_the_switches_have() {
        let plan = "family static_trees\nhost 0 0 2\nhost 1 1 2\nelements 64\nlanes 32\ntrees 1\n";
        let err = host_plan::Plan::parse(plan).expect_err("no window");
        assert!(err.contains("need a `window`"), "{err}");
        let host = host_plan::Plan::parse(&format!("{plan}window 16\n")).expect("parses");
        assert_eq!(host.window, 16);
    }

    #[test]
    fn the_host_program_cuts_leads_and_roots_blocks_as_the_simulator_does() {
        for (policy, word) in [
            (LeaderPolicy::RoundRobin, "round_robin"),
            (LeaderPolicy::First, "first"),
            (LeaderPolicy::Hash, "hash"),
        ] {
            for leader_roots in [false, true] {
                let sim = Plan {
                    app: 5,
                    hosts: vec![0, 1, 2, 3],
                    blocks: 37,
                    roots: if leader_roots {
                        vec![4, 4, 5, 5]
                    } else {
                        vec![6, 7, 8]
                    },
                    leader_roots,
                    leader: policy,
                    seed: 0,
                    reduce_root: None,
                    broadcast_root: None,
                    contributors: false,
                };
                let roots: Vec<String> = sim.roots.iter().map(|r| r.to_string()).collect();
                let text = format!(
                    "family canary\nhost 0 0 4\nhost 1 1 4\nhost 2 2 5\nhost 3 3 5\nelements {}\nlanes 32\napp 5\nleader {word}\nroots {} {}\n",
                    37 * 32 - 5,
                    if leader_roots {
                        "per_leader"
                    } else {
                        "in_turn"
                    },
                    roots.join(" ")
                );
                let host = host_plan::Plan::parse(&text).expect("parses");
                assert_eq!(host.blocks(), sim.blocks);
                for b in 0..sim.blocks {
                    for g in 0..3 {
                        assert_eq!(host.id(b, g), sim.id_gen(b, g));
                        assert_eq!(host.block_of(sim.id_gen(b, g)), b);
                        assert_eq!(host.gen_of(sim.id_gen(b, g)), g);
                    }
                    assert_eq!(host.leader(b), sim.leader(b), "{word} block {b}");
                    assert_eq!(host.root(b), sim.root(b), "{word} block {b}");
                    assert_eq!(
                        host_plan::crc32(sim.id(b)),
                        crate::canary::switch::crc32(sim.id(b))
                    );
                }
            }
        }
    }

    #[test]
    fn the_host_program_estimates_its_timeout_as_the_simulator_does() {
        use std::time::Duration;
        let floor = 28_000;
        let mut sim = crate::sim::packet::Rto::new(floor);
        let mut host = super::host_rto::Rto::new(Duration::from_nanos(floor), true);
        // Round trips growing as the links fill, then settling, then short again.
        let rtts = (0..200u64).map(|i| match i {
            0..50 => 20_000 + 3_000 * i,
            50..150 => 170_000 + (i * 7_919) % 40_000,
            _ => 9_000,
        });
        for rtt in rtts {
            sim.sample(rtt);
            host.sample(Duration::from_nanos(rtt));
            assert_eq!(host.timeout(), Duration::from_nanos(sim.rto), "after {rtt}");
        }
        let plan =
            "family canary\nhost 0 0 2\nhost 1 1 2\nelements 64\nlanes 32\nroots in_turn 2\n";
        let auto = host_plan::Plan::parse(&format!("{plan}retransmit_us 28 auto\n")).expect("auto");
        assert_eq!(
            (auto.retransmit, auto.adaptive),
            (Duration::from_micros(28), true)
        );
        let fixed = host_plan::Plan::parse(&format!("{plan}retransmit_us 300\n")).expect("fixed");
        assert_eq!(
            (fixed.retransmit, fixed.adaptive),
            (Duration::from_micros(300), false)
        );
    }
}
