//! BBR's path model: delivery-rate samples, round counting, the windowed-max bandwidth filter
//! and the windowed-min RTT filter (Cardwell et al., "BBR: Congestion-Based Congestion
//! Control", ACM Queue 14(5), 2016; draft-cardwell-iccrg-bbr-congestion-control-00 §4.1).
//!
//! Delivery rate. The draft's rate sample divides the data delivered since a packet was sent by
//! the time between its sending and its acknowledgement, from per-packet state the engine keeps.
//! Our controllers see events, not packets ([`crate::cc`]), so the sample here is the data
//! delivered over the trailing interval of one RTT sample ending now: the acknowledged packet
//! left one RTT ago, and what was delivered meanwhile is what the draft's `delivered −
//! P.delivered` counts. Snapshots of the delivered counter are kept at most every
//! `min_rtt / 16` in a ring of [`SNAPSHOTS`], so memory stays bounded.
//!
//! Rounds (draft §4.1.1.3): a round ends when the data in flight at its start has been
//! delivered, i.e. the delivered counter passes its value at the round's start plus the bytes
//! then in flight.

use std::collections::VecDeque;
use std::time::Duration;

use crate::Time;

/// Delivered-counter snapshots kept for rate samples.
pub const SNAPSHOTS: usize = 64;
/// Rounds the bandwidth filter remembers (draft §4.1.1.4 `BtlBwFilterLen`).
pub const BW_FILTER_ROUNDS: u64 = 10;
/// How long a minimum RTT stays valid (draft §4.1.2.3 `MinRTTFilterLen`).
pub const MIN_RTT_WINDOW: Duration = Duration::from_secs(10);

/// The model of the path.
#[derive(Debug, Clone)]
pub struct Model {
    /// Bytes delivered so far (in order or selectively).
    pub delivered: u64,
    snapshots: VecDeque<(Time, u64)>,
    /// Round trips counted so far.
    pub round: u64,
    next_round_delivered: u64,
    /// True for the acknowledgement that started a new round.
    pub round_start: bool,
    /// Per-round maxima of the delivery rate (bytes/s), newest last, at most
    /// [`BW_FILTER_ROUNDS`].
    bw_rounds: VecDeque<(u64, f64)>,
    /// Minimum RTT and when it was taken.
    pub min_rtt: Option<(Duration, Time)>,
    /// The latest RTT sample.
    pub latest_rtt: Option<Duration>,
    /// The minimum had expired when the latest RTT sample replaced it (draft §4.1.2.3
    /// `BBR.min_rtt_expired`, kept until the delivery the sample belongs to was handled).
    pub expired_at_sample: bool,
}

impl Model {
    /// An empty model.
    pub fn new() -> Self {
        Model {
            delivered: 0,
            snapshots: VecDeque::with_capacity(SNAPSHOTS),
            round: 0,
            next_round_delivered: 0,
            round_start: false,
            bw_rounds: VecDeque::with_capacity(BW_FILTER_ROUNDS as usize + 1),
            min_rtt: None,
            latest_rtt: None,
            expired_at_sample: false,
        }
    }

    /// The bottleneck-bandwidth estimate `BtlBw` (bytes/s): the largest sample of the last
    /// [`BW_FILTER_ROUNDS`] rounds; 0 before the first.
    pub fn btl_bw(&self) -> f64 {
        self.bw_rounds.iter().map(|&(_, b)| b).fold(0.0, f64::max)
    }

    /// `RTprop`: the minimum RTT of the last [`MIN_RTT_WINDOW`].
    pub fn rt_prop(&self) -> Option<Duration> {
        self.min_rtt.map(|(d, _)| d)
    }

    /// `BtlBw · RTprop` in bytes, if both are known.
    pub fn bdp(&self) -> Option<f64> {
        let rt = self.rt_prop()?;
        let bw = self.btl_bw();
        (bw > 0.0).then_some(bw * rt.as_secs_f64())
    }

    /// True when the minimum RTT is older than [`MIN_RTT_WINDOW`].
    pub fn min_rtt_expired(&self, now: Time) -> bool {
        self.min_rtt
            .is_some_and(|(_, at)| now.saturating_since(at) > MIN_RTT_WINDOW)
    }

    /// Restarts the minimum-RTT window at `now` (end of ProbeRTT).
    pub fn stamp_min_rtt(&mut self, now: Time) {
        if let Some((_, at)) = self.min_rtt.as_mut() {
            *at = now;
        }
    }

    /// An RTT sample (draft §4.1.2.3: taken if lower, or if the minimum expired).
    pub fn on_rtt(&mut self, now: Time, rtt: Duration) {
        self.latest_rtt = Some(rtt);
        let expired = self.min_rtt_expired(now);
        self.expired_at_sample |= expired;
        let take = match self.min_rtt {
            None => true,
            Some((m, _)) => rtt <= m || expired,
        };
        if take {
            self.min_rtt = Some((rtt, now));
        }
    }

