//! `collc sim` on an in-network schedule that the flow model cannot run (issue 41's newcomer
//! paper cut): the help names the file's `packet` models as `--model NAME`, or says how to
//! declare one.

fn sim(name: &str, src: &str) -> (i32, String) {
    let dir = std::env::temp_dir().join(format!("collc-in-network-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, src).expect("write");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(["sim", path.to_str().expect("utf-8")])
        .output()
        .expect("collc runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const TREES: &str = "topology t { compute host[4]; switch sw; for i in 0..4 { link host[i] <-> sw : 100 Gbps, latency 300 ns; } }\n\
collective allreduce { size: 64 KiB; dtype: i32; op: sum; }\n\
schedule static_trees;\n";

#[test]
fn help_names_the_files_packet_models() {
    let two = format!("{TREES}model pkt: packet;\nmodel lossy: packet {{ loss: 0.01; }}\n");
    let (rc, err) = sim("two.coll", &two);
    assert_eq!(rc, 1, "{err}");
    assert!(
        err.contains("help: simulate it at packet level with one of the file's packet models: `--model pkt` or `--model lossy`"),
        "{err}"
    );
    assert!(!err.contains("once it lands"), "{err}");
    let flow = format!("{TREES}model f: flow;\nmodel pkt: packet;\ntarget sim {{ model: f; }}\n");
    let (rc, err) = sim("flow.coll", &flow);
    assert_eq!(rc, 1, "{err}");
    assert!(
        err.contains("help: simulate it at packet level with `--model pkt`"),
        "{err}"
    );
    let none = format!("{TREES}model f: flow;\n");
    let (rc, err) = sim("none.coll", &none);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("declare `model pkt: packet;`"), "{err}");
}
