//! RCP receiver and sender options (the `[flow.rcp]` table in scenario files).

use serde::Deserialize;

use super::RcpConfigError;

/// Options of an RCP receiver (the side that runs congestion control and reliability) and of
/// an RCP sender (which has only its segment size and reverse window).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RcpConfig {
    /// Segment size the receiver requests (bytes of object data per DATA).
    pub mss: u16,
    /// Initial congestion window in segments.
    pub initial_window: u32,
    /// Out-of-order arrivals that declare a requested segment lost (every hole, §3.3.5 (i)).
    pub dup_thresh: u32,
    /// Receive buffer: bytes requested but not yet read by the application never exceed it
    /// (a "dummy sk_buff" is reserved per request, §3.3.4).
    pub recv_buffer: u64,
    /// Initial RTO (ms) before the first RTT sample.
    pub initial_rto_ms: u64,
    /// Lower bound of the RTO (ms).
    pub min_rto_ms: u64,
    /// Upper bound of the RTO and of the persist interval (ms).
    pub max_rto_ms: u64,
    /// SYN / FIN retransmissions before giving up.
    pub max_syn_retries: u32,
    /// Consecutive request timeouts with nothing arriving before an established connection
    /// gives up (as TCP's retransmission limit; sleeping does not count).
    pub max_retries: u32,
    /// Use per-hole ELN: holes the host reported as wireless corruption are re-requested
    /// without a congestion response (rcp-r2cp.txt §3.4.2).
    pub eln: bool,
    /// Sender: most bytes past the receiver's reported in-order point it lets the receiver
    /// request (0 = unlimited): reverse flow control (§3.3.4).
    pub sender_window: u64,
    /// Upper bound of the congestion window in segments (0 = unlimited).
    pub max_window_segments: u32,
    /// Send requests only every this many milliseconds ("status requests", the STP-style
    /// reporting of `docs/RCP.md`) instead of on every arrival; 0 = on every arrival.
    pub status_interval_ms: u64,
    /// Sender: expire the connection when nothing has arrived from the receiver for this
    /// many milliseconds (0 = never). The sender never retransmits on its own, so without it a
    /// vanished receiver would hold the sender's state for good. See [`super::RcpSender`].
    pub idle_timeout_ms: u64,
    /// Sender host: at most this many resets a second for requests to connections it does not
    /// hold (0 = no limit). See [`super::ResetLimiter`].
    pub resets_per_second: u32,
    /// Sender: most object bytes it reads ahead through its host, past SND.NXT, when its store
    /// cannot read without blocking (at least one segment is always read). See
    /// [`super::RcpSender::poll_read`].
    pub read_ahead: u64,
}

impl Default for RcpConfig {
    fn default() -> Self {
        RcpConfig {
            mss: 1000,
            initial_window: 1,
            dup_thresh: 3,
            recv_buffer: 4 << 20,
            initial_rto_ms: 1000,
            min_rto_ms: 1000,
            max_rto_ms: 60_000,
            max_syn_retries: 6,
            max_retries: 15,
            eln: false,
            sender_window: 0,
            max_window_segments: 0,
            status_interval_ms: 0,
            // 15 min: about when Linux TCP gives up on a silent peer (tcp_retries2 = 15,
            // 924.6 s; RFC 1122 §4.2.3.5 asks for at least 100 s).
            idle_timeout_ms: 900_000,
            resets_per_second: super::ResetLimiter::DEFAULT_PER_SECOND,
            read_ahead: 64 << 10,
        }
    }
}

impl RcpConfig {
    /// Checks values that would make the engine misbehave; the message names the field.
    pub fn validate(&self) -> Result<(), RcpConfigError> {
        if self.mss < 64 {
            return Err(RcpConfigError::MssTooSmall);
        }
        if self.initial_window == 0 {
            return Err(RcpConfigError::ZeroInitialWindow);
        }
        if self.dup_thresh == 0 {
            return Err(RcpConfigError::ZeroDupThresh);
        }
        if self.recv_buffer < u64::from(self.mss) * 2 {
            return Err(RcpConfigError::RecvBufferTooSmall);
        }
        if self.min_rto_ms == 0 || self.max_rto_ms < self.min_rto_ms {
            return Err(RcpConfigError::RtoBounds);
        }
        Ok(())
    }
}
