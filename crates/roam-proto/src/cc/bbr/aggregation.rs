//! BBR's ACK-aggregation estimate, `extra_acked`: how much more data was acknowledged in a
//! burst than the bandwidth estimate accounts for, added to the window so that a sender whose
//! acknowledgements arrive in clumps (delayed or decimated ACKs, Wi-Fi and cellular link-layer
//! aggregation, receive offload) is not held at `2 · BDP` while it waits for the next clump.
//!
//! Linux's BBR v1 has it since commit 78dc70ebaa38 ("tcp_bbr: adapt cwnd based on ack
//! aggregation estimation", Linux 5.1, 2019; `bbr_update_ack_aggregation`,
//! `bbr_ack_aggregation_cwnd`); the IETF draft of BBR (draft-ietf-ccwg-bbr, `BBR.extra_acked`,
//! `BBRUpdateACKAggregation`) keeps it. The rules, as Linux's defaults:
//! * an *epoch* starts whenever the data acknowledged since the last one is no more than the
//!   bandwidth estimate times the time since it began (the ACK rate is not above the estimate),
//!   or when it has counted 2^20 segments;
//! * `extra_acked` = data acknowledged in the epoch − `BtlBw · epoch length`, at most the
//!   current window; the estimate is the largest of the last 5–10 rounds (two slots of five
//!   rounds, `bbr_extra_acked_win_rtts = 5`);
//! * the window adds `extra_acked` (gain 1), at most 100 ms worth of `BtlBw`
//!   (`bbr_extra_acked_max_us`), once Startup found the pipe full.

use std::time::Duration;

use crate::Time;

/// Rounds each of the two slots of the max filter covers (Linux `bbr_extra_acked_win_rtts`).
pub const WINDOW_ROUNDS: u32 = 5;
/// The most the estimate may add, as time at the bandwidth estimate (Linux
/// `bbr_extra_acked_max_us`).
pub const MAX_AGGREGATION: Duration = Duration::from_millis(100);
/// Segments after which an epoch restarts regardless (Linux
/// `bbr_ack_epoch_acked_reset_thresh`).
const EPOCH_RESET_SEGMENTS: f64 = (1u64 << 20) as f64;

/// The ACK-aggregation estimator. See the module docs.
#[derive(Debug, Clone, Default)]
pub struct AckAggregation {
    epoch_start: Option<Time>,
    epoch_acked: f64,
    slots: [f64; 2],
    slot: usize,
    slot_rounds: u32,
}

impl AckAggregation {
    /// An estimator with no epoch yet.
    pub fn new() -> Self {
        AckAggregation::default()
    }

    /// `acked` bytes newly delivered at `now`; `btl_bw` the bandwidth estimate (bytes/s),
    /// `cwnd` the window (bytes), `round_start` whether this delivery began a round, `mss` the
    /// segment size.
    pub fn on_delivered(
        &mut self,
        now: Time,
        acked: f64,
        btl_bw: f64,
        cwnd: f64,
        round_start: bool,
        mss: f64,
    ) {
        if acked <= 0.0 {
            return;
        }
        if round_start {
            self.slot_rounds = (self.slot_rounds + 1).min(31);
            if self.slot_rounds >= WINDOW_ROUNDS {
                self.slot_rounds = 0;
                self.slot ^= 1;
                self.slots[self.slot] = 0.0;
            }
        }
        let start = *self.epoch_start.get_or_insert(now);
        let mut expected = btl_bw * now.saturating_since(start).as_secs_f64();
        if self.epoch_acked <= expected || self.epoch_acked + acked >= EPOCH_RESET_SEGMENTS * mss {
            self.epoch_acked = 0.0;
            self.epoch_start = Some(now);
            expected = 0.0;
        }
        self.epoch_acked += acked;
        let extra = (self.epoch_acked - expected).min(cwnd).max(0.0);
        if extra > self.slots[self.slot] {
            self.slots[self.slot] = extra;
        }
    }

    /// The bytes the window adds for aggregation: the filtered `extra_acked`, at most
    /// [`MAX_AGGREGATION`] at `btl_bw`.
    pub fn cwnd(&self, btl_bw: f64) -> f64 {
        let extra = self.slots[0].max(self.slots[1]);
        extra.min(btl_bw * MAX_AGGREGATION.as_secs_f64()).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ACKs at the estimated rate add one ACK's data (the epoch restarts at every ACK); a clump
    /// of ten ACKs at one instant after a 10 ms silence adds what the clump delivered beyond
    /// 10 ms at the rate.
    #[test]
    fn extra_acked_of_a_steady_clock_and_of_a_clump() {
        let mut a = AckAggregation::new();
        // 1 MB/s, 1000 bytes per ms: the epoch restarts every ACK, extra = 1000.
        for ms in 0..20 {
            a.on_delivered(Time::from_millis(ms), 1000.0, 1e6, 1e9, false, 1000.0);
        }
        assert!((a.cwnd(1e6) - 1000.0).abs() < 1e-6, "{}", a.cwnd(1e6));
        // Silence from 19 to 29 ms, then ten ACKs of 1000 bytes at 29 ms: the first restarts
        // the epoch (1000 bytes since 19 ms, below the 10 000 the rate predicts), the other
        // nine arrive with no time elapsed in the new epoch: extra = 10 000.
        for _ in 0..10 {
            a.on_delivered(Time::from_millis(29), 1000.0, 1e6, 1e9, false, 1000.0);
        }
        assert!((a.cwnd(1e6) - 10_000.0).abs() < 1e-6, "{}", a.cwnd(1e6));
        // Capped at 100 ms of the rate and at the window.
        assert!((a.cwnd(50_000.0) - 5000.0).abs() < 1e-6);
        let mut b = AckAggregation::new();
        for _ in 0..10 {
            b.on_delivered(Time::from_millis(1), 1000.0, 1e6, 4000.0, false, 1000.0);
        }
        assert!((b.cwnd(1e6) - 4000.0).abs() < 1e-6);
    }

    /// The max filter forgets a clump after two windows of five rounds.
    #[test]
    fn the_filter_forgets_after_ten_rounds() {
        let mut a = AckAggregation::new();
        for _ in 0..10 {
            a.on_delivered(Time::ZERO, 1000.0, 1e6, 1e9, false, 1000.0);
        }
        assert!((a.cwnd(1e6) - 10_000.0).abs() < 1e-6);
        let mut ms = 0;
        for round in 1..=10 {
            ms += 10;
            a.on_delivered(Time::from_millis(ms), 1000.0, 1e6, 1e9, true, 1000.0);
            let remembered = a.cwnd(1e6) > 5000.0;
            assert_eq!(remembered, round < 10, "round {round}");
        }
    }
}
