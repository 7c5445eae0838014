//! Static in-network trees under the packet model, through the binary: each run lowers the
//! trees where that run places the collective, congestion hurts one tree more than four (the
//! Canary paper's Fig. 7a, on a small fat tree), `collc compare` runs the in-network families
//! under a packet model, the sliced ring runs at link rate with trees at about twice its goodput
//! (Fig. 2), `collc sim --plot` draws the link-utilisation distribution, and the trees' reserved
//! `slots` bound each host's packets in flight.

use std::path::Path;
use std::process::{Command, Output};

/// A fat tree of 64 hosts under 8 leaves and 8 spines, 32 hosts in the allreduce and the other
/// 32 congesting under `congested`.
const SMALL: &str = "import fat_tree;
param trees: int = 4;
topology t = fat_tree(leaves: 8, hosts_per_leaf: 8, spines: 8, host_bw: 100 Gbps, spine_bw: 100 Gbps);
collective allreduce { participants: host[0..4]; size: 512 KiB; dtype: i32; op: sum; }
schedule static_trees { trees: trees; }
model quiet: packet { placement: random; }
model congested: packet { placement: random; background: 1; }
";

fn collc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("collc runs")
}

fn ok(o: &Output) -> String {
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    text
}

/// `collc sim -b` of the small file: the median time in ns over three runs.
fn median(dir: &Path, model: &str, trees: u32) -> f64 {
    let t = ok(&collc(
        dir,
        &[
            "sim",
            "f.coll",
            "--model",
            model,
            "--param",
            &format!("trees={trees}"),
            "--runs",
            "3",
            "-b",
        ],
    ));
    t.trim().parse().expect("a time")
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.coll"), SMALL).unwrap();
    dir
}

#[test]
fn congestion_hurts_one_static_tree_more_than_four() {
    let dir = setup();
    let quiet1 = median(dir.path(), "quiet", 1);
    let quiet4 = median(dir.path(), "quiet", 4);
    let busy1 = median(dir.path(), "congested", 1);
    let busy4 = median(dir.path(), "congested", 4);
    // Without congestion both stream at line rate: 512 KiB of 1 KiB payloads with 57 B headers
    // at 100 Gb/s is 44.6 us, plus the trees' latency.
    let wire_ns = 512.0 * 1081.0 * 8.0 / 100.0;
    for q in [quiet1, quiet4] {
        assert!(q > wire_ns && q < wire_ns * 1.05, "{q} ns");
    }
    // With the other hosts congesting, one tree loses a large share, four trees much less.
    assert!(busy1 > quiet1 * 1.5, "one tree: {quiet1} -> {busy1}");
    assert!(busy4 < busy1 * 0.8, "four trees {busy4} vs one {busy1}");
}

/// `collc sim -b` of `text` under the quiet model: the median time in ns over three runs.
fn median_of(dir: &Path, text: &str) -> f64 {
    std::fs::write(dir.join("r.coll"), text).unwrap();
    let t = ok(&collc(
        dir,
        &["sim", "r.coll", "--model", "quiet", "--runs", "3", "-b"],
    ));
    t.trim().parse().expect("a time")
}

#[test]
fn the_sliced_ring_runs_at_link_rate_and_trees_reach_twice_its_goodput() {
    let dir = setup();
    let ring = |s: &str| SMALL.replace("schedule static_trees { trees: trees; }", s);
    // `slices: auto` cuts each step's 16 KiB chunk into 4 slices here; the ring runs through
    // its randomly placed hosts in the network's order.
    let out = ok(&collc(dir.path(), &["sim", "f.coll", "--model", "quiet"]));
    assert!(out.contains("schedule static_trees"), "{out}");
    std::fs::write(dir.path().join("r.coll"), ring("schedule ring;")).unwrap();
    let out = ok(&collc(dir.path(), &["sim", "r.coll", "--model", "quiet"]));
    assert!(out.contains("schedule ring 4 slices"), "{out}");
    let sliced = median_of(dir.path(), &ring("schedule ring;"));
    let whole = median_of(dir.path(), &ring("schedule ring { slices: 1; }"));
    let trees = median(dir.path(), "quiet", 4);
    // The ring moves 2(N-1)/N of the data over every host link, in packets of 1 KiB with 57 B
    // of headers at 100 Gb/s: 85.8 us for 32 ranks. Pipelined, it stays within 3% of that.
    let bound = 2.0 * 31.0 / 32.0 * 512.0 * 1081.0 * 8.0 / 100.0;
    assert!(sliced > bound && sliced < bound * 1.03, "{sliced} ns");
    // One message per step waits for each chunk's last packet at every hop.
    assert!(whole > sliced * 1.15, "{whole} vs {sliced}");
    // The paper's Fig. 2: in-network trees give about twice the ring's goodput.
    let ratio = sliced / trees;
    assert!((1.8..2.1).contains(&ratio), "{ratio}");
}

#[test]
fn each_run_draws_its_own_placement_and_roots() {
    let dir = setup();
    let out = ok(&collc(
        dir.path(),
        &["sim", "f.coll", "--model", "quiet", "--runs", "2"],
    ));
    assert!(out.contains("over 2 runs: median"), "{out}");
    let one = ok(&collc(
        dir.path(),
        &["sim", "f.coll", "--model", "quiet", "--seed", "2"],
    ));
    let other = ok(&collc(
        dir.path(),
        &["sim", "f.coll", "--model", "quiet", "--seed", "3"],
    ));
    let ranks = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("Rank "))
            .map(|l| l.split(':').next().unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(ranks(&one).len(), 32);
    assert_ne!(ranks(&one), ranks(&other), "seeds place the ranks apart");
}

