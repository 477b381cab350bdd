//! Policy-based bandwidth aggregation (rcp-r2cp.txt §4.4.3): "a simple token-bucket
//! algorithm … The token is generated depending on the target data rate, and is consumed when
//! data is bound to an RCP pipe. … the secondary pipe (RCP-2) is allowed to consume only
//! tokens not used by the first pipe (RCP-1). R²CP freezes an RCP pipe whenever there is no
//! more token available."

use std::time::Duration;

use crate::Time;

/// The policy a host sets on an R²CP connection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenPolicy {
    /// Target data rate (bits/s).
    pub rate_bps: f64,
    /// Bucket depth (bytes): tokens saved up at most.
    pub depth_bytes: u64,
}

/// The token bucket of a [`TokenPolicy`].
#[derive(Debug, Clone)]
pub struct TokenBucket {
    policy: TokenPolicy,
    tokens: f64,
    last: Time,
}

impl TokenBucket {
    /// A bucket that starts full at `now`.
    pub fn new(policy: TokenPolicy, now: Time) -> Self {
        let rate = if policy.rate_bps.is_finite() && policy.rate_bps > 0.0 {
            policy.rate_bps
        } else {
            0.0
        };
        let policy = TokenPolicy {
            rate_bps: rate,
            ..policy
        };
        TokenBucket {
            tokens: policy.depth_bytes as f64,
            policy,
            last: now,
        }
    }

    /// The policy.
    pub fn policy(&self) -> TokenPolicy {
        self.policy
    }

    fn refill(&mut self, now: Time) {
        if now > self.last {
            let dt = now.saturating_since(self.last).as_secs_f64();
            self.tokens =
                (self.tokens + dt * self.policy.rate_bps / 8.0).min(self.policy.depth_bytes as f64);
            self.last = now;
        }
    }

    /// Takes `bytes` tokens if the bucket holds them.
    pub fn take(&mut self, now: Time, bytes: u64) -> bool {
        self.refill(now);
        if self.tokens + 1e-9 >= bytes as f64 {
            self.tokens = (self.tokens - bytes as f64).max(0.0);
            true
        } else {
            false
        }
    }

    /// When the bucket will next hold `bytes` tokens (`None` at a zero rate).
    pub fn ready_at(&self, bytes: u64) -> Option<Time> {
        let missing = bytes as f64 - self.tokens;
        if missing <= 0.0 {
            return Some(self.last);
        }
        if self.policy.rate_bps <= 0.0 || bytes > self.policy.depth_bytes {
            return None;
        }
        let secs = missing * 8.0 / self.policy.rate_bps;
        Some(self.last + Duration::from_secs_f64(secs.min(1e6)) + Duration::from_nanos(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_accrue_at_the_target_rate_up_to_the_depth() {
        let p = TokenPolicy {
            rate_bps: 8000.0,
            depth_bytes: 2000,
        };
        let mut b = TokenBucket::new(p, Time::ZERO);
        assert!(b.take(Time::ZERO, 2000));
        assert!(!b.take(Time::ZERO, 1000));
        let t = b.ready_at(1000).unwrap();
        assert!(t > Time::from_millis(999) && t < Time::from_millis(1001));
        assert!(b.take(Time::from_millis(1000), 1000));
        assert!(
            !b.take(Time::from_millis(10_000), 3000),
            "never beyond the depth"
        );
        assert!(b.take(Time::from_millis(10_000), 2000));
    }
}
