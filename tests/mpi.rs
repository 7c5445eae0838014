//! The `mpi` target: `collc build FILE --target mpi -o DIR` end to end.
//!
//! `generated_programs_pass_check_under_mpirun` generates one project per schedule (recursive
//! doubling, recursive multiplying with factor, collapse/expand and merge stages, ring, binomial
//! trees, a barrier; i64/f64/f32/i32; sum, max, prod; 2 to 8 ranks), builds them in ONE Cargo
//! workspace with one target directory under `target/mpi-tests/` (kept between runs, so the
//! `mpi` crate builds once), fails on any compiler warning, and runs each with OpenMPI's
//! `mpirun --oversubscribe ... --check`. It FAILS when mpirun is missing: `scripts/test-all`
//! installs OpenMPI. A deliberately broken schedule must fail its check, and a wrong process
//! count must be refused. The other tests need no MPI: the encoding round-trips into a program
//! the verifier accepts, with one MPI tag per message between two ranks; output is
//! deterministic and written atomically; a snapshot shows one small project.

use collc::backend::mpi::{self, encode};
use collc::diag::SourceMap;
use collc::ir::{OpKind, Program, text, verify::verify};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn collc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_collc"))
}

/// `target/` of this build.
fn target_dir() -> PathBuf {
    let exe = Path::new(env!("CARGO_BIN_EXE_collc"));
    exe.ancestors()
        .nth(2)
        .expect("target/<profile>/collc")
        .to_path_buf()
}

/// A `.coll` file: `n` hosts in a ring, the collective and the schedule.
fn source(n: u32, collective: &str, schedule: &str) -> String {
    let end = if schedule.ends_with('}') { "" } else { ";" };
    format!(
        "generator ring_of(n: int) {{\n    compute host[n];\n    for i in 0..n {{\n        link host[i] <-> host[(i + 1) % n] : 25 GB/s;\n    }}\n}}\ntopology t = ring_of({n});\ncollective {collective}\nschedule {schedule}{end}\n"
    )
}

fn lowered(src: &str) -> Program {
    let mut sources = SourceMap::new();
    let id = sources.add("t.coll", src.to_string());
    let checked = collc::sema::check(&mut sources, id, &collc::sema::Options::default());
    assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
    let m = checked.model.expect("a model");
    collc::lower::lower_and_verify(&m)
        .unwrap_or_else(|d| panic!("{}", d[0].message))
        .0
}

/// (name, ranks, collective, schedule) of every program run under mpirun.
const PROGRAMS: &[(&str, u32, &str, &str)] = &[
    (
        "rd-i64-sum-8",
        8,
        "allreduce { count: 1000; dtype: i64; op: sum; }",
        "recursive_doubling",
    ),
    (
        "rd-f64-sum-6",
        6,
        "allreduce { count: 1000; dtype: f64; op: sum; }",
        "recursive_doubling",
    ),
    (
        "rd-f64-max-3",
        3,
        "allreduce { count: 999; dtype: f64; op: max; }",
        "recursive_doubling",
    ),
    (
        "rd-i64-sum-2",
        2,
        "allreduce { count: 10; dtype: i64; op: sum; }",
        "recursive_doubling",
    ),
    (
        "rm-a2a4-f64-sum-8",
        8,
        "allreduce { count: 1000; dtype: f64; op: sum; }",
        "recursive_multiplying { stages: [a2, a4]; }",
    ),
    (
        "rm-a3a2-i64-max-6",
        6,
        "allreduce { count: 1000; dtype: i64; op: max; }",
        "recursive_multiplying { stages: [a3, a2]; }",
    ),
    (
        "rm-collapse-f64-sum-7",
        7,
        "allreduce { count: 1000; dtype: f64; op: sum; }",
        "recursive_multiplying { stages: [c6m3, a3, e6m3]; }",
    ),
    (
        "rm-collapse-i64-sum-5",
        5,
        "allreduce { count: 1000; dtype: i64; op: sum; }",
        "recursive_multiplying { stages: [c4m2, a3, e4m2]; }",
    ),
    (
        "rm-merge-f64-sum-7",
        7,
        "allreduce { count: 1000; dtype: f64; op: sum; }",
        "recursive_multiplying { stages: [m1g1a3, n1g1a2]; }",
    ),
    (
        "rm-merge-i64-max-5",
        5,
        "allreduce { count: 1000; dtype: i64; op: max; }",
        "recursive_multiplying { stages: [m1g1a2, n1g1a2]; }",
    ),
    (
        "rm-a4-f32-prod-4",
        4,
        "allreduce { count: 1000; dtype: f32; op: prod; }",
        "recursive_multiplying { stages: [a4]; }",
    ),
    (
        "ring-f64-sum-5",
        5,
        "allreduce { count: 1001; dtype: f64; op: sum; }",
        "ring",
    ),
    (
        "ring-i64-max-4",
        4,
        "allreduce { count: 1000; dtype: i64; op: max; }",
        "ring",
    ),
    (
        "ring-allgather-f64-6",
        6,
        "allgather { count: 600; dtype: f64; }",
        "ring",
    ),
    (
        "ring-reduce-scatter-i64-4",
        4,
        "reduce_scatter { count: 400; dtype: i64; op: sum; }",
        "ring",
    ),
    (
        "binomial-broadcast-f32-5",
        5,
        "broadcast { count: 777; dtype: f32; root: host[2]; }",
        "binomial",
    ),
    (
        "binomial-reduce-i32-prod-6",
        6,
        "reduce { count: 500; dtype: i32; op: prod; root: host[3]; }",
        "binomial",
    ),
    ("rd-barrier-5", 5, "barrier;", "recursive_doubling"),
];

