//! The comparison job through the driver: a session and a file give the same sweep, `vary` on a
//! session checks its own text again, shards given as text merge back, a bad option points
//! into it, and a set cancel flag ends the job with E0061 (before it starts, and in the middle
//! of a sweep after at most one cell per thread).

use super::*;
use crate::diag::Code;
use crate::driver::load;
use crate::progress::Quiet;
use std::sync::atomic::AtomicU64;

const QUICKSTART: &str = include_str!("../../../examples/quickstart.coll");

/// A ring whose size is a `param`, for `vary`.
const RING: &str = "import ring;\nparam hosts: int = 4;\ntopology t = ring(n: hosts, bw: 10 GB/s);\n\
                    collective allreduce { size: 1 MiB; }\n";

fn quickstart() -> Input {
    Input::text("quickstart.coll", QUICKSTART)
}

fn flagged() -> (LoadOptions, Arc<AtomicBool>) {
    let flag = Arc::new(AtomicBool::new(false));
    let opts = LoadOptions {
        cancel: Some(flag.clone()),
        ..LoadOptions::default()
    };
    (opts, flag)
}

fn codes(f: &Failure) -> Vec<Code> {
    f.diagnostics.iter().map(|d| d.code).collect()
}

/// Sets the cancel flag when the first cell is done, and counts the cells done.
struct CancelAfterFirst {
    flag: Arc<AtomicBool>,
    steps: AtomicU64,
    total: AtomicU64,
}

impl Progress for CancelAfterFirst {
    fn phase(&self, phase: Phase, steps: Option<u64>) {
        if phase == Phase::Sweep {
            self.total.store(steps.unwrap_or(0), Ordering::Relaxed);
        }
    }

    fn step(&self) {
        self.steps.fetch_add(1, Ordering::Relaxed);
        self.flag.store(true, Ordering::Relaxed);
    }
}

#[test]
fn a_set_cancel_flag_stops_the_sweep_with_e0061() {
    let (opts, flag) = flagged();
    let session = load(&quickstart(), &opts).expect("loads");
    let progress = CancelAfterFirst {
        flag,
        steps: AtomicU64::new(0),
        total: AtomicU64::new(0),
    };
    let req = CompareRequest {
        sizes: Some("1KiB..1GiB".into()),
        ..CompareRequest::default()
    };
    let failure = session.compare(&req, &progress).expect_err("cancelled");
    assert_eq!(codes(&failure), [Code::Cancelled], "{failure}");
    assert!(
        failure.render().contains("the comparison was cancelled"),
        "{failure}"
    );
    // The cells already running when the flag was set finish; nothing after them starts.
    let (steps, total) = (
        progress.steps.load(Ordering::Relaxed),
        progress.total.load(Ordering::Relaxed),
    );
    assert!(total > 50, "a sweep of {total} cells");
    assert!(
        steps <= crate::par::threads() as u64,
        "{steps} of {total} cells ran after the flag was set"
    );
}

#[test]
fn a_cancel_flag_set_before_the_job_stops_it_before_any_cell() {
    let (opts, flag) = flagged();
    flag.store(true, Ordering::Relaxed);
    for req in [
        CompareRequest::default(),
        CompareRequest {
            vary: vec!["hosts=4,8".into()],
            ..CompareRequest::default()
        },
    ] {
        let progress = CancelAfterFirst {
            flag: flag.clone(),
            steps: AtomicU64::new(0),
            total: AtomicU64::new(0),
        };
        let failure = compare(&quickstart(), &opts, &req, &progress).expect_err("cancelled");
        assert_eq!(codes(&failure), [Code::Cancelled], "{failure}");
        assert_eq!(progress.steps.load(Ordering::Relaxed), 0);
    }
}

#[test]
fn a_session_and_a_file_give_the_same_sweep() {
    let opts = LoadOptions::default();
    let session = load(&quickstart(), &opts).expect("loads");
    let req = CompareRequest {
        sizes: Some("1KiB..16KiB".into()),
        families: vec!["ring".into(), "recursive_doubling".into()],
        ..CompareRequest::default()
    };
    let from_session = session.compare(&req, &Quiet).expect("compares");
    let from_file = compare(&quickstart(), &opts, &req, &Quiet).expect("compares");
    assert_eq!(from_session, from_file);
    assert_eq!(from_session.sizes, [1024, 2048, 4096, 8192, 16384]);
    assert_eq!(from_session.families.len(), 2);
    assert_eq!(req.part(&from_session), None);
}

