//! `collc compare --vary NAME=V1,V2,...`: one row per value of a file `param` (the Canary
//! paper's sweeps over host counts, concurrency and noise), each row the file checked with that
//! value, at its own collective size and ranks and under its own model; the table, CSV, JSON
//! and the grouped-bar chart say what varied, and bad flags point into the flag.

const FILE: &str = r#"import fat_tree;
param hosts: int = 8;
param bg: number = 1;
topology t = fat_tree(leaves: 4, hosts_per_leaf: 4, spines: 4, host_bw: 100 Gbps, spine_bw: 100 Gbps);
collective allreduce { participants: first(host, hosts); size: 64 KiB; dtype: i32; }
schedule ring;
model congested: packet { placement: random; background: bg; background_size: 16 KiB; }
"#;

mod cli_support;
use cli_support::{collc, fixture};

/// The table with its wrapped prose joined again (continuation lines are indented by two).
fn flat(table: &str) -> String {
    table.replace("\n  ", " ")
}

#[test]
fn one_row_per_value_with_its_ranks_in_every_format() {
    let (dir, f) = fixture("vary-rows", FILE);
    let svg = dir.join("hosts.svg");
    let svg_arg = svg.to_string_lossy().into_owned();
    let base = [
        "compare",
        f.as_str(),
        "--model",
        "congested",
        "--vary",
        "hosts=4,8,12",
        "--families",
        "ring,static_trees,canary",
        "--runs",
        "2",
    ];
    let mut with_plot = base.to_vec();
    with_plot.extend(["--plot", svg_arg.as_str()]);
    let (code, table, err) = collc(&with_plot);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    assert!(
        flat(&table).contains("hosts = 4, 8, 12 (3 values), 64 KiB")
            && flat(&table).contains("(4 at hosts=4, 8 at hosts=8, 12 at hosts=12)"),
        "{table}"
    );
    // The three rows in each panel of families.
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("hosts=")).collect();
    assert!(!rows.is_empty() && rows.len() % 3 == 0, "{table}");
    for (k, r) in rows.iter().enumerate() {
        assert!(
            r.starts_with(["hosts=4 ", "hosts=8 ", "hosts=12 "][k % 3]),
            "{table}"
        );
    }
    // Every family ran at every value: no "-" cells.
    assert!(rows.iter().all(|r| !r.contains(" - ")), "{table}");
    let drawn = std::fs::read_to_string(&svg).expect("the plot");
    assert!(
        drawn.starts_with("<svg") && drawn.contains("hosts=12") && drawn.contains("canary"),
        "{drawn}"
    );
    let (_, again, _) = collc(&with_plot);
    assert_eq!(table, again, "the same command gives the same bytes");
    assert_eq!(drawn, std::fs::read_to_string(&svg).expect("the plot"));

    let mut csv_args = base.to_vec();
    csv_args.extend(["--format", "csv"]);
    let (code, csv, _) = collc(&csv_args);
    assert_eq!(code, 0);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].ends_with(",error,hosts"), "{csv}");
    // Three values, four families (ring, one and four trees, canary).
    assert_eq!(lines.len(), 1 + 3 * 4, "{csv}");
    assert!(lines[1].starts_with("t,allreduce,4,") && lines[1].ends_with(",4"));
    assert!(lines[12].starts_with("t,allreduce,12,") && lines[12].ends_with(",12"));

    let mut json_args = base.to_vec();
    json_args.extend(["--format", "json"]);
    let (code, json, _) = collc(&json_args);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["vary"][0], "hosts");
    assert_eq!(v["sizes"][2]["values"][0], "12");
    assert_eq!(v["sizes"][2]["ranks"], 12);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_model_that_follows_the_param_is_named_per_row() {
    let (dir, f) = fixture("vary-model", FILE);
    let (code, table, err) = collc(&[
        "compare",
        &f,
        "--model",
        "congested",
        "--vary",
        "bg=0,1",
        "--families",
        "ring",
    ]);
    assert_eq!(code, 0, "{err}");
    let table = flat(&table);
    assert!(
        table.contains("background none (model `congested`)")
            && table.contains("at bg=1: packet-level model:")
            && table.contains("background 100% of the other hosts"),
        "{table}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_values_point_at_the_flag_or_name_the_value() {
    let (dir, f) = fixture("vary-errors", FILE);
    let run = |vary: &str| collc(&["compare", &f, "--model", "congested", "--vary", vary]);
    let (code, out, err) = run("hosts=4,,8");
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.contains("error[E0001]")
            && err.contains("an empty value")
            && err.contains("--vary hosts=4,,8"),
        "{err}"
    );
    let (code, _, err) = run("hosts");
    assert_eq!(code, 1);
    assert!(
        err.contains("error[E0001]") && err.contains("no `=`"),
        "{err}"
    );
    let (code, _, err) = run("nope=1,2");
    assert_eq!(code, 1);
    assert!(
        err.contains("error[E0003]") && err.contains("nope"),
        "{err}"
    );
    // One report for the first failing value, naming it.
    let (code, _, err) = run("hosts=4,99,98");
    assert_eq!(code, 1);
    assert!(
        err.contains("error[E0024]")
            && err.contains("with `hosts` = 99 (`--vary`)")
            && !err.contains("= 98"),
        "{err}"
    );
    let (code, _, err) = collc(&["compare", &f, "--vary", "hosts=4", "--sizes", "1KiB"]);
    assert_eq!(code, 1, "clap refuses both: {err}");
    assert!(err.contains("cannot be used with"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn repeated_vary_gives_every_combination() {
    let (dir, f) = fixture("vary-combos", FILE);
    let (code, table, err) = collc(&[
        "compare",
        &f,
        "--model",
        "congested",
        "--vary",
        "hosts=4,8",
        "--vary",
        "bg=0,1",
        "--families",
        "ring",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].ends_with(",error,hosts,bg"), "{table}");
    let tails: Vec<String> = lines[1..]
        .iter()
        .map(|l| l.rsplitn(3, ',').collect::<Vec<_>>()[..2].join(","))
        .collect();
    // The first param slowest: (4,0), (4,1), (8,0), (8,1).
    assert_eq!(tails, ["0,4", "1,4", "0,8", "1,8"], "{table}");
    let (code, table, _) = collc(&[
        "compare",
        &f,
        "--model",
        "congested",
        "--vary",
        "hosts=4,8",
        "--vary",
        "bg=0,1",
        "--families",
        "ring",
    ]);
    assert_eq!(code, 0);
    let table = flat(&table);
    assert!(
        table.contains("hosts x bg (4 combinations), 64 KiB") && table.contains("hosts=8 bg=1"),
        "{table}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_schedule_parameter_that_follows_the_param_changes_its_column() {
    let text = FILE.replace(
        "schedule ring;",
        "param to: time = 1 us;\nschedule canary { timeout: to; }",
    );
    let (dir, f) = fixture("vary-sched", &text);
    let (code, csv, err) = collc(&[
        "compare",
        &f,
        "--model",
        "congested",
        "--vary",
        "to=1us,20us",
        "--families",
        "canary",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0, "{err}");
    let times: Vec<f64> = csv
        .lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .nth(10)
                .and_then(|t| t.parse().ok())
                .expect("time")
        })
        .collect();
    // Every switch waits its timeout before it forwards: 19 us more per tree level.
    assert!(times[1] > times[0] + 19e-6, "{csv}");
    let _ = std::fs::remove_dir_all(&dir);
}
