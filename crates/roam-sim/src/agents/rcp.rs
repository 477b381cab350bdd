//! RCP flow agents (rcp-r2cp.txt §3): the receiver (the mobile host, which opens the
//! connection and drives the transfer) and the object-serving sender, wrapping the sans-IO
//! [`roam_proto::rcp`] engines. The receiver verifies every byte against the integrity
//! pattern, reports wireless corruption to its engine (per-hole ELN) and, with a
//! [`SleepPolicy`], puts its radio to sleep while the channel is bad (§3.4.4). The sender's
//! host answers the handshake through an [`RcpAcceptor`] keyed from the run's seeded RNG
//! (`docs/HANDSHAKE-RCP.md`): a stateless SYN+ACK with a token, the connection on its echo.

use std::sync::Arc;
use std::time::Duration;

use roam_proto::endpoint::{Handle, NoAcceptor};
use roam_proto::linkinfo::ChannelState;
use roam_proto::loss_cause::Scheme;
use roam_proto::rcp::{ObjectStore, RcpAcceptor, RcpCc, RcpConfig, RcpEvent, RcpReceiver};
use roam_proto::Time;
use roam_wire::{ConnId, Data, UNKNOWN_LENGTH};

use super::flow::{FlowAgents, FlowEnds};
use super::host::{Arrived, Host};
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
    // itself).
    Box::new(RcpReceiverAgent {
        host: Host::client((p.iface, p.local_port, p.flow)),
        p,
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
    // endpoint sees as drained; the endpoint's reset budget is the flow's. The host's
    // address-validation key comes from the agent's `token-key` substream.
    let resets = config.resets_per_second;
    let acceptor = RcpAcceptor::new(config, store);
    Box::new(RcpSenderAgent {
        host: Host::keyed(
            (iface, local_port, flow),
            Some(acceptor),
            crate::rng::token_key,
        )
        .with_resets_per_second(resets),
        dequeued: None,
    })
}

struct RcpReceiverAgent {
    p: RcpReceiverParams,
    /// The receiving host (a client: it accepts nothing).
    host: Host<(), NoAcceptor<RcpReceiver>>,
    read_buf: Vec<u8>,
    meter: Option<RadioMeter>,
    asleep: bool,
    next_beacon: Option<Time>,
}

fn rate(ctx: &dyn NetCtx, iface: IfaceIdx) -> u64 {
    ctx.link_info(iface).map_or(0, |l| l.bandwidth_bps)
}

impl RcpReceiverAgent {
    fn after_call(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let flow = self.p.flow;
        if let Some(conn) = self.host.held_mut() {
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
        if self.host.is_held() && !self.asleep {
            let r = rate(ctx, self.p.iface);
            let meter = &mut self.meter;
            self.host.transmit(ctx, |len| {
                if let Some(m) = meter.as_mut() {
                    m.on_tx(len, r);
                }
            });
        }
        self.host.settle(|_, _| {});
        if let Some(s) = self.host.conn().map(|c| c.pipe().stats()) {
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
            self.host.connect(c, self.p.peer, ctx);
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
        if let Some(c) = self.host.held_mut() {
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
            if let Some(c) = self.host.held_mut() {
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
        // A client endpoint answers nothing: no reply goes back.
        self.host.on_packet(packet, ctx);
        self.after_call(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        if !self.host.opened() && now >= self.p.start {
            self.connect(ctx);
        }
        if self.asleep && self.next_beacon.is_some_and(|t| t <= now) {
            self.beacon(ctx);
        }
        self.host.on_timer(now);
        self.after_call(ctx);
    }

    fn next_timer(&self) -> Option<Time> {
        let start = (!self.host.opened()).then_some(self.p.start);
        [start, self.host.next_timer(), self.next_beacon]
            .into_iter()
            .flatten()
            .min()
    }

    fn sample(&self) -> AgentSample {
        match self.host.conn() {
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
        if let Some(c) = self.host.held_mut() {
            c.set_link_info(now, &info);
        }
        if info.channel == ChannelState::Bad && self.host.opened() {
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
        if let (Some(conn), Ok(d)) = (self.host.held_mut(), Data::decode(&packet.payload)) {
            conn.note_corrupted(d.seq);
        }
        self.after_call(ctx);
    }
}

struct RcpSenderAgent {
    /// The sending host: one per (node, port); its endpoint holds the accept policy (an
    /// [`RcpAcceptor`]), the conn-id lookup, expiry and the reset budget.
    host: Host<(), RcpAcceptor>,
    /// The receiver's in-order point last reported (kept when the connection expires).
    dequeued: Option<u64>,
}

impl RcpSenderAgent {
    /// Notes the progress of the connection a datagram went to and of those the endpoint
    /// removed, and re-reads its deadline.
    fn settle(&mut self, touched: Option<Handle>) {
        if let Some(c) = touched.and_then(|h| self.host.connection(h)) {
            self.dequeued = Some(c.dequeued());
        }
        let dequeued = &mut self.dequeued;
        self.host
            .settle(|conn, _| *dequeued = Some(conn.dequeued()));
    }
}

impl Agent for RcpSenderAgent {
    fn start(&mut self, _ctx: &mut dyn NetCtx) {}

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        let touched = self.host.on_packet(packet, ctx).map(Arrived::handle);
        // Without an address (interface down) the engine keeps what it would send.
        if self.host.addressed(ctx) {
            self.host.transmit(ctx, |_| {});
        }
        self.settle(touched);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        self.host.on_timer(ctx.now());
        self.settle(None);
    }

    fn next_timer(&self) -> Option<Time> {
        self.host.next_timer()
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
