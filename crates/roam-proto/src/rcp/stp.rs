//! RCP-STP: a satellite-oriented congestion controller that runs only at RCP receivers
//! (rcp-r2cp.txt §3.4.3). The sender is the unmodified RCP sender, so one server serves RCP
//! and RCP-STP receivers at once.
//!
//! The STP paper's algorithm is only summarised in our copy of the RCP paper; this design is
//! ours and is explained in `docs/RCP.md` ("RCP-STP"):
//! * a larger initial window ([`STP_INITIAL_WINDOW`] segments): one round trip of slow start
//!   costs 0.1–0.5 s on a satellite hop;
//! * congestion avoidance compensated for the long round trip: ρ segments per window of data
//!   delivered instead of one, with ρ = min RTT / 25 ms (capped at 4), so the window reopens
//!   after a halving in a wall-clock time closer to a terrestrial path's;
//! * TCP's slow start, halving on congestion loss, no response to ELN-marked wireless loss, two
//!   segments after a timeout;
//! * STP's periodic status reports map to RCP's `status_interval_ms` option (requests at
//!   status instants instead of per arrival). It is off by default: at our drop-tail queues the
//!   request batches caused burst losses that cost more than the saved reverse traffic (see
//!   `docs/RCP.md`).

use std::time::Duration;

use crate::cc::{CongestionController, Delivered, LossCause, LossEvent};
use crate::Time;

/// Initial window of RCP-STP, in segments.
pub const STP_INITIAL_WINDOW: u32 = 4;

/// Reference round trip of the RTT compensation (a terrestrial path).
const REFERENCE_RTT: Duration = Duration::from_millis(25);

/// Largest RTT-compensation factor ρ.
const MAX_RHO: f64 = 4.0;

/// The RCP-STP window rules. See the module docs.
#[derive(Debug, Clone)]
pub struct Stp {
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    rho: f64,
    ca_credit: f64,
}

impl Stp {
    /// A controller with `mss`-byte segments and at least [`STP_INITIAL_WINDOW`] segments.
    pub fn new(mss: u64, initial_window_segments: u32) -> Self {
        let mss = mss.max(1);
        Stp {
            mss,
            cwnd: mss * u64::from(initial_window_segments.max(STP_INITIAL_WINDOW)),
            ssthresh: u64::MAX,
            rho: 1.0,
            ca_credit: 0.0,
        }
    }

    fn halved(&self, in_flight: u64) -> u64 {
        (in_flight / 2).max(2 * self.mss)
    }
}

impl CongestionController for Stp {
    fn name(&self) -> &'static str {
        "stp"
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn on_rtt_sample(&mut self, _now: Time, _rtt: Duration, min_rtt: Duration) {
        self.rho = (min_rtt.as_secs_f64() / REFERENCE_RTT.as_secs_f64()).clamp(1.0, MAX_RHO);
    }

    fn on_delivered(&mut self, ev: &Delivered) {
        if ev.in_recovery || ev.bytes == 0 {
            return;
        }
        if self.cwnd < self.ssthresh {
            // Slow start as in TCP (the larger initial window already saves round trips;
            // a faster exponential only overshoots the satellite queue further).
            self.cwnd = self.cwnd.saturating_add(ev.bytes.min(self.mss));
        } else {
            // Congestion avoidance: ρ segments per window delivered.
            self.ca_credit +=
                self.rho * ev.bytes as f64 * self.mss as f64 / self.cwnd.max(1) as f64;
            let whole = self.ca_credit.floor();
            self.ca_credit -= whole;
            self.cwnd = self.cwnd.saturating_add(whole as u64);
        }
    }

    fn on_loss(&mut self, ev: &LossEvent) {
        if ev.cause == LossCause::DupAcks {
            self.ssthresh = self.halved(ev.in_flight);
            self.cwnd = self.ssthresh;
            self.ca_credit = 0.0;
        }
    }

    fn on_timeout(&mut self, _now: Time, in_flight: u64) {
        self.ssthresh = self.halved(in_flight);
        self.cwnd = 2 * self.mss;
        self.ca_credit = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One 1000-byte segment newly acknowledged, nothing else in flight, outside recovery.
    fn one_segment_delivered() -> Delivered {
        Delivered {
            now: Time::ZERO,
            bytes: 1000,
            sacked_bytes: 0,
            in_flight: 0,
            in_recovery: false,
            rtt: None,
        }
    }

    #[test]
    fn long_round_trip_grows_the_window_rho_segments_per_window() {
        let mut s = Stp::new(1000, 1);
        assert_eq!(s.window(), 4000);
        s.on_rtt_sample(
            Time::ZERO,
            Duration::from_millis(300),
            Duration::from_millis(300),
        );
        s.on_delivered(&one_segment_delivered());
        assert_eq!(s.window(), 5000, "slow start as in TCP");
        s.on_loss(&LossEvent {
            now: Time::ZERO,
            cause: LossCause::DupAcks,
            in_flight: 20_000,
        });
        assert_eq!(s.window(), 10_000);
        for _ in 0..10 {
            s.on_delivered(&one_segment_delivered());
        }
        let w = s.window();
        assert!(
            (13_000..=14_000).contains(&w),
            "ρ = 4 segments per window: {w}"
        );
    }
}
