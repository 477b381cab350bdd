//! Energy accounting for a host's wireless interface (rcp-r2cp.txt §3.4.4).
//!
//! A [`RadioMeter`] adds up the time the radio spends transmitting, receiving and asleep;
//! the rest of the run it is idle (awake, listening). Airtime of a datagram is its on-wire
//! size (datagram + IP/UDP header) at the link's rate. Energy = Σ time × power with the
//! [`PowerModel`] (802.11b defaults from the paper: 1.65 W transmit, 1.4 W receive, 0.045 W
//! sleep; idle is configurable and defaults to 1.15 W, see `docs/RCP.md`).
//!
//! Agents that manage power themselves (the RCP receiver's sleep policy) drive a meter
//! directly; any other agent is measured by wrapping it in [`metered`] (the TCP baseline,
//! which keeps its radio on and receives whatever arrives).

use std::time::Duration;

use roam_proto::Time;
use serde::Serialize;

use crate::agent::{Addr, Agent, AgentSample, FlowIdx, IfaceIdx, NetCtx, Packet};

/// Power drawn in each radio state (watts).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PowerModel {
    /// Transmitting.
    pub tx_w: f64,
    /// Receiving.
    pub rx_w: f64,
    /// Awake, neither transmitting nor receiving.
    pub idle_w: f64,
    /// Asleep.
    pub sleep_w: f64,
}

impl Default for PowerModel {
    /// IEEE 802.11b (rcp-r2cp.txt §3.4.4, its references 19 and 28); idle 1.15 W (our choice).
    fn default() -> Self {
        PowerModel {
            tx_w: 1.65,
            rx_w: 1.4,
            idle_w: 1.15,
            sleep_w: 0.045,
        }
    }
}

/// Energy used by one interface over a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EnergyReport {
    /// Total energy (J).
    pub joules: f64,
    /// Seconds transmitting.
    pub tx_s: f64,
    /// Seconds receiving (including beacons heard while sleeping).
    pub rx_s: f64,
    /// Seconds asleep.
    pub sleep_s: f64,
    /// Seconds idle.
    pub idle_s: f64,
}

/// Accumulates radio time per state. See the module docs.
#[derive(Debug, Clone, PartialEq)]
pub struct RadioMeter {
    model: PowerModel,
    start: Time,
    tx: Duration,
    rx: Duration,
    sleep: Duration,
    /// Beacon listening time inside sleep periods (counted as receive, not sleep).
    beacons: Duration,
    asleep_since: Option<Time>,
    header_overhead: u32,
}

impl RadioMeter {
    /// A meter that starts counting at `start`.
    pub fn new(model: PowerModel, start: Time, header_overhead: u32) -> Self {
        RadioMeter {
            model,
            start,
            tx: Duration::ZERO,
            rx: Duration::ZERO,
            sleep: Duration::ZERO,
            beacons: Duration::ZERO,
            asleep_since: None,
            header_overhead,
        }
    }

    fn airtime(&self, bytes: usize, rate_bps: u64) -> Duration {
        if rate_bps == 0 {
            return Duration::ZERO;
        }
        let bits = (bytes as u64 + u64::from(self.header_overhead)) * 8;
        Duration::from_secs_f64(bits as f64 / rate_bps as f64)
    }

    /// A datagram of `bytes` was transmitted at `rate_bps`.
    pub fn on_tx(&mut self, bytes: usize, rate_bps: u64) {
        self.tx += self.airtime(bytes, rate_bps);
    }

    /// A datagram of `bytes` was received (or heard corrupted) at `rate_bps`.
    pub fn on_rx(&mut self, bytes: usize, rate_bps: u64) {
        self.rx += self.airtime(bytes, rate_bps);
    }

    /// The radio goes to sleep.
    pub fn sleep(&mut self, now: Time) {
        if self.asleep_since.is_none() {
            self.asleep_since = Some(now);
        }
    }

    /// The radio wakes up.
    pub fn wake(&mut self, now: Time) {
        if let Some(t) = self.asleep_since.take() {
            self.sleep += now.saturating_since(t);
        }
    }

    /// True while asleep.
    pub fn is_asleep(&self) -> bool {
        self.asleep_since.is_some()
    }

    /// A sleeping radio woke for `d` to hear a beacon (counted as receive time, not sleep).
    pub fn beacon(&mut self, d: Duration) {
        self.rx += d;
        self.beacons += d;
    }

    /// Totals up to `end`.
    pub fn report(&self, end: Time) -> EnergyReport {
        let mut sleep = self.sleep;
        if let Some(t) = self.asleep_since {
            sleep += end.saturating_since(t);
        }
        let sleep = sleep.saturating_sub(self.beacons);
        let total = end.saturating_since(self.start).as_secs_f64();
        let (tx, rx, sleep) = (
            self.tx.as_secs_f64(),
            self.rx.as_secs_f64(),
            sleep.as_secs_f64(),
        );
        let idle = (total - tx - rx - sleep).max(0.0);
        let m = &self.model;
        EnergyReport {
            joules: tx * m.tx_w + rx * m.rx_w + sleep * m.sleep_w + idle * m.idle_w,
            tx_s: tx,
            rx_s: rx,
            sleep_s: sleep,
            idle_s: idle,
        }
    }
}

