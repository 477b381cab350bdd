//! pTCP flow agents (ptcp.txt §3–4): the sender stripes one stream of the integrity pattern
//! over one TCP-v pipe per planned (sender interface, receiver interface) pair; the receiver
//! reassembles and verifies every byte. Both are thin adapters over one roam-proto
//! [`Endpoint`] per flow end, driving the sans-IO [`PtcpSender`] / [`PtcpReceiver`] with the
//! engine's encoded bytes.
//!
//! The sender is the client (ptcp.txt §4.4: the mobile host opens the connection): it opens
//! the first planned pipe with a SYN carrying nTx and its addresses, and the others once the
//! SYN-ACK arrived (at most the nRx the server agreed to); each pipe closes by its own FIN once
//! the stream is acknowledged. The receiver's endpoint accepts the connection through a
//! [`PtcpAcceptor`] (stateless SYN cookies, no amplification) and lets the other pipes join
//! it; its pipe limit is the number of planned pipes. Pipe identifiers derive from the flow's
//! seed, ISNs and the address-validation key from streams derived from each agent's own
//! (`rng::derived_rng`, `rng::token_key`), so no other draw of a run moves.

use std::sync::Arc;

use rand::Rng;
use roam_proto::cc::CcKind;
use roam_proto::endpoint::{
    DatagramEvent, Endpoint, EndpointConfig, EndpointEvent, Handle, NoAcceptor, PathAddrs, PathId,
    TokenKey,
};
use roam_proto::ptcp::{PtcpAcceptor, PtcpReceiver, PtcpSender};
use roam_proto::tcp::{TcpConfig, MAX_ISN};
use roam_proto::Time;
use roam_wire::ConnId;

use super::pattern;
use crate::agent::{Agent, AgentSample, FlowIdx, IfaceIdx, NetCtx, Packet, SockAddr};
use crate::result::FlowFailure;
use crate::rng::{derived_rng, token_key};

/// One planned pipe of a pTCP flow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PtcpPipePlan {
    /// The sender's interface.
    pub from_iface: IfaceIdx,
    /// The sender's address on it (where acknowledgements go).
    pub sender: SockAddr,
    /// The receiver's interface.
    pub to_iface: IfaceIdx,
    /// The receiver's address on it (where data goes).
    pub receiver: SockAddr,
    /// The pipe's congestion controller (ptcp.txt §4.2: per-pipe congestion control).
    pub cc: CcKind,
}

/// How to build a pTCP flow's two agents.
#[derive(Debug, Clone)]
pub struct PtcpParams {
    /// The flow.
    pub flow: FlowIdx,
    /// The pipes' options (MSS, buffers, SACK, timers).
    pub config: Arc<TcpConfig>,
    /// The pipes.
    pub pipes: Vec<PtcpPipePlan>,
    /// Bytes to send (`None`: unbounded).
    pub size: Option<u64>,
    /// The flow's seed: connection and pipe identifiers derive from it.
    pub conn_seed: u64,
}

impl PtcpParams {
    fn local_id(&self) -> ConnId {
        ConnId(self.conn_seed ^ 0x7074_6370_0001)
    }

    fn pipe_id(&self, k: usize) -> ConnId {
        ConnId(self.conn_seed.rotate_left(17) ^ (k as u64 + 1))
    }
}

/// An address as the handshake's address lists carry it: the address, then the port, big
/// endian.
fn encode_addr(a: SockAddr) -> Vec<u8> {
    let mut v = a.addr.0.to_be_bytes().to_vec();
    v.extend_from_slice(&a.port.to_be_bytes());
    v
}

/// Builds the (sender, receiver) agents of a pTCP flow.
pub fn ptcp_agents(
    p: PtcpParams,
    sender_port: u16,
    receiver_port: u16,
) -> (Box<dyn Agent>, Box<dyn Agent>) {
    let sender = PtcpSenderAgent {
        p: p.clone(),
        port: sender_port,
        endpoint: Endpoint::new(
            // The client never expires its connection (the engine gives up by itself); a
            // client endpoint mints no tokens, so its key is never used.
            EndpointConfig {
                idle_timeout: None,
                ..EndpointConfig::default()
            },
            TokenKey::new([0; 16]),
            NoAcceptor::default(),
        ),
        conn: None,
        done: None,
        written: 0,
        next_timer: None,
    };
    let receiver = PtcpReceiverAgent {
        p,
        port: receiver_port,
        endpoint: None,
        conn: None,
        done: None,
        buf: Vec::new(),
        next_timer: None,
    };
    (Box::new(sender), Box::new(receiver))
}

