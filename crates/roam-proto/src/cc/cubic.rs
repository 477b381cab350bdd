//! CUBIC (RFC 9438) with HyStart++ (RFC 9406) in the first slow start, or, selectable as
//! `cubic-hystart`, with the original HyStart Linux's CUBIC runs by default
//! (`hystart_classic.rs`).
//!
//! Congestion avoidance follows the cubic function of the time since the last congestion
//! event, `W_cubic(t) = C·(t − K)³ + W_max` (RFC 9438 §4.2, eq. 1), with `C = 0.4` and
//! `K = ∛((W_max − cwnd_epoch)/C)` (eq. 2). Each acknowledgement moves cwnd towards
//! `target = W_cubic(t + RTT)`, clamped to `[cwnd, 1.5·cwnd]`, by `(target − cwnd)/cwnd` per
//! acknowledged segment (§4.4, §4.5). The Reno-friendly estimate `W_est` (§4.3, eq. 4) grows by
//! `α_cubic` segments per window, `α_cubic = 3(1 − β)/(1 + β)` until `W_est` reaches the window
//! before the last reduction, 1 after; when `W_cubic(t) < W_est` cwnd follows `W_est`.
//! On a congestion event (§4.6) `ssthresh = max(β·cwnd, 2·SMSS)` with `β = 0.7` (applied to
//! cwnd, as Linux and ns-3 do; §4.6 notes the choice), with fast convergence (§4.7); after a
//! timeout cwnd is one segment and the next epoch starts with `K = 0` and `W_max` = the window
//! at its start (§4.8). Windows are kept in bytes; the equations' segment counts are bytes
//! divided by SMSS.

use std::time::Duration;

use super::hystart::{HyStart, Phase, CSS_GROWTH_DIVISOR};
use super::hystart_classic::ClassicHyStart;
use super::{CongestionController, Delivered, LossCause, LossEvent};
use crate::Time;

/// RFC 9438 §5.1: `C = 0.4` (segments per second cubed).
pub const C: f64 = 0.4;
/// RFC 9438 §4.6: multiplicative decrease factor.
pub const BETA: f64 = 0.7;
/// RFC 9438 §4.3: additive increase of the Reno-friendly estimate while below `cwnd_prior`.
pub const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);
/// RFC 9406 §4.2 `L`: slow start adds at most this many segments per acknowledgement
/// (unpaced sender).
const SLOW_START_LIMIT: u64 = 8;
/// Largest window kept (bytes): far above any real path, low enough that `f64` stays exact to
/// the byte and nothing downstream overflows.
pub const MAX_WINDOW: f64 = (1u64 << 50) as f64;

/// How slow start is left before a loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SlowStartExit {
    /// HyStart++ (RFC 9406): an RTT rise enters Conservative Slow Start, five more rounds end
    /// it. Only in the first slow start (§4.2).
    #[default]
    HyStartPlusPlus,
    /// HyStart (Ha & Rhee 2011) with Linux's defaults: an ACK train longer than half the
    /// minimum RTT, or a round's RTT above the minimum by an eighth (4–16 ms), ends slow start
    /// at once. As Linux, it runs again in the slow start after a timeout.
    HyStart,
}

#[derive(Debug, Clone)]
enum Exit {
    PlusPlus(HyStart),
    Classic(ClassicHyStart),
}

impl Exit {
    fn new(kind: SlowStartExit) -> Exit {
        match kind {
            SlowStartExit::HyStartPlusPlus => Exit::PlusPlus(HyStart::new()),
            SlowStartExit::HyStart => Exit::Classic(ClassicHyStart::new()),
        }
    }
}

/// One congestion-avoidance epoch (RFC 9438 §4.2: it starts at the first acknowledgement in
/// congestion avoidance after a reduction).
#[derive(Debug, Clone, Copy)]
struct Epoch {
    start: Time,
    /// Seconds.
    k: f64,
    /// `W_max` of eq. 1, bytes.
    origin: f64,
}

/// The CUBIC controller.
#[derive(Debug, Clone)]
pub struct Cubic {
    mss: f64,
    /// Bytes.
    cwnd: f64,
    ssthresh: u64,
    /// Window before the last reduction after fast convergence (RFC 9438 §4.7), bytes; 0
    /// before the first congestion event.
    w_max: f64,
    /// Window just before the last reduction (`cwnd_prior`, §4.3), bytes.
    cwnd_prior: f64,
    /// Reno-friendly estimate (§4.3), bytes.
    w_est: f64,
    epoch: Option<Epoch>,
    /// Smoothed RTT (RFC 6298 gains), the `RTT` of `W_cubic(t + RTT)`.
    srtt: Option<Duration>,
    hystart: Exit,
}

