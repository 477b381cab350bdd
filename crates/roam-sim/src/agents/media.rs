//! Media flow agents (RCP-ATL and the plain rate AIMD baseline): a source that sends at the
//! allowed rate S(t) for as long as the flow runs (an adaptive encoder that always follows S(t)),
//! and a sink that verifies every packet's bytes, measures delay and jitter and answers with
//! receiver reports. Both hand their host's link facts to the engine (the wireless end's
//! p_w/d_w/handoffs).
//!
//! Both ends drive roam-proto's [`Endpoint`](roam_proto::endpoint::Endpoint)
//! (docs/ENDPOINT.md) through the simulator's generic host, as the RCP and TCP agents do:
//! the source's host holds its [`MediaSender`] as a client connection; the sink's host answers
//! through a [`MediaAcceptor`] keyed from the run's seeded RNG, so the source's first packets
//! get stateless reports with a token and the sink exists once a packet echoes it
//! (`docs/HANDSHAKE-RCP.md`). The endpoint runs the engines' timers; the sink's idle expiry is
//! the engine's own ([`MediaConfig::idle_timeout`]).

use roam_proto::endpoint::NoAcceptor;
use roam_proto::media::{
    DelayStats, MediaAcceptor, MediaConfig, MediaReceiverStats, MediaSender, RateKind,
};
use roam_proto::Time;
use roam_wire::ConnId;

use super::flow::{FlowAgents, FlowEnds};
use super::host::{Arrived, Host};
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
    // A client host: it accepts nothing and expires nothing (the source sends for as long as
    // the flow runs).
    Box::new(MediaSourceAgent {
        host: Host::client((p.iface, p.local_port, p.flow)),
        p,
    })
}

/// Builds the receiving end of a media flow.
pub fn media_sink(
    flow: FlowIdx,
    config: MediaConfig,
    iface: IfaceIdx,
    local_port: u16,
) -> Box<dyn Agent> {
    // The host's address-validation key comes from the agent's `token-key` substream. The
    // engine expires an idle sink itself, which the endpoint sees as drained.
    let acceptor = MediaAcceptor::new(config);
    Box::new(MediaSinkAgent {
        flow,
        iface,
        host: Host::keyed(
            (iface, local_port, flow),
            Some(acceptor),
            crate::rng::token_key,
        ),
        seen: MediaReceiverStats::default(),
        retired: MediaReceiverStats::default(),
    })
}

struct MediaSourceAgent {
    p: MediaSourceParams,
    /// The source's host: one client connection, the source once started (the endpoint never
    /// removes it: it is never stopped).
    host: Host<(), NoAcceptor<MediaSender>>,
}

impl MediaSourceAgent {
    fn stopped(&self, now: Time) -> bool {
        self.p.stop.is_some_and(|s| now >= s)
    }

    /// Sends what the source has ready and re-reads the deadline. From the flow's `stop` on,
    /// the application sends nothing more (the source still hears the reports in flight).
    fn flush(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        if self.host.is_held() && !self.stopped(now) {
            // The adaptive encoder follows S(t); the events are the rate it is told. Handing
            // the source out also asks it for a packet below on every call, as pacing wants.
            if let Some(e) = self.host.held_mut() {
                while e.poll_event().is_some() {}
            }
            self.host.transmit(ctx, |_| {});
            if let Some(e) = self.host.held() {
                let sent = e.stats().packets_sent;
                let c = ctx.counters(self.p.flow);
                c.media
                    .get_or_insert_with(MediaResult::default)
                    .packets_sent = sent;
            }
        }
        self.host.reread_deadline();
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
        self.host.connect(engine, self.p.peer, ctx);
        self.flush(ctx);
    }

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        // A client endpoint answers nothing; reports reach the source.
        self.host.on_packet(packet, ctx);
        self.flush(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        self.host.on_timer(ctx.now());
        self.flush(ctx);
    }

    fn next_timer(&self) -> Option<Time> {
        self.host
            .next_timer()
            .filter(|&t| self.p.stop.is_none_or(|s| t < s))
    }

    fn sample(&self) -> AgentSample {
        AgentSample {
            // The allowed rate expressed as bytes per RTT is not meaningful; report S(t) in
            // bytes per second in the window column.
            cwnd_bytes: self.host.held().map(|e| (e.rate_bps() / 8.0) as u64),
            seq: None,
        }
    }

    fn on_link_change(&mut self, iface: IfaceIdx, ctx: &mut dyn NetCtx) {
        if iface != self.p.iface {
            return;
        }
        let info = ctx.link_info(iface);
        if let (Some(e), Some(info)) = (self.host.held_mut(), info) {
            e.set_link_info(ctx.now(), info);
        }
        self.host.reread_deadline();
    }
}

struct MediaSinkAgent {
    flow: FlowIdx,
    iface: IfaceIdx,
    /// The sink's host: sinks open through the acceptor; the one it follows (the last
    /// accepted) is the flow's.
    host: Host<(), MediaAcceptor>,
    /// The sink's counters as last folded into the flow's.
    seen: MediaReceiverStats,
    /// What earlier sinks of the flow counted (a sink expires after its idle timeout; the
    /// source's next packets open a new one).
    retired: MediaReceiverStats,
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
        self.host.transmit(ctx, |_| {});
        let (retired, seen) = (&mut self.retired, &mut self.seen);
        self.host.settle(|conn, followed| {
            if followed {
                *retired = merged(retired, &conn.stats());
                *seen = MediaReceiverStats::default();
            }
        });
    }
}

impl Agent for MediaSinkAgent {
    fn start(&mut self, _ctx: &mut dyn NetCtx) {}

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        // A packet of no sink held here gets a stateless report with a token; one echoing a
        // valid token opens the sink, which counts it.
        if let Some(arrived) = self.host.on_packet(packet, ctx) {
            let info = ctx.link_info(self.iface);
            let accepted = matches!(arrived, Arrived::Accepted { .. });
            if let Arrived::Accepted { replaced, .. } = arrived {
                // Another flow's id on this host: the flow's counters follow the newest.
                if let Some(old) = replaced.and_then(|h| self.host.connection(h)) {
                    self.retired = merged(&self.retired, &old.stats());
                }
                self.seen = MediaReceiverStats::default();
            }
            let h = arrived.handle();
            let followed = self.host.follows(h);
            if let Some(e) = self.host.connection_mut(h) {
                if accepted {
                    if let Some(info) = info {
                        e.set_link_info(now, info);
                    }
                }
                let s = e.stats();
                if followed {
                    self.count(s, ctx);
                }
            }
        }
        self.flush(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        self.host.on_timer(ctx.now());
        self.flush(ctx);
    }

    fn next_timer(&self) -> Option<Time> {
        self.host.next_timer()
    }

    fn on_link_change(&mut self, iface: IfaceIdx, ctx: &mut dyn NetCtx) {
        if iface != self.iface {
            return;
        }
        let info = ctx.link_info(iface);
        if let (Some(e), Some(info)) = (self.host.held_mut(), info) {
            e.set_link_info(ctx.now(), info);
        }
        self.host.reread_deadline();
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
