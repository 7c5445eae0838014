//! `collc compare` and the library behind it (src/compare, src/choose, src/plot): which families
//! are compared, the sweep's structure, deterministic table, CSV, JSON and SVG output, the chart
//! as XML with one line per family, and the command line's errors for bad flags.
//!
//! Nothing here depends on the figures' exact values (`choose::evaluate` is a stand-in until
//! the flow-level simulation lands) except the quickstart's table and chart snapshots, which
//! are regenerated when the figures change. The packet model's table and chart are made from
//! figures written here: they pin the layout (panels within the width, wrapped subtitles).

use collc::choose::candidates;
use collc::compare::{self, Cell, Comparison, chart, render};
use collc::diag::{Code, SourceMap, render as diag_render};
use collc::net::{FlowParams, for_file};
use collc::progress::{Phase, Progress, Quiet};
use collc::sema::model::{CollectiveKind, Dtype, Model};
use collc::sema::{Options, check};
use collc::sim::packet::PacketParams;
use quick_xml::events::Event;
use std::sync::atomic::{AtomicU64, Ordering};

fn load(rel: &str) -> Model {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let text = std::fs::read_to_string(&path).expect("readable example");
    let mut sources = SourceMap::new();
    let id = sources.add(rel.to_string(), text);
    let c = check(&mut sources, id, &Options::default());
    assert!(
        c.diagnostics.is_empty(),
        "{}",
        diag_render::to_text(&c.diagnostics, &sources)
    );
    c.model.expect("a model")
}

fn names(m: &Model) -> Vec<&'static str> {
    candidates(m).iter().map(|f| f.name()).collect()
}

#[test]
fn candidates_are_exactly_the_lowerable_families() {
    assert_eq!(
        names(&load("examples/quickstart.coll")),
        [
            "ring",
            "recursive_doubling",
            "recursive_multiplying",
            "nccl_tree",
            "forest"
        ]
    );
    assert_eq!(
        names(&load("examples/dgx_a100_2x8.coll")),
        ["ring", "forest"]
    );
    assert_eq!(
        names(&load("examples/full_mesh_boxes.coll")),
        ["binomial", "forest"]
    );
    // The file's own schedule (canary here) does not matter: canary is not lowered yet.
    assert_eq!(
        names(&load("examples/fat_tree_1024.coll")),
        [
            "ring",
            "recursive_doubling",
            "recursive_multiplying",
            "nccl_tree",
            "forest"
        ]
    );
}

/// Counts the sweep's steps.
#[derive(Default)]
struct Count {
    steps: AtomicU64,
    announced: AtomicU64,
}

impl Progress for Count {
    fn phase(&self, p: Phase, steps: Option<u64>) {
        assert_eq!(p, Phase::Sweep);
        self.announced.store(steps.unwrap_or(0), Ordering::Relaxed);
    }
    fn step(&self) {
        self.steps.fetch_add(1, Ordering::Relaxed);
    }
}

fn sweep(rel: &str, sizes: &str) -> Comparison {
    let m = load(rel);
    let sizes = compare::sizes::parse(sizes).expect("sizes");
    compare::compare(
        &m,
        &sizes,
        &compare::Engine::Flow(for_file(&m, None)),
        &[],
        &Quiet,
    )
    .expect("a comparison")
}

#[test]
fn the_sweep_has_one_cell_per_size_and_family_and_consistent_winners() {
    let m = load("examples/quickstart.coll");
    let sizes = compare::sizes::parse("1KiB..1GiB").expect("sizes");
    let count = Count::default();
    let c = compare::compare(
        &m,
        &sizes,
        &compare::Engine::Flow(FlowParams::default()),
        &[],
        &count,
    )
    .expect("comparison");
    assert_eq!(count.announced.load(Ordering::Relaxed), 21 * 5);
    assert_eq!(count.steps.load(Ordering::Relaxed), 21 * 5);
    assert_eq!(c.sizes, sizes);
    assert_eq!(c.families, candidates(&m));
    assert_eq!(
        (c.kind.name(), c.ranks, c.topology.as_str()),
        ("allreduce", 8, "lab")
    );
    assert!(c.cells.iter().all(|row| row.len() == 5));
    for (s, row) in c.cells.iter().enumerate() {
        let w = c.winner(s).expect("every size has a winner");
        let Cell::Done { seconds: best, .. } = row[w] else {
            panic!("the winner ran")
        };
        for cell in row {
            let Cell::Done {
                seconds,
                algbw,
                busbw,
            } = *cell
            else {
                panic!("every family runs on the quickstart ring: {cell:?}")
            };
            assert!(seconds >= best && seconds > 0.0);
            // nccl-tests: algbw = size / time, busbw = algbw * 2(n-1)/n.
            let bytes = c.sizes[s] as f64;
            assert!((algbw - bytes / seconds).abs() <= 1e-9 * algbw);
            assert!((busbw - algbw * 1.75).abs() <= 1e-9 * busbw);
        }
    }
    for x in c.crossovers() {
        let s = c
            .sizes
            .iter()
            .position(|&b| b == x.bytes)
            .expect("a sweep size");
        assert_eq!((c.winner(s - 1), c.winner(s)), (Some(x.from), Some(x.to)));
    }
}

