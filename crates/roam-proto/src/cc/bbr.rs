//! BBR version 1 (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR: Congestion-Based
//! Congestion Control", ACM Queue 14(5), 2016; the algorithm as written down in
//! draft-cardwell-iccrg-bbr-congestion-control-00, cited "draft" below).
//!
//! BBR paces at `pacing_gain · BtlBw` and caps the data in flight at `cwnd_gain · BtlBw ·
//! RTprop` (+ a quantization allowance), from a model of the path ([`model`]) instead of
//! reacting to loss. States (draft §4.3): Startup (gain 2/ln 2) until the bandwidth stops
//! growing by 25 % for three rounds, Drain (gain ln 2/2) until the queue Startup built is gone,
//! ProbeBW cycling its pacing gain through `[5/4, 3/4, 1, 1, 1, 1, 1, 1]` one RTprop per phase,
//! and ProbeRTT (cwnd 4 segments for 200 ms and a round) when RTprop was not refreshed for 10 s.
//! Loss response (draft §4.2.3.5): packet conservation for the first round of a recovery
//! episode, the window before it restored when the episode ends; after a timeout one segment,
//! restored a round later.
//!
//! The one deliberate departure: ProbeBW's first phase is chosen at random in the draft
//! (§4.3.4.4); controllers here get no randomness, so it is phase 2 (a cruising phase), which
//! keeps runs deterministic. Flows that enter ProbeBW at different times still probe at
//! different times.

pub mod aggregation;
pub mod model;

use std::time::Duration;

use self::aggregation::AckAggregation;
use self::model::Model;
use super::{CongestionController, Delivered, LossCause, LossEvent};
use crate::Time;

/// Startup's gains, `2/ln 2` (draft §4.3.2.1 `BBRHighGain`).
pub const HIGH_GAIN: f64 = 2.885_390_081_777_926_8;
/// ProbeBW's pacing-gain cycle (draft §4.3.4.3).
pub const GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// ProbeBW's cwnd gain (draft §4.2.3.2).
pub const CWND_GAIN: f64 = 2.0;
/// Segments ProbeRTT keeps in flight, and the least cwnd ever (draft §4.2.3.1
/// `BBRMinPipeCwnd`).
pub const MIN_PIPE_SEGMENTS: u64 = 4;
/// How long ProbeRTT lasts at least (draft §4.3.5 `ProbeRTTDuration`).
pub const PROBE_RTT_DURATION: Duration = Duration::from_millis(200);
/// Growth below which three rounds mean the pipe is full (draft §4.3.2.2).
const FULL_BW_GROWTH: f64 = 1.25;
const FULL_BW_ROUNDS: u32 = 3;
/// Send quanta `BBRInflight` allows for send/ACK quantization at the end hosts (draft
/// §4.2.3.2; Linux `bbr_quantization_budget`: one in the sender's qdisc, one in its
/// segmentation offload, one in the receiver's receive offload or delayed ACK).
pub const QUANTA: u64 = 3;
/// Largest window kept, bytes (keeps every product finite and far from `u64::MAX`).
const MAX_WINDOW: f64 = (1u64 << 50) as f64;

/// BBR's state (draft §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Exponential search for the bottleneck rate.
    Startup,
    /// Drains the queue Startup built.
    Drain,
    /// Cruises at the estimated rate, probing for more once per gain cycle; the phase index.
    ProbeBw(usize),
    /// Drains the pipe to measure the propagation delay.
    ProbeRtt,
}

/// The BBR controller.
#[derive(Debug, Clone)]
pub struct Bbr {
    mss: f64,
    initial_cwnd: f64,
    cwnd: f64,
    state: State,
    model: Model,
    /// When the current ProbeBW phase began.
    phase_start: Time,
    /// Draft §4.3.2.2: the bandwidth at the last 25 % step and the rounds without one.
    full_bw: f64,
    full_bw_count: u32,
    filled_pipe: bool,
    /// Loss recovery: the cwnd before it, and the round in which packet conservation ends.
    prior_cwnd: Option<f64>,
    conservation_until_round: Option<u64>,
    /// ProbeRTT: when it may end, and whether a round has passed since it could.
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    /// Send quanta `BBRInflight` adds: [`QUANTA`] unless built by [`Bbr::with_quanta`].
    quanta: u64,
    /// Linux's ACK-aggregation allowance ([`aggregation`]), when built by
    /// [`Bbr::with_ack_aggregation`]; `None` for BBR v1 as published.
    aggregation: Option<AckAggregation>,
}

