//! RCP flow agents (rcp-r2cp.txt §3): the receiver (the mobile host, which opens the
//! connection and drives the transfer) and the object-serving sender, wrapping the sans-IO
//! [`roam_proto::rcp`] engines. The receiver verifies every byte against the integrity
//! pattern, reports wireless corruption to its engine (per-hole ELN) and, with a
//! [`SleepPolicy`], puts its radio to sleep while the channel is bad (§3.4.4). The sender's
//! host answers the handshake through an [`RcpAcceptor`] keyed from the run's seeded RNG
//! (`docs/HANDSHAKE-RCP.md`): a stateless SYN+ACK with a token, the connection on its echo.

use std::sync::Arc;
use std::time::Duration;

use roam_proto::endpoint::{Acceptor, TokenKey, Unknown};
use roam_proto::linkinfo::ChannelState;
use roam_proto::rcp::{
    ObjectStore, RcpAcceptor, RcpCc, RcpConfig, RcpEvent, RcpReceiver, RcpSender, ResetLimiter,
};
use roam_proto::Time;
use roam_wire::{ConnId, Data, Header, UNKNOWN_LENGTH};

use super::pattern;
use crate::agent::{Agent, AgentSample, FlowIdx, IfaceIdx, NetCtx, Packet, SockAddr};
use crate::energy::{PowerModel, RadioMeter};
use crate::result::FlowFailure;

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
}

