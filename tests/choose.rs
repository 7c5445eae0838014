//! `schedule auto` on the file's topology (src/choose/auto.rs) and MSCCL size windows
//! (src/choose/windows.rs, src/cli/msccl_windows.rs) through the real binary.

use std::process::Command;

fn collc(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(args)
        .output()
        .expect("collc runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn dgx(size: &str) -> tempfile::TempPath {
    let src = format!(
        "import dgx_a100;\ntopology a100 = dgx_a100(clusters: 2);\ncollective allreduce {{ size: {size}; dtype: f32; }}\nschedule auto;\n"
    );
    let f = tempfile::Builder::new()
        .suffix(".coll")
        .tempfile()
        .expect("temp file");
    std::fs::write(f.path(), src).expect("written");
    f.into_temp_path()
}

/// The family `schedule auto` builds, from `--emit model`'s closing note.
fn chosen(size: &str) -> String {
    let f = dgx(size);
    let (code, out, err) = collc(&["build", f.to_str().expect("utf-8"), "--emit", "model"]);
    assert_eq!(code, 0, "{err}");
    let note = out
        .lines()
        .find(|l| l.starts_with("// schedule auto chose "))
        .unwrap_or_else(|| panic!("no note in {out}"));
    note["// schedule auto chose ".len()..]
        .split(' ')
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn auto_is_bandwidth_oriented_for_large_and_latency_oriented_for_small_messages() {
    let big = chosen("64 MiB");
    assert!(["ring", "forest"].contains(&big.as_str()), "64 MiB: {big}");
    let small = chosen("8 B");
    assert!(
        ["recursive_multiplying", "recursive_doubling"].contains(&small.as_str()),
        "8 B: {small}"
    );
}

#[test]
fn auto_says_what_it_weighed_in_the_report() {
    let f = dgx("8 B");
    let (code, out, err) = collc(&["build", f.to_str().expect("utf-8"), "--emit", "report"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("== schedule auto =="), "{out}");
    for fam in [
        "ring",
        "recursive_doubling",
        "recursive_multiplying",
        "forest",
    ] {
        assert!(out.contains(&format!("  {fam} ")), "{fam} missing: {out}");
    }
    assert_eq!(out.matches("<- built").count(), 1, "{out}");
}

#[test]
fn size_windows_cover_every_size_once_and_each_xml_is_valid() {
    let dir = tempfile::tempdir().expect("temp dir");
    let quick = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/quickstart.coll");
    let out_dir = dir.path().join("xml");
    let (code, out, err) = collc(&[
        "build",
        quick,
        "--target",
        "msccl",
        "--size-windows",
        "8B..64MiB",
        "-o",
        out_dir.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 0, "{err}");
    let build_err = err;
    let mut names: Vec<String> = std::fs::read_dir(&out_dir)
        .expect("written")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 2, "{names:?}\n{out}");
    let mut next_min = 0u64;
    for (i, n) in names.iter().enumerate() {
        let path = out_dir.join(n);
        let (code, _, err) = collc(&["check", path.to_str().expect("utf-8")]);
        assert_eq!(code, 0, "{n}: {err}");
        let xml = std::fs::read_to_string(&path).expect("readable");
        let attr = |a: &str| -> u64 {
            let at = xml.find(&format!("{a}=\"")).expect("attribute") + a.len() + 2;
            xml[at..]
                .split('"')
                .next()
                .expect("value")
                .parse()
                .expect("number")
        };
        // Windows follow each other; an XML starts later only where the runtime could not
        // pick it (below one loop of chunks for the first, else named by E0054).
        let min = attr("minBytes");
        assert!(min >= next_min, "{n}");
        if i == 0 {
            assert!(min <= 64, "{n}: {min}");
        } else if min > next_min {
            assert!(
                build_err.contains("E0054"),
                "{n}: starts at {min}, not {next_min}\n{build_err}"
            );
        }
        let max = attr("maxBytes");
        if i + 1 == names.len() {
            assert_eq!(max, 0, "the last window has no upper limit");
        } else {
            assert!(max >= next_min, "{n}");
            next_min = max + 1;
        }
    }
}

/// When `schedule auto` picks a forest, the build lowers the forests it weighed: the solver's
/// steps (`-v`) run once, in the choice, where `schedule forest` shows them in the build.
#[test]
fn a_forest_auto_picks_is_not_solved_again() {
    let example = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/dgx_a100_2x8.coll"
    ))
    .expect("example");
    let start = example
        .find("schedule forest {")
        .expect("a forest schedule");
    let end = start + example[start..].find('}').expect("closed") + 1;
    let dir = tempfile::tempdir().expect("temp dir");
    let run = |name: &str, schedule: &str| {
        let path = dir.path().join(name);
        std::fs::write(
            &path,
            format!("{}{schedule}{}", &example[..start], &example[end..]),
        )
        .expect("written");
        let ir = dir.path().join(format!("{name}.ir"));
        let (code, _, err) = collc(&[
            "build",
            path.to_str().expect("utf-8"),
            "--emit",
            "ir",
            "-o",
            ir.to_str().expect("utf-8"),
            "-v",
        ]);
        assert_eq!(code, 0, "{err}");
        (err, std::fs::read(&ir).expect("IR written"))
    };
    let (auto, auto_ir) = run("auto.coll", "schedule auto;");
    assert!(auto.contains("schedule auto chose forest"), "{auto}");
    assert!(!auto.contains("solve: capacities"), "solved again:\n{auto}");
    let (direct, direct_ir) = run("forest.coll", "schedule forest;");
    assert!(direct.contains("solve: capacities"), "{direct}");
    assert_eq!(auto_ir, direct_ir);
}
