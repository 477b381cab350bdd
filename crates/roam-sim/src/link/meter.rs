//! Measured link facts: the fraction of frames that arrived corrupted on a link direction over a
//! sliding time window — what a real wireless driver can count, as opposed to the link model's
//! exact long-run loss probability.

use std::collections::VecDeque;
use std::time::Duration;

use roam_proto::Time;

/// How a link's [`roam_proto::linkinfo::LinkInfo`] loss figures are produced (scenario field
/// `link_info` of a `[[link]]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LinkInfoMode {
    /// From the link model: the long-run loss probability of its random-loss processes.
    #[default]
    Exact,
    /// Counted over the last `window` of arrivals on the incoming direction (and the outgoing
    /// one for p_w): corrupted / (delivered + corrupted).
    Measured {
        /// Width of the sliding window.
        window: Duration,
    },
}

/// Sliding-window count of arrivals and corruption losses on one link direction.
#[derive(Debug, Clone, Default)]
pub(crate) struct LossMeter {
    window: Duration,
    /// (arrival time, corrupted) of every frame that reached the far end within the window.
    arrivals: VecDeque<(Time, bool)>,
    corrupted: u64,
}

impl LossMeter {
    pub(crate) fn new(window: Duration) -> LossMeter {
        LossMeter {
            window,
            arrivals: VecDeque::new(),
            corrupted: 0,
        }
    }

    /// Records one frame reaching the far end at `now` (corrupted or intact).
    pub(crate) fn record(&mut self, now: Time, corrupted: bool) {
        self.arrivals.push_back((now, corrupted));
        self.corrupted += u64::from(corrupted);
        self.expire(now);
    }

    fn expire(&mut self, now: Time) {
        while let Some(&(t, c)) = self.arrivals.front() {
            if now.saturating_since(t) <= self.window {
                break;
            }
            self.arrivals.pop_front();
            self.corrupted -= u64::from(c);
        }
    }

    /// Fraction of frames corrupted within the window ending at the latest arrival (0 when
    /// nothing arrived).
    pub(crate) fn loss_rate(&self) -> f64 {
        if self.arrivals.is_empty() {
            0.0
        } else {
            self.corrupted as f64 / self.arrivals.len() as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_the_window() {
        let mut m = LossMeter::new(Duration::from_secs(1));
        for i in 0..10 {
            m.record(Time::from_millis(i * 10), i % 2 == 0);
        }
        assert!((m.loss_rate() - 0.5).abs() < 1e-9);
        // Two seconds later, only intact frames are in the window.
        for i in 0..4 {
            m.record(Time::from_millis(3000 + i), false);
        }
        assert_eq!(m.loss_rate(), 0.0);
    }
}
