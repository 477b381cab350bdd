//! Sliding-window measurements over τ (atl.txt §IV-A: "the TCP-ATL source continuously
//! measures the packet loss rate p within a sliding time window of τ"; "p_w is also measured
//! within a sliding time window of τ").

use std::collections::VecDeque;
use std::time::Duration;

use crate::Time;

/// Most buckets kept; events closer than τ/`BUCKETS` share a bucket.
const BUCKETS: u32 = 32;

/// Packets delivered and lost within the last τ, in time buckets.
#[derive(Debug, Clone, Default)]
pub struct LossWindow {
    buckets: VecDeque<(Time, f64, f64)>,
}

impl LossWindow {
    /// Records `delivered` and `lost` packets (fractions allowed) at `now`; forgets what is older
    /// than `tau`.
    pub fn record(&mut self, now: Time, tau: Duration, delivered: f64, lost: f64) {
        let (delivered, lost) = (clean(delivered), clean(lost));
        self.prune(now, tau);
        let grain = tau / BUCKETS;
        match self.buckets.back_mut() {
            Some((start, d, l)) if now.saturating_since(*start) < grain => {
                *d += delivered;
                *l += lost;
            }
            _ => self.buckets.push_back((now, delivered, lost)),
        }
    }

    fn prune(&mut self, now: Time, tau: Duration) {
        while self
            .buckets
            .front()
            .is_some_and(|(t, _, _)| now.saturating_since(*t) > tau)
        {
            self.buckets.pop_front();
        }
    }

    /// (loss rate p, packets counted) over the last τ; p = lost / (delivered + lost), 0 when
    /// nothing was counted.
    pub fn rate(&mut self, now: Time, tau: Duration) -> (f64, f64) {
        self.prune(now, tau);
        let (d, l) = self
            .buckets
            .iter()
            .fold((0.0, 0.0), |(d, l), (_, bd, bl)| (d + bd, l + bl));
        let n = d + l;
        if n > 0.0 {
            ((l / n).clamp(0.0, 1.0), n)
        } else {
            (0.0, 0.0)
        }
    }
}

fn clean(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 {
        x.min(1e12)
    } else {
        0.0
    }
}

/// The time average of a piecewise-constant value over the last τ — how a MAC layer's
/// sliding-window loss measurement sees the link: an outage of length d inside τ contributes
/// d/τ of total loss.
#[derive(Debug, Clone, Default)]
pub struct TimeAverage {
    /// Change points (time the value took effect, value), oldest first.
    points: VecDeque<(Time, f64)>,
}

impl TimeAverage {
    /// Forgets the history: the value is `v` from `now` on (a handoff to a new network).
    pub fn reset(&mut self, now: Time, v: f64) {
        self.points.clear();
        self.points.push_back((now, clean_prob(v)));
    }

    /// The value becomes `v` at `now`.
    pub fn set(&mut self, now: Time, v: f64) {
        self.points.push_back((now, clean_prob(v)));
        if self.points.len() > 4096 {
            self.points.pop_front();
        }
    }

    /// The current (latest) value.
    pub fn current(&self) -> f64 {
        self.points.back().map_or(0.0, |p| p.1)
    }

    /// The average over [now − τ, now] (over the known history if it is shorter than τ).
    pub fn average(&mut self, now: Time, tau: Duration) -> f64 {
        let start = Time::from_nanos(now.as_nanos().saturating_sub(tau.as_nanos() as u64));
        // Keep the last change point at or before the window start.
        while self.points.len() >= 2 && self.points[1].0 <= start {
            self.points.pop_front();
        }
        let Some(&(first, _)) = self.points.front() else {
            return 0.0;
        };
        let from = first.max(start);
        let span = now.saturating_since(from).as_secs_f64();
        if span <= 0.0 {
            return self.current();
        }
        let mut sum = 0.0;
        for (i, &(t, v)) in self.points.iter().enumerate() {
            let seg_start = t.max(from);
            let seg_end = self.points.get(i + 1).map_or(now, |n| n.0).min(now);
            sum += v * seg_end.saturating_since(seg_start).as_secs_f64();
        }
        (sum / span).clamp(0.0, 1.0)
    }
}

fn clean_prob(v: f64) -> f64 {
    if v.is_nan() {
        0.0
    } else {
        v.clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_window_forgets_events_older_than_tau() {
        let tau = Duration::from_secs(1);
        let mut w = LossWindow::default();
        w.record(Time::from_millis(0), tau, 90.0, 10.0);
        assert_eq!(w.rate(Time::from_millis(500), tau), (0.1, 100.0));
        w.record(Time::from_millis(1200), tau, 100.0, 0.0);
        assert_eq!(w.rate(Time::from_millis(1200), tau), (0.0, 100.0));
        assert_eq!(w.rate(Time::from_millis(5000), tau), (0.0, 0.0));
    }

    #[test]
    fn outage_counts_in_proportion_to_its_length() {
        let tau = Duration::from_secs(10);
        let mut a = TimeAverage::default();
        a.reset(Time::ZERO, 0.0);
        a.set(Time::from_secs_f64(8.0), 1.0);
        a.set(Time::from_secs_f64(9.0), 0.0);
        let avg = a.average(Time::from_secs_f64(10.0), tau);
        assert!((avg - 0.1).abs() < 1e-9, "{avg}");
        // Later, the outage has slid out of the window.
        assert_eq!(a.average(Time::from_secs_f64(30.0), tau), 0.0);
    }
}
