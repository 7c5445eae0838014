//! Tests of the nccl-tests reader: the shapes of real logs (every version's columns, headers,
//! noise), inference of each collective, and the coded errors of broken logs.

use super::*;

const F: FileId = FileId(0);

/// The device lines of `n` ranks, 8 per host, as 2.13 and later print them.
fn rank_lines(n: u32) -> String {
    (0..n)
        .map(|r| {
            let (host, dev) = (r / 8 + 1, r % 8);
            format!(
                "#  Rank {r:2} Group  0 Pid {:6} on     node{host:02} device {dev:2} [0x{:02x}] \
                 NVIDIA A100-SXM4-80GB\n",
                41000 + r,
                7 + dev
            )
        })
        .collect()
}

/// The same before 2.13 (no `Group`), or in 2017 (no `Pid` either).
fn old_rank_lines(n: u32, pid: bool) -> String {
    (0..n)
        .map(|r| {
            let pid = if pid {
                format!(" Pid {:6}", 12000 + r)
            } else {
                String::new()
            };
            format!(
                "#   Rank {r:2}{pid} on       dgx1 device {r:2} [0x{:02x}] Tesla V100-SXM2-16GB\n",
                6 + r
            )
        })
        .collect()
}

const MODERN_TITLE: &str = r#"#                                                              out-of-place                       in-place          
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       
"#;

const MODERN_ROWS: &str = r#"           8             2     float     sum      -1    35.21    0.00    0.00      0    34.87    0.00    0.00      0
     1048576        262144     float     sum      -1    61.30   17.11   32.08      0    60.95   17.20   32.25      0
   134217728      33554432     float     sum      -1   1612.4   83.24  156.08      0   1610.9   83.32  156.22      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 62.7701 
#
"#;

/// all_reduce_perf (2.13 and later) on 16 ranks over two hosts.
fn modern_all_reduce() -> String {
    format!(
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 \
         iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n{}#\n{MODERN_TITLE}{MODERN_ROWS}",
        rank_lines(16)
    )
}

fn text_of(text: &str, span: Span) -> &str {
    text.get(span.range()).unwrap_or("<out of range>")
}

fn one_error(text: &str) -> Diagnostic {
    let diags = parse(F, text).expect_err("the log is broken");
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let d = diags.into_iter().next().expect("one");
    assert_eq!(d.code, Code::NcclTestsLog);
    assert!(!d.primary.message.is_empty() && d.help.is_some(), "{d:#?}");
    d
}

#[test]
fn a_modern_all_reduce_table_on_16_ranks() {
    let text = modern_all_reduce();
    let log = parse(F, &text).expect("reads");
    assert_eq!(log.tables.len(), 1);
    let t = &log.tables[0];
    assert_eq!(t.ranks, Some(16));
    assert_eq!(t.collective, Some(CollectiveKind::Allreduce));
    assert!(text_of(&text, t.span).starts_with("#       size         count      type   redop"));
    assert_eq!(t.rows.len(), 3);
    let r = &t.rows[1];
    assert_eq!(
        text_of(&text, r.span),
        MODERN_ROWS.lines().nth(1).expect("row")
    );
    assert_eq!(
        (r.bytes, r.count, r.dtype.as_str()),
        (1048576, 262144, "float")
    );
    assert_eq!((r.redop.as_deref(), r.root), (Some("sum"), Some(-1)));
    let m = Measure {
        time_us: 61.30,
        algbw: 17.11,
        busbw: 32.08,
        wrong: Some(0),
    };
    assert_eq!(r.out_of_place, Some(m));
    assert_eq!(r.in_place.map(|m| m.busbw), Some(32.25));
    assert_eq!(t.rows[2].out_of_place.map(|m| m.time_us), Some(1612.4));
    assert_eq!((log.algo, log.proto), (None, None));
}

