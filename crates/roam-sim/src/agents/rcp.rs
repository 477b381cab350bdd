//! RCP flow agents (rcp-r2cp.txt §3): the receiver (the mobile host, which opens the
//! connection and drives the transfer) and the object-serving sender, wrapping the sans-IO
//! [`roam_proto::rcp`] engines. The receiver verifies every byte against the integrity
//! pattern, reports wireless corruption to its engine (per-hole ELN) and, with a
//! [`SleepPolicy`], puts its radio to sleep while the channel is bad (§3.4.4). The sender's
//! host answers the handshake through an [`RcpAcceptor`] keyed from the run's seeded RNG
//! (`docs/HANDSHAKE-RCP.md`): a stateless SYN+ACK with a token, the connection on its echo.

use std::sync::Arc;
use std::time::Duration;

use roam_proto::endpoint::{
    DatagramEvent, Endpoint, EndpointConfig, EndpointEvent, Handle, NoAcceptor, PathAddrs, PathId,
    TokenKey,
};
use roam_proto::linkinfo::ChannelState;
use roam_proto::loss_cause::Scheme;
use roam_proto::rcp::{ObjectStore, RcpAcceptor, RcpCc, RcpConfig, RcpEvent, RcpReceiver};
use roam_proto::Time;
use roam_wire::{ConnId, Data, UNKNOWN_LENGTH};

use super::flow::{FlowAgents, FlowEnds};
use super::pattern;
use crate::agent::{Agent, AgentSample, FlowIdx, IfaceIdx, NetCtx, Packet, SockAddr};
use crate::energy::{PowerModel, RadioMeter};
use crate::result::FlowFailure;
use crate::scenario::RcpSetup;

/// The object every simulated RCP flow transfers.
const OBJECT_NAME: &[u8] = b"pattern";

/// An object store holding the integrity pattern, of `len` bytes (or unbounded).
#[derive(Debug, Clone, Copy)]
pub struct PatternStore {
    /// Object length, [`UNKNOWN_LENGTH`] for unbounded.
    pub len: u64,
}

impl ObjectStore for PatternStore {
    fn object_len(&self, name: &[u8]) -> Option<u64> {
        (name == OBJECT_NAME).then_some(self.len)
    }
    fn read_now(&self, _name: &[u8], offset: u64, len: usize, out: &mut Vec<u8>) -> bool {
        pattern::fill(offset, len, out);
        true
    }
}

/// The power-saving policy of §3.4.4: sleep when the local channel turns bad, wake every
/// `beacon_interval` for `beacon_duration` to hear the access point's beacon and measure the
/// channel, resume (requesting the holes) once it is good again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SleepPolicy {
    /// Interval between beacons (100 ms in the paper).
    pub beacon_interval: Duration,
    /// Beacon listening time (2 ms in the paper), charged at receive power.
    pub beacon_duration: Duration,
}

impl Default for SleepPolicy {
    fn default() -> Self {
        SleepPolicy {
            beacon_interval: Duration::from_millis(100),
            beacon_duration: Duration::from_millis(2),
        }
    }
}

/// How to build an RCP receiver agent.
#[derive(Debug, Clone)]
pub struct RcpReceiverParams {
    /// The flow.
    pub flow: FlowIdx,
    /// Engine options.
    pub config: Arc<RcpConfig>,
    /// Congestion controller.
    pub cc: RcpCc,
    /// Local interface.
    pub iface: IfaceIdx,
    /// Local port.
    pub local_port: u16,
    /// The sender's address.
    pub peer: SockAddr,
    /// When to open the connection.
    pub start: Time,
    /// Bytes to fetch (`None`: unbounded).
    pub size: Option<u64>,
    /// Connection-id seed.
    pub conn_seed: u64,
    /// Meter the interface's energy with this model.
    pub energy: Option<PowerModel>,
    /// Sleep while the channel is bad.
    pub sleep: Option<SleepPolicy>,
    /// Bytes added to each datagram on the wire (for airtime).
    pub header_overhead: u32,
    /// The receiver estimates wireless-loss facts itself (Spike); the link's corruption
    /// reports are not passed on.
    pub estimated_facts: bool,
}

