//! UDP traffic: a constant-bit-rate source, an ns-2-style Pareto on/off source, and a sink
//! that counts delivered bytes.
//!
//! Datagrams carry a 64-bit big-endian sequence number followed by zero bytes.

use std::time::Duration;

use rand::Rng;
use roam_proto::Time;

use crate::agent::{Agent, AgentSample, FlowIdx, IfaceIdx, NetCtx, Packet, SockAddr};

/// Where and how much a UDP source sends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UdpSourceParams {
    /// Flow the datagrams belong to.
    pub flow: FlowIdx,
    /// Local interface to send from.
    pub iface: IfaceIdx,
    /// Local port.
    pub local_port: u16,
    /// Destination.
    pub peer: SockAddr,
    /// Payload bits per second while sending.
    pub rate_bps: u64,
    /// Payload bytes per datagram (the last datagram of a sized flow may be shorter).
    pub packet_size: u32,
    /// Stop after this many payload bytes.
    pub size: Option<u64>,
    /// Stop sending at this time.
    pub stop: Option<Time>,
}

/// Pareto on/off parameters (ns-2 `Application/Traffic/Pareto`): burst lengths and idle times
/// are Pareto distributed with the given means and shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParetoParams {
    /// Mean burst length.
    pub mean_on: Duration,
    /// Mean idle time between bursts.
    pub mean_off: Duration,
    /// Shape (> 1).
    pub shape: f64,
}

#[derive(Debug)]
enum Pattern {
    Cbr { first: Time, k: u64 },
    Pareto { p: ParetoParams, burst_left: u64 },
}

/// A UDP source (see [`cbr_source`], [`pareto_source`]).
#[derive(Debug)]
struct UdpSource {
    p: UdpSourceParams,
    pattern: Pattern,
    next_send: Option<Time>,
    sent: u64,
    seq: u64,
}

/// Nanoseconds between datagrams at the sending rate (at least 1).
fn interval_ns(p: &UdpSourceParams) -> u64 {
    let ns = u128::from(p.packet_size) * 8_000_000_000 / u128::from(p.rate_bps.max(1));
    u64::try_from(ns).unwrap_or(u64::MAX).max(1)
}

/// A Pareto sample with the given mean and shape (> 1).
fn pareto(rng: &mut impl Rng, mean: f64, shape: f64) -> f64 {
    let scale = mean * (shape - 1.0) / shape;
    let u: f64 = 1.0 - rng.gen::<f64>();
    (scale / u.powf(1.0 / shape)).min(1e15)
}

/// A constant-bit-rate source: one datagram every `packet_size · 8 / rate` seconds from its
/// start.
pub fn cbr_source(p: UdpSourceParams) -> Box<dyn Agent> {
    Box::new(UdpSource {
        p,
        pattern: Pattern::Cbr {
            first: Time::ZERO,
            k: 0,
        },
        next_send: None,
        sent: 0,
        seq: 0,
    })
}

/// A Pareto on/off source: bursts at `rate_bps` separated by idle periods.
pub fn pareto_source(p: UdpSourceParams, on_off: ParetoParams) -> Box<dyn Agent> {
    Box::new(UdpSource {
        p,
        pattern: Pattern::Pareto {
            p: on_off,
            burst_left: 0,
        },
        next_send: None,
        sent: 0,
        seq: 0,
    })
}

impl UdpSource {
    fn finished(&self, at: Time) -> bool {
        self.p.size.is_some_and(|s| self.sent >= s) || self.p.stop.is_some_and(|s| at >= s)
    }

    /// Draws a new burst (in datagrams) and returns the idle time before it.
    fn new_burst(&mut self, ctx: &mut dyn NetCtx) -> Duration {
        let interval = interval_ns(&self.p) as f64;
        let Pattern::Pareto { p, burst_left } = &mut self.pattern else {
            return Duration::ZERO;
        };
        let rng = ctx.rng();
        let mean_packets = p.mean_on.as_nanos() as f64 / interval;
        *burst_left = (pareto(rng, mean_packets, p.shape) + 0.5).max(1.0) as u64;
        Duration::from_nanos(pareto(rng, p.mean_off.as_nanos() as f64, p.shape) as u64)
    }

