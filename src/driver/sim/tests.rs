//! The simulation job's outcomes as values: figures from the engine's result, a schedule that
//! cannot finish as an outcome with its errors, and requests a `.goal` file does not take.

use super::{Engine, SimRequest, sim_goal};
use crate::diag::Code;
use crate::driver::{Input, LoadOptions};
use crate::progress::Quiet;

fn goal(text: &str, req: &SimRequest) -> Result<super::SimOutcome, crate::driver::Failure> {
    sim_goal(
        &Input::text("t.goal", text),
        &LoadOptions::default(),
        req,
        &Quiet,
    )
}

#[test]
fn a_goal_runs_figures_are_the_engines() {
    // Two calcs on rank 0 one after the other, one on rank 1.
    let text =
        "num_ranks 2\nrank 0 {\na: calc 5\nb: calc 7\nb requires a\n}\nrank 1 {\ncalc 3\n}\n";
    let o = goal(text, &SimRequest::default()).expect("runs");
    assert_eq!(o.kind, Engine::LogGP);
    assert!(o.complete && o.unfinished.is_none());
    assert_eq!(o.ranks, vec![12e-9, 3e-9]);
    assert_eq!(o.seconds, 12e-9);
    assert_eq!(
        (o.bytes, o.algbw, o.busbw, o.utilisation),
        (None, None, None, None)
    );
    assert!(
        o.engine.starts_with("LogGP: L=2500, o=1500"),
        "{}",
        o.engine
    );
    assert!(
        o.text
            .ends_with("Maximum finishing time at host 0: 12 (1.2e-08 s)\n"),
        "{}",
        o.text
    );
    assert!(o.trace_json.is_none());
    let traced = goal(
        text,
        &SimRequest {
            trace: true,
            batch: true,
            ..SimRequest::default()
        },
    )
    .expect("runs");
    assert_eq!(
        traced.text,
        "Maximum finishing time at host 0: 12 (1.2e-08 s)\n"
    );
    assert!(traced.trace_json.is_some_and(|j| j.contains("traceEvents")));
}

#[test]
fn a_goal_that_cannot_finish_is_an_outcome_with_its_errors() {
    // Both sends are above the eager limit, so each waits for a receive posted after it.
    let text = "num_ranks 2\nrank 0 {\ns: send 100000b to 1\nr: recv 8b from 1\nr requires s\n}\nrank 1 {\ns: send 100000b to 0\nr: recv 8b from 0\nr requires s\n}\n";
    let o = goal(text, &SimRequest::default()).expect("an outcome");
    assert!(!o.complete);
    assert!(o.text.contains("unexpected queue on host 1"), "{}", o.text);
    let f = o.unfinished.expect("why");
    assert!(f.diagnostics.iter().all(|d| d.code == Code::GoalInvalid));
    assert!(f.render().contains("t.goal:3:1"), "{}", f.render());
}

#[test]
fn a_goal_file_takes_no_model() {
    let req = SimRequest {
        model: Some("m".into()),
        ..SimRequest::default()
    };
    let f = goal("num_ranks 1\nrank 0 {\ncalc 1\n}\n", &req).expect_err("refused");
    assert_eq!(f.diagnostics[0].code, Code::CommandLine);
}

/// Phases a job enters, in order.
#[derive(Default)]
struct Phases(std::sync::Mutex<Vec<crate::progress::Phase>>);

impl crate::progress::Progress for Phases {
    fn phase(&self, p: crate::progress::Phase, _: Option<u64>) {
        if let Ok(mut v) = self.0.lock() {
            v.push(p);
        }
    }
}

#[test]
fn a_flow_simulation_says_when_it_lowers_and_when_it_simulates() {
    // `-v` charged a ring's channel search, lowering and simulation to "parse/check".
    use crate::progress::Phase;
    let src = "topology t { compute gpu[4]; switch s; for i in 0..4 { link gpu[i] <-> s : 10 GB/s; } } \
               collective allgather { size: 1 MiB; dtype: f32; } schedule ring;";
    let session = crate::driver::load(&Input::text("t.coll", src), &LoadOptions::default())
        .unwrap_or_else(|_| panic!("loads"));
    let log = Phases::default();
    let o = session
        .sim(&SimRequest::default(), &log)
        .unwrap_or_else(|_| panic!("runs"));
    assert_eq!(o.kind, Engine::Flow);
    let seen = log.0.lock().map(|v| v.clone()).unwrap_or_default();
    let at = |p: Phase| seen.iter().position(|&x| x == p);
    assert!(
        at(Phase::Lower).is_some() && at(Phase::Lower) < at(Phase::Simulate),
        "{seen:?}"
    );
}
