//! Configuration of the TCP-like engine. Deserialised from the `[flow.tcp]` table of scenario
//! files; every field has a default, unknown fields are rejected.

use serde::Deserialize;
use std::time::Duration;

use super::last_link::LastLinkConfig;
use super::probing::ProbingConfig;

/// Engine configuration. Defaults follow the papers and the RFCs: initial window of one segment
/// (as in the papers' ns-2 setups), SACK on, no delayed ACK, RFC 6298 timer bounds.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TcpConfig {
    /// Largest payload per segment, in bytes (the papers use 1 KB segments).
    pub mss: u16,
    /// Initial congestion window, in segments.
    pub initial_window: u32,
    /// Offer/accept selective acknowledgements; without SACK, NewReno fast recovery (RFC 6582).
    pub sack: bool,
    /// Delay ACKs (RFC 5681 §4.2: every second full segment or after `delayed_ack_ms`).
    pub delayed_ack: bool,
    /// Delayed-ACK timeout in milliseconds.
    pub delayed_ack_ms: u64,
    /// Duplicate-ACK threshold (RFC 5681 / RFC 6675 DupThresh).
    pub dup_thresh: u32,
    /// Send buffer in bytes (the application can queue this much unacknowledged data).
    pub send_buffer: u64,
    /// Receive buffer in bytes (bounds the advertised window).
    pub recv_buffer: u64,
    /// Initial retransmission timeout in milliseconds (RFC 6298 §2.1: 1 s).
    pub initial_rto_ms: u64,
    /// Lower bound of the RTO in milliseconds (RFC 6298 §2.4: 1 s).
    pub min_rto_ms: u64,
    /// Upper bound of the RTO in milliseconds (RFC 6298 §2.5: at least 60 s).
    pub max_rto_ms: u64,
    /// Upper bound on the congestion window in segments (0 = none), like the "max sending
    /// window" of tcp-probing.txt §4.1.
    pub max_window_segments: u32,
    /// SYN / SYN-ACK transmissions before giving up.
    pub max_syn_retries: u32,
    /// Consecutive RTO expiries on established data before the connection is aborted.
    pub max_retries: u32,
    /// TIME-WAIT duration in milliseconds (2·MSL; short by default so simulations end).
    pub time_wait_ms: u64,
    /// Attach this host's wireless link facts to outgoing ACKs (link-info and last-link
    /// options; atl.txt §IV-A, last-link-heuristics.txt) when the local link is wireless.
    pub report_link_info: bool,
    /// Loss recovery: `"standard"` (RFC 6675 / RFC 6582 fast recovery and RFC 6298 timeouts)
    /// or `"probing"` (TCP-Probing's probe cycle, tcp-probing.txt §3).
    pub recovery: RecoveryMode,
    /// TCP-Probing tuning (`[flow.tcp.probing]`), used when `recovery = "probing"`.
    pub probing: ProbingConfig,
    /// TCP-ELN (rcp-r2cp.txt §3.4.2, ptcp.txt §5.2.5): the receiver marks ACKs for holes its
    /// wireless hop reported corrupted; the sender retransmits without cutting cwnd.
    pub eln: bool,
    /// Last-link heuristics (last-link-heuristics.txt §3), applied by the sender to the
    /// receiver's reports (the receiver needs `report_link_info`).
    pub last_link: LastLinkConfig,
    /// RFC 3042 Limited Transmit for connections without SACK: each duplicate ACK before the
    /// fast-retransmit threshold lets one new segment leave (FlightSize ≤ cwnd + 2·SMSS at the
    /// usual threshold of three), the window unchanged, so that a small window still collects
    /// enough duplicate ACKs to repair a loss without a timeout. With SACK the RFC 6675 pipe
    /// already does this (SACKed segments leave the pipe, §5 step 2). Off by default: the
    /// papers' ns-2 and x-kernel TCPs had none.
    pub limited_transmit: bool,
    /// Where the wireless-loss facts come from (issue 30): `"oracle"` (the host's link facts
    /// and corruption reports, the default) or `"estimated"` (the receiver judges holes itself
    /// and reports its own loss estimate; `tcp/estimated_facts.rs`). Needs `eln` or
    /// `report_link_info`, which use the facts.
    pub facts: Facts,
}

/// Where an engine's wireless-loss facts come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Facts {
    /// The host's: its link model (the simulator) or what the user or OS told it.
    #[default]
    Oracle,
    /// Estimated by the receiving engine from arrivals (Spike over the one-way time).
    Estimated,
}

