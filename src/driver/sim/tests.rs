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
