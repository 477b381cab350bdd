//! TCP NewReno window rules (RFC 5681 slow start and congestion avoidance; the loss response of
//! RFC 5681 §3.2 / RFC 6582, whose fast-recovery mechanics live in the engine's recovery code).

use super::reno_window::RenoWindow;
use super::{CongestionController, Coupling, Delivered, LossCause, LossEvent};
use crate::Time;

/// NewReno: slow start below `ssthresh`, one segment per window above it, halve on loss,
/// one segment after a timeout.
#[derive(Debug, Clone)]
pub struct NewReno {
    w: RenoWindow,
    /// RFC 6356's coupled increase, when the pipe belongs to a coupled multipath connection.
    coupling: Option<Coupling>,
}

impl NewReno {
    /// A controller with an initial window of `initial_window_segments` segments of `mss` bytes.
    pub fn new(mss: u64, initial_window_segments: u32) -> Self {
        NewReno {
            w: RenoWindow::new(mss, initial_window_segments),
            coupling: None,
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
            match self.coupling {
                None => self.w.grow(ev.bytes),
                Some(c) => self.w.grow_per(ev.bytes, c.bytes_per_segment(self.w.cwnd)),
            }
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

    fn set_coupling(&mut self, coupling: Option<Coupling>) {
        self.coupling = coupling;
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

    /// RFC 6356 §3 by hand: two pipes of 10 and 20 segments, RTTs 100 and 200 ms: alpha =
    /// 30 000 · max(10 000/0.01, 20 000/0.04) / (100 000 + 100 000)² = 0.75, so the 10-segment
    /// pipe grows one segment per max(10 000, 30 000 / 0.75) = 40 000 acknowledged bytes in
    /// congestion avoidance, where an uncoupled pipe needs 10 000.
    #[test]
    fn coupled_increase_follows_rfc_6356() {
        let c = Coupling::lia([
            (10_000, std::time::Duration::from_millis(100)),
            (20_000, std::time::Duration::from_millis(200)),
        ])
        .unwrap();
        assert!((c.alpha - 0.75).abs() < 1e-12, "{}", c.alpha);
        assert_eq!(c.total_window, 30_000);
        assert_eq!(c.bytes_per_segment(10_000), 40_000);
        let mut cc = NewReno::new(1000, 10);
        cc.set_window(10_000, Some(10_000));
        cc.set_coupling(Some(c));
        for _ in 0..39 {
            cc.on_delivered(&delivered(1000));
        }
        assert_eq!(cc.window(), 10_000);
        cc.on_delivered(&delivered(1000));
        assert_eq!(cc.window(), 11_000);
        // One pipe alone: alpha = 1, the uncoupled increase.
        let one = Coupling::lia([(10_000, std::time::Duration::from_millis(50))]).unwrap();
        assert!((one.alpha - 1.0).abs() < 1e-12);
        assert_eq!(one.bytes_per_segment(10_000), 10_000);
        assert!(Coupling::lia([]).is_none());
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