/// Which loss-recovery mechanism the sender uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecoveryMode {
    /// RFC 6675 (SACK) or RFC 6582 (NewReno) fast recovery, RFC 6298 timeouts.
    #[default]
    Standard,
    /// TCP-Probing (tcp-probing.txt §3).
    Probing,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1000,
            initial_window: 1,
            sack: true,
            delayed_ack: false,
            delayed_ack_ms: 200,
            dup_thresh: 3,
            send_buffer: 4 << 20,
            recv_buffer: 4 << 20,
            initial_rto_ms: 1000,
            min_rto_ms: 1000,
            max_rto_ms: 60_000,
            max_window_segments: 0,
            max_syn_retries: 6,
            max_retries: 15,
            time_wait_ms: 1000,
            report_link_info: false,
            recovery: RecoveryMode::Standard,
            probing: ProbingConfig::default(),
            eln: false,
            limited_transmit: false,
            last_link: LastLinkConfig::default(),
            facts: Facts::Oracle,
        }
    }
}

impl TcpConfig {
    /// Checks ranges; the error names the bad field.
    pub fn validate(&self) -> Result<(), TcpConfigError> {
        if self.mss < 64 {
            return Err(TcpConfigError::MssTooSmall(self.mss));
        }
        if self.initial_window == 0 {
            return Err(TcpConfigError::ZeroInitialWindow);
        }
        if self.dup_thresh == 0 {
            return Err(TcpConfigError::ZeroDupThresh);
        }
        if self.recv_buffer < u64::from(self.mss) || self.recv_buffer > u64::from(u32::MAX) {
            return Err(TcpConfigError::RecvBuffer(self.recv_buffer));
        }
        if self.send_buffer < u64::from(self.mss) {
            return Err(TcpConfigError::SendBufferTooSmall);
        }
        if self.min_rto_ms == 0 || self.max_rto_ms < self.min_rto_ms {
            return Err(TcpConfigError::RtoBounds);
        }
        let (a, b) = (self.probing.a, self.probing.b);
        if !(a.is_finite() && b.is_finite() && (0.0..=1.0).contains(&a) && (0.0..=1.0).contains(&b))
        {
            return Err(TcpConfigError::ProbingWeights);
        }
        if self.initial_rto_ms == 0 {
            return Err(TcpConfigError::ZeroInitialRto);
        }
        if self.facts == Facts::Estimated && !self.eln && !self.report_link_info {
            return Err(TcpConfigError::EstimatedFactsUnused);
        }
        if self.last_link.plr_window > LastLinkConfig::MAX_PLR_WINDOW {
            return Err(TcpConfigError::PlrWindow(self.last_link.plr_window));
        }
        Ok(())
    }

    pub(crate) fn initial_rto(&self) -> Duration {
        Duration::from_millis(self.initial_rto_ms)
    }
    pub(crate) fn min_rto(&self) -> Duration {
        Duration::from_millis(self.min_rto_ms)
    }
    pub(crate) fn max_rto(&self) -> Duration {
        Duration::from_millis(self.max_rto_ms)
    }
}

/// Why a [`TcpConfig`] is invalid. Each message starts with the field it names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TcpConfigError {
    /// `mss` below 64 bytes.
    #[error("mss: must be at least 64 bytes, got {0}")]
    MssTooSmall(u16),
    /// `initial_window` of zero segments.
    #[error("initial_window: must be at least 1 segment")]
    ZeroInitialWindow,
    /// `dup_thresh` of zero.
    #[error("dup_thresh: must be at least 1")]
    ZeroDupThresh,
    /// `recv_buffer` below one `mss` or above `u32::MAX` bytes.
    #[error("recv_buffer: must be between mss and {max} bytes, got {0}", max = u32::MAX)]
    RecvBuffer(u64),
    /// `send_buffer` below one `mss`.
    #[error("send_buffer: must be at least one mss")]
    SendBufferTooSmall,
    /// `min_rto_ms` zero or above `max_rto_ms`.
    #[error("min_rto_ms/max_rto_ms: need 0 < min_rto_ms <= max_rto_ms")]
    RtoBounds,
    /// TCP-Probing's weights outside [0, 1].
    #[error("probing.a/probing.b: weights must be within [0, 1]")]
    ProbingWeights,
    /// `initial_rto_ms` of zero.
    #[error("initial_rto_ms: must be positive")]
    ZeroInitialRto,
    /// `facts = "estimated"` with neither ELN nor link reports to feed.
    #[error("facts: \"estimated\" feeds ELN and the link reports; set eln or report_link_info")]
    EstimatedFactsUnused,
    /// `last_link.plr_window` above [`LastLinkConfig::MAX_PLR_WINDOW`].
    #[error("last_link.plr_window: at most {max} segments, got {0}", max = LastLinkConfig::MAX_PLR_WINDOW)]
    PlrWindow(u32),
}
