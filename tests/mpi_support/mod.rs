//! Shared by tests/mpi.rs and tests/mpi_emit.rs: the collc binary, `target/`, `.coll` sources
//! of the schedules the MPI tests generate, and lowering them.

use collc::diag::SourceMap;
use collc::ir::Program;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn collc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_collc"))
}

/// `target/` of this build.
pub fn target_dir() -> PathBuf {
    let exe = Path::new(env!("CARGO_BIN_EXE_collc"));
    exe.ancestors()
        .nth(2)
        .expect("target/<profile>/collc")
        .to_path_buf()
}

/// A `.coll` file: `n` hosts in a ring, the collective and the schedule.
pub fn source(n: u32, collective: &str, schedule: &str) -> String {
    let end = if schedule.ends_with('}') { "" } else { ";" };
    format!(
        "generator ring_of(n: int) {{\n    compute host[n];\n    for i in 0..n {{\n        link host[i] <-> host[(i + 1) % n] : 25 GB/s;\n    }}\n}}\ntopology t = ring_of({n});\ncollective {collective}\nschedule {schedule}{end}\n"
    )
}

pub fn lowered(src: &str) -> Program {
    let mut sources = SourceMap::new();
    let id = sources.add("t.coll", src.to_string());
    let checked = collc::sema::check(&mut sources, id, &collc::sema::Options::default());
    assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
    let m = checked.model.expect("a model");
    collc::lower::lower_and_verify(&m)
        .unwrap_or_else(|d| panic!("{}", d[0].message))
        .0
}

/// Text replacements in a source: (text, replacement).
pub type Edits = &'static [(&'static str, &'static str)];

/// Example files run under mpirun as they are, except the message size (the schedule, its trees
/// and chunks do not depend on it; a smaller size keeps the run short): (name, file, ranks,
/// [(text, replacement)]). MPI has no 16-bit floats (E0042), so those become f32 with the same
/// schedule. 16 and 32 ranks are oversubscribed 8 and 16 to a core.
pub const EXAMPLE_PROGRAMS: &[(&str, &str, u32, Edits)] = &[
    (
        "example-forestcoll-fig2",
        "forestcoll_fig2.coll",
        8,
        &[("size: 64 MiB", "size: 1 MiB")],
    ),
    (
        "example-mi250-8plus8",
        "mi250_8plus8.coll",
        16,
        &[
            ("size: 256 MiB", "size: 2 MiB"),
            ("dtype: bf16", "dtype: f32"),
        ],
    ),
    (
        "example-dgx-a100-2x8",
        "dgx_a100_2x8.coll",
        16,
        &[
            ("size: 63 MiB", "size: 7 MiB"),
            ("dtype: f16", "dtype: f32"),
        ],
    ),
    (
        "example-mi250-2x16",
        "mi250_2x16.coll",
        32,
        &[
            ("size: 332 MiB", "size: 2 MiB"),
            ("dtype: bf16", "dtype: f32"),
        ],
    ),
];

/// The source of an [`EXAMPLE_PROGRAMS`] entry.
pub fn example_source(file: &str, edits: &[(&str, &str)]) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(file);
    let mut text = std::fs::read_to_string(&path).expect("the example exists");
    for (from, to) in edits {
        assert!(text.contains(from), "{file} no longer says `{from}`");
        text = text.replacen(from, to, 1);
    }
    text
}

/// (name, ranks, collective, schedule) of every program run under mpirun.
pub const PROGRAMS: &[(&str, u32, &str, &str)] = &[
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
        "pairwise-alltoall-f64-5",
        5,
        "alltoall { count: 500; dtype: f64; }",
        "pairwise",
    ),
    (
        "bruck-alltoall-i32-6",
        6,
        "alltoall { count: 606; dtype: i32; }",
        "bruck { radix: 3; }",
    ),
    (
        "bruck-alltoall-f32-8",
        8,
        "alltoall { count: 800; dtype: f32; }",
        "bruck",
    ),
    (
        "mcf-alltoall-f64-6",
        6,
        "alltoall { count: 600; dtype: f64; }",
        "mcf { chunks: 2; }",
    ),
    (
        "pairwise-concurrent-alltoall-i64-3",
        3,
        "alltoall { count: 300; dtype: i64; }",
        "pairwise { concurrent: true; }",
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
    (
        "forest-allreduce-f64-sum-8",
        8,
        "allreduce { count: 800; dtype: f64; op: sum; }",
        "forest { k: auto; chunks: 2; }",
    ),
    (
        "forest-allgather-i64-8",
        8,
        "allgather { count: 800; dtype: i64; }",
        "forest { k: 2; chunks: 3; }",
    ),
    (
        "forest-broadcast-f32-8",
        8,
        "broadcast { count: 777; dtype: f32; root: host[5]; }",
        "forest { k: auto; chunks: 4; }",
    ),
];
