//! Benchmark: `collc compare` at 1,024 GPUs and hosts, as a user runs it (issue 40's target: each
//! within 10 s on this machine): examples/dgx_a100_fat_tree_1024.coll (128 DGX A100 boxes on a
//! fat tree; allgather, ring over channels and forest) and examples/fat_tree_1024.coll (the
//! Canary paper's 1,024 hosts; allreduce, five host-based families), over the default sweep of
//! 21 sizes from 1 KiB to 1 GiB, each timed three times under `/usr/bin/time` (wall time and
//! peak memory), medians printed. Run with `cargo bench --bench compare_scale` (many minutes);
//! `cargo test --benches` runs each file once on a small case (the DGX file at 32 GPUs with
//! `--param boxes=4`; the fat tree's recursive doubling at three sizes).
//!
//! Measured on this 2-core machine (2026-11-28), the whole command by hand, one run each (the
//! full bench takes over 10 minutes), release build:
//!
//! | file | before (start of the day) | after, load 4-6 | after, idle |
//! |---|---|---|---|
//! | dgx_a100_fat_tree_1024 | > 12 min, killed unfinished | 497 s (328 s CPU) | 135 s (232 s CPU), 4.4 GB |
//! | fat_tree_1024 | 113 s (the figure) | 93 s (70.5 s CPU) | 44 s (64.6 s CPU), 4.0 GB |
//!
//! The target is 10 s; what is left is the ring over channels simulated message by message
//! (4 M messages per size at 1,024 ranks with 4 channels).
//!
//! Later the same day the ring search was repaired against ECMP collisions and lays one ring per
//! NIC rail on the DGX fat tree (8 channels, 8 M messages per size; its busbw at 1 GiB went from
//! 38.6 to 172 GB/s): `compare` on dgx_a100_fat_tree_1024 then took 249 s wall (432 s CPU),
//! 6.5 GB, one run, nearly idle. A right figure first; the simulation of repeated ring steps is
//! what would bring it back down.
//!
//! 2026-11-29, after the verifier's race check became linear on ring programs and sizes that
//! fill more ring channels than the search lays came to share one search and one program (the
//! DGX file's 16 KiB, 32 KiB and 64 KiB-and-up were three), one run each under
//! `/usr/bin/time`, on a machine whose memory answers a dependent load in about 470 ns over
//! 488 MB (several times the usual; the packet simulator ran 7-8x slower there than in
//! benches/packet.rs), so not comparable with the figures above: dgx_a100_fat_tree_1024
//! 626 s wall (1,123 s user), 6.6 GB; fat_tree_1024 92.4 s wall (165 s user), 3.4 GB. One
//! ring size (1 MiB, `--families ring`) there: 97.7 s user before these commits, 78.2 s after,
//! the same CSV. What is left per size is the flow engine: about 2.5 M refills of small
//! components (1 to 11 flows on average) per ring size, bound by memory latency.
//!
//! 2026-11-29 (later), after the flow engine paired sends and receives before the run instead
//! of matching them in hash maps (one ring size by hand, `--families ring --sizes 1MiB` on the
//! DGX file: 86 s wall before, 64 s after), `cargo bench --bench compare_scale` on an idle
//! machine whose memory answered a dependent load in 232 ns over 256 MiB, medians of three:
//!
//! | file | median | min to max | peak memory |
//! |---|---|---|---|
//! | dgx_a100_fat_tree_1024 | 492.4 s | 488.8 to 493.0 s | 4.7 GB |
//! | fat_tree_1024 | 85.6 s | 85.0 to 91.5 s | 3.2 GB |
//!
//! Still far from 10 s. A fast-forward over repeated ring steps (jump when the whole state
//! repeats a step later, moved by Δ) was built and measured, then left out: the DGX ring's
//! steps never repeat in this model (hop costs differ around the ring and eight channels share
//! the GPUs' links; rank 0's steps took 0.83 to 1.16 us at 1 MiB and 0.2 to 209 us at 1 GiB on
//! 128 GPUs, with no period up to 64 steps), so only a different model of the ring's steady
//! state would bring this down.
//!
//! 2026-11-29 (twenty-ninth session), on a machine whose memory answered a dependent load in
//! 409 ns over 256 MB (191 ns over 7 MB), so again not comparable: the ring search, which every
//! command on a ring runs once per topology, priced its repair moves with a sorted vector and
//! two maps allocated per move, and went on repairing rings already at their floor. Pricing in
//! a kept per-link array, dropping a move as soon as it cannot gain, and stopping at the floor
//! (src/net/rings/unclash.rs) give the same rings (`search` on the file's network, release
//! test build, one run each): DGX fat tree 256 GPUs 5.63 -> 2.23 s, 512 GPUs 15.6 -> 5.0 s,
//! 1,024 GPUs 32.1 -> 5.6 s; fat_tree_1024 12.8 -> 0.8 s. One search per `compare` (on
//! fat_tree_1024 it was half of a two-size ring compare, 18.7 s). The whole `collc compare
//! examples/fat_tree_1024.coll --format csv`, the binaries before and after, one run each
//! under `/usr/bin/time` on that machine, nearly idle: 100.2 s wall (177.8 s user) before,
//! 71.8 s (116.5 s) after, 3.2 GB both, the same CSV. The flow engine's message-by-message ring
//! is still what the 10 s target is missing.
//!
//! 2026-11-30 (thirty-second session), another machine of this kind, nearly idle, the whole
//! command under `/usr/bin/time`, the binary of the session's start against its end (every
//! CSV byte-identical). What changed: the forest's flow simulation per size stopped looking
//! every tree hop up in a map and deep-copying the trees' reach lists; sizes whose rings the
//! search lays alike share one lowered program (fat_tree_1024's 8, 16 and 32 KiB were three
//! more); a sweep converts each program to GOAL once and gives the other sizes only their
//! ops' bytes and times, with the engine's dependents and pairing made once beside it.
//!
//! | file | start | end |
//! |---|---|---|
//! | fat_tree_1024, median of 3 | 39.95 s (39.19 to 42.83), 63.9 s user, 2.3 GB | 23.13 s (22.78 to 24.93), 39.8 s user, 2.0 GB |
//! | dgx_a100_fat_tree_1024, one run | 193.5 s, 336 s user, 4.8 GB | 152.2 s, 258 s user, 5.5 GB |
//!
//! Per size, fat_tree_1024's ring is now about 1.4 s of flow engine (1 M messages) and the
//! DGX file's about 10 s (8.4 M messages over 8 channels); the 10 s target is still out of
//! reach of a message-by-message ring. At 256 GPUs (`--param boxes=32`) the search lays 31
//! channels and the ring's components of flows sharing links grow to about 800 of 7,500 flows
//! at 1 GiB: that one size took 632 s, so a 256-GPU compare is slower than the 1,024-GPU one.
//!
//! 2026-11-30 (thirty-third session), the same machine, nearly idle, the binary of the
//! session's start (`d0c7fcd`) against its end, every CSV byte-identical to the start's. What
//! changed, all in the flow engine: its ops laid out column by column (op i of every rank side
//! by side, src/sim/fluid/layout.rs), so the ops of one ring step are neighbours in memory
//! instead of a rank's length apart (perf had 28% of the loop's own time on one load, the
//! record of the op being started); arrivals and calc ends in the radix heap; and commands
//! other than the language server keeping freed memory (mimalloc otherwise handed each size's
//! vectors back and the kernel zeroed them again: 3 to 4 s of system time on fat_tree_1024).
//!
//! | file | start | end |
//! |---|---|---|
//! | fat_tree_1024, median of 3 | 21.9 and 22.7 s (two runs), 37.5-38.4 s user, 3.4-4.1 s system, 2.1 GB | 13.97 s (13.73 to 14.32), 24.6 s user, 1.2-1.5 s system, 2.1 GB |
//! | dgx_a100_fat_tree_1024, one run each | 151.9 s, 266.6 s user, 6.6 GB | 100.8 s, 177.0 s user, 6.7 GB |
//!
//! (The last commit of the day stops each max-min fill once every flow is frozen: every one
//! of fat_tree_1024's ring steps is one component of 1,024 flows, and the fill went on
//! popping the links left in its heap.) The ring column alone on fat_tree_1024
//! (`--families ring`) went from 25.3 to 13.5 s of user time (8 s wall). What is left there:
//! the fill's heap of link shares, then the engine's loop and the component search, then the
//! GOAL amounts per size; on the DGX file the refills of components of flows sharing NVLink
//! and NIC links lead.
//!
//! 2026-11-30 (thirty-fourth session), the same machine, nearly idle, the binary of the
//! session's start (`79bb0d4`) against its end, every CSV byte-identical to the start's (both
//! files). What changed: mimalloc no longer asks for transparent huge pages (on this kernel,
//! THP `madvise`, it made the kernel zero whole 2 MiB pages: 4.4 to 5.0 s of system time on
//! fat_tree_1024); the fill takes link shares from a sorted vector plus a heap of those queued
//! again, and the flows' finishing times are packed integer keys; a forest's paths, its fills
//! (by the set of trees moving) and its trees' hop marks are made once per sweep; compare's
//! threads claim cells one at a time, each family's first cell first (before, one thread's
//! half of the rows ran 1.4 s after the other's, and a second ring cell waited on the first
//! one's lowering); the ring search shares one route table among channel counts; and a sweep
//! sizes ops by class (the measure and slice an op's bytes or time is of) instead of
//! converting every op's amount per size; and a component of one flow gets its rate without
//! a fill (most of the DGX ring's 9.2 M refills per size are of one flow).
//!
//! | file | start | end |
//! |---|---|---|
//! | fat_tree_1024, median of 3 | 16.50 s (16.26 to 16.79), 26.0 s user, 4.4-5.0 s system, 2.1 GB | 8.78 s (8.71 to 8.86), 16.5 s user, 0.7 s system, 1.9 GB |
//! | dgx_a100_fat_tree_1024, one run each | 186.9 s (a build ran beside it part of the time), 212.8 s user, 19.9 s system, 8.2 GB | 87.5 s, 141.6 s user, 12.8 s system, 6.1 GB |
//!
//! (The fat_tree_1024 figure is of `10bc06a`; the DGX figure of `b61049a`, the day's last
//! engine change, which gives each op's rank with its event. Later the machine ran about 3%
//! slower (the start binary took 17.0 s instead of 16.5) and the binary of `b61049a` took
//! 9.00 to 9.57 s in 13 runs, median 9.29 s.)
//!
//! fat_tree_1024 is within the 10 s target, by about 5%; the DGX file is not. Its ring is 8.4 M messages
//! per size, and the flow engine spends 0.6 to 0.7 us of CPU on each (start, refill, end,
//! arrival: 9.2 M refills per size, 8.1 M of them of a single flow); lowering, proving and
//! converting its 8-channel program once is about 8 s more. Only a coarser model of the
//! ring's steps (which never repeat exactly in this model, see above) would take it to
//! seconds.
//!
//! 2026-11-30 (thirty-ninth session), idle machine, after the forest model's fill at link
//! speed (forest columns changed, rings not): fat_tree_1024 9.31 s (9.18 to 9.36, median of
//! 3), 17.6 s user, 2.0 GB; dgx_a100_fat_tree_1024 85.2 s (one run), 140.9 s user, 6.1 GB, of
//! which the ring column alone (`--families ring`) 86.1 s and the forest's 2.2 s. One ring
//! size of the DGX file (`--sizes 64MiB --families ring`) takes 15.0 s wall: about 8 s of
//! lowering, proving and converting, and the rest the flow engine's run (perf: the engine's
//! loop 17%, flow ends 7%, fills 6%, refills 4%).
//!
//! 2026-12-01 (forty-first session), idle machine (dependent loads 201 ns over 256 MiB), after
//! two changes with every CSV byte-identical: a flow that a fill slows down keeps its earlier
//! heap entry instead of pushing another (src/sim/fluid/flows.rs), and a sweep's threads take
//! its cells heaviest row first once each family has started (src/compare/mod.rs,
//! `cell_order`; in row order the 1 GiB ring cell, about 30 s, ran last on one thread while
//! the other idled). `cargo bench --bench compare_scale`: dgx_a100_fat_tree_1024 **74.67 s**
//! (70.71 to 76.00, median of 3), 5.9 GB; fat_tree_1024 **9.06 s** (9.06 to 9.31), 2.0 GB.
//! Interleaved with the binary of the session's start (`448af50`): the DGX file 88.2 s
//! against 74.3 s (two runs each; 141.8 against 133.7 s of CPU), fat_tree_1024 9.10 against
//! 9.08 s (three each).
//!
//! Where the DGX file's time goes (perf over the whole command): 86% is the flow engine's
//! runs, 21 sizes of 8.4 M messages each on 8 channels, and 9.5% the lowering, proving and
//! converting of its ring programs (one per channel count). 10 s on two cores would leave
//! about 0.1 us of CPU per message and run; the engine spends 0.5 us (1 MiB, latency-bound)
//! to 2.5 us (1 GiB, where the 8.4 M flows' rates changed 50 M times, each a heap entry
//! before today's change, and the fills counted 116 M flows in all). What would reach it is simulating one rank per orbit of a symmetry (shifting
//! every rank by one leaf, 32 GPUs), which needs rings that repeat one box's pattern (as
//! NCCL lays them) and routes that map onto each other under the shift (D-mod-K instead of
//! the hash of the pair); even then the once-per-sweep lowerings (about 8 s for the
//! 8-channel program) stay. Tried and not kept today: one 32-byte record per op for the
//! engine's static fields and a 16-byte one for a run's state, instead of an array per field
//! (slower: 11.8 -> 12.9 s at 1 MiB, 28.3 -> 29.3 s at 1 GiB; the layout already puts a
//! step's ops side by side, where narrow arrays are denser); remembering fills by their
//! members' routes (97% of the refills repeat one at 1 MiB, but at 1 GiB 41% do, among
//! 8.8 M distinct ones); starting each family with its heaviest cell (fat_tree_1024 5%
//! slower: its families' first lowerings waited behind long cells).
//!
//! 2026-12-01 (forty-second session), another machine of this kind: its memory answered a
//! dependent load in 169 ns over 256 MiB, yet it ran the same code about a third slower (the
//! session-start binary's whole DGX command by hand: 91.3 s wall, 161 s user, 10.8 s system).
//! `cargo bench --bench compare_scale` on `9e13071`, the code measured just above:
//! dgx_a100_fat_tree_1024 **106.25 s** (89.23 to 115.65, median of 3), 5.9 GB; fat_tree_1024
//! **12.09 s** (11.82 to 12.22), 2.0 GB, against 9.06 s the day before. The 10 s that
//! fat_tree_1024 met there it misses here by the machine alone. The same session made a
//! forest's time model (its trees' reach and paths), which two threads asked for at once at the
//! start of a forest-only sweep and both made, be made once, the second thread waiting for it
//! (src/choose/eval.rs on `lower::kept`): `--families forest` on fat_tree_1024 went from 3.82
//! to 3.57 s wall and from 6.93 to 5.86 s of CPU (medians of 3, interleaved, the same CSV). The
//! solve itself is still made twice there: it runs rayon work, and a thread that waits in rayon
//! may run the job its maker needs (see that module's doc). The whole compare is unchanged
//! (11.5 to 12.6 s, two runs each interleaved): its other families keep the second thread busy.
//!
//! 2026-12-01, later (forty-third session), a machine of this kind whose memory answered in
//! 197 ns over 256 MiB: `cargo bench --bench compare_scale` on `88afe5c` (the same engine):
//! dgx_a100_fat_tree_1024 **112.20 s** (109.68 to 115.00, median of 3), 5.9 GB; fat_tree_1024
//! **14.86 s** (14.27 to 16.17), 2.0 GB. Tried and not kept: handing out a family's later
//! cells only after its first cell has finished (a thread skips ahead to another family's
//! cell rather than wait for a lowering or solve a forest again). The CSVs were identical and
//! fat_tree_1024 moved within the noise (12.6 to 15.8 s, three runs each interleaved), but
//! the DGX sweep went from 107.9 and 108.0 s to 118.9 and 120.0 s (200 -> 222 s of CPU, peak
//! 5.5 -> 6.1 GB): with the other families' cells done while the 8-channel ring lowers, the
//! two threads then run only the ring's large cells side by side, which contend for the
//! memory, where before each ring cell ran beside a lighter family's cell of the same size.
//! Nor kept: a solved forest kept and waited for, its solve run on a rayon pool of its own from
//! a plain thread (so that no waiting thread holds a piece of it). `--families forest` on
//! fat_tree_1024 went from 7.36 to 6.12 s of CPU but not faster (4.51 -> 4.89 s wall,
//! medians of 3 interleaved), the whole compare from 12.68 and 12.39 s to 13.80 and 12.74 s
//! (the pool's threads spin beside the sweep's), and dgx_h100_2x8's report stayed at 1.1 s.
//!
//! 2026-12-01 (forty-fourth session), a machine of this kind whose memory answered in 185 ns
//! over 256 MiB. Three changes to the flow engine, every compare CSV byte-identical (both
//! files here and every other example): each component of flows that a start or an end
//! touches is filled on its own (a fat tree ring step's 1,024 flows, sharing no link, were one
//! fill that sorted and queued 3,000 links; now 1,024 one-flow rates); a send finds its route
//! by its (rank, receiver) pair's number, made once per program, not by hashing its two nodes;
//! a touched link with no flow left on it is passed over without a component search. The
//! session-start binary (`35be5ad`) against the end's, by hand under `/usr/bin/time`:
//! fat_tree_1024 10.73 and 11.33 s -> 9.31 and 9.33 s (19.2-19.4 -> 17.1 s user), its ring
//! column alone 11.0 -> 8.8 s user; the DGX file's ring at 1 MiB and 256 MiB 27.8 -> 25.0 s,
//! its whole compare 78.34 -> 74.62 s (one run each, 145.0 -> 134.7 s user).
//! Then `cargo bench --bench compare_scale`: dgx_a100_fat_tree_1024 **78.91 s** (76.60 to
//! 81.78, median of 3), 6.0 GB; fat_tree_1024 **9.30 s** (9.24 to 9.40), 2.0 GB: within the
//! 10 s target on this machine, by 7%. Tried and not kept: the flows' finishing times in a
//! heap of four children per node instead of `BinaryHeap` (its pops are most of `end_at`):
//! within 1% on fat_tree_1024's ring column (8.67-8.75 against 8.75-8.81 s user, three runs
//! each interleaved) and on the DGX ring (26.66 against 26.72 s), the CSVs identical.
//! Later the same session, the forest's chunk choice timed each kind of tree once (trees
//! alike in phase, bytes, rate and frontier; src/forest/chunking.rs, `kinds`; its binary
//! search had been a quarter of the forest column, in `BigRational`; an `f64` screen on top
//! of it measured within the noise and was dropped in review, `085b567`):
//! fat_tree_1024's forest column 4.72-4.77 -> 3.59-3.67 s user, the same CSVs and reports.
//! `cargo bench --bench compare_scale` on that code (`2db7185`; the memory answered in 166 ns
//! this time): dgx_a100_fat_tree_1024 **72.50 s** (70.99 to 74.10, median of 3), 5.8 GB;
//! fat_tree_1024 **8.53 s** (8.34 to 8.60), 2.0 GB.

