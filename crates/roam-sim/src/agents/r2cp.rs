//! R²CP flow agents (rcp-r2cp.txt §4): the multi-interface receiver, which opens one RCP pipe
//! per configured (interface, server) pair while that interface is up and its window of time
//! is open, and the servers, unchanged RCP senders that accept any number of connections
//! (one per pipe that reaches them). The receiver verifies every byte against the integrity
//! pattern.
//!
//! Interfaces: when an interface goes down its pipes are deleted break-before-make (what they
//! had outstanding is reassigned); when it comes back, its pipes are created again. A pipe's
//! `stop` time deletes it make-before-break (`drain`) or break-before-make (`break`). A
//! server that stops answering fails its pipe (RTO limit) and the other pipes take over.

use std::collections::HashMap;
use std::sync::Arc;

use roam_proto::endpoint::{Acceptor, PathId, TokenKey, Unknown};
use roam_proto::r2cp::{
    PipeId, PipeRole, PipeSpec, R2cpEvent, R2cpReceiver, Removal, Scheme, TokenPolicy,
};
use roam_proto::rcp::{RcpAcceptor, RcpCc, RcpConfig, RcpSender, ResetLimiter};
use roam_proto::Time;
use roam_wire::{ConnId, Data, Request, UNKNOWN_LENGTH};

use super::pattern;
use super::rcp::PatternStore;
use crate::agent::{Agent, AgentSample, FlowIdx, IfaceIdx, NetCtx, Packet, SockAddr};
use crate::result::FlowFailure;

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
    /// Bytes to fetch (`None`: unbounded).
    pub size: Option<u64>,
    /// Connection-id seed.
    pub conn_seed: u64,
}

/// Builds the receiving end of an R²CP flow.
pub fn r2cp_receiver(p: R2cpReceiverParams) -> Box<dyn Agent> {
    let n = p.pipes.len();
    Box::new(R2cpReceiverAgent {
        p,
        conn: None,
        live: vec![None; n],
        next_pipe: 0,
        read_buf: Vec::new(),
        failed: false,
        reconciled: None,
    })
}

/// Builds one server of an R²CP flow: it serves the pattern object of `size` bytes to any
/// number of RCP receiver pipes (unbounded when `None`).
pub fn r2cp_server(
    flow: FlowIdx,
    config: Arc<RcpConfig>,
    iface: IfaceIdx,
    local_port: u16,
    size: Option<u64>,
) -> Box<dyn Agent> {
    Box::new(R2cpServerAgent {
        flow,
        resets: ResetLimiter::new(config.resets_per_second),
        acceptor: RcpAcceptor::new(
            config,
            Arc::new(PatternStore {
                len: size.unwrap_or(UNKNOWN_LENGTH),
            }),
        ),
        key: None,
        iface,
        local_port,
        conns: HashMap::new(),
    })
}

