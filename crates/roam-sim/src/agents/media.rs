//! Media flow agents (RCP-ATL and the plain rate AIMD baseline): a source that sends at the
//! allowed rate S(t) for as long as the flow runs (an adaptive encoder that always follows S(t)),
//! and a sink that verifies every packet's bytes, measures delay and jitter and answers with
//! receiver reports. Both hand their host's link facts to the engine (the wireless end's
//! p_w/d_w/handoffs).
//!
//! Both ends drive roam-proto's [`Endpoint`] (docs/ENDPOINT.md), as the RCP and TCP agents do:
//! the source's host holds its [`MediaSender`] as a client connection; the sink's host answers
//! through a [`MediaAcceptor`] keyed from the run's seeded RNG, so the source's first packets
//! get stateless reports with a token and the sink exists once a packet echoes it
//! (`docs/HANDSHAKE-RCP.md`). The endpoint runs the engines' timers; the sink's idle expiry is
//! the engine's own ([`MediaConfig::idle_timeout`]).

use roam_proto::endpoint::{
    DatagramEvent, Endpoint, EndpointConfig, EndpointEvent, Handle, NoAcceptor, PathAddrs, PathId,
    TokenKey,
};
use roam_proto::media::{
    DelayStats, MediaAcceptor, MediaConfig, MediaReceiverStats, MediaSender, RateKind,
};
use roam_proto::Time;
use roam_wire::ConnId;

use super::flow::{FlowAgents, FlowEnds};
use crate::agent::{Agent, AgentSample, FlowIdx, IfaceIdx, NetCtx, Packet, SockAddr};
use crate::result::MediaResult;
use crate::scenario::media::MediaSetup;

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
    // A client endpoint: it accepts nothing (its key mints no tokens) and expires nothing
    // (the source sends for as long as the flow runs).
    let config = EndpointConfig {
        idle_timeout: None,
        ..EndpointConfig::default()
    };
    Box::new(MediaSourceAgent {
        p,
        endpoint: Endpoint::new(config, TokenKey::new([0; 16]), NoAcceptor::default()),
        conn: None,
        next_timer: None,
    })
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
        acceptor: Some(MediaAcceptor::new(config)),
        endpoint: None,
        sink: None,
        seen: MediaReceiverStats::default(),
        retired: MediaReceiverStats::default(),
        next_timer: None,
    })
}

/// The source's host: one client connection.
type SourceEndpoint = Endpoint<SockAddr, (), NoAcceptor<MediaSender>>;

struct MediaSourceAgent {
    p: MediaSourceParams,
    endpoint: SourceEndpoint,
    /// The source, once started (the endpoint never removes it: it is never stopped).
    conn: Option<Handle>,
    /// The endpoint's next deadline, re-read after every call into it.
    next_timer: Option<Time>,
}

impl MediaSourceAgent {
    fn stopped(&self, now: Time) -> bool {
        self.p.stop.is_some_and(|s| now >= s)
    }

    /// Sends what the source has ready and re-reads the deadline. From the flow's `stop` on,
    /// the application sends nothing more (the source still hears the reports in flight).
    fn flush(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        if let (Some(h), false) = (self.conn, self.stopped(now)) {
            // The adaptive encoder follows S(t); the events are the rate it is told. Handing
            // the source out also asks it for a packet below on every call, as pacing wants.
            if let Some(e) = self.endpoint.connection_mut(h) {
                while e.poll_event().is_some() {}
            }
            loop {
                let mut buf = ctx.buffer();
                let Some(t) = self.endpoint.poll_transmit(now, &mut buf) else {
                    ctx.give_back(buf);
                    break;
                };
                buf.truncate(t.len);
                super::send_counted(
                    ctx,
                    (self.p.flow, self.p.iface, self.p.local_port),
                    t.remote,
                    buf,
                );
            }
            if let Some(e) = self.endpoint.connection(h) {
                let sent = e.stats().packets_sent;
                let c = ctx.counters(self.p.flow);
                c.media
                    .get_or_insert_with(MediaResult::default)
                    .packets_sent = sent;
            }
        }
        self.next_timer = self.endpoint.poll_timeout();
    }

    fn source(&self) -> Option<&MediaSender> {
        self.conn.and_then(|h| self.endpoint.connection(h))
    }
}

