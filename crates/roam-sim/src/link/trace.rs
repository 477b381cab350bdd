//! Mahimahi trace-driven link capacity.
//!
//! A trace is a list of millisecond timestamps, one line each; every line is an opportunity to
//! drain 1500 bytes from the link's queue (a timestamp repeated k times gives k opportunities in
//! that millisecond). When the trace ends it repeats, shifted by its last timestamp, as
//! Mahimahi's `mm-link` does.

use std::path::Path;
use std::sync::Arc;

use roam_proto::Time;

/// Bytes one delivery opportunity may drain.
pub const BYTES_PER_OPPORTUNITY: u64 = 1500;

const NS_PER_MS: u64 = 1_000_000;

/// A loaded capacity trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    ms: Vec<u64>,
    period_ms: u64,
}

impl Trace {
    /// Parses trace text: one non-negative integer millisecond timestamp per line, in
    /// non-decreasing order; blank lines are ignored. The last timestamp (the period) must be
    /// positive.
    pub fn parse(text: &str) -> Result<Trace, String> {
        let mut ms = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let t: u64 = line.parse().map_err(|_| {
                format!(
                    "line {}: expected a millisecond timestamp, got {line:?}",
                    n + 1
                )
            })?;
            if t > 10_000_000_000 {
                return Err(format!("line {}: timestamp {t} ms is too large", n + 1));
            }
            if ms.last().is_some_and(|&prev| t < prev) {
                return Err(format!("line {}: timestamps must not decrease", n + 1));
            }
            ms.push(t);
        }
        let period_ms = *ms.last().ok_or("the trace is empty")?;
        if period_ms == 0 {
            return Err("the trace's last timestamp (its period) must be positive".into());
        }
        Ok(Trace { ms, period_ms })
    }

    /// Reads and parses a trace file.
    pub fn load(path: &Path) -> Result<Trace, String> {
        use std::io::Read;
        const LIMIT: u64 = 256 << 20;
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(LIMIT + 1).read_to_string(&mut text))
            .map_err(|e| format!("cannot read trace {}: {e}", path.display()))?;
        if text.len() as u64 > LIMIT {
            return Err(format!("trace {}: larger than 256 MiB", path.display()));
        }
        Trace::parse(&text).map_err(|e| format!("trace {}: {e}", path.display()))
    }

    /// Length of one repetition of the trace, in milliseconds.
    pub fn period_ms(&self) -> u64 {
        self.period_ms
    }

    /// Delivery opportunities in one repetition.
    pub fn opportunities_per_period(&self) -> u64 {
        self.ms.len() as u64
    }

    /// Mean capacity in bits per second.
    pub fn mean_rate_bps(&self) -> f64 {
        (self.ms.len() as u64 * BYTES_PER_OPPORTUNITY * 8) as f64 / (self.period_ms as f64 / 1e3)
    }

    /// Highest capacity over any one-second window of one repetition, in bits per second
    /// (the mean rate for traces shorter than a second).
    pub fn peak_rate_bps(&self) -> u64 {
        if self.period_ms < 1000 {
            return self.mean_rate_bps() as u64;
        }
        let (mut lo, mut best) = (0usize, 0usize);
        for hi in 0..self.ms.len() {
            while self.ms[hi] - self.ms[lo] >= 1000 {
                lo += 1;
            }
            best = best.max(hi - lo + 1);
        }
        best as u64 * BYTES_PER_OPPORTUNITY * 8
    }

    /// Nanosecond time of an opportunity at offset `m` ms in repetition `cycle`.
    fn at(&self, cycle: u64, m: u64) -> u64 {
        cycle
            .saturating_mul(self.period_ms)
            .saturating_add(m)
            .saturating_mul(NS_PER_MS)
    }

    fn time(&self, cycle: u64, idx: usize) -> u64 {
        self.at(cycle, self.ms[idx])
    }

    /// Opportunities at or before `t` (the trace starting at time zero).
    pub fn opportunities_until(&self, t: Time) -> u64 {
        let t = t.as_nanos();
        let cycles = t / NS_PER_MS / self.period_ms;
        let partial = self.ms.partition_point(|&m| self.at(cycles, m) <= t);
        cycles
            .saturating_mul(self.ms.len() as u64)
            .saturating_add(partial as u64)
    }
}

