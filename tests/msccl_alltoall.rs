//! All-to-all as MSCCL XML: every all-to-all family (pairwise shifted and concurrent, Bruck
//! radix 2 and 3, hierarchical, the flow-routed mcf) built for 2 to 16 ranks over two boxes
//! and for two DGX A100 boxes writes `coll="alltoall"` out of place with both buffers `nchunksperloop` chunks (a
//! whole number per block), passes the validator, reads back and is proved an all-to-all; the
//! executor picks it (the call's count per peer a multiple of `nchunksperloop`, msccl-xml.md
//! section 1.4) at the declared size and every nccl-tests size of its window, or E0054 names
//! the sizes where it does not; at power-of-two rank counts and sizes, nowhere. Refined to
//! finer chunks (what `collc build` does for an unselectable count) they stay proved; in place
//! is refused with a code; the 4-rank pairwise XML is a snapshot.

use collc::backend::msccl::{self, Algo, Options, selectable};
use collc::diag::{Code, SourceMap, render};
use collc::sema::model::Model;

/// `n` GPUs in two boxes (NVLink-like links to a box switch, a slower rail to a core switch).
fn two_boxes(n: usize) -> String {
    let mut s =
        format!("topology t {{\n    compute gpu[{n}];\n    switch box[2];\n    switch core;\n");
    for g in 0..n {
        let b = usize::from(g >= n / 2);
        s.push_str(&format!(
            "    link gpu[{g}] <-> box[{b}] : 300 GB/s;\n    link gpu[{g}] <-> core : 25 GB/s;\n"
        ));
    }
    s.push_str("}\n");
    s
}

fn families() -> [&'static str; 6] {
    [
        "mcf;",
        "pairwise { concurrent: false; }",
        "pairwise { concurrent: true; }",
        "bruck { radix: 2; }",
        "bruck { radix: 3; }",
        "hierarchical;",
    ]
}

fn model(text: &str) -> Model {
    let mut files = SourceMap::new();
    let id = files.add("a2a.coll", text);
    let c = collc::sema::check(&mut files, id, &collc::sema::Options::default());
    match c.model.filter(|_| c.diagnostics.is_empty()) {
        Some(m) => m,
        None => panic!("{text}\n{}", render::to_text(&c.diagnostics, &files)),
    }
}

/// Whether the executor picks `a` for `ncclAllToAll` of `count` floats per peer.
fn picks(a: &Algo, count: u64) -> bool {
    let bytes = count * 4 * a.ngpus as u64;
    count > 0
        && count % a.nchunksperloop as u64 == 0
        && bytes >= a.min_bytes as u64
        && (a.max_bytes == 0 || bytes <= a.max_bytes as u64)
}

/// Builds `text` (an alltoall of `bytes` per rank over `n` ranks) for MSCCL and checks the XML.
fn built(text: &str, n: u64, bytes: u64) {
    let m = model(text);
    let e = match msccl::build(&m, &Options::from_model(&m)) {
        Ok(e) => e,
        Err(d) => panic!(
            "{text}\n{:?}",
            d.iter().map(|d| &d.message).collect::<Vec<_>>()
        ),
    };
    // The validator's full proof, on the text as written.
    let proof = msccl::validate(&e.text, None, msccl::limits::MAX_STEPS)
        .unwrap_or_else(|p| panic!("{text}\n{p:?}"));
    assert!(proof.messages > 0, "{text}");
    let (a, _) = msccl::read::read(&e.text).expect("reads back");
    assert_eq!(a.coll, "alltoall", "{text}");
    assert_eq!(a.ngpus as u64, n, "{text}");
    assert!(!a.inplace && a.outofplace, "{text}");
    assert_eq!(a.nchunksperloop as u64 % n, 0, "{text}: whole blocks");
    for g in &a.gpus {
        assert_eq!(
            (g.i_chunks, g.o_chunks),
            (a.nchunksperloop, a.nchunksperloop),
            "{text}"
        );
    }
    assert!(
        msccl::rules::check(&a, msccl::limits::MAX_STEPS).is_empty(),
        "{text}"
    );
    // Where the executor picks it.
    let top = selectable::OPEN_TOP.max(bytes);
    let (_, no) = selectable::picked(&a, 4, top);
    let skipped: Vec<u64> = no
        .into_iter()
        .filter(|&s| s >= a.min_bytes as u64 && s / 4 / n > 0)
        .collect();
    let declared = picks(&a, bytes / 4 / n);
    let warning = e
        .warnings
        .iter()
        .find(|w| w.code == Code::MscclUnselectable);
    match warning {
        None => assert!(
            declared && skipped.is_empty(),
            "{text}: no E0054, but skipped {} (declared picked: {declared})",
            selectable::show_sizes(&skipped)
        ),
        Some(w) => {
            assert!(
                !skipped.is_empty() || !declared,
                "{text}: needless {}",
                w.message
            );
            if !skipped.is_empty() {
                assert!(
                    w.message.contains(&selectable::show_sizes(&skipped)),
                    "{text}: {}",
                    w.message
                );
            }
        }
    }
    if n.is_power_of_two() && bytes.is_power_of_two() {
        assert!(declared && warning.is_none(), "{text}");
        // From one loop of chunks on (count per peer = nchunksperloop), every size.
        let one_loop = a.nchunksperloop as u64 * n * 4;
        assert!(a.min_bytes as u64 <= one_loop.max(bytes), "{text}");
        assert!(selectable::picks_at(&a, 4, bytes), "{text}");
    }
}

