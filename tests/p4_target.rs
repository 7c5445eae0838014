//! The `p4` target: `collc build FILE --target p4 -o DIR` for Canary and static trees.
//!
//! - Every emitted file of the four-host example is a snapshot; every Canary example builds and
//!   its P4Runtime requests check against its P4Info (the target's validator, run here again on
//!   the files as written).
//! - The host program is built with cargo and run, one process per rank with `--check`, against
//!   collc's own execution of the switch program over UDP ([`collc::backend::p4::emulate`]):
//!   plain, with a lost packet (the retransmission path, with a fixed timeout and with
//!   `retransmit: auto`, where each host estimates its timeout from the round trips it
//!   measures), with a one-descriptor table (every block collides: tree restoration), with f32
//!   data as fixed point, and on static trees.
//! - Limits are E0050.

mod cli_support;

use cli_support::{collc, fixture};
use collc::backend::p4::{self, P4Options, emulate, textproto};
use collc::diag::{SourceMap, render as diag_render};
use collc::sema::{Options, check, model::Model};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

const EXAMPLE: &str = "examples/canary_p4.coll";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn load(text: &str, params: &[(&str, &str)]) -> Model {
    let mut sources = SourceMap::new();
    let id = sources.add("fixture.coll".to_string(), text.to_string());
    let opts = Options {
        params: params
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        ..Options::default()
    };
    let c = check(&mut sources, id, &opts);
    assert!(
        c.diagnostics.is_empty(),
        "{}",
        diag_render::to_text(&c.diagnostics, &sources)
    );
    c.model.expect("a model")
}

/// `collc build FILE --target p4 -o DIR` with `args`; the directory.
fn build(tag: &str, text: &str, args: &[&str]) -> PathBuf {
    let (code, err, out) = try_build(tag, text, args);
    assert_eq!(code, 0, "{err}");
    out
}

/// `collc build FILE --target p4 -o DIR` with `args`: exit code, standard error, the directory.
fn try_build(tag: &str, text: &str, args: &[&str]) -> (i32, String, PathBuf) {
    let (dir, file) = fixture(tag, text);
    let out = dir.join(tag);
    let mut a = vec!["build", file.as_str(), "--target", "p4", "-o"];
    let o = out.to_string_lossy().into_owned();
    a.push(&o);
    a.extend_from_slice(args);
    let (code, _, err) = collc(&a);
    (code, err, out)
}

fn files(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "target") {
                    stack.push(p);
                }
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .expect("inside")
                    .to_string_lossy()
                    .into_owned();
                out.push((rel, std::fs::read_to_string(&p).expect("text")));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_file_of_the_four_host_example_is_a_snapshot() {
    let text = std::fs::read_to_string(root().join(EXAMPLE)).expect("example");
    let dir = build("p4-snap", &text, &[]);
    for (path, body) in files(&dir) {
        if path.starts_with("host/src/") {
            continue; // fixed text, the same for every schedule (src/backend/p4/host)
        }
        insta::assert_snapshot!(format!("canary_p4__{}", path.replace('/', "__")), body);
    }
    let trees = on_trees(&text);
    let dir = build("p4-snap-trees", &trees, &[]);
    for (path, body) in files(&dir) {
        if path.starts_with("host/src/") {
            continue;
        }
        insta::assert_snapshot!(format!("trees_p4__{}", path.replace('/', "__")), body);
    }
}