#[test]
fn vary_on_a_session_checks_its_text_again() {
    let opts = LoadOptions::default();
    let ring = Input::text("ring.coll", RING);
    let session = load(&ring, &opts).expect("loads");
    let req = CompareRequest {
        vary: vec!["hosts=4,6".into()],
        families: vec!["ring".into()],
        ..CompareRequest::default()
    };
    let cmp = session.compare(&req, &Quiet).expect("compares");
    assert_eq!(cmp, compare(&ring, &opts, &req, &Quiet).expect("compares"));
    let ranks: Vec<usize> = match &cmp.axis {
        compare::Axis::Param { points, .. } => points.iter().map(|p| p.ranks).collect(),
        compare::Axis::Size => Vec::new(),
    };
    assert_eq!(ranks, [4, 6]);
}

#[test]
fn shards_given_as_text_merge_into_the_whole_sweep() {
    let opts = LoadOptions::default();
    let session = load(&quickstart(), &opts).expect("loads");
    let base = CompareRequest {
        sizes: Some("1KiB..8KiB".into()),
        families: vec!["ring".into()],
        ..CompareRequest::default()
    };
    let whole = session.compare(&base, &Quiet).expect("compares");
    let parts: Vec<Input> = (1..=2)
        .map(|k| {
            let req = CompareRequest {
                shard: Some(format!("{k}/2")),
                ..base.clone()
            };
            let cmp = session.compare(&req, &Quiet).expect("compares");
            Input::text(format!("part{k}.json"), req.part(&cmp).expect("a part"))
        })
        .collect();
    let merged = CompareRequest {
        merge: parts.clone(),
        ..base.clone()
    };
    assert_eq!(session.compare(&merged, &Quiet).expect("merges"), whole);
    // A part of another sweep is refused, by the name it was given.
    let other = CompareRequest {
        sizes: Some("1KiB..4KiB".into()),
        merge: parts,
        ..base
    };
    let failure = session.compare(&other, &Quiet).expect_err("refused");
    assert!(
        failure
            .render()
            .contains("`part1.json` is a part of another sweep"),
        "{failure}"
    );
}

#[test]
fn bad_options_point_into_them() {
    let session = load(&quickstart(), &LoadOptions::default()).expect("loads");
    let cases = [
        (
            CompareRequest {
                sizes: Some("1KiB..7XB".into()),
                ..CompareRequest::default()
            },
            "--sizes 1KiB..7XB",
        ),
        (
            CompareRequest {
                model: Some("nope".into()),
                ..CompareRequest::default()
            },
            "--model nope",
        ),
        (
            CompareRequest {
                families: vec!["ring".into(), "nope".into()],
                ..CompareRequest::default()
            },
            "--families ring,nope",
        ),
        (
            CompareRequest {
                runs: 0,
                ..CompareRequest::default()
            },
            "--runs 0",
        ),
        (
            CompareRequest {
                shard: Some("3/2".into()),
                ..CompareRequest::default()
            },
            "--shard 3/2",
        ),
    ];
    let clashes = [
        (
            CompareRequest {
                sizes: Some("1KiB".into()),
                vary: vec!["hosts=8".into()],
                ..CompareRequest::default()
            },
            "--sizes 1KiB",
        ),
        (
            CompareRequest {
                shard: Some("1/2".into()),
                merge: vec![Input::text("part.json", "{}")],
                ..CompareRequest::default()
            },
            "--shard 1/2",
        ),
    ];
    for (req, shown) in cases.into_iter().chain(clashes) {
        let failure = session.compare(&req, &Quiet).expect_err("refused");
        let records = failure.records();
        assert_eq!(records.len(), 1, "{failure}");
        assert_eq!(records[0].file, "<command line>", "{failure}");
        assert!(failure.render().contains(shown), "{failure}");
    }
}
