//! UI tests: the diagnostics users see.
//!
//! Every `.coll` file directly in tests/ui/ is a test input named `E0xxx-short-name.coll`. It must
//! fail or warn (a file that checks cleanly is lowered and verified, as `collc build --emit ir`
//! does, and lowering's warnings count),
//! its first diagnostic must have the code its name starts with, every diagnostic must have
//! a help line and a primary span inside its file, and the rendered text is an insta snapshot
//! (`tests/snapshots/ui__E0xxx-short-name.snap`). Files in tests/ui/support/ are only imported.
//! Inputs are named by their path relative to the crate root, so snapshots are the same on every
//! machine; cargo runs integration tests from the crate root, where those paths (and the imports
//! they contain) resolve.
//!
//! The other tests here: every code has a ui file (or, for E0029, a CLI test) and a page in
//! docs/errors/ whose title names it and whose examples behave as their fences say; the command
//! line's JSON output and `collc explain`.

use collc::diag::{Code, Diagnostic, SourceMap, render};
use collc::sema::{Options, check};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The test inputs, sorted by name.
fn ui_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/ui"))
        .expect("tests/ui exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "coll"))
        .collect();
    files.sort();
    files
}

/// IR text inputs: `tests/ui/ir/E0xxx-name.ir`, checked by `collc::ir::check_text`.
fn ir_ui_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/ui/ir"))
        .expect("tests/ui/ir exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "ir"))
        .collect();
    files.sort();
    files
}

fn check_ir(name: &str, text: &str) -> (Vec<collc::diag::Diagnostic>, SourceMap) {
    let mut sources = SourceMap::new();
    let id = sources.add(name.to_string(), text.to_string());
    let diags = collc::ir::check_text(id, text);
    (diags, sources)
}

/// GOAL inputs: `tests/ui/goal/E0xxx-name.goal`, checked (and snapshotted) by tests/goal.rs.
fn goal_ui_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/ui/goal"))
        .expect("tests/ui/goal exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "goal"))
        .collect();
    files.sort();
    files
}

/// MSCCL inputs: `tests/ui/msccl/E0xxx-name.{coll,xml}`, built or checked (and snapshotted) by
/// tests/msccl.rs.
fn msccl_ui_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/ui/msccl"))
        .expect("tests/ui/msccl exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "coll" || e == "xml"))
        .collect();
    files.sort();
    files
}

/// An MSCCL XML checked as `collc check FILE.xml` does.
fn check_xml(name: &str, text: &str) -> (Vec<collc::diag::Diagnostic>, SourceMap) {
    let mut sources = SourceMap::new();
    let id = sources.add(name.to_string(), text.to_string());
    (collc::backend::msccl::check(id, text), sources)
}

/// A `.coll` text built as `collc build --target msccl` does.
fn build_msccl(name: &str, text: &str) -> (Vec<collc::diag::Diagnostic>, SourceMap) {
    let mut sources = SourceMap::new();
    let id = sources.add(name.to_string(), text.to_string());
    let checked = check(&mut sources, id, &Options::default());
    let diags = match &checked.model {
        Some(m) if checked.diagnostics.is_empty() => {
            let opts = collc::backend::msccl::Options::from_model(m);
            // Errors, or the warnings of a build that succeeds (E0054).
            match collc::backend::msccl::build(m, &opts) {
                Ok(e) => e.warnings,
                Err(d) => d,
            }
        }
        _ => checked.diagnostics,
    };
    (diags, sources)
}

fn check_goal(name: &str, text: &str) -> (Vec<collc::diag::Diagnostic>, SourceMap) {
    let mut sources = SourceMap::new();
    let id = sources.add(name.to_string(), text.to_string());
    let diags = collc::backend::goal::parse(id, text)
        .err()
        .unwrap_or_default();
    (diags, sources)
}

#[test]
fn ir_corpus() {
    let files = ir_ui_files();
    assert!(!files.is_empty());
    for path in files {
        let name = stem(&path);
        let rel = format!("tests/ui/ir/{name}.ir");
        let text = std::fs::read_to_string(&path).expect("readable");
        let (diags, sources) = check_ir(&rel, &text);
        let want = name.split('-').next().unwrap_or("");
        assert!(!diags.is_empty(), "{rel}: verifies cleanly");
        assert_eq!(
            diags[0].code.as_str(),
            want,
            "{rel}: {}",
            render::to_text(&diags, &sources)
        );
        assert!(
            diags.iter().all(|d| d.help.is_some()),
            "{rel}: a diagnostic without help"
        );
        insta::assert_snapshot!(format!("ir__{name}"), render::to_text(&diags, &sources));
    }
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .expect("a file name")
        .to_string_lossy()
        .into_owned()
}

