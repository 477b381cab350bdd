//! TCP NewReno window rules (RFC 5681 slow start and congestion avoidance; the loss response of
//! RFC 5681 §3.2 / RFC 6582, whose fast-recovery mechanics live in the engine's recovery code).

use super::reno_window::RenoWindow;
use super::{CongestionController, Delivered, LossCause, LossEvent};
use crate::Time;

/// NewReno: slow start below `ssthresh`, one segment per window above it, halve on loss,
/// one segment after a timeout.
#[derive(Debug, Clone)]
pub struct NewReno {
    w: RenoWindow,
}

impl NewReno {
    /// A controller with an initial window of `initial_window_segments` segments of `mss` bytes.
    pub fn new(mss: u64, initial_window_segments: u32) -> Self {
        NewReno {
            w: RenoWindow::new(mss, initial_window_segments),
        }
    }
}

impl CongestionController for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn window(&self) -> u64 {
        self.w.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.w.ssthresh
    }

    fn on_delivered(&mut self, ev: &Delivered) {
        if !ev.in_recovery && ev.bytes > 0 {
            self.w.grow(ev.bytes);
        }
    }

    fn ignores_empty_deliveries(&self) -> bool {
        // `on_delivered` only grows the window by acknowledged bytes.
        true
    }

    fn on_loss(&mut self, ev: &LossEvent) {
        match ev.cause {
            LossCause::DupAcks => {
                let t = self.w.halved(ev.in_flight);
                self.w.reset(t, Some(t));
            }
            // A wireless (ELN-marked) loss is not a congestion signal: keep the window.
            LossCause::WirelessEln => {}
        }
    }

    fn set_window(&mut self, cwnd: u64, ssthresh: Option<u64>) {
        self.w.reset(cwnd, ssthresh);
    }

    fn on_timeout(&mut self, _now: Time, in_flight: u64) {
        // RFC 5681 eq. 4 and §3.1: loss window of one segment after an RTO.
        let t = self.w.halved(in_flight);
        self.w.reset(self.w.mss, Some(t));
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

    /// What `ignores_empty_deliveries` promises: an empty delivery changes no state, in slow
    /// start or congestion avoidance, with or without an in-flight count.
    #[test]
    fn an_empty_delivery_changes_nothing() {
        let mut cc = NewReno::new(1000, 10);
        assert!(cc.ignores_empty_deliveries());
        for phase in 0..2 {
            if phase == 1 {
                cc.on_loss(&LossEvent {
                    now: Time::ZERO,
                    cause: LossCause::DupAcks,
                    in_flight: 20_000,
                });
                cc.on_delivered(&delivered(3000));
            }
            let before = format!("{cc:?}");
            for in_flight in [0, 5000] {
                cc.on_delivered(&Delivered {
                    now: Time::from_millis(7),
                    in_flight,
                    ..delivered(0)
                });
            }
            assert_eq!(format!("{cc:?}"), before);
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
