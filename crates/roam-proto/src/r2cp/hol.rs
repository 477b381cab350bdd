//! Head-of-line awareness (ours; `docs/R2CP.md`, "Head-of-line awareness"). R²CP's receiver
//! knows which hole blocks the application and what every pipe has outstanding; these are the
//! decisions it takes from that, as pure functions of hand-checkable pipe states:
//!
//! - **arrival delay**: when a request sent now through a pipe would bring its data — its base
//!   RTT plus the time to deliver, at its measured rate, what it has outstanding beyond its
//!   bandwidth-delay product (a deep queue shows there long before the smoothed RTT catches
//!   up), and at least the smoothed RTT;
//! - **delay budget** (the admission rule): a pipe takes a new unit only if that unit would
//!   arrive before the other pipes could fill half the receive buffer above it (ECF, Lim et
//!   al. CoNEXT 2017, and BLEST, Ferlin et al. IFIP Networking 2016, decide the same question
//!   per segment at the sender; here the receiver bounds each pipe's outstanding requests),
//!   and never further ahead than a rate is measured over (4 s);
//! - **the blocking hole**: the unit at RCV.NXT, outstanding on a pipe that would bring it later
//!   than another pipe with room, is requested once more through that pipe (MPTCP's
//!   opportunistic retransmission, Raiciu et al. NSDI 2012, done by the receiver);
//! - **silence**: a pipe that was delivering at a known rate and has been silent for its
//!   smoothed RTT (at least twice its base RTT) plus four RTT deviations plus four packet
//!   times is taken for dead long before its retransmission timeout (1 s floor) fires; its
//!   outstanding units are requested elsewhere.

use std::time::Duration;

use super::estimate::RATE_WINDOW_MAX;
use crate::Time;

/// What the scheduler knows of one pipe's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathView {
    /// Smoothed RTT (request to data).
    pub srtt: Duration,
    /// Smallest RTT sample.
    pub min_rtt: Duration,
    /// Four RTT deviations (`timeout estimate − SRTT`).
    pub rttvar4: Duration,
    /// Measured delivery rate (bytes/s), once there is a sample.
    pub rate: Option<u64>,
    /// Bytes requested through the pipe and not arrived.
    pub outstanding: u64,
}

impl PathView {
    /// How long data requested now would take to arrive: the base RTT plus the time to
    /// deliver, at the measured rate, what is outstanding beyond the path's bandwidth-delay
    /// product (rate × base RTT: what is queued ahead of the new request), and at least the
    /// smoothed RTT (which also sees queues others filled). A pipe that is not backlogged
    /// (its rate is what it was given, not what its path could carry) has nothing queued.
    pub fn arrival_delay(&self) -> Duration {
        match self.rate {
            Some(rate) if rate > 0 => {
                let bdp = bytes_in(self.min_rtt, rate);
                let queued = self.outstanding.saturating_sub(bdp);
                self.min_rtt + drain_time(queued, rate)
            }
            _ => self.srtt,
        }
    }

    /// How long a pipe whose window is full waits for room: until its next DATA, one packet
    /// time at its rate (its smoothed RTT before a rate is measured).
    pub fn room_wait(&self, mss: u64) -> Duration {
        match self.rate {
            Some(rate) if rate > 0 => drain_time(mss, rate),
            _ => self.srtt,
        }
    }

    /// How long without a DATA makes the pipe silent (taken for dead): its smoothed RTT (at
    /// least twice its base RTT), four RTT deviations and four packet times at its rate.
    /// `None` before a rate is measured (a pipe never heard from is the retransmission
    /// timer's business).
    pub fn silence_limit(&self, mss: u64) -> Option<Duration> {
        let rate = self.rate.filter(|&r| r > 0)?;
        let rtt = self.srtt.max(self.min_rtt.saturating_mul(2));
        Some(rtt + self.rttvar4 + drain_time(mss.saturating_mul(4), rate))
    }
}

/// Time to deliver `bytes` at `rate` bytes/s (saturating).
pub(crate) fn drain_time(bytes: u64, rate: u64) -> Duration {
    let ns = u128::from(bytes) * 1_000_000_000 / u128::from(rate.max(1));
    Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
}

/// Bytes delivered in `time` at `rate` bytes/s (saturating): the inverse of [`drain_time`].
pub(crate) fn bytes_in(time: Duration, rate: u64) -> u64 {
    u64::try_from(u128::from(rate) * time.as_nanos() / 1_000_000_000).unwrap_or(u64::MAX)
}

