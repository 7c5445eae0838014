//! Canary under packet loss (issue 41): leaders detect lost generations themselves, workers
//! ask for missing results by RACK and one silence timer, and hosts pace their streams to
//! leave a share of their links to repair (src/sim/packet/canary_leader.rs, canary_worker.rs,
//! canary_faults.rs), so a large allreduce at 1% loss per
//! link completes in a bounded time and number of packets instead of re-sending blocks whose
//! results are merely late. examples/canary_small.coll (8 hosts, 100 Gb/s, 300 ns links)
//! under the packet model's defaults, medians over seeds 1-7 (the simulated times; nothing
//! here is timed on the machine).

use collc::canary::protocol::Protocol;
use collc::diag::{SourceMap, Span};
use collc::sema::model::Model;
use collc::sema::{Options, check};
use collc::sim::packet::{PacketParams, PacketRun, run_file_with};

/// The text of examples/canary_small.coll with `from` replaced by `to`.
fn small_text(from: &str, to: &str) -> String {
    std::fs::read_to_string("examples/canary_small.coll")
        .expect("the example")
        .replace(from, to)
}

/// examples/canary_small.coll at `size` with packet loss `loss` (and `extra` schedule lines).
fn small(size: &str, loss: &str, extra: &str) -> Model {
    let src = small_text("size: 1 MiB;", &format!("size: {size};"))
        .replace("retries: 3;", &format!("retries: 3; {extra}"))
        + &format!("\nmodel m: packet {{ loss: {loss}; }}\n");
    let mut sources = SourceMap::new();
    let id = sources.add("small.coll", src);
    let c = check(&mut sources, id, &Options::default());
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    c.model.expect("checks")
}

fn runs(m: &Model, n: u64) -> Vec<PacketRun> {
    let params = PacketParams::from_model(&m.models[0]).expect("a packet model");
    run_file_with(m, Span::default(), &params, 1, n, false, &Protocol::paper())
        .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|d| &d.message).collect::<Vec<_>>()))
}

/// The lossless run at `size`, and the median time and largest packet count over seven
/// seeds at 1% loss, each seed's time within twice the lossless one (issue 41): ((time ps,
/// packets), (median time ps, packets)).
fn pair(size: &str) -> ((u64, u64), (u64, u64)) {
    let clean = runs(&small(size, "0", ""), 1).remove(0);
    let lossy = runs(&small(size, "0.01", ""), 7);
    assert!(lossy.iter().all(|r| r.drops > 0), "1% loss loses packets");
    let mut times: Vec<u64> = lossy.iter().map(|r| r.end).collect();
    times.sort_unstable();
    assert!(
        times[6] < 2 * clean.end,
        "{size}: seeds 1-7 took {times:?} ps at 1% loss against {} ps lossless",
        clean.end
    );
    let packets = lossy.iter().map(|r| r.packets).max().unwrap_or(0);
    ((clean.end, clean.packets), (times[3], packets))
}

#[test]
fn one_mib_at_one_percent_loss_stays_near_the_lossless_time() {
    // Workers' timers per block (fixed 2 RTT, then RFC 6298 per block) took 150 ms, then
    // 786 us, then 236 us with the leaders' own detection; the lossless run takes 106 us and
    // 22.5 k packets. 203 us with paced streams and RACK on the answers; a median of 159 us
    // once a stream packet that is due left before the repair waiting at its host, but seed
    // 2 took 234 us (a block that fell back waited 30 us for a lost answer's second ask);
    // now 145-194 us on seeds 1-24 with the workers' tail and the fallback's own clock.
    let ((t0, p0), (t1, p1)) = pair("1 MiB");
    assert!(
        p1 * 2 < 3 * p0,
        "packets: {p1} at 1% loss against {p0} lossless"
    );
    assert!(
        t1 * 5 < 8 * t0,
        "median time: {t1} ps at 1% loss against {t0} ps lossless"
    );
}

