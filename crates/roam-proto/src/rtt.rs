//! Round-trip time estimation and the retransmission timeout (RFC 6298).

use std::time::Duration;

use crate::Time;

/// `d` in whole nanoseconds, saturating at `u64::MAX` (584 years).
#[inline]
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// RFC 6298 estimator: SRTT, RTTVAR, RTO with bounds and exponential backoff.
///
/// The running values are whole nanoseconds (`u64`), not `Duration`s: the estimator runs on
/// every acknowledgement, and `Duration`'s arithmetic (seconds and nanoseconds, normalised and
/// overflow-checked at every step) cost several times as much. The results are the same
/// (RFC 6298's divisions by 2, 4 and 8 are exact on whole seconds, as 10^9 is a multiple of
/// 8) up to values of about 70 years, beyond which the arithmetic saturates instead of
/// overflowing.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    /// SRTT, once a sample was taken.
    srtt: Option<u64>,
    rttvar: u64,
    latest: u64,
    /// Smallest sample, once one was taken.
    min: Option<u64>,
    min_rto: Duration,
    max_rto: Duration,
    /// `min_rto` and `max_rto` in nanoseconds (saturated).
    min_rto_ns: u64,
    max_rto_ns: u64,
    initial_rto: Duration,
    granularity: u64,
    backoff: u32,
}

impl RttEstimator {
    /// A fresh estimator (RFC 6298 §2.1: RTO = initial value until the first sample).
    pub fn new(initial_rto: Duration, min_rto: Duration, max_rto: Duration) -> Self {
        let max_rto = max_rto.max(min_rto);
        RttEstimator {
            srtt: None,
            rttvar: 0,
            latest: 0,
            min: None,
            min_rto,
            max_rto,
            min_rto_ns: nanos(min_rto),
            max_rto_ns: nanos(max_rto),
            initial_rto,
            granularity: 1_000_000,
            backoff: 0,
        }
    }

