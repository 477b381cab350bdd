//! TCP Westwood+ (Mascolo, Grieco et al.): the sender estimates the bandwidth available to the
//! connection from the rate of returning acknowledgements and, after a loss, sets
//! `ssthresh = BWE × RTTmin` instead of halving blindly — a wireless loss then costs little,
//! because the estimate stays high.
//!
//! Estimation (Westwood+): once per RTT (at least every [`MIN_SAMPLE_INTERVAL`]) the bytes
//! acknowledged in that interval (cumulatively or selectively — dup-ACKs count too) divided by
//! its length give a raw sample `b_k`; two cascaded first-order low-pass filters with gain 7/8
//! smooth it: `f_k = 7/8·f_{k-1} + 1/8·b_k`, `BWE_k = 7/8·BWE_{k-1} + 1/8·f_k`. The first
//! sample initialises both filters. Window growth between losses is NewReno's (RFC 5681).

use std::time::Duration;

use super::reno_window::RenoWindow;
use super::{CongestionController, Delivered, LossCause, LossEvent};
use crate::Time;

/// The shortest interval over which one bandwidth sample is taken (Westwood+ samples once per
/// RTT but never faster than this, to stay robust to ACK compression on short paths).
pub const MIN_SAMPLE_INTERVAL: Duration = Duration::from_millis(50);

/// Gain of each low-pass filter stage: new = (1 − GAIN)·old + GAIN·input.
const GAIN: f64 = 1.0 / 8.0;

/// Westwood+ congestion control.
#[derive(Debug, Clone)]
pub struct Westwood {
    w: RenoWindow,
    /// First filter stage, bytes per second.
    bw_raw: f64,
    /// Second filter stage: the bandwidth estimate BWE, bytes per second.
    bw_est: f64,
    /// Bytes acknowledged since `sample_start`.
    sample_bytes: u64,
    sample_start: Option<Time>,
    /// Latest RTT sample (the per-RTT sampling interval).
    rtt: Option<Duration>,
    /// Minimum RTT seen.
    min_rtt: Option<Duration>,
}

impl Westwood {
    /// A controller with an initial window of `initial_window_segments` segments of `mss` bytes.
    pub fn new(mss: u64, initial_window_segments: u32) -> Self {
        Westwood {
            w: RenoWindow::new(mss, initial_window_segments),
            bw_raw: 0.0,
            bw_est: 0.0,
            sample_bytes: 0,
            sample_start: None,
            rtt: None,
            min_rtt: None,
        }
    }

    /// The bandwidth estimate BWE in bytes per second (0 before the first sample).
    pub fn bandwidth_estimate(&self) -> f64 {
        self.bw_est
    }

    /// `BWE × RTTmin` in bytes, at least two segments; `None` without an estimate yet.
    fn bdp_threshold(&self) -> Option<u64> {
        let min_rtt = self.min_rtt?;
        if self.bw_est <= 0.0 {
            return None;
        }
        let bdp = self.bw_est * min_rtt.as_secs_f64();
        let bdp = if bdp.is_finite() {
            bdp as u64
        } else {
            u64::MAX
        };
        Some(bdp.max(2 * self.w.mss))
    }

    fn sample(&mut self, now: Time, bytes: u64) {
        let start = *self.sample_start.get_or_insert(now);
        self.sample_bytes = self.sample_bytes.saturating_add(bytes);
        let interval = self
            .rtt
            .unwrap_or(MIN_SAMPLE_INTERVAL)
            .max(MIN_SAMPLE_INTERVAL);
        let elapsed = now.saturating_since(start);
        if elapsed < interval {
            return;
        }
        let b = self.sample_bytes as f64 / elapsed.as_secs_f64();
        if self.bw_est == 0.0 && self.bw_raw == 0.0 {
            self.bw_raw = b;
            self.bw_est = b;
        } else {
            self.bw_raw = (1.0 - GAIN) * self.bw_raw + GAIN * b;
            self.bw_est = (1.0 - GAIN) * self.bw_est + GAIN * self.bw_raw;
        }
        self.sample_bytes = 0;
        self.sample_start = Some(now);
    }
}