#[test]
fn an_old_all_gather_table_without_redop_and_root() {
    let text = format!(
        "# nThread 1 nGpus 8 minBytes 1024 maxBytes 67108864 step: 64(factor) warmup iters: 5 \
         iters: 20 validation: 1 \n#\n# Using devices\n{}{}",
        old_rank_lines(8, true),
        r#"#
#                                             out-of-place                       in-place
#       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)             (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
        1024            32   float    22.41    0.05    0.04  0e+00    21.98    0.05    0.04  0e+00
     4194304        131072   float    98.73   42.48   37.17  0e+00    91.20   45.99   40.24  0e+00
    67108864       2097152   float   1033.2   64.95   56.83  1e-07   1012.4   66.29   58.00  0e+00
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 30.7183 
"#
    );
    let log = parse(F, &text).expect("reads");
    let t = &log.tables[0];
    assert_eq!(
        (t.ranks, t.collective),
        (Some(8), Some(CollectiveKind::Allgather))
    );
    let r = &t.rows[2];
    assert_eq!(
        (r.bytes, r.count, r.redop.clone(), r.root),
        (67108864, 2097152, None, None)
    );
    // An error magnitude is not a count of wrong elements.
    let m = Measure {
        time_us: 1033.2,
        algbw: 64.95,
        busbw: 56.83,
        wrong: None,
    };
    assert_eq!(r.out_of_place, Some(m));
    assert_eq!(r.in_place.map(|m| m.algbw), Some(66.29));
}

#[test]
fn unchecked_runs_print_n_a_for_wrong() {
    let text = format!(
        "# nThread 1 nGpus 8 minBytes 33554432 maxBytes 67108864 step: 2(factor) warmup iters: 5 \
         iters: 20 agg iters: 1 validation: 0 graph: 0\n{}{MODERN_TITLE}{}",
        rank_lines(8),
        r#"    33554432       8388608     float     sum      -1    412.3   81.38  142.42    N/A    410.9   81.66  142.91    N/A
    67108864      16777216     float     sum      -1    802.1   83.67  146.42    N/A      N/A     N/A     N/A    N/A
"#
    );
    let t = &parse(F, &text).expect("reads").tables[0];
    assert_eq!(
        t.rows[0].out_of_place.map(|m| (m.busbw, m.wrong)),
        Some((142.42, None))
    );
    assert_eq!(t.rows[0].in_place.map(|m| m.time_us), Some(410.9));
    assert_eq!(t.rows[1].in_place, None, "a group of N/A is no measure");
    assert_eq!(t.collective, Some(CollectiveKind::Allreduce));
}

#[test]
fn the_rank_count_is_the_device_lines_not_n_gpus() {
    let g8 = "# nThread 1 nGpus 8 minBytes 8388608 maxBytes 8388608 step: 2(factor) warmup iters: 5 \
              iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n";
    let row = "     8388608       2097152     float     sum      -1    120.5   69.61  121.82      0    \
               119.8   70.02  122.54      0\n";
    let with = format!("{g8}{}#\n{MODERN_TITLE}{row}", rank_lines(8));
    let t = &parse(F, &with).expect("reads").tables[0];
    assert_eq!(
        (t.ranks, t.collective),
        (Some(8), Some(CollectiveKind::Allreduce))
    );
    // Without device lines the number of processes, hence of ranks, is unknown.
    let without = format!("{g8}#\n{MODERN_TITLE}{row}");
    let t = &parse(F, &without).expect("reads").tables[0];
    assert_eq!((t.ranks, t.collective, t.rows.len()), (None, None, 1));
}

#[test]
fn two_tables_in_one_log() {
    let header = |n| {
        format!(
            "# nThread 1 nGpus {n} minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 \
             iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n{}#\n{MODERN_TITLE}",
            rank_lines(n)
        )
    };
    let text = format!(
        "{}{}{}{}",
        header(4),
        r#"     1048576         65536     float     sum      -1    52.43   20.00   15.00      0    51.90   20.20   15.15      0
# Out of bounds values : 0 OK

"#,
        header(2),
        r#"     1048576        262144     float    none       0    45.10   23.25   23.25      0    44.80   23.41   23.41      0
"#
    );
    let log = parse(F, &text).expect("reads");
    let got: Vec<_> = log
        .tables
        .iter()
        .map(|t| (t.ranks, t.collective, t.rows.len()))
        .collect();
    assert_eq!(
        got,
        [
            (Some(4), Some(CollectiveKind::ReduceScatter), 1),
            (Some(2), Some(CollectiveKind::Broadcast), 1)
        ]
    );
    assert_eq!(log.tables[1].rows[0].root, Some(0));
    assert!(log.tables[1].span.start > log.tables[0].rows[0].span.end);
}

