//! The packet-level simulator (`collc::sim::packet`) against closed forms, the flow model,
//! itself (determinism), the Canary paper's adaptive routing rule, and its diagnostics.

use collc::diag::{Code, SourceMap};
use collc::ir::{Buf, Deps, OpKind, ProcKind, Program, Slice, Spec};
use collc::net::FlowParams;
use collc::sema::model::{CollectiveKind, Dtype, Model, ReduceOp};
use collc::sema::{Options, check};
use collc::sim::packet::{self, Job, Network, PacketParams, Routing, Setup, report};

fn model(src: &str) -> Model {
    let mut sources = SourceMap::new();
    let id = sources.add("test.coll", src.to_string());
    let c = check(&mut sources, id, &Options::default());
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    c.model.expect("checks")
}

/// The hosts of the file's collective, as the packet simulator numbers nodes.
fn declared(m: &Model) -> Vec<u32> {
    m.collective
        .as_ref()
        .expect("a collective")
        .ranks
        .iter()
        .map(|&h| h as u32)
        .collect()
}

fn codes(src: &str) -> Vec<Code> {
    let mut sources = SourceMap::new();
    let id = sources.add("test.coll", src.to_string());
    check(&mut sources, id, &Options::default())
        .diagnostics
        .iter()
        .map(|d| d.code)
        .collect()
}

fn spec(ranks: u32, bytes: u64, chunks: u32) -> Spec {
    Spec {
        kind: CollectiveKind::Allreduce,
        ranks,
        part_elements: bytes / 4,
        chunks_per_part: chunks,
        dtype: Dtype::I32,
        op: ReduceOp::Sum,
        root: None,
    }
}

/// Rank 0 sends its whole input to rank 1 (one message).
fn one_message(bytes: u64) -> Program {
    let mut p = Program::new("one message", spec(2, bytes, 1));
    let all = Slice::new(Buf::Input, 0, 1);
    p.push(
        0,
        OpKind::Send {
            peer: 1,
            src: all,
            tag: 0,
        },
        Deps::new(),
    );
    p.push(
        1,
        OpKind::Recv {
            peer: 0,
            dst: Slice::new(Buf::Output, 0, 1),
            tag: 0,
        },
        Deps::new(),
    );
    p
}

fn run(m: &Model, p: &Program, hosts: Vec<u32>, params: &PacketParams) -> packet::PacketRun {
    let network = Network::new(m.topology.as_ref().expect("topology"));
    let setup = Setup {
        jobs: vec![Job {
            program: p,
            hosts,
            bytes: packet::data_bytes(p),
            window: 0,
        }],
        canary: Vec::new(),
        background: Vec::new(),
        seed: 1,
        trace: false,
    };
    packet::simulate(&network.net, &network.switch, params, &setup).expect("finishes")
}

/// Wire bytes of a message under `params` (payload plus a header per packet).
fn wire(params: &PacketParams, bytes: u64) -> u64 {
    bytes + params.packets(bytes) * params.header
}

const TWO_HOSTS: &str =
    "topology t { compute a; compute b; link a <-> b : 100 Gbps, latency 1 us; }
collective allreduce { size: 1 KiB; }";

#[test]
fn one_message_over_one_link_is_the_closed_form() {
    let m = model(TWO_HOSTS);
    let params = PacketParams::default();
    for bytes in [4u64, 1024, 1028, 10_000, 1 << 20] {
        let r = run(&m, &one_message(bytes), vec![0, 1], &params);
        // 100 Gb/s is 80 ps per byte; the host overhead, every packet serialised back to back,
        // then the link latency (no switch on the way).
        let expect = params.overhead + wire(&params, bytes) * 80 + 1_000_000;
        assert_eq!(r.jobs[0].end, expect, "{bytes} B");
        assert_eq!(r.packets, params.packets(bytes));
        assert_eq!(r.link_bytes.iter().sum::<u64>(), wire(&params, bytes));
    }
}

