//! One figure per schedule (issue 39): hover's simulated time, `collc sim`'s and `collc build
//! --emit report`'s are the same for the same file, because they come from the same driver
//! call ([`collc::driver::Session::sim`]); on the quickstart (a host schedule under the flow
//! model) and on ForestColl's Figure 2 (a forest).
//!
//! Each figure is printed rounded (`300.6 µs`, `300.60 us`); each must be the driver's time to
//! the digits it shows. `collc sim` must also print the driver's text byte for byte.

mod cli_support;
use cli_support::collc_ok as collc;
use collc::driver::{self, Input, LoadOptions, SimOutcome, SimRequest};
use collc::progress::Quiet;
use std::path::Path;

const EXAMPLES: [&str; 2] = ["examples/quickstart.coll", "examples/forestcoll_fig2.coll"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// What the driver's simulation job gives for `file`, as `collc sim FILE` asks for it.
fn driver_outcome(file: &str) -> SimOutcome {
    let session = driver::load(&Input::path(root().join(file)), &LoadOptions::default())
        .unwrap_or_else(|f| panic!("{file}: {f}"));
    session
        .sim(&SimRequest::default(), &Quiet)
        .unwrap_or_else(|f| panic!("{file}: {f}"))
}

/// The time printed right after `marker` on the first line holding it (`300.60 us`, `300.6
/// µs`, `1.23 ms`), in seconds, and half the last digit it shows (its rounding), in seconds.
fn figure_after(text: &str, marker: &str) -> (f64, f64) {
    let line = text
        .lines()
        .find(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no `{marker}` in\n{text}"));
    let rest = &line[line.find(marker).unwrap_or(0) + marker.len()..];
    let mut words = rest.split_whitespace();
    let number = words.next().unwrap_or_else(|| panic!("{line}"));
    let unit = words
        .next()
        .unwrap_or_else(|| panic!("{line}"))
        .trim_end_matches(',');
    let scale = match unit {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        other => panic!("`{other}` is not a unit of time: {line}"),
    };
    let value: f64 = number.parse().unwrap_or_else(|_| panic!("{line}"));
    let decimals = number.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    (value * scale, 0.5 * 10f64.powi(-decimals) * scale)
}

/// The figure `(value, rounding)` shows `seconds` to its digits.
fn agrees(what: &str, file: &str, (value, rounding): (f64, f64), seconds: f64) {
    assert!(
        (value - seconds).abs() <= rounding * (1.0 + 1e-9),
        "{file}: {what} shows {value} s, the driver's simulation {seconds} s"
    );
}

/// Hover's schedule summary, as the language server makes it from its own check of the text.
fn hover(file: &str) -> String {
    let text = std::fs::read_to_string(root().join(file)).expect("example");
    let analysis =
        collc::lsp::analysis::Analysis::new(file, &text, 1, &collc::sema::Options::default());
    let model = analysis.model.as_ref().expect("the example checks");
    collc::lsp::describe::schedule_summary(model).join("\n")
}

#[test]
fn collc_sim_prints_the_drivers_outcome() {
    for file in EXAMPLES {
        let o = driver_outcome(file);
        assert!(o.complete, "{file}");
        assert_eq!(collc(&["sim", file]), o.text, "{file}");
        // Its figure is the outcome's.
        let marker = match o.kind {
            driver::Engine::Forest => "simulated ",
            _ => "time ",
        };
        agrees(
            "`collc sim`",
            file,
            figure_after(&o.text, marker),
            o.seconds,
        );
        // And the figures are the run's: the slowest rank's time, algbw = size / time.
        let latest = o.ranks.iter().copied().fold(0.0, f64::max);
        assert_eq!(latest, o.seconds, "{file}");
        let bytes = o.bytes.expect("a collective") as f64;
        let algbw = o.algbw.expect("algbw");
        assert!((algbw - bytes / o.seconds).abs() <= algbw * 1e-12, "{file}");
        assert!(o.busbw.expect("busbw") > 0.0, "{file}");
        assert!(o.utilisation.is_some_and(|u| u > 0.0 && u <= 1.0), "{file}");
    }
}

#[test]
fn hover_shows_the_figure_collc_sim_prints() {
    for file in EXAMPLES {
        let o = driver_outcome(file);
        let summary = hover(file);
        agrees(
            "hover",
            file,
            figure_after(&summary, "simulated "),
            o.seconds,
        );
        assert!(
            summary.contains(&format!("as `collc sim` runs it: {}", o.engine)),
            "{file}: {summary}"
        );
    }
}

#[test]
fn the_report_shows_the_figure_collc_sim_prints() {
    for file in EXAMPLES {
        let o = driver_outcome(file);
        let report = collc(&["build", file, "--emit", "report"]);
        let line = report
            .lines()
            .find(|l| l.contains("flow simulation"))
            .unwrap_or_else(|| panic!("{file}: no flow simulation in\n{report}"));
        agrees("the report", file, figure_after(line, "): "), o.seconds);
    }
}
