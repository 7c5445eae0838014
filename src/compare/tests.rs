//! Winners, crossovers, notes and rendering of hand-made comparisons: independent of how
//! [`crate::choose::evaluate`] computes its figures.

use super::*;

fn done(seconds: f64) -> Cell {
    Cell::Done {
        seconds,
        algbw: 1e9 / seconds,
        busbw: 2e9 / seconds,
    }
}

fn failed(message: &str) -> Cell {
    Cell::Failed {
        code: Code::ForestUnschedulable,
        message: message.into(),
    }
}

/// Three families over five sizes: ring wins small, a tie at 4 KiB goes to the earlier family,
/// nobody runs at 16 KiB, forest fails at the two smallest sizes and wins the largest.
fn sample() -> Comparison {
    Comparison {
        topology: "t".into(),
        kind: CollectiveKind::Allreduce,
        ranks: 4,
        dtype: Dtype::F32,
        engine: Engine::Flow(FlowParams::default()),
        families: vec![
            Family::ring(),
            Family::RecursiveDoubling,
            Family::Forest {
                k: AutoOr::Auto,
                chunks: AutoOr::Fixed(1),
            },
        ],
        sizes: vec![1024, 2048, 4096, 16384, 65536],
        cells: vec![
            vec![done(1.0), done(2.0), failed("too small")],
            vec![done(3.0), done(2.0), failed("too small")],
            vec![done(2.0), done(2.0), done(5.0)],
            vec![failed("x"), failed("y"), failed("z")],
            vec![done(9.0), done(8.0), done(1.0)],
        ],
        axis: Axis::Size,
    }
}

#[test]
fn winners_ties_and_crossovers() {
    let c = sample();
    let w: Vec<Option<usize>> = (0..5).map(|s| c.winner(s)).collect();
    assert_eq!(w, [Some(0), Some(1), Some(0), None, Some(2)]);
    let x = c.crossovers();
    let pairs: Vec<(u64, usize, usize)> = x.iter().map(|x| (x.bytes, x.from, x.to)).collect();
    // 16 KiB has no winner: the change to forest is reported where forest wins.
    assert_eq!(pairs, [(2048, 0, 1), (4096, 1, 0), (65536, 0, 2)]);
    assert!((0..3).all(|f| c.evaluated(f)));
    assert_eq!(c.bus_factor(), 1.5);
}

#[test]
fn notes_group_failures_by_message_and_name_skipped_families() {
    let mut c = sample();
    let notes = c.notes();
    assert_eq!(
        notes,
        [
            "ring not simulated at 16 KiB: x (E0043)",
            "recursive_doubling not simulated at 16 KiB: y (E0043)",
            "forest (k: auto, chunks: 1) not simulated at 1 KiB, 2 KiB: too small (E0043)",
            "forest (k: auto, chunks: 1) not simulated at 16 KiB: z (E0043)",
        ]
    );
    for row in &mut c.cells {
        row[2] = failed("no trees");
    }
    assert!(!c.evaluated(2));
    assert_eq!(
        c.notes().last().map(String::as_str),
        Some("forest (k: auto, chunks: 1) skipped: no trees (E0043)")
    );
}

#[test]
fn every_format_shows_the_model_and_every_cell() {
    let c = sample();
    let t = render::table(&c);
    assert!(
        t.contains("flow-level model: overhead 1000 ns per message"),
        "{t}"
    );
    assert!(
        t.contains("crossovers: ring -> recursive_doubling at 2 KiB"),
        "{t}"
    );
    assert!(
        t.contains("note: forest (k: auto, chunks: 1) not simulated"),
        "{t}"
    );
    // Every family failed at 16 KiB: nine figures and the winner are `-`, over the row's
    // line in each panel of families.
    let dashes: usize = t
        .lines()
        .filter(|l| l.starts_with("16 KiB"))
        .map(|row| row.matches(" - ").count() + usize::from(row.ends_with('-')))
        .sum();
    assert_eq!(dashes, 10, "{t}");
    let csv = render::csv(&c);
    assert_eq!(csv.lines().count(), 1 + 5 * 3);
    assert!(csv.lines().skip(1).all(|l| l.contains(",flow defaults,")));
    assert!(csv.contains("\"forest (k: auto, chunks: 1)\""));
    let json: serde_json::Value = serde_json::from_str(&render::json(&c)).unwrap();
    assert_eq!(json["model"]["overhead_s"], 1e-6);
    assert_eq!(json["sizes"][3]["winner"], serde_json::Value::Null);
    assert_eq!(json["sizes"][0]["results"][2]["error"]["code"], "E0043");
    assert_eq!(json["crossovers"].as_array().map(Vec::len), Some(3));
}

#[test]
fn readable_numbers() {
    assert_eq!(render::time(1.5e-7), "150.0 ns");
    assert_eq!(render::time(2.5e-5), "25.00 us");
    assert_eq!(render::time(0.0123), "12.30 ms");
    assert_eq!(render::time(2.0), "2.000 s");
    assert_eq!(render::gbs(212.7e9), "213");
    assert_eq!(render::gbs(23.14e9), "23.1");
    assert_eq!(render::gbs(0.0682e9), "0.0682");
    assert_eq!(render::gbs(5.3e5), "5.30e-4");
}

#[test]
fn sweeps_take_each_family_once_then_their_heaviest_rows_first() {
    // Three rows of 1, 2 and 4 bytes, two families: cell i is row i / 2, family i % 2.
    let pairs: Vec<(usize, usize, (), ())> = (0..6).map(|i| (i / 2, i % 2, (), ())).collect();
    let bytes = [1u64, 2, 4];
    let all = cell_order(&pairs, 2, |_| true, |r| bytes[r]);
    assert_eq!(all, [0, 1, 4, 5, 2, 3]);
    // A shard that does not run the first row starts each family in its next one, and still
    // lists every cell.
    let shard = cell_order(&pairs, 2, |r| r != 0, |r| bytes[r]);
    assert_eq!(shard, [2, 3, 4, 5, 0, 1]);
    // Equal weights (a `--vary` sweep of one size) keep the rows' order.
    let flat = cell_order(&pairs, 2, |_| true, |_| 7);
    assert_eq!(flat, [0, 1, 2, 3, 4, 5]);
}