impl Cubic {
    /// A controller with an initial window of `initial_window_segments` segments of `mss` bytes.
    pub fn new(mss: u64, initial_window_segments: u32) -> Self {
        Self::with_exit(mss, initial_window_segments, SlowStartExit::default())
    }

    /// As [`Cubic::new`], leaving slow start by `exit`.
    pub fn with_exit(mss: u64, initial_window_segments: u32, exit: SlowStartExit) -> Self {
        let mss = mss.max(1) as f64;
        Cubic {
            mss,
            cwnd: (mss * f64::from(initial_window_segments.max(1))).min(MAX_WINDOW),
            ssthresh: u64::MAX,
            w_max: 0.0,
            cwnd_prior: 0.0,
            w_est: 0.0,
            epoch: None,
            srtt: None,
            hystart: Exit::new(exit),
        }
    }

    /// `W_cubic(t)` (RFC 9438 eq. 1) of the current epoch in bytes, `t` in seconds since its
    /// start; `None` outside congestion avoidance.
    pub fn w_cubic(&self, t: f64) -> Option<f64> {
        let e = self.epoch?;
        Some(self.cubic_at(&e, t))
    }

    /// `K` of the current epoch in seconds (eq. 2); `None` outside congestion avoidance.
    pub fn k(&self) -> Option<f64> {
        self.epoch.map(|e| e.k)
    }

    /// The Reno-friendly estimate `W_est` in bytes (eq. 4).
    pub fn w_est(&self) -> f64 {
        self.w_est
    }

    fn cubic_at(&self, e: &Epoch, t: f64) -> f64 {
        let w = C * (t - e.k).powi(3) * self.mss + e.origin;
        w.clamp(0.0, MAX_WINDOW)
    }

    fn set_cwnd(&mut self, cwnd: f64) {
        self.cwnd = cwnd.clamp(self.mss, MAX_WINDOW);
    }

    /// Starts an epoch at the first acknowledgement in congestion avoidance (RFC 9438 §4.2,
    /// eq. 2; §4.8: after a timeout `W_max` is 0 here, so `K = 0` and the origin is cwnd).
    fn start_epoch(&mut self, now: Time) -> Epoch {
        let (k, origin) = if self.w_max > self.cwnd {
            (((self.w_max - self.cwnd) / self.mss / C).cbrt(), self.w_max)
        } else {
            self.w_max = self.cwnd;
            (0.0, self.cwnd)
        };
        // §4.3: W_est starts at cwnd_epoch.
        self.w_est = self.cwnd;
        let e = Epoch {
            start: now,
            k,
            origin,
        };
        self.epoch = Some(e);
        e
    }

    fn slow_start(&mut self, ev: &Delivered) {
        let mut increase = ev.bytes.min(SLOW_START_LIMIT * self.mss as u64) as f64;
        let hystart = match &mut self.hystart {
            Exit::PlusPlus(h) => h,
            Exit::Classic(h) => {
                let segments = (self.cwnd / self.mss) as u64;
                if h.on_ack(ev.now, ev.bytes, ev.in_flight, ev.rtt, segments) {
                    // HyStart found the pipe full: `ssthresh = cwnd`, congestion avoidance
                    // from the next acknowledgement (Linux ends slow start before growing on
                    // this one).
                    self.ssthresh = self.cwnd as u64;
                } else {
                    self.set_cwnd(self.cwnd + increase);
                }
                return;
            }
        };
        let running = hystart.phase() != Phase::Done;
        let phase = hystart.on_ack(ev.bytes, ev.in_flight, ev.rtt);
        if let Phase::Css { .. } = phase {
            // RFC 9406 §4.2: CSS grows by N / CSS_GROWTH_DIVISOR.
            increase /= CSS_GROWTH_DIVISOR as f64;
        }
        self.set_cwnd(self.cwnd + increase);
        if running && phase == Phase::Done {
            // RFC 9406 §4.2: after CSS_ROUNDS rounds, "enter congestion avoidance by setting
            // the ssthresh to the current cwnd".
            self.ssthresh = self.cwnd as u64;
        }
    }