impl Agent for MediaSourceAgent {
    fn start(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let id = ConnId(self.p.conn_seed ^ rand::RngCore::next_u64(ctx.rng()));
        let mut engine = MediaSender::new(self.p.config, self.p.kind, id);
        if let Some(info) = ctx.link_info(self.p.iface) {
            engine.set_link_info(now, info);
        }
        let path = PathAddrs {
            path: PathId::PRIMARY,
            local: (),
            remote: self.p.peer,
        };
        // The host's only connection: its id cannot be in use.
        self.conn = self.endpoint.insert(now, engine, &[path]).ok();
        self.flush(ctx);
    }

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        let mut out = ctx.buffer();
        // A client endpoint answers nothing; reports reach the source.
        let _ = self
            .endpoint
            .handle(ctx.now(), (), packet.src, &packet.payload, &mut out);
        ctx.give_back(out);
        self.flush(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        self.endpoint.handle_timeout(ctx.now());
        self.flush(ctx);
    }

    fn next_timer(&self) -> Option<Time> {
        self.next_timer
            .filter(|&t| self.p.stop.is_none_or(|s| t < s))
    }

    fn sample(&self) -> AgentSample {
        AgentSample {
            // The allowed rate expressed as bytes per RTT is not meaningful; report S(t) in
            // bytes per second in the window column.
            cwnd_bytes: self.source().map(|e| (e.rate_bps() / 8.0) as u64),
            seq: None,
        }
    }

    fn on_link_change(&mut self, iface: IfaceIdx, ctx: &mut dyn NetCtx) {
        if iface != self.p.iface {
            return;
        }
        let info = ctx.link_info(iface);
        if let (Some(e), Some(info)) = (
            self.conn.and_then(|h| self.endpoint.connection_mut(h)),
            info,
        ) {
            e.set_link_info(ctx.now(), info);
        }
        self.next_timer = self.endpoint.poll_timeout();
    }
}

/// The sink's host: sinks open through the acceptor.
type SinkEndpoint = Endpoint<SockAddr, (), MediaAcceptor>;

struct MediaSinkAgent {
    flow: FlowIdx,
    iface: IfaceIdx,
    local_port: u16,
    /// The accept side, until the endpoint is built (with this host's key, on first use).
    acceptor: Option<MediaAcceptor>,
    endpoint: Option<SinkEndpoint>,
    /// The flow's sink while the endpoint holds it.
    sink: Option<Handle>,
    /// The sink's counters as last folded into the flow's.
    seen: MediaReceiverStats,
    /// What earlier sinks of the flow counted (a sink expires after its idle timeout; the
    /// source's next packets open a new one).
    retired: MediaReceiverStats,
    /// The endpoint's next deadline, re-read after every call into it.
    next_timer: Option<Time>,
}

/// `a` and `b` counted together (the RFC 3550 estimate is the later sink's).
fn merged(a: &MediaReceiverStats, b: &MediaReceiverStats) -> MediaReceiverStats {
    MediaReceiverStats {
        packets: a.packets + b.packets,
        bytes: a.bytes + b.bytes,
        integrity_errors: a.integrity_errors + b.integrity_errors,
        delay: DelayStats {
            packets: a.delay.packets + b.delay.packets,
            delay_sum_s: a.delay.delay_sum_s + b.delay.delay_sum_s,
            jitter_sum_s: a.delay.jitter_sum_s + b.delay.jitter_sum_s,
            jitter_max_s: a.delay.jitter_max_s.max(b.delay.jitter_max_s),
            rfc3550_jitter_s: b.delay.rfc3550_jitter_s,
        },
    }
}

impl MediaSinkAgent {
    /// The endpoint, built on first use with this host's address-validation key. The engine
    /// expires an idle sink itself, which the endpoint sees as drained.
    fn endpoint(&mut self, ctx: &mut dyn NetCtx) -> Option<&mut SinkEndpoint> {
        if self.endpoint.is_none() {
            let acceptor = self.acceptor.take()?;
            let key = crate::rng::token_key(ctx.rng());
            let config = EndpointConfig {
                idle_timeout: None,
                ..EndpointConfig::default()
            };
            self.endpoint = Some(Endpoint::new(config, key, acceptor));
        }
        self.endpoint.as_mut()
    }

    /// Folds what the sink counted since last time into the flow's counters.
    fn count(&mut self, s: MediaReceiverStats, ctx: &mut dyn NetCtx) {
        let c = ctx.counters(self.flow);
        c.bytes_delivered += s.bytes - self.seen.bytes;
        c.integrity_errors += s.integrity_errors - self.seen.integrity_errors;
        self.seen = s;
        let all = merged(&self.retired, &s);
        let m = c.media.get_or_insert_with(MediaResult::default);
        m.packets_received = all.packets;
        m.mean_delay_s = all.delay.mean_delay_s();
        m.mean_jitter_s = all.delay.mean_jitter_s();
        m.max_jitter_s = all.delay.jitter_max_s;
        m.rfc3550_jitter_s = all.delay.rfc3550_jitter_s;
    }

