//! MSCCL XML that the runtime actually selects (issue 37): every XML collc writes, read back,
//! is picked by the executor's rule (the call's `count` a multiple of `nchunksperloop`,
//! `minBytes <= nBytes <= maxBytes`) at every nccl-tests size (8 B doubling) inside its window
//! and at the size it was built for, or an E0054 warning names the sizes where it is not.

use collc::backend::msccl::{self, Algo, Options, selectable};
use collc::diag::{Code, SourceMap, render};
use collc::sema::{Options as SemaOptions, check};
use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// nccl-tests sizes inside `a`'s window (up to `top` when it has none) at which the runtime
/// does not pick `a`.
fn skipped_inside(a: &Algo, type_bytes: u64, top: u64) -> Vec<u64> {
    let (_, no) = selectable::picked(a, type_bytes, top);
    let hi = if a.max_bytes > 0 {
        a.max_bytes as u64
    } else {
        top
    };
    let kind = msccl::coll_kind(&a.coll).expect("a collective collc builds");
    // Sizes too small for one element per rank are no call at all.
    let elements = |s: u64| selectable::tests_elements(kind, a.ngpus as u64, type_bytes, s);
    no.into_iter()
        .filter(|&s| s >= a.min_bytes as u64 && s <= hi && elements(s) > 0)
        .collect()
}

/// Whether the runtime picks `a` for a call of `elements` elements in all (count x
/// sizeMultiplier): msccl-executor-nccl asks the call's count (per rank for allgather and
/// reduce-scatter) to be a multiple of `nchunksperloop`; RCCL asks less.
fn picks(a: &Algo, elements: u64, type_bytes: u64) -> bool {
    let kind = msccl::coll_kind(&a.coll).expect("a collective collc builds");
    let mult = msccl::size_multiplier(kind, a.ngpus as u64);
    let bytes = elements * type_bytes;
    elements > 0
        && (elements / mult) % a.nchunksperloop as u64 == 0
        && bytes >= a.min_bytes as u64
        && (a.max_bytes == 0 || bytes <= a.max_bytes as u64)
}