/// Builds the receiving (requesting) end of an RCP flow.
pub fn rcp_receiver(p: RcpReceiverParams) -> Box<dyn Agent> {
    let meter = p
        .energy
        .or(p.sleep.map(|_| PowerModel::default()))
        .map(|m| RadioMeter::new(m, Time::ZERO, p.header_overhead));
    // The receiver opens its connection and never expires it (the engine gives up by
    // itself); a client endpoint mints no tokens, so its key is never used.
    let endpoint_config = EndpointConfig {
        idle_timeout: None,
        ..EndpointConfig::default()
    };
    Box::new(RcpReceiverAgent {
        p,
        endpoint: Endpoint::new(
            endpoint_config,
            TokenKey::new([0; 16]),
            NoAcceptor::default(),
        ),
        conn: None,
        done: None,
        next_conn_timer: None,
        read_buf: Vec::new(),
        meter,
        asleep: false,
        next_beacon: None,
    })
}

/// Builds the sending (serving) end of an RCP flow: it answers the first SYN on its port and
/// serves the pattern object of `size` bytes (unbounded when `None`).
pub fn rcp_sender(
    flow: FlowIdx,
    config: Arc<RcpConfig>,
    iface: IfaceIdx,
    local_port: u16,
    size: Option<u64>,
) -> Box<dyn Agent> {
    let store = Arc::new(PatternStore {
        len: size.unwrap_or(UNKNOWN_LENGTH),
    });
    // The engine expires an idle connection itself (`RcpConfig::idle_timeout_ms`), which the
    // endpoint sees as drained; the endpoint's reset budget is the flow's.
    let endpoint_config = EndpointConfig {
        idle_timeout: None,
        resets_per_second: config.resets_per_second,
        ..EndpointConfig::default()
    };
    Box::new(RcpSenderAgent {
        flow,
        endpoint_config,
        acceptor: Some(RcpAcceptor::new(config, store)),
        endpoint: None,
        iface,
        local_port,
        dequeued: None,
        next_timer: None,
    })
}

/// The receiving host's endpoint (a client: it accepts nothing).
type ReceiverEndpoint = Endpoint<SockAddr, (), NoAcceptor<RcpReceiver>>;

struct RcpReceiverAgent {
    p: RcpReceiverParams,
    endpoint: ReceiverEndpoint,
    /// The connection, while the endpoint holds it.
    conn: Option<Handle>,
    /// The connection once the endpoint removed it (drained), for its final state.
    done: Option<RcpReceiver>,
    /// The endpoint's next deadline, re-read after every call into it.
    next_conn_timer: Option<Time>,
    read_buf: Vec<u8>,
    meter: Option<RadioMeter>,
    asleep: bool,
    next_beacon: Option<Time>,
}

fn rate(ctx: &dyn NetCtx, iface: IfaceIdx) -> u64 {
    ctx.link_info(iface).map_or(0, |l| l.bandwidth_bps)
}

impl RcpReceiverAgent {
    /// True once the connection was opened (it may since have been removed).
    fn opened(&self) -> bool {
        self.conn.is_some() || self.done.is_some()
    }

    /// The connection, held or removed.
    fn connection(&self) -> Option<&RcpReceiver> {
        self.conn
            .and_then(|h| self.endpoint.connection(h))
            .or(self.done.as_ref())
    }

