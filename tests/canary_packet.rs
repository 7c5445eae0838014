//! Canary in the packet simulator (`collc::sim::packet` running `collc::canary`): every run
//! checks the postcondition (each rank has every block's full reduction, no descriptor left),
//! and the checks catch a protocol without tree restoration or without the straggler rule;
//! collisions and stragglers really happen under small tables and short timeouts; congestion
//! hurts one static tree far more than Canary (the paper's Fig. 7a, on a small fat tree).

use collc::canary::protocol::Protocol;
use collc::diag::{Diagnostic, SourceMap, Span};
use collc::sema::model::Model;
use collc::sema::{Options, check};
use collc::sim::packet::{PacketParams, PacketRun, run_file_with};

/// 64 hosts under 8 leaves and 8 spines; 32 in the allreduce, placed at random per run.
fn file(schedule: &str, size: &str, model: &str) -> String {
    format!(
        "import fat_tree;
topology t = fat_tree(leaves: 8, hosts_per_leaf: 8, spines: 8, host_bw: 100 Gbps, spine_bw: 100 Gbps);
collective allreduce {{ participants: host[0..4]; size: {size}; dtype: i32; op: sum; }}
schedule canary {{ {schedule} }}
model m: packet {{ placement: random; {model} }}
"
    )
}

fn model(src: &str) -> Model {
    let mut sources = SourceMap::new();
    let id = sources.add("test.coll", src.to_string());
    let c = check(&mut sources, id, &Options::default());
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    c.model.expect("checks")
}

fn run(src: &str, protocol: &Protocol, runs: u64) -> Result<Vec<PacketRun>, Vec<Diagnostic>> {
    let m = model(src);
    let params = PacketParams::from_model(&m.models[0]).expect("a packet model");
    run_file_with(&m, Span::default(), &params, 1, runs, false, protocol)
}

/// One run of `m` (seed 1) under `params` with the paper's protocol.
fn once(m: &Model, params: &PacketParams) -> Result<PacketRun, Vec<Diagnostic>> {
    run_file_with(m, Span::default(), params, 1, 1, false, &Protocol::paper())
        .map(|mut v| v.remove(0))
}

fn hits(r: &PacketRun, rule: &str) -> u64 {
    r.rules
        .iter()
        .find(|(n, _)| n == rule)
        .map_or(0, |(_, k)| *k)
}

fn why(d: &[Diagnostic]) -> String {
    d.iter()
        .map(|d| d.message.clone())
        .collect::<Vec<_>>()
        .join("; ")
}

#[test]
fn canary_streams_at_line_rate_without_congestion() {
    let runs = run(&file("", "512 KiB", ""), &Protocol::paper(), 3).expect("runs");
    // 512 KiB in 1 KiB payloads with 57 B of headers at 100 Gb/s is 44.3 us on each host link;
    // the trees add a few microseconds of timeouts and hops.
    let wire_ns = 512.0 * 1081.0 * 8.0 / 100.0;
    for r in &runs {
        let ns = r.jobs[0].end as f64 / 1000.0;
        assert!(ns > wire_ns && ns < wire_ns * 1.15, "{ns} ns");
        assert_eq!(hits(r, "collision"), 0);
        // One descriptor per block on each leaf of a participant and on one spine at most.
        assert!(hits(r, "allocate") <= 512 * 9, "{:?}", r.rules);
    }
}

#[test]
fn a_small_table_collides_and_tree_restoration_repairs_it() {
    let src = file("table_size: 2;", "64 KiB", "");
    let runs = run(&src, &Protocol::paper(), 3).expect("the postcondition holds");
    for r in &runs {
        assert!(hits(r, "collision") > 100, "{:?}", r.rules);
        assert!(hits(r, "restore") > 0, "{:?}", r.rules);
    }
    let broken = Protocol::paper().without("restore");
    let err = run(&src, &broken, 1).expect_err("caught");
    assert!(
        why(&err).contains("never got every result"),
        "{}",
        why(&err)
    );
}

#[test]
fn a_short_timeout_makes_stragglers_and_the_straggler_rule_keeps_them() {
    let src = file("timeout: 20 ns;", "64 KiB", "");
    let runs = run(&src, &Protocol::paper(), 3).expect("the postcondition holds");
    for r in &runs {
        assert!(hits(r, "straggler") > 100, "{:?}", r.rules);
    }
    let err = run(&src, &Protocol::paper().without_stragglers(), 1).expect_err("caught");
    assert!(why(&err).contains("postcondition"), "{}", why(&err));
}

