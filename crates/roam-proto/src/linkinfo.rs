//! Cross-layer facts about a host's own links, handed to engines by the host.
//!
//! Several protocols adapt to the wireless hop they sit on: TCP-ELN and RCP's per-hole ELN
//! need to know which losses were wireless corruption (rcp-r2cp.txt §3.4.2), ATL needs the
//! wireless loss probability p_w and delay d_w and must recompute on handoff (atl.txt §IV-A),
//! the last-link heuristics report bandwidth and PER (last-link-heuristics.txt), and RCP's power
//! management sleeps while the channel is bad (rcp-r2cp.txt §3.3). None of this is measured by
//! the engine: the simulator derives it from its link model, a real host from the OS or the
//! user — exactly the same [`LinkInfo`] either way.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// State of a two-state (Gilbert–Elliott) wireless channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChannelState {
    /// Few or no losses.
    #[default]
    Good,
    /// Burst losses (fading, interference).
    Bad,
}

/// What a host knows about one of its local links at a moment.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LinkInfo {
    /// The link is a wireless hop (losses on it are mostly corruption, not congestion).
    pub wireless: bool,
    /// Wireless packet loss probability p_w in [0, 1].
    pub loss_prob: f64,
    /// Packet error rate reported to peers (the last-link paper's PER), in [0, 1].
    pub per: f64,
    /// One-way delay d_w of the wireless hop.
    pub one_way_delay: Duration,
    /// Link bandwidth in bits per second.
    pub bandwidth_bps: u64,
    /// Current channel state.
    pub channel: ChannelState,
    /// The interface is up.
    pub up: bool,
    /// Number of handoffs so far (a change means "recompute").
    pub handoffs: u32,
}

impl LinkInfo {
    /// A wired, always-good link (the default assumption without information).
    pub fn wired(bandwidth_bps: u64, one_way_delay: Duration) -> Self {
        LinkInfo {
            wireless: false,
            loss_prob: 0.0,
            per: 0.0,
            one_way_delay,
            bandwidth_bps,
            channel: ChannelState::Good,
            up: true,
            handoffs: 0,
        }
    }

    /// Clamps probabilities into [0, 1] and replaces NaN by 0, so engines can trust the values
    /// whatever the host supplied.
    pub fn sanitized(mut self) -> Self {
        let clamp = |p: f64| if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
        self.loss_prob = clamp(self.loss_prob);
        self.per = clamp(self.per);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitized_clamps_untrusted_probabilities() {
        let li = LinkInfo {
            loss_prob: f64::NAN,
            per: 3.0,
            ..LinkInfo::default()
        }
        .sanitized();
        assert_eq!(li.loss_prob, 0.0);
        assert_eq!(li.per, 1.0);
    }
}
