//! HyStart, the original hybrid slow start (Ha & Rhee, "Taming the elephants: New TCP slow
//! start", Computer Networks 55(9), 2011), with the detection rules and defaults Linux's CUBIC
//! runs (`net/ipv4/tcp_cubic.c`: `hystart = 1`, `hystart_detect = ACK_TRAIN | DELAY`,
//! `hystart_low_window = 16`, `hystart_ack_delta_us = 2000`; read to learn the defaults).
//!
//! Unlike HyStart++ (RFC 9406, [`super::hystart`]) it has no Conservative Slow Start: the
//! first sign that the pipe is full ends slow start at once (`ssthresh = cwnd`). Two signs,
//! checked only while cwnd is at least [`LOW_WINDOW`] segments:
//!
//! - **ACK train** (paper §3.1): within a round, acknowledgements spaced at most
//!   [`ACK_DELTA`] apart form a train; once the train has lasted more than half the minimum
//!   RTT, the window is taken to have reached the BDP. *Our choice:* Linux adds up to 1 ms for
//!   TSO/GRO aggregation before halving; roam has no segmentation offload, so nothing is added.
//! - **Delay increase** (paper §3.2): the minimum of a round's RTT samples, once it has at
//!   least [`MIN_SAMPLES`] of them, above the connection's minimum RTT by
//!   `clamp(min_rtt / 8, 4 ms, 16 ms)`. The baseline is the minimum over the whole
//!   connection, not the previous round's (HyStart++'s).
//!
//! Rounds as in [`super::hystart`]: one ends once the bytes delivered since it began reach the
//! bytes in flight when it began (our stand-in for `end_seq = snd_nxt`).

use std::time::Duration;

use crate::Time;

/// Slow start is left by HyStart only once cwnd is at least this many segments.
pub const LOW_WINDOW: u64 = 16;
/// Acknowledgements at most this far apart belong to one train.
pub const ACK_DELTA: Duration = Duration::from_millis(2);
/// RTT samples a round needs before the delay test may fire.
pub const MIN_SAMPLES: u32 = 8;
const DELAY_MIN: Duration = Duration::from_millis(4);
const DELAY_MAX: Duration = Duration::from_millis(16);

/// The classic HyStart detector. See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct ClassicHyStart {
    found: bool,
    /// Minimum RTT over the connection.
    min_rtt: Option<Duration>,
    delivered: u64,
    round_end: u64,
    round_start: Time,
    last_ack: Time,
    /// Minimum RTT of the current round.
    round_min: Option<Duration>,
    samples: u32,
}

impl ClassicHyStart {
    pub(crate) fn new() -> Self {
        ClassicHyStart {
            found: false,
            min_rtt: None,
            delivered: 0,
            round_end: 0,
            round_start: Time::ZERO,
            last_ack: Time::ZERO,
            round_min: None,
            samples: 0,
        }
    }

    /// True once slow start was ended by HyStart (or by [`ClassicHyStart::finish`]).
    #[cfg(test)]
    pub(crate) fn found(&self) -> bool {
        self.found
    }

    /// A loss ended slow start: nothing more to detect.
    pub(crate) fn finish(&mut self) {
        self.found = true;
    }

