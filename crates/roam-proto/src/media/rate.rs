//! Rate-based AIMD (atl.txt §III-C and the Appendix): S ← S + α/R once per RTT, S ← β·S on a
//! loss (at most once per RTT, as RAP backs off once per congestion event), with (α, β) fixed
//! at (1, ½) — the rate AIMD "in the role of RAP" — or adapted by RCP-ATL (α by eq. 13).

use std::time::Duration;

use crate::cc::atl::{Aimd, AtlAdapter, AtlConfig, Service};
use crate::linkinfo::LinkInfo;
use crate::Time;

/// Which rate controller a media sender runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RateKind {
    /// RCP-ATL: (α, β) adapted to the wireless hop (atl.txt §IV-B).
    #[default]
    Atl,
    /// Plain rate AIMD (1, ½), the RAP baseline of atl.txt §V-B3.
    Aimd,
}

impl RateKind {
    /// Every selectable rate controller.
    pub const ALL: &'static [RateKind] = &[RateKind::Atl, RateKind::Aimd];

    /// The name used in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            RateKind::Atl => "rcp-atl",
            RateKind::Aimd => "aimd",
        }
    }

    /// Looks a name up (`rcp-atl`/`atl`, `aimd`/`rap`).
    pub fn parse(s: &str) -> Option<RateKind> {
        match s.trim().to_ascii_lowercase().as_str() {
            "rcp-atl" | "atl" => Some(RateKind::Atl),
            "aimd" | "rap" => Some(RateKind::Aimd),
            _ => None,
        }
    }
}

/// The sending rate S(t) and its AIMD rules.
#[derive(Debug, Clone)]
pub struct RateController {
    /// Packets per second.
    rate: f64,
    min_rate: f64,
    max_rate: f64,
    adapter: AtlAdapter,
    adaptive: bool,
    /// Before the first loss the rate doubles per RTT (slow start, as TCP and TFRC).
    slow_start: bool,
    last_increase: Time,
    last_decrease: Option<Time>,
}

impl RateController {
    /// A controller starting at `initial` packets/s, kept within [`min`, `max`].
    pub fn new(kind: RateKind, initial: f64, min: f64, max: f64, cfg: AtlConfig) -> Self {
        let min = if min.is_finite() && min > 0.0 {
            min
        } else {
            1.0
        };
        let max = if max.is_finite() && max >= min {
            max
        } else {
            min
        };
        RateController {
            rate: if initial.is_finite() {
                initial.clamp(min, max)
            } else {
                min
            },
            min_rate: min,
            max_rate: max,
            adapter: AtlAdapter::new(Service::Rate, cfg),
            adaptive: kind == RateKind::Atl,
            slow_start: true,
            last_increase: Time::ZERO,
            last_decrease: None,
        }
    }

    /// S(t) in packets per second.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The (α, β) in force.
    pub fn params(&self) -> Aimd {
        if self.adaptive {
            self.adapter.params()
        } else {
            Aimd::TCP
        }
    }

    /// Smoothed RTT, if measured.
    pub fn srtt(&self) -> Option<Duration> {
        self.adapter.srtt()
    }

    /// The measurement state.
    pub fn adapter(&self) -> &AtlAdapter {
        &self.adapter
    }

    /// An RTT sample from a report's timestamp echo.
    pub fn on_rtt(&mut self, rtt: Duration) {
        self.adapter.on_rtt(rtt);
    }

    /// A report said `delivered` more packets arrived and `lost` more were lost. Returns true
    /// when the rate changed.
    pub fn on_report(&mut self, now: Time, delivered: u64, lost: u64) -> bool {
        self.adapter.record(now, delivered as f64, lost as f64);
        if lost > 0 {
            self.on_congestion(now)
        } else {
            false
        }
    }

