//! The `mpi` target without MPI: the encoding round-trips into a program the verifier accepts,
//! with one MPI tag per message between two ranks; f16/bf16 are E0042 and write nothing; the
//! output directory is deterministic and written atomically; a snapshot shows one small
//! project. tests/mpi.rs builds and runs the generated programs under mpirun.

mod mpi_support;

use collc::backend::mpi::{self, encode};
use collc::ir::{OpKind, text, verify::verify};
use mpi_support::{EXAMPLE_PROGRAMS, PROGRAMS, collc, example_source, lowered, source, target_dir};
use std::path::{Path, PathBuf};

/// The decoded schedule is the program with MPI tags: the same ops, a tag of its own for every
/// message between two ranks, and it still verifies (so MPI pairs the messages the IR does).
#[test]
fn encoding_round_trips_with_one_tag_per_message() {
    let ring = PROGRAMS
        .iter()
        .map(|(name, n, coll, sched)| (*name, source(*n, coll, sched)));
    let examples = EXAMPLE_PROGRAMS
        .iter()
        .map(|(name, file, _, edits)| (*name, example_source(file, edits)));
    for (name, src) in ring.chain(examples) {
        let p = lowered(&src);
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
