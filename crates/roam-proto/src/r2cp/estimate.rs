//! What an R²CP receiver measures of each pipe's path, to predict when a request sent now would
//! bring its data (ours: the paper's rank uses the smoothed RTT alone, §4.3.1; see
//! `docs/R2CP.md`, "Head-of-line awareness"): the **delivery rate** — bytes that arrived
//! through the pipe over the time since the request of the arriving unit was sent, the
//! receiver-side form of the delivery-rate estimate of draft-cheng-iccrg-delivery-rate-estimation
//! §3 (a request plays the role of a transmission, a DATA the role of its ACK), kept as a
//! windowed maximum — and when the pipe was last heard from.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use crate::Time;

/// The shortest and longest window of the delivery-rate maximum.
const RATE_WINDOW_MIN: Duration = Duration::from_millis(250);
pub(crate) const RATE_WINDOW_MAX: Duration = Duration::from_secs(4);

/// The window of the peak delivery rate the delay budget is sized with: longer than the
/// deepest queue the budget lets a slow pipe keep, so a fast path that slowed for a while is
/// still expected back at its peak.
const PEAK_WINDOW: Duration = Duration::from_secs(10);

/// The maximum of the samples of a sliding time window (a monotone deque: amortised O(1)).
#[derive(Debug, Clone, Default)]
struct WindowedMax {
    /// (time, value), values decreasing from the front.
    samples: VecDeque<(Time, u64)>,
}

impl WindowedMax {
    fn push(&mut self, now: Time, value: u64, window: Duration) {
        while self
            .samples
            .front()
            .is_some_and(|&(t, _)| now.saturating_since(t) > window)
        {
            self.samples.pop_front();
        }
        while self.samples.back().is_some_and(|&(_, v)| v <= value) {
            self.samples.pop_back();
        }
        self.samples.push_back((now, value));
    }

    fn max(&self) -> Option<u64> {
        self.samples.front().map(|&(_, v)| v)
    }
}

/// One outstanding request's record.
#[derive(Debug, Clone, Copy)]
struct Sent {
    /// When the request left.
    at: Time,
    /// Bytes delivered through the pipe when it left.
    delivered: u64,
    /// When its data was expected (now + the predicted arrival delay when it left).
    due: Time,
}

/// Delivery rate, arrival prediction inputs and silence of one pipe's path.
#[derive(Debug, Clone, Default)]
pub(crate) struct PathEstimate {
    /// Payload bytes that arrived through the pipe (duplicates included: the path carried them).
    delivered: u64,
    /// Outstanding requests by local unit start.
    sent: BTreeMap<u64, Sent>,
    /// Delivery-rate samples (bytes/s) of the last few round trips.
    recent: WindowedMax,
    /// Delivery-rate samples (bytes/s) of the last [`PEAK_WINDOW`].
    peak: WindowedMax,
    /// The last DATA through the pipe, or the instant it had something outstanding again
    /// after having nothing (whichever is later).
    last_heard: Option<Time>,
}

impl PathEstimate {
    /// A request for the local unit at `local` left now; its data is expected at `due`.
    pub fn on_request(&mut self, now: Time, local: u64, due: Time) {
        if self.sent.is_empty() {
            // Nothing was outstanding: silence counts from now, not from the last arrival.
            self.last_heard = Some(self.last_heard.map_or(now, |t| t.max(now)));
        }
        self.sent.insert(
            local,
            Sent {
                at: now,
                delivered: self.delivered,
                due,
            },
        );
    }

    /// `bytes` of payload arrived through the pipe, for the local unit at `local` if it was
    /// still outstanding here. `min_rtt` sizes the rate window.
    pub fn on_arrival(&mut self, now: Time, local: Option<u64>, bytes: u64, min_rtt: Duration) {
        self.delivered = self.delivered.saturating_add(bytes);
        self.last_heard = Some(now);
        let Some(sent) = local.and_then(|l| self.sent.remove(&l)) else {
            return;
        };
        let elapsed = now.saturating_since(sent.at).as_nanos();
        if elapsed == 0 {
            return;
        }
        let bytes = u128::from(self.delivered - sent.delivered);
        let rate = u64::try_from(bytes * 1_000_000_000 / elapsed).unwrap_or(u64::MAX);
        let window = min_rtt
            .saturating_mul(4)
            .clamp(RATE_WINDOW_MIN, RATE_WINDOW_MAX);
        self.recent.push(now, rate, window);
        self.peak.push(now, rate, PEAK_WINDOW);
    }

    /// The unit at `local` is no longer outstanding here (it moved to another pipe, or was
    /// settled without data).
    pub fn forget(&mut self, local: u64) {
        self.sent.remove(&local);
    }

    /// Nothing is outstanding any more (the pipe's units were all moved or settled).
    pub fn forget_all(&mut self) {
        self.sent.clear();
    }

    /// The delivery rate (bytes/s): the largest sample of the window, if any.
    pub fn rate(&self) -> Option<u64> {
        self.recent.max().filter(|&r| r > 0)
    }

    /// The peak delivery rate (bytes/s) of the last ten seconds, if any.
    pub fn peak_rate(&self) -> Option<u64> {
        self.peak.max().filter(|&r| r > 0)
    }

    /// When the data of the unit at `local` is expected, if it is outstanding here.
    pub fn due(&self, local: u64) -> Option<Time> {
        self.sent.get(&local).map(|s| s.due)
    }

    /// The last sign of life: the last arrival, or the instant the pipe had something
    /// outstanding again after having nothing.
    pub fn last_heard(&self) -> Option<Time> {
        self.last_heard
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::ZERO + Duration::from_millis(x)
    }

    #[test]
    fn the_rate_is_what_arrived_since_the_request_over_its_round_trip() {
        let mut e = PathEstimate::default();
        let rtt = Duration::from_millis(100);
        // Ten 1000-byte units requested at 0; they arrive from 100 ms, one per 10 ms.
        for k in 0..10u64 {
            e.on_request(ms(0), k * 1000, ms(100));
        }
        for k in 0..10u64 {
            e.on_arrival(ms(100 + 10 * k), Some(k * 1000), 1000, rtt);
        }
        // The last: 10 000 bytes over 190 ms.
        assert_eq!(e.rate(), Some(10_000 * 1000 / 190));
        assert_eq!(e.last_heard(), Some(ms(190)));
        assert_eq!(e.due(0), None);
    }

    #[test]
    fn the_maximum_ages_out_of_its_window() {
        let mut e = PathEstimate::default();
        let rtt = Duration::from_millis(10);
        e.on_request(ms(0), 0, ms(10));
        e.on_arrival(ms(10), Some(0), 10_000, rtt); // 1 MB/s
        e.on_request(ms(10), 1, ms(20));
        e.on_arrival(ms(1010), Some(1), 1000, rtt); // 1 kB/s, 1 s later: beyond the window
        assert_eq!(e.rate(), Some(1000));
        assert_eq!(e.peak_rate(), Some(1_000_000), "the peak stays ten seconds");
    }

    #[test]
    fn silence_counts_from_the_first_request_after_an_idle_spell() {
        let mut e = PathEstimate::default();
        e.on_request(ms(0), 0, ms(10));
        e.on_arrival(ms(10), Some(0), 1000, Duration::from_millis(10));
        // Idle until 5 s: the clock restarts at the new request.
        e.on_request(ms(5000), 1000, ms(5010));
        assert_eq!(e.last_heard(), Some(ms(5000)));
        assert_eq!(e.due(1000), Some(ms(5010)));
        e.forget(1000);
        assert_eq!(e.due(1000), None);
    }
}