/// A program whose check must fail: recursive doubling on 4 ranks where rank 1's last
/// reduction is a copy (it drops a contribution).
fn broken() -> Program {
    let src = source(
        4,
        "allreduce { count: 100; dtype: f64; op: sum; }",
        "recursive_doubling",
    );
    let mut p = lowered(&src);
    let op = p.procs[1]
        .ops
        .iter_mut()
        .rev()
        .find(|o| matches!(o.kind, OpKind::Reduce { .. }))
        .expect("a reduction");
    if let OpKind::Reduce { dst, src } = op.kind {
        op.kind = OpKind::Copy { dst, src };
    }
    p
}

/// Writes the files whose contents changed, so Cargo rebuilds only programs that changed.
fn sync(dir: &Path, files: &[(String, Vec<u8>)]) {
    for (path, bytes) in files {
        let p = dir.join(path);
        if std::fs::read(&p).ok().as_deref() != Some(bytes.as_slice()) {
            std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
            std::fs::write(p, bytes).expect("write");
        }
    }
}

/// The files of the project collc wrote to `dir`, as (relative path, contents).
fn read_tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("generated dir") {
        let p = e.expect("entry").path();
        let name = p.file_name().expect("name").to_string_lossy().into_owned();
        if p.is_dir() {
            for (sub, bytes) in read_tree(&p) {
                out.push((format!("{name}/{sub}"), bytes));
            }
        } else {
            out.push((name, std::fs::read(&p).expect("read")));
        }
    }
    out
}

/// `mpirun` of OpenMPI (pinned when Debian also has MPICH), and `mpicc` to match.
fn openmpi() -> (String, Option<&'static str>) {
    let has = |c: &str| {
        Command::new(c)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok()
    };
    if has("mpirun.openmpi") {
        return ("mpirun.openmpi".into(), Some("mpicc.openmpi"));
    }
    assert!(
        has("mpirun"),
        "mpirun is missing: install OpenMPI (`apt-get install openmpi-bin libopenmpi-dev libclang-dev`; scripts/test-all does)"
    );
    ("mpirun".into(), None)
}

