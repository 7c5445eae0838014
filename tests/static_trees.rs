//! Static in-network trees: lowered with switch processes and proved by `ir::verify` for
//! several tree counts, collectives and topologies; written as GOAL (switches as ranks) that
//! collc's GOAL reader accepts and its LogGP simulator runs to the end; roots by seed or by
//! name; and coded errors for what cannot be built.

use collc::diag::SourceMap;
use collc::ir::ProcKind;
use std::process::Command;

fn lower(src: &str) -> Result<collc::ir::Program, String> {
    let mut files = SourceMap::new();
    let id = files.add("t.coll", src.to_string());
    let c = collc::sema::check(&mut files, id, &collc::sema::Options::default());
    if !c.diagnostics.is_empty() {
        return Err(format!("{:?}", c.diagnostics));
    }
    let m = c.model.expect("a model");
    collc::lower::lower_and_verify_with(&m, &collc::progress::Quiet)
        .map(|(p, _, _)| p)
        .map_err(|d| {
            d.iter()
                .map(|x| x.message.clone())
                .collect::<Vec<_>>()
                .join("; ")
        })
}

const TOPOLOGIES: &[&str] = &[
    "import fat_tree;\ntopology t = fat_tree(leaves: 4, hosts_per_leaf: 4, spines: 4, host_bw: 100 Gbps, spine_bw: 100 Gbps);",
    "import fat_tree;\ntopology t = fat_tree(leaves: 3, hosts_per_leaf: 2, spines: 2, host_bw: 100 Gbps, spine_bw: 50 Gbps);",
    "import dragonfly;\ntopology t = dragonfly(groups: 3, routers: 2, hosts_per_router: 2, host_bw: 100 Gbps, local_bw: 100 Gbps, global_bw: 50 Gbps);",
    "topology t { compute h[5]; switch a; switch b; switch c; for i in 0..3 { link h[i] <-> a : 10 GB/s; } link h[3] <-> b : 10 GB/s; link h[4] <-> c : 10 GB/s; link a <-> b : 10 GB/s; link b <-> c : 10 GB/s; }",
];

fn file(topo: &str, collective: &str, schedule: &str) -> String {
    format!("{topo}\ncollective {collective}\nschedule {schedule}\n")
}

#[test]
fn proved_for_tree_counts_collectives_and_topologies() {
    let collectives = [
        "allreduce { count: 1000; dtype: f32; }",
        "allreduce { participants: [h[0], h[3], h[4]]; count: 7; dtype: i32; op: max; }",
        "reduce { count: 64; dtype: f64; root: h[4]; }",
        "broadcast { count: 64; dtype: f64; root: h[1]; }",
    ];
    let mut proved = 0;
    for (ti, topo) in TOPOLOGIES.iter().enumerate() {
        for coll in collectives {
            // The named hosts exist only in the hand-made topology; the generators' hosts are
            // `host[l][h]` or `host[g][r][h]`.
            let coll = if ti == 3 {
                coll.to_string()
            } else if ti == 2 {
                coll.replace("h[0]", "host[0][0][0]")
                    .replace("h[3]", "host[1][0][1]")
                    .replace("h[4]", "host[2][1][0]")
                    .replace("h[1]", "host[0][1][1]")
            } else {
                coll.replace("h[0]", "host[0][0]")
                    .replace("h[3]", "host[1][1]")
                    .replace("h[4]", "host[2][0]")
                    .replace("h[1]", "host[0][1]")
            };
            for trees in 1..=3 {
                let src = file(
                    topo,
                    &coll,
                    &format!("static_trees {{ trees: {trees}; seed: 7; }}"),
                );
                let p = lower(&src).unwrap_or_else(|e| panic!("{src}\n{e}"));
                let switches = p
                    .procs
                    .iter()
                    .filter(|x| matches!(x.kind, ProcKind::Switch(_)))
                    .count();
                assert!(switches >= 1, "{src}");
                assert!(
                    p.name.starts_with(&format!("static_trees {trees} roots")),
                    "{}",
                    p.name
                );
                proved += 1;
            }
        }
    }
    assert_eq!(proved, TOPOLOGIES.len() * 4 * 3);
}

