//! Pacing for rate-based controllers (BBR): the sender spaces segments at the controller's
//! [`crate::cc::CongestionController::pacing_rate`] and asks the host to wake it when the next
//! one may leave, through the same deadline as its other timers (so the simulator and the UDP
//! runtime honour it alike). ACK-clocked controllers report no rate and are never held back.
//!
//! Each segment of `len` bytes moves the earliest departure of the next by `len / rate`
//! (draft-cardwell-iccrg-bbr-congestion-control-00 §4.2.1: "the sender paces at
//! pacing_rate"); a sender idle past that time starts again from now, banking no credit.
//! Segments leave in bursts of the draft's send quantum (§4.2.2: one segment below 1.2 Mb/s,
//! two below 24 Mb/s, else the bytes of 1 ms at the pacing rate, at most 64 KB): a segment may
//! leave while the departure time it waits for is at most the rest of a quantum ahead. Hosts
//! whose timers are coarser than a packet time (the UDP runtime's, on fast paths) then still
//! reach the pacing rate.

use std::time::Duration;

use crate::cc::bbr::send_quantum;
use crate::time::Time;

/// Earliest departure of the next segment and the wake-up asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Pacer {
    next: Time,
    wake: Option<Time>,
}

impl Pacer {
    /// May a segment of `mss` bytes leave at `now` at `rate` bytes/s? If not, asks for a
    /// wake-up when it may.
    pub(super) fn permits(&mut self, now: Time, mss: u64, rate: f64) -> bool {
        let slack = gap(send_quantum(mss, rate).saturating_sub(mss), rate);
        let may_leave =
            Time::from_nanos(self.next.as_nanos().saturating_sub(slack.as_nanos() as u64));
        if now >= may_leave {
            return true;
        }
        self.wake = Some(may_leave);
        false
    }

    /// A segment of `len` bytes left at `now` with the controller pacing at `rate` bytes/s.
    pub(super) fn on_sent(&mut self, now: Time, len: u64, rate: f64) {
        self.next = self.next.max(now).saturating_add(gap(len, rate));
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

/// The time `len` bytes take at `rate` bytes/s: at most a second whatever the estimate says,
/// zero for a rate that is not a positive number.
fn gap(len: u64, rate: f64) -> Duration {
    let secs = len as f64 / rate;
    if secs.is_finite() && secs > 0.0 {
        Duration::try_from_secs_f64(secs.min(1.0)).unwrap_or(Duration::ZERO)
    } else {
        Duration::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Below 1.2 Mb/s the quantum is one segment: pure spacing.
    #[test]
    fn spaces_segments_at_the_rate_and_banks_no_credit() {
        let (mss, rate) = (1000, 100e3);
        let mut p = Pacer::default();
        assert!(p.permits(Time::ZERO, mss, rate));
        // 1000 bytes at 100 kB/s: the next may leave 10 ms later.
        p.on_sent(Time::ZERO, 1000, rate);
        assert!(!p.permits(Time::from_millis(4), mss, rate));
        assert_eq!(p.deadline(), Some(Time::from_millis(10)));
        p.on_timeout(Time::from_millis(10));
        assert_eq!(p.deadline(), None);
        assert!(p.permits(Time::from_millis(10), mss, rate));
        // Idle until 100 ms: one segment leaves, the next waits its full gap.
        p.on_sent(Time::from_millis(100), 1000, rate);
        assert!(!p.permits(Time::from_millis(100), mss, rate));
        assert_eq!(p.deadline(), Some(Time::from_millis(110)));
    }

    /// Between 1.2 and 24 Mb/s two segments leave back to back; above, 1 ms worth (≤ 64 KB).
    #[test]
    fn segments_leave_in_send_quanta() {
        // 1 MB/s (8 Mb/s): a second segment may follow the first at once, a third 2 ms later.
        let (mss, rate) = (1000, 1e6);
        let mut p = Pacer::default();
        p.on_sent(Time::ZERO, 1000, rate);
        assert!(p.permits(Time::ZERO, mss, rate));
        p.on_sent(Time::ZERO, 1000, rate);
        assert!(!p.permits(Time::ZERO, mss, rate));
        assert_eq!(p.deadline(), Some(Time::from_millis(1)));
    }

    #[test]
    fn a_zero_or_absurd_rate_never_stalls_for_ever() {
        let mut p = Pacer::default();
        p.on_sent(Time::ZERO, 1000, 0.0);
        assert!(p.permits(Time::ZERO, 1000, 0.0));
        p.on_sent(Time::ZERO, 1000, 1e-30);
        assert!(p.permits(Time::from_secs_f64(1.0), 1000, 1e-30));
        p.on_sent(Time::ZERO, 1000, f64::NAN);
        assert!(p.permits(Time::from_secs_f64(2.0), 1000, f64::NAN));
    }
}
