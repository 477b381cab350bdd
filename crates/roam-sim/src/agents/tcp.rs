//! TCP flow agents: a bulk sender (the data source, active opener) and a sink (passive
//! opener) wrapping the sans-IO [`roam_proto::tcp::Connection`]. The datagrams they exchange
//! are the engine's real encoded bytes. The active opener draws its ISN, the passive one its
//! SYN-cookie key, from streams derived from the agent's own (`rng::derived_rng`), so the
//! handshake's randomness moves no other draw of the run.

use std::sync::Arc;

use rand::Rng;
use roam_proto::cc::CcKind;
use roam_proto::endpoint::{Acceptor, TokenKey, Unknown};
use roam_proto::tcp::{Connection, Event, TcpAcceptor, TcpConfig, MAX_ISN};
use roam_wire::ConnId;

use super::pattern;
use crate::agent::{Agent, AgentSample, FlowIdx, IfaceIdx, NetCtx, Packet, SockAddr};
use crate::result::FlowFailure;
use crate::rng::derived_rng;

/// The [`Agent`] methods both TCP agents implement alike: timer expiries, link changes and
/// corruption reports go to the agent's connection, then `after_call` reads, writes and
/// flushes. Expects the fields `conn: Option<Connection>` and `iface: IfaceIdx` and a method
/// `after_call(&mut self, &mut dyn NetCtx)`.
macro_rules! connection_events {
    () => {
        fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
            if let Some(conn) = self.conn.as_mut() {
                conn.handle_timeout(ctx.now());
            }
            self.after_call(ctx);
        }

        fn next_timer(&self) -> Option<roam_proto::Time> {
            self.conn.as_ref().and_then(|c| c.poll_timeout())
        }

        fn on_link_change(&mut self, iface: IfaceIdx, ctx: &mut dyn NetCtx) {
            feed_link_info(self.conn.as_mut(), self.iface, iface, ctx);
            self.after_call(ctx);
        }

        fn on_corrupted(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
            if let Some(conn) = self.conn.as_mut() {
                conn.handle_corrupted(ctx.now(), &packet.payload);
            }
            self.after_call(ctx);
        }
    };
}

/// Builds the sending endpoint of a TCP flow: it connects to `peer`, writes `size` bytes of the
/// integrity pattern (or writes forever when `size` is `None`) and closes.
#[allow(clippy::too_many_arguments)] // One flat constructor mirrors the scenario fields.
pub fn tcp_sender(
    flow: FlowIdx,
    config: Arc<TcpConfig>,
    cc: CcKind,
    iface: IfaceIdx,
    local_port: u16,
    peer: SockAddr,
    size: Option<u64>,
    conn_seed: u64,
) -> Box<dyn Agent> {
    Box::new(TcpSenderAgent {
        flow,
        config,
        cc,
        iface,
        local_port,
        peer,
        size,
        conn_seed,
        conn: None,
        connected: false,
        written: 0,
    })
}

/// Builds the receiving endpoint of a TCP flow: it accepts the first SYN on `local_port`,
/// reads and verifies everything, and closes when the sender has finished.
pub fn tcp_receiver(
    flow: FlowIdx,
    config: Arc<TcpConfig>,
    iface: IfaceIdx,
    local_port: u16,
) -> Box<dyn Agent> {
    Box::new(TcpReceiverAgent {
        flow,
        passive: PassiveOpen::new(&config),
        iface,
        local_port,
        conn: None,
        connected: false,
        peer: None,
        read_buf: Vec::new(),
    })
}

/// Sends every datagram the connection has ready and updates the flow's counters.
pub(crate) fn flush(
    conn: &mut Connection,
    flow: FlowIdx,
    iface: IfaceIdx,
    src_port: u16,
    dst: SockAddr,
    ctx: &mut dyn NetCtx,
) {
    let now = ctx.now();
    let Some(src_addr) = ctx.local_addr(iface) else {
        return;
    };
    loop {
        let mut buf = ctx.buffer();
        let Some(tx) = conn.poll_transmit(now, &mut buf) else {
            ctx.give_back(buf);
            break;
        };
        let c = ctx.counters(flow);
        c.datagrams_sent += 1;
        c.transport_bytes_sent += tx.len as u64;
        ctx.send(
            iface,
            Packet {
                src: SockAddr {
                    addr: src_addr,
                    port: src_port,
                },
                dst,
                payload: buf,
                flow: Some(flow),
            },
        );
    }
}

