//! Media flow agents (RCP-ATL and the plain rate AIMD baseline): a source that sends at the
//! allowed rate S(t) for as long as the flow runs (an adaptive encoder that always follows S(t)),
//! and a sink that verifies every packet's bytes, measures delay and jitter and answers with
//! receiver reports. Both hand their host's link facts to the engine (the wireless end's
//! p_w/d_w/handoffs). The sink's host opens its engine through a [`MediaAcceptor`] keyed from
//! the run's seeded RNG: the source's first packets get stateless reports with a token, and
//! the sink exists once a packet echoes it (`docs/HANDSHAKE-RCP.md`).

use roam_proto::endpoint::{Acceptor, TokenKey, Unknown};
use roam_proto::media::{MediaAcceptor, MediaConfig, MediaReceiver, MediaSender, RateKind};
use roam_proto::Time;
use roam_wire::{ConnId, Header};

use crate::agent::{Agent, AgentSample, FlowIdx, IfaceIdx, NetCtx, Packet, SockAddr};
use crate::result::MediaResult;

/// Where a media flow's source lives and what it runs.
#[derive(Debug, Clone, Copy)]
pub struct MediaSourceParams {
    /// The flow.
    pub flow: FlowIdx,
    /// Engine configuration.
    pub config: MediaConfig,
    /// Rate controller.
    pub kind: RateKind,
    /// Local interface.
    pub iface: IfaceIdx,
    /// Local port.
    pub local_port: u16,
    /// The sink.
    pub peer: SockAddr,
    /// Stop sending at this time, if set.
    pub stop: Option<Time>,
    /// Seed for the connection id.
    pub conn_seed: u64,
}

/// Builds the sending end of a media flow.
pub fn media_source(p: MediaSourceParams) -> Box<dyn Agent> {
    Box::new(MediaSourceAgent { p, engine: None })
}

/// Builds the receiving end of a media flow.
pub fn media_sink(
    flow: FlowIdx,
    config: MediaConfig,
    iface: IfaceIdx,
    local_port: u16,
) -> Box<dyn Agent> {
    Box::new(MediaSinkAgent {
        flow,
        iface,
        local_port,
        acceptor: MediaAcceptor::new(config),
        key: None,
        engine: None,
        peer: None,
    })
}

struct MediaSourceAgent {
    p: MediaSourceParams,
    engine: Option<MediaSender>,
}

impl MediaSourceAgent {
    fn stopped(&self, now: Time) -> bool {
        self.p.stop.is_some_and(|s| now >= s)
    }

    fn flush(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        if self.stopped(now) {
            return;
        }
        let Some(engine) = self.engine.as_mut() else {
            return;
        };
        loop {
            let mut buf = ctx.buffer();
            if engine.poll_transmit(now, &mut buf).is_none() {
                ctx.give_back(buf);
                break;
            }
            super::send_counted(
                ctx,
                (self.p.flow, self.p.iface, self.p.local_port),
                self.p.peer,
                buf,
            );
        }
        // The adaptive encoder follows S(t); the events are the rate it is told.
        while engine.poll_event().is_some() {}
        let sent = engine.stats().packets_sent;
        let c = ctx.counters(self.p.flow);
        c.media
            .get_or_insert_with(MediaResult::default)
            .packets_sent = sent;
    }
}

impl Agent for MediaSourceAgent {
    fn start(&mut self, ctx: &mut dyn NetCtx) {
        let id = ConnId(self.p.conn_seed ^ rand::RngCore::next_u64(ctx.rng()));
        let mut engine = MediaSender::new(self.p.config, self.p.kind, id);
        if let Some(info) = ctx.link_info(self.p.iface) {
            engine.set_link_info(ctx.now(), info);
        }
        self.engine = Some(engine);
        self.flush(ctx);
    }

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        if let Some(e) = self.engine.as_mut() {
            let _ = e.handle_datagram(ctx.now(), &packet.payload);
        }
        self.flush(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        if let Some(e) = self.engine.as_mut() {
            e.handle_timeout(ctx.now());
        }
        self.flush(ctx);
    }

    fn next_timer(&self) -> Option<Time> {
        let t = self.engine.as_ref()?.poll_timeout()?;
        match self.p.stop {
            Some(s) if t >= s => None,
            _ => Some(t),
        }
    }

