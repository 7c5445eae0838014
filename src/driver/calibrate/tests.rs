//! The calibration job through the driver: a session and a file give the same fit, the log
//! given as text; the result holds the fit's rows, its table and the declaration; a bad option
//! points into it, and a log of another rank count is refused with the log's table.

use super::*;
use crate::driver::load;

const FILE: &str = "import dgx_a100;\ntopology t = dgx_a100(clusters: 1);\n\
                    collective allgather { size: 1 GiB; dtype: bf16; }\n";

/// An all_gather_perf log on `ranks` GPUs of one box, `algbw` GB/s at 1, 8 and 64 MiB.
fn log(ranks: u32, algbw: [f64; 3]) -> String {
    let mut s = format!(
        "# nThread 1 nGpus {ranks} minBytes 1048576 maxBytes 67108864 step: 8(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n"
    );
    for r in 0..ranks {
        s.push_str(&format!(
            "#  Rank {r:2} Group  0 Pid   1000 on  node0 device  {r} [0x07] NVIDIA A100-SXM4-40GB\n"
        ));
    }
    s.push_str("#\n#                                                              out-of-place                       in-place          \n");
    s.push_str("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n");
    s.push_str("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n");
    for (i, b) in [1u64 << 20, 8 << 20, 64 << 20].into_iter().enumerate() {
        let t = b as f64 / algbw[i] / 1e3;
        let bus = algbw[i] * f64::from(ranks - 1) / f64::from(ranks);
        s.push_str(&format!(
            "{b:>12} {:>13}      bf16    none      -1 {t:8.1} {:7.2} {bus:7.2}      0 {t:8.1} {:7.2} {bus:7.2}      0\n",
            b / 2 / u64::from(ranks),
            algbw[i],
            algbw[i]
        ));
    }
    s.push_str("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 50.0\n#\n");
    s
}

fn input() -> Input {
    Input::text("box.coll", FILE)
}

#[test]
fn a_session_and_a_file_give_the_same_fit() {
    let opts = LoadOptions::default();
    let session = load(&input(), &opts).expect("loads");
    let ag = Input::text("ag.log", log(8, [20.0, 90.0, 150.0]));
    let req = CalibrateRequest::default();
    let cal = calibrate(&session, &ag, &req).expect("fits");
    let again = calibrate_file(&input(), &opts, &ag, &req).expect("fits");
    assert_eq!(
        (&cal.table, &cal.declaration),
        (&again.table, &again.declaration)
    );
    assert_eq!(cal.fit, again.fit);
    assert!(cal.warnings.is_empty());
    let sizes: Vec<u64> = cal.fit.rows.iter().map(|r| r.bytes).collect();
    assert_eq!(sizes, [1 << 20, 8 << 20, 64 << 20]);
    assert!(
        cal.table
            .starts_with("calibrate: allgather on 8 ranks, ring under nccl Simple costs"),
        "{}",
        cal.table
    );
    assert_eq!(cal.table.lines().count(), 2 + 3 + 2, "{}", cal.table);
    assert!(
        cal.declaration.contains("model calibrated: flow {")
            && cal.declaration.contains("fitted to ag.log"),
        "{}",
        cal.declaration
    );
    assert_eq!((cal.runtime, cal.proto), (Runtime::Nccl, Proto::Simple));
}

#[test]
fn bad_options_and_logs_are_refused() {
    let session = load(&input(), &LoadOptions::default()).expect("loads");
    let ag = Input::text("ag.log", log(8, [20.0, 90.0, 150.0]));
    let req = CalibrateRequest {
        algo: Some("tree".into()),
        ..CalibrateRequest::default()
    };
    let failure = calibrate(&session, &ag, &req).expect_err("refused");
    let records = failure.records();
    assert_eq!(records.len(), 1, "{failure}");
    assert_eq!(
        (records[0].code.as_str(), records[0].file.as_str()),
        ("E0024", "<command line>"),
        "{failure}"
    );
    assert!(failure.render().contains("--algo tree"), "{failure}");
    let four = Input::text("four.log", log(4, [20.0, 90.0, 150.0]));
    let failure = calibrate(&session, &four, &CalibrateRequest::default()).expect_err("refused");
    let records = failure.records();
    assert_eq!(
        (records[0].code.as_str(), records[0].file.as_str()),
        ("E0051", "four.log"),
        "{failure}"
    );
    assert!(
        records[0]
            .message
            .contains("the log ran on 4 ranks; the file's collective has 8"),
        "{failure}"
    );
}
