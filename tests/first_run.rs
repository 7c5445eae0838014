//! What a newcomer meets in the first hour (issue 18): the README's first command, `-o` as the
//! output everywhere and the LogGP flags' long names, `--param` errors on the command line,
//! no second error after a misspelled property, files typed by their content and directories
//! checked, no reduction op where nothing is reduced, `sim -b` printing only the time, and
//! plural agreement in what collc prints.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn collc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(args)
        .current_dir(root())
        .env_remove("NO_COLOR")
        .output()
        .expect("collc runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("collc-first-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// A GOAL file of the quickstart, for the LogGP simulator.
fn quickstart_goal(dir: &Path) -> PathBuf {
    let goal = dir.join("q.goal");
    let b = collc(&[
        "build",
        "examples/quickstart.coll",
        "--target",
        "goal",
        "-o",
        s(&goal),
    ]);
    assert_eq!(b.status.code(), Some(0), "{}", text(&b.stderr));
    goal
}

#[test]
fn sim_writes_its_report_with_dash_o() {
    let d = tmp("sim-o");
    let out = d.join("out.txt");
    let r = collc(&["sim", "examples/quickstart.coll", "-o", s(&out)]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    assert!(r.stdout.is_empty(), "{}", text(&r.stdout));
    let report = std::fs::read_to_string(&out).expect("report written");
    let shown = collc(&["sim", "examples/quickstart.coll"]);
    assert_eq!(report, text(&shown.stdout));
    assert!(report.contains("flow model on `lab`"), "{report}");
    // The LogGP simulator too, and nothing is left beside the file.
    let goal = quickstart_goal(&d);
    let out2 = d.join("goal.txt");
    let r = collc(&["sim", s(&goal), "--output", s(&out2)]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let report = std::fs::read_to_string(&out2).expect("report written");
    assert!(
        report.contains("Maximum finishing time at host"),
        "{report}"
    );
    let mut names: Vec<String> = std::fs::read_dir(&d)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["goal.txt", "out.txt", "q.goal"]);
}

#[test]
fn loggp_parameters_have_long_names() {
    let d = tmp("loggp");
    let goal = quickstart_goal(&d);
    let time = |args: &[&str]| {
        let mut all = vec!["sim", s(&goal), "-b"];
        all.extend_from_slice(args);
        let r = collc(&all);
        assert_eq!(r.status.code(), Some(0), "{args:?}: {}", text(&r.stderr));
        text(&r.stdout)
    };
    let base = time(&[]);
    let long = time(&[
        "--loggp-L",
        "100",
        "--loggp-o",
        "10",
        "--loggp-g",
        "5",
        "--loggp-G",
        "1",
        "--loggp-O",
        "1",
        "--loggp-S",
        "1000000",
    ]);
    // LogGOPSim's short spellings, except `-o`, which is the output file.
    let short = time(&[
        "-L",
        "100",
        "--loggp-o",
        "10",
        "-g",
        "5",
        "-G",
        "1",
        "-O",
        "1",
        "-S",
        "1000000",
    ]);
    assert_ne!(base, long);
    assert_eq!(long, short);
    // `-o 1500`, LogGOPSim's overhead, is refused with a pointer to `--loggp-o`; no file named
    // 1500 appears.
    let r = Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(["sim", s(&goal), "-o", "1500", "--color", "never"])
        .current_dir(&d)
        .output()
        .expect("collc runs");
    assert_eq!(r.status.code(), Some(1));
    let err = text(&r.stderr);
    assert!(err.contains("error[E0024]"), "{err}");
    assert!(err.contains("<command line>"), "{err}");
    assert!(err.contains("--loggp-o 1500"), "{err}");
    assert!(!d.join("1500").exists());
}

#[test]
fn sim_dash_b_prints_only_the_time() {
    let d = tmp("batch");
    let goal = quickstart_goal(&d);
    let r = collc(&["sim", s(&goal), "-b"]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let out = text(&r.stdout);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("Maximum finishing time at host "), "{out}");
    // A .coll file under a declared LogGP model: the same single line.
    let coll = d.join("loggp.coll");
    let src = std::fs::read_to_string(root().join("examples/quickstart.coll")).expect("read");
    std::fs::write(&coll, format!("{src}\nmodel lg: loggp;\n")).expect("write");
    let r = collc(&["sim", s(&coll), "-b"]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let out = text(&r.stdout);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("Maximum finishing time at host "), "{out}");
}

#[test]
fn param_errors_point_at_the_command_line() {
    let r = collc(&[
        "check",
        "examples/quickstart.coll",
        "--param",
        "hosts=ten",
        "--color",
        "never",
    ]);
    assert_eq!(r.status.code(), Some(1));
    let err = text(&r.stderr);
    assert!(
        err.contains("<command line>:1:15\n  │\n1 │ --param hosts=ten\n  │               ^^^"),
        "{err}"
    );
    assert!(!err.contains("quickstart.coll"), "{err}");
    // The help is about the command line, not about declaring `ten` in the file.
    assert!(
        err.contains("help: a `--param` value is a value, not a name")
            && !err.contains("declare it with"),
        "{err}"
    );

    let r = collc(&[
        "check",
        "examples/quickstart.coll",
        "--param",
        "host=16",
        "--color",
        "never",
    ]);
    assert_eq!(r.status.code(), Some(1));
    let err = text(&r.stderr);
    assert!(
        err.contains(
            "<command line>:1:9\n  │\n1 │ --param host=16\n  │         ^^^^ unknown parameter"
        ),
        "{err}"
    );
    assert!(err.contains("did you mean `--param hosts=...`?"), "{err}");

    // A wrong type points at the value given, with the declaration beside it.
    let r = collc(&[
        "check",
        "examples/quickstart.coll",
        "--param",
        "hosts=1.5",
        "--color",
        "never",
    ]);
    let err = text(&r.stderr);
    assert!(err.contains("error[E0007]"), "{err}");
    assert!(
        err.contains("1 │ --param hosts=1.5\n  │               ^^^"),
        "{err}"
    );
    // And a good override still works.
    let r = collc(&[
        "check",
        "examples/quickstart.coll",
        "--param",
        "hosts=2 * 4",
    ]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
}

#[test]
fn a_misspelled_model_key_gives_one_error() {
    let r = collc(&[
        "check",
        "tests/ui/E0020-misspelled-model-key.coll",
        "--color",
        "never",
    ]);
    assert_eq!(r.status.code(), Some(1));
    let err = text(&r.stderr);
    assert_eq!(err.matches("error[E0020]").count(), 2, "{err}");
    assert!(!err.contains("E0003"), "{err}");
    // Written correctly, an undeclared model is still E0003.
    let r = collc(&["check", "tests/ui/E0003-unknown-model.coll"]);
    assert!(text(&r.stderr).contains("E0003"));
}

#[test]
fn collectives_that_reduce_nothing_have_no_op() {
    for (file, kind) in [
        ("examples/forestcoll_fig2.coll", "allgather"),
        ("examples/full_mesh_boxes.coll", "broadcast"),
    ] {
        let model = text(&collc(&["build", file, "--emit", "model"]).stdout);
        assert!(model.contains(&format!("collective {kind}\n")), "{model}");
        assert!(!model.contains(", op "), "{file}: {model}");
    }
    let report =
        text(&collc(&["build", "examples/forestcoll_fig2.coll", "--emit", "report"]).stdout);
    assert!(
        report.contains("allgather of 16777216 x f32 (67108864 bytes), 8 ranks"),
        "{report}"
    );
    assert!(!report.contains("reduction op"), "{report}");
    // A reduction keeps its op, in the model and as a selection condition.
    let model =
        text(&collc(&["build", "examples/ring_allreduce_4.coll", "--emit", "model"]).stdout);
    assert!(model.contains("(64 MiB), op sum\n"), "{model}");
    let report = text(
        &collc(&[
            "build",
            "examples/ring_allreduce_4.coll",
            "--emit",
            "report",
        ])
        .stdout,
    );
    assert!(report.contains("the reduction op is sum"), "{report}");
    // Barrier: nothing reduced either.
    let d = tmp("barrier");
    let f = d.join("b.coll");
    std::fs::write(
        &f,
        "topology t { compute h[4]; for i in 0..4 { link h[i] <-> h[(i + 1) % 4] : 10 GB/s; } }\ncollective barrier {}\nschedule recursive_doubling {}\n",
    )
    .expect("write");
    let r = collc(&["build", s(&f), "--emit", "model"]);
    let model = text(&r.stdout);
    assert!(
        model.contains("collective barrier"),
        "{model}{}",
        text(&r.stderr)
    );
    assert!(!model.contains(", op "), "{model}");
    // A barrier moves no data: no "0 elements of f32 (0 B)".
    assert!(
        model.contains("collective barrier\n  no data (a barrier only synchronizes)"),
        "{model}"
    );
    assert!(!model.contains("0 elements"), "{model}");
}

#[test]
fn files_are_typed_by_content_and_directories_are_checked() {
    let d = tmp("kinds");
    // MSCCL XML, IR and GOAL without their extensions, a .coll file named .txt, and a Rust file.
    let xml = d.join("algo");
    let b = collc(&[
        "build",
        "examples/ring_allreduce_4.coll",
        "--target",
        "msccl",
        "-o",
        s(&xml),
    ]);
    assert_eq!(b.status.code(), Some(0), "{}", text(&b.stderr));
    let ir = d.join("program");
    let b = collc(&[
        "build",
        "examples/quickstart.coll",
        "--emit",
        "ir",
        "-o",
        s(&ir),
    ]);
    assert_eq!(b.status.code(), Some(0), "{}", text(&b.stderr));
    let goal = d.join("schedule");
    let b = collc(&[
        "build",
        "examples/quickstart.coll",
        "--target",
        "goal",
        "-o",
        s(&goal),
    ]);
    assert_eq!(b.status.code(), Some(0), "{}", text(&b.stderr));
    std::fs::copy(root().join("examples/quickstart.coll"), d.join("quick.txt")).expect("copy");
    std::fs::write(
        d.join("main.rs"),
        "//! A Rust file.\nuse std::io;\nfn main() {}\n",
    )
    .expect("w");
    for f in [&xml, &ir, &goal, &d.join("quick.txt")] {
        let r = collc(&["check", s(f)]);
        assert_eq!(
            r.status.code(),
            Some(0),
            "{}: {}",
            f.display(),
            text(&r.stderr)
        );
    }
    // A broken file without extension is checked as what it looks like: XML errors for XML.
    let broken = d.join("sub");
    std::fs::create_dir_all(&broken).expect("dir");
    let xml_text = std::fs::read_to_string(&xml).expect("read");
    std::fs::write(
        broken.join("bad"),
        xml_text.replacen("ngpus=\"4\"", "ngpus=\"5\"", 1),
    )
    .expect("write");
    let r = collc(&["check", s(&broken.join("bad")), "--color", "never"]);
    assert_eq!(r.status.code(), Some(1));
    assert!(
        text(&r.stderr).contains("error[E0041]"),
        "{}",
        text(&r.stderr)
    );
    // A file that is none of them, named on the command line: refused, nothing parsed.
    let r = collc(&["check", s(&d.join("main.rs")), "--color", "never"]);
    assert_eq!(r.status.code(), Some(1));
    let err = text(&r.stderr);
    assert!(err.contains("error[E0029]"), "{err}");
    assert!(err.contains("is not a file collc reads"), "{err}");
    assert_eq!(err.matches("error[").count(), 1, "{err}");
    // A directory: the files collc reads under it, in name order, the others counted in a note.
    std::fs::remove_file(broken.join("bad")).expect("rm");
    std::fs::write(
        broken.join("z.coll"),
        "collective allreduce { size: 8 B; }\n",
    )
    .expect("w");
    let r = collc(&["check", s(&d), "--color", "never"]);
    let err = text(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    // Files with another extension are skipped in a directory (named, they are sniffed).
    assert!(err.contains("note: skipped 2 files under"), "{err}");
    assert!(
        err.contains("main.rs") && err.contains("quick.txt"),
        "{err}"
    );
    assert_eq!(err.matches("error[").count(), 1, "{err}");
    assert!(err.contains("sub/z.coll"), "{err}");
    let again = collc(&["check", s(&d), "--color", "never"]);
    assert_eq!(text(&again.stderr), err);
    // The examples directory checks cleanly; an empty directory is an error, not a silent pass.
    let r = collc(&["check", "examples"]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let empty = tmp("empty");
    let r = collc(&["check", s(&empty)]);
    assert_eq!(r.status.code(), Some(1));
    assert!(text(&r.stderr).contains("holds no .coll"));
    // `collc sim` types its file the same way.
    let r = collc(&["sim", s(&goal), "-b"]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    assert!(text(&r.stdout).starts_with("Maximum finishing time"));
}

#[test]
fn a_missing_file_has_no_empty_snippet() {
    let r = collc(&["check", "no/such/file.coll", "--color", "never"]);
    assert_eq!(r.status.code(), Some(1));
    let err = text(&r.stderr);
    assert!(
        err.starts_with("error[E0029]: cannot read `no/such/file.coll`"),
        "{err}"
    );
    assert!(!err.contains('│'), "{err}");
    assert!(!err.contains('^'), "{err}");
    assert!(
        err.contains("help: check the path and permissions"),
        "{err}"
    );
    // JSON keeps the file and span for tools.
    let r = collc(&["check", "no/such/file.coll", "--error-format", "json"]);
    assert!(text(&r.stderr).contains("no/such/file.coll"));
}

#[test]
fn counts_agree_with_their_nouns() {
    let report = text(
        &collc(&[
            "build",
            "examples/ring_allreduce_4.coll",
            "--emit",
            "report",
        ])
        .stdout,
    );
    assert!(report.contains("up to 1 thread block per GPU"), "{report}");
    let report = text(&collc(&["build", "examples/hypercube_16.coll", "--emit", "report"]).stdout);
    assert!(report.contains("up to 1 step per thread block"), "{report}");
    let report = text(&collc(&["build", "examples/quickstart.coll", "--emit", "report"]).stdout);
    assert!(
        report.contains("a positive multiple of 1 element "),
        "{report}"
    );
    // A forest pipelined with one chunk.
    let one = std::fs::read_to_string(root().join("examples/forestcoll_fig2.coll"))
        .expect("example")
        .replace("chunks: 8;", "chunks: 1;");
    let dir = tempfile::tempdir().expect("temp dir");
    let f = dir.path().join("one.coll");
    std::fs::write(&f, one).expect("write");
    let forest = text(&collc(&["build", f.to_str().expect("utf-8"), "--emit", "report"]).stdout);
    assert!(
        forest.contains("achievable algbw with 1 chunk: "),
        "{forest}"
    );
    for r in [&report, &forest] {
        for bad in [" 1 thread blocks", " 1 steps", " 1 elements", " 1 chunks"] {
            assert!(!r.contains(bad), "{bad}: {r}");
        }
    }
}

#[test]
fn license_files_match_cargo_toml() {
    let toml = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    assert!(
        toml.contains("license = \"MIT OR Apache-2.0\""),
        "update this test with the license"
    );
    let mit = std::fs::read_to_string(root().join("LICENSE-MIT")).expect("LICENSE-MIT");
    assert!(mit.contains("Permission is hereby granted, free of charge"));
    let apache = std::fs::read_to_string(root().join("LICENSE-APACHE")).expect("LICENSE-APACHE");
    assert!(apache.contains("Apache License") && apache.contains("Version 2.0, January 2004"));
}

/// The minimum Rust version: Cargo.toml's `rust-version` is what README states, and no
/// dependency (normal, build or dev) needs a newer compiler (`cargo metadata`, offline). The
/// language features are held to it by clippy's `incompatible_msrv` lint and were verified once
/// with `cargo +1.88 check --all-targets`.
#[test]
fn rust_version_is_stated_and_covers_the_dependencies() {
    let toml = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let msrv = toml
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = \""))
        .and_then(|l| l.strip_suffix('"'))
        .expect("rust-version in Cargo.toml");
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    assert!(
        readme.contains(&format!("Rust {msrv} or newer")),
        "README must state Rust {msrv}"
    );
    // Three components, missing ones 0: "1.88" and "1.88.0" are the same version.
    let parse = |v: &str| -> Vec<u64> {
        let mut p: Vec<u64> = v.split('.').map(|x| x.parse().unwrap_or(0)).collect();
        p.resize(3, 0);
        p
    };
    // Only this platform's packages: the others (ctrlc's macOS and Windows dependencies) are
    // never downloaded, and --offline cannot read them.
    let rustc = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc -vV");
    let host = text(&rustc.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .expect("rustc names its host");
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--locked",
            "--filter-platform",
            &host,
        ])
        .current_dir(root())
        .output()
        .expect("cargo metadata");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let mut newest = (vec![0], String::new());
    for p in meta["packages"].as_array().expect("packages") {
        if let Some(v) = p["rust_version"].as_str() {
            if parse(v) > newest.0 {
                newest = (
                    parse(v),
                    format!("{} {} needs {v}", p["name"], p["version"]),
                );
            }
        }
    }
    assert!(
        newest.0 <= parse(msrv),
        "rust-version {msrv} is too old: {}",
        newest.1
    );
}

/// The README's "main job" command, run as written (with the built binary for `cargo run`):
/// it must show what collc is for (the schedule's cost, what it emits and when it is used)
/// and end with what to run next.
#[test]
fn readme_first_command_shows_what_collc_is_for() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let after = readme
        .split_once("Run collc's main job on an example")
        .expect("README has the main-job command")
        .1;
    let cmd = after
        .lines()
        .find_map(|l| l.strip_prefix("cargo run --release -- "))
        .expect("a `cargo run --release --` line");
    let args: Vec<&str> = cmd.split_whitespace().collect();
    let r = collc(&args);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let out = text(&r.stdout);
    for section in [
        "== modelled cost ==",
        "== cost on the network ==",
        "== MSCCL: when the runtime uses this XML ==",
        "== next (FILE is this file) ==",
    ] {
        assert!(out.contains(section), "`{cmd}` lacks {section}:\n{out}");
    }
    let next = out.split_once("== next").expect("next").1;
    assert!(
        next.contains("collc sim FILE") && next.contains("--target msccl"),
        "{next}"
    );
    // The README shows the same output it gets (abridged: each shown line is in it).
    let shown = readme
        .split_once(
            "cargo run --release -- build examples/quickstart.coll --emit report\n```\n\n```text\n",
        )
        .expect("the README shows the report")
        .1
        .split_once("```")
        .expect("closed")
        .0;
    for line in shown.lines().filter(|l| l.trim() != "...") {
        assert!(
            out.contains(line),
            "README shows `{line}`, which the report lacks:\n{out}"
        );
    }
}

/// docs/language.md's table of codes lists every code of src/diag/codes.rs with its title.
#[test]
fn language_reference_lists_every_error_code() {
    let doc = std::fs::read_to_string(root().join("docs/language.md")).expect("language.md");
    let mut expected = String::from("| code | meaning |\n|---|---|\n");
    for c in collc::diag::Code::ALL {
        expected.push_str(&format!("| {} | {} |\n", c.as_str(), c.title()));
    }
    assert!(
        doc.contains(&expected),
        "docs/language.md's table of codes must read:\n{expected}"
    );
}

/// What is built is described as working, and the page on loading the XML into
/// NCCL/RCCL exists, is linked, and names what a user needs.
#[test]
fn docs_say_what_works_and_how_to_run_the_xml() {
    let doc = std::fs::read_to_string(root().join("docs/language.md")).expect("language.md");
    let row = |name: &str| {
        doc.lines()
            .find(|l| l.starts_with(&format!("| `{name}` |")))
            .unwrap_or_else(|| panic!("no row for {name}"))
            .to_string()
    };
    assert!(
        row("packet").contains("packet-level simulation") && !row("packet").contains("planned"),
        "{}",
        row("packet")
    );
    assert!(
        row("p4").contains("P4_16 program") && !row("p4").contains("Not built yet"),
        "{}",
        row("p4")
    );
    // What the docs claim, the tool does: a packet model runs under `collc sim`.
    let d = tmp("packet");
    let f = d.join("p.coll");
    let src = std::fs::read_to_string(root().join("examples/quickstart.coll")).expect("read");
    std::fs::write(&f, format!("{src}\nmodel pkts: packet;\n")).expect("write");
    let r = collc(&["sim", s(&f), "--model", "pkts"]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    assert!(text(&r.stdout).starts_with("packet model on"));
    let page = std::fs::read_to_string(root().join("docs/msccl-runtime.md")).expect("page");
    for needle in [
        "MSCCL_ALGO_DIR",
        "NCCL_MSCCL_ENABLE",
        "RCCL_MSCCL_ENABLE",
        "NCCL_DEBUG=INFO",
        "all_reduce_perf",
        "-g 1",
        "--emit report",
    ] {
        assert!(
            page.contains(needle),
            "docs/msccl-runtime.md lacks {needle}"
        );
    }
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    assert!(readme.contains("docs/msccl-runtime.md"));
    assert!(
        readme.contains("GB of free disk") && readme.contains("minutes"),
        "README: disk and time of the test command"
    );
}

/// `-o` is the output of every command that prints a result: compare too.
#[test]
fn compare_writes_with_dash_o() {
    let d = tmp("compare-o");
    let out = d.join("cmp.csv");
    let args = [
        "compare",
        "examples/quickstart.coll",
        "--sizes",
        "1KiB,1MiB",
        "--format",
        "csv",
    ];
    let shown = collc(&args);
    assert_eq!(shown.status.code(), Some(0), "{}", text(&shown.stderr));
    let mut with_o = args.to_vec();
    with_o.extend(["-o", s(&out)]);
    let r = collc(&with_o);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    assert!(r.stdout.is_empty());
    assert_eq!(std::fs::read(&out).expect("written"), shown.stdout);
}

/// The report's forest section and its MSCCL section both find a fixed `chunks: 4` too few:
/// one E0045, with the MSCCL note.
#[test]
fn one_warning_for_one_cause() {
    // The example's forest with 4 pipelined chunks, where `auto` would take 16.
    let four = std::fs::read_to_string(root().join("examples/dgx_a100_2x8.coll"))
        .expect("example")
        .replace("chunks: 32;", "chunks: 4;");
    let dir = tempfile::tempdir().expect("temp dir");
    let f = dir.path().join("four.coll");
    std::fs::write(&f, four).expect("write");
    let out = collc(&["build", "--emit", "report", f.to_str().expect("utf-8")]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.matches("warning[E0045]").count(), 1, "{err}");
    assert!(err.contains("note: for MSCCL"), "{err}");
    assert!(err.contains("1 warning emitted"), "{err}");
}
