//! General AIMD(α, β) window control (Yang & Lam, atl.txt §III-B): slow start as TCP, then
//! cwnd += α segments per window of acknowledged data, cwnd ← β·FlightSize on a loss. With
//! (1, ½) the arithmetic is NewReno's exactly (RFC 5681 with RFC 3465 byte counting).

use super::params::Aimd;

/// Largest window we represent (bytes); far beyond any real path, keeps the arithmetic finite.
const MAX_WINDOW: f64 = 1e12;

/// The window arithmetic of a general AIMD controller, with (α, β) supplied per call.
#[derive(Debug, Clone)]
pub struct AimdWindow {
    mss: f64,
    cwnd: f64,
    ssthresh: u64,
    /// Bytes acknowledged in congestion avoidance since the last increase (RFC 3465).
    ca_acked: u64,
}

impl AimdWindow {
    /// A window of `initial_segments` segments of `mss` bytes, no ssthresh yet.
    pub fn new(mss: u64, initial_segments: u32) -> Self {
        let mss = mss.max(1) as f64;
        AimdWindow {
            mss,
            cwnd: mss * f64::from(initial_segments.max(1)),
            ssthresh: u64::MAX,
            ca_acked: 0,
        }
    }

    /// Congestion window in bytes.
    pub fn window(&self) -> u64 {
        self.cwnd as u64
    }

    /// Congestion window in segments.
    pub fn segments(&self) -> f64 {
        self.cwnd / self.mss
    }

    /// True below ssthresh (slow start).
    pub fn in_slow_start(&self) -> bool {
        (self.cwnd as u64) < self.ssthresh
    }

    /// Slow-start threshold in bytes.
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    /// `bytes` newly acknowledged in order outside recovery. In congestion avoidance the
    /// window grows by α·SMSS each time a window's worth of bytes has been acknowledged
    /// (RFC 3465 byte counting); the increase never exceeds the window itself (no faster than
    /// slow start).
    pub fn on_acked(&mut self, bytes: u64, p: Aimd) {
        if bytes == 0 {
            return;
        }
        if self.in_slow_start() {
            // RFC 5681 §3.1: cwnd += min(N, SMSS) per ACK.
            self.cwnd += (bytes as f64).min(self.mss);
        } else {
            self.ca_acked = self.ca_acked.saturating_add(bytes);
            let window = (self.cwnd as u64).max(1);
            if self.ca_acked >= window {
                self.ca_acked -= window;
                let alpha = if p.alpha.is_finite() {
                    p.alpha.clamp(0.0, self.segments().max(1.0))
                } else {
                    1.0
                };
                self.cwnd += alpha * self.mss;
            }
        }
        self.cwnd = self.cwnd.min(MAX_WINDOW);
    }

    /// A loss with `in_flight` bytes outstanding: ssthresh = cwnd = max(β·FlightSize, 2·SMSS).
    pub fn on_loss(&mut self, in_flight: u64, p: Aimd) {
        self.ssthresh = self.reduced(in_flight, p.beta);
        self.cwnd = self.ssthresh as f64;
        self.ca_acked = 0;
    }

    /// Sets the window (and ssthresh if given) from outside the AIMD rules (TCP-Probing's Gentle
    /// Recovery, the last-link initial window tuning); at least one segment / two segments.
    pub fn set(&mut self, cwnd: u64, ssthresh: Option<u64>) {
        self.cwnd = (cwnd as f64).clamp(self.mss, MAX_WINDOW);
        if let Some(t) = ssthresh {
            self.ssthresh = t.max(2 * self.mss as u64);
        }
        self.ca_acked = 0;
    }

    /// A retransmission timeout: ssthresh = max(β·FlightSize, 2·SMSS), cwnd = 1 segment.
    pub fn on_timeout(&mut self, in_flight: u64, p: Aimd) {
        self.ssthresh = self.reduced(in_flight, p.beta);
        self.cwnd = self.mss;
        self.ca_acked = 0;
    }

    fn reduced(&self, in_flight: u64, beta: f64) -> u64 {
        let beta = if beta.is_finite() {
            beta.clamp(0.0, 1.0)
        } else {
            0.5
        };
        ((in_flight as f64 * beta).min(MAX_WINDOW) as u64).max(2 * self.mss as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_segments_per_window_in_congestion_avoidance() {
        let mut w = AimdWindow::new(1000, 10);
        w.on_loss(20_000, Aimd::TCP);
        assert_eq!(w.window(), 10_000);
        let p = Aimd {
            alpha: 3.0,
            beta: 0.8,
        };
        for _ in 0..10 {
            w.on_acked(1000, p);
        }
        // Three segments after one window of acknowledged bytes.
        assert_eq!(w.window(), 13_000);
        w.on_loss(10_000, p);
        assert_eq!(w.window(), 8_000);
    }

    #[test]
    fn increase_never_beats_slow_start_and_never_overflows() {
        let mut w = AimdWindow::new(1000, 2);
        w.on_loss(4000, Aimd::TCP);
        let huge = Aimd {
            alpha: f64::MAX,
            beta: 0.5,
        };
        w.on_acked(1000, huge);
        w.on_acked(1000, huge);
        assert!(w.window() <= 4000);
        for _ in 0..10_000 {
            w.on_acked(u64::MAX / 2, huge);
        }
        assert!(w.window() > 0 && (w.window() as f64) <= MAX_WINDOW);
        w.on_timeout(u64::MAX, Aimd::TCP);
        assert_eq!(w.window(), 1000);
    }
}