/// The longest delay budget: no pipe is given units expected further ahead than the longest
/// window its delivery rate is measured over (`estimate::RATE_WINDOW_MAX`, 4 s). Beyond that
/// the arrival prediction extrapolates a rate nobody measured, and on a cellular path that
/// fades for seconds at a time (the UMTS driving trace) a unit committed 8 s ahead is stuck
/// behind the fade, holding the buffer's head, while a pipe needs only a round trip and its
/// jitter queued to stay busy (measured: a 2 Mb/s path beside the UMTS trace behind a
/// 1000-packet queue, 4 MB buffer, 60 s: 83.8 % of the ideal with the 8.4 s budget the
/// buffer alone gives, 98.2 % with this cap; `docs/R2CP.md`, "Delay budget").
pub const MAX_DELAY_BUDGET: Duration = RATE_WINDOW_MAX;

/// A pipe's delay budget: how long a unit requested through it may take to arrive before the
/// other pipes (together `others_rate` bytes/s) fill half of a `recv_buffer`-byte receive
/// buffer above it, and never more than [`MAX_DELAY_BUDGET`]. The other half of the buffer
/// absorbs what the estimates get wrong.
pub fn delay_budget(recv_buffer: u64, others_rate: u64) -> Duration {
    drain_time(recv_buffer / 2, others_rate).min(MAX_DELAY_BUDGET)
}

/// Whether a pipe may take a new unit within the delay budget. A pipe with nothing
/// outstanding always may (one unit keeps its estimates alive), and the budget never holds a
/// pipe below one and a half times its base RTT: where the buffer is too small for a path's
/// round trip its units arrive late whatever is done, and the paper's rank and buffer charge
/// decide as they did.
pub fn admits(view: &PathView, budget: Duration) -> bool {
    view.outstanding == 0 || view.arrival_delay() <= budget.max(budget_floor(view))
}

/// The least delay budget a pipe is held to: one and a half times its base RTT (see
/// [`admits`]).
fn budget_floor(view: &PathView) -> Duration {
    view.min_rtt + view.min_rtt / 2
}

/// The most a pipe delivering at `rate` bytes/s has outstanding under the delay budget
/// [`admits`] enforces: a new unit is admitted while the arrival delay (base RTT plus the
/// queue beyond the bandwidth-delay product) is within the budget (never below its floor),
/// so the outstanding bytes stay within `rate × budget`, plus the `mss` unit admitted last.
pub fn budget_window(view: &PathView, budget: Duration, rate: u64, mss: u64) -> u64 {
    bytes_in(budget.max(budget_floor(view)), rate).saturating_add(mss)
}