type ClientEndpoint = Endpoint<SockAddr, IfaceIdx, NoAcceptor<PtcpSender>>;

struct PtcpSenderAgent {
    p: PtcpParams,
    port: u16,
    endpoint: ClientEndpoint,
    /// The connection, while the endpoint holds it.
    conn: Option<Handle>,
    /// The connection once the endpoint removed it (closed), for its final state.
    done: Option<PtcpSender>,
    written: u64,
    /// The endpoint's next deadline, re-read after every call into it.
    next_timer: Option<Time>,
}

impl PtcpSenderAgent {
    fn tx(&self) -> Option<&PtcpSender> {
        self.conn
            .and_then(|h| self.endpoint.connection(h))
            .or(self.done.as_ref())
    }

    fn after_call(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        if let Some(tx) = self.conn.and_then(|h| self.endpoint.connection_mut(h)) {
            let left = self.p.size.map_or(u64::MAX, |s| s - self.written);
            if left > 0 {
                self.written += tx.push(left);
                if self.p.size == Some(self.written) {
                    tx.close();
                }
            }
        }
        loop {
            let mut buf = ctx.buffer();
            let Some(t) = self.endpoint.poll_transmit(now, &mut buf) else {
                ctx.give_back(buf);
                break;
            };
            buf.truncate(t.len);
            super::send_counted(ctx, (self.p.flow, t.local, self.port), t.remote, buf);
        }
        while let Some(ev) = self.endpoint.poll_event() {
            if let EndpointEvent::Removed { conn, .. } = ev {
                self.conn = None;
                self.done = Some(conn);
            }
        }
        self.next_timer = self.endpoint.poll_timeout();
        let Some(tx) = self.tx() else {
            return;
        };
        let (mut retx, mut timeouts, mut recoveries) = (0, 0, 0);
        for (_, _, _, s) in tx.pipes() {
            retx += s.retransmitted_segments;
            timeouts += s.timeouts;
            recoveries += s.recoveries;
        }
        let failed = tx.failed();
        let c = ctx.counters(self.p.flow);
        c.retransmitted_segments = retx;
        c.timeouts = timeouts;
        c.recoveries = recoveries;
        if failed {
            c.fail(now, FlowFailure::GaveUp);
        }
    }

    /// ptcp.txt §4.4, active open: the connection with every planned pipe; the first pipe's
    /// SYN leaves at once.
    fn connect(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let addrs: Vec<Vec<u8>> = self
            .p
            .pipes
            .iter()
            .map(|pl| encode_addr(pl.sender))
            .collect();
        let refs: Vec<&[u8]> = addrs.iter().map(Vec::as_slice).collect();
        let Some(mut tx) = PtcpSender::connect(&self.p.config, self.p.local_id(), &refs) else {
            ctx.counters(self.p.flow).fail(now, FlowFailure::GaveUp);
            return;
        };
        let mut isn_rng = derived_rng(ctx.rng(), "ptcp:isn");
        let mut paths = Vec::new();
        for (k, plan) in self.p.pipes.iter().enumerate() {
            let isn = isn_rng.gen::<u64>() & MAX_ISN;
            tx.open_pipe(now, k as u32, self.p.pipe_id(k), plan.cc, isn);
            paths.push(PathAddrs {
                path: PathId(k as u32),
                local: plan.from_iface,
                remote: plan.receiver,
            });
        }
        tx.set_source(Box::new(pattern::PatternSource));
        // The only connection this endpoint holds: its ids cannot be in use.
        self.conn = self.endpoint.insert(now, tx, &paths).ok();
    }
}

impl Agent for PtcpSenderAgent {
    fn start(&mut self, ctx: &mut dyn NetCtx) {
        self.connect(ctx);
        self.after_call(ctx);
    }