struct R2cpReceiverAgent {
    p: R2cpReceiverParams,
    conn: Option<R2cpReceiver>,
    /// For each planned pipe, the engine pipe currently standing for it.
    live: Vec<Option<PipeId>>,
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
        if self.conn.is_none() {
            let end = self.p.size.unwrap_or(u64::MAX);
            match R2cpReceiver::new(self.p.config.clone(), self.p.scheme, OBJECT_NAME, (0, end)) {
                Ok(mut c) => {
                    c.set_policy(now, self.p.policy);
                    self.conn = Some(c);
                }
                Err(_) => {
                    self.failed = true;
                    return;
                }
            }
        }
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        if conn.is_complete() {
            return;
        }
        for (k, plan) in self.p.pipes.iter().enumerate() {
            let stopped = plan.stop.is_some_and(|(t, _)| now >= t);
            let up = Self::iface_up(ctx, plan.iface);
            match self.live[k] {
                Some(id) if stopped || !up => {
                    let how = match plan.stop {
                        Some((_, how)) if stopped && up => how,
                        _ => Removal::Break,
                    };
                    conn.remove_pipe(now, id, how);
                    self.live[k] = None;
                }
                None if now >= plan.start && !stopped && up => {
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
                        if let Some(info) = ctx.link_info(plan.iface) {
                            conn.set_link_info(now, id, &info);
                        }
                        self.live[k] = Some(id);
                    }
                }
                _ => {}
            }
        }
    }

    fn after_call(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let flow = self.p.flow;
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        loop {
            self.read_buf.clear();
            let offset = conn.read_point();
            let n = conn.read(&mut self.read_buf, 1 << 20);
            if n == 0 {
                break;
            }
            let bad = pattern::mismatches(offset, &self.read_buf);
            let c = ctx.counters(flow);
            c.bytes_delivered += n as u64;
            c.integrity_errors += bad;
        }
        while let Some(ev) = conn.poll_event() {
            match ev {
                R2cpEvent::Eof => {
                    ctx.counters(flow).completed_at.get_or_insert(now);
                }
                R2cpEvent::PipeFailed(id) | R2cpEvent::PipeClosed(id) => {
                    // A failed pipe is not recreated until its interface or plan changes.
                    for l in self.live.iter_mut() {
                        if *l == Some(id) && matches!(ev, R2cpEvent::PipeClosed(_)) {
                            *l = None;
                        }
                    }
                }
                R2cpEvent::Connected { .. } | R2cpEvent::PipeUp(_) | R2cpEvent::Closed => {}
            }
        }
        loop {
            let mut buf = ctx.buffer();
            let Some((path, len)) = conn.poll_transmit(now, &mut buf) else {
                ctx.give_back(buf);
                break;
            };
            let Some(plan) = self.p.pipes.get(path.0 as usize) else {
                ctx.give_back(buf);
                continue;
            };
            let Some(src) = ctx.local_addr(plan.iface) else {
                ctx.give_back(buf);
                continue;
            };
            let c = ctx.counters(flow);
            c.datagrams_sent += 1;
            c.transport_bytes_sent += len as u64;
            ctx.send(
                plan.iface,
                Packet {
                    src: SockAddr {
                        addr: src,
                        port: self.p.local_port,
                    },
                    dst: plan.server,
                    payload: buf,
                    flow: Some(flow),
                },
            );
        }
        let (mut rereq, mut timeouts) = (0, 0);
        for p in conn.pipes() {
            rereq += p.rerequests;
            timeouts += p.timeouts;
        }
        let s = conn.stats();
        let c = ctx.counters(flow);
        c.retransmitted_segments = c.retransmitted_segments.max(s.bytes_rebound / 1000 + rereq);
        c.timeouts = c.timeouts.max(timeouts);
        if conn.pipes().next().is_none() && !conn.is_complete() && self.failed {
            c.fail(now, FlowFailure::GaveUp);
        }
    }
}

impl Agent for R2cpReceiverAgent {
    fn start(&mut self, ctx: &mut dyn NetCtx) {
        self.reconcile(ctx);
        self.after_call(ctx);
    }

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        if let Some(conn) = self.conn.as_mut() {
            let _ = conn.handle_datagram(ctx.now(), &packet.payload);
        }
        self.after_call(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        self.reconcile(ctx);
        if let Some(conn) = self.conn.as_mut() {
            conn.handle_timeout(ctx.now());
        }
        self.after_call(ctx);
    }

    fn next_timer(&self) -> Option<Time> {
        let conn = self.conn.as_ref().and_then(|c| c.poll_timeout());
        let done = self.conn.as_ref().is_some_and(|c| c.is_complete());
        let plan = self
            .p
            .pipes
            .iter()
            .zip(&self.live)
            .flat_map(|(p, l)| {
                let start = (l.is_none() && !done).then_some(p.start);
                let stop = l.and(p.stop.map(|(t, _)| t));
                [start, stop]
            })
            .flatten()
            .filter(|&t| self.reconciled.is_none_or(|r| t > r));
        conn.into_iter().chain(plan).min()
    }