#[test]
fn runs_are_deterministic_and_seeds_differ() {
    let src = file("", "64 KiB", "background: 1;");
    let a = run(&src, &Protocol::paper(), 2).expect("runs");
    let b = run(&src, &Protocol::paper(), 2).expect("runs");
    assert_eq!(a, b);
    assert_ne!(a[0].jobs[0].hosts, a[1].jobs[0].hosts);
}

#[test]
fn congestion_hurts_one_static_tree_far_more_than_canary() {
    let median = |schedule: &str, bg: &str| {
        let src = file("", "512 KiB", bg)
            .replace("schedule canary {  }", &format!("schedule {schedule}"));
        let mut t: Vec<u64> = run(&src, &Protocol::paper(), 3)
            .expect("runs")
            .iter()
            .map(|r| r.jobs[0].end)
            .collect();
        t.sort_unstable();
        t[1] as f64
    };
    let canary_quiet = median("canary { }", "");
    let canary_busy = median("canary { }", "background: 1;");
    let tree_quiet = median("static_trees { trees: 1; }", "");
    let tree_busy = median("static_trees { trees: 1; }", "background: 1;");
    assert!(tree_busy > tree_quiet * 1.5, "{tree_quiet} -> {tree_busy}");
    assert!(
        canary_busy < canary_quiet * 1.25,
        "{canary_quiet} -> {canary_busy}"
    );
    assert!(
        canary_busy < tree_busy * 0.8,
        "canary {canary_busy}, one tree {tree_busy}"
    );
}

#[test]
fn the_exploration_passes_the_paper_and_catches_broken_protocols() {
    use collc::sim::packet::explore::explore;
    let m = model(&file("", "1 MiB", ""));
    let params = PacketParams::from_model(&m.models[0]).expect("a packet model");
    let ok = explore(&m, Span::default(), &params, 36, &Protocol::paper()).expect("canary");
    assert!(ok.failure.is_none(), "{:?}", ok.failure);
    assert!(
        ok.colliding >= 20 && ok.straggling >= 10 && ok.congested >= 10,
        "{ok:?}"
    );
    for broken in [
        Protocol::paper().without("restore"),
        Protocol::paper().without_stragglers(),
    ] {
        let x = explore(&m, Span::default(), &params, 36, &broken).expect("canary");
        let (setting, why) = x.failure.expect("a counterexample");
        assert!(setting.seed >= 1 && !why.is_empty());
    }
}

#[test]
fn a_thousand_explorations_of_a_small_fat_tree_pass_and_cover_every_fault() {
    use collc::sim::packet::explore::explore;
    let src = "import fat_tree;
topology t = fat_tree(leaves: 3, hosts_per_leaf: 4, spines: 2, host_bw: 100 Gbps, spine_bw: 100 Gbps);
collective allreduce { participants: host[0..2]; size: 16 KiB; dtype: i32; op: sum; }
schedule canary { }
model m: packet { placement: random; }
";
    let m = model(src);
    let params = PacketParams::from_model(&m.models[0]).expect("a packet model");
    let x = explore(&m, Span::default(), &params, 1000, &Protocol::paper()).expect("canary");
    assert!(x.failure.is_none(), "{:?}", x.failure);
    assert!(
        x.colliding > 300
            && x.straggling > 100
            && x.congested > 300
            && x.lossy > 200
            && x.failing > 60,
        "{x:?}"
    );
    assert!(x.lost > 0 && x.reclaimed > 0, "{x:?}");
    for broken in [
        Protocol::paper().without("restore"),
        Protocol::paper().without_stragglers(),
    ] {
        let y = explore(&m, Span::default(), &params, 36, &broken).expect("canary");
        let (setting, _) = y.failure.expect("a counterexample");
        // The counterexample's setting reproduces it alone.
        let again = explore(&m, Span::default(), &params, setting.seed, &broken).expect("canary");
        assert_eq!(again.failure.map(|f| f.0), Some(setting));
    }
}