    /// Feeds one RTT measurement (RFC 6298 §2.2–2.3, α = 1/8, β = 1/4). A valid sample also
    /// clears the backoff (RFC 6298 §5.7 allows collapsing it once new data is acknowledged).
    pub fn on_sample(&mut self, rtt: Duration) {
        let rtt = nanos(rtt);
        self.latest = rtt;
        self.min = Some(self.min.map_or(rtt, |m| m.min(rtt)));
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            Some(srtt) => {
                let err = srtt.abs_diff(rtt);
                self.rttvar = self.rttvar.saturating_mul(3).saturating_add(err) / 4;
                self.srtt = Some(srtt.saturating_mul(7).saturating_add(rtt) / 8);
            }
        }
        self.backoff = 0;
    }

    /// Smoothed RTT, if any sample was taken.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt.map(Duration::from_nanos)
    }

    /// The smoothed RTT, or the initial RTO before the first sample (a conservative guess).
    pub fn srtt_or_initial(&self) -> Duration {
        self.srtt().unwrap_or(self.initial_rto)
    }

    /// Most recent sample.
    pub fn latest(&self) -> Duration {
        Duration::from_nanos(self.latest)
    }

    /// Smallest sample seen (`Duration::MAX` before any).
    pub fn min_rtt(&self) -> Duration {
        self.min.map_or(Duration::MAX, Duration::from_nanos)
    }

    /// `SRTT + max(G, 4·RTTVAR)` in nanoseconds, once a sample was taken.
    #[inline]
    fn estimate(&self) -> Option<u64> {
        let srtt = self.srtt?;
        Some(srtt.saturating_add(self.granularity.max(self.rttvar.saturating_mul(4))))
    }

    /// The estimator's unbounded timeout estimate `SRTT + max(G, 4·RTTVAR)` (RFC 6298 §2.3
    /// without the 1 s floor and without backoff); the initial RTO before any sample. Used as
    /// TCP-Probing's probe timer (tcp-probing.txt §3.1, see docs/DECISIONS.md).
    pub fn timeout_estimate(&self) -> Duration {
        self.estimate()
            .map_or(self.initial_rto, Duration::from_nanos)
    }

    /// The largest RTO (RFC 6298 §2.5's upper bound).
    pub fn max_rto(&self) -> Duration {
        self.max_rto
    }

    /// Current RTO including backoff, clamped to [min_rto, max_rto] (RFC 6298 §2.4–2.5).
    pub fn rto(&self) -> Duration {
        let base = match self.estimate() {
            // The bounds in nanoseconds: `max_rto_ns` saturated only when `max_rto` is beyond
            // any estimate.
            Some(e) => Duration::from_nanos(e.clamp(self.min_rto_ns, self.max_rto_ns)),
            None => self.initial_rto.clamp(self.min_rto, self.max_rto),
        };
        if self.backoff == 0 {
            // base <= max_rto already.
            return base;
        }
        let factor = 1u32.checked_shl(self.backoff).unwrap_or(u32::MAX);
        base.checked_mul(factor)
            .unwrap_or(self.max_rto)
            .min(self.max_rto)
    }

    /// `now` + [`RttEstimator::rto`] (saturating): when a retransmission timer armed now
    /// expires.
    #[inline]
    pub fn rto_deadline(&self, now: Time) -> Time {
        match self.estimate() {
            Some(e) if self.backoff == 0 => {
                let rto = e.clamp(self.min_rto_ns, self.max_rto_ns);
                Time::from_nanos(now.as_nanos().saturating_add(rto))
            }
            _ => now + self.rto(),
        }
    }

    /// Doubles the RTO (RFC 6298 §5.5).
    pub fn back_off(&mut self) {
        self.backoff = (self.backoff + 1).min(16);
    }

    /// Number of consecutive backoffs.
    pub fn backoff_count(&self) -> u32 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(
            Duration::from_secs(1),
            Duration::from_millis(200),
            Duration::from_secs(60),
        )
    }

    /// RFC 6298 in `Duration` arithmetic, as the estimator computed it before it kept
    /// nanoseconds: (SRTT, RTTVAR).
    fn reference(samples: &[Duration]) -> (Duration, Duration) {
        let (mut srtt, mut rttvar) = (samples[0], samples[0] / 2);
        for &rtt in &samples[1..] {
            let err = srtt.abs_diff(rtt);
            rttvar = (rttvar * 3 + err) / 4;
            srtt = (srtt * 7 + rtt) / 8;
        }
        (srtt, rttvar)
    }

    /// Whole-nanosecond arithmetic gives exactly what `Duration`'s did, from nanoseconds to
    /// minutes, and the deadline is `now + rto()` with or without backoff.
    #[test]
    fn nanosecond_arithmetic_matches_duration_arithmetic() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut samples = Vec::new();
        for i in 0..2000u32 {
            // xorshift: samples of every magnitude up to about 100 s.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            samples.push(Duration::from_nanos(x % (1u64 << (10 + i % 27))));
        }
        let mut e = est();
        let now = Time::from_millis(12_345);
        for n in 1..=samples.len() {
            e.on_sample(samples[n - 1]);
            let (srtt, rttvar) = reference(&samples[..n]);
            assert_eq!(e.srtt(), Some(srtt), "sample {n}");
            let estimate = srtt + Duration::from_millis(1).max(rttvar * 4);
            assert_eq!(e.timeout_estimate(), estimate);
            let rto = estimate.clamp(Duration::from_millis(200), Duration::from_secs(60));
            assert_eq!(e.rto(), rto);
            assert_eq!(e.rto_deadline(now), now + rto);
            assert_eq!(e.min_rtt(), samples[..n].iter().copied().min().unwrap());
            assert_eq!(e.latest(), samples[n - 1]);
        }
        e.back_off();
        assert_eq!(e.rto_deadline(now), now + e.rto());
        assert_eq!(e.rto_deadline(Time::MAX), Time::MAX);
    }

    #[test]
    fn first_sample_sets_srtt_and_half_variance() {
        let mut e = est();
        e.on_sample(Duration::from_millis(100));
        assert_eq!(e.srtt(), Some(Duration::from_millis(100)));
        assert_eq!(e.rto(), Duration::from_millis(300));
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let mut e = est();
        e.on_sample(Duration::from_millis(100));
        e.back_off();
        assert_eq!(e.rto(), Duration::from_millis(600));
        for _ in 0..40 {
            e.back_off();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
    }

    #[test]
    fn rto_respects_minimum() {
        let mut e = est();
        for _ in 0..50 {
            e.on_sample(Duration::from_millis(1));
        }
        assert_eq!(e.rto(), Duration::from_millis(200));
    }
}