#[test]
fn nccl_info_lines_are_skipped_and_algo_and_proto_found() {
    let noise = "node01:41021:41090 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n\
                 node01:41021:41021 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n\
                 [node01:41000] 15 more processes have sent help message help-mpi-btl-openib.txt\n\
                 node02:7001:7001 [0] NCCL INFO NCCL_PROTO set by environment to LL128\n";
    let full = modern_all_reduce();
    let second = full.find("     1048576 ").expect("second row");
    let text = format!(
        "+ mpirun -np 16 -x NCCL_PROTO=Simple ./build/all_reduce_perf -b 8 -e 128M\n{}{noise}{}",
        &full[..second],
        &full[second..]
    );
    let log = parse(F, &text).expect("reads");
    assert_eq!(log.algo.as_deref(), Some("Ring"));
    assert_eq!(
        log.proto.as_deref(),
        Some("Simple"),
        "the first occurrence counts"
    );
    let t = &log.tables[0];
    let got = (t.rows.len(), t.rows[1].bytes, t.collective);
    assert_eq!(got, (3, 1048576, Some(CollectiveKind::Allreduce)));
    assert_eq!(
        text_of(&text, t.rows[1].span),
        MODERN_ROWS.lines().nth(1).expect("row")
    );
}

#[test]
fn settings_need_their_own_name() {
    let words = |line: &'static str| line.split_whitespace().collect::<Vec<_>>();
    let tree = words("export NCCL_ALGO=\"Tree\"");
    assert_eq!(setting(&tree, "NCCL_ALGO"), Some("Tree".into()));
    let others = words("MY_NCCL_ALGO=Ring NCCL_ALGORITHM=x -x NCCL_ALGO set by env");
    assert_eq!(setting(&others, "NCCL_ALGO"), None);
}

#[test]
fn the_2017_shape_prints_milliseconds() {
    let text = format!(
        "nThread 1 nGpus 4 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 \
         iters: 20 validation: 1 \n# Using devices\n{}{}",
        old_rank_lines(4, false),
        r#"#                                                out-of-place                    in-place
#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res
     1048576        262144   float     sum    0.092  11.40  17.10    2e-07    0.091  11.52  17.28    2e-07
     4194304       1048576   float     sum    0.285  14.72  22.08    2e-07    0.284  14.77  22.15    2e-07
 Out of bounds values : 0 OK
 Avg bus bandwidth    : 19.6525 
"#
    );
    let t = &parse(F, &text).expect("reads").tables[0];
    assert_eq!(
        (t.ranks, t.collective),
        (Some(4), Some(CollectiveKind::Allreduce))
    );
    let m = t.rows[0].out_of_place.expect("measured");
    assert!((m.time_us - 92.0).abs() < 1e-9, "{m:?}");
    assert_eq!((m.wrong, t.rows[0].redop.as_deref()), (None, Some("sum")));
}

#[test]
fn the_2_19_shape_with_cputime_timestamps_and_per_iteration_columns() {
    let head = format!(
        "# nccl-tests version 2.19.6 nccl-headers=22703 nccl-library=22703\n\
         # Collective test starting: all_reduce_perf\n\
         # nThread 1 nGpus 2 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 1 \
         iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n#\n# Using devices\n{}#\n",
        rank_lines(2)
    );
    let stamped = format!(
        "{head}{}",
        r#"#                                                              out-of-place                       in-place          
#       size         count      type   redop    root  cputime   algbw   busbw  #wrong  cputime   algbw   busbw  #wrong           timestamp
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         %Y-%m-%d %H:%M:%S
     1048576        262144     float     sum      -1    20.11   52.14   52.14 1.2e+06    20.05   52.30   52.30       0  2026-07-09 16:03:21
"#
    );
    let t = &parse(F, &stamped).expect("reads").tables[0];
    let r = &t.rows[0];
    assert_eq!(
        r.out_of_place.map(|m| (m.time_us, m.wrong)),
        Some((20.11, Some(1_200_000)))
    );
    assert_eq!(r.in_place.map(|m| m.busbw), Some(52.30));
    // On 2 ranks allreduce and reduce have the same factor: the root of -1 tells them apart.
    assert_eq!(t.collective, Some(CollectiveKind::Allreduce));
    let per_iter = format!(
        "{head}{}",
        r#"#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%
     1048576        262144     float     sum      -1    20.11   52.14   52.14       0    19.80    21.02    21.02     1.52    20.05   52.30   52.30       0    19.77    20.98    20.98     1.49
"#
    );
    let t = &parse(F, &per_iter).expect("reads").tables[0];
    assert_eq!(
        t.rows[0].in_place.map(|m| (m.time_us, m.algbw)),
        Some((20.05, 52.30))
    );
}

