//! `collc check FILE.xml` on correct XMLs that collc did not write (issue 37): hand-written
//! schedules whose scratch (and output) slots hold chunks in any layout pass with no diagnostic;
//! broken variants of them are still E0041 (a missing reduce, a chunk at the wrong output slot,
//! a dependency cycle, two different chunks combined); ranks that combine in different orders
//! are one E0052 warning, a collective collc cannot execute (alltoallv, gather) an E0053
//! warning, both exit 0 from the command line and 1 under `--strict`. All-to-all XMLs are
//! executed and proved: the public ones of msccl-scheduler and RCCL pass, and broken variants of
//! them are E0041.
//!
//! The XMLs are in tests/msccl/check/, each a schedule worked out by hand under the executor's
//! semantics (src/backend/msccl/exec.rs's module doc), and in tests/msccl/check/public/, copies
//! of published all-to-all XMLs (its README names their repositories and paths).

use collc::backend::msccl;
use collc::diag::{Code, Diagnostic, Severity, SourceMap, render};
use collc::ir::{Buf, OpKind, Program, Slice, Spec, verify};
use collc::sema::model::{CollectiveKind, Dtype, ReduceOp};
use std::path::Path;
use std::process::Command;

mod msccl_support;
use msccl_support::edit;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn xml(name: &str) -> String {
    let path = root().join("tests/msccl/check").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn check(text: &str) -> Vec<Diagnostic> {
    let mut files = SourceMap::new();
    let id = files.add("x.xml", text);
    msccl::check(id, text)
}

fn shown(text: &str, d: &[Diagnostic]) -> String {
    let mut files = SourceMap::new();
    files.add("x.xml", text);
    render::to_text(d, &files)
}

const CORRECT: &[&str] = &[
    // In place, both ranks receive the peer's chunk into s[0] (chunk 0 on rank 0, chunk 1 on
    // rank 1) and reduce it into their own.
    "allreduce_2_scratch0_inplace.xml",
    // A ring that keeps the chunks it forwards in scratch at odd offsets permuted by rank.
    "allgather_4_scratch_permuted.xml",
    // A ring whose partial sums wait in scratch at odd offsets (chunk 0 at an odd slot).
    "reducescatter_3_scratch_partials.xml",
    // A ring with `rrs` on the way, the reduced chunk and the forwarded one kept in scratch
    // slots of other chunks before the final copies.
    "allreduce_3_ring_rrs_scratch.xml",
    // The peer's chunks land at the wrong output slots first, then are copied where they belong.
    "allgather_2_output_detour.xml",
    // Each rank sends the peer's block, receives its own from the peer and copies the block it
    // keeps.
    "alltoall_2.xml",
];

/// Published all-to-all XMLs (tests/msccl/check/public/README.md), with the nccl-tests sizes
/// (floats) at which the executor picks each: its per-peer count a multiple of
/// `nchunksperloop`, its bytes inside `minBytes .. maxBytes`.
const PUBLIC: &[(&str, &str)] = &[
    // nchunksperloop 16, maxBytes 40959: a count of 16 floats per peer is 512 B in all.
    (
        "msccl-scheduler_ndv4_a2a2ll.xml",
        "the runtime picks it at 512 B .. 32 KiB, not at 8 B .. 256 B inside its window",
    ),
    // nchunksperloop 32 from 40960 B to 266240 B.
    (
        "msccl-scheduler_ndv4_a2a4ll.xml",
        "the runtime picks it at 64 KiB .. 256 KiB",
    ),
    // nchunksperloop 8 up to 9216 B.
    (
        "rccl_alltoall-8n-0-9kb.xml",
        "the runtime picks it at 256 B .. 8 KiB, not at 8 B .. 128 B inside its window",
    ),
    // nchunksperloop 16 from 9217 B to 194560 B.
    (
        "rccl_alltoall-8n-9kb-190kb.xml",
        "the runtime picks it at 16 KiB .. 128 KiB",
    ),
];

#[test]
fn correct_xmls_in_any_layout_pass() {
    for name in CORRECT {
        let text = xml(name);
        let d = check(&text);
        assert!(d.is_empty(), "{name}:\n{}", shown(&text, &d));
        // The full proof that `collc build` demands of its own XML holds too.
        msccl::validate(&text, None, msccl::limits::MAX_STEPS)
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    }
}

/// The layout the XMLs use is one the strict IR refuses: the same moves in an IR program are
/// E0032 unless `any_layout` is set, and then only execution judges them.
#[test]
fn any_layout_frees_the_slots_and_only_the_flag_does() {
    let spec = Spec {
        kind: CollectiveKind::Allreduce,
        ranks: 2,
        part_elements: 2,
        chunks_per_part: 2,
        dtype: Dtype::F32,
        op: ReduceOp::Sum,
        root: None,
    };
    // allreduce_2_scratch0_inplace.xml out of place: rank r owns chunk r, receives the peer's
    // copy of it into scratch[0], reduces, and sends the result back.
    let mut p = Program::new("scratch0", spec);
    for r in 0..2u32 {
        let (me, peer) = (r, 1 - r);
        let s0 = Slice::one(Buf::Scratch, 0);
        p.procs[r as usize].scratch = 1;
        let send = |src| OpKind::Send { peer, src, tag: 0 };
        let a = p.push(r, send(Slice::one(Buf::Input, peer)), Vec::new());
        let b = p.push(
            r,
            OpKind::Recv {
                peer,
                dst: s0,
                tag: 0,
            },
            vec![a],
        );
        let c = p.push(
            r,
            OpKind::Copy {
                dst: Slice::one(Buf::Output, me),
                src: Slice::one(Buf::Input, me),
            },
            vec![b],
        );
        let d = p.push(
            r,
            OpKind::Reduce {
                dst: Slice::one(Buf::Output, me),
                src: s0,
            },
            vec![c],
        );
        let e = p.push(r, send(Slice::one(Buf::Output, me)), vec![d]);
        p.push(
            r,
            OpKind::Recv {
                peer,
                dst: Slice::one(Buf::Output, peer),
                tag: 0,
            },
            vec![e],
        );
    }
    let strict = verify::verify(&p).expect_err("rank 1 keeps chunk 1 in scratch[0]");
    assert!(
        strict.len() == 1
            && strict[0].code == Code::IrInvalid
            && strict[0].proc == 1
            && strict[0]
                .message
                .contains("moves scratch[0] into out[1], which hold different chunks"),
        "{strict:#?}"
    );
    p.any_layout = true;
    verify::verify(&p).unwrap_or_else(|f| panic!("{f:#?}"));
    // Free slots, but execution still follows chunks: reducing chunk 0 into chunk 1 is wrong.
    let OpKind::Reduce { src, .. } = &mut p.procs[1].ops[3].kind else {
        panic!("op 3 reduces");
    };
    *src = Slice::one(Buf::Input, 0);
    let f = verify::verify(&p).expect_err("chunks combined");
    assert_eq!(f[0].code, Code::IrWrongResult, "{f:#?}");
    assert!(
        f[0].message.contains("combines chunk 1 with chunk 0"),
        "{f:#?}"
    );
    // Moves still need as many slots on both sides.
    let mut q = p.clone();
    q.procs[1].ops[3].kind = OpKind::Reduce {
        dst: Slice::new(Buf::Output, 0, 2),
        src: Slice::one(Buf::Scratch, 0),
    };
    let f = verify::verify(&q).expect_err("sizes differ");
    assert!(
        f[0].code == Code::IrInvalid && f[0].message.contains("different numbers of slots"),
        "{f:#?}"
    );
}

fn expect_e0041(name: &str, text: &str, needle: &str) {
    let d = check(text);
    let all = shown(text, &d);
    assert!(!d.is_empty(), "{name}: accepted");
    assert_eq!(d[0].code, Code::MscclInvalid, "{name}:\n{all}");
    assert!(
        d.iter().all(|x| x.severity == Severity::Error),
        "{name}:\n{all}"
    );
    assert!(
        d.iter().any(|x| x.message.contains(needle)),
        "{name}: no message with `{needle}`:\n{all}"
    );
}

#[test]
fn broken_variants_are_still_e0041() {
    let scratch0 = xml("allreduce_2_scratch0_inplace.xml");
    let detour = xml("allgather_2_output_detour.xml");
    let ring = xml("allreduce_3_ring_rrs_scratch.xml");
    // Rank 1 copies the peer's chunk over its own instead of adding it.
    expect_e0041(
        "missing reduce",
        &edit(
            &scratch0,
            "<gpu id=\"1\"",
            "type=\"re\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"1\"",
            "type=\"cpy\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"1\"",
        ),
        "lacks the contribution of rank 1",
    );
    // The same in the ring: the last rank of each chunk's chain receives without reducing.
    expect_e0041(
        "missing reduce (ring)",
        &edit(&ring, "<gpu id=\"2\"", "type=\"rrcs\"", "type=\"rcs\""),
        "wrong result",
    );
    // Rank 0 swaps the final copies of the peer's two chunks.
    let swapped = edit(
        &edit(
            &detour,
            "<gpu id=\"0\"",
            "srcoff=\"1\" dstbuf=\"o\" dstoff=\"2\"",
            "srcoff=\"1\" dstbuf=\"o\" dstoff=\"3\"",
        ),
        "<gpu id=\"0\"",
        "srcoff=\"0\" dstbuf=\"o\" dstoff=\"3\"",
        "srcoff=\"0\" dstbuf=\"o\" dstoff=\"2\"",
    );
    expect_e0041(
        "wrong offset",
        &swapped,
        "out[2] holds chunk 1 of the input, but should hold chunk 0",
    );
    // Rank 0 adds the peer's chunk 0 (in s[0]) to its own chunk 1.
    expect_e0041(
        "two chunks combined",
        &edit(
            &scratch0,
            "<gpu id=\"0\"",
            "type=\"re\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\"",
            "type=\"re\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"1\"",
        ),
        "combines chunk 1 with chunk 0",
    );
    // Rank 1 of the one-step allreduce: tb 0's receive waits on tb 2's first reduction,
    // which waits on that receive.
    let orders = xml("allreduce_3_one_step_orders.xml");
    let cycle = edit(
        &edit(
            &orders,
            "<gpu id=\"1\"",
            "type=\"r\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"s\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\"",
            "type=\"r\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"s\" dstoff=\"0\" cnt=\"1\" depid=\"2\" deps=\"1\"",
        ),
        "<gpu id=\"1\"",
        "type=\"re\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"0\" deps=\"1\" hasdep=\"0\"",
        "type=\"re\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"0\" deps=\"1\" hasdep=\"1\"",
    );
    expect_e0041("dependency cycle", &cycle, "hangs");
}

#[test]
fn rrs_temporaries_are_per_thread_block() {
    let ring = xml("allreduce_3_ring_rrs_scratch.xml");
    let d = check(&ring);
    assert!(d.is_empty(), "{}", shown(&ring, &d));
    // The E0046 bound counts the temporaries: 3 gpus of 2 buffers of 3 chunks, 2 scratch
    // slots and 1 temporary each is 27 slots.
    let mut files = SourceMap::new();
    let id = files.add("x.xml", ring.as_str());
    assert!(msccl::check_with(id, &ring, 27, false).is_empty());
    let d = msccl::check_with(id, &ring, 26, false);
    assert_eq!(
        d.first().map(|d| d.code),
        Some(Code::ProgramTooLarge),
        "{d:#?}"
    );
    // Two `rrs` steps of two thread blocks at once, from i[0] and s[0]: one temporary for
    // both (one per source offset) would be a data race that is not in the XML.
    let text = two_channel_rrs();
    let d = check(&text);
    assert!(d.is_empty(), "{}", shown(&text, &d));
    // The XML is what the comment says: make rank 1's second block read i[0] and the
    // chunks are combined wrongly, so it is executed.
    expect_e0041(
        "rrs from the wrong chunk",
        &edit(
            &text,
            "<tb id=\"1\" send=\"2\"",
            "type=\"rrs\" srcbuf=\"s\"",
            "type=\"rrs\" srcbuf=\"i\"",
        ),
        "combines chunk",
    );
}

/// A 3-rank chain allreduce of 2 chunks, chunk c on channel c: rank 0 sends, rank 1 reduces
/// and sends on (`rrs`, chunk 0 from i[0], chunk 1 from s[0] where it copied i[1]) in two
/// thread blocks that run at once, rank 2 adds its own and sends the result back through
/// rank 1 (`rcs`) to rank 0.
fn two_channel_rrs() -> String {
    let h = "depid=\"-1\" deps=\"-1\" hasdep=\"0\"";
    let step = |s: u32, ty: &str, (sb, so): (&str, u32), (db, d): (&str, u32)| {
        format!(
            "      <step s=\"{s}\" type=\"{ty}\" srcbuf=\"{sb}\" srcoff=\"{so}\" dstbuf=\"{db}\" dstoff=\"{d}\" cnt=\"1\" {h}/>\n"
        )
    };
    let tb = |id: u32, send: u32, recv: u32, chan: u32, steps: &[String]| {
        format!(
            "    <tb id=\"{id}\" send=\"{send}\" recv=\"{recv}\" chan=\"{chan}\">\n{}    </tb>\n",
            steps.concat()
        )
    };
    let mut x = String::from(
        "<algo name=\"chain\" proto=\"Simple\" nchannels=\"2\" nchunksperloop=\"2\" ngpus=\"3\" coll=\"allreduce\" inplace=\"0\" outofplace=\"1\" minBytes=\"0\" maxBytes=\"0\">\n",
    );
    x.push_str("  <gpu id=\"0\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"0\">\n");
    for c in 0..2 {
        let steps = [
            step(0, "s", ("i", c), ("i", c)),
            step(1, "r", ("o", c), ("o", c)),
        ];
        x.push_str(&tb(c, 1, 1, c, &steps));
    }
    x.push_str("  </gpu>\n  <gpu id=\"1\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"1\">\n");
    x.push_str(&tb(0, 2, 0, 0, &[step(0, "rrs", ("i", 0), ("o", 0))]));
    let staged = [
        step(0, "cpy", ("i", 1), ("s", 0)),
        step(1, "rrs", ("s", 0), ("o", 1)),
    ];
    x.push_str(&tb(1, 2, 0, 1, &staged));
    for c in 0..2 {
        x.push_str(&tb(c + 2, 0, 2, c, &[step(0, "rcs", ("o", c), ("o", c))]));
    }
    x.push_str("  </gpu>\n  <gpu id=\"2\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"0\">\n");
    for c in 0..2 {
        let steps = [
            step(0, "rrc", ("i", c), ("o", c)),
            step(1, "s", ("o", c), ("o", c)),
        ];
        x.push_str(&tb(c, 1, 1, c, &steps));
    }
    x.push_str("  </gpu>\n</algo>\n");
    x
}

#[test]
fn different_orders_are_one_e0052_warning() {
    let text = xml("allreduce_3_one_step_orders.xml");
    let d = check(&text);
    let all = shown(&text, &d);
    assert_eq!(d.len(), 1, "{all}");
    assert_eq!(d[0].code, Code::MscclOrder, "{all}");
    assert_eq!(d[0].severity, Severity::Warning, "{all}");
    assert!(
        d[0].message.starts_with("correct (out of place)")
            && d[0].message.contains("last bits")
            && d[0].message.contains("rank 1 combines out[0]"),
        "{all}"
    );
    // At gpu 1's element.
    let at = d[0].primary.span.start as usize;
    assert!(text[at..].starts_with("<gpu id=\"1\""), "{all}");
    assert!(d[0].help.as_deref().is_some_and(|h| h.contains("--strict")));
    // Strict: the same, as an error; and `collc build`'s validation refuses it.
    let mut files = SourceMap::new();
    let id = files.add("x.xml", text.as_str());
    let strict = msccl::check_with(id, &text, u64::MAX, true);
    assert_eq!(strict.len(), 1);
    assert_eq!(
        (strict[0].code, strict[0].severity),
        (Code::MscclOrder, Severity::Error)
    );
    let e = msccl::validate(&text, None, msccl::limits::MAX_STEPS).expect_err("not proved");
    assert_eq!(e[0].0.code, Code::MscclOrder);
    // Rank r's s[0] holds rank r+1's input and s[1] rank r+2's. Rank 1 adding s[1] (rank 0)
    // first builds ((r0 + r1) + r2) as rank 0 does, and only rank 2 differs (it starts from
    // its own input, so no order of its two additions matches).
    let first =
        "type=\"re\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"0\"";
    let second =
        "type=\"re\" srcbuf=\"s\" srcoff=\"1\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"1\"";
    let swap = |t: &str, gpu: &str| {
        let t = edit(t, gpu, first, "FIRST");
        let t = edit(&t, gpu, second, first);
        edit(&t, gpu, "FIRST", second)
    };
    let one = swap(&text, "<gpu id=\"1\"");
    let d = check(&one);
    assert!(
        d.len() == 1 && d[0].message.contains("rank 2 combines") && !d[0].message.contains("more"),
        "only rank 2 is left: {}",
        shown(&one, &d)
    );
    // Every rank starting from rank 0's input and adding rank 1's, then rank 2's (from its
    // own input or a scratch slot): proved.
    let same = xml("allreduce_3_one_step_same_order.xml");
    let d = check(&same);
    assert!(d.is_empty(), "{}", shown(&same, &d));
    msccl::validate(&same, None, msccl::limits::MAX_STEPS).expect("proved");
    // A wrong result alongside the order difference is an error, never a warning.
    let wrong = edit(
        &text,
        "<gpu id=\"2\"",
        "type=\"re\" srcbuf=\"s\" srcoff=\"1\"",
        "type=\"cpy\" srcbuf=\"s\" srcoff=\"1\"",
    );
    expect_e0041("order and a wrong result", &wrong, "wrong result");
}

/// msccl-tools' `allreduce_1step` pattern on `n` ranks, as allreduce_3_one_step_orders.xml:
/// rank r receives rank r+k's input into s[k-1] on thread block k-1 and adds them to its own
/// in that order on thread block n-1.
fn one_step(n: u32) -> String {
    let mut x = format!(
        "<algo name=\"one_step\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"1\" ngpus=\"{n}\" coll=\"allreduce\" inplace=\"0\" outofplace=\"1\" minBytes=\"0\" maxBytes=\"0\">\n"
    );
    let step = |s: u32, ty: &str, src: (&str, u32), dst: (&str, u32), dep: i64, has: u32| {
        let deps = if dep < 0 { -1 } else { 1 };
        format!(
            "      <step s=\"{s}\" type=\"{ty}\" srcbuf=\"{}\" srcoff=\"{}\" dstbuf=\"{}\" dstoff=\"{}\" cnt=\"1\" depid=\"{dep}\" deps=\"{deps}\" hasdep=\"{has}\"/>\n",
            src.0, src.1, dst.0, dst.1
        )
    };
    for r in 0..n {
        x.push_str(&format!(
            "  <gpu id=\"{r}\" i_chunks=\"1\" o_chunks=\"1\" s_chunks=\"{}\">\n",
            n - 1
        ));
        for k in 1..n {
            let peer = (r + k) % n;
            x.push_str(&format!(
                "    <tb id=\"{}\" send=\"{peer}\" recv=\"{peer}\" chan=\"0\">\n",
                k - 1
            ));
            x.push_str(&step(0, "s", ("i", 0), ("i", 0), -1, 0));
            x.push_str(&step(1, "r", ("s", k - 1), ("s", k - 1), -1, 1));
            x.push_str("    </tb>\n");
        }
        x.push_str(&format!(
            "    <tb id=\"{}\" send=\"-1\" recv=\"-1\" chan=\"0\">\n",
            n - 1
        ));
        x.push_str(&step(0, "cpy", ("i", 0), ("o", 0), -1, 0));
        for k in 1..n {
            x.push_str(&step(k, "re", ("s", k - 1), ("o", 0), i64::from(k - 1), 0));
        }
        x.push_str("    </tb>\n  </gpu>\n");
    }
    x.push_str("</algo>\n");
    x
}

/// Every rank but rank 0 differs (more than the verifier keeps): still one warning, whose
/// count says it may stand for more; and a wrong result on the last rank is still an error.
#[test]
fn many_order_differences_are_one_warning() {
    assert_eq!(
        one_step(3),
        xml("allreduce_3_one_step_orders.xml"),
        "the generator writes the 3-rank file"
    );
    let n = 20;
    let text = one_step(n);
    let d = check(&text);
    let all = shown(&text, &d);
    assert!(
        d.len() == 1
            && d[0].code == Code::MscclOrder
            && d[0].message.ends_with("(and 15 or more ranks and slots)"),
        "{all}"
    );
    // Rank 19 copies its last peer's input over its sum instead of adding it.
    let at = text
        .find(&format!("<gpu id=\"{}\"", n - 1))
        .expect("last gpu");
    let last = format!("<step s=\"{}\" type=\"re\"", n - 1);
    let k = at + text[at..].find(&last).expect("last reduction");
    let wrong = format!(
        "{}{}{}",
        &text[..k],
        last.replace("\"re\"", "\"cpy\""),
        &text[k + last.len()..]
    );
    expect_e0041(
        "a wrong result behind many orders",
        &wrong,
        "lacks the contribution",
    );
}

fn public(name: &str) -> String {
    xml(&format!("public/{name}"))
}

#[test]
fn public_alltoall_xmls_are_proved() {
    for (name, picks) in PUBLIC {
        let text = public(name);
        let d = check(&text);
        assert!(d.is_empty(), "{name}:\n{}", shown(&text, &d));
        let proof = msccl::validate(&text, None, msccl::limits::MAX_STEPS)
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        // 8 ranks, every rank sends every other rank its block(s): 56 pairs at least.
        assert!(proof.messages >= 56, "{name}: {} messages", proof.messages);
        let (algo, _) = msccl::read::read(&text).expect("reads");
        assert_eq!(
            msccl::selectable::describe(&algo, 4, 1 << 30),
            *picks,
            "{name}"
        );
    }
}

#[test]
fn broken_alltoall_variants_are_e0041() {
    let a2a = xml("alltoall_2.xml");
    // Rank 1 keeps the block meant for rank 0 instead of its own.
    expect_e0041(
        "kept the wrong block",
        &edit(
            &a2a,
            "<gpu id=\"1\"",
            "type=\"cpy\" srcbuf=\"i\" srcoff=\"1\"",
            "type=\"cpy\" srcbuf=\"i\" srcoff=\"0\"",
        ),
        "computes the wrong result",
    );
    // Rank 0 receives its block from rank 1 into the slot of its own block.
    expect_e0041(
        "received into the wrong block",
        &edit(&a2a, "type=\"r\"", "dstoff=\"1\"", "dstoff=\"0\""),
        "the XML",
    );
    // The buffers of an alltoall call hold nchunksperloop chunks, channels are below nchannels,
    // and nchunksperloop must cut the buffer into whole blocks.
    expect_e0041(
        "alltoall buffers",
        &edit(&a2a, "", "i_chunks=\"2\"", "i_chunks=\"3\""),
        "buffers of a `alltoall` call hold",
    );
    expect_e0041(
        "alltoall channel",
        &edit(&a2a, "", "chan=\"0\"", "chan=\"1\""),
        "outside 0 .. nchannels-1",
    );
    expect_e0041(
        "alltoall blocks",
        &edit(&a2a, "", "nchunksperloop=\"2\"", "nchunksperloop=\"3\""),
        "not a multiple of ngpus",
    );
    // A published one: rank 3 receives rank 5's block into the slot of rank 6's.
    let rccl = public("rccl_alltoall-8n-0-9kb.xml");
    let wrong = edit(
        &rccl,
        "<gpu id=\"3\"",
        "type=\"r\" srcbuf=\"i\" srcoff=\"3\" dstbuf=\"o\" dstoff=\"5\"",
        "type=\"r\" srcbuf=\"i\" srcoff=\"3\" dstbuf=\"o\" dstoff=\"6\"",
    );
    expect_e0041("public, wrong slot", &wrong, "the XML");
    // In place, an all-to-all is one buffer: the exchange is still right, since each rank sends
    // the peer's block before it receives its own block into that slot ...
    let inplace = edit(
        &a2a,
        "",
        "inplace=\"0\" outofplace=\"1\"",
        "inplace=\"1\" outofplace=\"0\"",
    );
    let d = check(&inplace);
    assert!(d.is_empty(), "{}", shown(&inplace, &d));
    // ... and wrong when rank 0 receives first: the block it then sends is its own.
    let mut lines: Vec<String> = inplace.lines().map(str::to_string).collect();
    let (send, recv) = (lines[3].clone(), lines[4].clone());
    lines[3] = recv.replace("s=\"1\"", "s=\"0\"");
    lines[4] = send.replace("s=\"0\"", "s=\"1\"");
    expect_e0041(
        "in place, received first",
        &lines.join("\n"),
        "computes the wrong result (in place)",
    );
}

#[test]
fn other_collectives_are_an_e0053_warning_after_the_structural_rules() {
    let text = xml("alltoall_2.xml");
    // A collective the executor knows but collc has no buffers for: only the warning.
    for coll in ["alltoallv", "gather"] {
        let other = edit(&text, "", "coll=\"alltoall\"", &format!("coll=\"{coll}\""));
        let d = check(&other);
        let all = shown(&other, &d);
        assert_eq!(d.len(), 1, "{all}");
        assert_eq!(
            (d[0].code, d[0].severity),
            (Code::MscclUnverified, Severity::Warning),
            "{all}"
        );
        assert!(d[0].message.contains(&format!("coll=\"{coll}\"")), "{all}");
        // Its structure is still checked.
        expect_e0041(
            "channel",
            &edit(&other, "", "chan=\"0\"", "chan=\"1\""),
            "outside 0 .. nchannels-1",
        );
        let e = msccl::validate(&other, None, msccl::limits::MAX_STEPS).expect_err("not proved");
        assert_eq!(e[0].0.code, Code::MscclUnverified);
    }
    // A name the executor does not know (the legacy runtime's "custom") is refused, not
    // warned about, and the rest of the structure is still checked.
    let custom = edit(&text, "", "coll=\"alltoall\"", "coll=\"custom\"");
    expect_e0041("unknown coll", &custom, "not a collective of the executor");
    expect_e0041(
        "unknown coll and a channel",
        &edit(&custom, "", "chan=\"0\"", "chan=\"1\""),
        "outside 0 .. nchannels-1",
    );
}

fn collc() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_collc"));
    c.current_dir(root());
    c
}

