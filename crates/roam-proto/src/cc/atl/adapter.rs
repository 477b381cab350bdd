//! The measurement side of ATL, shared by TCP-ATL and RCP-ATL: RTT, loss rate over τ, the
//! local wireless hop's p_w/d_w (from the host's link information) and the peer's (forwarded
//! inside ACKs or receiver reports), handoff detection, and the current (α, β).

use std::time::Duration;

use super::measure::{LossWindow, TimeAverage};
use super::params::{adapt, Aimd, AtlConfig, PathFacts, Service};
use crate::linkinfo::{ChannelState, LinkInfo};
use crate::Time;

/// What ATL knows about the path, and the (α, β) it derived.
#[derive(Debug, Clone)]
pub struct AtlAdapter {
    service: Service,
    cfg: AtlConfig,
    srtt: Option<Duration>,
    losses: LossWindow,
    /// Time average of the local hop's instantaneous loss (1 during outages).
    local_pw: TimeAverage,
    local: Option<LinkInfo>,
    peer: Option<LinkInfo>,
    params: Aimd,
    /// No loss seen yet: stay at (1, ½) (atl.txt §IV-A, "in the beginning of the connection").
    seen_loss: bool,
    /// Recomputations triggered by a handoff (local or reported by the peer).
    handoff_updates: u64,
}

impl AtlAdapter {
    /// A fresh adapter at (1, ½).
    pub fn new(service: Service, cfg: AtlConfig) -> Self {
        AtlAdapter {
            service,
            cfg,
            srtt: None,
            losses: LossWindow::default(),
            local_pw: TimeAverage::default(),
            local: None,
            peer: None,
            params: Aimd::TCP,
            seen_loss: false,
            handoff_updates: 0,
        }
    }

    /// The current (α, β).
    pub fn params(&self) -> Aimd {
        self.params
    }

    /// Smoothed RTT, if measured.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// How many handoffs triggered a recomputation.
    pub fn handoff_updates(&self) -> u64 {
        self.handoff_updates
    }

    /// τ = `tau_rtts`·RTT (1 s before the first RTT sample).
    pub fn tau(&self) -> Duration {
        let rtt = self.srtt.unwrap_or(Duration::from_secs(1)).as_secs_f64();
        Duration::from_secs_f64((rtt * self.cfg.tau_rtts).clamp(1e-3, 3600.0))
    }

    /// An RTT sample (RFC 6298 smoothing, gain 1/8).
    pub fn on_rtt(&mut self, rtt: Duration) {
        self.srtt = Some(match self.srtt {
            None => rtt,
            Some(s) => (s * 7 + rtt) / 8,
        });
    }

    /// Packets delivered and lost since the last call.
    pub fn record(&mut self, now: Time, delivered: f64, lost: f64) {
        if lost > 0.0 {
            self.seen_loss = true;
        }
        let tau = self.tau();
        self.losses.record(now, tau, delivered, lost);
    }

    /// The host's facts about the local link; a changed handoff count recomputes at once.
    pub fn on_local_link(&mut self, now: Time, info: &LinkInfo) {
        let info = info.sanitized();
        let inst = if !info.wireless {
            0.0
        } else if !info.up || info.channel == ChannelState::Bad {
            // An outage: the MAC fails every attempt (atl.txt §IV-A counts "signal loss due to
            // handoff or blackout" in p_w).
            1.0
        } else {
            info.loss_prob
        };
        let handoff = self.local.is_some_and(|old| old.handoffs != info.handoffs);
        if handoff || self.local.is_none() {
            // A new network: its MAC starts measuring afresh.
            self.local_pw.reset(now, inst);
        } else {
            self.local_pw.set(now, inst);
        }
        self.local = Some(info);
        if handoff {
            self.handoff_updates += 1;
        }
        self.recompute(now);
    }

