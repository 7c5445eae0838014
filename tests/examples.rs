//! Every file in examples/ checks cleanly, and its elaborated model (`--emit model`) is an insta
//! snapshot. Building twice gives the same bytes (deterministic output).

use collc::diag::{SourceMap, render};
use collc::sema::{Options, check, print::model_text};
use std::path::Path;

fn examples() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "coll"))
        .collect();
    files.sort();
    files
}

fn model_of(path: &Path) -> String {
    let rel = format!(
        "examples/{}",
        path.file_name().expect("file name").to_string_lossy()
    );
    let text = std::fs::read_to_string(path).expect("readable example");
    let mut sources = SourceMap::new();
    let id = sources.add(rel.clone(), text);
    let c = check(&mut sources, id, &Options::default());
    assert!(
        c.diagnostics.is_empty(),
        "{rel} has diagnostics:\n{}",
        render::to_text(&c.diagnostics, &sources)
    );
    model_text(&c.model.expect("a model when there are no diagnostics"))
}

#[test]
fn every_example_checks_and_its_model_is_snapshotted() {
    let files = examples();
    assert!(!files.is_empty(), "examples/ has no .coll files");
    for path in files {
        let stem = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .to_string();
        let text = model_of(&path);
        // Very large generated models (e.g. the 1024-host fat tree) are summarised by their
        // header lines; the full text is still checked for determinism below.
        let shown = if text.lines().count() > 2000 {
            let head: Vec<&str> = text.lines().filter(|l| !l.starts_with("  ")).collect();
            format!("(large model: top-level lines only)\n{}\n", head.join("\n"))
        } else {
            text.clone()
        };
        insta::assert_snapshot!(format!("model_{stem}"), shown);
        assert_eq!(text, model_of(&path), "{stem}: output differs between runs");
    }
}

#[test]
fn readme_quickstart_is_the_example_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let example = std::fs::read_to_string(root.join("examples/quickstart.coll")).expect("example");
    let start = readme
        .find("```coll\n")
        .expect("a coll block in the README")
        + "```coll\n".len();
    let end = start + readme[start..].find("```").expect("closed block");
    assert_eq!(
        &readme[start..end],
        example,
        "README's first example differs from examples/quickstart.coll"
    );
}

#[test]
fn examples_and_stdlib_are_formatted() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in ["examples", "stdlib"] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .expect("dir")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "coll"))
            .collect();
        paths.sort();
        for p in paths {
            let text = std::fs::read_to_string(&p).expect("readable");
            let mut sources = SourceMap::new();
            let id = sources.add(p.display().to_string(), text.clone());
            let formatted = collc::fmt::format_source(id, &text).expect("parses");
            assert_eq!(
                formatted,
                text,
                "{} is not formatted; run `collc fmt {}`",
                p.display(),
                p.display()
            );
        }
    }
}

/// Programs with more ops than this get a summary snapshot instead of their full IR and GOAL.
const MAX_SNAPSHOT_OPS: usize = 2000;

/// The header lines of IR text and the program's size.
fn summary(ir: &str, p: &collc::ir::Program) -> String {
    let head: Vec<&str> = ir.lines().take(3).collect();
    let messages = p
        .procs
        .iter()
        .flat_map(|x| &x.ops)
        .filter(|o| matches!(o.kind, collc::ir::OpKind::Send { .. }))
        .count();
    format!(
        "(large program: header and size only)\n{}\nprocesses {}, ops {}, messages {}\n",
        head.join("\n"),
        p.procs.len(),
        p.op_count(),
        messages
    )
}

/// For every example whose schedule collc can lower today: the IR text and the GOAL output are
/// snapshots, the IR verifies, and the IR text parses back to the same program.
#[test]
fn examples_lower_to_ir_and_goal() {
    let mut lowered = 0;
    for path in examples() {
        let stem = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .to_string();
        let rel = format!("examples/{stem}.coll");
        let text = std::fs::read_to_string(&path).expect("readable example");
        let mut sources = SourceMap::new();
        let id = sources.add(rel.clone(), text);
        let model = check(&mut sources, id, &Options::default())
            .model
            .expect("example checks");
        // Examples over 64 ranks (the 1,024-host fat trees) are checked above, not lowered here:
        // benches/ covers their solving and lowering.
        if model
            .collective
            .as_ref()
            .is_some_and(|c| c.ranks.len() > 64)
        {
            continue;
        }
        let program = match collc::lower::lower_and_verify(&model) {
            Ok((p, _)) => p,
            Err(d)
                if d.iter()
                    .all(|x| x.code == collc::diag::Code::LowerUnsupported) =>
            {
                continue;
            }
            Err(d) => panic!("{rel}: {}", render::to_text(&d, &sources)),
        };
        lowered += 1;
        let ir = collc::ir::text::print(&program);
        let mut s2 = SourceMap::new();
        let f = s2.add("x.ir", ir.clone());
        let back =
            collc::ir::text::parse(f, &ir).unwrap_or_else(|d| panic!("{rel}: {}", d.message));
        assert_eq!(back.program, program, "{rel}: IR text does not round-trip");
        let goal = collc::backend::goal::from_ir(&program, &Default::default())
            .unwrap_or_else(|e| panic!("{rel}: {e:?}"));
        let goal_text = collc::backend::goal::write(&goal);
        let g = s2.add("x.goal", goal_text.clone());
        collc::backend::goal::parse(g, &goal_text)
            .unwrap_or_else(|d| panic!("{rel}: {}", render::to_text(&d, &s2)));
        // Large programs (many ranks, or forests with many trees and chunks) are summarised by
        // their header and size; they are still verified, round-tripped and parsed above.
        if program.spec.ranks > 64 || program.op_count() > MAX_SNAPSHOT_OPS {
            insta::assert_snapshot!(format!("ir_{stem}"), summary(&ir, &program));
            continue;
        }
        insta::assert_snapshot!(format!("ir_{stem}"), ir);
        insta::assert_snapshot!(format!("goal_{stem}"), goal_text);
    }
    assert!(lowered >= 4, "only {lowered} examples lower");
}