    /// One acknowledgement in slow start: `bytes` newly delivered, `in_flight` after it, its
    /// RTT sample, and cwnd in segments before it. Returns true if it ends slow start.
    pub(crate) fn on_ack(
        &mut self,
        now: Time,
        bytes: u64,
        in_flight: u64,
        rtt: Option<Duration>,
        cwnd_segments: u64,
    ) -> bool {
        self.delivered = self.delivered.saturating_add(bytes);
        let Some(rtt) = rtt else {
            return false;
        };
        let rtt = rtt.max(Duration::from_micros(1));
        let min_rtt = self.min_rtt.map_or(rtt, |m| m.min(rtt));
        self.min_rtt = Some(min_rtt);
        if self.found || cwnd_segments < LOW_WINDOW {
            return false;
        }
        if self.delivered >= self.round_end {
            // A new round: the train and the round's samples start again.
            self.round_end = self.delivered.saturating_add(in_flight.max(1));
            self.round_start = now;
            self.last_ack = now;
            self.round_min = None;
            self.samples = 0;
        }
        // ACK train (paper §3.1): an unpaced sender's train ends the round's search once it
        // lasted half the minimum RTT.
        if now.saturating_since(self.last_ack) <= ACK_DELTA {
            self.last_ack = now;
            if now.saturating_since(self.round_start) > min_rtt / 2 {
                self.found = true;
            }
        }
        // Delay increase (paper §3.2).
        let round_min = self.round_min.map_or(rtt, |m| m.min(rtt));
        self.round_min = Some(round_min);
        if self.samples < MIN_SAMPLES {
            self.samples += 1;
        } else if round_min > min_rtt + (min_rtt / 8).clamp(DELAY_MIN, DELAY_MAX) {
            self.found = true;
        }
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// Below 16 segments nothing is detected, however high the RTT.
    #[test]
    fn nothing_below_the_low_window() {
        let mut h = ClassicHyStart::new();
        for i in 0..100 {
            assert!(!h.on_ack(Time::from_millis(i), 1000, 10_000, Some(ms(40 + i)), 15));
        }
        assert!(!h.found());
    }

    /// Delay: the connection's minimum is 40 ms, so the threshold is clamp(5, 4, 16) = 5 ms;
    /// a round whose samples stay at 45 ms never fires, one at 46 ms fires at its ninth sample.
    #[test]
    fn a_round_minimum_above_min_rtt_plus_an_eighth_ends_slow_start() {
        let mut h = ClassicHyStart::new();
        // ACKs 10 ms apart: no train.
        let mut t = 0;
        let mut ack = |h: &mut ClassicHyStart, rtt: u64| {
            t += 10;
            h.on_ack(Time::from_millis(t), 1000, 20_000, Some(ms(rtt)), 20)
        };
        assert!(!ack(&mut h, 40));
        for _ in 0..30 {
            assert!(!ack(&mut h, 45));
        }
        // Then 46 ms. The round that began at the 20th ACK of 45 ms (20 000 bytes in flight)
        // ends at the tenth ACK of 46 ms (index 9); the ninth sample of the next round, index
        // 17, fires.
        let mut fired = None;
        for i in 0..40 {
            if ack(&mut h, 46) {
                fired = Some(i);
                break;
            }
        }
        assert_eq!(fired, Some(17));
        assert!(h.found());
    }

    /// ACK train: ACKs 1 ms apart with a 30 ms minimum RTT; the train passes 15 ms at the 16th
    /// ACK after the round began (16 ms > 15 ms).
    #[test]
    fn an_ack_train_longer_than_half_the_min_rtt_ends_slow_start() {
        let mut h = ClassicHyStart::new();
        let mut fired = None;
        for i in 0..40u64 {
            if h.on_ack(Time::from_millis(100 + i), 1000, 100_000, Some(ms(30)), 20) {
                fired = Some(i);
                break;
            }
        }
        assert_eq!(fired, Some(16));
    }

    /// A gap of more than 2 ms breaks the train for the rest of the round.
    #[test]
    fn a_gap_breaks_the_train() {
        let mut h = ClassicHyStart::new();
        assert!(!h.on_ack(Time::from_millis(100), 1000, 100_000, Some(ms(30)), 20));
        for i in 1..10u64 {
            assert!(!h.on_ack(Time::from_millis(100 + i), 1000, 100_000, Some(ms(30)), 20));
        }
        // 3 ms gap, then 1 ms spacing again: last_ack stays at 109 ms, so no ACK joins.
        for i in 0..40u64 {
            assert!(!h.on_ack(Time::from_millis(112 + i), 1000, 100_000, Some(ms(30)), 20));
        }
    }

    #[test]
    fn finish_is_final() {
        let mut h = ClassicHyStart::new();
        h.finish();
        assert!(!h.on_ack(Time::from_millis(100), 1000, 1000, Some(ms(500)), 100));
        assert!(h.found());
    }
}
