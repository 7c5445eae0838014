//! GOAL reader and writer: every file in tests/ui/goal/ is named `E0037-...` or `E0038-...`
//! after the first diagnostic collc's reader must give for it, one file per rejection rule;
//! every diagnostic has a help line and a span inside its file, and the rendered text is an
//! insta snapshot (`tests/snapshots/goal__<name>.snap`). Inputs `txt2bin` accepts are
//! accepted. (The GOAL examples of the error pages are checked with all other pages in tests/ui.rs.)

use collc::backend::goal::{self, GoalOptions};
use collc::diag::{Diagnostic, SourceMap, render};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn inputs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("tests/ui/goal"))
        .expect("tests/ui/goal exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "goal"))
        .collect();
    v.sort();
    v
}

fn check(name: &str, text: &str) -> (Vec<Diagnostic>, SourceMap) {
    let mut files = SourceMap::new();
    let id = files.add(name, text);
    let diags = goal::parse(id, text).err().unwrap_or_default();
    (diags, files)
}

#[test]
fn ui_corpus() {
    let files = inputs();
    assert!(files.len() >= 30, "{} inputs", files.len());
    let mut failures = Vec::new();
    for path in files {
        let name = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let rel = format!("tests/ui/goal/{name}.goal");
        let text = std::fs::read_to_string(&path).expect("readable");
        let (diags, files) = check(&rel, &text);
        let shown = render::to_text(&diags, &files);
        let want = name.split('-').next().unwrap_or("");
        match diags.first() {
            None => failures.push(format!("{rel}: accepted, expected {want}")),
            Some(d) if d.code.as_str() != want => failures.push(format!(
                "{rel}: first diagnostic {}, expected {want}\n{shown}",
                d.code
            )),
            Some(_) => {}
        }
        for d in &diags {
            if d.help.as_deref().is_none_or(|h| h.trim().is_empty()) {
                failures.push(format!("{rel}: `{}` has no help line", d.message));
            }
            if d.primary.span.end as usize > text.len() || d.primary.span.start > d.primary.span.end
            {
                failures.push(format!(
                    "{rel}: `{}` has a span outside the file",
                    d.message
                ));
            }
        }
        let snap = std::panic::catch_unwind(|| insta::assert_snapshot!(name.clone(), shown));
        if snap.is_err() {
            failures.push(format!("{rel}: snapshot mismatch"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What txt2bin accepts (the reference's table and the scanner's quirks), collc accepts.
#[test]
fn accepts_what_txt2bin_accepts() {
    let ok = [
        // No labels, `8 b` with a space, no final newline.
        "num_ranks 2\nrank 0 {\nsend 8 b to 1\n}\nrank 1 {\nrecv 8b from 0\n}",
        // Keyword prefixes are fine as labels; comments on their own lines and before ops.
        "num_ranks 1\n// header\nrank 0 {\nsendA: calc 5\n  /* note */ calc 6 cpu 1\nrequires: calc 1\nrequires requires sendA\n}\n",
        // Wildcards, all options, CRLF line ends.
        "num_ranks 2\r\nrank 0 {\r\nsend 8b to 1 tag 7 cpu 1 nic 1\r\n}\r\nrank 1 {\r\nrecv 8b from -1 tag -1 cpu 0 nic 1\r\n}\r\n",
        // `num_ranks` and `rank` on one line, an op right after `{`.
        "num_ranks 1 rank 0 { calc 5\n}\n",
        // irequires.
        "num_ranks 1\nrank 0 {\na: calc 5\nb: calc 6\nb irequires a\n}\n",
    ];
    for text in ok {
        let (d, files) = check("t.goal", text);
        assert!(d.is_empty(), "{text:?}\n{}", render::to_text(&d, &files));
    }
}

#[test]
fn writer_output_is_accepted_and_deterministic() {
    let text = "num_ranks 3\nrank 0 {\nsend 8b to 1 tag 2 cpu 1\nx: recv 8b from 2\nl1: calc 3\nl1 requires x\n}\nrank 1 {\nrecv 8b from 0 tag 2\nsend 8b to 2\n}\nrank 2 {\nrecv 8b from -1\nsend 8b to 0\n}\n";
    let (d, _) = check("t.goal", text);
    assert!(d.is_empty(), "{d:#?}");
    let mut files = SourceMap::new();
    let id = files.add("t.goal", text);
    let s = goal::parse(id, text).expect("parses");
    let written = goal::write(&s);
    // Unlabelled ops get fresh labels that do not clash with `l1`.
    assert!(
        written.contains("l0: send 8b to 1 tag 2 cpu 1\n"),
        "{written}"
    );
    assert!(
        written.contains("l2_: calc 3") || written.contains("l1: calc 3"),
        "{written}"
    );
    let again = goal::parse(id, &written).expect("the writer's output parses");
    assert_eq!(
        again
            .ranks
            .iter()
            .map(|r| &r.ops)
            .map(|o| o.len())
            .sum::<usize>(),
        7
    );
    assert_eq!(goal::write(&again), written);
    assert!(written.starts_with("num_ranks 3\n"));
}

/// The recursive-doubling IR of tests/ir_verify.rs, from text, converted: one send, one recv
/// and one calc per round; copies dropped; tags unique per ordered pair.
#[test]
fn from_ir_maps_ops_deps_and_tags() {
    let ir = "collc-ir 1\nname \"rd\"\ncollective allreduce ranks 2 part_elements 1 chunks_per_part 1 dtype f64 op sum\n\
proc 0 rank scratch 1 {\n  0: copy out[0] <- in[0]\n  1: send in[0] -> 1 tag 0\n  2: recv_reduce out[0] <- 1 tag 0 after 0\n  3: send out[0] -> 1 tag 5 after 2\n}\n\
proc 1 rank scratch 1 {\n  0: recv scratch[0] <- 0 tag 0\n  1: copy out[0] <- in[0]\n  2: send in[0] -> 0 tag 0\n  3: reduce out[0] += scratch[0] after 0, 1\n  4: recv out[0] <- 0 tag 5 after 3\n}\n";
    let parsed = collc::ir::text::parse(collc::diag::FileId(0), ir).expect("IR parses");
    let s = goal::from_ir(&parsed.program, &GoalOptions::with_reduce_ns(100)).expect("converts");
    let text = goal::write(&s);
    let body: Vec<&str> = text.lines().filter(|l| !l.starts_with("//")).collect();
    assert_eq!(
        body,
        [
            "num_ranks 2",
            "",
            "rank 0 {",
            "op1: send 8b to 1 tag 0",
            "op2: recv 8b from 1 tag 0",
            "op2_calc: calc 100",
            "op3: send 8b to 1 tag 1",
            "op3 requires op2_calc",
            "op2_calc requires op2",
            "}",
            "",
            "rank 1 {",
            "op0: recv 8b from 0 tag 0",
            "op2: send 8b to 0 tag 0",
            "op3: calc 100",
            "op4: recv 8b from 0 tag 1",
            "op3 requires op0",
            "op4 requires op3",
            "}",
        ]
    );
}

fn lowered(
    kind: collc::sema::model::CollectiveKind,
    n: usize,
    root: Option<usize>,
    family: collc::sema::model::Family,
) -> (collc::ir::Program, collc::ir::verify::Proof) {
    use collc::sema::model::{Dtype, Model, ReduceOp};
    let m = Model::bare(
        kind,
        n,
        3 * n as u64,
        Dtype::F32,
        ReduceOp::Sum,
        root,
        family,
    );
    collc::lower::lower_and_verify(&m).unwrap_or_else(|d| panic!("{d:#?}"))
}

/// `from_verified` leaves out the run check on the claim that the GOAL of a verified program
/// runs to the end by construction: the full validator accepts what it writes, which is what
/// `from_ir` writes, for every lowering family and collective, with and without copies.
#[test]
fn verified_programs_convert_to_schedules_that_run() {
    use collc::sema::model::{AutoOr, CollectiveKind as K, Family};
    let rm = |list: &str| Family::RecursiveMultiplying {
        stages: AutoOr::Fixed(
            list.split(',')
                .map(|x| {
                    collc::sema::schedule::decode_stage(x.trim())
                        .expect("a stage")
                        .expect("valid")
                })
                .collect(),
        ),
        model: None,
    };
    let mut cases = Vec::new();
    for n in 2..=24 {
        cases.push((K::Allreduce, n, None, Family::RecursiveDoubling));
        cases.push((K::Allreduce, n, None, Family::ring()));
    }
    for (n, list) in [
        (16, "a4, a4"),
        (7, "c6m2, a2, a2, e6m2"),
        (7, "m1g2a3, n1g2a2"),
        (37, "m5g4a2, a4, n5g4a4"),
        (16, "c6m2, m1g1a3, n1g1a4, e6m2"),
        (96, "a8, a3, a4"),
    ] {
        cases.push((K::Allreduce, n, None, rm(list)));
    }
    for n in 2..=10 {
        cases.push((K::Allgather, n, None, Family::ring()));
        cases.push((K::ReduceScatter, n, None, Family::ring()));
        for root in [0, n - 1] {
            cases.push((K::Broadcast, n, Some(root), Family::Binomial));
            cases.push((K::Reduce, n, Some(root), Family::Binomial));
        }
    }
    cases.push((K::Barrier, 5, None, Family::RecursiveDoubling));
    let with_copies = GoalOptions {
        copy_per_byte: goal::ns(1),
        ..GoalOptions::with_reduce_ns(7)
    };
    for (kind, n, root, family) in cases {
        let what = format!("{kind:?} on {n} ranks by {family:?}");
        let (p, proof) = lowered(kind, n, root, family);
        for opts in [GoalOptions::default(), with_copies.clone()] {
            let s = goal::from_verified(&p, &proof, &opts).expect(&what);
            assert_eq!(goal::validate(&s), Vec::new(), "{what}");
            // The streaming writer gives the same bytes, whatever its windows.
            let text = goal::write(&s);
            for window in [1, 50, 1 << 18] {
                let mut streamed = Vec::new();
                goal::write_verified_in_windows(&p, &proof, &opts, &mut streamed, window)
                    .expect(&what);
                assert!(
                    streamed == text.as_bytes(),
                    "{what}, windows of {window} ops"
                );
            }
            // And so does writing while proving.
            let mut beside = Vec::new();
            let again = goal::verify_and_write(&p, &opts, &mut beside).expect(&what);
            assert_eq!(again, proof, "{what}");
            assert!(beside == text.as_bytes(), "{what}, written while proving");
            assert_eq!(Ok(s), goal::from_ir(&p, &opts), "{what}");
        }
    }
    // A proof of another program is refused.
    let (p, _) = lowered(K::Allreduce, 4, None, Family::ring());
    let (_, other) = lowered(K::Allreduce, 8, None, Family::ring());
    assert!(goal::from_verified(&p, &other, &GoalOptions::default()).is_err());
    let refused = goal::write_verified(&p, &other, &GoalOptions::default(), &mut Vec::new());
    assert!(matches!(refused, Err(goal::WriteError::Goal(_))));
    // A program that is not proved is refused with the verifier's findings, whatever was
    // written meanwhile: here a receive becomes a copy, so a send is never received.
    let mut broken = p.clone();
    let recv = broken.procs[1]
        .ops
        .iter()
        .position(|o| matches!(o.kind, collc::ir::OpKind::Recv { .. }))
        .expect("a receive");
    broken.procs[1].ops[recv].kind = collc::ir::OpKind::Copy {
        dst: collc::ir::Slice::one(collc::ir::Buf::Output, 0),
        src: collc::ir::Slice::one(collc::ir::Buf::Input, 0),
    };
    match goal::verify_and_write(&broken, &GoalOptions::default(), &mut Vec::new()) {
        Err(goal::WriteError::Refuted(findings)) => assert!(!findings.is_empty()),
        other => panic!("expected the verifier's findings, got {other:?}"),
    }
}