    fn after_call(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let flow = self.p.flow;
        if let Some(conn) = self.conn.and_then(|h| self.endpoint.connection_mut(h)) {
            pattern::deliver_checked(ctx, flow, &mut self.read_buf, |buf| {
                (conn.read_point(), conn.read(buf, 1 << 20))
            });
            while let Some(ev) = conn.poll_event() {
                match ev {
                    RcpEvent::Eof => {
                        ctx.counters(flow).completed_at.get_or_insert(now);
                    }
                    RcpEvent::Failed => {
                        ctx.counters(flow).fail(now, FlowFailure::HandshakeTimedOut)
                    }
                    RcpEvent::Reset => ctx.counters(flow).fail(now, FlowFailure::Reset),
                    RcpEvent::TimedOut => ctx.counters(flow).fail(now, FlowFailure::GaveUp),
                    RcpEvent::Connected { .. } | RcpEvent::Closed => {}
                }
            }
        }
        if self.conn.is_some() && !self.asleep {
            let r = rate(ctx, self.p.iface);
            let at = (flow, self.p.iface, self.p.local_port);
            loop {
                let mut buf = ctx.buffer();
                let Some(t) = self.endpoint.poll_transmit(now, &mut buf) else {
                    ctx.give_back(buf);
                    break;
                };
                buf.truncate(t.len);
                if super::send_counted(ctx, at, t.remote, buf) {
                    if let Some(m) = self.meter.as_mut() {
                        m.on_tx(t.len, r);
                    }
                }
            }
        }
        while let Some(ev) = self.endpoint.poll_event() {
            if let EndpointEvent::Removed { conn, .. } = ev {
                self.conn = None;
                self.done = Some(conn);
            }
        }
        self.next_conn_timer = self.endpoint.poll_timeout();
        if let Some(s) = self.connection().map(|c| c.pipe().stats()) {
            let c = ctx.counters(flow);
            c.retransmitted_segments = s.rerequests;
            c.timeouts = s.timeouts;
            c.recoveries = s.recoveries;
            c.wireless_excused = s.wireless_holes;
        }
        if let Some(m) = &self.meter {
            ctx.counters(flow).radio = Some(m.clone());
        }
    }

    fn connect(&mut self, ctx: &mut dyn NetCtx) {
        let id = ConnId(self.p.conn_seed ^ rand::RngCore::next_u64(ctx.rng()));
        let end = self.p.size.unwrap_or(u64::MAX);
        if let Ok(mut c) = RcpReceiver::connect(
            self.p.config.clone(),
            self.p.cc,
            id,
            OBJECT_NAME,
            (0, end),
            ctx.now(),
        ) {
            if let Some(info) = ctx.link_info(self.p.iface) {
                c.set_link_info(ctx.now(), &info);
            }
            if self.p.estimated_facts {
                c.set_loss_estimator(Some(Scheme::Spike));
            }
            let path = PathAddrs {
                path: PathId::PRIMARY,
                local: (),
                remote: self.p.peer,
            };
            // The only connection this endpoint holds: its id cannot be in use.
            self.conn = self.endpoint.insert(ctx.now(), c, &[path]).ok();
        }
    }

    /// §3.4.4: the channel turned bad — freeze the connection and sleep until a beacon shows
    /// a good channel.
    fn go_to_sleep(&mut self, now: Time) {
        let Some(policy) = self.p.sleep else { return };
        if self.asleep {
            return;
        }
        self.asleep = true;
        if let Some(c) = self.conn.and_then(|h| self.endpoint.connection_mut(h)) {
            c.freeze(now);
        }
        if let Some(m) = self.meter.as_mut() {
            m.sleep(now);
        }
        self.next_beacon = Some(now + policy.beacon_interval);
    }

    fn beacon(&mut self, ctx: &mut dyn NetCtx) {
        let Some(policy) = self.p.sleep else { return };
        let now = ctx.now();
        if let Some(m) = self.meter.as_mut() {
            m.beacon(policy.beacon_duration);
        }
        let good = ctx
            .link_info(self.p.iface)
            .is_none_or(|l| l.channel == ChannelState::Good && l.up);
        if good {
            self.asleep = false;
            self.next_beacon = None;
            if let Some(m) = self.meter.as_mut() {
                m.wake(now);
            }
            if let Some(c) = self.conn.and_then(|h| self.endpoint.connection_mut(h)) {
                c.thaw(now); // Resumes by requesting the holes.
            }
        } else {
            self.next_beacon = Some(now + policy.beacon_interval);
        }
    }
}

