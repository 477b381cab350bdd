//! Typed errors of the RCP engines: a configuration the engines refuse
//! ([`RcpConfigError`]), and why a receiver could not be opened or a datagram was not taken
//! ([`RcpError`]). The messages name the offending field or the reason in the words the CLI
//! has always shown.

use roam_wire::DecodeError;

/// Why [`super::RcpConfig::validate`] refused a configuration; the message names the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RcpConfigError {
    /// `mss` below 64 bytes.
    #[error("mss: must be at least 64")]
    MssTooSmall,
    /// `initial_window` of zero segments.
    #[error("initial_window: must be at least 1")]
    ZeroInitialWindow,
    /// `dup_thresh` of zero.
    #[error("dup_thresh: must be at least 1")]
    ZeroDupThresh,
    /// `recv_buffer` smaller than two segments.
    #[error("recv_buffer: must hold at least two segments")]
    RecvBufferTooSmall,
    /// `min_rto_ms` zero or above `max_rto_ms`.
    #[error("min_rto_ms: must be positive and not above max_rto_ms")]
    RtoBounds,
}

/// Why an RCP engine refused to open or did not take a datagram. Datagram errors are for
/// the host's statistics: the engine ignored the datagram and its state is unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RcpError {
    /// The configuration is unusable.
    #[error(transparent)]
    Config(#[from] RcpConfigError),
    /// The range ends before it starts.
    #[error("range: end before start")]
    Range,
    /// The datagram could not be decoded.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The datagram carries another connection's id.
    #[error("foreign connection id")]
    ForeignConnection,
    /// The sender expired; it takes no more datagrams.
    #[error("connection expired")]
    Expired,
}
