//! The last-link heuristics of last-link-heuristics.txt §3: the receiver reports its access
//! link's bandwidth and PER (the last-link option), the sender tunes congestion control with
//! them. Each heuristic is switched on separately (`[flow.tcp] last_link = { max_cwnd = true,
//! initial = true, per = true }`); they work with any congestion controller.

use std::time::Duration;

use serde::Deserialize;

use super::loss_rate::RecentLossRate;
use crate::linkinfo::LinkInfo;

/// Which RTT the `BW·RTT` products use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LastLinkRtt {
    /// The smallest RTT the connection measured (the path's propagation RTT): the cap is the
    /// pipe size, as §3.1 intends ("will not exceed the bottleneck capacity").
    #[default]
    Min,
    /// The smoothed RTT (SRTT). It includes the queueing the window itself causes, so the cap
    /// follows the window up whenever a queue stands (see docs/DECISIONS.md).
    Smoothed,
}

/// Which heuristics the sender applies (all off by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LastLinkConfig {
    /// §3.1 Max Cwnd Tuning: stop growing cwnd at `BW·RTT / (8·L_segment)` segments.
    pub max_cwnd: bool,
    /// §3.2 Initial Cwnd & SSThresh Tuning: on the first report, `cwnd = ssthresh = BW·RTT/8`.
    pub initial: bool,
    /// Send the window Initial tuning installs back to back, as ns-2 would, instead of pacing
    /// it at the reported bandwidth (the default; see `initial_pacing.rs`).
    pub initial_burst: bool,
    /// §3.3 PER heuristic: on a loss, if the connection's PLR = N_retr/N_tx is not above the
    /// reported PER, retransmit without reducing cwnd.
    pub per: bool,
    /// Over how many of the most recent data-segment transmissions the PER heuristic counts
    /// N_retr and N_tx; 0 (the default) counts the whole connection, as §3.3 is written.
    pub plr_window: u32,
    /// The RTT in `BW·RTT` (`"min"`, default, or `"smoothed"`).
    pub rtt: LastLinkRtt,
}

impl LastLinkConfig {
    /// Largest `plr_window`: a million segments (1 GB at a 1000-byte MSS).
    pub const MAX_PLR_WINDOW: u32 = 1_000_000;

    /// True if any heuristic is on.
    pub fn any(&self) -> bool {
        self.max_cwnd || self.initial || self.per
    }
}

/// The sender's last-link state: the latest report and whether initial tuning was applied.
#[derive(Debug, Clone, Default)]
pub struct LastLinkTuning {
    cfg: LastLinkConfig,
    /// Latest bandwidth (bit/s) and PER reported by the receiver.
    report: Option<(u64, f64)>,
    initial_done: bool,
    /// The PER heuristic's recent transmissions, when it counts a window of them.
    recent: Option<RecentLossRate>,
}

/// `BW·RTT/8` in bytes, rounded down to whole segments, at least one segment.
fn bdp_bytes(bandwidth_bps: u64, rtt: Duration, mss: u64) -> u64 {
    let bytes = bandwidth_bps as f64 * rtt.as_secs_f64() / 8.0;
    let segments = if bytes.is_finite() {
        (bytes / mss.max(1) as f64).floor() as u64
    } else {
        u64::MAX / mss.max(1)
    };
    segments.max(1).saturating_mul(mss)
}

impl LastLinkTuning {
    /// Heuristics as configured, no report yet.
    pub fn new(cfg: LastLinkConfig) -> Self {
        let recent = (cfg.per && cfg.plr_window > 0).then(|| {
            RecentLossRate::new(cfg.plr_window.min(LastLinkConfig::MAX_PLR_WINDOW) as usize)
        });
        LastLinkTuning {
            cfg,
            report: None,
            initial_done: false,
            recent,
        }
    }

    /// A data segment left (a retransmission or not): counted by the PER heuristic when it
    /// uses a window of recent transmissions.
    pub fn on_transmission(&mut self, retransmission: bool) {
        if let Some(recent) = &mut self.recent {
            recent.record(retransmission);
        }
    }

    /// Most bytes the PER heuristic's window of recent transmissions holds (0 without one).
    pub fn memory_bound(&self) -> usize {
        self.recent.as_ref().map_or(0, RecentLossRate::memory_bound)
    }

    /// Which RTT the `BW·RTT` products use.
    pub fn rtt_kind(&self) -> LastLinkRtt {
        self.cfg.rtt
    }

    /// True when the window Initial tuning installs is paced at the reported bandwidth.
    pub fn paces_initial(&self) -> bool {
        !self.cfg.initial_burst
    }

    /// Records the receiver's report. Returns the initial window/threshold to install (§3.2)
    /// the first time a bandwidth is known, when that heuristic is on.
    pub fn on_peer_link(
        &mut self,
        info: &LinkInfo,
        rtt: Option<Duration>,
        mss: u64,
    ) -> Option<u64> {
        if info.bandwidth_bps == 0 {
            return None;
        }
        self.report = Some((info.bandwidth_bps, info.per));
        if !self.cfg.initial || self.initial_done {
            return None;
        }
        let rtt = rtt?;
        self.initial_done = true;
        Some(bdp_bytes(info.bandwidth_bps, rtt, mss))
    }

