//! Topology facts derived from a scenario: interface addresses and static routes, computed
//! once when the scenario is loaded ([`Scenario::routing`](super::Scenario)) and shared by the
//! memory estimate and the run.
//!
//! Every interface of a host gets an address (hosts in scenario order, interfaces in link
//! order). Link `l`'s direction a → b has id `2l`, b → a has id `2l + 1`. Routes are computed by
//! breadth-first search over routers: for an address on host H's interface attached to link L
//! whose far end is router R, R sends on L; every other router sends toward R over
//! router-to-router links along a shortest path (ties broken by link order). `[[route]]`
//! entries then override single entries; a loop among overrides is an error.

use std::collections::VecDeque;

use super::{LinkSpec, NodeKind, NodeSpec, RouteSpec};
use crate::agent::Addr;

/// No route.
pub(crate) const NO_ROUTE: u32 = u32::MAX;

/// Addresses and routing tables of a scenario's topology.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Routing {
    /// First address index of each node (hosts only; routers get the index of the next host).
    addr_base: Vec<u32>,
    /// Address index → (host, iface).
    pub owners: Vec<(u32, u32)>,
    /// Per node: address index → outgoing link direction id (routers; empty for hosts).
    pub tables: Vec<Vec<u32>>,
}

/// The link direction id for sending from `node` over link `l`.
pub(crate) fn out_dir(links: &[LinkSpec], l: usize, node: usize) -> u32 {
    if links[l].a == node {
        2 * l as u32
    } else {
        2 * l as u32 + 1
    }
}

/// The node at the other end of link `l` from `node`.
pub(crate) fn far_end(links: &[LinkSpec], l: usize, node: usize) -> usize {
    if links[l].a == node {
        links[l].b
    } else {
        links[l].a
    }
}

impl Routing {
    /// Every host interface's address index, in node then interface order: each node's first
    /// index (`addr_base`; a router gets the next host's) and each index's (host, iface).
    fn addresses(nodes: &[NodeSpec]) -> (Vec<u32>, Vec<(u32, u32)>) {
        let mut addr_base = Vec::with_capacity(nodes.len());
        let mut owners = Vec::new();
        for (ni, n) in nodes.iter().enumerate() {
            addr_base.push(owners.len() as u32);
            if n.kind == NodeKind::Host {
                for k in 0..n.ifaces.len() {
                    owners.push((ni as u32, k as u32));
                }
            }
        }
        (addr_base, owners)
    }

    /// Assigns addresses and computes routes over `nodes` and `links` with the `routes`
    /// overrides; fails on a routing loop among overrides or a table too large.
    pub(crate) fn compute(
        nodes: &[NodeSpec],
        links: &[LinkSpec],
        routes: &[RouteSpec],
    ) -> Result<Routing, String> {
        let (addr_base, owners) = Routing::addresses(nodes);
        let n_addr = owners.len();
        let n_routers = nodes.iter().filter(|n| n.kind == NodeKind::Router).count();
        if n_routers.saturating_mul(n_addr) > 50_000_000 {
            return Err(format!(
                "node: {n_routers} routers x {n_addr} host addresses is too large a routing table"
            ));
        }
        let is_router = |n: usize| nodes[n].kind == NodeKind::Router;
        let mut tables: Vec<Vec<u32>> = nodes
            .iter()
            .map(|n| match n.kind {
                NodeKind::Router => vec![NO_ROUTE; n_addr],
                NodeKind::Host => Vec::new(),
            })
            .collect();
        let mut seen = vec![u32::MAX; nodes.len()];
        let mut queue = VecDeque::new();
        for (ai, &(host, k)) in owners.iter().enumerate() {
            let host = host as usize;
            let l = nodes[host].ifaces[k as usize];
            let r = far_end(links, l, host);
            if !is_router(r) {
                continue;
            }
            tables[r][ai] = out_dir(links, l, r);
            seen[r] = ai as u32;
            queue.clear();
            queue.push_back(r);
            while let Some(u) = queue.pop_front() {
                for &l2 in &nodes[u].ifaces {
                    let v = far_end(links, l2, u);
                    if is_router(v) && seen[v] != ai as u32 {
                        seen[v] = ai as u32;
                        tables[v][ai] = out_dir(links, l2, v);
                        queue.push_back(v);
                    }
                }
            }
        }
        let mut routing = Routing {
            addr_base,
            owners,
            tables,
        };
        for r in routes {
            let ai = routing.addr_index(r.host, r.iface) as usize;
            routing.tables[r.router][ai] = out_dir(links, r.link, r.router);
        }
        if !routes.is_empty() {
            routing.check_loops(nodes, links)?;
        }
        Ok(routing)
    }

    /// Address index of host `node`'s interface `iface`.
    pub(crate) fn addr_index(&self, node: usize, iface: u32) -> u32 {
        self.addr_base[node] + iface
    }

    /// Address of host `node`'s interface `iface` (index + 1, so no host has address 0).
    pub(crate) fn addr(&self, node: usize, iface: u32) -> Addr {
        Addr(self.addr_index(node, iface) + 1)
    }

    /// Address index of `addr`, if it is a host interface's.
    pub(crate) fn index_of(&self, addr: Addr) -> Option<u32> {
        let i = addr.0.checked_sub(1)?;
        ((i as usize) < self.owners.len()).then_some(i)
    }

    fn check_loops(&self, nodes: &[NodeSpec], links: &[LinkSpec]) -> Result<(), String> {
        let limit = nodes.len() + 1;
        for ai in 0..self.owners.len() {
            for (start, n) in nodes.iter().enumerate() {
                if n.kind != NodeKind::Router {
                    continue;
                }
                let mut u = start;
                for step in 0.. {
                    if step > limit {
                        let (h, k) = self.owners[ai];
                        return Err(format!(
                            "route: packets from router {:?} to {:?} interface {k} loop",
                            n.name, nodes[h as usize].name
                        ));
                    }
                    let dir = self.tables[u][ai];
                    if dir == NO_ROUTE {
                        break;
                    }
                    u = far_end(links, (dir / 2) as usize, u);
                    if nodes[u].kind != NodeKind::Router {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether a packet sent by host `from` on `from_iface` to host `to`'s interface `to_iface`
    /// reaches `to`.
    pub(crate) fn reachable(
        &self,
        nodes: &[NodeSpec],
        links: &[LinkSpec],
        from: usize,
        from_iface: u32,
        to: usize,
        to_iface: u32,
    ) -> bool {
        let ai = self.addr_index(to, to_iface) as usize;
        let mut u = far_end(links, nodes[from].ifaces[from_iface as usize], from);
        for _ in 0..=nodes.len() {
            if nodes[u].kind == NodeKind::Host {
                return u == to;
            }
            let dir = self.tables[u][ai];
            if dir == NO_ROUTE {
                return false;
            }
            u = far_end(links, (dir / 2) as usize, u);
        }
        false
    }
}
