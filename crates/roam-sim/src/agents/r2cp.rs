//! R²CP flow agents (rcp-r2cp.txt §4): the multi-interface receiver, which opens one RCP pipe
//! per configured (interface, server) pair while that interface is up and its window of time
//! is open, and the servers, unchanged RCP senders that accept any number of connections
//! (one per pipe that reaches them). The receiver verifies every byte against the integrity
//! pattern.
//!
//! Interfaces: when an interface goes down its pipes are deleted break-before-make (what they
//! had outstanding is reassigned); when it comes back, its pipes are created again. A pipe's
//! `stop` time deletes it make-before-break (`drain`) or break-before-make (`break`). A pipe
//! that fails while its interface stays up (its server stops answering, a blackout: the RTO
//! limit, or the host's stall rule where the scenario sets `stall`) is reopened after a
//! backoff by roam-proto's rule, the one the UDP runtime follows
//! ([`roam_proto::r2cp::reopen`]; `docs/R2CP.md`, "Reopening failed pipes"); meanwhile the
//! other pipes take over.
//!
//! Both ends drive roam-proto's [`Endpoint`](roam_proto::endpoint::Endpoint)
//! (docs/ENDPOINT.md) through the simulator's generic host. The receiver's host holds the
//! [`R2cpReceiver`] as one client connection with one path per planned pipe: path `k` is
//! the `k`-th [`PipePlan`], mapped to (its interface, its server) while the engine has a pipe
//! on it, so each pipe's `(ConnId, PathId)` demultiplexes only from its own server and
//! interface. A server is the RCP sender agent ([`super::rcp::rcp_sender`]): one endpoint
//! with an [`roam_proto::rcp::RcpAcceptor`] holding one connection per pipe that reached it.

use std::sync::Arc;
use std::time::Duration;

use roam_proto::endpoint::{EndpointConnection, NoAcceptor, PathId};
use roam_proto::loss_cause::Scheme as LossScheme;
use roam_proto::r2cp::reopen::{PipeWatch, Reopen};
use roam_proto::r2cp::{
    PipeId, PipeRole, PipeSpec, PipeState, R2cpEvent, R2cpReceiver, Removal, Scheme, TokenPolicy,
};
use roam_proto::rcp::{RcpCc, RcpConfig};
use roam_proto::Time;
use roam_wire::{ConnId, Data};

use super::flow::{FlowAgents, FlowEnds};
use super::host::Host;
use super::pattern;
use crate::agent::{Agent, AgentSample, FlowIdx, IfaceIdx, NetCtx, Packet, SockAddr};
use crate::result::FlowFailure;
use crate::scenario::R2cpSetup;

/// The object every simulated R²CP flow transfers (the same as RCP's).
const OBJECT_NAME: &[u8] = b"pattern";

/// One configured pipe of an R²CP flow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PipePlan {
    /// Local interface.
    pub iface: IfaceIdx,
    /// The server's address.
    pub server: SockAddr,
    /// When the pipe may first be created.
    pub start: Time,
    /// When it is deleted, and how.
    pub stop: Option<(Time, Removal)>,
    /// Role under the policy.
    pub role: PipeRole,
    /// The pipe estimates its wireless-loss facts itself (Spike, issue 30); the link's
    /// corruption reports are not passed to it.
    pub estimated_facts: bool,
}

/// How to build an R²CP receiver agent.
#[derive(Debug, Clone)]
pub struct R2cpReceiverParams {
    /// The flow.
    pub flow: FlowIdx,
    /// Engine options (shared with RCP).
    pub config: Arc<RcpConfig>,
    /// Every pipe's controller.
    pub cc: RcpCc,
    /// Assignment scheme.
    pub scheme: Scheme,
    /// Local port (on every interface).
    pub local_port: u16,
    /// The pipes.
    pub pipes: Vec<PipePlan>,
    /// Aggregation policy.
    pub policy: Option<TokenPolicy>,
    /// Coupled increase across the pipes (RFC 6356 LIA).
    pub coupled: bool,
    /// Bytes to fetch (`None`: unbounded).
    pub size: Option<u64>,
    /// Connection-id seed.
    pub conn_seed: u64,
    /// The host's stall rule ([`PipeWatch::stalled`]): a pipe not up this long after it was
    /// opened, or with requests outstanding and nothing new for this long, is deleted
    /// break-before-make and its pair reopened after the backoff. `None`: only the engine's
    /// own failures count.
    pub stall: Option<Duration>,
}