#[test]
fn goal_output_is_read_back_and_simulated() {
    let dir = std::env::temp_dir().join(format!("collc-static-trees-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let src = file(
        TOPOLOGIES[0],
        "allreduce { size: 64 KiB; dtype: f32; }",
        "static_trees { trees: 4; }",
    );
    let coll = dir.join("st.coll");
    std::fs::write(&coll, &src).expect("write");
    let goal = dir.join("st.goal");
    let bin = env!("CARGO_BIN_EXE_collc");
    let o = Command::new(bin)
        .args(["build", &coll.to_string_lossy(), "--target", "goal", "-o"])
        .arg(&goal)
        .output()
        .expect("run");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(&goal).expect("GOAL written");
    // 16 hosts, 4 leaves, 4 spines: every switch aggregates for some tree.
    assert!(
        text.contains("num_ranks 24"),
        "{}",
        &text[..200.min(text.len())]
    );
    let s = collc::backend::goal::parse(collc::diag::FileId(0), &text).expect("GOAL parses");
    assert!(collc::backend::goal::validate(&s).is_empty());
    let sim = Command::new(bin)
        .args(["sim", &goal.to_string_lossy(), "-b"])
        .output()
        .expect("run");
    assert_eq!(
        sim.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&sim.stderr)
    );
    let out = String::from_utf8_lossy(&sim.stdout);
    // LogGOPSim's `-b` line: `Maximum finishing time at host H: T (S s)`.
    let last: u64 = out
        .lines()
        .filter_map(|l| {
            l.split_once(": ")?
                .1
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .next_back()
        .expect("a time");
    assert!(last > 0, "{out}");
}

#[test]
fn roots_by_seed_or_by_name() {
    let at = |sched: &str| {
        lower(&file(
            TOPOLOGIES[0],
            "allreduce { count: 64; dtype: f32; }",
            sched,
        ))
        .expect("lowered")
        .name
    };
    // Random roots are spines (the most central switches), repeatable by seed.
    let a = at("static_trees { trees: 2; seed: 1; }");
    assert_eq!(a, at("static_trees { trees: 2; seed: 1; }"));
    assert!(a.matches("spine[").count() == 2, "{a}");
    let seeds: std::collections::BTreeSet<String> = (0..8)
        .map(|s| at(&format!("static_trees {{ trees: 2; seed: {s}; }}")))
        .collect();
    assert!(
        seeds.len() > 1,
        "every seed picked the same roots: {seeds:?}"
    );
    let named = at("static_trees { roots: [spine[3], leaf[1]]; }");
    assert_eq!(named, "static_trees 2 roots [spine[3], leaf[1]]");
}

#[test]
fn what_cannot_be_built_is_a_coded_error() {
    let star =
        "topology t { compute h[4]; switch s; for i in 0..4 { link h[i] <-> s : 10 GB/s; } }";
    let e = lower(&file(
        star,
        "allreduce { count: 8; }",
        "static_trees { trees: 2; }",
    ))
    .expect_err("two trees on one switch");
    assert!(e.contains("2 trees need 2 root switches"), "{e}");
    let mut files = SourceMap::new();
    for (sched, want) in [
        ("static_trees { roots: [h[0]]; }", "E0024"),
        ("static_trees { trees: 2; roots: [s]; }", "E0024"),
        ("static_trees { roots: [s, s]; }", "E0024"),
        ("static_trees { seed: -1; }", "E0008"),
    ] {
        let id = files.add("t.coll", file(star, "allreduce { count: 8; }", sched));
        let c = collc::sema::check(&mut files, id, &collc::sema::Options::default());
        let codes: Vec<&str> = c.diagnostics.iter().map(|d| d.code.as_str()).collect();
        assert_eq!(codes, [want], "{sched}");
        assert!(c.diagnostics.iter().all(|d| d.help.is_some()));
    }
    // A participant with no switch next to it.
    let lonely = "topology t { compute h[3]; switch s; link h[0] <-> s : 10 GB/s; link h[1] <-> s : 10 GB/s; link h[2] <-> h[0] : 10 GB/s; }";
    let e = lower(&file(lonely, "allreduce { count: 8; }", "static_trees;"))
        .expect_err("h[2] has no switch");
    assert!(e.contains("`h[2]` has no switch"), "{e}");
}

#[test]
fn report_section() {
    let dir = std::env::temp_dir().join(format!("collc-static-report-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let f = dir.join("ft.coll");
    std::fs::write(
        &f,
        file(
            TOPOLOGIES[0],
            "allreduce { size: 1 MiB; dtype: f32; }",
            "static_trees { trees: 4; }",
        ),
    )
    .expect("write");
    let o = Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(["build", &f.to_string_lossy(), "--emit", "report"])
        .output()
        .expect("run");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    insta::assert_snapshot!(String::from_utf8_lossy(&o.stdout));
}