/// Checks one input the way `collc check` does, naming it by its path from the crate root.
fn check_file(path: &Path) -> (Vec<Diagnostic>, SourceMap) {
    let name = format!(
        "tests/ui/{}",
        path.file_name().expect("a file name").to_string_lossy()
    );
    let text = std::fs::read_to_string(path).expect("readable input");
    let mut sources = SourceMap::new();
    let id = sources.add(name, text);
    (check_then_lower(&mut sources, id), sources)
}

/// `check`, and when that is clean, lower and verify as `collc build --emit ir` does (so inputs
/// and error-page examples can show lowering errors such as E0039, and lowering's warnings such
/// as E0045).
fn check_then_lower(sources: &mut SourceMap, id: collc::diag::FileId) -> Vec<Diagnostic> {
    let checked = check(sources, id, &Options::default());
    match &checked.model {
        Some(m) if checked.diagnostics.is_empty() => {
            // A declared target's capability check comes first, as in `collc build`; the P4
            // target emits without lowering.
            use collc::sema::model::TargetKind;
            for t in m.targets.iter().filter(|t| t.kind != TargetKind::Sim) {
                if let Ok(target) = collc::target::get(t.kind, t.span) {
                    let o = collc::target::Options::from_model(m, t.kind);
                    let d = target.capable(m, &o);
                    if !d.is_empty() {
                        return d;
                    }
                    if t.kind == TargetKind::P4 {
                        return match target.emit(m, &o, &collc::progress::Quiet) {
                            Ok(e) => e.warnings,
                            Err(d) => d,
                        };
                    }
                }
            }
            match collc::lower::lower_and_verify_with(m, &collc::progress::Quiet) {
                Ok((_, _, warnings)) => warnings,
                Err(d) => d,
            }
        }
        _ => checked.diagnostics,
    }
}

/// The problems with one input's diagnostics, as messages (empty when all is well).
fn problems(name: &str, diags: &[Diagnostic], sources: &SourceMap) -> Vec<String> {
    let mut out = Vec::new();
    let want = name.split('-').next().unwrap_or("");
    if Code::parse(want).is_none_or(|c| c.as_str() != want) {
        out.push(format!(
            "{name}: the name must start with a code such as E0014-"
        ));
    }
    match diags.first() {
        None => out.push(format!("{name}: no diagnostics, expected {want}")),
        Some(d) if d.code.as_str() != want => out.push(format!(
            "{name}: the first diagnostic is {}, expected {want}",
            d.code
        )),
        Some(_) => {}
    }
    for d in diags {
        if d.help.as_deref().is_none_or(|h| h.trim().is_empty()) {
            out.push(format!(
                "{name}: {} `{}` has no help line",
                d.code, d.message
            ));
        }
        let span = d.primary.span;
        let len = sources.get(span.file).text.len();
        if span.start > span.end || span.end as usize > len {
            out.push(format!(
                "{name}: {} `{}` has its primary span {}..{} outside its file of {len} bytes",
                d.code, d.message, span.start, span.end
            ));
        }
        if d.message.trim().is_empty() {
            out.push(format!("{name}: {} has an empty message", d.code));
        }
    }
    out
}