#[test]
fn the_canary_examples_build_and_their_requests_check_against_the_p4info() {
    for ex in [
        "examples/canary_small.coll",
        "examples/canary_fig7.coll",
        EXAMPLE,
    ] {
        let text = std::fs::read_to_string(root().join(ex)).expect("example");
        let tag = format!("p4-ex-{}", ex.len());
        let dir = build(&tag, &text, &[]);
        let all = files(&dir);
        let info_text = &all
            .iter()
            .find(|(p, _)| p.ends_with(".p4info.txtpb"))
            .expect("a P4Info")
            .1;
        let info = textproto::info(info_text).expect("P4Info parses");
        let mut updates = 0;
        for (p, body) in &all {
            if p.ends_with(".p4runtime.txtpb") {
                updates +=
                    textproto::check(&info, body).unwrap_or_else(|e| panic!("{ex} {p}: {e}"));
            }
        }
        assert!(updates > 0, "{ex}: no updates");
        assert!(all.iter().any(|(p, _)| p == "host/Cargo.toml"), "{ex}");
        // Each switch's requests carry the device id run.sh starts that switch with.
        let run = &all.iter().find(|(p, _)| p == "run.sh").expect("run.sh").1;
        let mut switches = 0;
        for line in run.lines().filter(|l| l.contains("--device-id")) {
            let id = line
                .split("--device-id ")
                .nth(1)
                .and_then(|r| r.split(' ').next());
            let name = line
                .split(">build/")
                .nth(1)
                .and_then(|r| r.split(".log").next());
            let (Some(id), Some(name)) = (id, name) else {
                panic!("{ex}: {line}");
            };
            let req = &all
                .iter()
                .find(|(p, _)| *p == format!("switches/{name}.p4runtime.txtpb"))
                .unwrap_or_else(|| panic!("{ex}: no requests for {name}"))
                .1;
            assert!(
                req.starts_with(&format!("device_id: {id}\n")),
                "{ex} {name}: {}",
                &req[..20]
            );
            switches += 1;
        }
        assert!(switches > 1, "{ex}: {switches} switches");
    }
}

#[test]
fn limits_are_e0050() {
    let text = std::fs::read_to_string(root().join(EXAMPLE)).expect("example");
    let tofino = text
        .replace("limits: bmv2;", "limits: tofino;")
        .replace("elements_per_packet: 32;", "elements_per_packet: 64;");
    let (code, err, out) = try_build("p4-limits", &tofino, &[]);
    assert_eq!(code, 1);
    assert!(err.contains("error[E0050]"), "{err}");
    assert!(
        err.contains("64 elements per packet, but a tofino switch aggregates at most 32"),
        "{err}"
    );
    assert!(!out.exists(), "nothing written");
    let slots = on_trees(&text).replace("slots: 16;", "slots: 131072;");
    let (code, err, _) = try_build("p4-limits-slots", &slots, &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains("131072 slots, but a bmv2 switch holds at most 65536 descriptors")
            && err.contains("set `slots` to a power of two of at most 65536"),
        "{err}"
    );
    let i64s = text.replace("dtype: i32;", "dtype: i64;");
    let (code, err, _) = try_build("p4-limits-i64", &i64s, &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains("i64 elements do not travel as the 32-bit integers"),
        "{err}"
    );
}

/// Builds the host program of `dir` and returns its binary. Every project shares one target
/// directory, so builds take turns; each test's tag names its own package and binary.
fn host_binary(dir: &Path) -> PathBuf {
    static BUILD: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    let target = root().join("target").join("p4-host");
    let out = Command::new(env!("CARGO"))
        .args(["build", "--release", "--quiet"])
        .current_dir(dir.join("host"))
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "the host program builds: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Run where cargo left it: a copy written by this process could still be open for
    // writing in a child another test thread is forking, and exec would fail with
    // ETXTBSY ("Text file busy"). Each example directory names its own package.
    let name = p4::project::package(&dir.file_name().expect("a name").to_string_lossy());
    target.join("release").join(name)
}

/// `text` with its Canary schedule replaced by two static trees of 16 slots (so that blocks
/// reuse slots).
fn on_trees(text: &str) -> String {
    let from = text.find("\nschedule canary").expect("schedule");
    let to = text.find("\ntarget p4 {").expect("target");
    text.replace(
        &text[from..to],
        "\nschedule static_trees { trees: 2; slots: 16; }\n",
    )
}

static PORTS: AtomicU16 = AtomicU16::new(0);

