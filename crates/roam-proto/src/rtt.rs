//! Round-trip time estimation and the retransmission timeout (RFC 6298).

use std::time::Duration;

/// RFC 6298 estimator: SRTT, RTTVAR, RTO with bounds and exponential backoff.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    latest: Duration,
    min: Duration,
    min_rto: Duration,
    max_rto: Duration,
    initial_rto: Duration,
    granularity: Duration,
    backoff: u32,
}

impl RttEstimator {
    /// A fresh estimator (RFC 6298 §2.1: RTO = initial value until the first sample).
    pub fn new(initial_rto: Duration, min_rto: Duration, max_rto: Duration) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            latest: Duration::ZERO,
            min: Duration::MAX,
            min_rto,
            max_rto: max_rto.max(min_rto),
            initial_rto,
            granularity: Duration::from_millis(1),
            backoff: 0,
        }
    }

    /// Feeds one RTT measurement (RFC 6298 §2.2–2.3, α = 1/8, β = 1/4). A valid sample also
    /// clears the backoff (RFC 6298 §5.7 allows collapsing it once new data is acknowledged).
    pub fn on_sample(&mut self, rtt: Duration) {
        self.latest = rtt;
        self.min = self.min.min(rtt);
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            Some(srtt) => {
                let err = srtt.abs_diff(rtt);
                self.rttvar = (self.rttvar * 3 + err) / 4;
                self.srtt = Some((srtt * 7 + rtt) / 8);
            }
        }
        self.backoff = 0;
    }

    /// Smoothed RTT, if any sample was taken.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// The smoothed RTT, or the initial RTO before the first sample (a conservative guess).
    pub fn srtt_or_initial(&self) -> Duration {
        self.srtt.unwrap_or(self.initial_rto)
    }

    /// Most recent sample.
    pub fn latest(&self) -> Duration {
        self.latest
    }

    /// Smallest sample seen (`Duration::MAX` before any).
    pub fn min_rtt(&self) -> Duration {
        self.min
    }

    /// The estimator's unbounded timeout estimate `SRTT + max(G, 4·RTTVAR)` (RFC 6298 §2.3
    /// without the 1 s floor and without backoff); the initial RTO before any sample. Used as
    /// TCP-Probing's probe timer (tcp-probing.txt §3.1, see docs/DECISIONS.md).
    pub fn timeout_estimate(&self) -> Duration {
        match self.srtt {
            None => self.initial_rto,
            Some(srtt) => srtt + self.granularity.max(self.rttvar * 4),
        }
    }

    /// The largest RTO (RFC 6298 §2.5's upper bound).
    pub fn max_rto(&self) -> Duration {
        self.max_rto
    }

    /// Current RTO including backoff, clamped to [min_rto, max_rto] (RFC 6298 §2.4–2.5).
    pub fn rto(&self) -> Duration {
        let base = match self.srtt {
            None => self.initial_rto,
            Some(srtt) => srtt + self.granularity.max(self.rttvar * 4),
        };
        let base = base.clamp(self.min_rto, self.max_rto);
        if self.backoff == 0 {
            // base <= max_rto already.
            return base;
        }
        let factor = 1u32.checked_shl(self.backoff).unwrap_or(u32::MAX);
        base.checked_mul(factor)
            .unwrap_or(self.max_rto)
            .min(self.max_rto)
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
