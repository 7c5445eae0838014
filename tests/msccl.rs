//! MSCCL XML: snapshots of the examples' XML, the 4-GPU ring allreduce against the structure
//! of msccl-tools' reference (msccl-xml.md section 1.6, copied to tests/msccl/), every schedule
//! family and option through the validator and symbolic execution, one crafted violation per
//! rule, the ui corpus in tests/ui/msccl/, and the command line (`--target msccl`,
//! `--emit report`, `check FILE.xml`).

use collc::backend::msccl::{self, Algo, Options};
use collc::diag::{Code, Diagnostic, SourceMap, render};
use collc::sema::{Options as SemaOptions, check};
use std::path::{Path, PathBuf};
use std::process::Command;

mod msccl_support;
use msccl_support::edit;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Checks a `.coll` text and builds it for MSCCL with `opts` (None: its `target msccl` block).
fn build(name: &str, text: &str, opts: Option<Options>) -> Result<msccl::Emitted, String> {
    let mut files = SourceMap::new();
    let id = files.add(name, text);
    let c = check(&mut files, id, &SemaOptions::default());
    let Some(m) = c.model.filter(|_| c.diagnostics.is_empty()) else {
        return Err(render::to_text(&c.diagnostics, &files));
    };
    let opts = opts.unwrap_or_else(|| Options::from_model(&m));
    msccl::build(&m, &opts).map_err(|d| render::to_text(&d, &files))
}

fn check_xml(text: &str) -> Vec<Diagnostic> {
    let mut files = SourceMap::new();
    let id = files.add("x.xml", text);
    msccl::check(id, text)
}

fn examples() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .expect("examples/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "coll"))
        .collect();
    v.sort();
    v
}

#[test]
fn examples_xml_snapshots_validate() {
    let mut built = 0;
    let mut forests = 0;
    for path in examples() {
        let stem = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .to_string();
        let text = std::fs::read_to_string(&path).expect("readable");
        // Every example with its own options (ForestColl: a channel group per set of trees
        // that share a link, `lower::chans`). Examples over 64 ranks (the 1,024-GPU fat trees)
        // are left to benches/, as in tests/examples.rs.
        let opts: Option<Options> = None;
        let mut files = SourceMap::new();
        let id = files.add("x.coll", text.clone());
        let big = check(&mut files, id, &SemaOptions::default())
            .model
            .and_then(|m| m.collective)
            .is_some_and(|c| c.ranks.len() > 64);
        if big {
            continue;
        }
        let e = match build(&format!("examples/{stem}.coll"), &text, opts.clone()) {
            Ok(e) => e,
            // Not lowered, or in-network (switches, which MSCCL cannot program).
            Err(t) if t.contains("E0039") || t.contains("E0030") => continue,
            Err(t) => panic!("{stem}: {t}"),
        };
        built += 1;
        // What was written passes the validator again, as `collc check FILE.xml`.
        let d = check_xml(&e.text);
        assert!(d.is_empty(), "{stem}: {d:?}");
        assert!(!e.text.starts_with("<?"), "{stem}: a prolog");
        assert!(!e.text.contains('\t'), "{stem}: a tab");
        if text.contains("schedule forest") {
            forests += 1;
        }
        // Large XML (the bigger forests: megabytes) as a summary a person can read.
        if e.text.len() > 100_000 {
            insta::assert_snapshot!(format!("xml_{stem}_summary"), summary(&e.algo, &e.text));
        } else {
            insta::assert_snapshot!(format!("xml_{stem}"), e.text);
        }
        // Deterministic.
        let again = build(&format!("examples/{stem}.coll"), &text, opts).expect("builds");
        assert_eq!(again.text, e.text, "{stem}: output differs between runs");
    }
    assert!(built >= 5, "only {built} examples build");
    assert_eq!(
        forests, 6,
        "every ForestColl example (up to 64 ranks) builds"
    );
}