#[test]
fn leaders_find_most_lost_generations_and_few_failures_are_spurious() {
    let all = runs(&small("1 MiB", "0.01", ""), 3);
    for r in &all {
        let rec = r.recovery.expect("loss recovery runs under loss");
        let failed = rec.failed_rack + rec.failed_timer;
        assert!(failed > 50, "1% loss fails generations: {rec:?}");
        assert!(
            rec.failed_rack * 10 > failed * 8,
            "most are found by RACK while the streams run: {rec:?}"
        );
        assert!(
            rec.failed_spurious * 10 < failed,
            "few failed generations had every contribution after all: {rec:?}"
        );
        assert!(rec.asked_rack > 0 && rec.asked_timer > 0, "{rec:?}");
        // Twice the repair expected on a host link: re-sent contributions (a generation
        // climbs about 11 links here: q = 1 - 0.99^11) and answers for lost results.
        assert!(
            (120..=180).contains(&rec.repair_expected)
                && rec.repair_share == 2 * rec.repair_expected,
            "{rec:?}"
        );
    }
    let clean = runs(&small("1 MiB", "0", ""), 1);
    assert_eq!(clean[0].recovery, None, "no recovery without loss");
}

#[test]
fn four_mib_at_one_percent_loss_stays_near_the_lossless_time() {
    // About 11.5 ms before leaders detected losses themselves, 924 us before the streams were
    // paced (every repair waited for its host's stream to end, then came in one burst);
    // 405 us lossless; now a median of 527 us.
    let ((t0, p0), (t1, p1)) = pair("4 MiB");
    assert!(
        p1 < 2 * p0,
        "packets: {p1} at 1% loss against {p0} lossless"
    );
    assert!(
        t1 * 2 < 3 * t0,
        "median time: {t1} ps at 1% loss against {t0} ps lossless"
    );
}

/// A fat tree of the paper's kind (32 hosts per leaf, 32 spines, 100 Gb/s) with `leaves`
/// leaves, a 1 MiB Canary allreduce with `retries`, under packet loss `loss`.
fn paper_like(leaves: u32, retries: u32, loss: &str) -> Model {
    paper_like_with(leaves, "1 MiB", &format!("retries: {retries};"), loss)
}

/// [`paper_like`] at `size` with the schedule's parameters `params`.
fn paper_like_with(leaves: u32, size: &str, params: &str, loss: &str) -> Model {
    let src = format!(
        "import fat_tree;\n\
         topology t = fat_tree(leaves: {leaves}, hosts_per_leaf: 32, spines: 32, host_bw: 100 Gbps, spine_bw: 100 Gbps);\n\
         collective allreduce {{ participants: all; size: {size}; dtype: i32; op: sum; }}\n\
         schedule canary {{ timeout: 1 us; elements_per_packet: 256; {params} }}\n\
         model m: packet {{ loss: {loss}; }}\n"
    );
    let mut sources = SourceMap::new();
    let id = sources.add("paper_like.coll", src);
    let c = check(&mut sources, id, &Options::default());
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    c.model.expect("checks")
}

#[test]
fn a_leaders_burst_of_answers_does_not_push_its_stream_out_of_step() {
    // 64 hosts: a first generation climbs about 100 links, so at 1% loss about two in three
    // fail and, with `retries: 0`, fall back to the hosts: their leaders answer 63 workers
    // each. When those answers went ahead of the leader's due stream packets, its stream fell
    // 5 us behind the others', its contributions reached the root as stragglers (78,647
    // straggler rules run) and the run took 707 us against 96 us lossless; 456 us, 475 us
    // and 419 us over seeds 1-3; 505 us, 427 us and 433 us since repair may move a stream
    // by half the switch timeout.
    let clean = runs(&paper_like(2, 0, "0"), 1).remove(0);
    let mut all = runs(&paper_like(2, 0, "0.01"), 3);
    all.sort_by_key(|r| r.end);
    let lossy = all.remove(1);
    let rec = lossy.recovery.expect("loss recovery runs under loss");
    assert!(rec.fallbacks > 300, "most blocks fall back: {rec:?}");
    assert!(
        (300_000..450_000).contains(&rec.through),
        "a generation gets through with p = 0.99^(links climbed): {rec:?}"
    );
    let stragglers = lossy
        .rules
        .iter()
        .find(|(r, _)| r == "straggler")
        .map_or(0, |x| x.1);
    assert!(
        stragglers < 5_000,
        "streams stay in step: {stragglers} stragglers"
    );
    assert!(
        lossy.end < 5 * clean.end,
        "median {} ps at 1% loss against {} ps lossless",
        lossy.end,
        clean.end
    );
}

