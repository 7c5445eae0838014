//! Sweeps that spread (issue 40): `collc compare --shard K/N` runs one part of a sweep,
//! `--merge` puts the parts back together, and the result is byte-identical to one run without
//! shards: the table, CSV, JSON and chart, over sizes and over `--vary` values. Parts of
//! another sweep, a missing part and a malformed part are refused with a diagnostic.

mod cli_support;

use cli_support::collc;
use std::path::Path;

const QUICK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/quickstart.coll");

/// Runs `base` as 3 shards into `dir`, and returns the parts' paths.
fn shards(base: &[&str], dir: &Path) -> Vec<String> {
    (1..=3)
        .map(|k| {
            let path = dir.join(format!("part{k}.json")).display().to_string();
            let shard = format!("{k}/3");
            let mut args = base.to_vec();
            args.extend(["--shard", &shard, "-o", &path]);
            let (code, _, err) = collc(&args);
            assert_eq!(code, 0, "{err}");
            path
        })
        .collect()
}

#[test]
fn three_shards_merge_to_the_unsharded_sweep_byte_for_byte() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("hosts.coll");
    std::fs::write(
        &file,
        "import ring;\nparam hosts: int = 8;\ntopology t = ring(n: hosts, bw: 25 GB/s);\n\
         collective allreduce { size: 4 MiB; }\nschedule ring;\n",
    )
    .expect("write");
    let file = file.to_str().expect("utf-8");
    let sweeps: [&[&str]; 2] = [
        &["compare", QUICK, "--sizes", "1KiB..1MiB"],
        &["compare", file, "--vary", "hosts=4,8,16,6"],
    ];
    for base in sweeps {
        let parts = shards(base, dir.path());
        for format in ["table", "csv", "json"] {
            let mut one = base.to_vec();
            one.extend(["--format", format]);
            let mut merged = one.clone();
            merged.push("--merge");
            merged.extend(parts.iter().map(String::as_str));
            let (a, b) = (collc(&one), collc(&merged));
            assert!(a.0 == 0 && b.0 == 0, "{base:?} {format}: {} {}", a.2, b.2);
            assert!(!a.1.is_empty());
            assert_eq!(a.1, b.1, "{base:?} as {format}");
        }
        // The chart too.
        let (svg1, svg2) = (dir.path().join("one.svg"), dir.path().join("merged.svg"));
        let mut one = base.to_vec();
        one.extend(["--plot", svg1.to_str().expect("utf-8")]);
        let mut merged = base.to_vec();
        merged.extend(["--plot", svg2.to_str().expect("utf-8"), "--merge"]);
        merged.extend(parts.iter().map(String::as_str));
        assert!(collc(&one).0 == 0 && collc(&merged).0 == 0);
        assert_eq!(
            std::fs::read(&svg1).expect("chart"),
            std::fs::read(&svg2).expect("chart")
        );
    }
}

#[test]
fn missing_foreign_and_malformed_parts_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = ["compare", QUICK, "--sizes", "1KiB..64KiB"];
    let parts = shards(&base, dir.path());
    let stderr = |args: &[&str]| {
        let (code, _, err) = collc(args);
        assert_eq!(code, 1, "{args:?}");
        err
    };
    // One shard short.
    let mut args = base.to_vec();
    args.extend(["--merge", &parts[0], &parts[2]]);
    let e = stderr(&args);
    assert!(
        e.contains("E0024") && e.contains("the parts lack row 2"),
        "{e}"
    );
    // Parts of a sweep over other sizes.
    let args = [
        "compare",
        QUICK,
        "--sizes",
        "1KiB..16KiB",
        "--merge",
        &parts[0],
        &parts[1],
        &parts[2],
    ];
    let e = stderr(&args);
    assert!(e.contains("is a part of another sweep"), "{e}");
    // Not a part.
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"cells\": []}").expect("write");
    let mut args = base.to_vec();
    args.extend(["--merge", junk.to_str().expect("utf-8")]);
    let e = stderr(&args);
    assert!(e.contains("is not a part of a sharded sweep"), "{e}");
    // A bad shard.
    let mut args = base.to_vec();
    args.extend(["--shard", "4/3"]);
    let e = stderr(&args);
    assert!(e.contains("K runs from 1 to N"), "{e}");
}