impl Agent for RcpReceiverAgent {
    fn start(&mut self, ctx: &mut dyn NetCtx) {
        if let Some(m) = self.meter.as_mut() {
            *m = RadioMeter::new(
                PowerModel {
                    ..self.p.energy.unwrap_or_default()
                },
                ctx.now(),
                self.p.header_overhead,
            );
        }
        if ctx.now() >= self.p.start {
            self.connect(ctx);
        }
        self.after_call(ctx);
    }

    fn on_packet(&mut self, iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        if self.asleep {
            return; // The radio is off: the packet is lost.
        }
        let r = rate(ctx, iface);
        if let Some(m) = self.meter.as_mut() {
            m.on_rx(packet.payload.len(), r);
        }
        let mut out = ctx.buffer();
        // A client endpoint answers nothing: no reply comes back.
        let _ = self
            .endpoint
            .handle(ctx.now(), (), packet.src, &packet.payload, &mut out);
        ctx.give_back(out);
        self.after_call(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        if !self.opened() && now >= self.p.start {
            self.connect(ctx);
        }
        if self.asleep && self.next_beacon.is_some_and(|t| t <= now) {
            self.beacon(ctx);
        }
        self.endpoint.handle_timeout(now);
        self.after_call(ctx);
    }

    fn next_timer(&self) -> Option<Time> {
        let start = (!self.opened()).then_some(self.p.start);
        [start, self.next_conn_timer, self.next_beacon]
            .into_iter()
            .flatten()
            .min()
    }

    fn sample(&self) -> AgentSample {
        match self.connection() {
            Some(c) => AgentSample {
                cwnd_bytes: Some(c.pipe().cwnd()),
                seq: Some(c.rcv_nxt()),
            },
            None => AgentSample::default(),
        }
    }

    fn on_link_change(&mut self, iface: IfaceIdx, ctx: &mut dyn NetCtx) {
        if iface != self.p.iface {
            return;
        }
        let Some(info) = ctx.link_info(iface) else {
            return;
        };
        let now = ctx.now();
        if let Some(c) = self.conn.and_then(|h| self.endpoint.connection_mut(h)) {
            c.set_link_info(now, &info);
        }
        if info.channel == ChannelState::Bad && self.opened() {
            self.go_to_sleep(now);
        }
        self.after_call(ctx);
    }

    fn on_corrupted(&mut self, iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        if self.asleep {
            return;
        }
        let r = rate(ctx, iface);
        if let Some(m) = self.meter.as_mut() {
            m.on_rx(packet.payload.len(), r);
        }
        // The header survived: the receiver knows which requested segment was corrupted on
        // its own wireless hop (per-hole ELN, §3.4.2) — unless it estimates the facts itself.
        if self.p.estimated_facts {
            self.after_call(ctx);
            return;
        }
        if let (Some(conn), Ok(d)) = (
            self.conn.and_then(|h| self.endpoint.connection_mut(h)),
            Data::decode(&packet.payload),
        ) {
            conn.note_corrupted(d.seq);
        }
        self.after_call(ctx);
    }
}

/// The sending host's endpoint: one per (node, port); the endpoint holds the accept policy
/// (an [`RcpAcceptor`]), the conn-id lookup, expiry and the reset budget.
type SenderEndpoint = Endpoint<SockAddr, (), RcpAcceptor>;

struct RcpSenderAgent {
    flow: FlowIdx,
    /// The endpoint's limits, from the flow's RCP configuration.
    endpoint_config: EndpointConfig,
    /// The accept side, until the endpoint is built (with this host's key, on first use).
    acceptor: Option<RcpAcceptor>,
    endpoint: Option<SenderEndpoint>,
    iface: IfaceIdx,
    local_port: u16,
    /// The receiver's in-order point last reported (kept when the connection expires).
    dequeued: Option<u64>,
    /// The endpoint's next deadline, re-read after every call into it.
    next_timer: Option<Time>,
}

impl RcpSenderAgent {
    /// The endpoint, built on first use with this host's address-validation key.
    fn endpoint(&mut self, ctx: &mut dyn NetCtx) -> Option<&mut SenderEndpoint> {
        if self.endpoint.is_none() {
            let acceptor = self.acceptor.take()?;
            let key = crate::rng::token_key(ctx.rng());
            self.endpoint = Some(Endpoint::new(self.endpoint_config.clone(), key, acceptor));
        }
        self.endpoint.as_mut()
    }

