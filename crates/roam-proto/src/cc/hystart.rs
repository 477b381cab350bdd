//! HyStart++ (RFC 9406): leaves the first slow start when the round's minimum RTT rises,
//! before the queue overflows, through a short Conservative Slow Start (CSS).
//!
//! Rounds (RFC 9406 §4.2 `windowEnd = SND.NXT`): the controller sees no sequence numbers,
//! so a round ends once the bytes delivered since it began reach the bytes that were in flight
//! when it began — the data outstanding at the round's start has then been delivered, which is
//! what "an ACK for `windowEnd`" means for a sender that is not application-limited.

use std::time::Duration;

/// RFC 9406 §4.3 constants.
const MIN_RTT_THRESH: Duration = Duration::from_millis(4);
const MAX_RTT_THRESH: Duration = Duration::from_millis(16);
const MIN_RTT_DIVISOR: u32 = 8;
const N_RTT_SAMPLE: u32 = 8;
/// Slow-start growth is divided by this in CSS.
pub(crate) const CSS_GROWTH_DIVISOR: u64 = 4;
const CSS_ROUNDS: u32 = 5;

/// Where HyStart++ stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Standard slow start (RFC 9406 §4.2 first part).
    SlowStart,
    /// Conservative Slow Start after an RTT increase, with `rounds` rounds completed in it.
    Css { rounds: u32 },
    /// Slow start is over: the caller sets `ssthresh = cwnd` and enters congestion avoidance.
    Done,
}

/// The per-round RTT tracker of RFC 9406 §4.2.
#[derive(Debug, Clone)]
pub(crate) struct HyStart {
    phase: Phase,
    /// Delivered bytes at which the current round ends.
    round_end: u64,
    /// Bytes delivered in total (the controller's counter).
    delivered: u64,
    last_round_min: Option<Duration>,
    current_round_min: Option<Duration>,
    samples: u32,
    css_baseline: Option<Duration>,
}

impl HyStart {
    pub(crate) fn new() -> Self {
        HyStart {
            phase: Phase::SlowStart,
            round_end: 0,
            delivered: 0,
            last_round_min: None,
            current_round_min: None,
            samples: 0,
            css_baseline: None,
        }
    }

    pub(crate) fn phase(&self) -> Phase {
        self.phase
    }

    /// Ends HyStart++ (a loss or a timeout: RFC 9406 §4.2, "If loss or ECN-marking is
    /// observed anytime during standard slow start or CSS, ... enter congestion avoidance";
    /// it is used only in the initial slow start).
    pub(crate) fn finish(&mut self) {
        self.phase = Phase::Done;
    }

    /// One acknowledgement in slow start or CSS: `bytes` newly delivered, `in_flight` after it,
    /// and its RTT sample. Returns the phase after the event.
    pub(crate) fn on_ack(&mut self, bytes: u64, in_flight: u64, rtt: Option<Duration>) -> Phase {
        if self.phase == Phase::Done {
            return self.phase;
        }
        self.delivered = self.delivered.saturating_add(bytes);
        if let Some(rtt) = rtt {
            // RFC 9406 §4.2: "For each arriving ACK in slow start, where N is the number of
            // previously unacknowledged bytes acknowledged in the arriving ACK: Update the RTT
            // sample count; keep track of the minimum observed RTT".
            self.samples = self.samples.saturating_add(1);
            self.current_round_min = Some(self.current_round_min.map_or(rtt, |m| m.min(rtt)));
        }
        match self.phase {
            Phase::SlowStart => {
                if let (Some(last), Some(cur)) = (self.last_round_min, self.current_round_min) {
                    if self.samples >= N_RTT_SAMPLE {
                        let thresh = (last / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                        if cur >= last + thresh {
                            self.css_baseline = Some(cur);
                            self.phase = Phase::Css { rounds: 0 };
                        }
                    }
                }
            }
            Phase::Css { .. } => {
                // RFC 9406 §4.2: back to slow start if the RTT fell below the baseline.
                if let (Some(base), Some(cur)) = (self.css_baseline, self.current_round_min) {
                    if self.samples >= N_RTT_SAMPLE && cur < base {
                        self.last_round_min = Some(base);
                        self.css_baseline = None;
                        self.phase = Phase::SlowStart;
                    }
                }
            }
            Phase::Done => {}
        }
        if self.delivered >= self.round_end {
            // A round ended: start the next one (RFC 9406 §4.2 "At the start of each round").
            self.last_round_min = self.current_round_min.or(self.last_round_min);
            self.current_round_min = None;
            self.samples = 0;
            self.round_end = self.delivered.saturating_add(in_flight.max(1));
            if let Phase::Css { rounds } = self.phase {
                let rounds = rounds + 1;
                self.phase = if rounds >= CSS_ROUNDS {
                    Phase::Done
                } else {
                    Phase::Css { rounds }
                };
            }
        }
        self.phase
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds one round of `n` ACKs of 1000 bytes with RTT `rtt_ms`, `in_flight` after each.
    fn round(h: &mut HyStart, n: u32, rtt_ms: u64, in_flight: u64) -> Phase {
        let mut p = h.phase();
        for _ in 0..n {
            p = h.on_ack(1000, in_flight, Some(Duration::from_millis(rtt_ms)));
        }
        p
    }

    #[test]
    fn an_rtt_rise_of_an_eighth_enters_css_and_five_rounds_end_slow_start() {
        let mut h = HyStart::new();
        // First ACK opens round 1 (ends after 10 000 more bytes).
        assert_eq!(
            h.on_ack(1000, 10_000, Some(Duration::from_millis(80))),
            Phase::SlowStart
        );
        assert_eq!(round(&mut h, 10, 80, 10_000), Phase::SlowStart);
        // lastRoundMinRTT = 80 ms: threshold max(4, min(80/8, 16)) = 10 ms; 89 ms is not enough.
        assert_eq!(round(&mut h, 10, 89, 10_000), Phase::SlowStart);
        // The round with 89 ms ended: last = 89, threshold 11.125 ms; 101 ms (≥ 100.125) needs
        // eight samples in the round first.
        assert_eq!(round(&mut h, 7, 101, 10_000), Phase::SlowStart);
        let eighth = h.on_ack(1000, 10_000, Some(Duration::from_millis(101)));
        assert_eq!(eighth, Phase::Css { rounds: 0 });
        // The rest of that round, then four more CSS rounds at the same RTT.
        let mut p = round(&mut h, 2, 101, 10_000);
        assert_eq!(p, Phase::Css { rounds: 1 });
        for k in 2..=5 {
            p = round(&mut h, 10, 101, 10_000);
            if k < 5 {
                assert_eq!(p, Phase::Css { rounds: k });
            }
        }
        assert_eq!(p, Phase::Done);
    }

    #[test]
    fn an_rtt_below_the_baseline_returns_to_slow_start() {
        let mut h = HyStart::new();
        h.on_ack(1000, 10_000, Some(Duration::from_millis(40)));
        round(&mut h, 10, 40, 10_000);
        round(&mut h, 8, 50, 10_000);
        assert!(matches!(h.phase(), Phase::Css { .. }));
        round(&mut h, 2, 50, 10_000);
        assert_eq!(round(&mut h, 8, 45, 10_000), Phase::SlowStart);
    }

    #[test]
    fn finish_is_final() {
        let mut h = HyStart::new();
        h.finish();
        assert_eq!(round(&mut h, 50, 500, 1000), Phase::Done);
    }
}