/// Builds the receiving end of an R²CP flow.
pub fn r2cp_receiver(p: R2cpReceiverParams) -> Box<dyn Agent> {
    let n = p.pipes.len();
    // A client host: it accepts nothing and expires nothing (the engine gives its pipes up
    // by itself). Its endpoint names each path's interface, so it has no interface of its own.
    Box::new(R2cpReceiverAgent {
        host: Host::client((IfaceIdx(0), p.local_port, p.flow)),
        p,
        mapped: Vec::new(),
        scratch: Vec::new(),
        live: vec![None; n],
        watch: vec![None; n],
        reopen: vec![Reopen::new(); n],
        next_pipe: 0,
        read_buf: Vec::new(),
        failed: false,
        reconciled: None,
    })
}

/// Builds one server of an R²CP flow: the RCP sender agent, serving the pattern object of
/// `size` bytes (unbounded when `None`); its endpoint accepts one connection per pipe that
/// reaches it.
pub use super::rcp::rcp_sender as r2cp_server;

struct R2cpReceiverAgent {
    p: R2cpReceiverParams,
    /// The receiving host: a client with one path per planned pipe, local addresses being the
    /// interfaces.
    host: Host<IfaceIdx, NoAcceptor<R2cpReceiver>>,
    /// The (conn id, path) pairs the endpoint was last told about.
    mapped: Vec<(ConnId, PathId)>,
    scratch: Vec<(ConnId, PathId)>,
    /// For each planned pipe, the engine pipe currently standing for it.
    live: Vec<Option<PipeId>>,
    /// For each planned pipe, what the stall rule watches of its live pipe.
    watch: Vec<Option<PipeWatch>>,
    /// For each planned pipe (one (interface, server) pair), when it may be reopened.
    reopen: Vec<Reopen>,
    next_pipe: u32,
    read_buf: Vec<u8>,
    failed: bool,
    /// The last time the plan was reconciled (planned instants at or before it are done).
    reconciled: Option<Time>,
}

impl R2cpReceiverAgent {
    fn iface_up(ctx: &dyn NetCtx, iface: IfaceIdx) -> bool {
        ctx.local_addr(iface).is_some() && ctx.link_info(iface).is_none_or(|l| l.up)
    }

    /// Creates and deletes pipes as the plan, the time and the interfaces say.
    fn reconcile(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        self.reconciled = Some(now);
        if !self.host.opened() {
            let end = self.p.size.unwrap_or(u64::MAX);
            match R2cpReceiver::new(self.p.config.clone(), self.p.scheme, OBJECT_NAME, (0, end)) {
                Ok(mut c) => {
                    c.set_policy(now, self.p.policy);
                    c.set_coupled(self.p.coupled);
                    // No pipe yet, so no conn id: nothing can be in use.
                    self.host.open(c, &[], ctx);
                }
                Err(_) => {
                    self.failed = true;
                    return;
                }
            }
        }
        let Some(conn) = self.host.held_mut() else {
            return;
        };
        if conn.is_complete() {
            return;
        }
        for (k, plan) in self.p.pipes.iter().enumerate() {
            let stopped = plan.stop.is_some_and(|(t, _)| now >= t);
            let up = Self::iface_up(ctx, plan.iface);
            let stalled = self
                .p
                .stall
                .is_some_and(|stall| self.watch[k].is_some_and(|w| w.stalled(now, stall)));
            match self.live[k] {
                Some(id) if stopped || !up => {
                    let how = match plan.stop {
                        Some((_, how)) if stopped && up => how,
                        _ => Removal::Break,
                    };
                    conn.remove_pipe(now, id, how);
                    self.live[k] = None;
                    self.watch[k] = None;
                }
                Some(id) if stalled => {
                    // The stall rule: deleted break-before-make, its pair reopened later.
                    conn.remove_pipe(now, id, Removal::Break);
                    self.live[k] = None;
                    self.watch[k] = None;
                    self.reopen[k].failed(now);
                }
                None if now >= plan.start && !stopped && up && self.reopen[k].due(now) => {
                    let id = PipeId(self.next_pipe);
                    self.next_pipe += 1;
                    let conn_id = ConnId(
                        self.p.conn_seed ^ rand::RngCore::next_u64(ctx.rng()) ^ u64::from(id.0),
                    );
                    let spec = PipeSpec {
                        id,
                        conn_id,
                        path: PathId(k as u32),
                        role: plan.role,
                        cc: self.p.cc,
                    };
                    if conn.add_pipe(now, spec).is_ok() {
                        if plan.estimated_facts {
                            conn.set_loss_estimator(id, Some(LossScheme::Spike));
                        }
                        if let Some(info) = ctx.link_info(plan.iface) {
                            conn.set_link_info(now, id, &info);
                        }
                        self.live[k] = Some(id);
                        self.watch[k] = Some(PipeWatch::new(now));
                    }
                }
                _ => {}
            }
        }
        self.map_paths();
    }