    /// §3.1: the window above which cwnd stops growing, given the connection's current RTT.
    pub fn cwnd_cap(&self, rtt: Option<Duration>, mss: u64) -> Option<u64> {
        if !self.cfg.max_cwnd {
            return None;
        }
        let (bw, _) = self.report?;
        Some(bdp_bytes(bw, rtt?, mss))
    }

    /// §3.3: true when a detected loss should be treated as corruption (no window cut): the
    /// heuristic is on, a positive PER was reported, and PLR = `retransmitted / transmitted`
    /// (the connection's totals, or the counts of the recent window when `plr_window` is set)
    /// is not larger than PER.
    pub fn loss_is_wireless(&self, retransmitted: u64, transmitted: u64) -> bool {
        if !self.cfg.per {
            return false;
        }
        let Some((_, per)) = self.report else {
            return false;
        };
        // A reported PER of 0 excuses no loss (the literal "PLR not larger than PER" would
        // treat the very first loss of a clean link as corruption).
        if per <= 0.0 {
            return false;
        }
        let (retransmitted, transmitted) = match &self.recent {
            Some(recent) => recent.counts(),
            None => (retransmitted, transmitted),
        };
        if transmitted == 0 {
            return true;
        }
        let plr = retransmitted as f64 / transmitted as f64;
        plr <= per
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(bw: u64, per: f64) -> LinkInfo {
        LinkInfo {
            wireless: true,
            bandwidth_bps: bw,
            per,
            up: true,
            ..LinkInfo::default()
        }
    }

    #[test]
    fn max_cwnd_is_bandwidth_times_rtt_in_segments() {
        let mut t = LastLinkTuning::new(LastLinkConfig {
            max_cwnd: true,
            ..LastLinkConfig::default()
        });
        t.on_peer_link(&report(7_000_000, 0.0), None, 1000);
        // 7 Mb/s × 200 ms = 175 000 bytes = 175 segments.
        let cap = t.cwnd_cap(Some(Duration::from_millis(200)), 1000);
        assert_eq!(cap, Some(175_000));
    }

    #[test]
    fn initial_tuning_applies_once() {
        let mut t = LastLinkTuning::new(LastLinkConfig {
            initial: true,
            ..LastLinkConfig::default()
        });
        let rtt = Some(Duration::from_millis(100));
        assert_eq!(
            t.on_peer_link(&report(8_000_000, 0.0), rtt, 1000),
            Some(100_000)
        );
        assert_eq!(t.on_peer_link(&report(8_000_000, 0.0), rtt, 1000), None);
    }

    #[test]
    fn per_heuristic_backs_off_when_plr_exceeds_per() {
        let mut t = LastLinkTuning::new(LastLinkConfig {
            per: true,
            ..LastLinkConfig::default()
        });
        t.on_peer_link(&report(7_000_000, 0.008), None, 1000);
        assert!(
            t.loss_is_wireless(5, 1000),
            "PLR 0.5 % <= PER 0.8 %: no back-off"
        );
        assert!(
            !t.loss_is_wireless(20, 1000),
            "PLR 2 % > PER 0.8 %: congestion"
        );
    }

    #[test]
    fn a_plr_window_forgets_old_losses() {
        let mut t = LastLinkTuning::new(LastLinkConfig {
            per: true,
            plr_window: 1000,
            ..LastLinkConfig::default()
        });
        t.on_peer_link(&report(7_000_000, 0.008), None, 1000);
        // A start-up overshoot: 50 retransmissions in the first 500 segments (PLR 10 %).
        for i in 0..500 {
            t.on_transmission(i % 10 == 0);
        }
        assert!(!t.loss_is_wireless(50, 500), "PLR 10 % > PER 0.8 %");
        // Then 1000 segments with 5 retransmissions: the window sees 0.5 %, while the
        // connection's totals (55 of 1500, 3.7 %) would still say congestion.
        for i in 0..1000 {
            t.on_transmission(i % 200 == 0);
        }
        assert!(t.loss_is_wireless(55, 1500), "PLR 0.5 % over the window");
        let mut literal = LastLinkTuning::new(LastLinkConfig {
            per: true,
            ..LastLinkConfig::default()
        });
        literal.on_peer_link(&report(7_000_000, 0.008), None, 1000);
        literal.on_transmission(true);
        assert!(
            !literal.loss_is_wireless(55, 1500),
            "plr_window = 0: totals"
        );
    }

    #[test]
    fn heuristics_off_do_nothing() {
        let mut t = LastLinkTuning::new(LastLinkConfig::default());
        assert_eq!(
            t.on_peer_link(
                &report(7_000_000, 0.5),
                Some(Duration::from_millis(100)),
                1000
            ),
            None
        );
        assert_eq!(t.cwnd_cap(Some(Duration::from_millis(100)), 1000), None);
        assert!(!t.loss_is_wireless(0, 100));
    }
}