#[test]
fn rows_without_a_title_are_read_by_their_columns() {
    let text = r#"     1048576        262144     float     sum      -1    61.30   17.11   32.08      0    60.95   17.20   32.25      0
     2097152        524288     float     sum      -1    83.02   25.26   47.36      0    82.75   25.34   47.52      0
# Out of bounds values : 0 OK
     1048576        262144     float       0    45.10   23.25   23.25      0    44.80   23.41   23.41      0
"#;
    let log = parse(F, text).expect("reads");
    assert_eq!(log.tables.len(), 2);
    let t = &log.tables[0];
    assert_eq!(
        t.span, t.rows[0].span,
        "without a title the first row is the table's span"
    );
    assert_eq!((t.ranks, t.rows.len(), t.rows[1].bytes), (None, 2, 2097152));
    // After the footer, a new table whose fourth column is an integer: a root.
    let r = &log.tables[1].rows[0];
    assert_eq!((r.redop.clone(), r.root), (None, Some(0)));
}

fn row(algbw: f64, busbw: f64, redop: Option<&str>, root: Option<i64>) -> Row {
    let m = Measure {
        time_us: 10.0,
        algbw,
        busbw,
        wrong: Some(0),
    };
    Row {
        span: Span::new(F, 0, 0),
        bytes: 1 << 20,
        count: 1 << 18,
        dtype: "float".into(),
        redop: redop.map(str::to_string),
        root,
        out_of_place: Some(m),
        in_place: Some(m),
    }
}

#[test]
fn inference_of_each_collective() {
    use CollectiveKind::*;
    let n = 8;
    let cases = [
        (row(80.0, 140.0, Some("sum"), Some(-1)), Some(Allreduce)),
        (row(80.0, 70.0, Some("none"), Some(-1)), Some(Allgather)),
        (row(80.0, 70.0, None, None), Some(Allgather)),
        (row(80.0, 70.0, Some("max"), Some(-1)), Some(ReduceScatter)),
        (row(80.0, 80.0, Some("none"), Some(0)), Some(Broadcast)),
        (row(80.0, 80.0, None, Some(3)), Some(Broadcast)),
        (row(80.0, 80.0, Some("sum"), Some(0)), Some(Reduce)),
        // Within 2%, not beyond.
        (row(80.0, 141.9, Some("avg"), None), Some(Allreduce)),
        (row(80.0, 143.0, Some("sum"), None), None),
        // sendrecv (factor 1, root -1) and scatter ((n-1)/n, root 0) are none of them.
        (row(80.0, 80.0, Some("none"), Some(-1)), None),
        (row(80.0, 70.0, Some("none"), Some(0)), None),
    ];
    for (r, want) in cases {
        // Rows with algbw below 1.00 are too coarse to count.
        let slow = row(0.99, 0.2, r.redop.as_deref(), r.root);
        assert_eq!(infer(&[slow.clone(), r.clone()], n), want, "{r:?}");
        assert_eq!(infer(&[slow], n), None, "only slow rows: undecidable");
    }
    // On 2 ranks, allreduce and reduce share the factor 1: without a root, undecidable.
    assert_eq!(infer(&[row(50.0, 50.0, Some("sum"), None)], 2), None);
    assert_eq!(
        infer(&[row(50.0, 50.0, Some("sum"), Some(1))], 2),
        Some(Reduce)
    );
    // Rows that disagree, mixed redops, and no ranks are undecidable.
    let mixed = [
        row(80.0, 140.0, Some("sum"), None),
        row(80.0, 70.0, Some("sum"), None),
    ];
    assert_eq!(infer(&mixed, n), None);
    let ops = [
        row(80.0, 140.0, Some("sum"), None),
        row(80.0, 140.0, Some("none"), None),
    ];
    assert_eq!(infer(&ops, n), None);
    assert_eq!(infer(&[row(80.0, 140.0, Some("sum"), None)], 0), None);
}

#[test]
fn a_truncated_last_row_is_e0051() {
    let full = modern_all_reduce();
    let cut = full.find("  156.08").expect("the last row") + 5;
    let text = &full[..cut];
    let d = one_error(text);
    assert!(
        d.message.contains("ends in the middle of this row"),
        "{}",
        d.message
    );
    let last = "   134217728      33554432     float     sum      -1   1612.4   83.24  156";
    assert_eq!(text_of(text, d.primary.span), last);
    assert_eq!(d.primary.span.end as usize, text.len());
}