/// Runs the ranks of `text` (with `params`) against the emulated switches; rank r gets
/// `extra(r)`. Returns the switches' counts and every rank's output.
fn run_udp(
    tag: &str,
    text: &str,
    params: &[(&str, &str)],
    extra: impl Fn(u32) -> Vec<String>,
) -> (emulate::Counts, Vec<String>) {
    let args: Vec<String> = params
        .iter()
        .flat_map(|(a, b)| ["--param".to_string(), format!("{a}={b}")])
        .collect();
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let dir = build(tag, text, &argv);
    let bin = host_binary(&dir);
    let m = load(text, params);
    let (fabric, program, lanes) = p4::emulation(&m, &P4Options::default()).expect("emulation");
    let ranks = m.collective.as_ref().expect("collective").ranks.len() as u32;
    let base = 20_000
        + (std::process::id() % 400) as u16 * 100
        + PORTS.fetch_add(20, Ordering::Relaxed) % 100;
    let emu = emulate::start(fabric, program, lanes, base).expect("switches start");
    let kids: Vec<_> = (0..ranks)
        .map(|r| {
            Command::new(&bin)
                .args([
                    "--rank",
                    &r.to_string(),
                    "--udp",
                    &base.to_string(),
                    "--check",
                    "--deadline",
                    "30",
                ])
                .args(extra(r))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("host starts")
        })
        .collect();
    let start = Instant::now();
    let mut outs = Vec::new();
    for k in kids {
        let o = k.wait_with_output().expect("host ends");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success(), "{tag}: {text}");
        outs.push(text);
    }
    assert!(start.elapsed() < Duration::from_secs(60));
    (emu.stop().expect("switches ran"), outs)
}

/// Asserts that the switches ran `rule`.
fn fired(counts: &emulate::Counts, rule: &str) {
    assert!(
        counts.rules.get(rule).copied().unwrap_or(0) > 0,
        "`{rule}` never ran: {counts:?}"
    );
}

fn passed(outs: &[String]) {
    for (r, o) in outs.iter().enumerate() {
        assert!(
            o.contains(&format!("rank {r}: check passed: 1024 elements")),
            "{o}"
        );
    }
}

#[test]
fn the_host_program_completes_an_allreduce_on_the_emulated_switches() {
    let text = std::fs::read_to_string(root().join(EXAMPLE)).expect("example");
    let (counts, outs) = run_udp("p4-udp", &text, &[], |_| Vec::new());
    passed(&outs);
    fired(&counts, "broadcast");
    fired(&counts, "allocate");
}

#[test]
fn a_lost_packet_is_recovered_by_retransmission() {
    let text = std::fs::read_to_string(root().join(EXAMPLE))
        .expect("example")
        .replace("retransmit: 1 s;", "retransmit: 100 ms;");
    // Rank 1 loses its packet of blocks 0 and 2 (led by ranks 0 and 2).
    let (_, outs) = run_udp("p4-udp-drop", &text, &[], |r| {
        if r == 1 {
            vec!["--drop".into(), "0,2".into()]
        } else {
            Vec::new()
        }
    });
    passed(&outs);
    let count = |o: &String, what: &str| -> u64 {
        o.split(what)
            .next()
            .and_then(|x| x.rsplit(' ').next())
            .and_then(|x| x.parse().ok())
            .unwrap_or(0)
    };
    assert!(count(&outs[1], " requests") >= 2, "{}", outs[1]);
    let failed: u64 = outs.iter().map(|o| count(o, " failed generations")).sum();
    assert!(
        failed >= 2,
        "the leaders failed the blocks' first generation: {outs:?}"
    );
    for o in &outs {
        assert!(o.contains("retransmission timeout 100ms (fixed)"), "{o}");
    }
}

/// `retransmit: auto`: the plan says the hosts adapt the timeout collc planned (2 RTT on the
/// declared network) and each host estimates it from its blocks' round trips as TCP does and
/// as the packet simulator does (RFC 6298: SRTT + 4 RTTVAR, Karn's rule, back-off per block),
/// never below the planned value; a lost packet is still recovered.
#[test]
fn under_retransmit_auto_the_hosts_estimate_their_timeout() {
    let text = std::fs::read_to_string(root().join(EXAMPLE))
        .expect("example")
        .replace("retransmit: 1 s;", "retransmit: auto;");
    let dir = build("p4-auto-plan", &text, &[]);
    let plan = std::fs::read_to_string(dir.join("host/plan.txt")).expect("the plan");
    let line = plan
        .lines()
        .find(|l| l.starts_with("retransmit_us "))
        .expect("a timeout");
    let planned: u64 = line
        .split(' ')
        .nth(1)
        .and_then(|x| x.parse().ok())
        .expect("microseconds");
    assert!(line.ends_with(" auto") && planned > 0, "{plan}");
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("the README");
    assert!(readme.contains("SRTT + 4 RTTVAR"), "{readme}");
    // The target's own `retransmit` fixes it.
    let own = text.replace(
        "clock_period: 2 ms;",
        "clock_period: 2 ms;\n    retransmit: 5 ms;",
    );
    let fixed = build("p4-auto-fixed", &own, &[]);
    let plan = std::fs::read_to_string(fixed.join("host/plan.txt")).expect("the plan");
    assert!(plan.contains("retransmit_us 5000\n"), "{plan}");

    // Rank 1 loses its packet of blocks 0 and 2.
    let (_, outs) = run_udp("p4-udp-auto", &text, &[], |r| {
        if r == 1 {
            vec!["--drop".into(), "0,2".into()]
        } else {
            Vec::new()
        }
    });
    passed(&outs);
    let from = format!("(auto from {:?}: ", Duration::from_micros(planned));
    let mut sampled = 0;
    for o in &outs {
        let at = o.find(&from).unwrap_or_else(|| panic!("{from}: {o}"));
        sampled += o[at + from.len()..]
            .split(' ')
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .expect("round trips sampled");
    }
    assert!(sampled > 0, "the hosts measured round trips: {outs:?}");
}

