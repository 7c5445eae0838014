//! The `mpi` target under mpirun: `collc build FILE --target mpi -o DIR` end to end.
//!
//! `generated_programs_pass_check_under_mpirun` generates one project per schedule (recursive
//! doubling, recursive multiplying with factor, collapse/expand and merge stages, ring, binomial
//! trees, ForestColl forests, pairwise and Bruck all-to-all (against `MPI_Alltoall`), a barrier; i64/f64/f32/i32; sum, max, prod; 2 to 8 ranks; and the
//! ForestColl examples forestcoll_fig2 (8 ranks) and mi250_8plus8 (16 ranks) as written, at a smaller size), builds them in ONE Cargo
//! workspace with one target directory under `target/mpi-tests/` (kept between runs, so the
//! `mpi` crate builds once), fails on any compiler warning, and runs each with OpenMPI's
//! `mpirun --oversubscribe ... --check`. It FAILS when mpirun is missing: `scripts/test-all`
//! installs OpenMPI. A deliberately broken schedule must fail its check, a wrong process count
//! must be refused, and `--bench` must report both timings. tests/mpi_emit.rs has the tests
//! that need no MPI.

mod mpi_support;

use collc::backend::mpi;
use collc::ir::{OpKind, Program};
use mpi_support::{EXAMPLE_PROGRAMS, PROGRAMS, collc, example_source, lowered, source, target_dir};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    let sources = PROGRAMS
        .iter()
        .map(|(name, n, coll, sched)| (*name, *n, source(*n, coll, sched)))
        .chain(
            EXAMPLE_PROGRAMS
                .iter()
                .map(|(name, file, n, edit)| (*name, *n, example_source(file, edit))),
        )
        .collect::<Vec<_>>();
    for (name, _, text) in &sources {
        let file = ws.join(format!("{name}.coll"));
        std::fs::write(&file, text).expect("write .coll");
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
    for (name, n, _) in &sources {
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
        sources.len() + 3,
        start.elapsed()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
