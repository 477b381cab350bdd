//! The window arithmetic of the Reno family (RFC 5681 §3.1 slow start and congestion
//! avoidance with appropriate byte counting, RFC 3465), shared by NewReno and Westwood+, which
//! differ only in how they set `ssthresh` after a loss.

/// Congestion window, slow-start threshold and the congestion-avoidance byte counter.
#[derive(Debug, Clone)]
pub(crate) struct RenoWindow {
    pub(crate) mss: u64,
    pub(crate) cwnd: u64,
    pub(crate) ssthresh: u64,
    /// Bytes acknowledged in congestion avoidance since the last one-segment increase.
    ca_acked: u64,
}

impl RenoWindow {
    /// An initial window of `initial_window_segments` segments of `mss` bytes, no threshold.
    pub(crate) fn new(mss: u64, initial_window_segments: u32) -> Self {
        let mss = mss.max(1);
        RenoWindow {
            mss,
            cwnd: mss.saturating_mul(u64::from(initial_window_segments.max(1))),
            ssthresh: u64::MAX,
            ca_acked: 0,
        }
    }

    /// Grows the window for `bytes` newly acknowledged in order: `min(N, SMSS)` per ACK in slow
    /// start, one SMSS per window of acknowledged bytes in congestion avoidance.
    pub(crate) fn grow(&mut self, bytes: u64) {
        if self.cwnd < self.ssthresh {
            self.cwnd = self.cwnd.saturating_add(bytes.min(self.mss));
        } else {
            self.ca_acked = self.ca_acked.saturating_add(bytes);
            if self.ca_acked >= self.cwnd {
                self.ca_acked -= self.cwnd;
                self.cwnd = self.cwnd.saturating_add(self.mss);
            }
        }
    }

    /// [`RenoWindow::grow`] with the congestion-avoidance increase of one SMSS per
    /// `per_segment` acknowledged bytes instead of per window (RFC 6356's coupled increase:
    /// `per_segment` = `max(cwnd, total / alpha)`).
    pub(crate) fn grow_per(&mut self, bytes: u64, per_segment: u64) {
        if self.cwnd < self.ssthresh {
            self.grow(bytes);
        } else {
            let per_segment = per_segment.max(self.cwnd).max(1);
            self.ca_acked = self.ca_acked.saturating_add(bytes);
            if self.ca_acked >= per_segment {
                self.ca_acked -= per_segment;
                self.cwnd = self.cwnd.saturating_add(self.mss);
            }
        }
    }

    /// RFC 5681 eq. 4: `max(FlightSize / 2, 2·SMSS)`.
    pub(crate) fn halved(&self, in_flight: u64) -> u64 {
        (in_flight / 2).max(2 * self.mss)
    }

    /// Sets the threshold and the window (at least one segment), restarting the byte counter.
    pub(crate) fn reset(&mut self, cwnd: u64, ssthresh: Option<u64>) {
        self.cwnd = cwnd.max(self.mss);
        if let Some(t) = ssthresh {
            self.ssthresh = t.max(2 * self.mss);
        }
        self.ca_acked = 0;
    }
}