    /// Facts forwarded by the peer (its wireless hop); recomputes when they changed.
    pub fn on_peer_link(&mut self, now: Time, info: &LinkInfo) {
        let info = info.sanitized();
        let changed = match self.peer {
            None => true,
            Some(old) => {
                old.handoffs != info.handoffs
                    || old.loss_prob != info.loss_prob
                    || old.one_way_delay != info.one_way_delay
            }
        };
        if self.peer.is_some_and(|old| old.handoffs != info.handoffs) {
            self.handoff_updates += 1;
        }
        self.peer = Some(info);
        if changed {
            self.recompute(now);
        }
    }

    /// The inputs of Fig. 4 as they stand at `now`.
    pub fn facts(&mut self, now: Time) -> PathFacts {
        let tau = self.tau();
        let (p, samples) = self.losses.rate(now, tau);
        let (p_w_local, d_w_local) = match self.local {
            Some(l) if l.wireless => (
                self.local_pw.average(now, tau),
                l.one_way_delay.as_secs_f64(),
            ),
            _ => (0.0, 0.0),
        };
        let (p_w_peer, d_w_peer) = match self.peer {
            Some(r) if r.wireless => (r.loss_prob, r.one_way_delay.as_secs_f64()),
            _ => (0.0, 0.0),
        };
        PathFacts {
            p,
            samples,
            rtt: self.srtt.map_or(0.0, |d| d.as_secs_f64()),
            p_w_local,
            d_w_local,
            p_w_peer,
            d_w_peer,
        }
    }

    /// Recomputes (α, β) by Fig. 4 (stays at (1, ½) until the first loss).
    pub fn recompute(&mut self, now: Time) -> Aimd {
        if self.seen_loss {
            let f = self.facts(now);
            self.params = adapt(self.service, &self.cfg, &f, self.params);
        }
        self.params
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wireless(pw: f64, dw_ms: u64, handoffs: u32) -> LinkInfo {
        LinkInfo {
            wireless: true,
            loss_prob: pw,
            one_way_delay: Duration::from_millis(dw_ms),
            up: true,
            handoffs,
            ..LinkInfo::default()
        }
    }

    fn warmed(service: Service) -> AtlAdapter {
        let mut a = AtlAdapter::new(service, AtlConfig::default());
        for _ in 0..20 {
            a.on_rtt(Duration::from_millis(200));
        }
        a.record(Time::from_millis(10), 990.0, 10.0);
        a
    }

    #[test]
    fn starts_at_tcp_parameters_until_a_loss() {
        let mut a = AtlAdapter::new(Service::Window, AtlConfig::default());
        a.on_rtt(Duration::from_millis(100));
        a.on_local_link(Time::ZERO, &wireless(0.01, 20, 0));
        assert_eq!(a.params(), Aimd::TCP);
    }

    #[test]
    fn handoff_recomputes_with_the_new_network() {
        let mut a = warmed(Service::Window);
        a.on_local_link(Time::from_millis(20), &wireless(0.001, 10, 0));
        let wlan = a.params();
        assert_eq!(wlan.beta, 0.75);
        // Handoff to a 3G-like hop (RTT samples still fit: R_c stays positive).
        a.on_local_link(Time::from_millis(30), &wireless(0.001, 30, 1));
        assert_eq!(a.handoff_updates(), 1);
        assert_ne!(a.params(), wlan);
    }

    #[test]
    fn peer_reports_are_used_when_the_source_is_wired() {
        let mut a = warmed(Service::Rate);
        a.on_peer_link(Time::from_millis(20), &wireless(0.005, 30, 0));
        assert_eq!(a.params().beta, 0.75);
        assert!(a.params().alpha > 0.0);
        // Both ends wireless: d_w adds up (eq. 17), so β moves to the 50 ms row.
        a.on_local_link(Time::from_millis(21), &wireless(0.001, 25, 0));
        assert_eq!(a.params().beta, 0.80);
    }

    #[test]
    fn wired_link_information_keeps_tcp_parameters() {
        let mut a = warmed(Service::Window);
        a.on_local_link(
            Time::from_millis(20),
            &LinkInfo::wired(2_000_000, Duration::from_millis(10)),
        );
        assert_eq!(a.params(), Aimd::TCP);
    }
}