/// A three-tier tree: 12 hosts under 4 edge switches, each edge switch linked to both
/// aggregation switches of its pod, every aggregation switch to both cores, so any aggregation
/// or core switch can fail and leave the hosts connected.
const THREE_TIER: &str = "topology t {
    compute host[4][3];
    switch edge[4];
    switch agg[2][2];
    switch core[2];
    for e in 0..4 {
        for h in 0..3 { link host[e][h] <-> edge[e] : 100 Gbps; }
        for a in 0..2 { link edge[e] <-> agg[floor(e / 2)][a] : 100 Gbps; }
    }
    for p in 0..2 { for a in 0..2 { for c in 0..2 { link agg[p][a] <-> core[c] : 100 Gbps; } } }
}
collective allreduce { participants: host[0..3]; size: 16 KiB; dtype: i32; op: sum; }
schedule canary { }
model m: packet { placement: random; }
";

/// A dragonfly of 5 groups of 2 routers with 2 hosts each (every router has hosts, so none can
/// fail without cutting hosts off: no failure runs here).
const DRAGONFLY: &str = "import dragonfly;
topology t = dragonfly(groups: 5, routers: 2, hosts_per_router: 2, host_bw: 100 Gbps, local_bw: 200 Gbps, global_bw: 100 Gbps, lat: 300 ns);
collective allreduce { participants: host[0..3]; size: 16 KiB; dtype: i32; op: sum; }
schedule canary { }
model m: packet { placement: random; }
";

#[test]
fn a_thousand_explorations_of_a_three_tier_tree_and_a_dragonfly_pass() {
    use collc::sim::packet::explore::explore;
    for (name, src, fails) in [
        ("three-tier", THREE_TIER, true),
        ("dragonfly", DRAGONFLY, false),
    ] {
        let m = model(src);
        let params = PacketParams::from_model(&m.models[0]).expect("a packet model");
        let x = explore(&m, Span::default(), &params, 1000, &Protocol::paper()).expect("canary");
        assert!(x.failure.is_none(), "{name}: {:?}", x.failure);
        assert!(
            x.colliding > 300 && x.straggling > 50 && x.congested > 300 && x.lossy > 200,
            "{name}: {x:?}"
        );
        assert!(x.lost > 0 && x.reclaimed > 0, "{name}: {x:?}");
        assert_eq!(x.failing > 60, fails, "{name}: {x:?}");
        let broken = Protocol::paper().without("restore");
        let y = explore(&m, Span::default(), &params, 36, &broken).expect("canary");
        assert!(y.failure.is_some(), "{name}: restoration removed is caught");
    }
}

#[test]
fn a_spine_failing_mid_run_loses_packets_and_every_block_still_completes() {
    // Blocks rooted round robin at the spines: those of the failed spine can only finish by
    // re-issue under fresh ids through the other spines, or the hosts' fallback.
    let src = file("root: round_robin;", "64 KiB", "");
    let m = model(&src);
    let spine = m
        .topology
        .as_ref()
        .and_then(|t| t.nodes.iter().position(|n| n.name == "spine[0]"))
        .expect("spine[0]") as u32;
    let mut params = PacketParams::from_model(&m.models[0]).expect("a packet model");
    let quiet = once(&m, &params).expect("runs");
    params.failure = Some(collc::sim::packet::Failure {
        at: 2_000_000,
        among: vec![spine],
    });
    let failed = once(&m, &params).unwrap_or_else(|d| panic!("{}", why(&d)));
    assert_eq!(quiet.drops, 0);
    assert!(failed.drops > 0, "packets through spine[0] are lost");
    assert!(
        failed.jobs[0].end > quiet.jobs[0].end,
        "recovery takes retransmission timeouts: {} vs {}",
        failed.jobs[0].end,
        quiet.jobs[0].end
    );
}

#[test]
fn a_barrier_is_one_block_of_header_only_packets() {
    let src = "import fat_tree;
topology t = fat_tree(leaves: 8, hosts_per_leaf: 8, spines: 8, host_bw: 100 Gbps, spine_bw: 100 Gbps);
collective barrier { participants: host[0..4]; }
schedule canary { }
model m: packet { placement: random; }
";
    let runs = run(src, &Protocol::paper(), 3).unwrap_or_else(|d| panic!("{}", why(&d)));
    for r in &runs {
        let j = &r.jobs[0];
        assert_eq!((j.bytes, j.ranks), (0, 32));
        // One 57 B packet per worker, and the result down the tree: a few microseconds (two
        // levels of 1 us timeouts, the leader's 1 us), far below one block of data per host.
        assert!(j.end > 1_000_000 && j.end < 20_000_000, "{}", j.end);
        assert_eq!(hits(r, "collision"), 0);
        assert!(hits(r, "allocate") > 0 && hits(r, "broadcast") > 0);
    }
    // And its proof by exploration passes.
    use collc::sim::packet::explore::explore;
    let m = model(src);
    let params = PacketParams::from_model(&m.models[0]).expect("a packet model");
    let x = explore(&m, Span::default(), &params, 36, &Protocol::paper()).expect("canary");
    assert!(x.failure.is_none(), "{:?}", x.failure);
}

