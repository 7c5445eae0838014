//! The routes the flow-level simulator's messages took ([`super::engine`]): each route's
//! links (and under `routing: spray` each link's share), its latency and its per-message
//! overhead, added as messages first need them.

use super::flows::Paths;
use crate::net::{FlowParams, LinkId, Net};
use crate::sema::model::NodeId;
use num_traits::ToPrimitive;

/// The routes messages took so far: each route's links (and under `routing: spray` each
/// link's share), its latency and its per-message overhead.
pub(super) struct Routes {
    pub plain: Vec<Vec<LinkId>>,
    pub shared: Vec<Vec<(LinkId, f64)>>,
    pub lat: Vec<f64>,
    pub over: Vec<f64>,
    pub spray: bool,
}

impl Routes {
    /// Adds the route from node `a` to node `b`; returns its index.
    pub fn add(&mut self, net: &Net, params: &FlowParams, a: NodeId, b: NodeId) -> usize {
        let route = net.route(a, b);
        self.lat
            .push(route.iter().map(|&l| net.links[l as usize].lat).sum());
        self.over
            .push(params.overhead_between(net, a, b).to_f64().unwrap_or(0.0));
        self.shared.push(if self.spray {
            net.spread(a, b)
                .into_iter()
                .map(|(l, w)| (l, w.to_f64().unwrap_or(0.0)))
                .collect()
        } else {
            route.iter().map(|&l| (l, 1.0)).collect()
        });
        self.plain.push(route);
        self.plain.len() - 1
    }
}

impl Paths for Routes {
    fn links(&self, route: usize) -> &[(LinkId, f64)] {
        &self.shared[route]
    }
    fn plain(&self, route: usize) -> &[LinkId] {
        &self.plain[route]
    }
    fn spray(&self) -> bool {
        self.spray
    }
}