/// Wraps `inner` (an agent that keeps its radio on) so that every datagram it sends or
/// receives on `iface` is metered; the meter is stored in `flow`'s counters.
pub fn metered(
    inner: Box<dyn Agent>,
    flow: FlowIdx,
    iface: IfaceIdx,
    model: PowerModel,
    header_overhead: u32,
) -> Box<dyn Agent> {
    Box::new(Metered {
        inner,
        flow,
        iface,
        meter: RadioMeter::new(model, Time::ZERO, header_overhead),
    })
}

struct Metered {
    inner: Box<dyn Agent>,
    flow: FlowIdx,
    iface: IfaceIdx,
    meter: RadioMeter,
}

/// A [`NetCtx`] that meters what the wrapped agent sends.
struct MeteringCtx<'a> {
    ctx: &'a mut dyn NetCtx,
    meter: &'a mut RadioMeter,
    rate: u64,
}

impl NetCtx for MeteringCtx<'_> {
    fn now(&self) -> Time {
        self.ctx.now()
    }
    fn send(&mut self, iface: IfaceIdx, packet: Packet) {
        self.meter.on_tx(packet.payload.len(), self.rate);
        self.ctx.send(iface, packet);
    }
    fn buffer(&mut self) -> Vec<u8> {
        self.ctx.buffer()
    }
    fn give_back(&mut self, buf: Vec<u8>) {
        self.ctx.give_back(buf);
    }
    fn local_addr(&self, iface: IfaceIdx) -> Option<Addr> {
        self.ctx.local_addr(iface)
    }
    fn counters(&mut self, flow: FlowIdx) -> &mut crate::agent::FlowCounters {
        self.ctx.counters(flow)
    }
    fn rng(&mut self) -> &mut rand_chacha::ChaCha8Rng {
        self.ctx.rng()
    }
    fn link_info(&self, iface: IfaceIdx) -> Option<roam_proto::linkinfo::LinkInfo> {
        self.ctx.link_info(iface)
    }
}

impl Metered {
    fn call(&mut self, ctx: &mut dyn NetCtx, f: impl FnOnce(&mut dyn Agent, &mut dyn NetCtx)) {
        let rate = ctx.link_info(self.iface).map_or(0, |l| l.bandwidth_bps);
        {
            let mut mctx = MeteringCtx {
                ctx: &mut *ctx,
                meter: &mut self.meter,
                rate,
            };
            f(self.inner.as_mut(), &mut mctx);
        }
        ctx.counters(self.flow).radio = Some(self.meter.clone());
    }
}

impl Agent for Metered {
    fn start(&mut self, ctx: &mut dyn NetCtx) {
        self.meter.start = ctx.now();
        self.call(ctx, |a, c| a.start(c));
    }
    fn on_packet(&mut self, iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        let rate = ctx.link_info(iface).map_or(0, |l| l.bandwidth_bps);
        self.meter.on_rx(packet.payload.len(), rate);
        self.call(ctx, |a, c| a.on_packet(iface, packet, c));
    }
    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        self.call(ctx, |a, c| a.on_timer(c));
    }
    fn next_timer(&self) -> Option<Time> {
        self.inner.next_timer()
    }
    fn sample(&self) -> AgentSample {
        self.inner.sample()
    }
    fn on_link_change(&mut self, iface: IfaceIdx, ctx: &mut dyn NetCtx) {
        self.call(ctx, |a, c| a.on_link_change(iface, c));
    }
    fn on_corrupted(&mut self, iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        let rate = ctx.link_info(iface).map_or(0, |l| l.bandwidth_bps);
        self.meter.on_rx(packet.payload.len(), rate);
        self.call(ctx, |a, c| a.on_corrupted(iface, packet, c));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn energy_adds_state_times_times_power() {
        let mut m = RadioMeter::new(PowerModel::default(), Time::ZERO, 0);
        m.on_rx(1000, 8_000_000); // 1 ms
        m.on_tx(1000, 8_000_000); // 1 ms
        m.sleep(Time::from_millis(10));
        m.beacon(Duration::from_millis(2));
        m.wake(Time::from_millis(110));
        let r = m.report(Time::from_millis(1000));
        assert!((r.rx_s - 0.003).abs() < 1e-9);
        assert!((r.sleep_s - 0.098).abs() < 1e-9);
        let expect = 0.001 * 1.65 + 0.003 * 1.4 + 0.098 * 0.045 + (1.0 - 0.102) * 1.15;
        assert!((r.joules - expect).abs() < 1e-9);
    }
}