#[test]
fn a_reduce_is_led_by_its_root_and_releases_the_others_header_only() {
    let reduce = |root: &str| {
        format!(
            "import fat_tree;
topology t = fat_tree(leaves: 8, hosts_per_leaf: 8, spines: 8, host_bw: 100 Gbps, spine_bw: 100 Gbps);
collective reduce {{ participants: host[0..4]; size: 64 KiB; dtype: i32; op: sum; root: {root}; }}
schedule canary {{ }}
model m: packet {{ placement: random; }}
"
        )
    };
    let src = reduce("host[2][5]");
    let runs = run(&src, &Protocol::paper(), 2).unwrap_or_else(|d| panic!("{}", why(&d)));
    let all = run(&file("", "64 KiB", ""), &Protocol::paper(), 2).expect("allreduce");
    for (r, a) in runs.iter().zip(&all) {
        // The same packets go up; what comes down is 57 B per block instead of 1081 B, but
        // every block's result funnels into the root's one link.
        let down = |x: &PacketRun| x.link_bytes.iter().sum::<u64>();
        assert!(down(r) < down(a), "{} vs {}", down(r), down(a));
        assert_eq!(hits(r, "collision"), 0);
    }
    // Its proof by exploration passes.
    let m = model(&src);
    let params = PacketParams::from_model(&m.models[0]).expect("a packet model");
    let x =
        collc::sim::packet::explore::explore(&m, Span::default(), &params, 4, &Protocol::paper())
            .expect("canary");
    assert!(x.failure.is_none(), "{:?}", x.failure);
}

#[test]
fn a_run_past_its_event_limit_fails_instead_of_running_on() {
    // The exploration caps every run's events, so a livelocking protocol is a failing run with
    // its seed; here a limit far below what the allreduce needs shows the failure it gives.
    let m = model(&file("timeout: 1 us;", "64 KiB", ""));
    let mut params = PacketParams::from_model(&m.models[0]).expect("a packet model");
    let whole = once(&m, &params).expect("runs");
    params.max_events = whole.events / 2;
    let d = once(&m, &params).expect_err("stops at the limit");
    let w = why(&d);
    assert!(
        w.contains(&format!(
            "did not finish within {} events",
            whole.events / 2
        )),
        "{w}"
    );
}

#[test]
fn a_broadcast_sends_header_only_packets_up_and_the_roots_data_down() {
    let src = "import fat_tree;
topology t = fat_tree(leaves: 8, hosts_per_leaf: 8, spines: 8, host_bw: 100 Gbps, spine_bw: 100 Gbps);
collective broadcast { participants: host[0..4]; size: 64 KiB; dtype: f32; root: host[1][2]; }
schedule canary { }
model m: packet { placement: random; }
";
    // Every rank ends with every block of the root's data (the run checks it), and f32 data
    // needs no fixed point: nothing is added.
    let runs = run(src, &Protocol::paper(), 2).unwrap_or_else(|d| panic!("{}", why(&d)));
    let all = run(&file("", "64 KiB", ""), &Protocol::paper(), 2).expect("allreduce");
    for (b, a) in runs.iter().zip(&all) {
        // The same trees form; what goes up is 57 B per block instead of 1081 B.
        let bytes = |x: &PacketRun| x.link_bytes.iter().sum::<u64>();
        assert!(bytes(b) < bytes(a), "{} vs {}", bytes(b), bytes(a));
        assert!(hits(b, "broadcast") > 0);
    }
    let m = model(src);
    let params = PacketParams::from_model(&m.models[0]).expect("a packet model");
    let x =
        collc::sim::packet::explore::explore(&m, Span::default(), &params, 4, &Protocol::paper())
            .expect("canary");
    assert!(x.failure.is_none(), "{:?}", x.failure);
}