#[test]
fn a_leaders_failure_notices_do_not_spread_the_re_issued_generation() {
    // 256 hosts at 0.01% loss: a generation gets through with p = 0.96. A leader's 255
    // notices left one per gap of its paced stream (13 us), so the re-issued contributions
    // reached the switches as stragglers and crowded the root's link past the next blocks'
    // timers: 7.02 ms against 94.75 us lossless, 1,710 failed generations, 213 fallbacks.
    // Repair ahead of a due stream packet while the stream lags less than half the switch
    // timeout: 380 us; a leader's probe with the estimate of a spurious failure: 152 us.
    let clean = runs(&paper_like(8, 3, "0"), 1).remove(0);
    let lossy = runs(&paper_like(8, 3, "0.0001"), 1).remove(0);
    let rec = lossy.recovery.expect("loss recovery runs under loss");
    assert!(
        (900_000..1_000_000).contains(&rec.through),
        "a generation gets through with p = 0.9999^(links climbed): {rec:?}"
    );
    let failed = rec.failed_rack + rec.failed_timer;
    assert!(
        failed < 100 && rec.fallbacks == 0,
        "about the genuine failures: {rec:?}"
    );
    assert!(
        lossy.end < 3 * clean.end,
        "{} ps at 0.01% loss against {} ps lossless",
        lossy.end,
        clean.end
    );
}

#[test]
fn sim_says_when_falling_back_is_cheaper_than_re_issuing() {
    let d = tempfile::tempdir().expect("temp dir");
    let text = small_text("size: 1 MiB;", "size: 64 KiB;");
    let sim = |loss: &str, recovery: &str| {
        let f = d.path().join(format!("loss{loss}{recovery}.coll"));
        let text = text.replace("retries: 3;", &format!("retries: 3; recovery: {recovery};"));
        std::fs::write(&f, format!("{text}\nmodel m: packet {{ loss: {loss}; }}\n"))
            .expect("write");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_collc"))
            .args(["sim", f.to_str().expect("utf-8"), "--model", "m"])
            .output()
            .expect("runs collc");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).expect("utf-8")
    };
    // About 11 links climbed: p = 0.99^11 at 1% loss, 0.9^11 at 10%.
    let low = sim("0.01", "auto");
    assert!(
        low.contains("a generation gets every contribution up with probability 0.8"),
        "{low}"
    );
    assert!(
        !low.contains("`retries: 0` is the cheaper recovery"),
        "{low}"
    );
    assert!(
        low.contains("recovery: the paper's (Section 3.3: a failed block is re-sent by every rank; `recovery: auto` chose it: (1 - loss)^ranks = 0.923 >= 1/2)"),
        "{low}"
    );
    let high = sim("0.1", "paper");
    assert!(
        high.contains("a generation gets every contribution up with probability 0.3"),
        "{high}"
    );
    assert!(
        high.contains("re-issuing costs each worker 1/p = 3.")
            && high.contains("`retries: 0` is the cheaper recovery"),
        "{high}"
    );
    // There `auto` chooses contributor recovery, which re-sends only what was lost.
    let auto = sim("0.1", "auto");
    assert!(
        auto.contains("recovery: contributors (collc's departure")
            && auto.contains("`recovery: auto` chose it: (1 - loss)^ranks = 0.430 < 1/2")
            && !auto.contains("`retries: 0` is the cheaper recovery"),
        "{auto}"
    );
}

#[test]
fn contributor_recovery_finishes_where_every_generation_loses_a_contribution() {
    // 128 hosts of the paper's fat tree at 1% loss: a generation gets through with p = 0.11
    // (over the links it climbs), so the paper's recovery re-sends nearly every block from
    // every rank (256 KiB: 2.06 ms against 27.5 us lossless). `recovery: auto` chooses
    // contributor recovery: the leaders keep their partial sums and ask only the ranks
    // missing from them (98.6 us; the bitmap of 16 B per packet costs the lossless run 1.6%).
    let clean = runs(&paper_like_with(4, "256 KiB", "retries: 3;", "0"), 1).remove(0);
    let lossy = runs(&paper_like_with(4, "256 KiB", "retries: 3;", "0.01"), 1).remove(0);
    let rec = lossy.recovery.expect("loss recovery runs under loss");
    assert!(
        rec.contributors && rec.auto && rec.ranks == 128,
        "auto chose contributors: {rec:?}"
    );
    assert!(rec.through < 200_000, "p below 0.2: {rec:?}");
    assert!(
        lossy.drops > 0 && lossy.end < 5 * clean.end,
        "{} ps at 1% loss against {} ps lossless: {rec:?}",
        lossy.end,
        clean.end
    );
}