#[test]
fn a_non_number_is_e0051_at_its_field() {
    let text = modern_all_reduce().replace("17.11", "17.1l");
    let d = one_error(&text);
    assert_eq!(text_of(&text, d.primary.span), "17.1l");
    assert!(
        d.message.contains("`17.1l` in the algbw column"),
        "{}",
        d.message
    );
    let text = modern_all_reduce().replace("262144", "262k");
    assert_eq!(text_of(&text, one_error(&text).primary.span), "262k");
}

#[test]
fn every_malformed_row_is_reported() {
    let text = modern_all_reduce()
        .replace("     sum      -1    35.21", "     sum    35.21")
        .replace("1610.9", "fast");
    let diags = parse(F, &text).expect_err("two broken rows");
    assert_eq!(diags.len(), 2, "{diags:#?}");
    assert!(diags.iter().all(|d| d.code == Code::NcclTestsLog));
    assert!(
        diags[0].message.contains("has 12 columns, not 13"),
        "{}",
        diags[0].message
    );
    let first = text_of(&text, diags[0].primary.span);
    assert!(
        first.starts_with("           8             2     float") && first.ends_with("0.00      0")
    );
    assert_eq!(text_of(&text, diags[1].primary.span), "fast");
}

#[test]
fn a_log_without_a_table_is_e0051() {
    let text = "node01:1:1 [0] NCCL INFO Bootstrap : Using eth0\nsegmentation fault\n";
    let d = one_error(text);
    assert!(d.message.contains("no table of results"), "{}", d.message);
    assert_eq!(
        text_of(text, d.primary.span),
        "node01:1:1 [0] NCCL INFO Bootstrap : Using eth0"
    );
    assert_eq!(one_error("").primary.span, Span::new(F, 0, 0));
}

#[test]
fn a_header_without_rows_is_e0051() {
    let full = modern_all_reduce();
    let title = full.find("#       size").expect("title");
    let d = one_error(&full[..full.find("           8   ").expect("first row")]);
    assert_eq!(d.primary.span.start as usize, title);
    assert!(d.message.contains("no rows"), "{}", d.message);
    // A run cut in its device list: the header's nThread line is pointed at.
    let d = one_error(&full[..full.find("#  Rank  3").expect("rank 3")]);
    assert_eq!(d.primary.span.start, 0);
    assert!(d.message.contains("after a run's header"), "{}", d.message);
}

#[test]
fn a_title_nccl_tests_does_not_print_is_e0051() {
    let text = r#"#       size         count     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
     6291456       1572864    76.21   82.55  144.46      0
"#;
    let d = one_error(text);
    assert_eq!(d.primary.span.start, 0);
    assert!(
        d.message.contains("which nccl-tests does not print"),
        "{}",
        d.message
    );
}

/// Every prefix of real logs, cut at any character, reads or fails with coded diagnostics
/// inside the text, and never panics.
#[test]
fn truncations_at_every_offset_never_panic() {
    let logs = [
        modern_all_reduce(),
        modern_all_reduce()
            .replace("      0\n", "    N/A\n")
            .replace("1612.4", "N/A"),
    ];
    for full in &logs {
        for cut in (0..=full.len()).filter(|&i| full.is_char_boundary(i)) {
            let text = &full[..cut];
            if let Err(diags) = parse(F, text) {
                assert!(!diags.is_empty());
                for d in diags {
                    let s = d.primary.span;
                    assert_eq!(d.code, Code::NcclTestsLog);
                    assert!(s.end as usize <= cut && s.start <= s.end, "{cut}: {d:?}");
                    assert!(d.help.is_some() && !d.primary.message.is_empty());
                }
            }
        }
    }
}

#[test]
fn a_table_whose_rows_are_all_broken_is_not_also_empty() {
    let full = modern_all_reduce();
    let first = full.find("           8   ").expect("first row");
    let text = format!(
        "{}{}\n",
        &full[..first],
        "           8             2     float     sum"
    );
    let d = one_error(&text);
    assert!(d.message.contains("has 4 columns, not 13"), "{}", d.message);
    assert_eq!(d.primary.span.start as usize, first);
}