    /// Tells the endpoint the engine's current pipes: every path the engine has a pipe on is
    /// mapped to its plan's (interface, server), with its pipes' conn ids; a path without a
    /// pipe is forgotten.
    fn map_paths(&mut self) {
        let Some(conn) = self.host.held() else {
            return;
        };
        self.scratch.clear();
        conn.conn_ids(&mut self.scratch);
        if self.scratch == self.mapped {
            return;
        }
        for k in 0..self.p.pipes.len() {
            let path = PathId(k as u32);
            let now_on = self.scratch.iter().any(|&(_, p)| p == path);
            let was_on = self.mapped.iter().any(|&(_, p)| p == path);
            let plan = &self.p.pipes[k];
            if now_on {
                // Ids are fresh draws from the run's RNG; a clash leaves the pipe unmapped
                // (its datagrams dropped), which the engine survives as a dead pipe.
                self.host.add_path(path, plan.iface, plan.server);
            } else if was_on {
                self.host.remove_path(path);
            }
        }
        std::mem::swap(&mut self.mapped, &mut self.scratch);
    }

    fn after_call(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let flow = self.p.flow;
        if !self.host.opened() {
            return; // The engine could not be built.
        }
        // (None once the endpoint removed it: the event below says so.)
        if let Some(conn) = self.host.held_mut() {
            pattern::deliver_checked(ctx, flow, &mut self.read_buf, |buf| {
                (conn.read_point(), conn.read(buf, 1 << 20))
            });
            while let Some(ev) = conn.poll_event() {
                let k = match ev {
                    R2cpEvent::PipeUp(id)
                    | R2cpEvent::PipeFailed(id)
                    | R2cpEvent::PipeClosed(id) => self.live.iter().position(|l| *l == Some(id)),
                    _ => None,
                };
                match ev {
                    R2cpEvent::Eof => {
                        ctx.counters(flow).completed_at.get_or_insert(now);
                    }
                    R2cpEvent::PipeUp(_) => {
                        if let Some(k) = k {
                            self.reopen[k].succeeded();
                            if let Some(w) = self.watch[k].as_mut() {
                                w.on_up(now);
                            }
                        }
                    }
                    R2cpEvent::PipeFailed(_) | R2cpEvent::PipeClosed(_) => {
                        if let Some(k) = k {
                            self.live[k] = None;
                            self.watch[k] = None;
                            // A failed pipe's pair is reopened after the backoff
                            // (`roam_proto::r2cp::reopen`); a closed one when the plan says.
                            if matches!(ev, R2cpEvent::PipeFailed(_)) {
                                self.reopen[k].failed(now);
                            }
                        }
                    }
                    R2cpEvent::Connected { .. } | R2cpEvent::Closed => {}
                }
            }
            if self.p.stall.is_some() {
                for info in conn.pipes() {
                    let Some(k) = self.live.iter().position(|l| *l == Some(info.id)) else {
                        continue;
                    };
                    if let Some(w) = self.watch[k].as_mut() {
                        let up = info.state != PipeState::Connecting;
                        w.observe(now, info.bytes_received, info.outstanding, up);
                    }
                }
            }
        }
        self.map_paths();
        // Each datagram leaves by its path's interface.
        self.host.transmit(ctx, |_| {});
        self.host.settle(|_, _| {});
        let Some(conn) = self.host.conn() else {
            return;
        };
        let (mut rereq, mut timeouts, mut recoveries, mut excused) = (0, 0, 0, 0);
        for p in conn.pipes() {
            rereq += p.rerequests;
            timeouts += p.timeouts;
            recoveries += p.recoveries;
            excused += p.wireless_holes;
        }
        let s = conn.stats();
        let gave_up = conn.pipes().next().is_none() && !conn.is_complete() && self.failed;
        let c = ctx.counters(flow);
        c.retransmitted_segments = c.retransmitted_segments.max(s.bytes_rebound / 1000 + rereq);
        c.timeouts = c.timeouts.max(timeouts);
        c.recoveries = c.recoveries.max(recoveries);
        c.wireless_excused = c.wireless_excused.max(excused);
        c.multipath = Some(multipath_result(&s));
        if gave_up {
            c.fail(now, FlowFailure::GaveUp);
        }
    }
}

impl Agent for R2cpReceiverAgent {
    fn start(&mut self, ctx: &mut dyn NetCtx) {
        self.reconcile(ctx);
        self.after_call(ctx);
    }