const STAR: &str = "topology t { compute h[4]; switch s; for i in 0..4 { link h[i] <-> s : 100 Gbps, latency 500 ns; } }
collective allreduce { size: 1 KiB; }";

#[test]
fn store_and_forward_through_a_switch_adds_one_packet_and_the_delays() {
    let m = model(STAR);
    let params = PacketParams::default();
    let bytes = 10_000; // 9 full packets and one of 784 B
    let r = run(&m, &one_message(bytes), vec![0, 1], &params);
    // The second link is busy from the first packet's arrival on: one more full packet's time,
    // the switch delay and the second latency.
    let first = params.mtu * 80;
    let expect =
        params.overhead + wire(&params, bytes) * 80 + first + params.switch_delay + 2 * 500_000;
    assert_eq!(r.jobs[0].end, expect);
}

/// Four ranks under one switch; the switch process sums their inputs packet by packet and
/// sends the sum back to each (a one-switch static tree).
fn switch_allreduce(bytes: u64) -> Program {
    let mut p = Program::new("one-switch tree", spec(4, bytes, 1));
    let s = p.procs.len() as u32;
    p.procs.push(collc::ir::Proc {
        kind: ProcKind::Switch("s".into()),
        scratch: 1,
        ops: Vec::new(),
    });
    let acc = Slice::one(Buf::Scratch, 0);
    for r in 0..4 {
        p.push(
            r,
            OpKind::Send {
                peer: s,
                src: Slice::one(Buf::Input, 0),
                tag: 0,
            },
            Deps::new(),
        );
    }
    let mut prev = p.push(
        s,
        OpKind::Recv {
            peer: 0,
            dst: acc,
            tag: 0,
        },
        Deps::new(),
    );
    for r in 1..4 {
        prev = p.push(
            s,
            OpKind::RecvReduce {
                peer: r,
                dst: acc,
                tag: 0,
            },
            Deps::from_slice(&[prev]),
        );
    }
    for r in 0..4 {
        p.push(
            s,
            OpKind::Send {
                peer: r,
                src: acc,
                tag: 1,
            },
            Deps::from_slice(&[prev]),
        );
        p.push(
            r,
            OpKind::Recv {
                peer: s,
                dst: Slice::one(Buf::Output, 0),
                tag: 1,
            },
            Deps::new(),
        );
    }
    p
}

#[test]
fn switch_processes_stream_per_packet() {
    let m = model(STAR);
    let bytes = 64 * 1024;
    let prog = switch_allreduce(bytes);
    collc::ir::verify::verify(&prog).expect("the hand-built tree is a correct allreduce");
    let params = PacketParams::default();
    let r = run(&m, &prog, vec![0, 1, 2, 3], &params);
    // Streaming: the sum of packet i leaves as soon as packet i of all four inputs is in, so
    // the whole allreduce takes what one message through the switch takes.
    let through = params.overhead
        + wire(&params, bytes) * 80
        + params.mtu * 80
        + params.switch_delay
        + 2 * 500_000;
    assert_eq!(r.jobs[0].end, through);
    // At message level it would take two full message times.
    assert!(r.jobs[0].end < 2 * wire(&params, bytes) * 80);
    // A per-packet aggregation delay delays each of the three chained reductions once.
    let slow = PacketParams {
        aggregation_delay: 50_000,
        ..PacketParams::default()
    };
    let r2 = run(&m, &prog, vec![0, 1, 2, 3], &slow);
    assert_eq!(r2.jobs[0].end, through + 3 * 50_000);
}

fn ring_model(n: u32, size: &str) -> Model {
    model(&format!(
        "import ring;\ntopology t = ring(n: {n}, bw: 25 GB/s, lat: 1 us);\ncollective allreduce {{ size: {size}; dtype: f32; }}\nschedule ring;"
    ))
}