    /// Sends the reports the endpoint has ready, notes a sink it removed (expired) and
    /// re-reads the deadline.
    fn flush(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let at = (self.flow, self.iface, self.local_port);
        let Some(ep) = self.endpoint.as_mut() else {
            return;
        };
        loop {
            let mut buf = ctx.buffer();
            let Some(t) = ep.poll_transmit(now, &mut buf) else {
                ctx.give_back(buf);
                break;
            };
            buf.truncate(t.len);
            super::send_counted(ctx, at, t.remote, buf);
        }
        while let Some(ev) = ep.poll_event() {
            if let EndpointEvent::Removed { handle, conn, .. } = ev {
                if self.sink == Some(handle) {
                    self.sink = None;
                    self.retired = merged(&self.retired, &conn.stats());
                    self.seen = MediaReceiverStats::default();
                }
            }
        }
        self.next_timer = ep.poll_timeout();
    }
}

impl Agent for MediaSinkAgent {
    fn start(&mut self, _ctx: &mut dyn NetCtx) {}

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let at = (self.flow, self.iface, self.local_port);
        let mut buf = ctx.buffer();
        let Some(ep) = self.endpoint(ctx) else {
            ctx.give_back(buf);
            return;
        };
        // A packet of no sink held here gets a stateless report with a token; one echoing a
        // valid token opens the sink, which counts it.
        let opened = match ep.handle(now, (), packet.src, &packet.payload, &mut buf) {
            Some(DatagramEvent::Respond { remote, len, .. }) => {
                buf.truncate(len);
                super::send_counted(ctx, at, remote, buf);
                None
            }
            Some(DatagramEvent::Accepted(h)) => {
                ctx.give_back(buf);
                Some((h, true))
            }
            Some(DatagramEvent::Delivered(h)) => {
                ctx.give_back(buf);
                Some((h, false))
            }
            None => {
                ctx.give_back(buf);
                None
            }
        };
        if let Some((h, accepted)) = opened {
            let info = ctx.link_info(self.iface);
            if accepted {
                if let Some(sink) = self.sink.take() {
                    // Another flow's id on this host: the flow's counters follow the newest.
                    if let Some(old) = self.endpoint.as_ref().and_then(|ep| ep.connection(sink)) {
                        self.retired = merged(&self.retired, &old.stats());
                    }
                }
                self.sink = Some(h);
                self.seen = MediaReceiverStats::default();
            }
            let ep = self.endpoint.as_mut();
            if let Some(e) = ep.and_then(|ep| ep.connection_mut(h)) {
                if accepted {
                    if let Some(info) = info {
                        e.set_link_info(now, info);
                    }
                }
                let s = e.stats();
                if self.sink == Some(h) {
                    self.count(s, ctx);
                }
            }
        }
        self.flush(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        if let Some(ep) = self.endpoint.as_mut() {
            ep.handle_timeout(ctx.now());
        }
        self.flush(ctx);
    }

    fn next_timer(&self) -> Option<Time> {
        self.next_timer
    }

    fn on_link_change(&mut self, iface: IfaceIdx, ctx: &mut dyn NetCtx) {
        if iface != self.iface {
            return;
        }
        let info = ctx.link_info(iface);
        let sink = self.sink;
        if let (Some(e), Some(info)) = (
            sink.and_then(|h| self.endpoint.as_mut()?.connection_mut(h)),
            info,
        ) {
            e.set_link_info(ctx.now(), info);
        }
        if let Some(ep) = self.endpoint.as_mut() {
            self.next_timer = ep.poll_timeout();
        }
    }
}

/// Builds a media flow's agents: the source on the flow's `from` host, the sink on its `to`.
pub(crate) fn build(setup: &MediaSetup, e: &FlowEnds<'_>) -> FlowAgents {
    let source = media_source(MediaSourceParams {
        flow: e.flow,
        config: setup.config,
        kind: setup.kind,
        iface: e.sender_iface(),
        local_port: e.sender_port,
        peer: e.receiver(),
        stop: e.stop(),
        conn_seed: e.conn_seed,
    });
    let sink = media_sink(e.flow, setup.config, e.receiver_iface(), e.receiver_port);
    FlowAgents::pair(e, (source, sink))
}