/// An active opener's initial sequence number: the host's random draw (from the agent's
/// stream `rng`, without consuming it).
pub(crate) fn draw_isn(rng: &rand_chacha::ChaCha8Rng) -> u64 {
    derived_rng(rng, "tcp:isn").gen::<u64>() & MAX_ISN
}

/// The passive end of a TCP flow before its connection exists: a stateless [`TcpAcceptor`]
/// answering SYNs with SYN cookies, keyed with a secret from the agent's random stream.
pub(crate) struct PassiveOpen {
    /// `None` only for a configuration the scenario loader would have refused.
    acceptor: Option<TcpAcceptor>,
    /// Drawn at the first datagram.
    key: Option<TokenKey>,
}

impl PassiveOpen {
    /// Opens connections with `config` and the default controller (a sink sends no data).
    pub(crate) fn new(config: &Arc<TcpConfig>) -> Self {
        PassiveOpen {
            acceptor: TcpAcceptor::new(config.clone(), CcKind::default()).ok(),
            key: None,
        }
    }

    /// Hands `packet` to `conn` if it is open; otherwise to the acceptor, sending its SYN-ACK
    /// or reset from `local_port` on `iface` (counted as the flow's datagrams). Returns true
    /// when this packet opened the connection.
    pub(crate) fn on_packet(
        &mut self,
        conn: &mut Option<Connection>,
        packet: &Packet,
        (iface, local_port, flow): (IfaceIdx, u16, FlowIdx),
        ctx: &mut dyn NetCtx,
    ) -> bool {
        let now = ctx.now();
        if let Some(c) = conn {
            let _ = c.handle_datagram(now, &packet.payload);
            return false;
        }
        let Some(acceptor) = self.acceptor.as_mut() else {
            return false;
        };
        let key = self
            .key
            .get_or_insert_with(|| TokenKey::new(derived_rng(ctx.rng(), "tcp:token").gen()));
        let mut out = ctx.buffer();
        match acceptor.on_unknown(now, key, &packet.src, &packet.payload, &mut out) {
            Unknown::Accept(c) => {
                *conn = Some(c);
                ctx.give_back(out);
                true
            }
            Unknown::Reply { len } | Unknown::Reset { len } => {
                out.truncate(len);
                send_reply(out, packet.src, (iface, local_port, flow), ctx);
                false
            }
            Unknown::Drop => {
                ctx.give_back(out);
                false
            }
        }
    }
}

/// Sends an acceptor's answer to `dst`, counted as one of the flow's datagrams.
fn send_reply(
    payload: Vec<u8>,
    dst: SockAddr,
    (iface, src_port, flow): (IfaceIdx, u16, FlowIdx),
    ctx: &mut dyn NetCtx,
) {
    let Some(src_addr) = ctx.local_addr(iface) else {
        ctx.give_back(payload);
        return;
    };
    let c = ctx.counters(flow);
    c.datagrams_sent += 1;
    c.transport_bytes_sent += payload.len() as u64;
    let src = SockAddr {
        addr: src_addr,
        port: src_port,
    };
    ctx.send(
        iface,
        Packet {
            src,
            dst,
            payload,
            flow: Some(flow),
        },
    );
}

struct TcpSenderAgent {
    flow: FlowIdx,
    config: Arc<TcpConfig>,
    cc: CcKind,
    iface: IfaceIdx,
    local_port: u16,
    peer: SockAddr,
    size: Option<u64>,
    conn_seed: u64,
    conn: Option<Connection>,
    /// The handshake completed (a later timeout is the retransmission limit).
    connected: bool,
    written: u64,
}

impl TcpSenderAgent {
    /// Keeps the send buffer full of pattern bytes; closes after the last byte.
    fn fill(&mut self) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        loop {
            let room = conn.write_capacity();
            let left = self.size.map_or(u64::MAX, |s| s - self.written);
            if room == 0 || left == 0 {
                break;
            }
            let n = (room as u64).min(left).min(pattern::MAX_SLICE as u64) as usize;
            let taken = conn.write(pattern::slice(self.written, n));
            self.written += taken as u64;
            if taken < n {
                break;
            }
        }
        if self.size == Some(self.written) {
            conn.close();
        }
    }

    fn after_call(&mut self, ctx: &mut dyn NetCtx) {
        self.fill();
        if let Some(conn) = self.conn.as_mut() {
            flush(conn, self.flow, self.iface, self.local_port, self.peer, ctx);
            while let Some(ev) = conn.poll_event() {
                note_failure(ev, &mut self.connected, self.flow, ctx);
            }
            let s = conn.stats().sender;
            let c = ctx.counters(self.flow);
            c.retransmitted_segments = s.retransmitted_segments;
            c.timeouts = s.timeouts;
            c.recoveries = s.recoveries;
            c.wireless_excused = s.wireless_recoveries;
        }
    }
}