    fn congestion_avoidance(&mut self, ev: &Delivered) {
        let e = match self.epoch {
            Some(e) => e,
            None => self.start_epoch(ev.now),
        };
        let t = ev.now.saturating_since(e.start).as_secs_f64();
        let acked = ev.bytes as f64;
        // §4.3 eq. 4: W_est += α·(segments acked)/cwnd, α = 1 once W_est ≥ cwnd_prior.
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            ALPHA
        };
        self.w_est = (self.w_est + alpha * acked * self.mss / self.cwnd).min(MAX_WINDOW);
        if self.cubic_at(&e, t) < self.w_est {
            // §4.3: the Reno-friendly region.
            self.set_cwnd(self.cwnd.max(self.w_est));
            return;
        }
        // §4.4/§4.5: target = W_cubic(t + RTT), clamped to [cwnd, 1.5·cwnd].
        let rtt = self.srtt.unwrap_or(Duration::ZERO).as_secs_f64();
        let target = self.cubic_at(&e, t + rtt).clamp(self.cwnd, 1.5 * self.cwnd);
        self.set_cwnd(self.cwnd + (target - self.cwnd) / self.cwnd * acked);
    }

    /// §4.6 and §4.7: the new `W_max` (fast convergence), `cwnd_prior` and `ssthresh`.
    fn reduce(&mut self) -> f64 {
        self.w_max = if self.cwnd < self.w_max {
            self.cwnd * (1.0 + BETA) / 2.0
        } else {
            self.cwnd
        };
        self.cwnd_prior = self.cwnd;
        let ssthresh = (self.cwnd * BETA).max(2.0 * self.mss);
        self.ssthresh = ssthresh as u64;
        self.epoch = None;
        // RFC 9406 §4.2: HyStart++ runs only in the first slow start; HyStart (Linux) waits
        // for a timeout to run again.
        match &mut self.hystart {
            Exit::PlusPlus(h) => h.finish(),
            Exit::Classic(h) => h.finish(),
        }
        ssthresh
    }
}