#[test]
fn ui() {
    let files = ui_files();
    assert!(files.len() >= 30, "only {} ui files", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let name = stem(path);
        let (diags, sources) = check_file(path);
        let text = render::to_text(&diags, &sources);
        for p in problems(&name, &diags, &sources) {
            failures.push(format!("{p}\n{text}"));
        }
        // Keep going after a snapshot mismatch, so one run shows (and with INSTA_UPDATE writes)
        // every changed snapshot.
        let snap = std::panic::catch_unwind(|| insta::assert_snapshot!(name.clone(), text));
        if snap.is_err() {
            failures.push(format!("{name}: snapshot mismatch (see above)"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Codes that no input file can produce, and the test that covers each instead.
const NOT_FROM_A_FILE: &[(&str, &str)] = &[
    ("E0029", "missing_input_file_is_e0029"),
    ("E0047", "limits::goal_time_overflow_is_e0047"),
    ("E0048", "lsp::internal_errors_are_a_coded_diagnostic"),
    (
        "E0049",
        "cli::report_canary::tests::a_broken_protocol_is_e0049_with_its_seed",
    ),
    (
        "E0051",
        "calibrate::nccl_tests::tests::a_truncated_last_row_is_e0051",
    ),
    ("E0055", "exits::argument_errors_are_e0055"),
    (
        "E0059",
        "unbounded::binary_input_is_e0059_at_the_first_block",
    ),
    ("E0060", "unbounded::files_over_the_input_limit_are_e0060"),
    (
        "E0061",
        "driver::compare::tests::a_set_cancel_flag_stops_the_sweep_with_e0061",
    ),
];

#[test]
fn every_code_has_a_ui_file() {
    let names: Vec<String> = ui_files()
        .iter()
        .chain(ir_ui_files().iter())
        .chain(goal_ui_files().iter())
        .chain(msccl_ui_files().iter())
        .map(|p| stem(p))
        .collect();
    let missing: Vec<&str> = Code::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|c| !NOT_FROM_A_FILE.iter().any(|(x, _)| x == c))
        .filter(|c| !names.iter().any(|n| n.starts_with(&format!("{c}-"))))
        .collect();
    assert!(
        missing.is_empty(),
        "codes without a tests/ui file: {missing:?}"
    );
}

#[test]
fn several_syntax_errors_in_one_run() {
    let (diags, _) = check_file(&root().join("tests/ui/E0001-several.coll"));
    let syntax: Vec<u32> = diags
        .iter()
        .filter(|d| d.code == Code::Syntax)
        .map(|d| d.primary.span.start)
        .collect();
    assert_eq!(syntax.len(), 3, "{diags:#?}");
    assert_eq!(
        diags.len(),
        3,
        "only the syntax errors are reported: {diags:#?}"
    );
}

fn collc() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_collc"));
    c.current_dir(root());
    c
}

#[test]
fn json_diagnostics() {
    let out = collc()
        .args([
            "check",
            "--error-format",
            "json",
            "tests/ui/E0014-product.coll",
        ])
        .output()
        .expect("collc runs");
    assert_eq!(out.status.code(), Some(1));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let objects: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("each line is one JSON object"))
        .collect();
    assert_eq!(objects.len(), 1, "{text}");
    let d = &objects[0];
    assert_eq!(d["code"], "E0014");
    assert_eq!(d["severity"], "error");
    assert_eq!(d["primary"]["file"], "tests/ui/E0014-product.coll");
    // `[a3, a4]` on line 8, from column 42.
    assert_eq!(d["primary"]["line"], 8);
    assert_eq!(d["primary"]["column"], 42);
    assert!(
        d["message"]
            .as_str()
            .is_some_and(|m| m.contains("12") && m.contains("10")),
        "{d}"
    );
    assert!(
        d["help"].as_str().is_some_and(|h| h.contains("[a2, a5]")),
        "{d}"
    );
}

#[test]
fn missing_input_file_is_e0029() {
    let out = collc()
        .args([
            "check",
            "--error-format",
            "json",
            "tests/ui/this-file-does-not-exist.coll",
        ])
        .output()
        .expect("collc runs");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let d: serde_json::Value = serde_json::from_str(
        err.lines()
            .find(|l| l.starts_with('{'))
            .unwrap_or_else(|| panic!("no JSON diagnostic in {err}")),
    )
    .expect("JSON");
    assert_eq!(d["code"], "E0029");
    assert!(d["help"].as_str().is_some_and(|h| !h.is_empty()), "{d}");
}

#[test]
fn explain_prints_the_page() {
    let out = collc()
        .args(["explain", "E0014"])
        .output()
        .expect("collc runs");
    assert_eq!(out.status.code(), Some(0));
    let page = std::fs::read_to_string(root().join("docs/errors/E0014.md")).expect("page");
    assert_eq!(String::from_utf8_lossy(&out.stdout), page);
    // Lower case and bare numbers name the same code.
    for alias in ["e0014", "14"] {
        let out = collc().args(["explain", alias]).output().expect("runs");
        assert_eq!(out.status.code(), Some(0), "{alias}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), page, "{alias}");
    }
}

#[test]
fn explain_rejects_unknown_codes() {
    for arg in ["E9999", "E0000", "banana"] {
        let out = collc().args(["explain", arg]).output().expect("runs");
        assert_eq!(out.status.code(), Some(1), "{arg}");
        assert!(out.stdout.is_empty(), "{arg}");
        assert!(!out.stderr.is_empty(), "{arg}");
    }
}

/// A fenced block of an error page: its 1-based opening line, info string and text.
fn fenced(doc: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    let mut lines = doc.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let Some(info) = line.strip_prefix("```") else {
            continue;
        };
        let mut text = String::new();
        for (_, l) in lines.by_ref() {
            if l.trim() == "```" {
                break;
            }
            text.push_str(l);
            text.push('\n');
        }
        out.push((i + 1, info.trim().to_string(), text));
    }
    out
}

/// Every code has docs/errors/E0xxx.md, titled `# E0xxx: ...`, with an erroneous example
/// (```` ```coll-error E0xxx ````, failing with that code first) and a corrected one
/// (```` ```coll ````, checking cleanly), following the conventions of tests/docs.rs.
/// Examples that need more than one file are ```` ```coll-fragment ```` and are not run.
#[test]
fn every_code_has_an_error_page() {
    let mut failures = Vec::new();
    for code in Code::ALL {
        let c = code.as_str();
        let rel = format!("docs/errors/{c}.md");
        let Ok(doc) = std::fs::read_to_string(root().join(&rel)) else {
            failures.push(format!("{rel} is missing"));
            continue;
        };
        let title = doc.lines().next().unwrap_or("");
        if !title.starts_with(&format!("# {c}: ")) {
            failures.push(format!(
                "{rel}: the title line must be `# {c}: ...`, found `{title}`"
            ));
        }
        let blocks = fenced(&doc);
        let (mut bad, mut good) = (0, 0);
        for (line, info, text) in &blocks {
            let mut words = info.split_whitespace();
            let lang = words.next().unwrap_or("");
            let expect = match lang {
                "coll" | "ir" | "goal" | "xml" | "msccl" => None,
                "coll-error" | "ir-error" | "goal-error" | "xml-error" | "msccl-error" => {
                    Some(words.next().unwrap_or("").to_string())
                }
                _ => continue,
            };
            let (diags, sources) = if lang.starts_with("ir") {
                check_ir(&format!("{rel}:{line}"), text)
            } else if lang.starts_with("goal") {
                check_goal(&format!("{rel}:{line}"), text)
            } else if lang.starts_with("xml") {
                check_xml(&format!("{rel}:{line}"), text)
            } else if lang.starts_with("msccl") {
                build_msccl(&format!("{rel}:{line}"), text)
            } else {
                let mut sources = SourceMap::new();
                let id = sources.add(format!("{rel}:{line}"), text.clone());
                if expect.is_some() {
                    (check_then_lower(&mut sources, id), sources)
                } else {
                    let checked = check(&mut sources, id, &Options::default());
                    (checked.diagnostics, sources)
                }
            };
            let shown = render::to_text(&diags, &sources);
            match expect {
                None if diags.is_empty() => good += 1,
                // A corrected MSCCL example builds: warnings about the model (E0045) may stay.
                None if lang == "msccl"
                    && diags
                        .iter()
                        .all(|d| d.severity == collc::diag::Severity::Warning) =>
                {
                    good += 1
                }
                None => failures.push(format!(
                    "{rel}:{line}: a corrected example has diagnostics:\n{shown}"
                )),
                Some(want) => {
                    if want != c {
                        failures.push(format!(
                            "{rel}:{line}: an example of {want} on the page of {c}"
                        ));
                    }
                    match diags.first() {
                        Some(d) if d.code.as_str() == want => bad += 1,
                        Some(d) => failures.push(format!(
                            "{rel}:{line}: expected {want} first, found {}:\n{shown}",
                            d.code
                        )),
                        None => failures.push(format!(
                            "{rel}:{line}: the erroneous example checks cleanly"
                        )),
                    }
                }
            }
        }
        let fragments = blocks.iter().filter(|b| b.1 == "coll-fragment").count();
        if NOT_FROM_A_FILE.iter().any(|(x, _)| *x == c) {
            continue;
        }
        if bad == 0 && fragments == 0 {
            failures.push(format!("{rel}: no erroneous example (```coll-error {c})"));
        }
        if good == 0 && fragments == 0 {
            failures.push(format!("{rel}: no corrected example (```coll)"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