/// FNV-1a, for a digest of XML too large to snapshot (stable across Rust versions).
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// The header of an XML, one line per gpu (thread blocks, steps, channels, step types) and a
/// digest of the whole text, so any change to the XML changes the snapshot.
fn summary(a: &Algo, text: &str) -> String {
    let mut out = String::new();
    out.push_str(text.lines().next().unwrap_or(""));
    out.push('\n');
    for g in &a.gpus {
        let steps: usize = g.tbs.iter().map(|t| t.steps.len()).sum();
        let most = g.tbs.iter().map(|t| t.steps.len()).max().unwrap_or(0);
        let mut chans: Vec<i64> = g.tbs.iter().map(|t| t.chan).collect();
        chans.sort_unstable();
        chans.dedup();
        let mut types: std::collections::BTreeMap<&str, usize> = Default::default();
        for s in g.tbs.iter().flat_map(|t| &t.steps) {
            *types.entry(s.ty.name()).or_default() += 1;
        }
        let types: Vec<String> = types.iter().map(|(k, v)| format!("{k}:{v}")).collect();
        out.push_str(&format!(
            "gpu {} i={} o={} s={}: {} tbs on {} channels, {steps} steps (at most {most} per tb): {}\n",
            g.id,
            g.i_chunks,
            g.o_chunks,
            g.s_chunks,
            g.tbs.len(),
            chans.len(),
            types.join(" ")
        ));
    }
    out.push_str(&format!("{} bytes, fnv1a {:016x}\n", text.len(), fnv(text)));
    out
}