#[test]
fn output_is_deterministic_and_names_the_model() {
    let a = sweep("examples/dgx_a100_2x8.coll", "1KiB..1GiB*8");
    let b = sweep("examples/dgx_a100_2x8.coll", "1KiB..1GiB*8");
    assert_eq!(a, b);
    assert_eq!(render::table(&a), render::table(&b));
    assert_eq!(render::csv(&a), render::csv(&b));
    assert_eq!(render::json(&a), render::json(&b));
    assert_eq!(chart::svg(&a), chart::svg(&b));
    let model = "overhead 1000 ns per message, gamma 0 ns/B (defaults: no `flow` model declared)";
    assert!(render::table(&a).contains(model));
    assert!(chart::svg(&a).expect("svg").contains(model));
    let json: serde_json::Value = serde_json::from_str(&render::json(&a)).expect("JSON");
    assert_eq!(json["model"]["kind"], "flow");
    assert_eq!(json["sizes"].as_array().map(Vec::len), Some(a.sizes.len()));
}

/// What a chart draws, read back from its SVG: each polyline's stroke and point count, and
/// each text with where it starts.
struct Drawn {
    polylines: Vec<(String, usize)>,
    texts: Vec<(String, String, String)>,
}

fn drawn(svg: &str) -> Drawn {
    let mut reader = quick_xml::Reader::from_str(svg);
    let mut d = Drawn {
        polylines: Vec::new(),
        texts: Vec::new(),
    };
    let mut at = (String::new(), String::new());
    let attr = |e: &quick_xml::events::BytesStart, key: &[u8]| -> String {
        e.attributes()
            .map(|a| a.expect("attribute"))
            .find(|a| a.key.as_ref() == key)
            .map(|a| String::from_utf8_lossy(&a.value).into_owned())
            .unwrap_or_default()
    };
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Eof => break,
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"polyline" => {
                let points = attr(&e, b"points").split_whitespace().count();
                d.polylines.push((attr(&e, b"stroke"), points));
            }
            Event::Start(e) if e.name().as_ref() == b"text" => {
                at = (attr(&e, b"x"), attr(&e, b"y"));
            }
            Event::Text(t) => {
                let text = t.decode().expect("utf-8").trim().to_string();
                if !text.is_empty() {
                    d.texts.push((at.0.clone(), at.1.clone(), text));
                }
            }
            _ => {}
        }
    }
    d
}

/// A chart's texts (title and subtitle lines, axis labels, legend entries) with where each
/// starts, and per family how its line is drawn: solid (one polyline through its points) or
/// dashed.
fn digest(c: &Comparison) -> String {
    let d = drawn(&chart::svg(c).expect("svg"));
    let mut out = String::new();
    for (x, y, t) in &d.texts {
        out.push_str(&format!("text {x},{y}: {t}\n"));
    }
    for (i, f) in c
        .families
        .iter()
        .enumerate()
        .filter(|(i, _)| c.evaluated(*i))
    {
        let (r, g, b) = collc::plot::COLORS[i];
        let hex = format!("#{r:02X}{g:02X}{b:02X}");
        let n = c
            .cells
            .iter()
            .filter(|row| matches!(row[i], Cell::Done { .. }))
            .count();
        // Polylines through all its points: its line when solid (less the legend sample's
        // three two-point pieces when it has two points).
        let whole = d
            .polylines
            .iter()
            .filter(|p| p.0 == hex && p.1 == n)
            .count();
        let solid = if n == 2 { whole > 3 } else { whole > 0 };
        out.push_str(&format!(
            "line {}: {}\n",
            compare::short(f),
            if solid { "solid" } else { "dashed" }
        ));
    }
    out
}

