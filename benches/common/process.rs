//! Benchmarks that time the `collc` binary as a user runs it: a source of a star network, a
//! command under `/usr/bin/time` (wall time and peak memory), medians.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

pub const BIN: &str = env!("CARGO_BIN_EXE_collc");

/// A star of `n` hosts with an allreduce of `size` and `schedule` (a family name, or a
/// family with a `{ ... }` block).
pub fn source(n: u32, size: &str, schedule: &str) -> String {
    let end = if schedule.ends_with('}') { "" } else { ";" };
    format!(
        "topology t {{\n    compute host[{n}];\n    switch s;\n    for i in 0..{n} {{ link host[i] <-> s : 25 GB/s; }}\n}}\ncollective allreduce {{ size: {size}; dtype: f32; op: sum; }}\nschedule {schedule}{end}\n"
    )
}

/// Writes `src` to `dir/f.coll` and builds it into `dir/f.goal` under limits raised for
/// millions of ranks; (seconds, peak KB if known) as [`measure`] gives them.
pub fn build_goal(src: &str, dir: &Path) -> (f64, Option<u64>) {
    std::fs::write(dir.join("f.coll"), src).expect("write");
    let (t, kb, _) = measure(
        BIN,
        &[
            "build",
            "f.coll",
            "--target",
            "goal",
            "-o",
            "f.goal",
            "--max-nodes",
            "2000000",
            "--max-links",
            "4000000",
            "--max-ops",
            "200000000",
        ],
        dir,
    );
    (t, kb)
}

/// Simulates `dir/f.goal` (`-b`, events up to 10^9): (seconds, peak KB if known, stdout).
pub fn sim_goal(dir: &Path) -> (f64, Option<u64>, String) {
    measure(
        BIN,
        &["sim", "f.goal", "-b", "--max-events", "1000000000"],
        dir,
    )
}

pub fn on_path(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs `cmd args`, under `/usr/bin/time` when it exists: (seconds, peak KB if known, stdout).
pub fn measure(cmd: &str, args: &[&str], dir: &Path) -> (f64, Option<u64>, String) {
    let timed = Path::new("/usr/bin/time").exists();
    let start = Instant::now();
    let out = if timed {
        Command::new("/usr/bin/time")
            .args(["-f", "%e %M"])
            .arg(cmd)
            .args(args)
            .current_dir(dir)
            .output()
    } else {
        Command::new(cmd).args(args).current_dir(dir).output()
    }
    .unwrap_or_else(|e| panic!("{cmd} runs: {e}"));
    let secs = start.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kb = timed
        .then(|| {
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|k| k.parse().ok())
        })
        .flatten();
    (secs, kb, String::from_utf8_lossy(&out.stdout).to_string())
}

/// The finishing time in a `-b` output (`Maximum finishing time at host 0: 88672 (...)`, as
/// collc and LogGOPSim both print it).
pub fn finish(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("Maximum finishing time at host "))
        .and_then(|l| l.split(": ").nth(1))
        .and_then(|t| t.split_whitespace().next())
        .unwrap_or(out.trim())
        .to_string()
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The machine's memory latency, ns per dependent load: a chase through a random cycle over
/// `mib` MiB (Sattolo's shuffle, a fixed seed), past the caches when `mib` is larger than
/// them. Printed beside figures of memory-bound runs, so machines can be told apart: the
/// same build ran the flow and packet simulators five to eight times slower on a machine that
/// chased at about 470 ns than on those the earlier figures came from.
pub fn memory_latency_ns(mib: usize) -> f64 {
    let n = (mib << 20) / 4;
    let mut next: Vec<u32> = (0..n as u32).collect();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in (1..n).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        next.swap(i, (x % i as u64) as usize);
    }
    let steps = 4_000_000;
    let mut p = 0u32;
    let start = Instant::now();
    for _ in 0..steps {
        p = next[p as usize];
    }
    let ns = start.elapsed().as_secs_f64() * 1e9 / steps as f64;
    std::hint::black_box(p);
    ns
}