    fn on_packet(&mut self, iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        let mut out = ctx.buffer();
        // A client endpoint answers nothing: no reply comes back.
        let _ = self
            .endpoint
            .handle(ctx.now(), iface, packet.src, &packet.payload, &mut out);
        ctx.give_back(out);
        self.after_call(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        self.endpoint.handle_timeout(ctx.now());
        self.after_call(ctx);
    }

    fn next_timer(&self) -> Option<Time> {
        self.next_timer
    }

    fn sample(&self) -> AgentSample {
        let Some(tx) = self.tx() else {
            return AgentSample::default();
        };
        AgentSample {
            cwnd_bytes: Some(tx.pipes().map(|(_, c, _, _)| c).sum()),
            seq: Some(tx.acked().0),
        }
    }
}

type ServerEndpoint = Endpoint<SockAddr, IfaceIdx, PtcpAcceptor>;

struct PtcpReceiverAgent {
    p: PtcpParams,
    port: u16,
    /// Built at the start, with this host's address-validation key.
    endpoint: Option<ServerEndpoint>,
    /// The connection, once accepted and while the endpoint holds it.
    conn: Option<Handle>,
    /// The connection once the endpoint removed it (closed or expired).
    done: Option<PtcpReceiver>,
    buf: Vec<u8>,
    /// The endpoint's next deadline, re-read after every call into it.
    next_timer: Option<Time>,
}

impl PtcpReceiverAgent {
    fn after_call(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let Some(ep) = self.endpoint.as_mut() else {
            return;
        };
        let flow = self.p.flow;
        if let Some(rx) = self.conn.and_then(|h| ep.connection_mut(h)) {
            pattern::deliver_checked(ctx, flow, &mut self.buf, |buf| {
                (rx.bytes_delivered(), rx.read(buf, 1 << 20))
            });
            if rx.fin_received() {
                ctx.counters(flow).completed_at.get_or_insert(now);
            }
        }
        loop {
            let mut buf = ctx.buffer();
            let Some(t) = ep.poll_transmit(now, &mut buf) else {
                ctx.give_back(buf);
                break;
            };
            buf.truncate(t.len);
            super::send_counted(ctx, (flow, t.local, self.port), t.remote, buf);
        }
        while let Some(ev) = ep.poll_event() {
            match ev {
                EndpointEvent::Accepted(h) => {
                    self.conn.get_or_insert(h);
                }
                EndpointEvent::Removed {
                    handle, mut conn, ..
                } => {
                    if self.conn == Some(handle) {
                        self.conn = None;
                        // Whatever it still held in order (nothing, once it closed).
                        pattern::deliver_checked(ctx, flow, &mut self.buf, |buf| {
                            (conn.bytes_delivered(), conn.read(buf, usize::MAX))
                        });
                        if conn.fin_received() {
                            ctx.counters(flow).completed_at.get_or_insert(now);
                        }
                        self.done = Some(conn);
                    }
                }
            }
        }
        self.next_timer = ep.poll_timeout();
    }
}

impl Agent for PtcpReceiverAgent {
    fn start(&mut self, ctx: &mut dyn NetCtx) {
        let key = token_key(ctx.rng());
        let addrs = self
            .p
            .pipes
            .iter()
            .map(|pl| encode_addr(pl.receiver))
            .collect();
        let max_pipes = self.p.pipes.len().clamp(1, usize::from(u8::MAX)) as u8;
        let acceptor = PtcpAcceptor::new((*self.p.config).clone(), max_pipes, addrs);
        self.endpoint = Some(Endpoint::new(EndpointConfig::default(), key, acceptor));
    }

    fn on_packet(&mut self, iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let Some(ep) = self.endpoint.as_mut() else {
            return;
        };
        let mut buf = ctx.buffer();
        match ep.handle(now, iface, packet.src, &packet.payload, &mut buf) {
            Some(DatagramEvent::Respond { local, remote, len }) => {
                buf.truncate(len);
                super::send_counted(ctx, (self.p.flow, local, self.port), remote, buf);
            }
            Some(DatagramEvent::Accepted(h)) => {
                self.conn.get_or_insert(h);
                ctx.give_back(buf);
            }
            Some(DatagramEvent::Delivered(_)) | None => ctx.give_back(buf),
        }
        self.after_call(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        if let Some(ep) = self.endpoint.as_mut() {
            ep.handle_timeout(ctx.now());
        }
        self.after_call(ctx);
    }

    fn next_timer(&self) -> Option<Time> {
        self.next_timer
    }

    fn on_corrupted(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        // The host's report of a segment corrupted on its wireless hop (TCP-ELN).
        if let Some(rx) = self
            .conn
            .and_then(|h| self.endpoint.as_mut()?.connection_mut(h))
        {
            rx.note_corrupted(&packet.payload);
        }
        self.after_call(ctx);
    }
}