impl CongestionController for Westwood {
    fn name(&self) -> &'static str {
        "westwood"
    }

    fn window(&self) -> u64 {
        self.w.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.w.ssthresh
    }

    fn on_delivered(&mut self, ev: &Delivered) {
        // Every acknowledged byte counts towards the rate, duplicates (SACKed data) included.
        self.sample(ev.now, ev.bytes.saturating_add(ev.sacked_bytes));
        if !ev.in_recovery && ev.bytes > 0 {
            self.w.grow(ev.bytes);
        }
    }

    fn on_loss(&mut self, ev: &LossEvent) {
        match ev.cause {
            LossCause::DupAcks => {
                // Westwood+: ssthresh = BWE × RTTmin; cwnd = min(cwnd, ssthresh).
                // Without an estimate yet, fall back to RFC 5681 eq. 4.
                let t = self
                    .bdp_threshold()
                    .unwrap_or_else(|| self.w.halved(ev.in_flight));
                self.w.reset(self.w.cwnd.min(t), Some(t));
            }
            LossCause::WirelessEln => {}
        }
    }

    fn set_window(&mut self, cwnd: u64, ssthresh: Option<u64>) {
        self.w.reset(cwnd, ssthresh);
    }

    fn on_timeout(&mut self, _now: Time, in_flight: u64) {
        // Westwood+: ssthresh = BWE × RTTmin, cwnd = one segment.
        let t = self
            .bdp_threshold()
            .unwrap_or_else(|| self.w.halved(in_flight));
        self.w.reset(self.w.mss, Some(t));
    }

    fn on_rtt_sample(&mut self, _now: Time, rtt: Duration, min_rtt: Duration) {
        self.rtt = Some(rtt);
        let min = if min_rtt.is_zero() { rtt } else { min_rtt };
        self.min_rtt = Some(self.min_rtt.map_or(min, |m| m.min(min)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delivered(now_ms: u64, bytes: u64) -> Delivered {
        Delivered {
            now: Time::from_millis(now_ms),
            bytes,
            sacked_bytes: 0,
            in_flight: 0,
            in_recovery: false,
            rtt: None,
        }
    }

    fn loss(in_flight: u64) -> LossEvent {
        LossEvent {
            now: Time::ZERO,
            cause: LossCause::DupAcks,
            in_flight,
        }
    }

    /// Delivers `rate_bps` bytes/s for `secs` seconds, one 1000-byte ACK at a time.
    fn feed_rate(cc: &mut Westwood, start_ms: u64, bytes_per_sec: u64, secs: u64) -> u64 {
        let acks_per_sec = bytes_per_sec / 1000;
        let gap_us = 1_000_000 / acks_per_sec;
        let mut t_us = start_ms * 1000;
        for _ in 0..acks_per_sec * secs {
            t_us += gap_us;
            cc.on_delivered(&Delivered {
                now: Time::from_micros(t_us),
                ..delivered(0, 1000)
            });
        }
        t_us / 1000
    }

    /// A controller (1000-byte segments, an initial window of one) that has measured an RTT
    /// of `rtt` and then seen `bytes_per_sec` delivered for `secs` seconds from time 0.
    fn measured(rtt: Duration, bytes_per_sec: u64, secs: u64) -> Westwood {
        let mut cc = Westwood::new(1000, 1);
        cc.on_rtt_sample(Time::ZERO, rtt, rtt);
        feed_rate(&mut cc, 0, bytes_per_sec, secs);
        cc
    }

    #[test]
    fn estimate_converges_to_the_ack_rate() {
        let cc = measured(Duration::from_millis(100), 500_000, 20);
        let bwe = cc.bandwidth_estimate();
        assert!((bwe - 500_000.0).abs() < 25_000.0, "bwe {bwe}");
    }

    #[test]
    fn loss_sets_ssthresh_to_estimate_times_min_rtt() {
        let mut cc = measured(Duration::from_millis(100), 500_000, 20);
        let bwe = cc.bandwidth_estimate();
        cc.on_loss(&loss(1_000_000));
        let expected = (bwe * 0.1) as u64;
        assert!(
            cc.ssthresh().abs_diff(expected) <= 1,
            "{} vs {expected}",
            cc.ssthresh()
        );
        assert!(cc.window() <= cc.ssthresh());
    }

    #[test]
    fn timeout_collapses_to_one_segment_with_bdp_ssthresh() {
        let mut cc = measured(Duration::from_millis(200), 250_000, 20);
        cc.on_timeout(Time::ZERO, 10_000);
        assert_eq!(cc.window(), 1000);
        assert!(cc.ssthresh() > 40_000, "ssthresh {}", cc.ssthresh());
    }

    #[test]
    fn loss_without_estimate_falls_back_to_halving() {
        let mut cc = Westwood::new(1000, 10);
        cc.on_loss(&loss(20_000));
        assert_eq!(cc.ssthresh(), 10_000);
        assert_eq!(cc.window(), 10_000);
    }

    #[test]
    fn wireless_loss_leaves_window_unchanged() {
        let mut cc = Westwood::new(1000, 10);
        cc.on_loss(&LossEvent {
            cause: LossCause::WirelessEln,
            ..loss(10_000)
        });
        assert_eq!(cc.window(), 10_000);
        assert_eq!(cc.ssthresh(), u64::MAX);
    }

    #[test]
    fn ssthresh_never_below_two_segments() {
        let mut cc = measured(Duration::from_micros(10), 10_000, 2);
        cc.on_loss(&loss(50_000));
        assert_eq!(cc.ssthresh(), 2000);
    }
}
