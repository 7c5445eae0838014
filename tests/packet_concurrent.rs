//! The packet model's `concurrent: K` (K instances of the collective at once on disjoint hosts,
//! Canary's tenants splitting every switch's descriptor table; the paper's Fig. 10) and host
//! `noise` (a host delays a packet it sends by `noise_delay` with a probability; Fig. 11),
//! through `collc sim`: what runs, what the report says, and the errors for values that cannot
//! work.

fn file(schedule: &str, model: &str) -> String {
    format!(
        r#"import fat_tree;
param k: int = 2;
topology t = fat_tree(leaves: 4, hosts_per_leaf: 4, spines: 4, host_bw: 100 Gbps, spine_bw: 100 Gbps);
collective allreduce {{ participants: first(host, floor(16 / k)); size: 64 KiB; dtype: i32; }}
schedule {schedule}
model m: packet {{ {model} }}
"#
    )
}

mod cli_support;
use cli_support::collc;

/// The fixture `text` in a directory of its own.
fn write(tag: &str, text: &str) -> (std::path::PathBuf, String) {
    cli_support::fixture(&format!("conc-{tag}"), text)
}

/// The goodput of each run in the report's runs table.
fn goodputs(report: &str) -> Vec<f64> {
    report
        .lines()
        .filter(|l| l.starts_with("  ") && l.contains(" Gb/s") && l.contains(": "))
        .filter_map(|l| {
            let g = l.split(", ").find(|f| f.ends_with(" Gb/s"))?;
            g.trim_end_matches(" Gb/s").parse().ok()
        })
        .collect()
}

#[test]
fn concurrent_instances_run_on_disjoint_hosts_for_every_family() {
    for (tag, schedule) in [
        ("ring", "ring;"),
        ("trees", "static_trees { trees: 2; }"),
        ("canary", "canary { }"),
    ] {
        let (dir, f) = write(tag, &file(schedule, "placement: random; concurrent: k;"));
        let (code, out, err) = collc(&["sim", &f, "--runs", "2"]);
        assert_eq!(code, 0, "{tag}: {err}");
        assert!(
            out.contains(", 2 concurrent instances (model `m`)")
                && out.contains("2 concurrent instances on disjoint hosts: average goodput"),
            "{tag}: {out}"
        );
        assert_eq!(goodputs(&out).len(), 2, "{tag}: {out}");
        let (_, again, _) = collc(&["sim", &f, "--runs", "2"]);
        assert_eq!(out, again, "{tag}: deterministic");
        // Four instances of four hosts each fill the 16 hosts.
        let (code, out, err) = collc(&["sim", &f, "--param", "k=4"]);
        assert_eq!(code, 0, "{tag}: {err}");
        assert!(
            out.contains("4 concurrent instances on disjoint hosts"),
            "{out}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn one_instance_and_no_noise_run_exactly_as_without_the_parameters() {
    let (dir, plain) = write("plain", &file("canary { }", "placement: random;"));
    let (dir2, same) = write(
        "same",
        &file("canary { }", "placement: random; concurrent: 1; noise: 0;"),
    );
    let (_, a, _) = collc(&["sim", &plain, "--param", "k=1", "--runs", "2"]);
    let (_, b, _) = collc(&["sim", &same, "--param", "k=1", "--runs", "2"]);
    let strip = |s: &str| s.replace(&plain, "F").replace(&same, "F");
    assert_eq!(strip(&a), strip(&b));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir2);
}

#[test]
fn noise_delays_packets_and_slows_every_family() {
    for (tag, schedule) in [("ring", "ring;"), ("canary", "canary { }")] {
        let (dir, f) = write(
            &format!("noise-{tag}"),
            &file(
                schedule,
                "placement: random; noise: 0.2; noise_delay: 2 us;",
            ),
        );
        let (dir2, q) = write(
            &format!("quiet-{tag}"),
            &file(schedule, "placement: random;"),
        );
        let (code, noisy, err) = collc(&["sim", &f, "--param", "k=1"]);
        assert_eq!(code, 0, "{err}");
        assert!(
            noisy.contains("host noise: 20% of packets delayed 2000 ns"),
            "{noisy}"
        );
        let (_, quiet, _) = collc(&["sim", &q, "--param", "k=1"]);
        let ns = |r: &str| -> u64 {
            let l = r
                .lines()
                .find(|l| l.starts_with("time "))
                .expect("time line");
            let ps = l.split('(').nth(1).and_then(|x| x.split(' ').next());
            ps.and_then(|x| x.parse().ok()).expect("ps")
        };
        // A fifth of the packets 2 us late, the others going on meanwhile: the last late packet
        // ends the run later, by about its delay (and Canary's stragglers cost more).
        assert!(
            ns(&noisy) > ns(&quiet) + 1_000_000,
            "{tag}: {} vs {}",
            ns(&noisy),
            ns(&quiet)
        );
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&dir2);
    }
}

