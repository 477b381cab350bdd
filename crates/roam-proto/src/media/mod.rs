//! RCP-ATL (atl.txt §IV-B): a rate-based, unreliable datagram service for media. The source
//! sends at the allowed rate S(t) (S ← S + α once per RTT, S ← β·S on loss; α by eq. 13), the
//! receiver reports packets received, loss, a timestamp echo and — when it is the wireless end —
//! its p_w/d_w/handoffs; no retransmissions. The same engine with (α, β) fixed at (1, ½) is the
//! plain rate AIMD baseline in the role of RAP ([`RateKind::Aimd`]).
//!
//! ATL picks the protocol by the requested service ([`ServiceType`]): reliable data runs the
//! TCP engine with the TCP-ATL controller, media runs this engine.
//!
//! The source opens the flow; the sink's host answers packets of a flow it does not hold
//! through a [`MediaAcceptor`], which keeps no state until the source has echoed its
//! address-validation token (`docs/HANDSHAKE-RCP.md`). Both ends implement
//! [`crate::endpoint::EndpointConnection`].

mod acceptor;
mod endpoint;
mod rate;
mod receiver;
mod sender;

use std::time::Duration;

pub use acceptor::MediaAcceptor;
pub use rate::{RateController, RateKind};
pub use receiver::{DelayStats, MediaReceiver, MediaReceiverStats, MAX_PENDING_REPORTS};
pub use sender::{MediaEvent, MediaSender, MediaSenderStats};

use crate::cc::atl::AtlConfig;
use crate::cc::CcKind;

/// The service an application asks ATL for (atl.txt §IV: "According to the service type
/// requested by the application layer … the appropriate protocol algorithm is initiated").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServiceType {
    /// 100 % reliable byte stream: TCP-ATL.
    Reliable,
    /// Timely, rate-controlled, unreliable datagrams: RCP-ATL.
    Media,
}

/// The protocol ATL selects for a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtlProtocol {
    /// The TCP engine with this congestion controller.
    Tcp(CcKind),
    /// The media engine with this rate controller.
    Media(RateKind),
}

impl ServiceType {
    /// Parses `reliable` / `media`.
    pub fn parse(s: &str) -> Option<ServiceType> {
        match s.trim().to_ascii_lowercase().as_str() {
            "reliable" | "data" => Some(ServiceType::Reliable),
            "media" | "multimedia" => Some(ServiceType::Media),
            _ => None,
        }
    }

    /// TCP-ATL for reliable data, RCP-ATL for media.
    pub fn protocol(self) -> AtlProtocol {
        match self {
            ServiceType::Reliable => AtlProtocol::Tcp(CcKind::Atl),
            ServiceType::Media => AtlProtocol::Media(RateKind::Atl),
        }
    }
}

/// Media engine configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MediaConfig {
    /// Payload bytes per media packet (atl.txt §V: 1 KB packets).
    pub packet_size: u32,
    /// Initial allowed rate, payload bits/s.
    pub initial_rate_bps: u64,
    /// Lowest allowed rate, payload bits/s (the source keeps probing).
    pub min_rate_bps: u64,
    /// Highest allowed rate, payload bits/s (an encoder's top rate).
    pub max_rate_bps: u64,
    /// Shortest feedback timeout (otherwise 2·RTT).
    pub min_feedback_timeout: Duration,
    /// Receiver reports carry its wireless hop's facts.
    pub report_link_info: bool,
    /// ATL tunables (τ, caps).
    pub atl: AtlConfig,
    /// A sink expires after this long without a packet (`None`: never).
    pub idle_timeout: Option<Duration>,
}

impl Default for MediaConfig {
    fn default() -> Self {
        MediaConfig {
            packet_size: 1000,
            initial_rate_bps: 80_000,
            min_rate_bps: 8_000,
            max_rate_bps: 1_000_000_000,
            min_feedback_timeout: Duration::from_millis(200),
            report_link_info: true,
            atl: AtlConfig::default(),
            idle_timeout: Some(Duration::from_secs(60)),
        }
    }
}

impl MediaConfig {
    fn pps(&self, bps: u64) -> f64 {
        bps as f64 / (8.0 * f64::from(self.packet_size.max(1)))
    }
    pub(crate) fn initial_rate_pps(&self) -> f64 {
        self.pps(self.initial_rate_bps)
    }
    pub(crate) fn min_rate_pps(&self) -> f64 {
        self.pps(self.min_rate_bps)
    }
    pub(crate) fn max_rate_pps(&self) -> f64 {
        self.pps(self.max_rate_bps)
    }
}

