//! `collc build FILE --emit report` on Canary schedules: the "canary" section with the closed
//! forms of the paper's Sections 3.2.2, 4.1 and 4.2 (snapshots), and next steps that run
//! (the packet simulator and the P4 target, which is how Canary runs: it is not lowered to a
//! program of sends).

use std::process::Command;

fn collc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_collc"))
}

fn report(path: &str) -> String {
    let out = collc()
        .args(["build", "--emit", "report", path])
        .output()
        .expect("runs collc");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The report's `== canary ==` section, without its title.
fn section(report: &str) -> String {
    let title = "== canary ==\n";
    let start = report
        .find(title)
        .unwrap_or_else(|| panic!("no canary section in\n{report}"));
    let body = &report[start + title.len()..];
    body[..body.find("\n==").unwrap_or(body.len())].to_string()
}

/// The "next" section names what works on a Canary schedule: `collc sim` (packet level) and
/// the P4 target, not the GOAL or MSCCL targets of programs of sends.
#[test]
fn next_steps_run_the_protocol() {
    let r = report("examples/canary_small.coll");
    let next = &r[r.find("== next").expect("a next section")..];
    assert!(next.contains("collc sim FILE "), "{next}");
    assert!(next.contains("--target p4 -o DIR"), "{next}");
    assert!(!next.contains("goal") && !next.contains("msccl"), "{next}");
}

/// Section 3.2.2's example: 100 Gb/s, d = 5, l = 300 ns, t = 1 us, r = 1 us give 175,000 B.
#[test]
fn paper_memory_on_a_five_hop_network() {
    let s = section(&report("examples/canary_small.coll"));
    assert!(s.contains("b(2d(l + t) + r) = 175000 B"), "{s}");
    assert!(s.contains("d = 5 hops"), "{s}");
    insta::assert_snapshot!("canary_small", s);
}

/// The paper's 1,024-host fat tree of 64-port switches: 4 shards make 262,144 multicast
/// entries (Section 4.2), and 256 four-byte elements a 1081-byte packet (Section 5.1).
#[test]
fn paper_fat_tree() {
    let s = section(&report("examples/fat_tree_1024.coll"));
    assert!(s.contains("= 262144 (Section 4.2"), "{s}");
    assert!(s.contains("= 1081 B"), "{s}");
    insta::assert_snapshot!("fat_tree_1024", s);
}

/// Under a packet model the per-hop delay adds its `switch_delay` and the overhead is its
/// `header`; a table smaller than the blocks in flight is pointed out.
#[test]
fn packet_model_and_a_small_table() {
    let dir = std::env::temp_dir().join(format!("collc-canary-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("star.coll");
    std::fs::write(
        &path,
        "topology t {
    compute host[4];
    switch sw;
    for i in 0..4 { link host[i] <-> sw : 100 Gbps, latency 200 ns; }
}
collective allreduce { size: 1 MiB; dtype: i32; }
schedule canary { table_size: 16; retransmit: 20 us; }
model wire: packet { switch_delay: 250 ns; }
",
    )
    .expect("write");
    let r = report(path.to_str().expect("UTF-8 path"));
    let _ = std::fs::remove_dir_all(&dir);
    let s = section(&r);
    assert!(s.contains("l = 450 ns"), "{s}");
    assert!(s.contains("fewer descriptors than blocks in flight"), "{s}");
    insta::assert_snapshot!("packet_model", s);
}

/// Targets of programs of sends still refuse Canary with E0039: it runs as a protocol.
#[test]
fn not_lowered_for_goal() {
    let out = collc()
        .args(["build", "--target", "goal", "examples/canary_small.coll"])
        .output()
        .expect("runs collc");
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("E0039"));
}