#[test]
fn values_that_cannot_work_are_coded_errors() {
    for (tag, model, code, words) in [
        (
            "zero",
            "concurrent: 0;",
            "E0024",
            "is not a number of instances",
        ),
        (
            "half",
            "concurrent: 1.5;",
            "E0024",
            "is not a number of instances",
        ),
        ("noise", "noise: 2;", "E0024", "is above 1"),
        ("delay", "noise_delay: 3 MiB;", "E0005", "noise_delay"),
    ] {
        let (dir, f) = write(tag, &file("ring;", model));
        let (c, _, err) = collc(&["check", &f]);
        assert_eq!(c, 1, "{tag}");
        assert!(
            err.contains(&format!("error[{code}]")) && err.contains(words),
            "{tag}: {err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    // Three instances of eight hosts do not fit sixteen.
    let (dir, f) = write("fit", &file("ring;", "concurrent: 3;"));
    let (c, _, err) = collc(&["sim", &f]);
    assert_eq!(c, 1);
    assert!(
        err.contains("error[E0024]")
            && err.contains("3 concurrent instances of 8 participants need 24 compute nodes"),
        "{err}"
    );
    // More concurrent Canary allreduces than descriptors.
    let (dir2, f) = write(
        "table",
        &file(
            "canary { table_size: 2; }",
            "placement: random; concurrent: k;",
        ),
    );
    let (c, _, err) = collc(&["sim", &f, "--param", "k=4"]);
    assert_eq!(c, 1);
    assert!(
        err.contains("4 concurrent allreduces cannot share a table of 2 descriptors"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir2);
}

#[test]
fn plan_gives_disjoint_instances_and_background_outside_them() {
    use collc::diag::SourceMap;
    use collc::sim::packet::{Background, Network, PacketParams, plan};
    let text = file("ring;", "placement: random;");
    let mut sources = SourceMap::new();
    let id = sources.add("c.coll".to_string(), text);
    let c = collc::sema::check(&mut sources, id, &collc::sema::Options::default());
    let m = c.model.expect("checks");
    let network = Network::new(m.topology.as_ref().expect("topology"));
    let declared: Vec<u32> = m.collective.as_ref().expect("collective").ranks[..4]
        .iter()
        .map(|&r| r as u32)
        .collect();
    for random in [false, true] {
        for seed in 1..4 {
            let params = PacketParams {
                concurrent: 3,
                random_placement: random,
                background: Background::Fraction(1.0),
                ..PacketParams::default()
            };
            let (instances, background) = plan(&network, &declared, &params, seed).expect("fits");
            assert_eq!(instances.len(), 3);
            assert!(instances.iter().all(|i| i.len() == 4));
            if !random {
                assert_eq!(instances[0], declared, "instance 0 where it is declared");
            }
            let mut all: Vec<u32> = instances.iter().flatten().copied().collect();
            all.extend(&background);
            let n = all.len();
            all.sort_unstable();
            all.dedup();
            assert_eq!(all.len(), n, "instances and background are disjoint");
            assert_eq!(n, 16, "every other host congests");
        }
    }
}