#[test]
fn compare_under_a_packet_model_runs_the_in_network_families() {
    let dir = setup();
    let table = ok(&collc(
        dir.path(),
        &[
            "compare",
            "f.coll",
            "--model",
            "quiet",
            "--families",
            "ring,static_trees",
        ],
    ));
    assert!(table.contains("packet-level model:"), "{table}");
    assert!(table.contains("model `quiet`"), "{table}");
    assert!(
        table.contains("512 KiB"),
        "the declared size by default: {table}"
    );
    for f in ["ring", "static_trees x1", "static_trees x4"] {
        assert!(table.contains(f), "{f}: {table}");
    }
    assert!(table.contains("winner") && table.contains("static_trees x1"));
    assert!(
        table.contains("in-network schedules reduce in the switches"),
        "busbw's factor is said to assume host traffic: {table}"
    );
    let json = ok(&collc(
        dir.path(),
        &[
            "compare",
            "f.coll",
            "--model",
            "quiet",
            "--families",
            "static_trees",
            "--format",
            "json",
            "--sizes",
            "64KiB,128KiB",
        ],
    ));
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["model"]["kind"], "packet");
    assert_eq!(v["sizes"].as_array().map(|a| a.len()), Some(2));
    // A family that is not in this comparison is a diagnostic in the flag.
    let bad = collc(
        dir.path(),
        &[
            "compare",
            "f.coll",
            "--model",
            "quiet",
            "--families",
            "ring,trees",
        ],
    );
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("E0003") && err.contains("static_trees"),
        "{err}"
    );
}

#[test]
fn sim_plot_draws_the_utilisation_of_each_run() {
    let dir = setup();
    let svg = dir.path().join("u.svg");
    ok(&collc(
        dir.path(),
        &[
            "sim",
            "f.coll",
            "--model",
            "congested",
            "--runs",
            "2",
            "--plot",
            "u.svg",
            "-b",
        ],
    ));
    let text = std::fs::read_to_string(&svg).expect("the plot");
    assert!(
        text.starts_with("<svg") || text.starts_with("<?xml"),
        "{}",
        &text[..80]
    );
    for s in ["seed 1", "seed 2", "packet model `congested`", "90-100%"] {
        assert!(text.contains(s), "{s}");
    }
    // The flow model draws its one run; a LogGP model has no links to draw.
    let flow_svg = dir.path().join("flow.svg");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ring = manifest.join("examples/ring_8.coll");
    ok(&collc(
        dir.path(),
        &["sim", ring.to_str().unwrap(), "--plot", "flow.svg", "-b"],
    ));
    let text = std::fs::read_to_string(&flow_svg).expect("the flow plot");
    assert!(text.contains("flow model defaults") && text.contains("90-100%"));
    std::fs::write(
        dir.path().join("lg.coll"),
        "import ring;\ntopology t = ring(n: 4, bw: 10 GB/s);\ncollective allreduce { size: 1 MiB; }\nmodel lg: loggp;\n",
    )
    .unwrap();
    let lg = collc(
        dir.path(),
        &["sim", "lg.coll", "--model", "lg", "--plot", "x.svg"],
    );
    assert_eq!(lg.status.code(), Some(1));
    let err = String::from_utf8_lossy(&lg.stderr);
    assert!(err.contains("E0024") && err.contains("--plot"), "{err}");
    assert!(!dir.path().join("x.svg").exists());
}

#[test]
fn reserved_slots_bound_an_allreduces_packets_in_flight() {
    let dir = setup();
    let with = |trees: u32, slots: u32| {
        median_of(
            dir.path(),
            &SMALL.replace(
                "schedule static_trees { trees: trees; }",
                &format!("schedule static_trees {{ trees: {trees}; slots: {slots}; }}"),
            ),
        )
    };
    let (one, two, many) = (with(1, 1), with(1, 2), with(1, 64));
    // 64 slots cover the quiet round trip: line rate, as without a bound.
    let wire_ns = 512.0 * 1081.0 * 8.0 / 100.0;
    assert!(many > wire_ns && many < wire_ns * 1.05, "{many} ns");
    // One slot: each of the 512 packets makes the whole round trip (four links of at least
    // 86 ns of serialisation each) before the next may go.
    assert!(one > 512.0 * 4.0 * 86.0, "{one} ns");
    // Two slots: two packets per round trip, twice the rate.
    let ratio = one / two;
    assert!((1.8..2.1).contains(&ratio), "{one} vs {two} ns");
    // Four trees share the slots: every host sends the blocks in the same order, so the
    // oldest packet in flight is the same on every host and one slot still completes.
    let four = with(4, 1);
    assert!(four > 512.0 * 4.0 * 86.0, "{four} ns");
    // A slot count that is not a power of two is refused with a help line.
    std::fs::write(
        dir.path().join("bad.coll"),
        SMALL.replace(
            "schedule static_trees { trees: trees; }",
            "schedule static_trees { slots: 48; }",
        ),
    )
    .unwrap();
    let o = collc(dir.path(), &["check", "bad.coll"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("E0024") && err.contains("use `slots: 32;`"),
        "{err}"
    );
}