#[test]
fn a_lossy_run_stopped_by_the_packet_limit_says_why() {
    // 64 hosts at 5% loss per link: a generation climbs about 100 links, so nearly every one
    // fails and every rank re-sends it. Stopped by a limit of 4,096 packets held at once, the
    // message says what the recovery met and did, not only that hosts outran the network.
    let m = paper_like_with(2, "1 MiB", "retries: 3; recovery: paper;", "0.05");
    let mut params = PacketParams::from_model(&m.models[0]).expect("a packet model");
    params.max_packets = 4096;
    let err = run_file_with(
        &m,
        Span::default(),
        &params,
        1,
        1,
        false,
        &Protocol::paper(),
    )
    .expect_err("the run stops at the limit");
    let msg = &err[0].message;
    assert!(
        msg.contains("held more than 4096 packets at once")
            && msg.contains("at 0.05 loss per link a generation of Canary's 1024 blocks on 64 ranks gets every contribution up with p = ")
            && msg.contains("generations failed"),
        "{msg}"
    );
    // Lossless, the same run stays within the limit.
    let clean = paper_like(2, 3, "0");
    let mut params = PacketParams::from_model(&clean.models[0]).expect("a packet model");
    params.max_packets = 4096;
    run_file_with(
        &clean,
        Span::default(),
        &params,
        1,
        1,
        false,
        &Protocol::paper(),
    )
    .expect("lossless, 4,096 packets held at once are enough");
}

#[test]
fn contributor_recovery_is_refused_where_it_does_not_apply() {
    let d = tempfile::tempdir().expect("temp dir");
    let text = small_text("retries: 3;", "retries: 3; recovery: contributors;");
    let collc = |file: &str, args: &[&str]| {
        let f = d.path().join(file);
        std::fs::write(&f, &text).expect("write");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_collc"))
            .args(args)
            .arg(&f)
            .args(["-o", d.path().join("out").to_str().expect("utf-8")])
            .output()
            .expect("runs collc");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // The P4 program's packets carry no contributor bitmap: E0050 at the property, and
    // nothing written.
    let (code, err) = collc("p4.coll", &["build", "--target", "p4"]);
    assert!(
        code == Some(1) && err.contains("E0050") && err.contains("no contributor bitmap"),
        "{code:?} {err}"
    );
    assert!(!d.path().join("out").exists(), "nothing written");
    // Contributor recovery is for allreduce.
    let text = text.replace("collective allreduce", "collective reduce");
    let f = d.path().join("reduce.coll");
    std::fs::write(&f, text.replace("op: sum;", "op: sum; root: host[0];")).expect("write");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(["check", f.to_str().expect("utf-8")])
        .output()
        .expect("runs collc");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("contributor recovery is collc's for allreduce"),
        "{err}"
    );
}

#[test]
fn the_papers_network_at_one_percent_loss_stays_within_twice_the_lossless_time() {
    // The paper's fat tree (1,024 hosts under 32 leaves, 32 spines, 100 Gb/s) at 1% loss per
    // link, 1 MiB: every block's first generation loses a contribution, contributor recovery
    // runs. 209-237 us on seeds 1-5 against 96.5 us lossless before repair traffic spread
    // over the spines, direct rounds got their own clock and the workers' tail its own
    // timer; now 172-185 us on seeds 1-8 (`collc sim --seed S`), 2x being 193 us.
    let clean = runs(&paper_like(32, 3, "0"), 1).remove(0);
    for run in runs(&paper_like(32, 3, "0.01"), 3) {
        let rec = run
            .recovery
            .as_ref()
            .expect("loss recovery runs under loss");
        assert!(rec.contributors && rec.ranks == 1024, "{rec:?}");
        assert!(
            run.drops > 0 && run.end < 2 * clean.end,
            "{} ps at 1% loss against {} ps lossless: {rec:?}",
            run.end,
            clean.end
        );
    }
}