impl Bbr {
    /// A controller with an initial window of `initial_window_segments` segments of `mss` bytes.
    pub fn new(mss: u64, initial_window_segments: u32) -> Self {
        let mss = mss.max(1) as f64;
        let initial_cwnd = mss * f64::from(initial_window_segments.max(1));
        Bbr {
            mss,
            initial_cwnd,
            cwnd: initial_cwnd.min(MAX_WINDOW),
            state: State::Startup,
            model: Model::new(),
            phase_start: Time::ZERO,
            full_bw: 0.0,
            full_bw_count: 0,
            filled_pipe: false,
            prior_cwnd: None,
            conservation_until_round: None,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            quanta: QUANTA,
            aggregation: None,
        }
    }

    /// BBR v1 with the ACK-aggregation allowance Linux's BBR added in 2019 ([`aggregation`];
    /// `cc = "bbr-aggr"`): once Startup found the pipe full, the window adds the filtered
    /// `extra_acked`.
    pub fn with_ack_aggregation(mss: u64, initial_window_segments: u32) -> Self {
        Bbr {
            aggregation: Some(AckAggregation::new()),
            ..Bbr::new(mss, initial_window_segments)
        }
    }

    /// A controller whose `BBRInflight` (window, Drain's exit, the gain cycle's bounds) adds
    /// `quanta` send quanta instead of the draft's [`QUANTA`]: for a controller whose ends batch
    /// less than the draft provisions for (RCP-Rate, `crate::rcp::rate`).
    pub fn with_quanta(mss: u64, initial_window_segments: u32, quanta: u64) -> Self {
        Bbr {
            quanta,
            ..Bbr::new(mss, initial_window_segments)
        }
    }

    /// The state the machine is in.
    pub fn state(&self) -> State {
        self.state
    }

    /// The path model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// True once Startup found the bottleneck full.
    pub fn filled_pipe(&self) -> bool {
        self.filled_pipe
    }

    /// The pacing gain of the current state (draft §4.3).
    pub fn pacing_gain(&self) -> f64 {
        match self.state {
            State::Startup => HIGH_GAIN,
            State::Drain => 1.0 / HIGH_GAIN,
            State::ProbeBw(i) => GAIN_CYCLE[i % GAIN_CYCLE.len()],
            State::ProbeRtt => 1.0,
        }
    }

    fn cwnd_gain(&self) -> f64 {
        match self.state {
            State::Startup | State::Drain => HIGH_GAIN,
            State::ProbeBw(_) => CWND_GAIN,
            State::ProbeRtt => 1.0,
        }
    }

    fn min_cwnd(&self) -> f64 {
        MIN_PIPE_SEGMENTS as f64 * self.mss
    }

    /// Draft §4.2.3.2 `BBRInflight(gain)`: `gain · BDP` plus three send quanta
    /// (`quanta = 3 · BBR.send_quantum`, §4.2.2; [`Bbr::with_quanta`] sets another count) for
    /// send/ACK quantization; the initial window while there is no estimate.
    fn inflight(&self, gain: f64) -> f64 {
        match self.model.bdp() {
            Some(bdp) => {
                let rate = self.pacing_rate().unwrap_or(0.0);
                let quanta = send_quantum(self.mss as u64, rate).saturating_mul(self.quanta);
                (gain * bdp + quanta as f64).clamp(self.min_cwnd(), MAX_WINDOW)
            }
            None => self.initial_cwnd,
        }
    }