    /// `bytes` newly delivered at `now` with `in_flight` bytes still out: advances the round
    /// counter and takes a delivery-rate sample into the bandwidth filter.
    pub fn on_delivered(&mut self, now: Time, bytes: u64, in_flight: u64) {
        self.delivered = self.delivered.saturating_add(bytes);
        self.round_start = false;
        if bytes > 0 && self.delivered >= self.next_round_delivered {
            self.next_round_delivered = self.delivered.saturating_add(in_flight.max(1));
            self.round = self.round.saturating_add(1);
            self.round_start = true;
        }
        if let Some(rate) = self.rate_sample(now) {
            self.take_bw(rate);
        }
        self.snapshot(now);
    }

    fn rate_sample(&self, now: Time) -> Option<f64> {
        let window = self.latest_rtt?;
        let from = Time::from_nanos(now.as_nanos().checked_sub(window.as_nanos() as u64)?);
        // The newest snapshot taken at or before `now − RTT` (the oldest kept, covering at
        // least a few minimum RTTs, when the RTT has grown beyond the ring).
        let &(t, d) = self
            .snapshots
            .iter()
            .rev()
            .find(|(t, _)| *t <= from)
            .or_else(|| {
                let min = self.rt_prop()?;
                self.snapshots
                    .front()
                    .filter(|(t, _)| now.saturating_since(*t) >= min)
            })?;
        let secs = now.saturating_since(t).as_secs_f64();
        (secs > 0.0).then(|| self.delivered.saturating_sub(d) as f64 / secs)
    }

    fn take_bw(&mut self, rate: f64) {
        if !rate.is_finite() {
            return;
        }
        match self.bw_rounds.back_mut() {
            Some((r, b)) if *r == self.round => *b = b.max(rate),
            _ => self.bw_rounds.push_back((self.round, rate)),
        }
        while self
            .bw_rounds
            .front()
            .is_some_and(|&(r, _)| r + BW_FILTER_ROUNDS <= self.round)
        {
            self.bw_rounds.pop_front();
        }
    }

    fn snapshot(&mut self, now: Time) {
        let spacing = self.rt_prop().unwrap_or(Duration::ZERO) / 16;
        if self
            .snapshots
            .back()
            .is_some_and(|(t, _)| now.saturating_since(*t) < spacing.max(Duration::from_nanos(1)))
        {
            return;
        }
        if self.snapshots.len() == SNAPSHOTS {
            self.snapshots.pop_front();
        }
        self.snapshots.push_back((now, self.delivered));
    }
}

impl Default for Model {
    fn default() -> Self {
        Model::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_ack_clock_gives_its_rate_and_counts_rounds() {
        let mut m = Model::new();
        m.on_rtt(Time::ZERO, Duration::from_millis(100));
        // 1000 bytes every millisecond = 1 MB/s, 100 kB in flight: a round every 100 ACKs.
        for i in 0..=1000u64 {
            m.on_delivered(Time::from_millis(i), 1000, 100_000);
        }
        assert!((m.btl_bw() - 1e6).abs() < 1e3, "{}", m.btl_bw());
        // Rounds start at the first ACK and every 100 000 bytes after it.
        assert_eq!(m.round, 11);
        assert_eq!(m.bdp(), Some(m.btl_bw() * 0.1));
    }

    #[test]
    fn the_bandwidth_filter_forgets_after_ten_rounds() {
        let mut m = Model::new();
        m.on_rtt(Time::ZERO, Duration::from_millis(10));
        let mut now = 0u64;
        // Fast for a while (2 MB/s), then slow (1 MB/s): the fast estimate lasts ten rounds.
        for (rate_kb_per_ms, acks) in [(2u64, 200u64), (1, 150)] {
            for _ in 0..acks {
                now += 1;
                m.on_delivered(Time::from_millis(now), rate_kb_per_ms * 1000, 10_000);
            }
        }
        assert!((m.btl_bw() - 1e6).abs() < 1e4, "{}", m.btl_bw());
    }

    #[test]
    fn min_rtt_is_the_minimum_until_it_expires() {
        let mut m = Model::new();
        m.on_rtt(Time::ZERO, Duration::from_millis(50));
        m.on_rtt(Time::from_secs_f64(1.0), Duration::from_millis(80));
        assert_eq!(m.rt_prop(), Some(Duration::from_millis(50)));
        assert!(!m.min_rtt_expired(Time::from_secs_f64(10.0)));
        assert!(m.min_rtt_expired(Time::from_secs_f64(10.5)));
        m.on_rtt(Time::from_secs_f64(10.5), Duration::from_millis(80));
        assert_eq!(m.rt_prop(), Some(Duration::from_millis(80)));
    }
}
