//! The network as the switches' control plane sees it ([`Fabric`]): every node's address, every
//! switch's ports and where each leads, the next-hop port from every switch to every node, and
//! the multicast groups of the sharded children bitmap (Section 4.2 of
//! ../shared/seeds/canary.txt).
//!
//! - **Addresses.** A node's address is its index in the topology (what the Canary header's
//!   `dst` and `switch` fields carry), so addresses need 16 bits at most.
//! - **Ports.** A switch's ports are its neighbours in node order, port k the k-th: one veth
//!   pair per neighbouring pair of nodes on BMv2, parallel links merged into one port.
//! - **Routes.** From each switch to each other node, the first hop of collc's minimal route
//!   ([`crate::net::Net::route`]): fixed, where the paper's switches route adaptively (BMv2 has
//!   no queue depths to choose by at ingress; the dynamic trees still form from the order
//!   packets arrive in).
//! - **Groups.** With `w = ports / shards` ports per shard, the shard value `(k, bits)` is
//!   multicast group `k << w | bits`, for every non-empty subset `bits` of the shard's ports
//!   that exist on the switch.

use crate::net::Net;
use crate::sema::model::{NodeId, NodeKind, Topology};
use std::collections::BTreeSet;

/// One switch's view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchView {
    pub node: NodeId,
    pub name: String,
    /// Port k leads to `ports[k]`.
    pub ports: Vec<NodeId>,
    /// (destination node, port), for every node reachable from here but itself.
    pub routes: Vec<(NodeId, u32)>,
}

/// The whole network's view; see the module doc.
#[derive(Debug, Clone)]
pub struct Fabric {
    pub names: Vec<String>,
    pub kinds: Vec<NodeKind>,
    pub switches: Vec<SwitchView>,
}

impl Fabric {
    pub fn new(topo: &Topology) -> Fabric {
        let net = Net::new(topo);
        let n = topo.nodes.len();
        let mut neighbours = vec![BTreeSet::new(); n];
        for l in &net.links {
            neighbours[l.from].insert(l.to);
            neighbours[l.to].insert(l.from);
        }
        let mut switches = Vec::new();
        for (v, node) in topo.nodes.iter().enumerate() {
            if node.kind != NodeKind::Switch {
                continue;
            }
            let ports: Vec<NodeId> = neighbours[v].iter().copied().collect();
            let mut routes = Vec::new();
            for d in 0..n {
                if d == v {
                    continue;
                }
                if let Some(&first) = net.route(v, d).first() {
                    let next = net.links[first as usize].to;
                    if let Some(k) = ports.iter().position(|&p| p == next) {
                        routes.push((d, k as u32));
                    }
                }
            }
            switches.push(SwitchView {
                node: v,
                name: node.name.clone(),
                ports,
                routes,
            });
        }
        Fabric {
            names: topo.nodes.iter().map(|x| x.name.clone()).collect(),
            kinds: topo.nodes.iter().map(|x| x.kind).collect(),
            switches,
        }
    }

    /// Ports of the switch with the most.
    pub fn max_ports(&self) -> u32 {
        self.switches
            .iter()
            .map(|s| s.ports.len() as u32)
            .max()
            .unwrap_or(0)
    }

    pub fn switch(&self, node: NodeId) -> Option<&SwitchView> {
        self.switches.iter().find(|s| s.node == node)
    }
}

/// The shard geometry: `shards` shards of `width` ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shards {
    pub shards: u32,
    pub width: u32,
}

impl Shards {
    /// `shards` shards covering `ports` ports.
    pub fn new(ports: u32, shards: u32) -> Shards {
        let shards = shards.max(1);
        Shards {
            shards,
            width: ports.div_ceil(shards).max(1),
        }
    }

    /// The multicast geometry of switches of up to `ports` ports: shards of `width` ports, as
    /// many as cover them.
    pub fn multicast(ports: u32, width: u32) -> Shards {
        Shards {
            shards: ports.div_ceil(width.max(1)).max(1),
            width: width.max(1),
        }
    }

    /// Multicast groups a switch with every port needs: `2^w - 1` per shard.
    pub fn groups(&self) -> u64 {
        u64::from(self.shards) * ((1u64 << self.width.min(63)) - 1)
    }

    /// The highest group id (the group ids are `k << w | bits`).
    pub fn highest_group(&self) -> u64 {
        (u64::from(self.shards) << self.width.min(63)) - 1
    }

    /// The wire encoding of a port in a header's `children` field: shard index in the top 8
    /// bits, the port's bit within its shard below.
    pub fn wire(&self, port: u32) -> u32 {
        (port / self.width) << 24 | 1 << (port % self.width)
    }

    /// Every group of a switch with `ports` ports: (group id, its ports), in id order.
    pub fn switch_groups(&self, ports: u32) -> Vec<(u32, Vec<u32>)> {
        let mut out = Vec::new();
        for k in 0..self.shards {
            let first = k * self.width;
            let have = ports.saturating_sub(first).min(self.width);
            for bits in 1u32..(1 << have) {
                let members: Vec<u32> = (0..have)
                    .filter(|j| bits >> j & 1 == 1)
                    .map(|j| first + j)
                    .collect();
                out.push((k << self.width | bits, members));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_the_ports_into_groups_as_section_4_2_counts_them() {
        // The paper's example: 8 ports in 2 shards, children 00101101: shard 1 holds port 5,
        // shard 0 ports 0, 2, 3.
        let s = Shards::new(8, 2);
        assert_eq!(s.width, 4);
        assert_eq!(s.groups(), 2 * 15);
        let g = s.switch_groups(8);
        assert!(g.contains(&(1 << 4 | 0b0010, vec![5])), "{g:?}");
        assert!(g.contains(&(0b1101, vec![0, 2, 3])));
        assert_eq!(s.wire(5), 1 << 24 | 0b10);
        // A switch with 6 ports has only the subsets of the ports it has.
        assert_eq!(s.switch_groups(6).len(), 15 + 3);
    }
}