    /// Notes the connection's progress and what the endpoint removed, and re-reads its
    /// deadline.
    fn settle(&mut self, touched: Option<Handle>) {
        let Some(ep) = self.endpoint.as_mut() else {
            return;
        };
        if let Some(c) = touched.and_then(|h| ep.connection(h)) {
            self.dequeued = Some(c.dequeued());
        }
        while let Some(ev) = ep.poll_event() {
            if let EndpointEvent::Removed { conn, .. } = ev {
                self.dequeued = Some(conn.dequeued());
            }
        }
        self.next_timer = ep.poll_timeout();
    }
}

impl Agent for RcpSenderAgent {
    fn start(&mut self, _ctx: &mut dyn NetCtx) {}

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let (flow, iface, port) = (self.flow, self.iface, self.local_port);
        let Some(ep) = self.endpoint(ctx) else {
            return;
        };
        let mut buf = ctx.buffer();
        let touched = match ep.handle(now, (), packet.src, &packet.payload, &mut buf) {
            Some(DatagramEvent::Respond { remote, len, .. }) => {
                buf.truncate(len);
                super::send_counted(ctx, (flow, iface, port), remote, buf);
                None
            }
            Some(DatagramEvent::Delivered(h) | DatagramEvent::Accepted(h)) => {
                ctx.give_back(buf);
                Some(h)
            }
            None => {
                ctx.give_back(buf);
                None
            }
        };
        // Without an address (interface down) the engine keeps what it would send.
        if ctx.local_addr(iface).is_some() {
            loop {
                let mut buf = ctx.buffer();
                let Some(t) = ep.poll_transmit(now, &mut buf) else {
                    ctx.give_back(buf);
                    break;
                };
                buf.truncate(t.len);
                super::send_counted(ctx, (flow, iface, port), t.remote, buf);
            }
        }
        self.settle(touched);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        if let Some(ep) = self.endpoint.as_mut() {
            ep.handle_timeout(ctx.now());
        }
        self.settle(None);
    }

    fn next_timer(&self) -> Option<Time> {
        self.next_timer
    }

    fn sample(&self) -> AgentSample {
        // The sender keeps no congestion state; its progress is the receiver's in-order
        // point as reported by SEG.DEQ.
        AgentSample {
            cwnd_bytes: None,
            seq: self.dequeued,
        }
    }
}

/// Builds an RCP flow's agents: the sender (serving the object) on the flow's `from` host, the
/// receiver (requesting it) on its `to`; the receiver's energy model is the `[flow.rcp]`
/// table's, else the flow's `energy`.
pub(crate) fn build(setup: &RcpSetup, e: &FlowEnds<'_>) -> FlowAgents {
    let sender = rcp_sender(
        e.flow,
        Arc::clone(&setup.config),
        e.sender_iface(),
        e.sender_port,
        e.spec.size,
    );
    let receiver = rcp_receiver(RcpReceiverParams {
        flow: e.flow,
        config: Arc::clone(&setup.config),
        cc: setup.cc_kind,
        iface: e.receiver_iface(),
        local_port: e.receiver_port,
        peer: e.sender(),
        start: e.start(),
        size: e.spec.size,
        conn_seed: e.conn_seed,
        energy: setup.energy.or(e.spec.energy),
        sleep: setup.sleep,
        header_overhead: e.header_overhead,
        estimated_facts: setup.estimated_facts,
    });
    FlowAgents::pair(e, (sender, receiver))
}
