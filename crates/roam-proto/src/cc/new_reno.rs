//! TCP NewReno window rules (RFC 5681 slow start and congestion avoidance; the loss response of
//! RFC 5681 §3.2 / RFC 6582, whose fast-recovery mechanics live in the engine's recovery code).

use super::{CongestionController, Delivered, LossCause, LossEvent};
use crate::Time;

/// NewReno: slow start below `ssthresh`, one segment per window above it, halve on loss,
/// one segment after a timeout.
#[derive(Debug, Clone)]
pub struct NewReno {
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    /// Bytes acknowledged in congestion avoidance since the last one-segment increase
    /// (appropriate byte counting, RFC 3465).
    ca_acked: u64,
}

impl NewReno {
    /// A controller with an initial window of `initial_window_segments` segments of `mss` bytes.
    pub fn new(mss: u64, initial_window_segments: u32) -> Self {
        let mss = mss.max(1);
        NewReno {
            mss,
            cwnd: mss.saturating_mul(u64::from(initial_window_segments.max(1))),
            ssthresh: u64::MAX,
            ca_acked: 0,
        }
    }

    /// RFC 5681 eq. 4: ssthresh = max(FlightSize / 2, 2·SMSS).
    fn halved(&self, in_flight: u64) -> u64 {
        (in_flight / 2).max(2 * self.mss)
    }
}

impl CongestionController for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn on_delivered(&mut self, ev: &Delivered) {
        if ev.in_recovery || ev.bytes == 0 {
            return;
        }
        if self.cwnd < self.ssthresh {
            // RFC 5681 §3.1: cwnd += min(N, SMSS) per ACK in slow start.
            self.cwnd = self.cwnd.saturating_add(ev.bytes.min(self.mss));
        } else {
            // RFC 5681 §3.1 / RFC 3465: one SMSS per cwnd of acknowledged bytes.
            self.ca_acked = self.ca_acked.saturating_add(ev.bytes);
            if self.ca_acked >= self.cwnd {
                self.ca_acked -= self.cwnd;
                self.cwnd = self.cwnd.saturating_add(self.mss);
            }
        }
    }

    fn on_loss(&mut self, ev: &LossEvent) {
        match ev.cause {
            LossCause::DupAcks => {
                self.ssthresh = self.halved(ev.in_flight);
                self.cwnd = self.ssthresh;
                self.ca_acked = 0;
            }
            // A wireless (ELN-marked) loss is not a congestion signal: keep the window.
            LossCause::WirelessEln => {}
        }
    }

    fn set_window(&mut self, cwnd: u64, ssthresh: Option<u64>) {
        self.cwnd = cwnd.max(self.mss);
        if let Some(t) = ssthresh {
            self.ssthresh = t.max(2 * self.mss);
        }
        self.ca_acked = 0;
    }

    fn on_timeout(&mut self, _now: Time, in_flight: u64) {
        // RFC 5681 eq. 4 and §3.1: loss window of one segment after an RTO.
        self.ssthresh = self.halved(in_flight);
        self.cwnd = self.mss;
        self.ca_acked = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delivered(bytes: u64) -> Delivered {
        Delivered {
            now: Time::ZERO,
            bytes,
            sacked_bytes: 0,
            in_flight: 0,
            in_recovery: false,
            rtt: None,
        }
    }

    #[test]
    fn slow_start_adds_one_segment_per_ack() {
        let mut cc = NewReno::new(1000, 1);
        cc.on_delivered(&delivered(1000));
        cc.on_delivered(&delivered(1000));
        assert_eq!(cc.window(), 3000);
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_window() {
        let mut cc = NewReno::new(1000, 10);
        cc.on_loss(&LossEvent {
            now: Time::ZERO,
            cause: LossCause::DupAcks,
            in_flight: 20_000,
        });
        assert_eq!(cc.window(), 10_000);
        for _ in 0..10 {
            cc.on_delivered(&delivered(1000));
        }
        assert_eq!(cc.window(), 11_000);
    }

    #[test]
    fn timeout_collapses_to_one_segment_and_halves_ssthresh() {
        let mut cc = NewReno::new(1000, 10);
        cc.on_timeout(Time::ZERO, 8000);
        assert_eq!(cc.window(), 1000);
        assert_eq!(cc.ssthresh(), 4000);
    }

    #[test]
    fn wireless_loss_leaves_window_unchanged() {
        let mut cc = NewReno::new(1000, 10);
        cc.on_loss(&LossEvent {
            now: Time::ZERO,
            cause: LossCause::WirelessEln,
            in_flight: 10_000,
        });
        assert_eq!(cc.window(), 10_000);
    }

    #[test]
    fn window_does_not_overflow_after_a_long_lossless_period() {
        let mut cc = NewReno::new(1000, 1);
        for _ in 0..1000 {
            cc.on_delivered(&delivered(u64::MAX / 4));
        }
        assert!(cc.window() > 0);
    }
}