/// Runs `prog` on `n` processes with `args`; (exit code, stdout, stderr).
fn mpirun(mpirun: &str, n: u32, prog: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let mut child = Command::new(mpirun)
        .args(["--oversubscribe", "-n", &n.to_string()])
        .arg(prog)
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpirun starts");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn generated_programs_pass_check_under_mpirun() {
    let (launcher, mpicc) = openmpi();
    let ws = target_dir().join("mpi-tests");
    std::fs::create_dir_all(ws.join("gen")).expect("workspace dir");
    let mut members = Vec::new();
    for (name, n, coll, sched) in PROGRAMS {
        let file = ws.join(format!("{name}.coll"));
        std::fs::write(&file, source(*n, coll, sched)).expect("write .coll");
        // collc writes the project into gen/NAME; only changed files go to the member NAME
        // (same package name), so a rerun does not rebuild unchanged programs.
        let out = collc()
            .args(["build", "--target", "mpi", "-o"])
            .arg(ws.join("gen").join(name))
            .arg(&file)
            .output()
            .expect("collc runs");
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        sync(&ws.join(name), &read_tree(&ws.join("gen").join(name)));
        members.push(format!("{name:?}"));
    }
    let project = mpi::emit(&broken(), "broken-rd-f64-sum-4").expect("emits");
    sync(&ws.join("broken-rd-f64-sum-4"), &project.files);
    members.push("\"broken-rd-f64-sum-4\"".into());
    let toml = format!(
        "[workspace]\nresolver = \"2\"\nmembers = [{}]\n",
        members.join(", ")
    );
    std::fs::write(ws.join("Cargo.toml"), toml).expect("workspace Cargo.toml");

    // The generated sources are rustfmt-formatted.
    let fmt = Command::new("rustfmt")
        .args(["--check", "--edition", "2021"])
        .arg(ws.join("rd-i64-sum-8/src/main.rs"))
        .output()
        .expect("rustfmt runs");
    assert!(
        fmt.status.success(),
        "{}",
        String::from_utf8_lossy(&fmt.stdout)
    );

    let start = Instant::now();
    let mut build = Command::new("cargo");
    build
        .args(["build", "--workspace", "--message-format", "short"])
        .current_dir(&ws)
        .env("CARGO_TARGET_DIR", ws.join("target"))
        .env("CARGO_TERM_COLOR", "never");
    if let Some(cc) = mpicc {
        build.env("MPICC", cc);
    }
    let out = build.output().expect("cargo runs");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "cargo build failed:\n{log}");
    let warnings: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("warning") && !l.contains("mpi-sys@"))
        .collect();
    assert!(
        warnings.is_empty(),
        "the generated programs have warnings:\n{log}"
    );
    eprintln!("built {} programs in {:?}", members.len(), start.elapsed());

    let bin = |name: &str| ws.join("target/debug").join(name);
    let start = Instant::now();
    let mut failures = Vec::new();
    for (name, n, _, _) in PROGRAMS {
        let (code, stdout, stderr) = mpirun(&launcher, *n, &bin(name), &["--check"]);
        if code != Some(0) || !stdout.contains("check passed") {
            failures.push(format!(
                "{name} on {n} ranks: exit {code:?}\n{stdout}{stderr}"
            ));
        }
    }
    let (code, stdout, stderr) = mpirun(&launcher, 4, &bin("broken-rd-f64-sum-4"), &["--check"]);
    if code != Some(1) || !stderr.contains("check FAILED") {
        failures.push(format!(
            "the broken schedule passed its check (exit {code:?}):\n{stdout}{stderr}"
        ));
    }
    let (code, _, stderr) = mpirun(&launcher, 3, &bin("rd-i64-sum-2"), &[]);
    if code == Some(0) || !stderr.contains("for 2 ranks, but MPI started 3 processes") {
        failures.push(format!(
            "a wrong process count was not refused (exit {code:?}):\n{stderr}"
        ));
    }
    let (code, stdout, stderr) = mpirun(&launcher, 4, &bin("ring-i64-max-4"), &["--bench", "20"]);
    if code != Some(0) || !stdout.contains("MPI_Allreduce:") {
        failures.push(format!("--bench failed (exit {code:?}):\n{stdout}{stderr}"));
    }
    eprintln!(
        "ran {} programs in {:?}",
        PROGRAMS.len() + 3,
        start.elapsed()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The decoded schedule is the program with MPI tags: the same ops, a tag of its own for every
/// message between two ranks, and it still verifies (so MPI pairs the messages the IR does).
#[test]
fn encoding_round_trips_with_one_tag_per_message() {
    for (name, n, coll, sched) in PROGRAMS {
        let p = lowered(&source(*n, coll, sched));
        let bytes = encode::encode(&p).expect("encodes");
        assert_eq!(
            bytes,
            encode::encode(&p).expect("encodes"),
            "{name}: deterministic"
        );
        let d = encode::decode(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((&d.name, &d.spec), (&p.name, &p.spec), "{name}");
        for (a, b) in p.procs.iter().zip(&d.procs) {
            assert_eq!(a.scratch, b.scratch, "{name}");
            assert_eq!(a.ops.len(), b.ops.len(), "{name}");
            for (x, y) in a.ops.iter().zip(&b.ops) {
                assert_eq!(x.deps, y.deps, "{name}");
                let untag = |k: &OpKind| match *k {
                    OpKind::Send { peer, src, .. } => OpKind::Send { peer, src, tag: 0 },
                    OpKind::Recv { peer, dst, .. } => OpKind::Recv { peer, dst, tag: 0 },
                    OpKind::RecvReduce { peer, dst, .. } => {
                        OpKind::RecvReduce { peer, dst, tag: 0 }
                    }
                    ref other => other.clone(),
                };
                assert_eq!(untag(&x.kind), untag(&y.kind), "{name}");
            }
        }
        verify(&d).unwrap_or_else(|f| panic!("{name}: {}", f[0].message));
        let mut sends: Vec<(u32, u32, u32)> = Vec::new();
        for (pi, proc) in d.procs.iter().enumerate() {
            for op in &proc.ops {
                if let OpKind::Send { peer, tag, .. } = op.kind {
                    assert!(tag <= encode::MAX_TAG, "{name}");
                    sends.push((pi as u32, peer, tag));
                }
            }
        }
        let all = sends.len();
        sends.sort_unstable();
        sends.dedup();
        assert_eq!(sends.len(), all, "{name}: two messages share a tag");
    }
}

#[test]
fn half_precision_is_e0042_and_writes_nothing() {
    let dir = tempdir("f16");
    let file = dir.join("half.coll");
    let src = source(4, "allreduce { count: 8; dtype: bf16; op: sum; }", "ring");
    std::fs::write(&file, src).expect("write");
    let out = collc()
        .args(["build", "--target", "mpi", "-o"])
        .arg(dir.join("out"))
        .arg(&file)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("error[E0042]"));
    let left: Vec<_> = std::fs::read_dir(&dir).expect("dir").collect();
    assert_eq!(left.len(), 1, "only the input is left: {left:?}");
    let p = lowered(&source(
        4,
        "allreduce { count: 8; dtype: f16; op: sum; }",
        "ring",
    ));
    assert!(mpi::emit(&p, "x").is_err());
}

fn tempdir(name: &str) -> PathBuf {
    let d = target_dir().join("mpi-tests-tmp").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// A rebuild replaces a project collc wrote and keeps `target/` and `Cargo.lock`; a directory
/// collc did not write is left alone; no temporary directory is left behind.
#[test]
fn output_directory_is_replaced_atomically() {
    let dir = tempdir("atomic");
    let file = dir.join("rd.coll");
    let src = source(
        4,
        "allreduce { count: 8; dtype: i64; op: sum; }",
        "recursive_doubling",
    );
    std::fs::write(&file, src).expect("write");
    let build = |out: &Path| {
        collc()
            .args(["build", "--target", "mpi", "-o"])
            .arg(out)
            .arg(&file)
            .output()
            .expect("runs")
    };
    let out = dir.join("prog");
    assert!(build(&out).status.success());
    let first = std::fs::read(out.join("src/schedule.bin")).expect("schedule");
    std::fs::create_dir_all(out.join("target")).expect("mkdir");
    std::fs::write(out.join("target/marker"), "kept").expect("write");
    std::fs::write(out.join("Cargo.lock"), "# lock").expect("write");
    std::fs::write(out.join("src/stale.rs"), "").expect("write");
    assert!(build(&out).status.success());
    assert_eq!(
        std::fs::read(out.join("src/schedule.bin")).expect("again"),
        first
    );
    assert!(out.join("target/marker").exists() && out.join("Cargo.lock").exists());
    assert!(!out.join("src/stale.rs").exists());
    // `-o .` from inside the project works too.
    let here = collc()
        .args(["build", "--target", "mpi", "-o", "."])
        .arg(&file)
        .current_dir(&out)
        .output()
        .expect("runs");
    assert!(
        here.status.success(),
        "{}",
        String::from_utf8_lossy(&here.stderr)
    );
    assert!(out.join("target/marker").exists() && out.join("src/schedule.bin").exists());
    let other = dir.join("mine");
    std::fs::create_dir_all(&other).expect("mkdir");
    std::fs::write(other.join("notes.txt"), "mine").expect("write");
    let r = build(&other);
    assert_eq!(
        r.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    assert!(other.join("notes.txt").exists() && !other.join("Cargo.toml").exists());
    let names: Vec<String> = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("collc-"))
        .collect();
    assert!(names.is_empty(), "left behind: {names:?}");
    let none = collc()
        .args(["build", "--target", "mpi"])
        .arg(&file)
        .output();
    assert_eq!(none.expect("runs").status.code(), Some(1), "-o is required");
}

/// One small project as a person reviews it: the files, Cargo.toml, README.md and the decoded
/// schedule (the IR with MPI tags). The runtime sources are the fixed text in
/// src/backend/mpi/runtime/.
#[test]
fn snapshot_of_a_small_project() {
    let p = lowered(&source(
        3,
        "allreduce { count: 6; dtype: i64; op: sum; }",
        "ring",
    ));
    let project = mpi::emit(&p, "ring-3").expect("emits");
    let mut shown = String::from("files:\n");
    for (path, bytes) in &project.files {
        let fixed = mpi::project::RUNTIME
            .iter()
            .any(|(p, t)| p == path && t.as_bytes() == bytes);
        let note = if fixed { " (fixed runtime source)" } else { "" };
        shown.push_str(&format!("  {path}{note}\n"));
    }
    for f in ["Cargo.toml", "README.md"] {
        let text = String::from_utf8_lossy(project.file(f).expect("file"));
        shown.push_str(&format!("\n==> {f} <==\n{text}"));
    }
    let bin = project.file("src/schedule.bin").expect("schedule");
    let decoded = encode::decode(bin).expect("decodes");
    shown.push_str(&format!(
        "\n==> src/schedule.bin ({} bytes), decoded <==\n{}",
        bin.len(),
        text::print(&decoded)
    ));
    insta::assert_snapshot!(shown);
}