/// Compares `ours` with the reference structurally: the header (but the name and `minBytes`,
/// which collc sets to the first size the runtime picks the XML at), every gpu's
/// chunk counts, every tb's peers and channel, every step's type, buffers, count and
/// dependencies; offsets may differ by one rotation per gpu (which chunk a rank starts with).
fn same_structure(ours: &Algo, reference: &Algo) -> Result<(), String> {
    let head = |a: &Algo| {
        (
            a.proto,
            a.nchannels,
            a.nchunksperloop,
            a.ngpus,
            a.coll.clone(),
            a.inplace,
            a.outofplace,
            a.max_bytes,
        )
    };
    if head(ours) != head(reference) {
        return Err(format!(
            "headers differ: {:?} vs {:?}",
            head(ours),
            head(reference)
        ));
    }
    let n = reference.nchunksperloop;
    for (g, h) in ours.gpus.iter().zip(&reference.gpus) {
        if (g.id, g.i_chunks, g.o_chunks, g.s_chunks, g.tbs.len())
            != (h.id, h.i_chunks, h.o_chunks, h.s_chunks, h.tbs.len())
        {
            return Err(format!("gpu {} differs", h.id));
        }
        let mut rot = None;
        for (t, u) in g.tbs.iter().zip(&h.tbs) {
            if (t.send, t.recv, t.chan, t.steps.len()) != (u.send, u.recv, u.chan, u.steps.len()) {
                return Err(format!("gpu {}: a tb differs", h.id));
            }
            for (k, (s, r)) in t.steps.iter().zip(&u.steps).enumerate() {
                let shape =
                    |x: &msccl::Step| (x.ty, x.src, x.dst, x.cnt, x.depid, x.deps, x.hasdep);
                if shape(s) != shape(r) {
                    return Err(format!(
                        "gpu {} step {k}: {:?} vs {:?}",
                        h.id,
                        shape(s),
                        shape(r)
                    ));
                }
                for (a, b) in [(s.srcoff, r.srcoff), (s.dstoff, r.dstoff)] {
                    let d = (a - b).rem_euclid(n);
                    if *rot.get_or_insert(d) != d {
                        return Err(format!(
                            "gpu {} step {k}: offsets are not one rotation",
                            h.id
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

#[test]
fn ring_allreduce_4_matches_the_reference_structure() {
    let reference =
        std::fs::read_to_string(root().join("tests/msccl/reference_ring_allreduce_4.xml"))
            .expect("reference");
    assert!(
        check_xml(&reference).is_empty(),
        "collc's validator rejects the reference"
    );
    let (reference, _) = msccl::read::read(&reference).expect("reads");
    let text =
        std::fs::read_to_string(root().join("examples/ring_allreduce_4.coll")).expect("example");
    let e = build("examples/ring_allreduce_4.coll", &text, None).expect("builds");
    same_structure(&e.algo, &reference).expect("same structure");
    // 4 chunks of 4-byte floats: 16 B is the first nccl-tests size the runtime picks it at.
    assert_eq!(e.algo.min_bytes, 16);
    // A different structure is noticed: the out-of-place variant stores into `o`.
    let o = Options {
        inplace: false,
        ..Options::from_model(&{
            let mut f = SourceMap::new();
            let id = f.add("x", text.clone());
            check(&mut f, id, &SemaOptions::default())
                .model
                .expect("model")
        })
    };
    let e2 = build("x", &text, Some(o)).expect("builds");
    assert!(same_structure(&e2.algo, &reference).is_err());
}

fn source(n: u32, kind: &str, extra: &str, schedule: &str) -> String {
    format!(
        "import ring;\ntopology t = ring(n: {n}, bw: 25 GB/s);\ncollective {kind} {{ count: {}; dtype: f32; {extra} }}\nschedule {schedule}\n",
        n * 12
    )
}

#[test]
fn every_family_and_option_validates() {
    let mut runs = 0;
    for n in 2..=9u32 {
        let cases = [
            source(n, "allreduce", "op: sum;", "ring;"),
            source(n, "allreduce", "op: max;", "recursive_doubling;"),
            source(n, "allgather", "", "ring;"),
            source(n, "reduce_scatter", "", "ring;"),
            source(n, "broadcast", "root: node[1];", "binomial;"),
            source(n, "reduce", "root: node[0];", "binomial;"),
        ];
        for text in cases {
            for inplace in [false, true] {
                for (channels, instances) in [(1, 1), (2, 1), (3, 2)] {
                    let o = Options {
                        inplace,
                        channels,
                        instances,
                        ..Options::default()
                    };
                    let e = build("x.coll", &text, Some(o)).unwrap_or_else(|t| {
                        panic!("{text}\n{inplace} {channels} {instances}: {t}")
                    });
                    assert!(e.algo.nchannels as u32 <= channels * instances);
                    runs += 1;
                }
            }
        }
    }
    // Recursive multiplying with every stage kind.
    for (n, stages) in [
        (8, "[a2, a4]"),
        (6, "[c4m2, a2, a2, e4m2]"),
        (12, "[a3, a4]"),
        (7, "[m1g1a2, a3, n1g1a2]"),
    ] {
        let text = source(
            n,
            "allreduce",
            "",
            &format!("recursive_multiplying {{ stages: {stages}; }}"),
        );
        match build("x.coll", &text, Some(Options::default())) {
            Ok(_) => runs += 1,
            Err(t) if t.contains("E0014") || t.contains("E0016") => {}
            Err(t) => panic!("{stages}: {t}"),
        }
    }
    assert!(runs > 280, "{runs}");
}

#[test]
fn ring_channels_spread_steps() {
    // 40 ranks: 79 steps in one thread block exceed 64; two channels fit, and the help line
    // names them.
    let text = source(40, "allreduce", "", "ring;");
    let one = Options {
        channels: 1,
        ..Options::default()
    };
    let err = build("x.coll", &text, Some(one)).expect_err("too many steps");
    assert!(
        err.contains("E0040") && err.contains("79 steps") && err.contains("`--channels 2`"),
        "{err}"
    );
    let two = Options {
        channels: 2,
        ..Options::default()
    };
    let e = build("x.coll", &text, Some(two)).expect("fits");
    let most = e
        .algo
        .gpus
        .iter()
        .flat_map(|g| &g.tbs)
        .map(|t| t.steps.len())
        .max();
    assert_eq!(most, Some(40));
    assert_eq!(e.algo.nchannels, 2);
    // Without `channels`, the fewest that fit.
    let auto = build("x.coll", &text, Some(Options::default())).expect("fits");
    assert_eq!(auto.algo.nchannels, 2);
}

/// A correct 2-GPU out-of-place allreduce (also on the E0041 page).
const PAIR: &str = r#"<algo name="pair" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="2" o_chunks="2" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="s" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="r" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="2" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="s" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="r" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
"#;

fn expect(name: &str, text: &str, code: Code, needle: &str) {
    let d = check_xml(text);
    let first = d.first().unwrap_or_else(|| panic!("{name}: accepted"));
    assert_eq!(first.code, code, "{name}: {d:#?}");
    assert!(
        d.iter().any(|x| x.message.contains(needle)),
        "{name}: no message with `{needle}`: {d:#?}"
    );
    assert!(
        d.iter()
            .all(|x| x.help.as_deref().is_some_and(|h| !h.is_empty())),
        "{name}: a diagnostic without help"
    );
}

#[test]
fn each_rule_rejects_a_crafted_violation() {
    assert!(check_xml(PAIR).is_empty(), "{:#?}", check_xml(PAIR));
    let i = Code::MscclInvalid;
    let l = Code::MscclLimit;
    let cases: Vec<(&str, String, Code, &str)> = vec![
        (
            "prolog",
            format!("<?xml version=\"1.0\"?>\n{PAIR}"),
            i,
            "prolog",
        ),
        ("tab", edit(PAIR, "", "  <gpu", "\t<gpu"), i, "tab"),
        (
            "newline in a tag",
            edit(PAIR, "", " proto=", "\n proto="),
            i,
            "line break",
        ),
        (
            "single quotes",
            edit(PAIR, "", "\"Simple\"", "'Simple'"),
            i,
            "double quotes",
        ),
        (
            "two spaces",
            edit(PAIR, "", " proto=", "  proto="),
            i,
            "exactly one space",
        ),
        (
            "text between elements",
            edit(PAIR, "", "</tb>", "</tb> hello"),
            i,
            "text between",
        ),
        (
            "algo not first",
            format!("<gpu id=\"0\"/>\n{PAIR}"),
            i,
            "<algo>",
        ),
        (
            "missing algo attribute",
            edit(PAIR, "", " outofplace=\"1\"", ""),
            i,
            "attribute outofplace of node algo not found",
        ),
        (
            "missing step attribute",
            edit(PAIR, "<step", " hasdep=\"0\"", ""),
            i,
            "attribute hasdep of node step not found",
        ),
        (
            "protocol",
            edit(PAIR, "", "\"Simple\"", "\"simple\""),
            i,
            "not a protocol",
        ),
        (
            "collective",
            edit(PAIR, "", "\"allreduce\"", "\"allreduc\""),
            i,
            "not a collective",
        ),
        (
            "step type",
            edit(PAIR, "<step", "type=\"s\"", "type=\"ra\""),
            i,
            "not a step type",
        ),
        (
            "buffer",
            edit(PAIR, "<step", "srcbuf=\"i\"", "srcbuf=\"x\""),
            i,
            "not a buffer",
        ),
        (
            "flag",
            edit(PAIR, "<step", "hasdep=\"0\"", "hasdep=\"2\""),
            i,
            "must be 0 or 1",
        ),
        (
            "tb ids",
            edit(PAIR, "", "<tb id=\"0\"", "<tb id=\"1\""),
            i,
            "without gaps",
        ),
        (
            "step index",
            edit(PAIR, "", "<step s=\"0\"", "<step s=\"5\""),
            i,
            "by position",
        ),
        (
            "gpu count",
            edit(PAIR, "", "ngpus=\"2\"", "ngpus=\"3\""),
            i,
            "<gpu> elements",
        ),
        (
            "peer is itself",
            edit(PAIR, "", "send=\"1\"", "send=\"0\""),
            i,
            "is not another rank",
        ),
        (
            "channel",
            edit(PAIR, "", "chan=\"0\"", "chan=\"1\""),
            i,
            "outside 0 .. nchannels-1",
        ),
        (
            "send without peer",
            edit(PAIR, "", "send=\"1\"", "send=\"-1\""),
            i,
            "send=\"-1\"",
        ),
        (
            "recv without peer",
            edit(PAIR, "", "recv=\"1\"", "recv=\"-1\""),
            i,
            "recv=\"-1\"",
        ),
        (
            "offset",
            edit(PAIR, "<step", "srcoff=\"1\"", "srcoff=\"2\""),
            i,
            "outside the",
        ),
        (
            "chunk counts",
            edit(PAIR, "", "i_chunks=\"2\"", "i_chunks=\"3\""),
            i,
            "buffers of a `allreduce` call hold",
        ),
        (
            "never selected",
            edit(PAIR, "", "outofplace=\"1\"", "outofplace=\"0\""),
            i,
            "never selects",
        ),
        (
            "size window",
            edit(
                PAIR,
                "",
                "minBytes=\"0\" maxBytes=\"0\"",
                "minBytes=\"9\" maxBytes=\"8\"",
            ),
            i,
            "size window",
        ),
        (
            "unpublished flag",
            edit(
                PAIR,
                "<gpu id=\"1\"",
                "type=\"r\" srcbuf=\"o\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\"",
                "type=\"r\" srcbuf=\"o\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"0\" deps=\"1\"",
            ),
            i,
            "never publishes",
        ),
        (
            "dependency on a missing step",
            edit(
                PAIR,
                "<gpu id=\"1\"",
                "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n    </tb>",
                "depid=\"0\" deps=\"9\" hasdep=\"0\"/>\n    </tb>",
            ),
            i,
            "names no step",
        ),
        (
            "wrong result",
            edit(PAIR, "", "type=\"rrc\"", "type=\"r\""),
            i,
            "wrong result",
        ),
        (
            "channels",
            edit(PAIR, "", "nchannels=\"1\"", "nchannels=\"33\""),
            l,
            "nchannels",
        ),
        (
            "cnt",
            edit(PAIR, "<step", "cnt=\"1\"", "cnt=\"72\""),
            l,
            "MSCCL_MAX_COUNT",
        ),
        (
            "attributes",
            edit(
                PAIR,
                "",
                " name=\"pair\"",
                &(0..17).map(|k| format!(" x{k}=\"1\"")).collect::<String>(),
            ),
            l,
            "MAX_ATTR_COUNT",
        ),
    ];
    for (name, text, code, needle) in &cases {
        expect(name, text, *code, needle);
    }
    // Deadlock: both ranks receive before they send.
    let hang = PAIR
        .replace("<step s=\"0\" type=\"s\"", "<step s=\"0\" type=\"X\"")
        .replace("<step s=\"3\" type=\"r\"", "<step s=\"3\" type=\"Y\"");
    let hang = hang
        .replace("type=\"X\"", "type=\"r\"")
        .replace("type=\"Y\"", "type=\"s\"");
    expect("hang", &hang, i, "hangs");
    // Two thread blocks on one (send peer, channel).
    let start = PAIR.find("    <tb id=\"0\"").expect("tb");
    let end = PAIR.find("    </tb>").expect("end") + "    </tb>\n".len();
    let dup = PAIR[start..end].replace("<tb id=\"0\"", "<tb id=\"1\"");
    let two = format!("{}{dup}{}", &PAIR[..end], &PAIR[end..]);
    expect(
        "one tb per peer and channel",
        &two,
        i,
        "one connection per (peer, channel)",
    );
}

/// An XML with one gpu, given thread blocks (send, recv, steps), for the limits.
fn synthetic(ngpus: usize, tbs: &[(i64, i64, usize)], chunks: usize, step: &str) -> String {
    let mut s = format!(
        "<algo name=\"x\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"{chunks}\" ngpus=\"{ngpus}\" coll=\"allreduce\" inplace=\"0\" outofplace=\"1\" minBytes=\"0\" maxBytes=\"0\">\n  <gpu id=\"0\" i_chunks=\"{chunks}\" o_chunks=\"{chunks}\" s_chunks=\"0\">\n"
    );
    for (t, (send, recv, steps)) in tbs.iter().enumerate() {
        s.push_str(&format!(
            "    <tb id=\"{t}\" send=\"{send}\" recv=\"{recv}\" chan=\"0\">\n"
        ));
        for k in 0..*steps {
            s.push_str(&format!("      <step s=\"{k}\" {step}/>\n"));
        }
        s.push_str("    </tb>\n");
    }
    s.push_str("  </gpu>\n");
    for g in 1..ngpus {
        s.push_str(&format!("  <gpu id=\"{g}\" i_chunks=\"{chunks}\" o_chunks=\"{chunks}\" s_chunks=\"0\">\n  </gpu>\n"));
    }
    s.push_str("</algo>\n");
    s
}

#[test]
fn each_limit_rejects_a_crafted_violation() {
    let cpy = "type=\"cpy\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"";
    let l = Code::MscclLimit;
    expect(
        "steps per tb",
        &synthetic(1, &[(-1, -1, 65)], 1, cpy),
        l,
        "MSCCL_MAX_NUM_STEPS",
    );
    let sends: Vec<(i64, i64, usize)> = (1..=33).map(|p| (p, -1, 0)).collect();
    expect(
        "tbs per channel",
        &synthetic(34, &sends, 1, cpy),
        l,
        "per channel",
    );
    expect(
        "nodes per rank",
        &synthetic(1, &vec![(-1, -1, 63); 65], 1, cpy),
        l,
        "MAX_NODES",
    );
    expect("gpus", &synthetic(1025, &[], 1, cpy), l, "MAX_SUBS");
    let far = "type=\"cpy\" srcbuf=\"i\" srcoff=\"33000\" dstbuf=\"o\" dstoff=\"33000\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"";
    expect(
        "offsets",
        &synthetic(1, &[(-1, -1, 1)], 40000, far),
        l,
        "int16",
    );
    let mut many = vec![(-1, -1, 1); 130];
    many[129].2 = 1;
    let mut text = synthetic(1, &many, 1, cpy);
    // The last tb waits on tb 128: beyond the int8 depid.
    let last = text.rfind("depid=\"-1\" deps=\"-1\"").expect("a step");
    text.replace_range(
        last..last + "depid=\"-1\" deps=\"-1\"".len(),
        "depid=\"128\" deps=\"0\"",
    );
    expect("depid", &text, l, "int8");
}

#[test]
fn ui_corpus() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/ui/msccl"))
        .expect("tests/ui/msccl")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(files.len() >= 4);
    for path in files {
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .to_string();
        let rel = format!("tests/ui/msccl/{name}");
        let text = std::fs::read_to_string(&path).expect("readable");
        let mut files = SourceMap::new();
        let id = files.add(rel.clone(), text.clone());
        let diags = if name.ends_with(".xml") {
            msccl::check(id, &text)
        } else {
            let c = check(&mut files, id, &SemaOptions::default());
            let m = c.model.expect("checks");
            // Errors, or the warnings of a build that succeeds (E0054).
            match msccl::build(&m, &Options::from_model(&m)) {
                Ok(e) => e.warnings,
                Err(d) => d,
            }
        };
        let want = name.split('-').next().unwrap_or("");
        assert_eq!(diags.first().map(|d| d.code.as_str()), Some(want), "{rel}");
        for d in &diags {
            assert!(d.help.as_deref().is_some_and(|h| !h.is_empty()), "{rel}");
            assert!(d.primary.span.end as usize <= text.len(), "{rel}");
        }
        let stem = name.rsplit_once('.').map_or(name.as_str(), |x| x.0);
        insta::assert_snapshot!(format!("msccl_ui__{stem}"), render::to_text(&diags, &files));
    }
}

fn collc() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_collc"));
    c.current_dir(root());
    c
}

#[test]
fn command_line() {
    let dir = std::env::temp_dir().join(format!("collc-msccl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join("ring.xml");
    let r = collc()
        .args([
            "build",
            "examples/ring_allreduce_4.coll",
            "--target",
            "msccl",
            "-o",
        ])
        .arg(&out)
        .output()
        .expect("runs");
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let written = std::fs::read_to_string(&out).expect("written");
    let r = collc().arg("check").arg(&out).output().expect("runs");
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    // Flags override the target block.
    let r = collc()
        .args([
            "build",
            "examples/ring_allreduce_4.coll",
            "--target",
            "msccl",
            "--out-of-place",
            "--proto",
            "ll128",
            "--instances",
            "2",
            "--min-bytes",
            "1024",
            "--max-bytes",
            "1048576",
        ])
        .output()
        .expect("runs");
    let x = String::from_utf8_lossy(&r.stdout);
    assert!(x.starts_with("<algo name=\"ring\" proto=\"LL128\" nchannels=\"2\" nchunksperloop=\"8\" ngpus=\"4\" coll=\"allreduce\" inplace=\"0\" outofplace=\"1\" minBytes=\"1024\" maxBytes=\"1048576\">"), "{x}");
    assert_ne!(x, written);
    // A limit: nothing is written.
    let bad = dir.join("bad.xml");
    let r = collc()
        .args([
            "build",
            "tests/ui/msccl/E0040-ring-40-steps.coll",
            "--target",
            "msccl",
            "-o",
        ])
        .arg(&bad)
        .output()
        .expect("runs");
    assert_eq!(r.status.code(), Some(1));
    assert!(!bad.exists());
    assert!(String::from_utf8_lossy(&r.stderr).contains("E0040"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn report_states_when_the_xml_is_used() {
    let run = |args: &[&str]| {
        let r = collc().args(args).output().expect("runs");
        assert_eq!(
            r.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&r.stderr)
        );
        String::from_utf8_lossy(&r.stdout).into_owned()
    };
    let used = run(&[
        "build",
        "examples/ring_allreduce_4.coll",
        "--emit",
        "report",
    ]);
    assert!(
        used.contains(
            "Verdict: the call this file describes (allreduce with count 16777216) selects this XML"
        ),
        "{used}"
    );
    insta::assert_snapshot!("report_ring_allreduce_4", used);
    let not = run(&[
        "build",
        "examples/ring_allreduce_4.coll",
        "--emit",
        "report",
        "--max-bytes",
        "1048576",
        "--instances",
        "3",
    ]);
    assert!(
        not.contains("NOT run by this XML") && not.contains("2 conditions fail"),
        "{not}"
    );
    insta::assert_snapshot!("report_ring_allreduce_4_not_used", not);
}

/// Solved forests of every collective the family implements, in and out of place, one and
/// three chunks: built for MSCCL with the default options and validated.
#[test]
fn solved_forests_of_every_kind_validate() {
    use collc::sema::model::{AutoOr, CollectiveKind, Family};
    let kinds = [
        CollectiveKind::Allgather,
        CollectiveKind::ReduceScatter,
        CollectiveKind::Allreduce,
        CollectiveKind::Broadcast,
        CollectiveKind::Reduce,
    ];
    for file in [
        "examples/forestcoll_fig2.coll",
        "examples/mi250_8plus8.coll",
        "examples/full_mesh_boxes.coll",
    ] {
        let text = std::fs::read_to_string(root().join(file)).expect("example");
        let mut files = SourceMap::new();
        let id = files.add(file, text);
        let m0 = check(&mut files, id, &SemaOptions::default())
            .model
            .expect("checks");
        for kind in kinds {
            for chunks in [1, 3] {
                let mut m = m0.clone();
                let c = m.collective.as_mut().expect("collective");
                let n = c.ranks.len() as u64;
                c.kind = kind;
                c.root = kind.has_root().then_some(c.ranks.len() - 1);
                c.count = 64 * n * 12;
                if let Some(s) = m.schedule.as_mut() {
                    s.family = Family::Forest {
                        k: AutoOr::Fixed(2),
                        chunks: AutoOr::Fixed(chunks),
                    };
                }
                for inplace in [false, true] {
                    let o = Options {
                        inplace,
                        ..Options::from_model(&m)
                    };
                    if let Err(d) = msccl::build(&m, &o) {
                        panic!(
                            "{file} {} {chunks} {inplace}: {}",
                            kind.name(),
                            d[0].message
                        );
                    }
                }
            }
        }
    }
}

/// ForestColl: many trees cross one link with independently pipelined chunks, and a forward
/// fused into `rcs` at its receive could overtake another tree's send on the same connection
/// that the receiver expects first (MI250 8+8, one chunk: rank 8 forwarded rank 9's part to
/// rank 12 before rank 0's). Connections keep one order under fusion, so trees share
/// channels: one channel carries several trees and still validates.
#[test]
fn forest_trees_share_channels_in_connection_order() {
    let text = std::fs::read_to_string(root().join("examples/mi250_8plus8.coll"))
        .expect("example")
        .replace("chunks: 4;", "chunks: 1;");
    let e = build("m.coll", &text, Some(Options::default())).expect("validates");
    let mut roots: std::collections::BTreeMap<(i64, i64, i64), std::collections::BTreeSet<i64>> =
        Default::default();
    for g in &e.algo.gpus {
        for tb in g.tbs.iter().filter(|t| t.send >= 0) {
            for s in tb.steps.iter().filter(|s| s.ty.sends()) {
                let root = match s.src {
                    msccl::MBuf::I => g.id,
                    _ => s.srcoff,
                };
                roots
                    .entry((g.id, tb.send, tb.chan))
                    .or_default()
                    .insert(root);
            }
        }
    }
    assert_eq!(e.algo.nchunksperloop, 16, "one chunk per part");
    assert!(
        roots.values().any(|r| r.len() > 1),
        "no connection carries several trees: {roots:?}"
    );
    assert!(e.algo.nchannels <= 2, "{}", e.algo.nchannels);
}

/// A forest over a limit: the advice names a setting, and that setting builds
/// (tests/msccl_channels.rs applies every kind of advice).
#[test]
fn forest_advice_names_settings_that_fit() {
    let text =
        std::fs::read_to_string(root().join("examples/forestcoll_fig2.coll")).expect("example");
    let mut files = SourceMap::new();
    let id = files.add("f.coll", text.clone());
    let m = check(&mut files, id, &SemaOptions::default())
        .model
        .expect("checks");
    let base = Options::from_model(&m);
    // Trees share channels: five channels are five channels (before, 8 groups of trees that
    // share a link needed 40).
    let five = Options {
        channels: 5,
        ..base.clone()
    };
    let e = build("f.coll", &text, Some(five)).expect("fits");
    assert!(e.algo.nchannels <= 5, "{}", e.algo.nchannels);
    // Two steps per thread block: fewer chunks per tree fit on enough channels.
    let two = Options {
        max_steps: 2,
        ..base.clone()
    };
    // Every smaller count is tried, so the advice is the most chunks that fit (5), and they do.
    let err = build("f.coll", &text, Some(two.clone())).expect_err("too many steps");
    assert!(err.contains("`chunks: 5;`"), "{err}");
    let fewer = text.replace("chunks: 8;", "chunks: 5;");
    assert!(build("f.coll", &fewer, Some(two.clone())).is_ok());
    let six = text.replace("chunks: 8;", "chunks: 6;");
    assert!(build("f.coll", &six, Some(two)).is_err());
    // One step per thread block: no channels, chunks or k fit; a runtime with four does.
    let one = Options {
        max_steps: 1,
        ..base.clone()
    };
    let err = build("f.coll", &text, Some(one)).expect_err("nothing fits");
    assert!(err.contains("`--max-steps 4`"), "{err}");
    let four = Options {
        max_steps: 4,
        ..base
    };
    assert!(build("f.coll", &text, Some(four)).is_ok());
}
