//! A budget for the resets a host sends (our addition; the RCP paper has no resets).
//!
//! A host answers every request for a connection it does not hold with a reset
//! ([`super::reset_for`]). Without a limit, anyone can make it send one datagram per datagram
//! received, with a forged source address if they like. The host therefore draws each reset
//! from a token bucket: `per_second` tokens a second, at most `per_second` saved up (one second's
//! worth, the burst). Only a datagram that would get a reset spends a token, so garbage cannot
//! drain the budget that answers real requests. The default, 200 a second, is FreeBSD's
//! `net.inet.icmp.icmplim`, which limits that kernel's resets for closed ports the same way.
//! Time comes from the caller, so the budget is as deterministic as the rest of the engine.

use crate::Time;

/// Token-bucket limit on resets (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResetLimiter {
    per_second: u64,
    /// Saved credit in token-nanoseconds: one reset costs 10⁹.
    credit: u64,
    last: Option<Time>,
}

/// One token, in token-nanoseconds.
const TOKEN: u64 = 1_000_000_000;

impl ResetLimiter {
    /// Resets a second when nothing else is configured.
    pub const DEFAULT_PER_SECOND: u32 = 200;

    /// A budget of `per_second` resets a second, starting with a full second's worth;
    /// 0 means no limit.
    pub fn new(per_second: u32) -> Self {
        let per_second = u64::from(per_second);
        ResetLimiter {
            per_second,
            credit: per_second * TOKEN,
            last: None,
        }
    }

    /// True if a reset may be sent at `now` (and takes it from the budget). A clock that steps
    /// back earns nothing until it passes the latest time seen.
    pub fn allow(&mut self, now: Time) -> bool {
        if self.per_second == 0 {
            return true;
        }
        let earned = self.last.map_or(0, |last| {
            let ns = u64::try_from(now.saturating_since(last).as_nanos()).unwrap_or(u64::MAX);
            ns.saturating_mul(self.per_second)
        });
        self.last = Some(self.last.map_or(now, |last| last.max(now)));
        self.credit = self
            .credit
            .saturating_add(earned)
            .min(self.per_second * TOKEN);
        if self.credit >= TOKEN {
            self.credit -= TOKEN;
            true
        } else {
            false
        }
    }
}

impl Default for ResetLimiter {
    fn default() -> Self {
        ResetLimiter::new(Self::DEFAULT_PER_SECOND)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(l: &mut ResetLimiter, at: Time, n: usize) -> usize {
        (0..n).filter(|_| l.allow(at)).count()
    }

    #[test]
    fn a_burst_gets_one_seconds_worth_then_the_rate() {
        let mut l = ResetLimiter::new(10);
        assert_eq!(allowed(&mut l, Time::from_millis(0), 50), 10, "the burst");
        assert_eq!(
            allowed(&mut l, Time::from_millis(50), 50),
            0,
            "0.5 token earned"
        );
        assert_eq!(
            allowed(&mut l, Time::from_millis(100), 50),
            1,
            "one more token"
        );
        assert_eq!(
            allowed(&mut l, Time::from_millis(1100), 50),
            10,
            "never more than a burst"
        );
    }

    #[test]
    fn a_clock_stepping_back_earns_nothing() {
        let mut l = ResetLimiter::new(10);
        assert_eq!(allowed(&mut l, Time::from_millis(5000), 50), 10);
        assert_eq!(allowed(&mut l, Time::from_millis(1000), 50), 0);
        assert_eq!(
            allowed(&mut l, Time::from_millis(5050), 50),
            0,
            "earned from 5000 ms"
        );
        assert_eq!(allowed(&mut l, Time::from_millis(5100), 50), 1);
    }

    #[test]
    fn zero_is_no_limit_and_huge_gaps_do_not_overflow() {
        let mut off = ResetLimiter::new(0);
        assert_eq!(allowed(&mut off, Time::ZERO, 10_000), 10_000);
        let mut l = ResetLimiter::new(u32::MAX);
        assert!(l.allow(Time::ZERO));
        assert!(l.allow(Time::from_secs_f64(1e9)));
    }
}