impl CongestionController for Cubic {
    fn name(&self) -> &'static str {
        match self.hystart {
            Exit::PlusPlus(_) => "cubic",
            Exit::Classic(_) => "cubic-hystart",
        }
    }

    fn window(&self) -> u64 {
        self.cwnd as u64
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn on_delivered(&mut self, ev: &Delivered) {
        if ev.in_recovery || ev.bytes == 0 {
            return;
        }
        if (self.cwnd as u64) < self.ssthresh {
            self.slow_start(ev);
        } else {
            self.congestion_avoidance(ev);
        }
    }

    fn ignores_empty_deliveries(&self) -> bool {
        // `on_delivered` returns at once without acknowledged bytes.
        true
    }

    fn on_loss(&mut self, ev: &LossEvent) {
        match ev.cause {
            LossCause::DupAcks => {
                let ssthresh = self.reduce();
                self.set_cwnd(ssthresh);
            }
            // A wireless (ELN-marked) loss is not a congestion signal.
            LossCause::WirelessEln => {}
        }
    }

    fn on_timeout(&mut self, _now: Time, _in_flight: u64) {
        // §4.8: ssthresh as after a loss, cwnd one segment (RFC 5681), and the next epoch
        // starts from the window at its start with K = 0.
        self.reduce();
        self.w_max = 0.0;
        self.set_cwnd(self.mss);
        // Linux resets CUBIC and HyStart on entering Loss (`cubictcp_state`): HyStart runs
        // again in the slow start that follows, with a fresh minimum RTT.
        if let Exit::Classic(h) = &mut self.hystart {
            *h = ClassicHyStart::new();
        }
    }

    fn on_rtt_sample(&mut self, _now: Time, rtt: Duration, _min_rtt: Duration) {
        // RFC 6298 §2.3 gain 1/8.
        self.srtt = Some(match self.srtt {
            None => rtt,
            Some(s) => (s * 7 + rtt) / 8,
        });
    }

    fn set_window(&mut self, cwnd: u64, ssthresh: Option<u64>) {
        self.set_cwnd(cwnd as f64);
        if let Some(t) = ssthresh {
            self.ssthresh = t.max(2 * self.mss as u64);
        }
        self.epoch = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(now_ms: u64, bytes: u64, rtt_ms: Option<u64>) -> Delivered {
        Delivered {
            now: Time::from_millis(now_ms),
            bytes,
            sacked_bytes: 0,
            in_flight: 10_000,
            in_recovery: false,
            rtt: rtt_ms.map(Duration::from_millis),
        }
    }

    fn loss(cc: &mut Cubic) {
        cc.on_loss(&LossEvent {
            now: Time::ZERO,
            cause: LossCause::DupAcks,
            in_flight: 0,
        });
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6 * b.abs().max(1.0)
    }

    /// RFC 9438 eq. 1–2 and §4.4–4.5, computed by hand for W_max = 100 segments of 1000 bytes,
    /// β = 0.7, RTT 100 ms: K = ∛(30/0.4) = ∛75 = 4.217163 s.
    #[test]
    fn the_cubic_function_and_its_target_by_hand() {
        let mut cc = Cubic::new(1000, 100);
        cc.on_rtt_sample(Time::ZERO, Duration::from_millis(100), Duration::ZERO);
        loss(&mut cc);
        assert_eq!((cc.window(), cc.ssthresh()), (70_000, 70_000));
        // The first ACK in congestion avoidance (t = 1 s) starts the epoch: W_cubic(0) = 70
        // segments is below W_est = 70 + α/70 = 70.0075630 (α = 0.9/1.7), so the
        // Reno-friendly region sets cwnd = W_est.
        cc.on_delivered(&ack(1000, 1000, None));
        assert!(close(cc.k().unwrap(), 75f64.cbrt()));
        assert!(close(cc.w_cubic(0.0).unwrap(), 70_000.0));
        assert!(close(cc.w_cubic(75f64.cbrt()).unwrap(), 100_000.0));
        assert!(close(cc.w_est(), 70_007.563_025_2), "{}", cc.w_est());
        assert!(close(cc.cwnd, 70_007.563_025_2));
        // t = 2 s: W_cubic(2) = 100 − 0.4·2.217163³ = 95.64034 segments > W_est, so cwnd moves to
        // target = W_cubic(2.1) = 100 − 0.4·2.117163³ = 96.20403 segments by
        // (96204.03 − 70007.56)/70007.56 · 1000 = 374.19 bytes.
        cc.on_delivered(&ack(3000, 1000, None));
        let w2 = cc.w_cubic(2.0).unwrap();
        assert!((w2 - 95_640.34).abs() < 0.01, "{w2}");
        let target = cc.w_cubic(2.1).unwrap();
        assert!((target - 96_204.03).abs() < 0.01, "{target}");
        let expected = 70_007.563_025_2 + (target - 70_007.563_025_2) / 70_007.563_025_2 * 1000.0;
        assert!(close(cc.cwnd, expected), "{} vs {expected}", cc.cwnd);
        assert!((cc.cwnd - 70_381.758).abs() < 0.01, "{}", cc.cwnd);
    }

    /// The target is clamped to 1.5·cwnd (RFC 9438 §4.5: at most 50 % per RTT).
    #[test]
    fn the_target_is_clamped_to_one_and_a_half_windows() {
        let mut cc = Cubic::new(1000, 100);
        cc.on_rtt_sample(Time::ZERO, Duration::from_secs(10), Duration::ZERO);
        loss(&mut cc);
        cc.on_delivered(&ack(0, 1000, None));
        // t = 100 s, t + RTT = 110 s: W_cubic is huge, the target is 1.5·cwnd, so one ACK of
        // 1000 bytes adds (1.5·cwnd − cwnd)/cwnd·1000 = 500 bytes.
        let before = cc.cwnd;
        cc.on_delivered(&ack(100_000, 1000, None));
        assert!(close(cc.cwnd, before + 500.0), "{} {before}", cc.cwnd);
    }

    /// RFC 9438 §4.3: on a short path the Reno-friendly estimate leads; it grows by α = 0.9/1.7
    /// segments per window until it reaches cwnd_prior, then by one segment per window.
    #[test]
    fn the_reno_friendly_region_by_hand() {
        let mut cc = Cubic::new(1000, 20);
        cc.on_rtt_sample(Time::ZERO, Duration::from_millis(1), Duration::ZERO);
        loss(&mut cc);
        assert_eq!(cc.window(), 14_000);
        // K = ∛(6/0.4) = 2.466 s: for the first few hundred ms W_cubic stays below W_est.
        let mut w_est = 14_000.0f64;
        let mut cwnd = 14_000.0f64;
        for i in 0..200u64 {
            cc.on_delivered(&ack(i, 1000, None));
            let alpha = if w_est >= 20_000.0 { 1.0 } else { ALPHA };
            w_est += alpha * 1000.0 * 1000.0 / cwnd;
            cwnd = cwnd.max(w_est);
            assert!(close(cc.cwnd, cwnd), "ack {i}: {} vs {cwnd}", cc.cwnd);
        }
        assert!(cc.w_cubic(0.199).unwrap() < cc.w_est());
        // ~(20 − 14)/α ≈ 11.3 windows of ~17 segments to reach cwnd_prior, then α = 1.
        assert!(cc.w_est() > 20_000.0);
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_the_window_shrank() {
        let mut cc = Cubic::new(1000, 100);
        loss(&mut cc);
        assert!(close(cc.w_max, 100_000.0));
        // A second loss below W_max: W_max = 70 000·(1 + 0.7)/2 = 59 500.
        loss(&mut cc);
        assert!(close(cc.w_max, 59_500.0));
        assert_eq!(cc.window(), 49_000);
    }

    #[test]
    fn timeout_keeps_beta_for_ssthresh_and_restarts_with_k_zero() {
        let mut cc = Cubic::new(1000, 100);
        cc.on_timeout(Time::ZERO, 100_000);
        assert_eq!((cc.window(), cc.ssthresh()), (1000, 70_000));
        // Slow start up to ssthresh, then the epoch starts with K = 0 at the window then.
        for i in 0..69 {
            cc.on_delivered(&ack(i, 1000, None));
        }
        assert_eq!(cc.window(), 70_000);
        cc.on_delivered(&ack(100, 1000, None));
        assert_eq!(cc.k(), Some(0.0));
    }

    #[test]
    fn hystart_ends_the_first_slow_start_on_an_rtt_rise() {
        let mut cc = Cubic::new(1000, 10);
        let mut now = 0;
        // Rounds at a steady 40 ms, then the RTT rises by more than max(4 ms, 40/8 = 5 ms).
        for rtt in [40, 40, 40, 50, 50, 50, 50, 50, 50, 50, 50] {
            for _ in 0..(cc.window() / 1000) {
                now += 1;
                cc.on_delivered(&Delivered {
                    in_flight: cc.window(),
                    ..ack(now, 1000, Some(rtt))
                });
            }
        }
        assert!(cc.ssthresh() < u64::MAX, "HyStart++ set ssthresh");
        assert!(cc.ssthresh() <= cc.window());
    }

    /// `cubic-hystart`: IW 16 (HyStart's low window), ACKs 5 ms apart (no ACK train), 40 ms
    /// for the first round (16 ACKs: it ends at the 17th, with 32 000 bytes then in flight),
    /// 50 ms after. The 50 ms round's ninth sample (ACK 25) is above 40 + max(4, 5) ms: slow
    /// start ends there with ssthresh = cwnd = 16 + 24 segments, and without CSS.
    #[test]
    fn classic_hystart_ends_slow_start_at_once() {
        let mut cc = Cubic::with_exit(1000, 16, SlowStartExit::HyStart);
        assert_eq!(cc.name(), "cubic-hystart");
        for k in 1..=25u64 {
            let rtt = if k <= 16 { 40 } else { 50 };
            cc.on_delivered(&Delivered {
                in_flight: cc.window(),
                ..ack(5 * k, 1000, Some(rtt))
            });
            if k == 24 {
                assert_eq!(cc.ssthresh(), u64::MAX);
                assert_eq!(cc.window(), 40_000);
            }
        }
        assert_eq!((cc.window(), cc.ssthresh()), (40_000, 40_000));
        // Congestion avoidance now: the next ACK adds far less than a segment.
        cc.on_delivered(&Delivered {
            in_flight: 40_000,
            ..ack(130, 1000, Some(50))
        });
        assert!(cc.window() < 40_100, "{}", cc.window());
    }

    #[test]
    fn wireless_losses_and_empty_deliveries_change_nothing() {
        let mut cc = Cubic::new(1000, 10);
        let before = format!("{cc:?}");
        cc.on_loss(&LossEvent {
            now: Time::ZERO,
            cause: LossCause::WirelessEln,
            in_flight: 10_000,
        });
        cc.on_delivered(&ack(5, 0, None));
        assert_eq!(format!("{cc:?}"), before);
    }
}
