//! `collc build` through the target seam, as a user runs it: a file's declared target is built
//! by default, several into `-o DIR`, `--emit` and `--target` do not mix, targets that are
//! simulated rather than built (`sim`) are coded errors, `p4` takes in-network schedules only,
//! and capability checks refuse before anything is lowered.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn collc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(args)
        .output()
        .expect("run collc")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("collc-targets-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write input");
    p.to_string_lossy().into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const RING: &str =
    "topology t { compute g[4]; for i in 0..4 { link g[i] <-> g[(i + 1) % 4] : 25 GB/s; } }
collective allreduce { count: 64; dtype: f32; }
schedule ring;
";

#[test]
fn a_declared_target_is_built_by_default() {
    let d = tmp("declared");
    let f = write(
        &d,
        "one.coll",
        &format!("{RING}target msccl {{ channels: 1; }}\n"),
    );
    let o = collc(&["build", &f]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let xml = String::from_utf8_lossy(&o.stdout);
    assert!(xml.starts_with("<algo"), "{xml}");
    // The same bytes as naming the target.
    let named = collc(&["build", &f, "--target", "msccl"]);
    assert_eq!(named.stdout, o.stdout);
    // `--emit` still prints what it names.
    let model = collc(&["build", &f, "--emit", "model"]);
    assert!(String::from_utf8_lossy(&model.stdout).contains("target msccl"));
}

#[test]
fn several_targets_need_a_directory() {
    let d = tmp("several");
    let f = write(
        &d,
        "two.coll",
        &format!("{RING}target msccl;\ntarget goal;\n"),
    );
    let o = collc(&["build", &f]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("E0030") && e.contains("-o DIR"), "{e}");
    let out = d.join("out");
    let o = collc(&["build", &f, "-o", &out.to_string_lossy()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let xml = std::fs::read_to_string(out.join("two.xml")).expect("the XML");
    assert!(xml.starts_with("<algo"));
    let goal = std::fs::read_to_string(out.join("two.goal")).expect("the GOAL");
    assert!(goal.contains("num_ranks 4"), "{goal}");
    // `--target` picks one of them.
    let o = collc(&["build", &f, "--target", "goal"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(o.stdout, goal.as_bytes());
}

#[test]
fn emit_and_target_do_not_mix() {
    let d = tmp("mix");
    let f = write(&d, "ring.coll", RING);
    let o = collc(&["build", &f, "--emit", "ir", "--target", "goal"]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
}

#[test]
fn p4_builds_in_network_schedules_into_a_directory_and_refuses_host_based_ones() {
    let d = tmp("p4");
    let sw = "topology t { compute h[4]; switch s; for i in 0..4 { link h[i] <-> s : 25 GB/s; } }
collective allreduce { count: 64; dtype: i32; }
schedule static_trees { trees: 1; }
";
    let declared = write(&d, "p4.coll", &format!("{sw}target p4;\n"));
    let o = collc(&["check", &declared]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = collc(&["build", &declared]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("-o DIR"), "{}", stderr(&o));
    let out = d.join("switches");
    let o = collc(&["build", &declared, "-o", &out.to_string_lossy()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.join("static_trees.p4").is_file());
    assert!(out.join("switches/s.cli.txt").is_file());
    let plain = write(&d, "plain.coll", RING);
    let o = collc(&[
        "build",
        &plain,
        "--target",
        "p4",
        "-o",
        &out.to_string_lossy(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("E0030") && e.contains("cannot express a `ring` schedule"),
        "{e}"
    );
    let o = collc(&["build", &plain, "--target", "sim"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("collc sim FILE"), "{}", stderr(&o));
    let o = collc(&["build", &plain, "--target", "nccl"]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("msccl, mpi, p4, goal, sim"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn capability_checks_run_before_lowering() {
    let d = tmp("capable");
    // 20,000 ranks: lowering a ring barrier this size for MSCCL would take gigabytes; the
    // capability check refuses it first.
    let f = write(
        &d,
        "barrier.coll",
        "topology t { compute g[20000]; for i in 0..20000 { link g[i] <-> g[(i + 1) % 20000] : 25 GB/s; } }
collective barrier;
schedule ring;
",
    );
    let o = collc(&["build", &f, "--target", "msccl"]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("E0030") && e.contains("MSCCL has no barrier"),
        "{e}"
    );
    let half = write(&d, "half.coll", &RING.replace("dtype: f32", "dtype: f16"));
    let o = collc(&[
        "build",
        &half,
        "--target",
        "mpi",
        "-o",
        &d.join("p").to_string_lossy(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("E0042"), "{}", stderr(&o));
    assert!(!d.join("p").exists());
    let o = collc(&["build", &half, "--target", "msccl", "--instances", "0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("`instances` must be at least 1"),
        "{}",
        stderr(&o)
    );
}