    fn send_one(&mut self, ctx: &mut dyn NetCtx) {
        let len = match self.p.size {
            Some(s) => u64::from(self.p.packet_size).min(s - self.sent) as usize,
            None => self.p.packet_size as usize,
        };
        let mut payload = ctx.buffer();
        payload.resize(len, 0);
        let seq = self.seq.to_be_bytes();
        let n = len.min(seq.len());
        payload[..n].copy_from_slice(&seq[..n]);
        self.seq += 1;
        self.sent += len as u64;
        let src = SockAddr {
            addr: ctx
                .local_addr(self.p.iface)
                .unwrap_or(crate::agent::Addr(0)),
            port: self.p.local_port,
        };
        let c = ctx.counters(self.p.flow);
        c.datagrams_sent += 1;
        c.transport_bytes_sent += len as u64;
        ctx.send(
            self.p.iface,
            Packet {
                src,
                dst: self.p.peer,
                payload,
                flow: Some(self.p.flow),
            },
        );
    }

    fn schedule_next(&mut self, now: Time, ctx: &mut dyn NetCtx) {
        let interval = interval_ns(&self.p);
        let next = match &mut self.pattern {
            Pattern::Cbr { first, k } => {
                *k += 1;
                let off = u128::from(*k) * u128::from(self.p.packet_size) * 8_000_000_000
                    / u128::from(self.p.rate_bps.max(1));
                Some(*first + Duration::from_nanos(u64::try_from(off).unwrap_or(u64::MAX)))
            }
            Pattern::Pareto { burst_left, .. } => {
                *burst_left = burst_left.saturating_sub(1);
                (*burst_left > 0).then(|| now + Duration::from_nanos(interval))
            }
        };
        let next = match next {
            Some(t) => t,
            None => {
                let idle = self.new_burst(ctx);
                now + Duration::from_nanos(interval) + idle
            }
        };
        self.next_send = (!self.finished(next)).then_some(next);
    }
}

impl Agent for UdpSource {
    fn start(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        if let Pattern::Cbr { first, .. } = &mut self.pattern {
            *first = now;
        } else {
            self.new_burst(ctx);
        }
        self.next_send = (!self.finished(now)).then_some(now);
        self.on_timer(ctx);
    }

    fn on_packet(&mut self, _iface: IfaceIdx, _packet: &Packet, _ctx: &mut dyn NetCtx) {}

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        // Bounded so that even an absurd rate cannot stall the simulation at one instant.
        for _ in 0..10_000 {
            match self.next_send {
                Some(t) if t <= now => {
                    self.send_one(ctx);
                    self.schedule_next(t, ctx);
                }
                _ => break,
            }
        }
    }

    fn next_timer(&self) -> Option<Time> {
        self.next_send
    }

    fn sample(&self) -> AgentSample {
        AgentSample {
            cwnd_bytes: None,
            seq: Some(self.sent),
        }
    }
}

/// A UDP sink: counts every payload byte it receives as delivered; a sized flow completes
/// when `expected` bytes have arrived.
pub fn udp_sink(flow: FlowIdx, expected: Option<u64>) -> Box<dyn Agent> {
    Box::new(UdpSink { flow, expected })
}

#[derive(Debug)]
struct UdpSink {
    flow: FlowIdx,
    expected: Option<u64>,
}

impl Agent for UdpSink {
    fn start(&mut self, _ctx: &mut dyn NetCtx) {}

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let c = ctx.counters(self.flow);
        c.bytes_delivered += packet.payload.len() as u64;
        if c.completed_at.is_none() && self.expected.is_some_and(|e| c.bytes_delivered >= e) {
            c.completed_at = Some(now);
        }
    }

    fn on_timer(&mut self, _ctx: &mut dyn NetCtx) {}

    fn next_timer(&self) -> Option<Time> {
        None
    }
}
