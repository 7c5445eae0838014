//! The driver's own entry points: loading text and paths, refusals of text as of files,
//! diagnostics as records with their places, cancellation, and builds into memory against
//! builds into a path.

use super::*;
use std::sync::atomic::Ordering;

const RING: &str = "import ring;
topology t = ring(n: 4, bw: 25 GB/s);
collective allreduce { size: 1 MiB; dtype: f32; op: sum; }
schedule ring { }
target msccl;
";

#[test]
fn text_loads_as_a_file_would_and_builds_the_same_bytes_into_memory_and_a_path() {
    let s = load(&Input::text("ring.coll", RING), &LoadOptions::default()).expect("loads");
    assert_eq!(s.name(), "ring.coll");
    let built = s.build(None, &BuildRequest::default()).expect("builds");
    let Output::File(bytes) = built.output else {
        panic!("an XML is one file");
    };
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("ring.xml");
    s.build_into(
        None,
        &BuildRequest::default(),
        &path,
        &crate::progress::Quiet,
    )
    .expect("writes");
    assert_eq!(std::fs::read(&path).expect("written"), bytes);
}

#[test]
fn problems_come_back_as_records_with_their_places() {
    let bad = RING.replace("n: 4", "n: four");
    let f = load(&Input::text("bad.coll", bad), &LoadOptions::default())
        .err()
        .expect("fails");
    let r = &f.records()[0];
    assert_eq!(
        (r.file.as_str(), r.line, r.severity.as_str()),
        ("bad.coll", 2, "error")
    );
    assert!(r.column > 1 && r.code.starts_with('E'), "{r:?}");
    assert!(f.render().contains(&r.code), "{}", f.render());
    assert_eq!(f.exit_code(), 1);
}

#[test]
fn text_with_a_nul_byte_is_refused_as_a_binary_file_is() {
    let c = check(
        &Input::text("x.coll", "topology t {\0}"),
        &LoadOptions::default(),
        false,
    );
    assert_eq!(c.diagnostics[0].code, Code::BinaryInput);
}

#[test]
fn a_load_whose_cancel_flag_is_set_stops_with_e0061() {
    let flag = Arc::new(AtomicBool::new(false));
    flag.store(true, Ordering::Relaxed);
    let opts = LoadOptions {
        cancel: Some(flag),
        ..LoadOptions::default()
    };
    let f = load(&Input::text("ring.coll", RING), &opts)
        .err()
        .expect("cancelled");
    assert_eq!(f.diagnostics[0].code, Code::Cancelled);
}

#[test]
fn a_file_without_a_target_is_told_to_name_one() {
    let s = load(
        &Input::text("t.coll", RING.replace("target msccl;\n", "")),
        &LoadOptions::default(),
    )
    .expect("loads");
    let f = s
        .build(None, &BuildRequest::default())
        .expect_err("no target");
    assert_eq!(f.diagnostics[0].code, Code::TargetUnsupported);
    assert!(
        s.build(
            Some(crate::sema::model::TargetKind::Goal),
            &BuildRequest::default()
        )
        .is_ok()
    );
}