/// The deterministic payload byte `i` of packet `seq` (lets the receiver check integrity).
pub fn payload_byte(seq: u64, i: usize) -> u8 {
    (seq.wrapping_mul(31).wrapping_add(i as u64) & 0xff) as u8
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linkinfo::LinkInfo;
    use crate::Time;
    use roam_wire::ConnId;

    /// Sender and receiver joined by a path with a fixed one-way delay that drops every
    /// `drop_every`-th media packet; runs for `secs` of virtual time.
    fn run(kind: RateKind, drop_every: u64, secs: f64) -> (MediaSender, MediaReceiver) {
        let cfg = MediaConfig::default();
        let mut tx = MediaSender::new(cfg, kind, ConnId(9));
        let mut rx = MediaReceiver::new(ConnId(9), true, None, Time::ZERO);
        rx.set_link_info(
            Time::ZERO,
            LinkInfo {
                wireless: true,
                loss_prob: 0.01,
                one_way_delay: Duration::from_millis(20),
                up: true,
                ..LinkInfo::default()
            },
        );
        let delay = Duration::from_millis(40);
        // (arrival time, to receiver?, bytes)
        let mut wire: Vec<(Time, bool, Vec<u8>)> = Vec::new();
        let mut now = Time::ZERO;
        let end = Time::from_secs_f64(secs);
        let mut sent = 0u64;
        while now < end {
            let mut buf = Vec::new();
            while tx.poll_transmit(now, &mut buf).is_some() {
                sent += 1;
                if sent.checked_rem(drop_every) != Some(0) {
                    wire.push((now + delay, true, std::mem::take(&mut buf)));
                }
                buf.clear();
            }
            wire.sort_by_key(|w| w.0);
            let due: Vec<_> = wire.iter().filter(|w| w.0 <= now).cloned().collect();
            wire.retain(|w| w.0 > now);
            for (_, to_rx, bytes) in due {
                if to_rx {
                    rx.handle_datagram(now, &bytes).expect("valid media");
                    let mut rb = Vec::new();
                    while rx.poll_transmit(now, &mut rb).is_some() {
                        wire.push((now + delay, false, std::mem::take(&mut rb)));
                    }
                } else {
                    tx.handle_datagram(now, &bytes).expect("valid report");
                }
            }
            tx.handle_timeout(now);
            now += Duration::from_millis(1);
        }
        (tx, rx)
    }

    #[test]
    fn reliable_service_selects_tcp_atl_and_media_selects_rcp_atl() {
        assert_eq!(
            ServiceType::parse("reliable").map(ServiceType::protocol),
            Some(AtlProtocol::Tcp(CcKind::Atl))
        );
        assert_eq!(
            ServiceType::parse("media").map(ServiceType::protocol),
            Some(AtlProtocol::Media(RateKind::Atl))
        );
    }

    #[test]
    fn media_flows_measure_rtt_loss_and_deliver_intact_packets() {
        let (tx, rx) = run(RateKind::Aimd, 50, 20.0);
        let rtt = tx.rate_controller().srtt().expect("rtt measured");
        assert!((rtt.as_secs_f64() - 0.08).abs() < 0.005, "{rtt:?}");
        assert!(rx.stats().packets > 100);
        assert_eq!(rx.stats().integrity_errors, 0);
        assert!(tx.stats().decreases > 0);
        assert!((rx.stats().delay.mean_delay_s() - 0.04).abs() < 0.002);
    }

    #[test]
    fn receiver_reports_reach_the_source_and_adapt_rcp_atl() {
        let (tx, _) = run(RateKind::Atl, 50, 20.0);
        let p = tx.rate_controller().params();
        assert_eq!(p.beta, 0.75);
        assert!(p.alpha > 0.0);
        let (aimd, _) = run(RateKind::Aimd, 50, 20.0);
        assert_eq!(aimd.rate_controller().params().beta, 0.5);
    }

    #[test]
    fn garbage_datagrams_are_rejected_without_panicking() {
        let mut tx = MediaSender::new(MediaConfig::default(), RateKind::Atl, ConnId(1));
        let mut rx = MediaReceiver::new(ConnId(1), false, None, Time::ZERO);
        for len in 0..80 {
            let junk: Vec<u8> = (0..len).map(|i| (i * 37 % 251) as u8).collect();
            let _ = tx.handle_datagram(Time::ZERO, &junk);
            let _ = rx.handle_datagram(Time::ZERO, &junk);
        }
        assert_eq!(rx.stats().packets, 0);
    }
}