/// The chart parses as XML; each family's line is drawn in its colour: one polyline through
/// every size, or dashes where it overlaps an earlier family, which its legend entry then
/// names (the axes and ticks are black; the legend's samples are three short pieces); the
/// legend and title name the families, collective, topology and model.
#[test]
fn the_chart_is_xml_with_one_line_per_family_and_a_legend() {
    let c = sweep("examples/quickstart.coll", "1KiB..1GiB");
    let d = drawn(&chart::svg(&c).expect("svg"));
    let texts: Vec<&str> = d.texts.iter().map(|t| t.2.as_str()).collect();
    for (i, f) in c.families.iter().enumerate() {
        let (r, g, b) = collc::plot::COLORS[i];
        let hex = format!("#{r:02X}{g:02X}{b:02X}");
        let name = compare::label(f);
        let entry = texts
            .iter()
            .find(|t| t.starts_with(&name))
            .unwrap_or_else(|| panic!("legend lacks {name}: {texts:?}"));
        let whole = d
            .polylines
            .iter()
            .filter(|p| p.0 == hex && p.1 == c.sizes.len())
            .count();
        if entry.contains("(overlaps ") {
            assert_eq!(whole, 0, "{name} is dashed");
        } else {
            assert_eq!(whole, 1, "{name}: one line through every size");
        }
    }
    assert!(
        texts
            .iter()
            .any(|t| t.contains("(overlaps recursive_doubling")),
        "recursive multiplying coincides with doubling at large sizes: {texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("allreduce") && t.contains("`lab`")),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t.starts_with("flow-level model:")));
}

/// A x8 sweep's chart: the x axis labels every size swept (not powers of 4, which left 8 KiB,
/// 512 KiB and 32 MiB unlabelled), and a line that coincides with an earlier one is dashed
/// with a marker of its own and its legend entry says where it overlaps.
#[test]
fn quickstart_chart_x8() {
    let c = sweep("examples/quickstart.coll", "1KiB..1GiB*8");
    let svg = chart::svg(&c).expect("svg");
    let texts: Vec<String> = drawn(&svg).texts.into_iter().map(|t| t.2).collect();
    for s in &c.sizes {
        let label = compare::sizes::show(*s);
        assert!(texts.contains(&label), "{label} is labelled: {texts:?}");
    }
    insta::assert_snapshot!(digest(&c));
}

/// The table of the README's quickstart file. Its figures come from `choose::evaluate`: this
/// snapshot is regenerated when they change.
#[test]
fn quickstart_table() {
    let c = sweep("examples/quickstart.coll", "1KiB..1GiB*8");
    insta::assert_snapshot!(render::table(&c));
}

/// A small fat tree under a packet model: its comparison adds the in-network families,
/// eight in all.
const PACKET: &str = "import fat_tree;
topology t = fat_tree(leaves: 2, hosts_per_leaf: 4, spines: 2, host_bw: 100 Gbps, spine_bw: 100 Gbps);
collective allreduce { size: 64 KiB; dtype: i32; op: sum; }
schedule canary { }
model pkt: packet { placement: random; }
";

/// [`PACKET`]'s comparison under its packet model with figures made up here (what is tested
/// is the layout, not the simulator): recursive multiplying takes recursive doubling's time,
/// and recursive doubling fails at the largest size.
fn packet_comparison() -> Comparison {
    let mut sources = SourceMap::new();
    let id = sources.add("packet.coll".to_string(), PACKET.to_string());
    let checked = check(&mut sources, id, &Options::default());
    assert!(checked.diagnostics.is_empty());
    let m = checked.model.expect("a model");
    let model = m.models.iter().find(|x| x.name == "pkt").expect("pkt");
    let engine = compare::Engine::Packet {
        params: PacketParams::from_model(model).expect("a packet model"),
        seed: 1,
        runs: 1,
    };
    let families = compare::families_for(&m, &engine);
    assert_eq!(families.len(), 8, "{families:?}");
    let sizes: Vec<u64> = vec![16 << 10, 64 << 10, 256 << 10];
    let us = [
        [6.80, 10.35, 39.40],
        [8.66, 26.34, 91.54],
        [8.66, 26.34, 91.54],
        [10.33, 30.74, 113.73],
        [4.85, 11.45, 43.51],
        [2.04, 6.19, 22.80],
        [2.42, 6.57, 23.17],
        [5.52, 9.83, 28.51],
    ];
    let cells = sizes
        .iter()
        .enumerate()
        .map(|(s, &bytes)| {
            (0..families.len())
                .map(|f| {
                    if (f, s) == (1, 2) {
                        return Cell::Failed {
                            code: Code::ProgramTooLarge,
                            message: "the packet simulation stopped at its limit: the run did not finish within 134217728 events (at 4648659920 ps of simulated time): packets and timers keep coming without the collective completing".into(),
                        };
                    }
                    let seconds = us[f][s] * 1e-6;
                    let algbw = bytes as f64 / seconds;
                    Cell::Done {
                        seconds,
                        algbw,
                        busbw: algbw * 1.75,
                    }
                })
                .collect()
        })
        .collect();
    Comparison {
        topology: "t".into(),
        kind: CollectiveKind::Allreduce,
        ranks: 8,
        dtype: Dtype::I32,
        engine,
        families,
        sizes,
        cells,
        axis: compare::Axis::Size,
    }
}

/// The packet model's table of eight families, once 276 columns wide: every line fits the
/// table's width, the families in panels one below the other, the winner after the last;
/// the model line, the schedules and the notes wrap.
#[test]
fn packet_table() {
    let c = packet_comparison();
    let table = render::table(&c);
    for line in table.lines() {
        assert!(line.len() <= compare::table::WIDTH, "too wide: {line}");
    }
    insta::assert_snapshot!(table);
}

/// The packet model's chart: its long subtitle (the model and every parameter) wraps over
/// lines instead of running off the chart's edge.
#[test]
fn packet_chart() {
    let c = packet_comparison();
    insta::assert_snapshot!(digest(&c));
}

fn collc(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("collc runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn cli_compare_writes_formats_and_a_plot() {
    let dir = std::env::temp_dir().join(format!("collc-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let svg = dir.join("algbw.svg");
    let svg_arg = svg.to_string_lossy().into_owned();
    let args = [
        "compare",
        "examples/dgx_a100_2x8.coll",
        "--sizes",
        "1KiB,1MiB,1GiB",
        "--plot",
        &svg_arg,
    ];
    let (code, table, err) = collc(&args);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.is_empty(),
        "no progress bar or anything else on a pipe: {err}"
    );
    assert!(
        table.starts_with("compare: allgather of f16 on `a100` (16 ranks)"),
        "{table}"
    );
    assert!(
        table.contains("winner") && table.contains("crossovers:"),
        "{table}"
    );
    let drawn = std::fs::read_to_string(&svg).expect("the plot");
    assert!(drawn.starts_with("<svg"));
    let (_, again, _) = collc(&args);
    assert_eq!(table, again);
    assert_eq!(drawn, std::fs::read_to_string(&svg).expect("the plot"));
    let (code, csv, _) = collc(&[
        "compare",
        "examples/dgx_a100_2x8.coll",
        "--sizes",
        "1KiB,1MiB",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0);
    assert_eq!(csv.lines().count(), 1 + 2 * 2);
    let (code, json, _) = collc(&[
        "compare",
        "examples/dgx_a100_2x8.coll",
        "--sizes",
        "1MiB",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["families"].as_array().map(Vec::len), Some(2));
    let (code, _, err) = collc(&[
        "compare",
        "examples/quickstart.coll",
        "--sizes",
        "1MiB",
        "-v",
    ]);
    assert_eq!(code, 0);
    for phase in ["parse/check", "compare", "emit"] {
        assert!(err.contains(&format!("collc: {phase} ")), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_compare_errors_point_at_the_flag() {
    let run = |extra: &[&str]| {
        let mut args = vec!["--color", "never", "compare", "examples/quickstart.coll"];
        args.extend_from_slice(extra);
        collc(&args)
    };
    let (code, out, err) = run(&["--sizes", "1KiB..7XB"]);
    assert_eq!((code, out.as_str()), (1, ""));
    insta::assert_snapshot!("sizes_unknown_unit", err);
    let (code, _, err) = run(&["--sizes", "64.5,1MiB"]);
    assert_eq!(code, 1);
    insta::assert_snapshot!("sizes_fraction_of_a_byte", err);
    let (code, _, err) = run(&["--model", "nope"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("error[E0003]") && err.contains("--model nope"),
        "{err}"
    );
    let (code, _, err) = run(&["--format", "xml"]);
    assert_eq!(code, 1);
    assert!(err.contains("--format"), "{err}");
    let (code, _, err) = collc(&["compare", "tests/ui/E0001-several.coll"]);
    assert_eq!(code, 1);
    assert!(err.contains("error[E0001]"), "{err}");
}

#[test]
fn cli_compare_refuses_a_model_that_is_not_a_flow_model_and_a_barrier() {
    let dir = std::env::temp_dir().join(format!("collc-compare-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("bad.coll");
    std::fs::write(
        &file,
        "import ring;\ntopology t = ring(n: 4, bw: 10 GB/s);\ncollective allreduce { size: 1 MiB; }\nmodel lg: loggp;\nmodel fluid: flow { overhead: 2 us; }\n",
    )
    .expect("write");
    let path = file.to_string_lossy().into_owned();
    let (code, _, err) = collc(&["compare", &path, "--model", "lg", "--sizes", "1MiB"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("error[E0024]") && err.contains("declared flow and packet models: fluid"),
        "{err}"
    );
    let (code, out, err) = collc(&["compare", &path, "--model", "fluid", "--sizes", "1MiB"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("overhead 2000 ns per message") && out.contains("model `fluid`"),
        "{out}"
    );
    std::fs::write(
        &file,
        "import ring;\ntopology t = ring(n: 4, bw: 10 GB/s);\ncollective barrier;\n",
    )
    .expect("write");
    let (code, _, err) = collc(&["compare", &path]);
    assert_eq!(code, 1);
    assert!(err.contains("moves no data"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