/// A three-level fat tree (k = 4: 16 hosts, 4 pods of 2 edge and 2 aggregation switches, 4
/// core switches), as issue 41 found it.
const FAT_TREE_3: &str = "topology ft3 {
    compute host[16];
    switch edge[8];
    switch agg[8];
    switch core[4];
    for p in 0..4 {
        for e in 0..2 {
            for h in 0..2 {
                link host[p * 4 + e * 2 + h] <-> edge[p * 2 + e] : 100 Gbps, latency 300 ns;
            }
            for a in 0..2 {
                link edge[p * 2 + e] <-> agg[p * 2 + a] : 100 Gbps, latency 300 ns;
            }
        }
        for a in 0..2 {
            for c in 0..2 {
                link agg[p * 2 + a] <-> core[a * 2 + c] : 100 Gbps, latency 300 ns;
            }
        }
    }
}
collective allreduce { size: 1 MiB; dtype: i32; op: sum; }
schedule canary { }
";

#[test]
fn an_aggregation_switch_failing_in_a_three_level_fat_tree_is_routed_around() {
    // Exploration run 7 fails an aggregation switch. Routes used to avoid only the failed
    // switch's own links, so another pod's edge switches kept sending packets up to the core
    // switches that had no way left into its pod: they were lost for ever and the run
    // livelocked (E0049 after 50 M events). Now the routes reconverge around it.
    use collc::sim::packet::explore::replay;
    let m = model(FAT_TREE_3);
    let (st, r) = replay(
        &m,
        Span::default(),
        &PacketParams::default(),
        7,
        &Protocol::paper(),
    )
    .expect("canary");
    assert!(st.failure.is_some(), "run 7 fails a switch: {st:?}");
    let run = r.unwrap_or_else(|d| panic!("{}", why(&d)));
    assert!(run.drops > 0, "packets were lost at the failed switch");
}

/// examples/canary_p4.coll times out after 2 ms, far longer than its packets' spread, so the
/// exploration's cycle rarely sees a straggler there: it forces them (a timeout of 0) when the
/// cycle has none, and either way a protocol that aggregates late packets into an accumulator
/// that already left, or drops them, is caught on that file.
#[test]
fn on_the_p4_example_straggler_mutations_are_caught() {
    use collc::canary::protocol::Act;
    use collc::sim::packet::explore::{Boost, explore};
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/canary_p4.coll"
    ))
    .expect("the example");
    let m = model(&src);
    let params = collc::cost::canary::packet_model(&m)
        .and_then(PacketParams::from_model)
        .unwrap_or_default();
    let ok = explore(&m, Span::default(), &params, 36, &Protocol::paper()).expect("canary");
    assert!(ok.failure.is_none(), "{:?}", ok.failure);
    for b in [
        Boost::Stragglers,
        Boost::Collisions,
        Boost::Loss,
        Boost::Failure,
    ] {
        assert!(ok.occurred(b), "{b:?} never happened: {ok:?}");
    }
    let mut dropping = Protocol::paper();
    for r in &mut dropping.switch {
        if r.name == "straggler" {
            r.then = vec![Act::Drop];
        }
    }
    for broken in [Protocol::paper().without_stragglers(), dropping] {
        let x = explore(&m, Span::default(), &params, 36, &broken).expect("canary");
        let (setting, why) = x.failure.expect("a counterexample");
        assert!(!why.is_empty(), "{setting:?}");
    }
}

/// Every twelfth run of the cycle is larger than 32 blocks on 32 hosts where the file is.
#[test]
fn the_exploration_includes_runs_beyond_32_blocks_and_hosts() {
    use collc::sim::packet::explore::{BLOCKS, HOSTS, explore};
    let m = model(
        &file("", "64 KiB", "").replace("participants: host[0..4];", "participants: host[0..6];"),
    );
    let params = PacketParams::from_model(&m.models[0]).expect("a packet model");
    let x = explore(&m, Span::default(), &params, 12, &Protocol::paper()).expect("canary");
    assert!(x.failure.is_none(), "{:?}", x.failure);
    assert_eq!(x.large, 1, "{x:?}");
    assert!(
        x.most_blocks > BLOCKS && x.most_hosts > HOSTS as u64,
        "{x:?}"
    );
}