    fn on_packet(&mut self, iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        // A client endpoint answers nothing: no reply goes back.
        self.host.on_packet_at(iface, packet, ctx);
        self.after_call(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        self.reconcile(ctx);
        self.host.on_timer(ctx.now());
        self.after_call(ctx);
    }

    fn next_timer(&self) -> Option<Time> {
        let done = self.host.conn().is_some_and(|c| c.is_complete());
        let stall = self.p.stall;
        let plan = self
            .p
            .pipes
            .iter()
            .zip(&self.live)
            .zip(self.watch.iter().zip(&self.reopen))
            .flat_map(|((p, l), (w, r))| {
                let start = (l.is_none() && !done).then_some(p.start);
                let stop = l.and(p.stop.map(|(t, _)| t));
                let retry = (l.is_none() && !done).then(|| r.retry_at()).flatten();
                let stalls = stall.and_then(|s| w.and_then(|w| w.stalls_at(s)));
                [start, stop, retry, stalls.filter(|_| !done)]
            })
            .flatten()
            .filter(|&t| self.reconciled.is_none_or(|r| t > r));
        self.host.next_timer().into_iter().chain(plan).min()
    }

    fn sample(&self) -> AgentSample {
        match self.host.conn() {
            Some(c) => AgentSample {
                cwnd_bytes: Some(c.pipes().map(|p| p.cwnd).sum()),
                seq: Some(c.rcv_nxt()),
            },
            None => AgentSample::default(),
        }
    }

    fn on_link_change(&mut self, iface: IfaceIdx, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let info = ctx.link_info(iface);
        if let (Some(conn), Some(info)) = (self.host.held_mut(), info) {
            for (plan, id) in self.p.pipes.iter().zip(&self.live) {
                if let (true, Some(id)) = (plan.iface == iface, id) {
                    conn.set_link_info(now, *id, &info);
                }
            }
        }
        self.reconcile(ctx);
        self.after_call(ctx);
    }

    fn on_corrupted(&mut self, iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        if let (Some(conn), Ok(d)) = (self.host.held_mut(), Data::decode(&packet.payload)) {
            for (plan, id) in self.p.pipes.iter().zip(&self.live) {
                // A pipe that estimates its facts gets no corruption report (issue 30).
                if let (true, false, Some(id)) = (plan.iface == iface, plan.estimated_facts, id) {
                    conn.note_corrupted(*id, d.seq);
                }
            }
        }
        self.after_call(ctx);
    }
}

/// The receiver's counters as the flow's result reports them.
fn multipath_result(s: &roam_proto::r2cp::R2cpStats) -> crate::result::MultipathResult {
    crate::result::MultipathResult {
        bytes_redundant: s.bytes_redundant,
        bytes_rebound: s.bytes_rebound,
        reassigned: s.reassigned,
        silences: s.silences,
    }
}

/// Builds an R²CP flow's agents: the receiver on the flow's `to` host, and one server per
/// (server, interface) of [`R2cpSetup::servers`], in that order; the first stands where a
/// flow's sender stands, the others are [`FlowAgents::extra`].
pub(crate) fn build(setup: &R2cpSetup, e: &FlowEnds<'_>) -> FlowAgents {
    let start = e.start();
    let pipes = setup
        .pipes
        .iter()
        .map(|p| PipePlan {
            iface: IfaceIdx(p.iface),
            server: e.at(p.server, p.server_iface, e.sender_port),
            start: start + p.start,
            stop: p.stop.map(|(t, how)| (start + t, how)),
            role: p.role,
            estimated_facts: p.estimated_facts,
        })
        .collect();
    let receiver = r2cp_receiver(R2cpReceiverParams {
        flow: e.flow,
        config: Arc::clone(&setup.rcp.config),
        cc: setup.rcp.cc_kind,
        scheme: setup.scheme,
        local_port: e.receiver_port,
        pipes,
        policy: setup.policy,
        coupled: setup.coupled,
        size: e.spec.size,
        conn_seed: e.conn_seed,
        stall: setup.stall,
    });
    let servers = setup.servers();
    let mut agents = servers.iter().map(|&(node, iface)| {
        let server = r2cp_server(
            e.flow,
            Arc::clone(&setup.rcp.config),
            IfaceIdx(iface),
            e.sender_port,
            e.spec.size,
        );
        (node, server)
    });
    let (sender_node, sender) = agents
        .next()
        .expect("a loaded R²CP flow has at least one pipe");
    FlowAgents {
        sender,
        receiver,
        sender_node,
        extra: agents.collect(),
    }
}