    /// Draft §4.3.2.2: at each round start in Startup, is the bandwidth still growing?
    fn check_full_pipe(&mut self) {
        if self.filled_pipe || !self.model.round_start {
            return;
        }
        let bw = self.model.btl_bw();
        if bw >= self.full_bw * FULL_BW_GROWTH {
            self.full_bw = bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        if self.full_bw_count >= FULL_BW_ROUNDS {
            self.filled_pipe = true;
        }
    }

    fn enter_probe_bw(&mut self, now: Time) {
        self.state = State::ProbeBw(2);
        self.phase_start = now;
    }

    /// Draft §4.3.4.4 `BBRIsNextCyclePhase`: advance the gain cycle after one RTprop in a
    /// phase; the probing phase (5/4) also waits until the data in flight before this event
    /// (`prior_inflight`) reached `BBRInflight(5/4)` (or a loss), the draining phase (3/4) ends
    /// early once it is down to `BBRInflight(1.0)`. Both bounds include the three send quanta
    /// of §4.2.3.2, as Linux's `bbr_is_next_cycle_phase` (`bbr_inflight`); until 2026-11-28
    /// they were the bare 5/4 BDP and BDP.
    fn advance_cycle(&mut self, now: Time, prior_inflight: u64, lost: bool) {
        let State::ProbeBw(i) = self.state else {
            return;
        };
        let rt = self.model.rt_prop().unwrap_or(Duration::ZERO);
        let elapsed = now.saturating_since(self.phase_start) > rt;
        let gain = self.pacing_gain();
        let prior = prior_inflight as f64;
        let next = if gain > 1.0 {
            elapsed && (lost || prior >= self.inflight(gain))
        } else if gain < 1.0 {
            elapsed || prior <= self.inflight(1.0)
        } else {
            elapsed
        };
        if next {
            self.state = State::ProbeBw((i + 1) % GAIN_CYCLE.len());
            self.phase_start = now;
        }
    }

    /// Draft §4.3.5: enter ProbeRTT when RTprop expired, leave it after 200 ms and a round
    /// at the low window.
    fn check_probe_rtt(&mut self, now: Time, in_flight: u64) {
        let expired = std::mem::take(&mut self.model.expired_at_sample);
        if self.state != State::ProbeRtt && (expired || self.model.min_rtt_expired(now)) {
            self.state = State::ProbeRtt;
            self.prior_cwnd = Some(self.prior_cwnd.unwrap_or(self.cwnd).max(self.cwnd));
            self.probe_rtt_done = None;
            self.probe_rtt_round_done = false;
        }
        if self.state != State::ProbeRtt {
            return;
        }
        match self.probe_rtt_done {
            None if in_flight <= MIN_PIPE_SEGMENTS * self.mss as u64 => {
                self.probe_rtt_done = Some(now + PROBE_RTT_DURATION);
                self.probe_rtt_round_done = false;
            }
            None => {}
            Some(done) => {
                if self.model.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && now >= done {
                    self.model.stamp_min_rtt(now);
                    if let Some(p) = self.prior_cwnd.take() {
                        self.cwnd = self.cwnd.max(p);
                    }
                    if self.filled_pipe {
                        self.enter_probe_bw(now);
                    } else {
                        self.state = State::Startup;
                    }
                }
            }
        }
    }

    /// Draft §4.2.3: the window after a delivery of `bytes`.
    fn set_cwnd(&mut self, bytes: u64, in_flight: u64) {
        let mut target = self.inflight(self.cwnd_gain());
        if let Some(a) = self.aggregation.as_ref().filter(|_| self.filled_pipe) {
            // Linux `bbr_set_cwnd`: the target adds `bbr_ack_aggregation_cwnd` once the pipe
            // was found full; the gain cycle's bounds (`bbr_inflight`) do not.
            target = (target + a.cwnd(self.model.btl_bw())).min(MAX_WINDOW);
        }
        let delivered = bytes as f64;
        let conserving = self
            .conservation_until_round
            .is_some_and(|r| self.model.round < r);
        if conserving {
            // Packet conservation: send one for one in the first round of recovery.
            self.cwnd = self.cwnd.max(in_flight as f64 + delivered);
        } else if self.filled_pipe {
            self.cwnd = (self.cwnd + delivered).min(target);
        } else if self.cwnd < target || (self.model.delivered as f64) < self.initial_cwnd {
            self.cwnd += delivered;
        }
        if !conserving && self.conservation_until_round.take().is_some() {
            // The round after a timeout ended: restore the window before it.
            if let Some(p) = self.prior_cwnd.take() {
                self.cwnd = self.cwnd.max(p);
            }
        }
        self.cwnd = self.cwnd.clamp(self.min_cwnd(), MAX_WINDOW);
        if self.state == State::ProbeRtt {
            self.cwnd = self.cwnd.min(self.min_cwnd());
        }
    }
}

/// The draft's send quantum (§4.2.2) in bytes for segments of `mss` bytes at a pacing rate of
/// `rate` bytes/s: one segment below 1.2 Mb/s, two below 24 Mb/s, else the bytes of 1 ms at
/// the rate, at most 64 KB.
pub fn send_quantum(mss: u64, rate: f64) -> u64 {
    const LOW: f64 = 1.2e6 / 8.0;
    const HIGH: f64 = 24e6 / 8.0;
    if rate < LOW {
        mss
    } else if rate < HIGH {
        mss.saturating_mul(2)
    } else {
        ((rate * 1e-3) as u64)
            .min(64 * 1024)
            .max(mss.saturating_mul(2))
    }
}

impl CongestionController for Bbr {
    fn name(&self) -> &'static str {
        if self.aggregation.is_some() {
            "bbr-aggr"
        } else {
            "bbr"
        }
    }