    /// A loss event: S ← β·S, at most once per RTT. Returns true when the rate changed.
    pub fn on_congestion(&mut self, now: Time) -> bool {
        let rtt = self.srtt().unwrap_or(Duration::from_secs(1));
        if self
            .last_decrease
            .is_some_and(|t| now.saturating_since(t) < rtt)
        {
            return false;
        }
        self.slow_start = false;
        if self.adaptive {
            self.adapter.recompute(now);
        }
        let beta = self.params().beta;
        self.rate = (self.rate * beta).clamp(self.min_rate, self.max_rate);
        self.last_decrease = Some(now);
        self.last_increase = now;
        true
    }

    /// Applies the once-per-RTT increase if an RTT has passed. Returns true when the rate
    /// changed.
    pub fn tick(&mut self, now: Time) -> bool {
        let Some(rtt) = self.srtt() else {
            return false;
        };
        if now.saturating_since(self.last_increase) < rtt {
            return false;
        }
        self.last_increase = now;
        let r = rtt.as_secs_f64().max(1e-6);
        let old = self.rate;
        if self.slow_start {
            self.rate *= 2.0;
        } else {
            if self.adaptive {
                self.adapter.recompute(now);
            }
            // α is in packets per RTT; never more than doubling per RTT.
            let alpha = self.params().alpha.clamp(0.0, (self.rate * r).max(1.0));
            self.rate += alpha / r;
        }
        self.rate = self.rate.clamp(self.min_rate, self.max_rate);
        self.rate != old
    }

    /// Local link facts (the source is the wireless end).
    pub fn on_local_link(&mut self, now: Time, info: &LinkInfo) {
        self.adapter.on_local_link(now, info);
    }

    /// Link facts forwarded by the receiver in its reports.
    pub fn on_peer_link(&mut self, now: Time, info: &LinkInfo) {
        self.adapter.on_peer_link(now, info);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctl(kind: RateKind) -> RateController {
        let mut c = RateController::new(kind, 10.0, 1.0, 1e6, AtlConfig::default());
        c.on_rtt(Duration::from_millis(100));
        c
    }

    #[test]
    fn plain_aimd_adds_one_packet_per_rtt_and_halves() {
        let mut c = ctl(RateKind::Aimd);
        assert!(c.on_report(Time::from_millis(50), 10, 1));
        assert_eq!(c.rate(), 5.0);
        // A second loss in the same RTT is the same congestion event.
        assert!(!c.on_report(Time::from_millis(60), 10, 1));
        assert!(c.tick(Time::from_millis(150)));
        assert!((c.rate() - 15.0).abs() < 1e-9, "{}", c.rate());
    }

    #[test]
    fn slow_start_doubles_until_the_first_loss() {
        let mut c = ctl(RateKind::Aimd);
        assert!(c.tick(Time::from_millis(100)));
        assert_eq!(c.rate(), 20.0);
        assert!(!c.tick(Time::from_millis(150)));
    }

    #[test]
    fn atl_uses_a_gentler_decrease_on_a_wireless_hop() {
        let mut c = ctl(RateKind::Atl);
        c.on_local_link(
            Time::ZERO,
            &LinkInfo {
                wireless: true,
                loss_prob: 0.01,
                one_way_delay: Duration::from_millis(20),
                up: true,
                ..LinkInfo::default()
            },
        );
        c.on_report(Time::from_millis(10), 1000, 0);
        assert!(c.on_report(Time::from_millis(20), 0, 10));
        assert_eq!(c.params().beta, 0.75);
        assert_eq!(c.rate(), 7.5);
    }

    #[test]
    fn rate_stays_within_bounds() {
        let mut c = RateController::new(RateKind::Aimd, f64::NAN, 2.0, 4.0, AtlConfig::default());
        assert_eq!(c.rate(), 2.0);
        c.on_rtt(Duration::from_millis(1));
        for i in 1..100 {
            c.tick(Time::from_millis(i));
        }
        assert_eq!(c.rate(), 4.0);
        for i in 0..100 {
            c.on_congestion(Time::from_secs_f64(1.0 + f64::from(i)));
        }
        assert_eq!(c.rate(), 2.0);
    }
}
