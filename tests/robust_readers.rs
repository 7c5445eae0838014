//! Robustness of the readers of machine-written text, as tests/robust.rs is for `.coll`: real
//! `.ir`, `.goal` and MSCCL `.xml` texts with their numbers replaced by hostile ones (0, the
//! largest values of every integer width, negative numbers) and their lines dropped or cut,
//! through `collc check`'s readers in process. Each must end in diagnostics or success, never a
//! panic, and quickly: the slot limits (E0046) are what keep a few bytes from asking for
//! gigabytes. Bounded so CI stays fast; a longer run by hand is in docs/HACKING.md.

use collc::diag::SourceMap;
use collc::sema::model::{CollectiveKind, Dtype, Family, Model, ReduceOp};
use proptest::prelude::*;

fn program(kind: CollectiveKind, family: Family) -> collc::ir::Program {
    let m = Model::bare(kind, 6, 48, Dtype::F32, ReduceOp::Sum, None, family);
    collc::lower::lower(&m).expect("lowers")
}

fn ir_text() -> String {
    collc::ir::text::print(&program(
        CollectiveKind::Allreduce,
        Family::RecursiveDoubling,
    ))
}

fn goal_text() -> String {
    let p = program(CollectiveKind::Allgather, Family::ring());
    let s = collc::backend::goal::from_ir(&p, &Default::default()).expect("converts");
    collc::backend::goal::write(&s)
}

fn xml_text() -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join("tests/msccl/reference_ring_allreduce_4.xml")).expect("xml")
}

const HOSTILE: &[&str] = &[
    "0",
    "1",
    "-1",
    "4294967295",
    "4294967296",
    "2147483648",
    "100000000",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "99999999999999999999999",
];

/// `text` with its `which`-th number (counting runs of digits) replaced by `by`, every line
/// whose index is in `drop` removed, and cut to `cut` per mille of its length.
fn mutate(text: &str, which: usize, by: &str, drop: &[usize], cut: u16) -> String {
    let mut out = String::new();
    let mut seen = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        if c.is_ascii_digit() {
            let mut run = c.to_string();
            while let Some(&(_, d)) = chars.peek() {
                if !d.is_ascii_digit() {
                    break;
                }
                run.push(d);
                chars.next();
            }
            out.push_str(if seen == which { by } else { &run });
            seen += 1;
        } else {
            out.push(c);
        }
    }
    let kept: Vec<&str> = out
        .lines()
        .enumerate()
        .filter(|(i, _)| !drop.contains(i))
        .map(|(_, l)| l)
        .collect();
    let mut s = kept.join("\n");
    s.push('\n');
    let at = s.len() * usize::from(cut.min(1000)) / 1000;
    let mut at = at.max(1).min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    s.truncate(at);
    s
}

fn check(ext: &str, text: &str) {
    let mut sources = SourceMap::new();
    let id = sources.add(format!("input.{ext}"), text.to_string());
    let start = std::time::Instant::now();
    let diags = match ext {
        "ir" => collc::ir::check_text(id, text),
        "goal" => collc::backend::goal::parse(id, text)
            .err()
            .unwrap_or_default(),
        _ => collc::backend::msccl::check(id, text),
    };
    // Every diagnostic renders, too.
    let _ = collc::diag::render::to_text(&diags, &sources);
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "{ext} took {:?}",
        start.elapsed()
    );
}

fn mutation() -> impl Strategy<Value = (usize, &'static str, Vec<usize>, u16)> {
    (
        0usize..400,
        prop::sample::select(HOSTILE.to_vec()),
        proptest::collection::vec(0usize..200, 0..3),
        prop_oneof![Just(1000u16), 0u16..1000],
    )
}

/// Cases per property: 150 in CI, `COLLC_FUZZ_CASES` for a longer run by hand.
fn cases() -> u32 {
    std::env::var("COLLC_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn mutated_ir_never_panics((which, by, drop, cut) in mutation()) {
        check("ir", &mutate(&ir_text(), which, by, &drop, cut));
    }

    #[test]
    fn mutated_goal_never_panics((which, by, drop, cut) in mutation()) {
        check("goal", &mutate(&goal_text(), which, by, &drop, cut));
    }

    #[test]
    fn mutated_xml_never_panics((which, by, drop, cut) in mutation()) {
        check("xml", &mutate(&xml_text(), which, by, &drop, cut));
    }
}

#[test]
fn the_unmutated_texts_are_accepted() {
    for (ext, text) in [
        ("ir", ir_text()),
        ("goal", goal_text()),
        ("xml", xml_text()),
    ] {
        let mut sources = SourceMap::new();
        let id = sources.add(format!("input.{ext}"), text.clone());
        let diags = match ext {
            "ir" => collc::ir::check_text(id, &text),
            "goal" => collc::backend::goal::parse(id, &text)
                .err()
                .unwrap_or_default(),
            _ => collc::backend::msccl::check(id, &text),
        };
        assert!(diags.is_empty(), "{ext}: {diags:?}");
    }
}