    fn window(&self) -> u64 {
        self.cwnd as u64
    }

    fn ssthresh(&self) -> u64 {
        u64::MAX
    }

    fn on_delivered(&mut self, ev: &Delivered) {
        let bytes = ev.bytes.saturating_add(ev.sacked_bytes);
        self.model.on_delivered(ev.now, bytes, ev.in_flight);
        if bytes == 0 {
            return;
        }
        let (bw, cwnd, round_start, mss) = (
            self.model.btl_bw(),
            self.cwnd,
            self.model.round_start,
            self.mss,
        );
        if let Some(a) = self.aggregation.as_mut() {
            a.on_delivered(ev.now, bytes as f64, bw, cwnd, round_start, mss);
        }
        match self.state {
            State::Startup => {
                self.check_full_pipe();
                if self.filled_pipe {
                    self.state = State::Drain;
                }
            }
            State::Drain | State::ProbeBw(_) | State::ProbeRtt => {}
        }
        // Draft §4.3.3 `BBRCheckDrain`: leave Drain once in-flight is at most
        // `BBRInflight(1.0)`, one BDP plus the quanta.
        if self.state == State::Drain
            && self.model.bdp().is_some()
            && ev.in_flight as f64 <= self.inflight(1.0)
        {
            self.enter_probe_bw(ev.now);
        }
        // The data in flight before this acknowledgement (draft §4.3.4.4 `prior_inflight`).
        let prior_inflight = ev.in_flight.saturating_add(bytes);
        self.advance_cycle(ev.now, prior_inflight, false);
        self.check_probe_rtt(ev.now, ev.in_flight);
        self.set_cwnd(bytes, ev.in_flight);
    }

    fn on_loss(&mut self, ev: &LossEvent) {
        if ev.cause == LossCause::WirelessEln {
            return;
        }
        // Draft §4.2.3.5: save the window, conserve packets for one round (cwnd = in flight
        // plus one segment for the fast retransmit).
        self.prior_cwnd = Some(self.prior_cwnd.unwrap_or(self.cwnd).max(self.cwnd));
        self.cwnd = (ev.in_flight as f64 + self.mss).clamp(self.min_cwnd(), MAX_WINDOW);
        self.conservation_until_round = Some(self.model.round.saturating_add(1));
        self.advance_cycle(ev.now, ev.in_flight, true);
    }

    fn on_recovery_end(&mut self, _now: Time) {
        self.conservation_until_round = None;
        if let Some(p) = self.prior_cwnd.take() {
            self.cwnd = self.cwnd.max(p).min(MAX_WINDOW);
        }
    }

    fn on_timeout(&mut self, _now: Time, _in_flight: u64) {
        // Draft §4.2.3.5: one segment after a timeout; the window before it comes back once a
        // round of data has been delivered.
        self.prior_cwnd = Some(self.prior_cwnd.unwrap_or(self.cwnd).max(self.cwnd));
        self.cwnd = self.mss;
        self.conservation_until_round = Some(self.model.round.saturating_add(1));
    }

    fn on_rtt_sample(&mut self, now: Time, rtt: Duration, _min_rtt: Duration) {
        self.model.on_rtt(now, rtt);
    }

    fn set_window(&mut self, cwnd: u64, _ssthresh: Option<u64>) {
        self.cwnd = (cwnd as f64).clamp(self.min_cwnd(), MAX_WINDOW);
    }