#[test]
fn ring_allreduce_on_a_ring_is_two_n_minus_one_steps() {
    for n in [2u32, 5, 8] {
        let m = ring_model(n, "8 MiB");
        let (prog, _) = collc::lower::lower_and_verify(&m).expect("lowers");
        let params = PacketParams::default();
        let hosts: Vec<u32> = m
            .collective
            .as_ref()
            .unwrap()
            .ranks
            .iter()
            .map(|&h| h as u32)
            .collect();
        let r = run(&m, &prog, hosts, &params);
        let mbytes = 8u64 << 20;
        // 2(N-1) dependent steps; each moves a chunk of M/N (the ring's chunks differ by at most
        // an element) over one link at 25 GB/s (40 ps per byte), after the host overhead, plus
        // the link latency. Exact when N divides M's elements; within a packet otherwise.
        let chunk = (mbytes / 4).div_ceil(u64::from(n)) * 4;
        let step = params.overhead + wire(&params, chunk) * 40 + 1_000_000;
        let steps = 2 * u64::from(n - 1);
        let t = r.jobs[0].end;
        assert!(t <= steps * step, "{n}: {t} > {}", steps * step);
        let small = params.overhead + wire(&params, mbytes / 4 / u64::from(n) * 4) * 40 + 1_000_000;
        assert!(t >= steps * small, "{n}: {t} < {}", steps * small);
        if (mbytes / 4) % u64::from(n) == 0 {
            assert_eq!(t, steps * step);
        }
        // The closed form 2(N-1)/N x M / bandwidth plus latency terms, within packetisation
        // (the headers: 57 B per 1024 B of payload; at most one packet more per step).
        let bw_term = steps as f64 / f64::from(n) * mbytes as f64 / 25e9;
        let lat_terms = steps as f64 * (1e-6 + params.overhead as f64 * 1e-12);
        let secs = t as f64 * 1e-12;
        let header = params.header as f64 / params.payload() as f64;
        assert!(secs >= bw_term + lat_terms - 1e-12, "{n}");
        let one_packet = steps as f64 * params.mtu as f64 / 25e9;
        assert!(
            secs <= bw_term * (1.0 + header) + lat_terms + one_packet,
            "{n}"
        );
    }
}

#[test]
fn packet_and_flow_models_agree_when_bandwidth_bound() {
    // 4 KiB payloads (header share 1.4%); the flow model with the same per-message overhead.
    // Stated tolerance: 3%, the header share plus store-and-forward of one packet per hop.
    let params = PacketParams {
        mtu: 4096 + 57,
        ..PacketParams::default()
    };
    let flow = FlowParams {
        overhead: num_rational::BigRational::new(1.into(), 10_000_000.into()),
        ..FlowParams::default()
    };
    for src in [
        "import ring;\ntopology t = ring(n: 6, bw: 25 GB/s, lat: 1 us);\ncollective allreduce { size: 32 MiB; dtype: f32; }\nschedule ring;",
        "import fat_tree;\ntopology t = fat_tree(leaves: 2, hosts_per_leaf: 4, spines: 4, host_bw: 100 Gbps, spine_bw: 100 Gbps);\ncollective allreduce { size: 16 MiB; dtype: f32; }\nschedule ring;",
    ] {
        let m = model(src);
        let (prog, _) = collc::lower::lower_and_verify(&m).expect("lowers");
        let hosts: Vec<u32> = m
            .collective
            .as_ref()
            .unwrap()
            .ranks
            .iter()
            .map(|&h| h as u32)
            .collect();
        let p = run(
            &m,
            &prog,
            hosts,
            &PacketParams {
                routing: Routing::Minimal,
                ..params.clone()
            },
        );
        let net = collc::net::Net::new(m.topology.as_ref().unwrap());
        let lowered = collc::sim::fluid::lower(&m, &flow).expect("lowers");
        let f = lowered
            .simulate(&net, &flow, false)
            .expect("runs")
            .seconds();
        let ps = p.jobs[0].seconds();
        let rel = (ps - f) / f;
        assert!(
            rel.abs() < 0.03,
            "packet {ps} s, flow {f} s ({:+.2}%)",
            rel * 100.0
        );
    }
}

