//! Robustness: arbitrary bytes, and every prefix of the real examples and standard library
//! files, go through the whole front end without a panic. Bounded so CI stays fast.

use collc::diag::SourceMap;
use collc::sema::{Options, check};
use proptest::prelude::*;
use std::path::Path;

fn run(text: &str) -> usize {
    let mut sources = SourceMap::new();
    let id = sources.add("input.coll", text.to_string());
    let c = check(&mut sources, id, &Options::default());
    // Every diagnostic must render without panicking, too.
    let _ = collc::diag::render::to_text(&c.diagnostics, &sources);
    let _ = collc::diag::render::to_json_lines(&c.diagnostics, &sources);
    c.diagnostics.len()
}

fn corpus() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in ["examples", "stdlib", "tests/ui"] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut paths: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            if p.extension().is_some_and(|x| x == "coll") {
                out.push(std::fs::read_to_string(&p).expect("readable"));
            }
        }
    }
    out
}

#[test]
fn truncated_real_files_never_panic() {
    for text in corpus() {
        let step = (text.len() / 40).max(1);
        let mut cut = 0;
        while cut < text.len() {
            if text.is_char_boundary(cut) {
                run(&text[..cut]);
            }
            cut += step;
        }
    }
}

#[test]
fn truncated_topologies_report_errors() {
    // Cutting a file in the middle of a declaration must give diagnostics, not silence.
    let text = "generator g(n: int) { compute x[n]; for i in 0..n - 1 { link x[i] <-> x[i + 1] : 1 GB/s; } }\n\
                topology t = g(4);\ncollective allreduce { count: 8; }\n";
    for cut in [10, 30, 60, 90, 110, 130] {
        assert!(
            run(&text[..cut]) > 0,
            "no diagnostics for prefix of {cut} bytes"
        );
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let deep = format!("let x = {}1{};", "(".repeat(100_000), ")".repeat(100_000));
    assert!(run(&deep) > 0);
    let long = format!("let x = 1{};", " + 1".repeat(100_000));
    assert!(run(&long) > 0);
    let chain = format!(
        "topology t {{ if true {{}} {} }}",
        "else if true {} ".repeat(10_000)
    );
    assert!(run(&chain) > 0);
    let huge = "let a = pow(pow(pow(10, 64), 64), 64);\nlet b = a * a * a * a * a;";
    assert!(run(huge) > 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        run(&text);
    }

    #[test]
    fn random_token_soup_never_panics(words in proptest::collection::vec(prop::sample::select(vec![
        "topology", "t", "{", "}", "compute", "switch", "x", "[", "]", "4", "link", "<->", "->", ":",
        "1 GB/s", ";", "for", "i", "in", "0..4", "if", "else", "true", "(", ")", "+", "-", "*", "/",
        "collective", "allreduce", "schedule", "recursive_multiplying", "stages", "a2", "c4m2", "generator",
        "g", "use", "as", "let", "=", ",", ".", "param", "model", "target", "auto", "count", "size", "8 B",
        "participants", "all", "root", "latency", "parallel", "\"s\"", "import", "ring", "%", "==", "&&",
    ]), 0..80)) {
        run(&words.join(" "));
    }
}
