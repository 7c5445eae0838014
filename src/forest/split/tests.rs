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

fn removed(text: &str, dir: Direction, roots: Roots, optimistic: bool, flows: Flows) -> Logical {
    let mut sources = SourceMap::new();
    let id = sources.add("t.coll".to_string(), text.to_string());
    let c = check(&mut sources, id, &Options::default());
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    let m = c.model.expect("a model");
    let topo = m.topology.as_ref().expect("a topology");
    let ranks = &m.collective.as_ref().expect("a collective").ranks;
    let net = Net::build(topo, ranks, roots, dir).expect("a net");
    let plan = plan::auto(&net, &optimum::optimum(&net));
    remove_switches_with(&net, &plan, optimistic, flows)
}

fn example(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    std::fs::read_to_string(path).expect("readable example")
}

#[test]
fn shortcuts_make_the_plain_flows_splits() {
    // Boxes of GPUs under NVSwitches and NICs (family 2 binds there), a dragonfly, boxes in a
    // full mesh, the paper's Figure 2.
    let cases: Vec<String> = [
        "examples/dgx_a100_2x8.coll",
        "examples/mi250_8plus8.coll",
        "examples/mi250_2x16.coll",
        "examples/dragonfly_small.coll",
        "examples/full_mesh_boxes.coll",
        "examples/forestcoll_fig2.coll",
    ]
    .iter()
    .map(|p| example(p))
    .collect();
    for text in &cases {
        for dir in [Direction::Out, Direction::In] {
            for optimistic in [true, false] {
                // Checked: every family-1 and family-2 value is the plain flow's.
                let fast = removed(text, dir, Roots::All, optimistic, Flows::Checked);
                let plain = removed(text, dir, Roots::All, optimistic, Flows::Plain);
                assert_eq!(arcs(&fast), arcs(&plain), "{text}");
                // ForestColl's inputs have equal bandwidth in and out at every node, so
                // family_2 ran.
                assert!(fast.balanced);
            }
        }
    }
}