const FAT: &str = "import fat_tree;
topology t = fat_tree(leaves: 4, hosts_per_leaf: 4, spines: 4, host_bw: 100 Gbps, spine_bw: 100 Gbps);
collective allreduce { participants: host[0..2]; size: 1 MiB; dtype: f32; }
schedule ring;
model bg: packet { placement: random; background: 1; background_size: 16 KiB; }";

#[test]
fn same_seed_same_report_other_seed_other_run() {
    let m = model(FAT);
    let (prog, _) = collc::lower::lower_and_verify(&m).expect("lowers");
    let params = PacketParams::from_model(&m.models[0]).expect("packet model");
    let network = Network::new(m.topology.as_ref().unwrap());
    let declared = declared(&m);
    let a = packet::run_seeds(&network, &prog, &declared, &params, 5, 3, true).expect("runs");
    let b = packet::run_seeds(&network, &prog, &declared, &params, 5, 3, true).expect("runs");
    assert_eq!(a, b);
    let text =
        |r: &[packet::PacketRun]| report::render(&network, &params, CollectiveKind::Allreduce, r);
    assert_eq!(text(&a), text(&b));
    assert_eq!(a[0].chrome_json(), b[0].chrome_json());
    assert!(
        a[0].bg_hosts == 8 && a[0].bg_messages > 8,
        "{:?}",
        a[0].bg_messages
    );
    // Different seeds place the ranks differently.
    assert_ne!(a[0].jobs[0].hosts, a[1].jobs[0].hosts);
    assert!(text(&a).contains("over 3 runs: median"));
}

#[test]
fn background_traffic_slows_the_collective() {
    let m = model(FAT);
    let (prog, _) = collc::lower::lower_and_verify(&m).expect("lowers");
    let network = Network::new(m.topology.as_ref().unwrap());
    let declared = declared(&m);
    let busy = PacketParams::from_model(&m.models[0]).expect("packet model");
    let quiet = PacketParams {
        background: packet::Background::Fraction(0.0),
        ..busy.clone()
    };
    let with = packet::run_seeds(&network, &prog, &declared, &busy, 1, 1, false).unwrap();
    let without = packet::run_seeds(&network, &prog, &declared, &quiet, 1, 1, false).unwrap();
    assert_eq!(with[0].jobs[0].hosts, without[0].jobs[0].hosts);
    assert!(with[0].jobs[0].end > without[0].jobs[0].end);
    assert!(with[0].bg_bytes > 0 && without[0].bg_bytes == 0);
    assert!(
        with[0].average_utilisation(&network.net) > without[0].average_utilisation(&network.net)
    );
}

#[test]
fn adaptive_routing_spreads_over_the_up_ports_ecmp_does_not() {
    // Uplinks at half the host rate: one message through a single uplink runs at 50 Gb/s. The
    // adaptive rule moves packets to the other uplink once the default one is half full.
    let m = model(
        "import fat_tree;
topology t = fat_tree(leaves: 2, hosts_per_leaf: 1, spines: 2, host_bw: 100 Gbps, spine_bw: 50 Gbps);
collective allreduce { size: 1 KiB; }",
    );
    let bytes = 1 << 20;
    let prog = one_message(bytes);
    let network = Network::new(m.topology.as_ref().unwrap());
    let time = |routing| {
        let r = run(
            &m,
            &prog,
            vec![0, 1],
            &PacketParams {
                routing,
                ..PacketParams::default()
            },
        );
        let ups: Vec<u64> = network
            .net
            .links
            .iter()
            .zip(&r.link_bytes)
            .filter(|(l, _)| {
                network.net.names[l.from] == "leaf[0]"
                    && network.net.names[l.to].starts_with("spine")
            })
            .map(|x| *x.1)
            .collect();
        (r.jobs[0].end, ups)
    };
    let (adaptive, a_ups) = time(Routing::Adaptive);
    let (ecmp, e_ups) = time(Routing::Ecmp);
    assert!(
        a_ups.iter().all(|&b| b > 0),
        "adaptive uses both uplinks: {a_ups:?}"
    );
    assert_eq!(
        e_ups.iter().filter(|&&b| b > 0).count(),
        1,
        "ECMP keeps a flow on one: {e_ups:?}"
    );
    let line = wire(&PacketParams::default(), bytes) * 80;
    assert!(
        ecmp > 2 * line - line / 20,
        "ECMP runs at the uplink's half rate"
    );
    assert!(
        adaptive < line + line / 5,
        "adaptive runs near the host's rate: {adaptive} vs {line}"
    );
}

