//! Building a flow's agents: what every flow kind's builder is given ([`FlowEnds`]) and what it
//! returns ([`FlowAgents`]). Each kind's builder stands beside its agent (`tcp::build`,
//! `rcp::build`, `r2cp::build`, `media::build`); pTCP's, HTTP's and the UDP sources' are here,
//! calling into their agent files. [`build`] picks the builder of a flow's kind.

use roam_proto::Time;

use super::http::{http_agents, HttpEnds};
use super::ptcp::{ptcp_agents, PtcpParams, PtcpPipePlan};
use super::udp::{self, ParetoParams, UdpSourceParams};
use crate::agent::{Agent, FlowIdx, IfaceIdx, SockAddr};
use crate::scenario::routing::Routing;
use crate::scenario::{FlowKind, FlowSpec, PtcpSetup};

/// Where a flow's ends live: what the run knows of a flow before its agents exist.
pub(crate) struct FlowEnds<'a> {
    /// The flow's index.
    pub flow: FlowIdx,
    /// The flow as the scenario states it.
    pub spec: &'a FlowSpec,
    /// The scenario's addresses (computed when it was loaded).
    pub routing: &'a Routing,
    /// Port of the sending agent (every R²CP server's too).
    pub sender_port: u16,
    /// Port of the receiving agent.
    pub receiver_port: u16,
    /// The flow's seed: connection identifiers and keys derive from it.
    pub conn_seed: u64,
    /// Bytes added to every datagram on the wire.
    pub header_overhead: u32,
}

impl FlowEnds<'_> {
    /// Host `node`'s interface `iface`, port `port`.
    pub fn at(&self, node: usize, iface: u32, port: u16) -> SockAddr {
        SockAddr {
            addr: self.routing.addr(node, iface),
            port,
        }
    }

    /// The sending agent's interface.
    pub fn sender_iface(&self) -> IfaceIdx {
        IfaceIdx(self.spec.from_iface)
    }

    /// The receiving agent's interface.
    pub fn receiver_iface(&self) -> IfaceIdx {
        IfaceIdx(self.spec.to_iface)
    }

    /// The sending agent's address and port.
    pub fn sender(&self) -> SockAddr {
        self.at(self.spec.from, self.spec.from_iface, self.sender_port)
    }

    /// The receiving agent's address and port.
    pub fn receiver(&self) -> SockAddr {
        self.at(self.spec.to, self.spec.to_iface, self.receiver_port)
    }

    /// When the flow starts.
    pub fn start(&self) -> Time {
        Time::ZERO + self.spec.start
    }

    /// When the flow's source stops, if it does.
    pub fn stop(&self) -> Option<Time> {
        self.spec.stop.map(|d| Time::ZERO + d)
    }
}

/// A flow's agents.
pub(crate) struct FlowAgents {
    /// The sending agent (R²CP: the first server).
    pub sender: Box<dyn Agent>,
    /// The receiving agent.
    pub receiver: Box<dyn Agent>,
    /// The node the sending agent stands on (the flow's `from`; R²CP: the first server's).
    pub sender_node: usize,
    /// Further sending agents as (node, agent): R²CP's servers beyond the first.
    pub extra: Vec<(usize, Box<dyn Agent>)>,
}

impl FlowAgents {
    /// A sender on the flow's `from` node and a receiver, nothing else.
    pub fn pair(e: &FlowEnds<'_>, (sender, receiver): (Box<dyn Agent>, Box<dyn Agent>)) -> Self {
        FlowAgents {
            sender,
            receiver,
            sender_node: e.spec.from,
            extra: Vec::new(),
        }
    }
}