#[test]
fn every_size_window_of_the_examples_is_picked_at_every_size_in_it() {
    // The examples with a `target msccl` block, then others that build for MSCCL; the range
    // of the 32-GPU MI250 file is narrow because simulating every family over a wide sweep
    // takes a minute.
    let cases = [
        ("mi250_2x16", "64KiB..4MiB"),
        ("ring_allreduce_4", "1KiB..1GiB"),
        ("quickstart", "1KiB..1GiB"),
        ("forestcoll_fig2", "1KiB..1GiB"),
        ("mi250_8plus8", "1KiB..1GiB"),
        ("full_mesh_boxes", "1KiB..1GiB"),
    ];
    let tmp = std::env::temp_dir().join(format!("collc-select-{}", std::process::id()));
    let mut windows = 0;
    for (name, range) in cases {
        let dir = tmp.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        let file = root().join(format!("examples/{name}.coll"));
        let out = Command::new(env!("CARGO_BIN_EXE_collc"))
            .args(["build", file.to_str().expect("path"), "--target", "msccl"])
            .args(["--size-windows", range, "-o", dir.to_str().expect("path")])
            .output()
            .expect("collc runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {stderr}");
        assert!(!stderr.contains("E0054"), "{name}: {stderr}");
        let text = std::fs::read_to_string(&file).expect("example");
        let type_bytes = if text.contains("dtype: f16") || text.contains("dtype: bf16") {
            2
        } else {
            4
        };
        let mut xmls: Vec<Algo> = Vec::new();
        for line in stdout.lines() {
            // `00-ring.xml: 4 B .. 524288 B: ring (built for 524288 B) simulated ...`
            let Some((xml, rest)) = line.split_once(": ") else {
                continue;
            };
            let at: u64 = rest
                .split("(built for ")
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{name}: no built-for size in {line}"));
            let body = std::fs::read_to_string(dir.join(xml)).expect("written");
            let (a, _) = msccl::read::read(&body).expect("reads back");
            let top = if a.max_bytes > 0 {
                a.max_bytes as u64
            } else {
                selectable::OPEN_TOP.max(at)
            };
            let skipped = skipped_inside(&a, type_bytes, top);
            assert!(
                skipped.is_empty(),
                "{name} {xml}: not picked at {} inside its window (nchunksperloop {})",
                selectable::show_sizes(&skipped),
                a.nchunksperloop
            );
            assert!(
                picks(&a, at / type_bytes, type_bytes),
                "{name} {xml}: not picked at the size it was built for, {at} B"
            );
            assert!(line.contains("of nccl-tests' sizes the runtime picks it at"));
            xmls.push(a);
            windows += 1;
        }
        // Together the windows cover every nccl-tests size of the range asked for.
        let (lo, hi) = range.split_once("..").expect("range");
        let bytes = |t: &str| -> u64 {
            let (n, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).expect("unit"));
            n.parse::<u64>().expect("number")
                << match unit {
                    "KiB" => 10,
                    "MiB" => 20,
                    "GiB" => 30,
                    _ => 0,
                }
        };
        for b in selectable::tests_sizes(bytes(lo), bytes(hi)) {
            assert!(
                xmls.iter().any(|a| picks(a, b / type_bytes, type_bytes)),
                "{name}: no window's XML is picked at {b} B\n{stdout}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(windows >= 10, "only {windows} windows");
}

/// A small deterministic generator (no dependency on proptest's shrinking: each case prints
/// its source when it fails).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[test]
fn random_forests_rings_and_recursive_schedules_are_picked_wherever_they_claim() {
    let mut rng = Lcg(37);
    let mut refined = 0;
    let mut cases = 0;
    for _ in 0..36 {
        let topo = match rng.next(4) {
            0 => "import ring;\ntopology t = ring(n: 8, bw: 25 GB/s);".to_string(),
            1 => "import torus;\ntopology t = torus2d(x: 4, y: 4, bw: 25 GB/s);".to_string(),
            2 => "import hypercube;\ntopology t = hypercube(dim: 3, bw: 25 GB/s);".to_string(),
            _ => "import ring;\ntopology t = ring(n: 6, bw: 25 GB/s);".to_string(),
        };
        let n: u64 = if topo.contains("n: 6") {
            6
        } else if topo.contains("torus") {
            16
        } else {
            8
        };
        let (kind, schedule) = match rng.next(5) {
            0 => (
                "allgather",
                format!(
                    "forest {{ k: {}; chunks: {}; }}",
                    1 + rng.next(3),
                    1 + rng.next(7)
                ),
            ),
            1 => (
                "allreduce",
                format!("forest {{ k: auto; chunks: {}; }}", 1 + rng.next(9)),
            ),
            2 => (
                "reduce_scatter",
                format!("ring {{ channels: {}; }}", 1 + rng.next(5)),
            ),
            3 => (
                "allreduce",
                format!("ring {{ channels: {}; }}", 1 + rng.next(5)),
            ),
            _ => (
                "allreduce",
                "recursive_multiplying { stages: auto; }".to_string(),
            ),
        };
        // Power-of-two sizes, and sometimes three times one.
        let count = n * (1 << (8 + rng.next(12))) * if rng.next(4) == 0 { 3 } else { 1 };
        let text = format!(
            "{topo}\ncollective {kind} {{ count: {count}; dtype: f32; }}\nschedule {schedule}\n"
        );
        let mut files = SourceMap::new();
        let id = files.add("case.coll", text.as_str());
        let c = check(&mut files, id, &SemaOptions::default());
        let Some(m) = c.model.filter(|_| c.diagnostics.is_empty()) else {
            panic!("{text}\n{}", render::to_text(&c.diagnostics, &files));
        };
        // Every third case in a window around the declared size, as `--size-windows` and
        // `min_bytes`/`max_bytes` set one.
        let mut opts = Options::from_model(&m);
        let windowed = rng.next(3) == 0;
        if windowed {
            let bytes = count * 4;
            opts.min_bytes = bytes >> rng.next(12);
            opts.max_bytes = if rng.next(2) == 0 {
                0
            } else {
                bytes << rng.next(6)
            };
        }
        let e = match msccl::build(&m, &opts) {
            Ok(e) => e,
            // Over an executor limit: not this test's business (tests/msccl.rs covers advice).
            Err(d) if d.iter().all(|d| d.code == Code::MscclLimit) => continue,
            Err(d) => panic!("{text}\n{}", render::to_text(&d, &files)),
        };
        let (a, _) = msccl::read::read(&e.text).expect("reads back");
        let top = selectable::OPEN_TOP.max(count * 4);
        let skipped = skipped_inside(&a, 4, top);
        let declared = picks(&a, count, 4);
        let warning = e
            .warnings
            .iter()
            .find(|w| w.code == Code::MscclUnselectable)
            .map(|w| w.message.clone());
        // The runtime picks the XML at every size of the window collc wrote and at the declared
        // size; where it cannot (an allgather over 6 ranks: nccl-tests' counts are multiples of
        // 6 but of no larger factor), E0054 names the sizes.
        match &warning {
            None => assert!(
                skipped.is_empty() && declared,
                "{text}
no E0054, but skipped {} (declared picked: {declared})",
                selectable::show_sizes(&skipped)
            ),
            Some(w) => {
                assert!(
                    !skipped.is_empty() || !declared,
                    "{text}
needless {w}"
                );
                if !skipped.is_empty() {
                    assert!(
                        w.contains(&selectable::show_sizes(&skipped)),
                        "{text}
{w}"
                    );
                }
                if !declared {
                    assert!(
                        w.contains("the declared call"),
                        "{text}
{w}"
                    );
                }
            }
        }
        let warned = warning.is_some();
        // The window written is the one asked for, started later only where E0054 says so.
        assert!(a.min_bytes as u64 >= opts.min_bytes, "{text}");
        assert_eq!(a.max_bytes as u64, opts.max_bytes, "{text}");
        let kind_of = msccl::coll_kind(&a.coll).expect("collective");
        let cut: Vec<u64> = selectable::tests_sizes(
            opts.min_bytes.max(1),
            (a.min_bytes as u64).saturating_sub(1),
        )
        .into_iter()
        .filter(|&b| selectable::tests_elements(kind_of, n, 4, b) > 0)
        .collect();
        if opts.min_bytes > 0 && !cut.is_empty() {
            let w = warning.as_deref().unwrap_or("");
            assert!(
                w.contains(&selectable::show_sizes(&cut)),
                "{text}: window raised past {} silently: {w}",
                selectable::show_sizes(&cut)
            );
        }
        // With power-of-two rank counts and sizes, nothing is left to NCCL but sizes below
        // one loop of chunks.
        if n.is_power_of_two() && count.is_power_of_two() && !windowed {
            assert!(declared && !warned, "{text}");
            let per_loop = a.nchunksperloop as u64;
            assert!(per_loop.is_power_of_two(), "{text}: {per_loop}");
            let mult = if kind == "allreduce" { 1 } else { n };
            assert!(a.min_bytes as u64 <= per_loop * mult * 4, "{text}");
        }
        if let Some(p) = &e.selection {
            refined += usize::from(p.cpp != p.from);
            assert!(p.loss <= num_rational::Ratio::new(1, 20), "{text}");
        }
        cases += 1;
    }
    assert!(
        cases >= 20 && refined >= 3,
        "{cases} cases, {refined} refined"
    );
}