#[test]
fn a_one_descriptor_table_collides_and_restores() {
    let text = std::fs::read_to_string(root().join(EXAMPLE)).expect("example");
    let (counts, outs) = run_udp("p4-udp-collide", &text, &[("table", "1")], |_| Vec::new());
    passed(&outs);
    fired(&counts, "collision");
    fired(&counts, "restore");
}

#[test]
fn static_trees_complete_an_allreduce_on_the_emulated_switches() {
    let text = std::fs::read_to_string(root().join(EXAMPLE)).expect("example");
    let trees = on_trees(&text);
    // The schedule's slots size the switch's registers and the hosts' window.
    let dir = build("p4-trees-slots", &trees, &[]);
    let source = std::fs::read_to_string(dir.join("static_trees.p4")).expect("the program");
    assert!(source.contains("const bit<32> SLOTS = 16;"), "{source}");
    let plan = std::fs::read_to_string(dir.join("host/plan.txt")).expect("the plan");
    assert!(plan.contains("window 16"), "{plan}");
    let (counts, outs) = run_udp("p4-udp-trees", &trees, &[], |_| Vec::new());
    passed(&outs);
    assert!(counts.packets > 0);
}

/// The P4 target's output read back by the consumers' own libraries (tests/p4/check.py):
/// `p4runtime` parses the P4Info and every write request and checks each entry against it;
/// scapy parses a frame the host program sends with the header the P4 program declares.
/// scripts/test-all installs both from PyPI.
#[test]
fn p4runtime_and_scapy_read_the_output_back() {
    let text = std::fs::read_to_string(root().join(EXAMPLE)).expect("example");
    for (tag, t) in [("p4-py", text.clone()), ("p4-py-trees", on_trees(&text))] {
        let dir = build(tag, &t, &[]);
        let bin = host_binary(&dir);
        let out = Command::new(&bin)
            .args(["frame", "--rank", "1"])
            .output()
            .expect("host runs");
        let shown = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut lines = shown.lines();
        let block = lines
            .next()
            .and_then(|l| l.strip_prefix("block "))
            .expect("the frame's block")
            .to_string();
        let hex = lines.next().expect("the frame").to_string();
        let py = Command::new("python3")
            .arg(root().join("tests/p4/check.py"))
            .args([dir.to_string_lossy().as_ref(), &hex, &block, "1"])
            .env("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")
            .output()
            .expect("python3 runs");
        let err = String::from_utf8_lossy(&py.stderr);
        assert!(
            !err.contains("ModuleNotFoundError"),
            "python3 lacks p4runtime or scapy: scripts/test-all installs them (pip install p4runtime==1.6.0 scapy==2.8.0)\n{err}"
        );
        assert!(py.status.success(), "{tag}: {err}");
        assert!(
            String::from_utf8_lossy(&py.stdout).starts_with("ok: "),
            "{tag}"
        );
    }
}

#[test]
fn float_data_travels_as_fixed_point_within_the_reported_bound() {
    let text = std::fs::read_to_string(root().join(EXAMPLE))
        .expect("example")
        .replace("dtype: i32;", "dtype: f32;")
        .replace("retries: 3;", "retries: 3;\n    fixed_point: 16;");
    let (_, outs) = run_udp("p4-udp-float", &text, &[], |_| Vec::new());
    passed(&outs);
    for o in &outs {
        assert!(o.contains("largest fixed-point error"), "{o}");
    }
}