/// Where the blocking hole (expected at `due` through the pipe that has it) should
/// be requested once more: the candidate (index, view) with the earliest arrival, if its data
/// would arrive sooner than `due` by more than a quarter of its own arrival delay (a margin
/// against estimate noise: a redundant request costs the bytes twice).
pub fn hole_rescue(
    now: Time,
    due: Time,
    candidates: impl IntoIterator<Item = (usize, PathView)>,
) -> Option<usize> {
    let (j, delay) = candidates
        .into_iter()
        .map(|(j, v)| (j, v.arrival_delay()))
        .min_by_key(|&(j, d)| (d, j))?;
    let arrival = now.saturating_add(delay + delay / 4);
    (arrival < due).then_some(j)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn view(srtt_ms: u64, rate: u64, outstanding: u64) -> PathView {
        PathView {
            srtt: Duration::from_millis(srtt_ms),
            min_rtt: Duration::from_millis(srtt_ms),
            rttvar4: Duration::from_millis(4),
            rate: Some(rate),
            outstanding,
        }
    }

    #[test]
    fn the_budget_window_is_the_budget_at_the_rate_plus_the_last_unit() {
        // 0.2 Mb/s = 25 kB/s, 56 ms base RTT: a 30 ms budget is below the floor of 84 ms,
        // so 2.1 kB plus the unit admitted while under it.
        let slow = view(56, 25_000, MSS);
        assert_eq!(
            budget_window(&slow, Duration::from_millis(30), 25_000, MSS),
            2_100 + MSS
        );
        // A 1 s budget: 25 kB plus one unit, whatever the window.
        assert_eq!(
            budget_window(&slow, Duration::from_secs(1), 25_000, MSS),
            25_000 + MSS
        );
    }

    #[test]
    fn a_deep_queue_shows_in_the_arrival_delay_before_the_srtt() {
        // 0.2 Mb/s = 25 kB/s, 80 ms base RTT (a 2 kB bandwidth-delay product), 500 units
        // outstanding: 498 units queued ahead of a new one, 19.92 s to deliver.
        let slow = view(80, 25_000, 500 * MSS);
        assert_eq!(slow.arrival_delay(), Duration::from_millis(20_000));
        // A pipe that is not backlogged (one unit per 150 ms round trip: its rate is what it
        // was given, not what its path could carry) queues nothing: the base RTT.
        let idle = view(150, (MSS * 1000).div_ceil(150), MSS);
        assert_eq!(idle.arrival_delay(), Duration::from_millis(150));
        // Nothing queued: the RTT.
        assert_eq!(
            view(80, 25_000, 0).arrival_delay(),
            Duration::from_millis(80)
        );
    }

    #[test]
    fn a_slow_pipe_with_a_deep_queue_is_given_nothing_that_would_block() {
        // 4 MB buffer; beside an 8 Mb/s pipe (1 MB/s) half the buffer lasts 2.097 s.
        let budget = delay_budget(4 << 20, 1_000_000);
        assert_eq!(budget.as_millis(), 2097);
        // A 0.2 Mb/s pipe may keep about 2 s of its own rate queued (52 units), not more.
        assert!(admits(&view(80, 25_000, 52 * MSS), budget));
        assert!(!admits(&view(80, 25_000, 53 * MSS), budget));
        assert!(!admits(&view(80, 25_000, 1000 * MSS), budget));
        // Its only unit is always allowed (it keeps the estimates alive).
        assert!(admits(&view(3000, 25_000, 0), budget));
        // A path whose base RTT exceeds the budget keeps half its RTT of queue: 1.5 s of 1 s.
        let long = view(1000, 25_000, 25 * MSS + 12 * MSS);
        assert!(admits(&long, budget.min(Duration::from_millis(100))));
        let longer = view(1000, 25_000, 25 * MSS + 13 * MSS);
        assert!(!admits(&longer, budget.min(Duration::from_millis(100))));
        // The fast pipe's budget beside the slow one would be 84 s; it is capped at 4 s, and
        // a full 200-packet queue is far inside it.
        let fast_budget = delay_budget(4 << 20, 25_000);
        assert_eq!(fast_budget, MAX_DELAY_BUDGET);
        assert!(admits(&view(230, 1_000_000, 230 * MSS), fast_budget));
        // Nor does a slow pipe keep more than 4 s queued, however large the buffer: beside a
        // 2 Mb/s pipe half of 4 MB lasts 8.4 s.
        let budget = delay_budget(4 << 20, 250_000);
        assert_eq!(budget, Duration::from_secs(4));
        assert!(admits(&view(80, 125_000, 490 * MSS), budget));
        assert!(!admits(&view(80, 125_000, 520 * MSS), budget));
    }

    #[test]
    fn the_blocking_hole_goes_to_the_pipe_that_brings_it_sooner_and_only_then() {
        let now = Time::from_millis(10_000);
        let fast = (0, view(30, 1_000_000, 20 * MSS));
        // Expected through the slow pipe in 2 s: the fast pipe brings it in 30 ms.
        let due = Time::from_millis(12_000);
        assert_eq!(hole_rescue(now, due, [fast]), Some(0));
        // Expected in 35 ms: within the margin, no redundant request.
        let due = Time::from_millis(10_035);
        assert_eq!(hole_rescue(now, due, [fast]), None);
        // No candidate with room: nothing.
        assert_eq!(hole_rescue(now, Time::MAX, []), None);
        // Of two, the earlier arrival.
        let lte = (3, view(60, 500_000, 0));
        assert_eq!(
            hole_rescue(now, Time::MAX, [lte, fast]),
            Some(0),
            "30 ms beats 60 ms"
        );
    }

    #[test]
    fn silence_is_a_few_packet_times_past_the_rtt() {
        let primary = view(30, 1_000_000, 80 * MSS);
        assert_eq!(primary.silence_limit(MSS), Some(Duration::from_millis(68)));
        let queued = PathView {
            srtt: Duration::from_millis(80),
            ..primary
        };
        assert_eq!(queued.silence_limit(MSS), Some(Duration::from_millis(88)));
        let unknown = PathView {
            rate: None,
            ..primary
        };
        assert_eq!(unknown.silence_limit(MSS), None);
    }
}
