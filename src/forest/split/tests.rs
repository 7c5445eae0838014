//! The flow shortcuts of switch removal ([`Warm`] for family 1, [`family_2`] on balanced
//! graphs) give each of Theorem 8's flows the plain flow's value, and so exactly its splits, on
//! example topologies with switches.

use super::*;
use crate::diag::SourceMap;
use crate::forest::{Direction, Roots, optimum, plan};
use crate::sema::{Options, check};

/// Every arc of the switch-free graph with its capacity and pieces.
fn arcs(lg: &Logical) -> Vec<(usize, usize, i64, Vec<Piece>)> {
    let mut v = Vec::new();
    for (u, out) in lg.out.iter().enumerate() {
        for (&t, &a) in out {
            v.push((u, t, lg.cap(a), lg.pieces[a / 2].clone()));
        }
    }
    v
}

/// The net of `text`'s collective and its automatic plan.
fn planned(text: &str, dir: Direction, roots: Roots) -> (Net, Plan) {
    let mut sources = SourceMap::new();
    let id = sources.add("t.coll".to_string(), text.to_string());
    let c = check(&mut sources, id, &Options::default());
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    let m = c.model.expect("a model");
    let topo = m.topology.as_ref().expect("a topology");
    let ranks = &m.collective.as_ref().expect("a collective").ranks;
    let net = Net::build(topo, ranks, roots, dir).expect("a net");
    let plan = plan::auto(&net, &optimum::optimum(&net));
    (net, plan)
}

fn removed(text: &str, dir: Direction, roots: Roots, pass: Pass, flows: Flows) -> Logical {
    let (net, plan) = planned(text, dir, roots);
    remove_switches_with(&net, &plan, pass, flows)
}

/// Boxes of GPUs under NVSwitches and NICs (family 2 binds there), a dragonfly, boxes in a full
/// mesh, the paper's Figure 2.
const CASES: [&str; 6] = [
    "examples/dgx_a100_2x8.coll",
    "examples/mi250_8plus8.coll",
    "examples/mi250_2x16.coll",
    "examples/dragonfly_small.coll",
    "examples/full_mesh_boxes.coll",
    "examples/forestcoll_fig2.coll",
];

fn example(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    std::fs::read_to_string(path).expect("readable example")
}

#[test]
fn shortcuts_make_the_plain_flows_splits() {
    let cases: Vec<String> = CASES.iter().map(|p| example(p)).collect();
    for text in &cases {
        for dir in [Direction::Out, Direction::In] {
            for pass in [Pass::Optimistic, Pass::Exact] {
                // Checked: every family-1 and family-2 value is the plain flow's.
                let fast = removed(text, dir, Roots::All, pass, Flows::Checked);
                let plain = removed(text, dir, Roots::All, pass, Flows::Plain);
                assert_eq!(arcs(&fast), arcs(&plain), "{text}");
                // ForestColl's inputs have equal bandwidth in and out at every node, so
                // family_2 ran.
                assert!(fast.balanced);
            }
        }
    }
}

/// Theorem 10 by one plain flow per rank, as the paper states it.
fn holds_plainly(lg: &mut Logical) -> bool {
    let (s, d) = (lg.s, lg.demand);
    (0..lg.is_rank.len())
        .filter(|&v| lg.is_rank[v])
        .all(|v| lg.flow.max_flow(s, v, d) >= d)
}

#[test]
fn a_leap_that_holds_is_the_optimistic_pass() {
    let (mut held, mut failed) = (0, 0);
    for name in CASES {
        let text = example(name);
        for dir in [Direction::Out, Direction::In] {
            let optimistic = removed(&text, dir, Roots::All, Pass::Optimistic, Flows::Shortcuts);
            for tail in [0, 1, 2, 4, 8] {
                let mut leap = removed(&text, dir, Roots::All, Pass::Leap(tail), Flows::Shortcuts);
                let ok = holds(&mut leap);
                // The twin and turned-around shortcuts of `holds` give the paper's answer.
                assert_eq!(ok, holds_plainly(&mut leap), "{name} tail {tail}");
                if ok {
                    assert_eq!(arcs(&leap), arcs(&optimistic), "{name} tail {tail}");
                    held += usize::from(leap.leapt());
                } else {
                    assert!(leap.leapt(), "{name} tail {tail}: only a leap can fail");
                    failed += 1;
                }
            }
        }
    }
    // Both outcomes occur: the check is not vacuous.
    assert!(held > 0 && failed > 0, "held {held}, failed {failed}");
}

#[test]
fn a_failed_leap_falls_back_to_the_same_forest() {
    // MI250 2x16's one switch binds (family 2), so leaping over it fails Theorem 10; the
    // solver then runs the optimistic pass and packs the same trees as without leaping.
    let text = example("examples/mi250_2x16.coll");
    let (net, plan) = planned(&text, Direction::Out, Roots::All);
    let mut leap = remove_switches(&net, &plan, Pass::Leap(0));
    assert!(leap.leapt() && !holds(&mut leap));
    let batches = |tail| {
        let (lg, b) = crate::forest::switch_free_forest(&net, &plan, tail).expect("packs");
        let b: Vec<_> = b.iter().map(|b| (b.root, b.m, b.edges.clone())).collect();
        (arcs(&lg), b)
    };
    assert_eq!(batches(0), batches(usize::MAX));
}