/// Builds the agents of the flow `e` describes, by its kind.
pub(crate) fn build(e: &FlowEnds<'_>) -> FlowAgents {
    match &e.spec.kind {
        FlowKind::Tcp(setup) => super::tcp::build(setup, e),
        FlowKind::Rcp(setup) => super::rcp::build(setup, e),
        FlowKind::R2cp(setup) => super::r2cp::build(setup, e),
        FlowKind::Media(setup) => super::media::build(setup, e),
        FlowKind::Ptcp(setup) => ptcp(setup, e),
        FlowKind::Http(p) => FlowAgents::pair(
            e,
            http_agents(
                *p,
                &HttpEnds {
                    flow: e.flow,
                    server_iface: e.sender_iface(),
                    server_port: e.sender_port,
                    client_iface: e.receiver_iface(),
                    client_port: e.receiver_port,
                    client: e.receiver(),
                    conn_seed: e.conn_seed,
                },
            ),
        ),
        FlowKind::Cbr {
            rate_bps,
            packet_size,
        } => udp_flow(e, *rate_bps, *packet_size, None),
        FlowKind::Pareto {
            rate_bps,
            packet_size,
            mean_on,
            mean_off,
            shape,
        } => udp_flow(
            e,
            *rate_bps,
            *packet_size,
            Some(ParetoParams {
                mean_on: *mean_on,
                mean_off: *mean_off,
                shape: *shape,
            }),
        ),
    }
}

/// A pTCP flow's sender and receiver (`agents/ptcp.rs`): one pipe per planned interface pair.
fn ptcp(setup: &PtcpSetup, e: &FlowEnds<'_>) -> FlowAgents {
    let f = e.spec;
    let pipes = setup
        .pipes
        .iter()
        .map(|p| PtcpPipePlan {
            from_iface: IfaceIdx(p.from_iface),
            sender: e.at(f.from, p.from_iface, e.sender_port),
            to_iface: IfaceIdx(p.to_iface),
            receiver: e.at(f.to, p.to_iface, e.receiver_port),
            cc: p.cc,
        })
        .collect();
    if let Some(app) = striping_app(setup.striping) {
        let agents = super::ptcp_striping::striping_agents(
            super::ptcp_striping::StripingParams {
                flow: e.flow,
                config: std::sync::Arc::clone(&setup.tcp.config),
                pipes,
                weights: setup.pipes.iter().map(|p| p.weight).collect(),
                app,
                reseq_buffer: setup.reseq_buffer,
                size: f.size,
                conn_seed: e.conn_seed,
            },
            e.sender_port,
            e.receiver_port,
        );
        return FlowAgents::pair(e, agents);
    }
    let agents = ptcp_agents(
        PtcpParams {
            flow: e.flow,
            config: std::sync::Arc::clone(&setup.tcp.config),
            pipes,
            size: f.size,
            conn_seed: e.conn_seed,
        },
        e.sender_port,
        e.receiver_port,
    );
    FlowAgents::pair(e, agents)
}

/// The application striping baseline a pTCP flow's setup asks for, if any.
fn striping_app(m: crate::scenario::StripingMode) -> Option<super::ptcp_striping::StripingApp> {
    use super::ptcp_striping::StripingApp;
    use crate::scenario::StripingMode;
    match m {
        StripingMode::Ptcp => None,
        StripingMode::Unaware => Some(StripingApp::Unaware),
        StripingMode::Smart => Some(StripingApp::Smart),
    }
}

/// A CBR source, or a Pareto on/off one with `pareto` (`agents/udp.rs`), and its sink.
fn udp_flow(
    e: &FlowEnds<'_>,
    rate_bps: u64,
    packet_size: u32,
    pareto: Option<ParetoParams>,
) -> FlowAgents {
    let p = UdpSourceParams {
        flow: e.flow,
        iface: e.sender_iface(),
        local_port: e.sender_port,
        peer: e.receiver(),
        rate_bps,
        packet_size,
        size: e.spec.size,
        stop: e.stop(),
    };
    let src = match pareto {
        Some(on_off) => udp::pareto_source(p, on_off),
        None => udp::cbr_source(p),
    };
    FlowAgents::pair(e, (src, udp::udp_sink(e.flow, e.spec.size)))
}