    fn sample(&self) -> AgentSample {
        AgentSample {
            // The allowed rate expressed as bytes per RTT is not meaningful; report S(t) in
            // bytes per second in the window column.
            cwnd_bytes: self.engine.as_ref().map(|e| (e.rate_bps() / 8.0) as u64),
            seq: None,
        }
    }

    fn on_link_change(&mut self, iface: IfaceIdx, ctx: &mut dyn NetCtx) {
        if iface != self.p.iface {
            return;
        }
        if let (Some(e), Some(info)) = (self.engine.as_mut(), ctx.link_info(iface)) {
            e.set_link_info(ctx.now(), info);
        }
    }
}

struct MediaSinkAgent {
    flow: FlowIdx,
    iface: IfaceIdx,
    local_port: u16,
    /// Answers packets of a flow this host holds no sink for.
    acceptor: MediaAcceptor,
    /// This host's address-validation key, drawn on first use.
    key: Option<TokenKey>,
    engine: Option<MediaReceiver>,
    peer: Option<SockAddr>,
}

impl MediaSinkAgent {
    /// A packet of no flow held here: a stateless report with a token, or — for an echo of a
    /// valid token — the sink. Returns true if the sink opened.
    fn unknown(&mut self, packet: &Packet, ctx: &mut dyn NetCtx) -> bool {
        let now = ctx.now();
        let key = self
            .key
            .get_or_insert_with(|| crate::rng::token_key(ctx.rng()));
        let mut buf = ctx.buffer();
        match self
            .acceptor
            .on_unknown(now, key, &packet.src, &packet.payload, &mut buf)
        {
            Unknown::Reply { len } | Unknown::Reset { len } => {
                buf.truncate(len);
                super::send_counted(
                    ctx,
                    (self.flow, self.iface, self.local_port),
                    packet.src,
                    buf,
                );
                false
            }
            Unknown::Drop => {
                ctx.give_back(buf);
                false
            }
            Unknown::Accept(mut e) => {
                ctx.give_back(buf);
                if let Some(info) = ctx.link_info(self.iface) {
                    e.set_link_info(now, info);
                }
                self.engine = Some(e);
                self.peer = Some(packet.src);
                true
            }
        }
    }
}

impl Agent for MediaSinkAgent {
    fn start(&mut self, _ctx: &mut dyn NetCtx) {}

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let id = Header::peek_conn_id(&packet.payload).ok();
        let ours = self
            .engine
            .as_ref()
            .is_some_and(|e| Some(e.conn_id()) == id);
        let before = match self.engine.as_ref() {
            Some(e) if ours => e.stats(),
            _ => {
                if !self.unknown(packet, ctx) {
                    return;
                }
                Default::default()
            }
        };
        let (Some(engine), Some(peer)) = (self.engine.as_mut(), self.peer) else {
            return;
        };
        if ours && engine.handle_datagram(now, &packet.payload).is_err() {
            return;
        }
        let s = engine.stats();
        let c = ctx.counters(self.flow);
        c.bytes_delivered += s.bytes - before.bytes;
        c.integrity_errors += s.integrity_errors - before.integrity_errors;
        let m = c.media.get_or_insert_with(MediaResult::default);
        m.packets_received = s.packets;
        m.mean_delay_s = s.delay.mean_delay_s();
        m.mean_jitter_s = s.delay.mean_jitter_s();
        m.max_jitter_s = s.delay.jitter_max_s;
        m.rfc3550_jitter_s = s.delay.rfc3550_jitter_s;
        loop {
            let mut buf = ctx.buffer();
            if engine.poll_transmit(now, &mut buf).is_none() {
                ctx.give_back(buf);
                break;
            }
            super::send_counted(ctx, (self.flow, self.iface, self.local_port), peer, buf);
        }
    }

    fn on_timer(&mut self, _ctx: &mut dyn NetCtx) {}

    fn next_timer(&self) -> Option<Time> {
        None
    }

    fn on_link_change(&mut self, iface: IfaceIdx, ctx: &mut dyn NetCtx) {
        if iface != self.iface {
            return;
        }
        if let (Some(e), Some(info)) = (self.engine.as_mut(), ctx.link_info(iface)) {
            e.set_link_info(ctx.now(), info);
        }
    }
}