/// Position in a repeating trace: the next unused delivery opportunity.
#[derive(Debug, Clone)]
pub(crate) struct TraceCursor {
    trace: Arc<Trace>,
    cycle: u64,
    idx: usize,
}

impl TraceCursor {
    pub(crate) fn new(trace: Arc<Trace>) -> TraceCursor {
        TraceCursor {
            trace,
            cycle: 0,
            idx: 0,
        }
    }

    pub(crate) fn trace(&self) -> &Trace {
        &self.trace
    }

    /// Time of the next unused opportunity.
    pub(crate) fn next_time(&self) -> Time {
        Time::from_nanos(self.trace.time(self.cycle, self.idx))
    }

    /// Skips opportunities before `now` (they went unused); never moves backwards.
    pub(crate) fn seek(&mut self, now: Time) {
        if self.next_time() >= now {
            return;
        }
        let tr = &self.trace;
        let now_ns = now.as_nanos();
        let mut cycle = now_ns / NS_PER_MS / tr.period_ms;
        let mut idx = tr.ms.partition_point(|&m| tr.at(cycle, m) < now_ns);
        if idx == tr.ms.len() {
            cycle += 1;
            idx = 0;
        }
        self.cycle = cycle;
        self.idx = idx;
    }

    /// Uses the current opportunity.
    pub(crate) fn advance(&mut self) {
        self.idx += 1;
        if self.idx == self.trace.ms.len() {
            self.idx = 0;
            self.cycle += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any text parses or is refused with a message; never a panic.
        #[test]
        fn any_text_parses_or_is_refused(text in "[0-9\\n \\-x]{0,64}") {
            let _ = Trace::parse(&text);
        }

        /// Over any valid trace the cursor's opportunities never go back in time, `seek`
        /// never moves it backwards, and it lands at or after the time sought.
        #[test]
        fn cursor_is_monotonic(
            mut ms in prop::collection::vec(0u64..50, 1..20),
            steps in prop::collection::vec((any::<bool>(), 0u64..400), 1..60),
        ) {
            ms.sort_unstable();
            let last = ms.len() - 1;
            ms[last] = ms[last].max(1);
            let text: String = ms.iter().map(|m| format!("{m}\n")).collect();
            let mut c = TraceCursor::new(Arc::new(Trace::parse(&text).unwrap()));
            let mut prev = c.next_time();
            for (seek, at_ms) in steps {
                if seek {
                    let now = Time::from_millis(at_ms);
                    c.seek(now);
                    prop_assert!(c.next_time() >= prev);
                    if prev < now {
                        prop_assert!(c.next_time() >= now);
                    }
                } else {
                    c.advance();
                }
                prop_assert!(c.next_time() >= prev);
                prev = c.next_time();
            }
        }
    }

    #[test]
    fn parse_rejects_bad_traces() {
        assert!(Trace::parse("").is_err());
        assert!(Trace::parse("0\n0\n").is_err());
        assert!(Trace::parse("5\n3\n").is_err());
        assert!(Trace::parse("1\nx\n").is_err());
        assert_eq!(Trace::parse("1\n").unwrap().mean_rate_bps(), 12e6);
    }

    #[test]
    fn cursor_repeats_the_trace() {
        let tr = Arc::new(Trace::parse("0\n0\n2\n").unwrap());
        let mut c = TraceCursor::new(tr.clone());
        let mut times = Vec::new();
        for _ in 0..7 {
            times.push(c.next_time().as_nanos() / NS_PER_MS);
            c.advance();
        }
        assert_eq!(times, vec![0, 0, 2, 2, 2, 4, 4]);
        c.seek(Time::from_millis(9));
        assert_eq!(c.next_time(), Time::from_millis(10));
        assert_eq!(tr.opportunities_until(Time::from_millis(0)), 2);
        assert_eq!(tr.opportunities_until(Time::from_millis(3)), 5);
        assert_eq!(tr.opportunities_until(Time::from_millis(4)), 6 + 2);
    }
}
