//! TCP-ATL (atl.txt §III-B, §IV-A): a general AIMD(α, β) window whose parameters follow the
//! wireless hop — p and R measured, p_w and d_w from the local link or forwarded by a wireless
//! receiver in ACKs, T̂ by eq. 7 at (1, ½), α by eq. 9, β by d_w, recomputed on handoffs.
//!
//! The formulas are in [`formulas`], Fig. 4's case analysis in [`params`], the measurements in
//! [`adapter`]; RCP-ATL (`crate::media`) reuses all three with α by eq. 13.
//!
//! # Measuring p from controller events
//! The controller sees deliveries and loss signals, not sends. It counts
//! * delivered packets = (bytes + sacked_bytes) / SMSS of every [`Delivered`] event (each byte
//!   is reported once, either SACKed or cumulatively acknowledged);
//! * lost packets = the data that *repairs* a recovery episode: during recovery (and on the ACK
//!   that ends it) the cumulative ACK only advances when a retransmission fills a hole, so the
//!   bytes it newly delivers are the lost originals (with SACK; without SACK every partial ACK
//!   counts one packet, RFC 6582). One packet is counted at once when the loss is signalled, and
//!   one per retransmission timeout;
//!
//! and p = lost / (delivered + lost) over the sliding window τ = 10·RTT. See docs/ATL.md.
//!
//! # What β applies to
//! β is the decrease of the AIMD phase. A loss that ends slow start, and a retransmission
//! timeout, keep TCP's ½ (RFC 5681): with β = 0.85 after a slow-start overshoot the queue stays
//! full, retransmissions are dropped again and the connection falls into a timeout cycle.

pub mod adapter;
pub mod formulas;
pub mod measure;
pub mod params;
pub mod window;

use std::time::Duration;

pub use adapter::AtlAdapter;
pub use params::{Aimd, AtlConfig, Service};
pub use window::AimdWindow;

use super::{CongestionController, Delivered, LossCause, LossEvent};
use crate::linkinfo::LinkInfo;
use crate::Time;

/// The TCP-ATL congestion controller.
#[derive(Debug, Clone)]
pub struct TcpAtl {
    mss: f64,
    window: AimdWindow,
    adapter: AtlAdapter,
    /// A recovery episode is open: cumulative deliveries are hole repairs.
    repairing: bool,
    /// The episode just ended; the next delivery is its last repair.
    repair_ending: bool,
    /// The episode has seen SACKed data (count repaired bytes, not partial ACKs).
    sack_seen: bool,
    /// Packets already counted at the loss signal, to subtract from the repairs.
    precounted: f64,
    next_update: Time,
}

impl TcpAtl {
    /// A controller with an initial window of `initial_window_segments` segments of `mss` bytes.
    pub fn new(mss: u64, initial_window_segments: u32) -> Self {
        Self::with_config(mss, initial_window_segments, AtlConfig::default())
    }

    /// As [`TcpAtl::new`] with explicit tunables.
    pub fn with_config(mss: u64, initial_window_segments: u32, cfg: AtlConfig) -> Self {
        TcpAtl {
            mss: mss.max(1) as f64,
            window: AimdWindow::new(mss, initial_window_segments),
            adapter: AtlAdapter::new(Service::Window, cfg),
            repairing: false,
            repair_ending: false,
            sack_seen: false,
            precounted: 0.0,
            next_update: Time::ZERO,
        }
    }

    /// The current (α, β).
    pub fn params(&self) -> Aimd {
        self.adapter.params()
    }

    /// The measurement state (for tests and traces).
    pub fn adapter(&self) -> &AtlAdapter {
        &self.adapter
    }

    fn count_loss_signal(&mut self, now: Time) {
        self.adapter.record(now, 0.0, 1.0);
        self.precounted += 1.0;
        self.adapter.recompute(now);
    }

    fn schedule_update(&mut self, now: Time) {
        let rtt = self.adapter.srtt().unwrap_or(Duration::from_secs(1));
        self.next_update = now + rtt;
    }
}