mod common;

use common::process::measure;
use std::path::Path;

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cases: [(&str, &[&str]); 2] = if full {
        [
            ("examples/dgx_a100_fat_tree_1024.coll", &[]),
            ("examples/fat_tree_1024.coll", &[]),
        ]
    } else {
        [
            (
                "examples/dgx_a100_fat_tree_1024.coll",
                &["--param", "boxes=4"],
            ),
            (
                "examples/fat_tree_1024.coll",
                &[
                    "--sizes",
                    "1KiB..1MiB*32",
                    "--families",
                    "recursive_doubling",
                ],
            ),
        ]
    };
    let runs = if full { 3 } else { 1 };
    let mib = if full { 256 } else { 16 };
    println!(
        "memory latency: {:.0} ns per dependent load over {mib} MiB",
        common::process::memory_latency_ns(mib)
    );
    for (file, extra) in cases {
        let mut args = vec!["compare", file, "--format", "csv"];
        args.extend_from_slice(extra);
        let mut times = Vec::new();
        let mut peak = 0;
        for _ in 0..runs {
            let (t, kb, out) = measure(common::process::BIN, &args, root);
            assert!(out.lines().count() > 2, "{file}: a table of results");
            times.push(t);
            peak = peak.max(kb.unwrap_or(0));
        }
        times.sort_by(f64::total_cmp);
        println!(
            "collc compare {file} {}: median {:.2} s of {runs} (min {:.2}, max {:.2}), peak {:.0} MB",
            extra.join(" "),
            times[times.len() / 2],
            times[0],
            times[times.len() - 1],
            peak as f64 / 1024.0
        );
    }
}
