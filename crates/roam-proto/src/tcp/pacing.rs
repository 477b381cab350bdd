//! Pacing for rate-based controllers (BBR): the sender spaces segments at the controller's
//! [`crate::cc::CongestionController::pacing_rate`] and asks the host to wake it when the next
//! one may leave, through the same deadline as its other timers (so the simulator and the UDP
//! runtime honour it alike). ACK-clocked controllers report no rate and are never held back.
//!
//! Each segment of `len` bytes moves the earliest departure of the next by `len / rate`
//! (draft-cardwell-iccrg-bbr-congestion-control-00 §4.2.1: "the sender paces at
//! pacing_rate"); a sender idle past that time starts again from now, banking no credit.

use std::time::Duration;

use crate::time::Time;

/// Earliest departure of the next segment and the wake-up asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Pacer {
    next: Time,
    wake: Option<Time>,
}

impl Pacer {
    /// May a segment leave at `now`? If not, asks for a wake-up at its departure time.
    pub(super) fn permits(&mut self, now: Time) -> bool {
        if now >= self.next {
            return true;
        }
        self.wake = Some(self.next);
        false
    }

    /// A segment of `len` bytes left at `now` with the controller pacing at `rate` bytes/s.
    pub(super) fn on_sent(&mut self, now: Time, len: u64, rate: f64) {
        let secs = len as f64 / rate;
        let gap = if secs.is_finite() && secs > 0.0 {
            // At most a second between two segments whatever the estimate says.
            Duration::try_from_secs_f64(secs.min(1.0)).unwrap_or(Duration::ZERO)
        } else {
            Duration::ZERO
        };
        self.next = self.next.max(now).saturating_add(gap);
    }

    /// The wake-up pacing asked for, if any.
    pub(super) fn deadline(&self) -> Option<Time> {
        self.wake
    }

    /// Clears an expired wake-up (the host then polls for the held segment).
    pub(super) fn on_timeout(&mut self, now: Time) {
        if self.wake.is_some_and(|w| w <= now) {
            self.wake = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_segments_at_the_rate_and_banks_no_credit() {
        let mut p = Pacer::default();
        assert!(p.permits(Time::ZERO));
        // 1000 bytes at 1 MB/s: the next may leave 1 ms later.
        p.on_sent(Time::ZERO, 1000, 1e6);
        assert!(!p.permits(Time::from_micros(400)));
        assert_eq!(p.deadline(), Some(Time::from_millis(1)));
        p.on_timeout(Time::from_millis(1));
        assert_eq!(p.deadline(), None);
        assert!(p.permits(Time::from_millis(1)));
        // Idle until 10 ms: one segment leaves, the next waits its full gap.
        p.on_sent(Time::from_millis(10), 1000, 1e6);
        assert!(!p.permits(Time::from_millis(10)));
        assert_eq!(p.deadline(), Some(Time::from_millis(11)));
    }

    #[test]
    fn a_zero_or_absurd_rate_never_stalls_for_ever() {
        let mut p = Pacer::default();
        p.on_sent(Time::ZERO, 1000, 0.0);
        assert!(p.permits(Time::ZERO));
        p.on_sent(Time::ZERO, 1000, 1e-30);
        assert!(p.permits(Time::from_secs_f64(1.0)));
        p.on_sent(Time::ZERO, 1000, f64::NAN);
        assert!(p.permits(Time::from_secs_f64(2.0)));
    }
}
