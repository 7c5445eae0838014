//! Topology-derived costs pinned against hand-computed cases: the round model
//! (src/cost/rounds.rs) and the flow-level simulation (src/sim/fluid) on one link, a ring, and
//! a two-level tree whose uplink two messages share; and `collc sim` on the quickstart follows
//! the link bandwidth the file declares.

use collc::net::{Net, for_file};
use collc::sema::model::Model;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;

fn model(src: &str) -> Model {
    let mut files = collc::diag::SourceMap::new();
    let id = files.add("test.coll", src.to_string());
    let c = collc::sema::check(&mut files, id, &collc::sema::Options::default());
    assert!(c.diagnostics.is_empty(), "{:#?}", c.diagnostics);
    c.model.expect("a model")
}

/// (round model, flow simulation) in seconds.
fn costs(src: &str) -> (BigRational, f64) {
    let m = model(src);
    let params = for_file(&m, None);
    let net = Net::new(m.topology.as_ref().expect("a topology"));
    let low = collc::sim::fluid::lower(&m, &params).expect("lowers");
    let rounds = low.round_cost(&net, &params).expect("runs").seconds;
    let sim = low.simulate(&net, &params, false).expect("runs").seconds();
    (rounds, sim)
}

/// `num / den` seconds.
fn secs(num: i64, den: i64) -> BigRational {
    BigRational::new(BigInt::from(num), BigInt::from(den))
}

fn close(sim: f64, exact: &BigRational) {
    let e = exact.to_f64().expect("finite");
    assert!((sim - e).abs() <= e * 1e-9, "simulated {sim}, expected {e}");
}

#[test]
fn one_link_both_ways() {
    // Each rank sends its 1 MiB to the other over its own direction of the link: one round of
    // 1 MiB / 10 GB/s, plus 2 us of link latency and the declared 500 ns overhead.
    let (r, s) = costs(
        "topology t { compute h[2]; link h[0] <-> h[1] : 10 GB/s, latency 2 us; }
         collective allreduce { size: 1 MiB; dtype: f32; }
         schedule recursive_doubling;
         model f: flow { overhead: 500 ns; }",
    );
    let want = secs(1_048_576, 10_000_000_000) + secs(25, 10_000_000);
    assert_eq!(r, want);
    close(s, &want);
}

#[test]
fn ring_allreduce_on_a_ring() {
    // 2 (N - 1) = 6 steps, each moving M / N = 1 MiB over every link (8 GB/s), 1 us of link
    // latency and the default 1 us overhead.
    let (r, s) = costs(
        "topology t { compute h[4]; for i in 0..4 { link h[i] <-> h[(i + 1) % 4] : 8 GB/s, latency 1 us; } }
         collective allreduce { size: 4 MiB; dtype: f32; }
         schedule ring;",
    );
    let want =
        (secs(1_048_576, 8_000_000_000) + secs(2, 1_000_000)) * BigRational::from_integer(6.into());
    assert_eq!(r, want);
    close(s, &want);
}

#[test]
fn two_level_tree_shares_its_uplink() {
    // Hosts 0, 1 under s0 and 2, 3 under s1, every link 10 GB/s. Recursive doubling: one round
    // stays under a switch (1 MiB per link), the other sends two 1 MiB messages each way over
    // the one uplink (2 MiB on it): (1 + 2) MiB / 10 GB/s and 1 us overhead per round.
    let (r, s) = costs(
        "topology t {
             compute h[4]; switch s[2];
             for i in 0..4 { link h[i] <-> s[floor(i / 2)] : 10 GB/s; }
             link s[0] <-> s[1] : 10 GB/s;
         }
         collective allreduce { size: 1 MiB; dtype: f32; }
         schedule recursive_doubling;",
    );
    let want = secs(3 * 1_048_576, 10_000_000_000) + secs(2, 1_000_000);
    assert_eq!(r, want);
    close(s, &want);
}

#[test]
fn quickstart_time_follows_the_declared_bandwidth() {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/quickstart.coll"
    ))
    .expect("the example");
    let (_, at25) = costs(&src);
    let (_, at400) = costs(&src.replace("25 GB/s", "400 GB/s"));
    // Tens to hundreds of microseconds for 1 MiB at 25 GB/s, not milliseconds.
    assert!(at25 > 40e-6 && at25 < 1e-3, "{at25}");
    assert!(at400 < at25 / 4.0, "{at400} against {at25}");
}

#[test]
fn round_model_and_simulation_agree_on_the_quickstart_for_every_host_family() {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/quickstart.coll"
    ))
    .expect("the example");
    let head = &src[..src
        .find("schedule recursive_multiplying")
        .expect("a schedule")];
    for schedule in [
        "schedule recursive_multiplying { stages: [a2, a4]; }",
        "schedule recursive_multiplying { stages: auto; }",
        "schedule recursive_doubling;",
        "schedule ring;",
    ] {
        let (r, s) = costs(&format!("{head}{schedule}\n"));
        let r = r.to_f64().expect("finite");
        assert!(
            (r - s).abs() <= 0.2 * s,
            "{schedule}: round model {r}, simulation {s}"
        );
    }
}

/// A GPU runtime's costs (src/net/gpu.rs): a 4-rank ring allgather over two boxes under NCCL's
/// Simple protocol pays the launch (8.4 us) and its slowest chain of three ring steps: two that
/// cross between the boxes (9.6 us each) around one inside a box (3.4 us); without a declared
/// runtime there are none.
#[test]
fn gpu_runtime_costs_are_the_tuning_tables() {
    let src = |model: &str| {
        format!(
            "topology t {{ compute gpu[2][2]; switch nvs[2]; switch ib;
               for b in 0..2 {{ for i in 0..2 {{ link gpu[b][i] <-> nvs[b] : 300 GB/s; }}
                 link gpu[b][0] <-> ib : 25 GB/s; }} }}
             collective allgather {{ size: 16 B; dtype: f32; }}
             {model}
             schedule ring;"
        )
    };
    let load = |text: String| {
        let mut sources = collc::diag::SourceMap::new();
        let id = sources.add("gpu.coll", text);
        let c = collc::sema::check(&mut sources, id, &collc::sema::Options::default());
        assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
        c.model.expect("model")
    };
    let m = load(src("model g: flow { runtime: nccl; proto: simple; }"));
    let params = collc::net::for_file(&m, None);
    assert!(
        params.describe().starts_with("GPU runtime nccl"),
        "{}",
        params.describe()
    );
    let family = m.schedule.as_ref().expect("schedule").family.clone();
    let run = collc::choose::evaluate(&m, &family, 16, &params).expect("runs");
    let us = run.seconds() * 1e6;
    assert!((us - (8.4 + 2.0 * 9.6 + 3.4)).abs() < 0.01, "{us} us");
    // `collc sim` and the report run one simulation: the declared protocol's steps.
    assert_eq!(collc::net::fmt_ns(&params.overhead), "3400");
    let plain = load(src(""));
    assert_eq!(collc::net::for_file(&plain, None).runtime, None);
}