#[test]
fn command_line_exits_0_on_warnings_and_1_under_strict() {
    for (file, code) in [
        ("tests/msccl/check/allreduce_3_one_step_orders.xml", "E0052"),
        ("tests/ui/msccl/E0053-alltoallv.xml", "E0053"),
    ] {
        let path = file.to_string();
        let out = collc()
            .args(["check", "--color", "never", &path])
            .output()
            .expect("collc runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{file}: {err}");
        assert!(err.contains(&format!("warning[{code}]")), "{file}: {err}");
        assert!(err.contains("1 warning emitted"), "{file}: {err}");
        let out = collc()
            .args(["check", "--strict", "--color", "never", &path])
            .output()
            .expect("collc runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{file}: {err}");
        assert!(err.contains(&format!("error[{code}]")), "{file}: {err}");
    }
    // The correct XMLs: nothing printed, exit 0, strict or not; a broken one exits 1 either way.
    for strict in [false, true] {
        let mut c = collc();
        c.arg("check");
        if strict {
            c.arg("--strict");
        }
        for f in CORRECT {
            c.arg(format!("tests/msccl/check/{f}"));
        }
        for (f, _) in PUBLIC {
            c.arg(format!("tests/msccl/check/public/{f}"));
        }
        let out = c.output().expect("collc runs");
        assert_eq!(
            (out.status.code(), out.stderr.len()),
            (Some(0), 0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = collc()
        .args(["check", "tests/ui/msccl/E0041-missing-contribution.xml"])
        .output()
        .expect("collc runs");
    assert_eq!(out.status.code(), Some(1));
}
