//! pTCP flow agents (ptcp.txt §3–4): the sender stripes one stream of the integrity pattern
//! over one TCP-v pipe per planned (sender interface, receiver interface) pair; the receiver
//! reassembles and verifies every byte. Both drive roam-proto's sans-IO
//! [`PtcpSender`] / [`PtcpReceiver`] with the engine's encoded bytes.
//!
//! No handshake exists yet (docs/PTCP.md): both ends build their pipes from the plan, with
//! connection identifiers derived from the flow's seed (so no draw of the run moves), and the
//! pipes start established.

use std::sync::Arc;

use roam_proto::cc::CcKind;
use roam_proto::ptcp::{PtcpReceiver, PtcpSender};
use roam_proto::tcp::TcpConfig;
use roam_wire::ConnId;

use super::pattern;
use crate::agent::{Agent, AgentSample, FlowIdx, IfaceIdx, NetCtx, Packet, SockAddr};
use crate::result::FlowFailure;

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
    fn ids(&self) -> (ConnId, ConnId) {
        (
            ConnId(self.conn_seed ^ 0x7074_6370_0001),
            ConnId(self.conn_seed ^ 0x7074_6370_0002),
        )
    }

    fn pipe_id(&self, k: usize) -> ConnId {
        ConnId(self.conn_seed.rotate_left(17) ^ (k as u64 + 1))
    }
}

/// Builds the (sender, receiver) agents of a pTCP flow.
pub fn ptcp_agents(
    p: PtcpParams,
    sender_port: u16,
    receiver_port: u16,
) -> (Box<dyn Agent>, Box<dyn Agent>) {
    let (a, b) = p.ids();
    let mut tx = PtcpSender::new(&p.config, a, b);
    let mut rx = PtcpReceiver::new(&p.config, b, a);
    for (k, plan) in p.pipes.iter().enumerate() {
        tx.add_pipe(k as u32, p.pipe_id(k), plan.cc);
        rx.add_pipe(k as u32, p.pipe_id(k));
    }
    tx.set_source(Box::new(pattern::PatternSource));
    let sender = PtcpSenderAgent {
        p: p.clone(),
        port: sender_port,
        tx,
        written: 0,
        started: false,
    };
    let receiver = PtcpReceiverAgent {
        p,
        port: receiver_port,
        rx,
        buf: Vec::new(),
    };
    (Box::new(sender), Box::new(receiver))
}

struct PtcpSenderAgent {
    p: PtcpParams,
    port: u16,
    tx: PtcpSender,
    written: u64,
    started: bool,
}

impl PtcpSenderAgent {
    fn after_call(&mut self, ctx: &mut dyn NetCtx) {
        if !self.started {
            return;
        }
        let now = ctx.now();
        let left = self.p.size.map_or(u64::MAX, |s| s - self.written);
        if left > 0 {
            self.written += self.tx.push(left);
            if self.p.size == Some(self.written) {
                self.tx.close();
            }
        }
        loop {
            let mut buf = ctx.buffer();
            let Some(t) = self.tx.poll_transmit(now, &mut buf) else {
                ctx.give_back(buf);
                break;
            };
            buf.truncate(t.len);
            let plan = self.p.pipes[t.path as usize];
            super::send_counted(
                ctx,
                (self.p.flow, plan.from_iface, self.port),
                plan.receiver,
                buf,
            );
        }
        let (mut retx, mut timeouts, mut recoveries) = (0, 0, 0);
        for (_, _, _, s) in self.tx.pipes() {
            retx += s.retransmitted_segments;
            timeouts += s.timeouts;
            recoveries += s.recoveries;
        }
        let failed = self.tx.failed();
        let c = ctx.counters(self.p.flow);
        c.retransmitted_segments = retx;
        c.timeouts = timeouts;
        c.recoveries = recoveries;
        if failed {
            c.fail(now, FlowFailure::GaveUp);
        }
    }
}

impl Agent for PtcpSenderAgent {
    fn start(&mut self, ctx: &mut dyn NetCtx) {
        self.started = true;
        self.after_call(ctx);
    }

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        self.tx.handle_datagram(ctx.now(), &packet.payload);
        self.after_call(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        self.tx.handle_timeout(ctx.now());
        self.after_call(ctx);
    }

    fn next_timer(&self) -> Option<roam_proto::Time> {
        if self.started {
            self.tx.poll_timeout()
        } else {
            None
        }
    }

    fn sample(&self) -> AgentSample {
        AgentSample {
            cwnd_bytes: Some(self.tx.pipes().map(|(_, c, _, _)| c).sum()),
            seq: Some(self.tx.acked().0),
        }
    }
}

struct PtcpReceiverAgent {
    p: PtcpParams,
    port: u16,
    rx: PtcpReceiver,
    buf: Vec<u8>,
}

impl PtcpReceiverAgent {
    fn after_call(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let rx = &mut self.rx;
        pattern::deliver_checked(ctx, self.p.flow, &mut self.buf, |buf| {
            (rx.bytes_delivered(), rx.read(buf, 1 << 20))
        });
        if self.rx.fin_received() {
            ctx.counters(self.p.flow).completed_at.get_or_insert(now);
        }
        loop {
            let mut buf = ctx.buffer();
            let Some(t) = self.rx.poll_transmit(now, &mut buf) else {
                ctx.give_back(buf);
                break;
            };
            buf.truncate(t.len);
            let plan = self.p.pipes[t.path as usize];
            super::send_counted(
                ctx,
                (self.p.flow, plan.to_iface, self.port),
                plan.sender,
                buf,
            );
        }
    }
}

impl Agent for PtcpReceiverAgent {
    fn start(&mut self, _ctx: &mut dyn NetCtx) {}

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        self.rx.handle_datagram(ctx.now(), &packet.payload);
        self.after_call(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        self.rx.handle_timeout(ctx.now());
        self.after_call(ctx);
    }

    fn next_timer(&self) -> Option<roam_proto::Time> {
        self.rx.poll_timeout()
    }

    fn on_corrupted(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        // The host's report of a segment corrupted on its wireless hop (TCP-ELN).
        self.rx.note_corrupted(&packet.payload);
        self.after_call(ctx);
    }
}