impl CongestionController for TcpAtl {
    fn name(&self) -> &'static str {
        "atl"
    }

    fn window(&self) -> u64 {
        self.window.window()
    }

    fn ssthresh(&self) -> u64 {
        self.window.ssthresh()
    }

    fn on_delivered(&mut self, ev: &Delivered) {
        let now = ev.now;
        let delivered = (ev.bytes.saturating_add(ev.sacked_bytes)) as f64 / self.mss;
        if ev.sacked_bytes > 0 {
            self.sack_seen = true;
        }
        let mut lost = 0.0;
        if (self.repairing || self.repair_ending) && ev.bytes > 0 {
            let repaired = if self.sack_seen {
                (ev.bytes as f64 / self.mss).max(1.0)
            } else {
                1.0
            };
            let take = self.precounted.min(repaired);
            self.precounted -= take;
            lost = repaired - take;
        }
        if self.repair_ending {
            self.repair_ending = false;
            self.repairing = false;
            self.sack_seen = false;
            self.precounted = 0.0;
        }
        self.adapter.record(now, delivered, lost);
        if now >= self.next_update {
            // atl.txt §IV-A: p is measured continuously; we refresh (α, β) once per RTT.
            self.adapter.recompute(now);
            self.schedule_update(now);
        }
        if !ev.in_recovery {
            self.window.on_acked(ev.bytes, self.adapter.params());
        }
    }

    fn on_loss(&mut self, ev: &LossEvent) {
        self.repairing = true;
        self.repair_ending = false;
        self.count_loss_signal(ev.now);
        match ev.cause {
            LossCause::DupAcks => {
                // β is the decrease of the AIMD phase. A loss that ends slow start (which
                // doubles per RTT, so up to half the window is excess) gets TCP's ½.
                let p = if self.window.in_slow_start() {
                    Aimd::TCP
                } else {
                    self.adapter.params()
                };
                self.window.on_loss(ev.in_flight, p);
            }
            // A loss the receiver marked as wireless counts in p but is not congestion.
            LossCause::WirelessEln => {}
        }
    }

    fn on_timeout(&mut self, now: Time, in_flight: u64) {
        self.repairing = false;
        self.repair_ending = false;
        self.precounted = 0.0;
        self.adapter.record(now, 0.0, 1.0);
        self.adapter.recompute(now);
        // The retransmission timeout is TCP's, inherited unchanged (atl.txt §IV-A: TCP-ATL
        // "inherits well-established TCP functionalities"): ssthresh = FlightSize/2 (RFC 5681
        // eq. 4). β applies to the AIMD decrease on a detected loss. With β = 0.85 here, slow
        // start after the timeout would again overshoot the window that just collapsed.
        self.window.on_timeout(in_flight, Aimd::TCP);
    }

    fn on_recovery_end(&mut self, _now: Time) {
        if self.repairing {
            self.repair_ending = true;
        }
    }

    fn set_window(&mut self, cwnd: u64, ssthresh: Option<u64>) {
        self.window.set(cwnd, ssthresh);
    }

    fn on_rtt_sample(&mut self, _now: Time, rtt: Duration, _min_rtt: Duration) {
        self.adapter.on_rtt(rtt);
    }

    fn on_local_link(&mut self, now: Time, info: &LinkInfo) {
        self.adapter.on_local_link(now, info);
    }

    fn on_peer_link(&mut self, now: Time, info: &LinkInfo) {
        self.adapter.on_peer_link(now, info);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delivered(now_ms: u64, bytes: u64, sacked: u64, in_recovery: bool) -> Delivered {
        Delivered {
            now: Time::from_millis(now_ms),
            bytes,
            sacked_bytes: sacked,
            in_flight: 0,
            in_recovery,
            rtt: None,
        }
    }

    fn wireless(pw: f64, dw_ms: u64) -> LinkInfo {
        LinkInfo {
            wireless: true,
            loss_prob: pw,
            one_way_delay: Duration::from_millis(dw_ms),
            up: true,
            ..LinkInfo::default()
        }
    }

    fn loss(now_ms: u64, in_flight: u64) -> LossEvent {
        LossEvent {
            now: Time::from_millis(now_ms),
            cause: LossCause::DupAcks,
            in_flight,
        }
    }

    #[test]
    fn wired_path_behaves_exactly_like_one_half() {
        let mut cc = TcpAtl::new(1000, 10);
        cc.on_rtt_sample(Time::ZERO, Duration::from_millis(50), Duration::ZERO);
        cc.on_loss(&loss(1, 20_000));
        assert_eq!(cc.params(), Aimd::TCP);
        assert_eq!(cc.window(), 10_000);
        for i in 0..10 {
            cc.on_delivered(&delivered(100 + i, 1000, 0, false));
        }
        assert!((10_900..=11_000).contains(&cc.window()));
    }

    #[test]
    fn loss_rate_counts_repaired_holes() {
        let mut cc = TcpAtl::new(1000, 10);
        cc.on_rtt_sample(Time::ZERO, Duration::from_millis(100), Duration::ZERO);
        // 97 packets delivered, then an episode with three lost packets, repaired by
        // retransmissions whose cumulative ACKs deliver 1, 1 and (ending) 1 packet.
        cc.on_delivered(&delivered(1, 97_000, 0, false));
        cc.on_loss(&loss(2, 10_000));
        cc.on_delivered(&delivered(3, 0, 2000, true));
        cc.on_delivered(&delivered(4, 1000, 0, true));
        cc.on_delivered(&delivered(5, 1000, 0, true));
        cc.on_recovery_end(Time::from_millis(6));
        cc.on_delivered(&delivered(6, 1000, 0, false));
        // Sent: 97 + 2 SACKed + 3 lost originals + 3 retransmissions = 105; 3 lost.
        let f = cc.adapter.clone().facts(Time::from_millis(7));
        assert_eq!(f.samples, 105.0);
        assert!((f.p - 3.0 / 105.0).abs() < 1e-9, "{}", f.p);
    }

    /// A controller (1000-byte segments, initial window 10) with a 120 ms RTT, told of a
    /// wireless hop (2 % loss, 50 ms), that has had 500 kB delivered in slow start.
    fn in_slow_start_on_a_wireless_hop() -> TcpAtl {
        let mut cc = TcpAtl::new(1000, 10);
        for _ in 0..10 {
            cc.on_rtt_sample(Time::ZERO, Duration::from_millis(120), Duration::ZERO);
        }
        cc.on_local_link(Time::ZERO, &wireless(0.02, 50));
        cc.on_delivered(&delivered(1, 500_000, 0, false));
        cc
    }

    #[test]
    fn wireless_hop_raises_alpha_and_beta() {
        let mut cc = in_slow_start_on_a_wireless_hop();
        cc.on_loss(&loss(2, 40_000));
        cc.on_recovery_end(Time::from_millis(3));
        cc.on_delivered(&delivered(3, 1000, 0, false));
        // In congestion avoidance now: the hop's β applies.
        cc.on_loss(&loss(4, 20_000));
        let p = cc.params();
        assert_eq!(p.beta, 0.80);
        assert!(p.alpha > 1.0, "{p:?}");
        assert_eq!(cc.window(), 16_000);
    }

    #[test]
    fn loss_ending_slow_start_halves_even_on_a_wireless_hop() {
        let mut cc = in_slow_start_on_a_wireless_hop();
        // Still in slow start (no ssthresh yet): TCP's ½, whatever β the hop calls for.
        cc.on_loss(&loss(2, 40_000));
        assert_eq!(cc.window(), 20_000);
        assert_eq!(cc.params().beta, 0.80);
    }

    #[test]
    fn outside_mechanisms_can_set_the_window() {
        let mut cc = TcpAtl::new(1000, 10);
        cc.set_window(5000, Some(7000));
        assert_eq!((cc.window(), cc.ssthresh()), (5000, 7000));
        cc.set_window(0, Some(0));
        assert_eq!((cc.window(), cc.ssthresh()), (1000, 2000));
    }

    #[test]
    fn timeout_collapses_the_window() {
        let mut cc = TcpAtl::new(1000, 10);
        cc.on_timeout(Time::from_millis(5), 8000);
        assert_eq!(cc.window(), 1000);
        assert_eq!(cc.ssthresh(), 4000);
    }
}
