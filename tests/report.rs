//! `collc build FILE --emit report`'s modelled-cost section, as a user runs it: the stage list
//! recursive multiplying builds with its cost stage by stage, recursive doubling's cost beside it
//! and, for fixed lists, what `stages: auto` would choose (snapshots); and the stage list the
//! report names is the one `collc build` lowers.

use std::process::Command;

fn collc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_collc"))
}

/// A star of `n` hosts with an 8-byte allreduce under `schedule`, plus `extra` declarations.
fn file(n: u32, schedule: &str, extra: &str) -> String {
    format!(
        "generator star(n: int) {{
    compute host[n];
    switch sw;
    for i in 0..n {{ link host[i] <-> sw : 25 GB/s; }}
}}
topology t = star({n});
collective allreduce {{ size: 8 B; dtype: f64; op: sum; }}
{extra}
{schedule}
"
    )
}

fn run(name: &str, text: &str, emit: &str) -> String {
    let dir = std::env::temp_dir().join(format!("collc-report-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(format!("{name}.coll"));
    std::fs::write(&path, text).expect("write");
    let out = collc()
        .args(["build", "--emit", emit])
        .arg(&path)
        .output()
        .expect("runs collc");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The report's `== modelled cost ==` section, without its title.
fn section(report: &str) -> String {
    let start = report
        .find("== modelled cost ==\n")
        .unwrap_or_else(|| panic!("no modelled cost section in\n{report}"));
    let body = &report[start + "== modelled cost ==\n".len()..];
    body[..body.find("\n==").unwrap_or(body.len())].to_string()
}

/// The stage list in the IR's `name` line (`name "recursive_multiplying [a7]"`).
fn built_stages(ir: &str) -> String {
    let line = ir
        .lines()
        .find(|l| l.starts_with("name "))
        .expect("a name line");
    line[line.find('[').expect("a stage list")..line.rfind(']').expect("closed") + 1].to_string()
}

const ARIES: &str =
    "model aries: pipelining_postal { alpha_p: 500 ns; alpha_r: 100 ns; beta: 0.4 ns/B; }";

#[test]
fn auto_stages_report_their_cost_beside_recursive_doubling() {
    // The only latency model is used without being named, by the report and by the lowering.
    let text = file(7, "schedule recursive_multiplying { stages: auto; }", ARIES);
    let s = section(&run("auto7", &text, "report"));
    insta::assert_snapshot!("report_auto_7", s);
    let chosen = s
        .lines()
        .find_map(|l| l.trim().strip_prefix("chosen: "))
        .expect("a chosen line");
    let built = built_stages(&run("auto7ir", &text, "ir"));
    assert!(chosen.starts_with(&built), "report {chosen}, built {built}");
}

#[test]
fn fixed_stages_and_recursive_doubling_report_the_auto_choice() {
    let rm = file(
        12,
        "schedule recursive_multiplying { stages: [a2, a2, a3]; }",
        "",
    );
    insta::assert_snapshot!("report_fixed_12", section(&run("fixed12", &rm, "report")));
    let rd = file(6, "schedule recursive_doubling;", ARIES);
    insta::assert_snapshot!("report_doubling_6", section(&run("rd6", &rd, "report")));
}

#[test]
fn schedule_auto_on_allreduce_reports_recursive_multiplying() {
    let text = file(16, "schedule auto;", "");
    let s = section(&run("sched16", &text, "report"));
    assert!(s.starts_with("recursive multiplying, stages: auto"), "{s}");
    let built = built_stages(&run("sched16ir", &text, "ir"));
    assert!(
        s.contains(&format!("chosen: {built}")),
        "{s}\nbuilt {built}"
    );
}

#[test]
fn other_families_have_no_modelled_cost_section() {
    let text = file(4, "schedule ring;", "");
    let report = run("ring4", &text, "report");
    assert!(!report.contains("modelled cost"), "{report}");
}

/// A schedule MSCCL cannot hold (2,048 ranks: more GPUs than the executor reads) still gets
/// its report: the costs, and an msccl section that says why there is no XML. Its stage list
/// is the cheapest that lowers within the op limit, and the IR is built with it.
#[test]
fn a_schedule_beyond_msccl_still_reports_its_costs() {
    let r = run(
        "beyond-msccl",
        &file(2048, "schedule recursive_multiplying { stages: auto; }", ""),
        "report",
    );
    // The cheapest list (one all-to-all stage, 12.6 M ops) is over the op limit: the choice
    // is the cheapest with narrower bases, and the model line says so.
    let cost = section(&r);
    assert!(
        cost.contains("chosen: [m8g8a51, n8g8a40]")
            && cost.contains("stages: auto takes bases of at most 1024"),
        "{r}"
    );
    let msccl = &r[r.find("== msccl ==\n").expect("an msccl section")..];
    assert!(
        msccl.contains("this schedule cannot be written as MSCCL XML:")
            && msccl.contains("error[E0040]"),
        "{msccl}"
    );
    let ir = run(
        "beyond-msccl-ir",
        &file(2048, "schedule recursive_multiplying { stages: auto; }", ""),
        "ir",
    );
    assert_eq!(built_stages(&ir), "[m8g8a51, n8g8a40]");
}
