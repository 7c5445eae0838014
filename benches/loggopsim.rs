//! Benchmark: `collc sim FILE.goal` against LogGOPSim on the same GOAL files (issue 19): wall
//! time and peak memory of each, median of three runs, and the ratios. The GOAL files are
//! what `collc build --target goal` writes for recursive doubling on 65,536 ranks (8 B),
//! recursive multiplying `[a4 x 8]` on 65,536 ranks (8 B) and ring on 1,024 ranks (1 MiB).
//! LogGOPSim runs on the binary schedule its `txt2bin` makes (its conversion is timed apart);
//! collc reads the text. Both must agree on the finishing time.
//!
//! LogGOPSim is not a dependency: the benchmark looks for `LogGOPSim` and `txt2bin` on PATH
//! (built by hand from its public source, docs/HACKING.md) and measures collc alone when they are
//! absent. Peak memory comes from `/usr/bin/time -f '%e %M'` when it exists. Run with
//! `cargo bench --bench loggopsim`; `cargo test --benches` runs a 64-rank case once.
//!
//! 2026-11-25, this 2-core machine (otherwise idle), `cargo bench --bench loggopsim`, LogGOPSim
//! built from its public source with -O3, medians of three runs:
//!
//! | GOAL | collc | LogGOPSim (txt2bin) | time collc/LogGOPSim | memory collc/LogGOPSim |
//! |---|---|---|---|---|
//! | recursive doubling, 65,536 ranks, 8 B | 0.74 s, 164 MB | 2.08 s, 180 MB (2.65 s) | 0.35 | 0.91 |
//! | `[a4 x 8]`, 65,536 ranks, 8 B | 3.13 s, 289 MB | 7.30 s, 310 MB (3.45 s) | 0.43 | 0.93 |
//! | ring, 1,024 ranks, 1 MiB | 1.83 s, 416 MB | 4.53 s, 457 MB (3.04 s) | 0.40 | 0.91 |
//!
//! (An earlier run the same day, with a record read a few events ahead as a prefetch, gave
//! 0.39, 0.39 and 0.36: no measurable gain at this size. The loop now prefetches with the
//! prefetch instruction, in stages, which pays at 2^18 ranks and more: benches/scale.rs.)
//!
//! 2026-11-26, after the staged prefetch, the open-addressing message queues and the reader's
//! reused buffers, collc alone (LogGOPSim was not built on that machine), medians of three:
//! recursive doubling 0.87 s, 156 MB; `[a4 x 8]` 2.64 s, 287 MB; ring 1.77 s, 410 MB; the same
//! finishing times. Against the LogGOPSim figures above: time 0.42, 0.36 and 0.39, memory 0.87,
//! 0.93 and 0.90.
//!
//! 2026-11-27, after the loop's clocks went side by side and events name ops globally, collc
//! alone, medians of three: recursive doubling 1.03 s, 156 MB; `[a4 x 8]` 2.67 s, 287 MB;
//! ring 1.71 s, 406 MB (time against the LogGOPSim figures above: 0.50, 0.37 and 0.38).
//!
//! Later on 2026-11-27, after the loop's prefetch covered events put back and a message's
//! posted receive, collc alone, medians of three: recursive doubling 0.72 s, 157 MB;
//! `[a4 x 8]` 1.89 s, 290 MB; ring 1.68 s, 410 MB (time against the LogGOPSim figures above:
//! 0.35, 0.26 and 0.37; memory 0.87, 0.94 and 0.90).
//!
//! Re-run in the fourteenth session (2026-11-27), collc alone, medians of three: recursive doubling
//! 0.79 s, 157 MB; `[a4 x 8]` 2.10 s, 289 MB; ring 1.76 s, 410 MB (against the LogGOPSim
//! figures above: time 0.38, 0.29 and 0.39; memory 0.87, 0.93 and 0.90).
//!
//! Both give the same finishing times (88,672 ns, 93,008 ns, 23,811,348 ns). collc's time
//! includes reading the text (on both cores, `crate::sim::read`), LogGOPSim's not its txt2bin.
//! The day before, with the full reader (text, spans, labels and a schedule held beside the
//! graph) and per-host queues, collc took 1.01 to 1.12 times LogGOPSim's time and 4.65 to 7.09
//! times its memory. The ring's memory varies between runs (350 to 430 MB): the allocator's
//! per-thread caches after the parallel read.

mod common;

use common::process::{build_goal, finish, measure, median, on_path, sim_goal, source};

fn case(name: &str, src: &str, runs: usize, lgs: bool) {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    build_goal(src, d);
    let (mut ct, mut cm, mut lt, mut lm) = (vec![], vec![], vec![], vec![]);
    let mut answers = Vec::new();
    for _ in 0..runs {
        let (t, m, out) = sim_goal(d);
        ct.push(t);
        cm.push(m.unwrap_or(0) as f64);
        answers.push(finish(&out));
    }
    let mut line = format!(
        "{name}: collc {:.2} s, {:.0} MB",
        median(ct.clone()),
        median(cm.clone()) / 1024.0
    );
    if lgs {
        let (tb, _, _) = measure("txt2bin", &["-i", "f.goal", "-o", "f.bin"], d);
        for _ in 0..runs {
            let (t, m, out) = measure("LogGOPSim", &["-f", "f.bin", "-b"], d);
            lt.push(t);
            lm.push(m.unwrap_or(0) as f64);
            answers.push(finish(&out));
        }
        let (c, l) = (median(ct), median(lt));
        let (cmem, lmem) = (median(cm), median(lm));
        line.push_str(&format!(
            "; LogGOPSim {l:.2} s, {:.0} MB (txt2bin {tb:.2} s); time ratio collc/LogGOPSim {:.2}, memory ratio {:.2}",
            lmem / 1024.0,
            c / l,
            if lmem > 0.0 { cmem / lmem } else { 0.0 }
        ));
    }
    answers.dedup();
    assert_eq!(
        answers.len(),
        1,
        "{name}: the finishing times differ: {answers:?}"
    );
    eprintln!("{line}; finishing time {}", answers[0]);
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let lgs = on_path("LogGOPSim") && on_path("txt2bin");
    if !lgs {
        eprintln!("loggopsim: LogGOPSim and txt2bin are not on PATH; measuring collc alone");
    }
    if !full {
        case(
            "recursive doubling, 64 ranks",
            &source(64, "8 B", "recursive_doubling"),
            1,
            lgs,
        );
        return;
    }
    let a4x8 = format!(
        "recursive_multiplying {{ stages: [{}]; }}",
        ["a4"; 8].join(", ")
    );
    for (name, src) in [
        (
            "recursive doubling, 65,536 ranks, 8 B",
            source(65536, "8 B", "recursive_doubling"),
        ),
        ("[a4 x 8], 65,536 ranks, 8 B", source(65536, "8 B", &a4x8)),
        ("ring, 1,024 ranks, 1 MiB", source(1024, "1 MiB", "ring")),
    ] {
        case(name, &src, 3, lgs);
    }
}
