//! Reopening failed pipes (ours; `docs/R2CP.md`, "Reopening failed pipes"). rcp-r2cp.txt
//! §4.2 lets the host create and delete pipes at any time but says nothing of a pipe that
//! fails while its interface stays up (a blackout, a server that stops answering for a
//! while). The rule, one for every host (the simulator's R²CP agent and the UDP runtime's
//! fetch loop), per (interface, server) pair:
//!
//! - **what counts as a failure**: the engine gives the pipe up ([`super::R2cpEvent::PipeFailed`]:
//!   no handshake answer, a reset, `max_retries` request timeouts in a row), or the host's
//!   *stall* rule ([`PipeWatch::stalled`]): no handshake answer within the stall, or requests
//!   outstanding and no new byte for the stall. A stalled pipe is deleted break-before-make
//!   (its outstanding units go to the other pipes, §4.2).
//! - **when a new pipe is opened**: after a backoff of 0.25 s doubling per consecutive
//!   failure up to 8 s ([`backoff`]), as TCP's SYN retries (RFC 6298 §5.5) but shorter: a
//!   pipe is cheap, and an interface that comes back should carry data within a second.
//! - **reset on success**: a pipe that completes its handshake clears the pair's failure
//!   count ([`Reopen::succeeded`]), so the next failure waits 0.25 s again.
//!
//! Pure state: time comes from the caller.

use std::time::Duration;

use crate::Time;

/// Delay before the first reopening of a pair whose pipe failed.
pub const REOPEN_BASE: Duration = Duration::from_millis(250);

/// Longest delay between two openings of a pair.
pub const REOPEN_MAX: Duration = Duration::from_secs(8);

/// The runtime's default stall: a pipe that delivers nothing for this long, with requests
/// outstanding (or that is not up this long after it was opened), counts as failed.
pub const DEFAULT_STALL: Duration = Duration::from_secs(3);

/// The delay before opening a pair again after `failures` consecutive failures (1 for the
/// first): 0.25 s, 0.5 s, 1 s, … up to [`REOPEN_MAX`]. Zero failures need no delay.
pub fn backoff(failures: u32) -> Duration {
    if failures == 0 {
        return Duration::ZERO;
    }
    let shift = (failures - 1).min(6);
    (REOPEN_BASE * (1u32 << shift)).min(REOPEN_MAX)
}

/// One (interface, server) pair's reopening state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reopen {
    failures: u32,
    retry_at: Option<Time>,
}

impl Reopen {
    /// A pair that has not failed: it may be opened at once.
    pub fn new() -> Self {
        Self::default()
    }

    /// Its pipe failed (or was removed as failed) at `now`: the pair waits [`backoff`].
    pub fn failed(&mut self, now: Time) {
        self.failures = self.failures.saturating_add(1);
        self.retry_at = Some(now.saturating_add(backoff(self.failures)));
    }

    /// Its pipe came up: the failure count starts again from zero.
    pub fn succeeded(&mut self) {
        self.failures = 0;
    }

    /// Whether a new pipe may be opened at `now`.
    pub fn due(&self, now: Time) -> bool {
        self.retry_at.is_none_or(|t| t <= now)
    }

    /// When a new pipe may be opened (`None`: at once).
    pub fn retry_at(&self) -> Option<Time> {
        self.retry_at
    }

    /// Consecutive failures since a pipe of this pair last came up.
    pub fn failures(&self) -> u32 {
        self.failures
    }
}

/// What a host watches of one live pipe for the stall rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipeWatch {
    /// When it was opened.
    pub opened: Time,
    /// It completed its handshake.
    pub up: bool,
    /// Its `bytes_received` when last observed.
    pub seen: u64,
    /// Units it had outstanding when last observed.
    pub outstanding: usize,
    /// Since when it has been waiting for data: its last new byte, its handshake, or the
    /// moment it was given units after having none outstanding.
    pub waiting_since: Time,
}

impl PipeWatch {
    /// A pipe opened at `now`.
    pub fn new(now: Time) -> Self {
        PipeWatch {
            opened: now,
            up: false,
            seen: 0,
            outstanding: 0,
            waiting_since: now,
        }
    }

    /// The pipe completed its handshake at `now`.
    pub fn on_up(&mut self, now: Time) {
        if !self.up {
            self.up = true;
            self.waiting_since = now;
        }
    }