/// Builds the receiving (requesting) end of an RCP flow.
pub fn rcp_receiver(p: RcpReceiverParams) -> Box<dyn Agent> {
    let meter = p
        .energy
        .or(p.sleep.map(|_| PowerModel::default()))
        .map(|m| RadioMeter::new(m, Time::ZERO, p.header_overhead));
    Box::new(RcpReceiverAgent {
        p,
        conn: None,
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
    Box::new(RcpSenderAgent {
        flow,
        resets: ResetLimiter::new(config.resets_per_second),
        acceptor: RcpAcceptor::new(config, store),
        key: None,
        iface,
        local_port,
        conn: None,
        peer: None,
        dequeued: None,
    })
}

struct RcpReceiverAgent {
    p: RcpReceiverParams,
    conn: Option<RcpReceiver>,
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
        if let Some(conn) = self.conn.as_mut() {
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
            if !self.asleep {
                let src = ctx.local_addr(self.p.iface);
                let r = rate(ctx, self.p.iface);
                loop {
                    let mut buf = ctx.buffer();
                    let Some(len) = conn.poll_transmit(now, &mut buf) else {
                        ctx.give_back(buf);
                        break;
                    };
                    let Some(src) = src else {
                        ctx.give_back(buf);
                        continue;
                    };
                    if let Some(m) = self.meter.as_mut() {
                        m.on_tx(len, r);
                    }
                    let c = ctx.counters(flow);
                    c.datagrams_sent += 1;
                    c.transport_bytes_sent += len as u64;
                    ctx.send(
                        self.p.iface,
                        Packet {
                            src: SockAddr {
                                addr: src,
                                port: self.p.local_port,
                            },
                            dst: self.p.peer,
                            payload: buf,
                            flow: Some(flow),
                        },
                    );
                }
            }
            let s = conn.pipe().stats();
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
            self.conn = Some(c);
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
        if let Some(c) = self.conn.as_mut() {
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
            if let Some(c) = self.conn.as_mut() {
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
        if let Some(conn) = self.conn.as_mut() {
            let _ = conn.handle_datagram(ctx.now(), &packet.payload);
        }
        self.after_call(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        if self.conn.is_none() && now >= self.p.start {
            self.connect(ctx);
        }
        if self.asleep && self.next_beacon.is_some_and(|t| t <= now) {
            self.beacon(ctx);
        }
        if let Some(conn) = self.conn.as_mut() {
            conn.handle_timeout(now);
        }
        self.after_call(ctx);
    }

    fn next_timer(&self) -> Option<Time> {
        let start = self.conn.is_none().then_some(self.p.start);
        let conn = self.conn.as_ref().and_then(|c| c.poll_timeout());
        [start, conn, self.next_beacon].into_iter().flatten().min()
    }

    fn sample(&self) -> AgentSample {
        match &self.conn {
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
        if let Some(c) = self.conn.as_mut() {
            c.set_link_info(now, &info);
        }
        if info.channel == ChannelState::Bad && self.conn.is_some() {
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
        // its own wireless hop (per-hole ELN, §3.4.2).
        if let (Some(conn), Ok(d)) = (self.conn.as_mut(), Data::decode(&packet.payload)) {
            conn.note_corrupted(d.seq);
        }
        self.after_call(ctx);
    }
}

struct RcpSenderAgent {
    flow: FlowIdx,
    /// Answers requests for no connection held here (the handshake, resets).
    acceptor: RcpAcceptor,
    /// This host's address-validation key, drawn on first use.
    key: Option<TokenKey>,
    iface: IfaceIdx,
    local_port: u16,
    conn: Option<RcpSender>,
    peer: Option<SockAddr>,
    /// The receiver's in-order point last reported (kept when the connection expires).
    dequeued: Option<u64>,
    /// Budget for the resets this host sends.
    resets: ResetLimiter,
}

impl RcpSenderAgent {
    /// Drops an expired connection (later requests for it are answered with a reset).
    fn drop_expired(&mut self) {
        if self.conn.as_ref().is_some_and(RcpSender::is_expired) {
            self.conn = None;
        }
    }

    /// Answers a request that belongs to no connection held here: a stateless SYN+ACK, a
    /// reset within the budget, or — for an echo of a valid token — the connection.
    fn unknown(&mut self, packet: &Packet, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
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
                self.emit(packet.src, buf, ctx);
            }
            // Only a datagram that earns a reset spends the budget (garbage and resets do
            // not).
            Unknown::Reset { len } if self.resets.allow(now) => {
                buf.truncate(len);
                self.emit(packet.src, buf, ctx);
            }
            Unknown::Reset { .. } | Unknown::Drop => ctx.give_back(buf),
            Unknown::Accept(c) => {
                ctx.give_back(buf);
                self.dequeued = Some(c.dequeued());
                self.conn = Some(c);
                self.peer = Some(packet.src);
            }
        }
    }

    /// Sends one datagram from this agent's interface and port to `dst`, counting it.
    fn emit(&self, dst: SockAddr, payload: Vec<u8>, ctx: &mut dyn NetCtx) {
        let Some(addr) = ctx.local_addr(self.iface) else {
            ctx.give_back(payload);
            return;
        };
        let c = ctx.counters(self.flow);
        c.datagrams_sent += 1;
        c.transport_bytes_sent += payload.len() as u64;
        ctx.send(
            self.iface,
            Packet {
                src: SockAddr {
                    addr,
                    port: self.local_port,
                },
                dst,
                payload,
                flow: Some(self.flow),
            },
        );
    }
}

impl Agent for RcpSenderAgent {
    fn start(&mut self, _ctx: &mut dyn NetCtx) {}

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let id = Header::peek_conn_id(&packet.payload).ok();
        match self.conn.as_mut() {
            Some(c) if Some(c.conn_id()) == id => {
                let _ = c.handle_datagram(now, &packet.payload);
                self.dequeued = Some(c.dequeued());
            }
            _ => {
                self.unknown(packet, ctx);
                if self.conn.is_none() {
                    return;
                }
            }
        }
        // Without an address (interface down) the engine keeps what it would send.
        let (Some(peer), Some(_)) = (self.peer, ctx.local_addr(self.iface)) else {
            return;
        };
        loop {
            let mut buf = ctx.buffer();
            let sent = self
                .conn
                .as_mut()
                .and_then(|conn| conn.poll_transmit(now, &mut buf));
            if sent.is_none() {
                ctx.give_back(buf);
                break;
            }
            self.emit(peer, buf, ctx);
        }
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        if let Some(c) = self.conn.as_mut() {
            c.handle_timeout(ctx.now());
        }
        self.drop_expired();
    }

    fn next_timer(&self) -> Option<Time> {
        self.conn.as_ref().and_then(RcpSender::poll_timeout)
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
