//! TCP flow agents: a bulk sender (the data source, active opener) and a sink (passive
//! opener) wrapping the sans-IO [`roam_proto::tcp::Connection`]. The datagrams they exchange
//! are the engine's real encoded bytes. The active opener draws its ISN, the passive one its
//! SYN-cookie key, from streams derived from the agent's own (`rng::derived_rng`), so the
//! handshake's randomness moves no other draw of the run.

use std::sync::Arc;

use rand::Rng;
use roam_proto::cc::CcKind;
use roam_proto::endpoint::NoAcceptor;
use roam_proto::tcp::{Connection, Event, TcpAcceptor, TcpConfig, MAX_ISN};
use roam_wire::ConnId;

use super::flow::{FlowAgents, FlowEnds};
use super::host::Arrived;
use super::pattern;
use super::tcp_host::{ActiveHost, PassiveHost};
use crate::agent::{Agent, AgentSample, FlowIdx, IfaceIdx, NetCtx, Packet, SockAddr};
use crate::result::FlowFailure;
use crate::rng::derived_rng;
use crate::scenario::TcpSetup;

/// The [`Agent`] methods both TCP agents implement alike: timer expiries go to the agent's
/// endpoint, link changes and corruption reports to its connection, then `after_call` reads,
/// writes and flushes. Expects the fields `host: Host<(), _>` and `iface: IfaceIdx` and a
/// method `after_call(&mut self, &mut dyn NetCtx)`.
macro_rules! connection_events {
    () => {
        fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
            self.host.on_timer(ctx.now());
            self.after_call(ctx);
        }

        fn next_timer(&self) -> Option<roam_proto::Time> {
            self.host.next_timer()
        }

        fn on_link_change(&mut self, iface: IfaceIdx, ctx: &mut dyn NetCtx) {
            if iface == self.iface {
                feed_link_info(self.host.conn_mut(), self.iface, ctx);
            }
            self.after_call(ctx);
        }

        fn on_corrupted(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
            if let Some(conn) = self.host.conn_mut() {
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
        peer,
        size,
        conn_seed,
        host: ActiveHost::new(iface, local_port, flow, Some(NoAcceptor::default())),
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
    // A sink sends no data: the default controller.
    let acceptor = TcpAcceptor::new(config, CcKind::default()).ok();
    Box::new(TcpReceiverAgent {
        flow,
        host: PassiveHost::new(iface, local_port, flow, acceptor),
        iface,
        connected: false,
    })
}

/// An active opener's initial sequence number: the host's random draw (from the agent's
/// stream `rng`, without consuming it).
pub(crate) fn draw_isn(rng: &rand_chacha::ChaCha8Rng) -> u64 {
    derived_rng(rng, "tcp:isn").gen::<u64>() & MAX_ISN
}

struct TcpSenderAgent {
    flow: FlowIdx,
    config: Arc<TcpConfig>,
    cc: CcKind,
    iface: IfaceIdx,
    peer: SockAddr,
    size: Option<u64>,
    conn_seed: u64,
    host: ActiveHost,
    /// The handshake completed (a later timeout is the retransmission limit).
    connected: bool,
    written: u64,
}

impl TcpSenderAgent {
    /// Keeps the send buffer full of pattern bytes (pulled from the pattern when segments are
    /// encoded), closes after the last byte, and notes the connection's events (which come
    /// from what it received or fired, never from sending).
    fn fill_and_note(&mut self, ctx: &mut dyn NetCtx) {
        let Some(conn) = self.host.conn_mut() else {
            return;
        };
        let left = self.size.map_or(u64::MAX, |s| s - self.written);
        self.written += conn.push(left);
        if self.size == Some(self.written) {
            conn.close();
        }
        while let Some(ev) = conn.poll_event() {
            note_failure(ev, &mut self.connected, self.flow, ctx);
        }
    }

    fn after_call(&mut self, ctx: &mut dyn NetCtx) {
        self.fill_and_note(ctx);
        self.host.flush(ctx);
        // Read only: the connection is not touched again after the flush.
        if let Some(conn) = self.host.conn() {
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
            Ok(mut c) => {
                // Payload is made on demand when a segment is encoded: a bulk flow holds its
                // window, not its send buffer.
                c.set_source(Box::new(pattern::PatternSource));
                self.host.connect(c, self.peer, ctx);
            }
            Err(_) => return, // Configuration was validated when the scenario was loaded.
        }
        self.on_link_change(self.iface, ctx);
    }

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        self.host.on_packet(packet, ctx);
        self.after_call(ctx);
    }

    connection_events!();

    fn sample(&self) -> AgentSample {
        match self.host.conn() {
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
    host: PassiveHost,
    iface: IfaceIdx,
    /// The handshake completed (a later timeout is the retransmission limit).
    connected: bool,
}

impl TcpReceiverAgent {
    fn after_call(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let Some(conn) = self.host.conn_mut() else {
            self.host.flush(ctx);
            return;
        };
        // Asked only while something is readable: a read of nothing changes nothing.
        while conn.receiver().readable() > 0 {
            // Checked where the connection holds the bytes: no copy out.
            let mut offset = conn.receiver().bytes_delivered();
            let mut bad = 0;
            let n = conn.read_with(1 << 20, |bytes| {
                bad += pattern::mismatches(offset, bytes);
                offset += bytes.len() as u64;
            });
            if n == 0 {
                break;
            }
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
        self.host.flush(ctx);
    }
}

impl Agent for TcpReceiverAgent {
    fn start(&mut self, _ctx: &mut dyn NetCtx) {}

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        if let Some(Arrived::Accepted { .. }) = self.host.on_packet(packet, ctx) {
            feed_link_info(self.host.conn_mut(), self.iface, ctx);
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
fn feed_link_info(conn: Option<&mut Connection>, own: IfaceIdx, ctx: &mut dyn NetCtx) {
    if let (Some(conn), Some(info)) = (conn, ctx.link_info(own)) {
        conn.set_link_info(ctx.now(), info);
    }
}

/// Builds a TCP flow's agents: the bulk sender on the flow's `from` host, the sink on its `to`.
pub(crate) fn build(setup: &TcpSetup, e: &FlowEnds<'_>) -> FlowAgents {
    let sender = tcp_sender(
        e.flow,
        Arc::clone(&setup.config),
        setup.cc_kind,
        e.sender_iface(),
        e.sender_port,
        e.receiver(),
        e.spec.size,
        e.conn_seed,
    );
    let receiver = tcp_receiver(
        e.flow,
        Arc::clone(&setup.config),
        e.receiver_iface(),
        e.receiver_port,
    );
    FlowAgents::pair(e, (sender, receiver))
}
