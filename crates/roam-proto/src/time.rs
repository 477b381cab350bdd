//! Virtual or real time as seen by an engine: supplied by the host, never read from a clock.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// A point in time, in nanoseconds since an arbitrary epoch chosen by the host (the simulator
/// starts at zero; the UDP runtime uses the moment it started).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(u64);

impl Time {
    /// The epoch.
    pub const ZERO: Time = Time(0);
    /// The far future; used as "never" in comparisons.
    pub const MAX: Time = Time(u64::MAX);

    /// From nanoseconds since the epoch.
    pub const fn from_nanos(ns: u64) -> Time {
        Time(ns)
    }
    /// From microseconds since the epoch (saturating).
    pub const fn from_micros(us: u64) -> Time {
        Time(us.saturating_mul(1_000))
    }
    /// From milliseconds since the epoch (saturating).
    pub const fn from_millis(ms: u64) -> Time {
        Time(ms.saturating_mul(1_000_000))
    }
    /// From seconds since the epoch; negative or NaN gives zero, too large saturates.
    pub fn from_secs_f64(s: f64) -> Time {
        if s.is_nan() || s <= 0.0 {
            Time(0)
        } else {
            let ns = s * 1e9;
            if ns >= u64::MAX as f64 {
                Time::MAX
            } else {
                Time(ns as u64)
            }
        }
    }
    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Microseconds since the epoch.
    pub const fn as_micros(self) -> u64 {
        self.0 / 1_000
    }
    /// Seconds since the epoch.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// `self - earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
    /// `self + d`, saturating at [`Time::MAX`].
    pub fn saturating_add(self, d: Duration) -> Time {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        Time(self.0.saturating_add(ns))
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        self.saturating_add(d)
    }
}

impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        *self = self.saturating_add(d);
    }
}

impl Sub<Time> for Time {
    type Output = Duration;
    /// Saturating difference (zero if `rhs` is later).
    fn sub(self, rhs: Time) -> Duration {
        self.saturating_since(rhs)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_instead_of_overflowing() {
        assert_eq!(Time::MAX + Duration::from_secs(1), Time::MAX);
        assert_eq!(Time::ZERO - Time::from_secs_f64(1.0), Duration::ZERO);
        assert_eq!(Time::from_secs_f64(f64::NAN), Time::ZERO);
        assert_eq!(Time::from_secs_f64(1e30), Time::MAX);
        assert_eq!(Time::from_millis(1500).as_secs_f64(), 1.5);
    }
}
