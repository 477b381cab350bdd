//! Pacing of the window that Initial Cwnd tuning installs (last-link-heuristics.txt §3.2).
//!
//! §3.2 sets `cwnd = ssthresh = BW·RTT/8` when the first last-link report arrives, so the
//! sender may put a whole pipe's worth of segments on the wire at once. The paper does not say
//! how they leave the host; sent back to back they arrive at the first slower hop as one burst
//! of BW·RTT segments, which overflows any ordinary queue once BW·RTT exceeds it (at 7 Mb/s
//! and RTT 200 ms: 175 segments). The report carries the very rate the burst should have, so we
//! space the new segments of that first window by `MSS·8 / BW` — the last link's own packet
//! time — as Jump Start (Liu, Allman et al., 2007) paces its initial window over the first RTT.
//! Pacing ends once the window's last segment has left, or at the first loss detection; after
//! that the ACK clock spaces the segments. `initial_burst = true` restores back-to-back sending.
//! The design choice and the numbers with and without it are in docs/DECISIONS.md.

use std::time::Duration;

use crate::time::Time;

/// Spaces new segments until sequence `end` has been sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct InitialPacing {
    /// The sequence number just past the paced window.
    end: u64,
    /// Time between the starts of two consecutive new segments.
    interval: Duration,
    /// Earliest time the next new segment may leave.
    next: Time,
    /// A wake-up the sender asked for because pacing held a segment back.
    wake: Option<Time>,
}

impl InitialPacing {
    /// Paces the window `[from, from + window)` at `bandwidth_bps`, one `mss` per packet time,
    /// starting at `now`. `None` when the bandwidth is zero.
    pub(super) fn new(
        now: Time,
        from: u64,
        window: u64,
        mss: u64,
        bandwidth_bps: u64,
    ) -> Option<Self> {
        if bandwidth_bps == 0 || window == 0 {
            return None;
        }
        let secs = mss as f64 * 8.0 / bandwidth_bps as f64;
        Some(InitialPacing {
            end: from.saturating_add(window),
            interval: Duration::try_from_secs_f64(secs).unwrap_or(Duration::ZERO),
            next: now,
            wake: None,
        })
    }

    /// True while the paced window has not been sent completely.
    pub(super) fn active(&self, snd_nxt: u64) -> bool {
        snd_nxt < self.end
    }

    /// May a new segment leave now? If not, remembers when to try again.
    pub(super) fn permits(&mut self, now: Time) -> bool {
        if now >= self.next {
            return true;
        }
        self.wake = Some(self.next);
        false
    }

    /// Records that a new segment left at `now`.
    pub(super) fn on_sent(&mut self, now: Time) {
        self.next = self.next.max(now) + self.interval;
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
    fn spaces_segments_by_the_packet_time_of_the_reported_rate() {
        // 1000-byte segments at 8 Mb/s: one per millisecond.
        let mut p = InitialPacing::new(Time::ZERO, 1, 3000, 1000, 8_000_000).unwrap();
        assert!(p.permits(Time::ZERO));
        p.on_sent(Time::ZERO);
        assert!(!p.permits(Time::from_micros(500)));
        assert_eq!(p.deadline(), Some(Time::from_millis(1)));
        p.on_timeout(Time::from_millis(1));
        assert_eq!(p.deadline(), None);
        assert!(p.permits(Time::from_millis(1)));
        p.on_sent(Time::from_millis(1));
        // A late send does not bank credit for a burst.
        assert!(p.permits(Time::from_millis(5)));
        p.on_sent(Time::from_millis(5));
        assert!(!p.permits(Time::from_millis(5)));
    }

    #[test]
    fn ends_with_the_window_and_refuses_a_zero_rate() {
        let p = InitialPacing::new(Time::ZERO, 1, 2000, 1000, 1_000_000).unwrap();
        assert!(p.active(1000));
        assert!(!p.active(2001));
        assert!(InitialPacing::new(Time::ZERO, 1, 2000, 1000, 0).is_none());
    }
}