#[test]
fn bad_packet_parameters_get_coded_diagnostics() {
    let base = "import ring;\ntopology t = ring(n: 4, bw: 25 GB/s);\ncollective allreduce { size: 1 MiB; }\n";
    let with = |m: &str| codes(&format!("{base}model p: packet {{ {m} }}"));
    assert_eq!(with("queue: 0 B;"), vec![Code::NonPositive]);
    assert_eq!(with("mtu: 57 B;"), vec![Code::BadValue]);
    assert_eq!(with("mtu: 40 B; header: 64 B;"), vec![Code::BadValue]);
    assert_eq!(with("queue: 1 KiB;"), vec![Code::BadValue]);
    assert_eq!(with("background: 1.5;"), vec![Code::BadValue]);
    assert_eq!(
        with("background: 0.5; background_hosts: 3;"),
        vec![Code::BadValue]
    );
    assert_eq!(with("background_hosts: 2.5;"), vec![Code::TypeMismatch]);
    assert_eq!(with("background_size: 0 B;"), vec![Code::NonPositive]);
    assert_eq!(with("routing: valiant;").len(), 1);
    assert_eq!(with("switch_delay: -1 ns;"), vec![Code::NonPositive]);
    assert!(with("mtu: 4153 B; queue: 256 KiB; routing: ecmp; background: 0.25;").is_empty());
    // More background hosts than the network has outside the collective.
    let m = model(&format!("{base}model p: packet {{ background_hosts: 1; }}"));
    let params = PacketParams::from_model(&m.models[0]).unwrap();
    let network = Network::new(m.topology.as_ref().unwrap());
    let err = packet::plan(&network, &[0, 1, 2, 3], &params, 1).unwrap_err();
    assert!(err.contains("more hosts than the 0 outside"), "{err}");
}

#[test]
fn the_cli_runs_a_packet_model_with_seeds() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.coll");
    std::fs::write(&file, FAT).unwrap();
    let trace = dir.path().join("t.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_collc"))
        .args([
            "sim",
            file.to_str().unwrap(),
            "--model",
            "bg",
            "--seed",
            "3",
            "--runs",
            "2",
            "--trace",
        ])
        .arg(&trace)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.starts_with("packet model on `t`"), "{text}");
    assert!(text.contains("model `bg`") && text.contains("routing adaptive"));
    assert!(text.contains("over 2 runs: median"));
    assert!(text.contains("average network utilisation"));
    assert!(
        std::fs::read_to_string(&trace)
            .unwrap()
            .contains("traceEvents")
    );
    let unused = std::process::Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(["sim", "examples/ring_8.coll", "--seed", "3"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(unused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unused.stderr).contains("E0024"));
}

