//! Pipelining postal parameters derived from the network a file describes, for `stages: auto`,
//! `--emit report` and hover when no latency model (postal, pipelining postal, LogGP) is named
//! or is the only one declared: `alpha_p` is the flow model's per-message `overhead` plus the
//! longest route latency from rank 0 to another rank, `alpha_r = 0` (a rank's messages overlap
//! in the network; what they share is bandwidth), `beta` is one over the lowest bottleneck
//! bandwidth of those routes (so `b` messages from one rank cost `b n beta` through its link:
//! eq. 3's sharing of the sender's link), and `gamma` is the flow model's. The full picture,
//! with every link shared by every message of a step, is the round model
//! ([`super::rounds`]) and the flow-level simulation; both are shown beside this in reports.

use super::{Params, report::Basis, schedule_model};
use crate::net::{FlowParams, Net};
use crate::sema::model::{CostModelKind, Model, NodeId, Topology};
use num_rational::BigRational;
use num_traits::{One, Zero};

/// The parameters and a description of where they come from.
pub fn derived(topo: &Topology, ranks: &[NodeId], flow: &FlowParams) -> Basis {
    let net = Net::new(topo);
    let mut lat = BigRational::zero();
    let mut bw: Option<BigRational> = None;
    if let Some(&first) = ranks.first() {
        for &r in &ranks[1..] {
            let route = net.route(first, r);
            let l = net.latency(&route);
            if l > lat {
                lat = l;
            }
            if let Some(b) = net.bottleneck(&route)
                && bw.as_ref().is_none_or(|x| b < *x)
            {
                bw = Some(b);
            }
        }
    }
    let beta = match &bw {
        Some(b) if !b.is_zero() => BigRational::one() / b,
        _ => BigRational::zero(),
    };
    let params = Params {
        alpha_p: &flow.overhead + &lat,
        alpha_r: BigRational::zero(),
        beta,
        gamma: flow.gamma.clone(),
    };
    let from = format!(
        "the topology `{}` (routes from rank 0: latency up to {}, bottleneck {}; {})",
        topo.name,
        crate::net::params::fmt_ns(&lat) + " ns",
        bw.as_ref()
            .map_or("none".into(), crate::forest::report::gbs),
        flow.describe()
    );
    Basis::derived(params, &from)
}

/// The basis a file's recursive-multiplying and recursive-doubling costs use: the model the
/// schedule names with `model:` or the only declared latency model ([`schedule_model`]); a
/// named `flow` model or, with no latency model, the topology ([`derived`], with the file's
/// flow parameters); the paper's Section 6 settings when the file has no topology.
pub fn basis_for_file(m: &Model, named: Option<&str>) -> Basis {
    let cm = schedule_model(&m.models, named);
    let flow = match cm {
        Some(x) if x.kind == CostModelKind::Flow => FlowParams::from_model(x),
        Some(x) if x.kind != CostModelKind::Packet => return Basis::declared(Some(x)),
        Some(_) => None,
        None => None,
    };
    match (&m.topology, &m.collective) {
        (Some(t), Some(c)) => derived(
            t,
            &c.ranks,
            &flow.unwrap_or_else(|| crate::net::for_file(m, None)),
        ),
        _ => Basis::declared(cm),
    }
}
