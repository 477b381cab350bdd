//! RCP-STP: a satellite-oriented congestion controller that runs only at RCP receivers
//! (rcp-r2cp.txt §3.4.3). The sender is the unmodified RCP sender, so one server serves RCP
//! and RCP-STP receivers at once.
//!
//! The STP paper's algorithm is only summarised in our copy of the RCP paper; this design is
//! ours and is explained in `docs/RCP.md` ("RCP-STP"):
//! * a larger initial window ([`STP_INITIAL_WINDOW`] segments): one round trip of slow start
//!   costs 0.1–0.5 s on a satellite hop;
//! * the window grows by *bytes delivered*, compensated for the long round trip: the
//!   per-arrival slow-start increase and the per-RTT congestion-avoidance increase are scaled
//!   by ρ = min RTT / 25 ms (capped), so the window opens as fast in wall-clock time as a
//!   terrestrial TCP's would;
//! * requests go out as periodic *status requests* ([`STP_STATUS_INTERVAL`]) rather than per
//!   arrival (STP's POLL/STAT structure), cutting reverse traffic on the asymmetric,
//!   congested return path (the receiver does this; see `RcpReceiver::make_requests`);
//! * halving on congestion loss, no response to ELN-marked wireless loss, two segments after a
//!   timeout (STP has no retransmission-timer collapse to one segment).

use std::time::Duration;

use crate::cc::{CongestionController, Delivered, LossCause, LossEvent};
use crate::Time;

/// Initial window of RCP-STP, in segments.
pub const STP_INITIAL_WINDOW: u32 = 4;

/// Interval between RCP-STP status requests.
pub const STP_STATUS_INTERVAL: Duration = Duration::from_millis(50);

/// Reference round trip of the RTT compensation (a terrestrial path).
const REFERENCE_RTT: Duration = Duration::from_millis(25);

/// Largest RTT-compensation factor ρ.
const MAX_RHO: f64 = 8.0;

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
        let acked = ev.bytes.min(self.mss) as f64;
        if self.cwnd < self.ssthresh {
            // Slow start: ρ segments per segment delivered instead of one.
            let inc = (acked * self.rho) as u64;
            self.cwnd = self
                .cwnd
                .saturating_add(inc)
                .min(self.ssthresh.max(self.cwnd));
            if self.ssthresh == u64::MAX {
                self.cwnd = self.cwnd.saturating_add(0);
            }
        } else {
            // Congestion avoidance: ρ² segments per window delivered.
            self.ca_credit +=
                self.rho * self.rho * ev.bytes as f64 * self.mss as f64 / self.cwnd.max(1) as f64;
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

    #[test]
    fn long_round_trip_opens_the_window_faster_than_newreno() {
        let mut s = Stp::new(1000, 1);
        assert_eq!(s.window(), 4000);
        s.on_rtt_sample(
            Time::ZERO,
            Duration::from_millis(300),
            Duration::from_millis(300),
        );
        s.on_delivered(&Delivered {
            now: Time::ZERO,
            bytes: 1000,
            sacked_bytes: 0,
            in_flight: 0,
            in_recovery: false,
            rtt: None,
        });
        assert_eq!(s.window(), 12_000);
    }
}