#[test]
fn every_family_builds_a_proved_selectable_xml_for_2_to_16_ranks() {
    for n in 2..=16u64 {
        for f in families() {
            // 4096 floats per peer: a power-of-two size when the rank count is one.
            let count = n * n * 1024;
            let text = format!(
                "{}collective alltoall {{ count: {count}; dtype: f32; }}\nschedule {f}\n",
                two_boxes(n as usize)
            );
            built(&text, n, count * 4);
        }
    }
}

#[test]
fn two_dgx_a100_boxes() {
    for f in families() {
        for size in ["1 MiB", "64 MiB"] {
            let text = format!(
                "import dgx_a100;\ntopology a = dgx_a100(clusters: 2);\ncollective alltoall {{ size: {size}; dtype: f32; }}\nschedule {f}\n"
            );
            let bytes = if size == "1 MiB" { 1 << 20 } else { 64 << 20 };
            built(&text, 16, bytes);
        }
    }
}

#[test]
fn in_place_is_refused_with_a_code() {
    let text = format!(
        "{}collective alltoall {{ count: 64; dtype: f32; }}\nschedule pairwise;\n",
        two_boxes(4)
    );
    let m = model(&text);
    let opts = Options {
        inplace: true,
        ..Options::from_model(&m)
    };
    let d = msccl::build(&m, &opts).expect_err("in place");
    assert_eq!(d[0].code, Code::TargetUnsupported, "{}", d[0].message);
    assert!(
        d[0].message.contains("in-place all-to-all"),
        "{}",
        d[0].message
    );
}

#[test]
fn four_rank_pairwise_xml() {
    let text = format!(
        "{}collective alltoall {{ size: 1 MiB; dtype: f32; }}\nschedule pairwise;\n",
        two_boxes(4)
    );
    let m = model(&text);
    let e = msccl::build(&m, &Options::from_model(&m)).expect("builds");
    assert!(e.warnings.is_empty());
    insta::assert_snapshot!("alltoall_pairwise_4", e.text);
}

/// The refinement `collc build` applies to reach a selectable chunk count
/// (`collc::ir::refine`) keeps every all-to-all family an all-to-all: refined to 2, 3 and 4
/// chunks per block, each still proves, lowers to an XML the validator proves, whose
/// `nchunksperloop` is ranks x chunks.
#[test]
fn refined_alltoalls_stay_proved() {
    for n in [3u64, 4, 6] {
        for f in families() {
            let text = format!(
                "{}collective alltoall {{ count: {}; dtype: f32; }}\nschedule {f}\n",
                two_boxes(n as usize),
                n * n * 1024
            );
            let m = model(&text);
            let (p, _) = collc::lower::lower_and_verify(&m)
                .unwrap_or_else(|d| panic!("{text}\n{}", d[0].message));
            for c in [2, 3, 4] {
                let r = collc::ir::refine::refine(&p, c * p.spec.chunks_per_part);
                collc::ir::verify::verify(&r).unwrap_or_else(|e| panic!("{text} x{c}: {e:?}"));
                let e = msccl::emit(&r, &Options::default())
                    .unwrap_or_else(|e| panic!("{text} x{c}: {e:?}"));
                assert_eq!(
                    e.algo.nchunksperloop as u64,
                    n * u64::from(r.spec.chunks_per_part),
                    "{text} x{c}"
                );
            }
        }
    }
}
