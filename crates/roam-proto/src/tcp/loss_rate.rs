//! The packet loss rate over the most recent transmissions, for the PER heuristic's
//! "current Packet Loss Rate" (last-link-heuristics.txt §3.3) when it is read as a recent rate
//! rather than over the whole connection (`[flow.tcp] last_link = { plr_window = N }`; see
//! docs/DECISIONS.md, "PER heuristic: PLR").

use std::collections::VecDeque;

/// Which of the last `capacity` data-segment transmissions were retransmissions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecentLossRate {
    capacity: usize,
    /// One entry per transmission, oldest first: true for a retransmission.
    recent: VecDeque<bool>,
    /// Retransmissions among `recent`.
    retransmissions: usize,
}

impl RecentLossRate {
    /// A window over the last `capacity` transmissions (at least one).
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        RecentLossRate {
            capacity,
            recent: VecDeque::with_capacity(capacity.min(4096)),
            retransmissions: 0,
        }
    }

    /// A data segment left: a first transmission or a retransmission.
    pub fn record(&mut self, retransmission: bool) {
        if self.recent.len() == self.capacity && self.recent.pop_front() == Some(true) {
            self.retransmissions -= 1;
        }
        self.recent.push_back(retransmission);
        self.retransmissions += usize::from(retransmission);
    }

    /// Most bytes the window holds (a doubling ring of one byte per transmission).
    pub fn memory_bound(&self) -> usize {
        2 * self.capacity
    }

    /// (retransmissions, transmissions) in the window.
    pub fn counts(&self) -> (u64, u64) {
        (self.retransmissions as u64, self.recent.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_the_last_transmissions() {
        let mut w = RecentLossRate::new(4);
        assert_eq!(w.counts(), (0, 0));
        w.record(true);
        w.record(false);
        w.record(false);
        assert_eq!(w.counts(), (1, 3));
        w.record(false);
        assert_eq!(w.counts(), (1, 4));
        w.record(false); // the retransmission leaves the window
        assert_eq!(w.counts(), (0, 4));
        w.record(true);
        w.record(true);
        assert_eq!(w.counts(), (2, 4));
    }

    #[test]
    fn a_zero_capacity_is_one_transmission() {
        let mut w = RecentLossRate::new(0);
        w.record(true);
        w.record(false);
        assert_eq!(w.counts(), (0, 1));
    }
}