#[test]
fn concurrent_collectives_on_disjoint_hosts_share_the_network() {
    let m = model(
        "import fat_tree;
topology t = fat_tree(leaves: 2, hosts_per_leaf: 4, spines: 2, host_bw: 100 Gbps, spine_bw: 100 Gbps);
collective allreduce { participants: host[0][0..2]; size: 1 MiB; dtype: f32; }
schedule ring;",
    );
    let (prog, _) = collc::lower::lower_and_verify(&m).expect("lowers");
    let network = Network::new(m.topology.as_ref().unwrap());
    let params = PacketParams::default();
    // Each job's ranks alternate between the leaves, so every ring crosses the spines.
    let sets: [Vec<u32>; 2] = [vec![0, 4], vec![1, 5]];
    let solo = |hosts: &Vec<u32>| run(&m, &prog, hosts.clone(), &params).jobs[0].end;
    let setup = Setup {
        jobs: sets
            .iter()
            .map(|h| Job {
                program: &prog,
                hosts: h.clone(),
                bytes: packet::data_bytes(&prog),
                window: 0,
            })
            .collect(),
        canary: Vec::new(),
        background: vec![2, 3, 6, 7],
        seed: 9,
        trace: true,
    };
    let both = packet::simulate(&network.net, &network.switch, &params, &setup).expect("finishes");
    assert_eq!(both.jobs.len(), 2);
    for (j, hosts) in sets.iter().enumerate() {
        assert_eq!(&both.jobs[j].hosts, hosts);
        assert!(both.jobs[j].end >= solo(hosts), "job {j}");
    }
    assert_eq!(both.end, both.jobs.iter().map(|j| j.end).max().unwrap());
    assert!(both.bg_messages >= 4);
    let trace = both.chrome_json().expect("traced");
    // Job 1's processes follow job 0's two in the trace.
    assert!(trace.contains("\"pid\":3"));
}

#[path = "packet_support/trees.rs"]
mod trees;

#[test]
fn static_trees_as_switch_processes_beat_the_ring_without_congestion() {
    // The paper's Fig. 2 shape at small scale: in-network trees move each byte over each host
    // link once in each direction, the ring twice, so trees reach about twice its goodput.
    let m = model(
        "import fat_tree;
topology t = fat_tree(leaves: 4, hosts_per_leaf: 4, spines: 4, host_bw: 100 Gbps, spine_bw: 100 Gbps);
collective allreduce { participants: all; size: 1 MiB; dtype: i32; }
schedule ring;",
    );
    let network = Network::new(m.topology.as_ref().unwrap());
    let hosts: Vec<u32> = (0..16).collect();
    let (ring, _) = collc::lower::lower_and_verify(&m).expect("lowers");
    let params = PacketParams::default();
    let ring_t = run(&m, &ring, hosts.clone(), &params).jobs[0].end;
    for t in [1, 4] {
        let prog = trees::static_trees(&network.net, &hosts, t, 16, 1 << 20, 3);
        collc::ir::verify::verify(&prog).expect("the trees are a correct allreduce");
        let r = run(&m, &prog, hosts.clone(), &params);
        let ratio = ring_t as f64 / r.jobs[0].end as f64;
        assert!(
            (1.6..2.2).contains(&ratio),
            "{t} trees: {ratio:.2}x the ring's goodput"
        );
    }
}

#[test]
fn background_to_all_peers_reaches_the_collectives_hosts() {
    let m = model(FAT);
    let (prog, _) = collc::lower::lower_and_verify(&m).expect("lowers");
    let network = Network::new(m.topology.as_ref().unwrap());
    let declared = declared(&m);
    let own = PacketParams::from_model(&m.models[0]).expect("packet model");
    let all = PacketParams {
        background_to_all: true,
        ..own.clone()
    };
    let into_ranks = |r: &packet::PacketRun| -> u64 {
        let hosts = &r.jobs[0].hosts;
        network
            .net
            .links
            .iter()
            .zip(&r.link_bytes)
            .filter(|(l, _)| hosts.contains(&(l.to as u32)))
            .map(|x| *x.1)
            .sum()
    };
    let a = packet::run_seeds(&network, &prog, &declared, &own, 2, 1, false).unwrap();
    let b = packet::run_seeds(&network, &prog, &declared, &all, 2, 1, false).unwrap();
    assert_eq!(a[0].jobs[0].hosts, b[0].jobs[0].hosts);
    // Without it, only the ring enters the ranks: 2(N-1) messages of M/N each, with headers.
    let ring_only = 8 * 2 * 7 * wire(&own, (1 << 20) / 8);
    assert_eq!(into_ranks(&a[0]), ring_only);
    assert!(into_ranks(&b[0]) > ring_only + 16 * 1024);
}
