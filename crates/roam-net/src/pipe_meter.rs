//! Per-pipe byte counts and rates for progress displays: each (local address, server) pair a
//! download used, its bytes so far and its rate over the last window of at least
//! [`WINDOW`] (a pipe that stopped delivering decays to 0 at the next window).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Shortest window a rate is measured over.
pub const WINDOW: Duration = Duration::from_millis(500);

/// One pipe as a progress display shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PipeProgress {
    /// Its local address.
    pub via: SocketAddr,
    /// Its server.
    pub server: SocketAddr,
    /// Bytes new to the download that arrived through it (over every connection the pair
    /// had).
    pub bytes: u64,
    /// Its rate over the last closed window (bits per second).
    pub rate_bps: f64,
    /// A connection on this pair is open now.
    pub up: bool,
}

/// The pipes of one download and their rates.
#[derive(Debug, Default)]
pub(crate) struct PipeMeter {
    pipes: Vec<PipeProgress>,
    /// Each pipe's byte count when the current window opened.
    at_start: Vec<u64>,
    window: Option<Instant>,
}

impl PipeMeter {
    /// Records pair (`via`, `server`)'s cumulative byte count and whether it is open.
    pub(crate) fn set(&mut self, via: SocketAddr, server: SocketAddr, bytes: u64, up: bool) {
        match self
            .pipes
            .iter_mut()
            .find(|p| (p.via, p.server) == (via, server))
        {
            Some(p) => {
                p.bytes = bytes;
                p.up = up;
            }
            None => {
                self.pipes.push(PipeProgress {
                    via,
                    server,
                    bytes,
                    rate_bps: 0.0,
                    up,
                });
                // A pipe that appears mid-window counts from zero.
                self.at_start.push(0);
            }
        }
    }

    /// Closes the current window if it is at least [`WINDOW`] old at `now`, updating every
    /// pipe's rate.
    pub(crate) fn tick(&mut self, now: Instant) {
        let start = *self.window.get_or_insert(now);
        let secs = now.saturating_duration_since(start).as_secs_f64();
        if now.saturating_duration_since(start) < WINDOW {
            return;
        }
        for (p, s) in self.pipes.iter_mut().zip(self.at_start.iter_mut()) {
            p.rate_bps = p.bytes.saturating_sub(*s) as f64 * 8.0 / secs;
            *s = p.bytes;
        }
        self.window = Some(now);
    }

    /// The pipes, in order of first use.
    pub(crate) fn snapshot(&self) -> Vec<PipeProgress> {
        self.pipes.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_pipe_gets_its_own_rate_and_an_idle_pipe_decays_to_zero() {
        let a: SocketAddr = "10.0.0.1:1".parse().unwrap();
        let b: SocketAddr = "10.0.0.2:1".parse().unwrap();
        let s: SocketAddr = "10.0.0.9:7000".parse().unwrap();
        let t0 = crate::Clock::wall();
        let mut m = PipeMeter::default();
        m.set(a, s, 0, true);
        m.tick(t0);
        m.set(a, s, 1_000_000, true);
        m.set(b, s, 500_000, true);
        // Not half a second yet: no rate.
        m.tick(t0 + Duration::from_millis(400));
        assert_eq!(m.snapshot()[0].rate_bps, 0.0);
        m.tick(t0 + Duration::from_secs(1));
        let p = m.snapshot();
        assert_eq!((p[0].rate_bps, p[1].rate_bps), (8e6, 4e6));
        m.set(a, s, 1_000_000, false);
        m.set(b, s, 1_000_000, true);
        m.tick(t0 + Duration::from_secs(2));
        let p = m.snapshot();
        assert_eq!((p[0].rate_bps, p[1].rate_bps), (0.0, 4e6));
        assert_eq!((p[0].bytes, p[0].up), (1_000_000, false));
    }
}