    /// Records what the engine reports of the pipe at `now` (its `PipeInfo`'s
    /// `bytes_received`, `outstanding`, and whether it is past its handshake); returns the
    /// bytes new since the last observation.
    pub fn observe(&mut self, now: Time, bytes_received: u64, outstanding: usize, up: bool) -> u64 {
        if up {
            self.on_up(now);
        }
        let new = bytes_received.saturating_sub(self.seen);
        if new > 0 {
            self.seen = bytes_received;
            self.waiting_since = now;
        } else if self.outstanding == 0 && outstanding > 0 {
            // Idle until now (nothing asked of it): the wait starts with the first request.
            self.waiting_since = now;
        }
        self.outstanding = outstanding;
        new
    }

    /// When the pipe counts as stalled if nothing changes: `stall` after it was opened while
    /// it is not up, `stall` after it began waiting while it has units outstanding, never
    /// while it is up with nothing outstanding.
    pub fn stalls_at(&self, stall: Duration) -> Option<Time> {
        if !self.up {
            Some(self.opened.saturating_add(stall))
        } else if self.outstanding > 0 {
            Some(self.waiting_since.saturating_add(stall))
        } else {
            None
        }
    }

    /// Whether the pipe has stalled by `now` (see [`PipeWatch::stalls_at`]).
    pub fn stalled(&self, now: Time, stall: Duration) -> bool {
        self.stalls_at(stall).is_some_and(|t| now >= t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    #[test]
    fn backoff_doubles_from_a_quarter_second_to_eight() {
        assert_eq!(backoff(0), Duration::ZERO);
        assert_eq!(backoff(1), Duration::from_millis(250));
        assert_eq!(backoff(2), Duration::from_millis(500));
        assert_eq!(backoff(3), Duration::from_secs(1));
        assert_eq!(backoff(5), Duration::from_secs(4));
        assert_eq!(backoff(6), REOPEN_MAX);
        assert_eq!(backoff(7), REOPEN_MAX);
        assert_eq!(backoff(u32::MAX), REOPEN_MAX);
    }

    #[test]
    fn a_failed_pair_waits_and_success_resets_the_count() {
        let mut r = Reopen::new();
        assert!(r.due(Time::ZERO));
        assert_eq!(r.retry_at(), None);
        r.failed(ms(1000));
        assert!(!r.due(ms(1249)));
        assert!(r.due(ms(1250)));
        r.failed(ms(2000));
        assert_eq!(r.retry_at(), Some(ms(2500)));
        r.failed(ms(3000));
        assert_eq!(r.retry_at(), Some(ms(4000)));
        assert_eq!(r.failures(), 3);
        r.succeeded();
        assert_eq!(r.failures(), 0);
        r.failed(ms(10_000));
        assert_eq!(r.retry_at(), Some(ms(10_250)));
    }

    #[test]
    fn consecutive_failures_reach_eight_seconds_and_stay() {
        let mut r = Reopen::new();
        let mut now = Time::ZERO;
        for _ in 0..20 {
            r.failed(now);
            now = r.retry_at().unwrap();
        }
        r.failed(now);
        assert_eq!(r.retry_at().unwrap().saturating_since(now), REOPEN_MAX);
    }

    #[test]
    fn a_pipe_not_up_within_the_stall_has_stalled() {
        let stall = Duration::from_secs(3);
        let w = PipeWatch::new(ms(500));
        assert_eq!(w.stalls_at(stall), Some(ms(3500)));
        assert!(!w.stalled(ms(3499), stall));
        assert!(w.stalled(ms(3500), stall));
    }

    #[test]
    fn a_pipe_stalls_only_while_it_waits_for_data() {
        let stall = Duration::from_secs(3);
        let mut w = PipeWatch::new(Time::ZERO);
        // Up at 0.1 s with nothing outstanding: no stall however long it idles.
        assert_eq!(w.observe(ms(100), 0, 0, true), 0);
        assert_eq!(w.stalls_at(stall), None);
        assert!(!w.stalled(ms(60_000), stall));
        // Given units at 10 s: it has 3 s from then, not from its handshake.
        w.observe(ms(10_000), 0, 4, true);
        assert_eq!(w.stalls_at(stall), Some(ms(13_000)));
        // Delivering moves the deadline; nothing new does not.
        assert_eq!(w.observe(ms(11_000), 2800, 3, true), 2800);
        w.observe(ms(12_000), 2800, 3, true);
        assert_eq!(w.stalls_at(stall), Some(ms(14_000)));
        assert!(w.stalled(ms(14_000), stall));
        // A blackout: nothing arrives, the deadline stays.
        w.observe(ms(13_900), 2800, 5, true);
        assert!(w.stalled(ms(14_000), stall));
    }
}