impl Agent for TcpSenderAgent {
    fn start(&mut self, ctx: &mut dyn NetCtx) {
        let id = ConnId(self.conn_seed ^ rand::RngCore::next_u64(ctx.rng()));
        let isn = draw_isn(ctx.rng());
        match Connection::connect(self.config.clone(), self.cc, id, isn, ctx.now()) {
            Ok(c) => self.conn = Some(c),
            Err(_) => return, // Configuration was validated when the scenario was loaded.
        }
        self.on_link_change(self.iface, ctx);
    }

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        if let Some(conn) = self.conn.as_mut() {
            let _ = conn.handle_datagram(ctx.now(), &packet.payload);
        }
        self.after_call(ctx);
    }

    connection_events!();

    fn sample(&self) -> AgentSample {
        match &self.conn {
            Some(c) => AgentSample {
                cwnd_bytes: Some(c.sender().cwnd()),
                // Relative to the random ISN: the stream offset acknowledged, plus one for the
                // SYN (what an ISN of zero made it).
                seq: Some(c.sender().snd_una().saturating_sub(c.initial_seq())),
            },
            None => AgentSample::default(),
        }
    }
}

struct TcpReceiverAgent {
    flow: FlowIdx,
    passive: PassiveOpen,
    iface: IfaceIdx,
    local_port: u16,
    conn: Option<Connection>,
    /// The handshake completed (a later timeout is the retransmission limit).
    connected: bool,
    peer: Option<SockAddr>,
    read_buf: Vec<u8>,
}

impl TcpReceiverAgent {
    fn after_call(&mut self, ctx: &mut dyn NetCtx) {
        let (Some(conn), Some(peer)) = (self.conn.as_mut(), self.peer) else {
            return;
        };
        let now = ctx.now();
        loop {
            self.read_buf.clear();
            let offset = conn.receiver().bytes_delivered();
            let n = conn.read(&mut self.read_buf, 1 << 20);
            if n == 0 {
                break;
            }
            let bad = pattern::mismatches(offset, &self.read_buf);
            let c = ctx.counters(self.flow);
            c.bytes_delivered += n as u64;
            c.integrity_errors += bad;
        }
        while let Some(ev) = conn.poll_event() {
            if ev == Event::Eof {
                ctx.counters(self.flow).completed_at.get_or_insert(now);
                conn.close();
            }
            note_failure(ev, &mut self.connected, self.flow, ctx);
        }
        flush(conn, self.flow, self.iface, self.local_port, peer, ctx);
    }
}

impl Agent for TcpReceiverAgent {
    fn start(&mut self, _ctx: &mut dyn NetCtx) {}

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        let at = (self.iface, self.local_port, self.flow);
        if self.passive.on_packet(&mut self.conn, packet, at, ctx) {
            self.peer = Some(packet.src);
            feed_link_info(self.conn.as_mut(), self.iface, self.iface, ctx);
        }
        self.after_call(ctx);
    }

    connection_events!();
}

/// Turns a connection's end events into the flow's failure, if it failed: a timeout before
/// `Connected` is a handshake that got no answer, after it the retransmission limit.
fn note_failure(ev: Event, connected: &mut bool, flow: FlowIdx, ctx: &mut dyn NetCtx) {
    let why = match ev {
        Event::Connected => {
            *connected = true;
            return;
        }
        Event::TimedOut if *connected => FlowFailure::GaveUp,
        Event::TimedOut => FlowFailure::HandshakeTimedOut,
        Event::Reset => FlowFailure::Reset,
        Event::Readable | Event::Eof | Event::Closed => return,
    };
    let now = ctx.now();
    ctx.counters(flow).fail(now, why);
}

/// Hands the simulator's facts about the flow's interface to the engine (the host's job; a
/// real host would ask its OS).
fn feed_link_info(
    conn: Option<&mut Connection>,
    own: IfaceIdx,
    changed: IfaceIdx,
    ctx: &mut dyn NetCtx,
) {
    if own != changed {
        return;
    }
    if let (Some(conn), Some(info)) = (conn, ctx.link_info(own)) {
        conn.set_link_info(ctx.now(), info);
    }
}