    fn pacing_rate(&self) -> Option<f64> {
        // Draft §4.2.1: pacing_gain · BtlBw; before the first sample, HIGH_GAIN · cwnd / RTT.
        let bw = self.model.btl_bw();
        if bw > 0.0 {
            return Some(self.pacing_gain() * bw);
        }
        let rtt = self.model.rt_prop()?.as_secs_f64();
        (rtt > 0.0).then(|| HIGH_GAIN * self.initial_cwnd / rtt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One 1000-byte delivery per millisecond (a 1 MB/s bottleneck) from `from` to `to` ms, each
    /// with an RTT sample of `rtt` ms and `in_flight` bytes outstanding after it.
    fn drive(cc: &mut Bbr, from: u64, to: u64, rtt: u64, in_flight: u64) {
        for ms in from..to {
            let now = Time::from_millis(ms);
            cc.on_rtt_sample(now, Duration::from_millis(rtt), Duration::ZERO);
            cc.on_delivered(&Delivered {
                now,
                bytes: 1000,
                sacked_bytes: 0,
                in_flight,
                in_recovery: false,
                rtt: Some(Duration::from_millis(rtt)),
            });
        }
    }

    /// Startup until the rate stops growing for three rounds, Drain until in-flight is down to
    /// one BDP (1 MB/s × 100 ms = 100 kB), then ProbeBW from phase 2.
    #[test]
    fn startup_drain_probe_bw() {
        let mut cc = Bbr::new(1000, 10);
        assert_eq!(cc.state(), State::Startup);
        // Before any rate sample the pacing rate is HIGH_GAIN · IW / RTT once an RTT is known.
        assert_eq!(cc.pacing_rate(), None);
        cc.on_rtt_sample(Time::ZERO, Duration::from_millis(100), Duration::ZERO);
        let initial = cc.pacing_rate().unwrap();
        assert!((initial - HIGH_GAIN * 10_000.0 / 0.1).abs() < 1e-6);
        // A constant 1 MB/s with 200 kB in flight: one round per 200 ms. The rate is flat from
        // the first sample (round 2), so rounds 3, 4 and 5 fill the pipe.
        drive(&mut cc, 0, 1000, 100, 200_000);
        assert!(cc.filled_pipe());
        assert_eq!(cc.state(), State::Drain);
        assert!((cc.model().btl_bw() - 1e6).abs() < 1e3);
        let drain = cc.pacing_rate().unwrap();
        assert!((drain - 1e6 / HIGH_GAIN).abs() < 1e3, "{drain}");
        // In-flight falls to the BDP: ProbeBW, cruising phase 2, pacing at the estimate.
        drive(&mut cc, 1000, 1001, 100, 100_000);
        assert_eq!(cc.state(), State::ProbeBw(2));
        assert!((cc.pacing_rate().unwrap() - 1e6).abs() < 1e3);
        // cwnd = BBRInflight(2) = 2 · BDP + 3 send quanta (8 Mb/s: two segments each), the
        // BDP as measured (1 MB/s · 100 ms, to within the rate estimate's 0.1 %).
        drive(&mut cc, 1001, 1100, 100, 100_000);
        let w = cc.window() as f64;
        assert!((w - 206_000.0).abs() < 300.0, "{w}");
    }

    /// Draft §4.3.3: Drain ends at `BBRInflight(1.0)` = one BDP plus three send quanta, not at
    /// the bare BDP. At 1 MB/s · 100 ms the BDP is 100 kB; Drain paces at 1 MB/s / 2.885 =
    /// 2.77 Mb/s, so the quantum is two 1000-byte segments and the bound 106 kB.
    #[test]
    fn drain_ends_at_one_bdp_plus_the_quanta() {
        let mut cc = Bbr::new(1000, 10);
        drive(&mut cc, 0, 1000, 100, 200_000);
        assert_eq!(cc.state(), State::Drain);
        drive(&mut cc, 1000, 1001, 100, 107_000);
        assert_eq!(cc.state(), State::Drain);
        drive(&mut cc, 1001, 1002, 100, 105_500);
        assert_eq!(cc.state(), State::ProbeBw(2));
    }

    /// `with_quanta(1)`: `BBRInflight` adds one send quantum (two 1000-byte segments at these
    /// rates) instead of three: the window is 2 · 100 kB + 2 kB, and the draining phase (3/4)
    /// ends early at 100 + 2 = 102 kB, not at 106 kB.
    #[test]
    fn fewer_quanta_lower_every_bound() {
        let mut cc = Bbr::with_quanta(1000, 10, 1);
        drive(&mut cc, 0, 1000, 100, 200_000);
        drive(&mut cc, 1000, 1001, 100, 100_000);
        assert_eq!(cc.state(), State::ProbeBw(2));
        drive(&mut cc, 1001, 1100, 100, 100_000);
        let w = cc.window() as f64;
        assert!((w - 202_000.0).abs() < 300.0, "{w}");
        let mut ms = 1100;
        while cc.state() != State::ProbeBw(1) {
            drive(&mut cc, ms, ms + 1, 100, 130_000);
            ms += 1;
        }
        drive(&mut cc, ms, ms + 1, 100, 102_000);
        ms += 1;
        assert_eq!(cc.state(), State::ProbeBw(1), "prior in-flight 103 kB");
        drive(&mut cc, ms, ms + 1, 100, 100_500);
        assert_eq!(cc.state(), State::ProbeBw(2), "prior in-flight 101.5 kB");
    }

    /// `bbr-aggr`: in ProbeBW the window adds the filtered `extra_acked`. A steady clock at the
    /// estimated rate (1 MB/s) adds one ACK's data: 206 + 1 kB. After 20 ms of silence, twenty
    /// 1000-byte ACKs at one instant (the rate over the last RTT still 1 MB/s) add 20 kB: the
    /// first restarts the epoch (1 kB acknowledged against 21 kB expected), the other nineteen
    /// arrive with no time elapsed in it, so `extra_acked` = 20 kB, and cwnd follows by the
    /// data delivered to 206 + 20 = 226 kB. Plain BBR stays at 206 kB.
    #[test]
    fn ack_aggregation_adds_extra_acked_to_the_window() {
        let mut plain = Bbr::new(1000, 10);
        let mut aggr = Bbr::with_ack_aggregation(1000, 10);
        assert_eq!(aggr.name(), "bbr-aggr");
        for cc in [&mut plain, &mut aggr] {
            drive(cc, 0, 1000, 100, 200_000);
            // Twenty rounds of 100 ms: Startup's epochs have left the filter.
            drive(cc, 1000, 3000, 100, 100_000);
        }
        let (p, a) = (plain.window() as f64, aggr.window() as f64);
        assert!((p - 206_000.0).abs() < 300.0, "{p}");
        assert!((a - 207_000.0).abs() < 300.0, "{a}");
        for cc in [&mut plain, &mut aggr] {
            for _ in 0..20 {
                cc.on_delivered(&Delivered {
                    now: Time::from_millis(3019),
                    bytes: 1000,
                    sacked_bytes: 0,
                    in_flight: 100_000,
                    in_recovery: false,
                    rtt: None,
                });
            }
        }
        let (p, a) = (plain.window() as f64, aggr.window() as f64);
        assert!((p - 206_000.0).abs() < 300.0, "{p}");
        assert!((a - 226_000.0).abs() < 300.0, "{a}");
    }

    #[test]
    fn the_send_quantum_follows_the_pacing_rate() {
        // Draft §4.2.2: below 1.2 Mb/s one segment, below 24 Mb/s two, else 1 ms up to 64 KB.
        assert_eq!(send_quantum(1000, 100e3), 1000);
        assert_eq!(send_quantum(1000, 1e6), 2000);
        assert_eq!(send_quantum(1000, 10e6), 10_000);
        assert_eq!(send_quantum(1000, 1e9), 64 * 1024);
    }

    /// The gain cycle: each phase lasts one RTprop; 5/4 also waits for the in-flight before an
    /// acknowledgement to reach `BBRInflight(5/4)`; 3/4 ends as soon as it is down to
    /// `BBRInflight(1)`. BDP 100 kB; at 1.25 MB/s and at 0.75 MB/s the send quantum is two
    /// 1000-byte segments, so the bounds are 125 + 6 = 131 kB and 100 + 6 = 106 kB (each
    /// delivery here is 1000 bytes, so prior in-flight = in-flight after it + 1000).
    #[test]
    fn the_gain_cycle() {
        let mut cc = Bbr::new(1000, 10);
        drive(&mut cc, 0, 1000, 100, 200_000);
        drive(&mut cc, 1000, 1001, 100, 100_000);
        assert_eq!(cc.state(), State::ProbeBw(2));
        let mut ms = 1001;
        // Phases 2..7 at gain 1 advance after 100 ms each, then phase 0 (5/4).
        for phase in [3, 4, 5, 6, 7, 0] {
            drive(&mut cc, ms, ms + 101, 100, 100_000);
            ms += 101;
            assert_eq!(cc.state(), State::ProbeBw(phase), "at {ms} ms");
        }
        assert!((cc.pacing_gain() - 1.25).abs() < f64::EPSILON);
        // Phase 0 lasts past one RTprop while prior in-flight stays below 131 kB (5/4 BDP is
        // not enough)...
        drive(&mut cc, ms, ms + 150, 100, 110_000);
        drive(&mut cc, ms + 150, ms + 151, 100, 128_500);
        ms += 151;
        assert_eq!(cc.state(), State::ProbeBw(0));
        // ...and ends when it reaches it.
        drive(&mut cc, ms, ms + 1, 100, 131_000);
        ms += 1;
        assert_eq!(cc.state(), State::ProbeBw(1));
        assert!((cc.pacing_gain() - 0.75).abs() < f64::EPSILON);
        // Phase 1 (3/4) does not end above 106 kB before one RTprop...
        drive(&mut cc, ms, ms + 1, 100, 106_000);
        ms += 1;
        assert_eq!(cc.state(), State::ProbeBw(1));
        // ...and ends early once prior in-flight is at most 106 kB.
        drive(&mut cc, ms, ms + 1, 100, 104_000);
        assert_eq!(cc.state(), State::ProbeBw(2));
    }

    /// No lower RTT for 10 s: ProbeRTT at four segments for 200 ms and a round, then back to
    /// ProbeBW with the window restored.
    #[test]
    fn probe_rtt_after_ten_seconds() {
        let mut cc = Bbr::new(1000, 10);
        drive(&mut cc, 0, 1000, 100, 200_000);
        drive(&mut cc, 1000, 1001, 100, 100_000);
        // The RTT rises to 120 ms: the 100 ms minimum (taken at 1000 ms) expires after 11 s.
        drive(&mut cc, 1001, 11_000, 120, 100_000);
        assert!(matches!(cc.state(), State::ProbeBw(_)));
        let before = cc.window();
        drive(&mut cc, 11_000, 11_002, 120, 100_000);
        assert_eq!(cc.state(), State::ProbeRtt);
        assert_eq!(cc.window(), 4000);
        // In-flight drops to four segments: 200 ms and a round later ProbeRTT ends.
        drive(&mut cc, 11_002, 11_100, 100, 4000);
        assert_eq!(cc.state(), State::ProbeRtt);
        drive(&mut cc, 11_100, 11_300, 100, 4000);
        assert!(matches!(cc.state(), State::ProbeBw(_)), "{:?}", cc.state());
        assert!(cc.window() >= before);
    }

    /// A loss: cwnd = in-flight + 1 segment, packet conservation, the old window back when
    /// recovery ends; a timeout: one segment.
    #[test]
    fn loss_conserves_packets_and_restores_the_window() {
        let mut cc = Bbr::new(1000, 10);
        drive(&mut cc, 0, 1000, 100, 200_000);
        drive(&mut cc, 1000, 1100, 100, 100_000);
        let before = cc.window();
        cc.on_loss(&LossEvent {
            now: Time::from_millis(1100),
            cause: LossCause::DupAcks,
            in_flight: 50_000,
        });
        assert_eq!(cc.window(), 51_000);
        cc.on_recovery_end(Time::from_millis(1200));
        assert_eq!(cc.window(), before);
        cc.on_timeout(Time::from_millis(1300), 100_000);
        assert_eq!(cc.window(), 1000);
        // Wireless losses are not congestion.
        cc.on_loss(&LossEvent {
            now: Time::from_millis(1300),
            cause: LossCause::WirelessEln,
            in_flight: 0,
        });
        assert_eq!(cc.window(), 1000);
    }
}