    fn sample(&self) -> AgentSample {
        match &self.conn {
            Some(c) => AgentSample {
                cwnd_bytes: Some(c.pipes().map(|p| p.cwnd).sum()),
                seq: Some(c.rcv_nxt()),
            },
            None => AgentSample::default(),
        }
    }

    fn on_link_change(&mut self, iface: IfaceIdx, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        if let (Some(conn), Some(info)) = (self.conn.as_mut(), ctx.link_info(iface)) {
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
        if let (Some(conn), Ok(d)) = (self.conn.as_mut(), Data::decode(&packet.payload)) {
            for (plan, id) in self.p.pipes.iter().zip(&self.live) {
                if let (true, Some(id)) = (plan.iface == iface, id) {
                    conn.note_corrupted(*id, d.seq);
                }
            }
        }
        self.after_call(ctx);
    }
}

struct R2cpServerAgent {
    flow: FlowIdx,
    iface: IfaceIdx,
    local_port: u16,
    /// Answers requests for no connection held here (the stateless handshake, resets).
    acceptor: RcpAcceptor,
    /// This host's address-validation key, drawn on first use.
    key: Option<TokenKey>,
    /// One unchanged RCP sender per pipe that reached this server.
    conns: HashMap<ConnId, (RcpSender, SockAddr)>,
    resets: ResetLimiter,
}

impl R2cpServerAgent {
    fn flush(&mut self, id: ConnId, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        if ctx.local_addr(self.iface).is_none() {
            return;
        }
        loop {
            let mut buf = ctx.buffer();
            let Some((conn, peer)) = self.conns.get_mut(&id) else {
                ctx.give_back(buf);
                return;
            };
            let peer = *peer;
            if conn.poll_transmit(now, &mut buf).is_none() {
                ctx.give_back(buf);
                return;
            }
            super::send_counted(ctx, (self.flow, self.iface, self.local_port), peer, buf);
        }
    }
}

impl Agent for R2cpServerAgent {
    fn start(&mut self, _ctx: &mut dyn NetCtx) {}

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let Ok(r) = Request::decode(&packet.payload) else {
            return;
        };
        let id = r.conn_id;
        match self.conns.get_mut(&id) {
            Some((c, peer)) => {
                let _ = c.handle_datagram(now, &packet.payload);
                *peer = packet.src;
            }
            None => {
                // As the RCP sender host: a stateless SYN+ACK with a token, a reset within
                // the budget, or — for a request echoing a valid token — the connection
                // (docs/HANDSHAKE-RCP.md).
                let key = self
                    .key
                    .get_or_insert_with(|| crate::rng::token_key(ctx.rng()));
                let mut buf = ctx.buffer();
                match self
                    .acceptor
                    .on_unknown(now, key, &packet.src, &packet.payload, &mut buf)
                {
                    Unknown::Reply { len } => {
                        buf.truncate(len);
                        super::send_counted(
                            ctx,
                            (self.flow, self.iface, self.local_port),
                            packet.src,
                            buf,
                        );
                        return;
                    }
                    Unknown::Reset { len } if self.resets.allow(now) => {
                        buf.truncate(len);
                        super::send_counted(
                            ctx,
                            (self.flow, self.iface, self.local_port),
                            packet.src,
                            buf,
                        );
                        return;
                    }
                    Unknown::Reset { .. } | Unknown::Drop => {
                        ctx.give_back(buf);
                        return;
                    }
                    Unknown::Accept(c) => {
                        ctx.give_back(buf);
                        self.conns.insert(id, (c, packet.src));
                    }
                }
            }
        }
        self.flush(id, ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        for (c, _) in self.conns.values_mut() {
            c.handle_timeout(now);
        }
        self.conns.retain(|_, (c, _)| !c.is_expired());
    }

    fn next_timer(&self) -> Option<Time> {
        self.conns
            .values()
            .filter_map(|(c, _)| c.poll_timeout())
            .min()
    }
}
