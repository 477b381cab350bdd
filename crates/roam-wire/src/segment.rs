//! The TCP-like segment used by sender-driven engines.
//!
//! ```text
//! common header (12) | seq u64 | ack u64 | window u32 | ts_val u32 | ts_ecr u32 |
//! opts_len u8 | options (opts_len bytes) | payload (rest of datagram)
//! ```
//! Sequence numbers are 64-bit stream offsets (no wrap-around in any realistic transfer);
//! the SYN and FIN each occupy one sequence number, as in TCP.

use crate::{ConnId, DecodeError, Flags, Options};

/// Bytes of a segment before its options: common header + fixed fields + options length byte.
pub const SEGMENT_FIXED_LEN: usize = crate::HEADER_LEN + 8 + 8 + 4 + 4 + 4 + 1;

/// A decoded (or to-be-encoded) segment borrowing its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment<'a> {
    /// Connection identifier.
    pub conn_id: ConnId,
    /// SYN/ACK/FIN/RST/ELN.
    pub flags: Flags,
    /// Sequence number of the first payload byte (or of the SYN/FIN).
    pub seq: u64,
    /// Next sequence number expected by the sender of this segment (valid with ACK).
    pub ack: u64,
    /// Receive window in bytes, counted from `ack`.
    pub window: u32,
    /// Sender's timestamp (µs, wrapping; RFC 7323 TSval).
    pub ts_val: u32,
    /// Echo of the peer's most recent timestamp (RFC 7323 TSecr).
    pub ts_ecr: u32,
    /// Options.
    pub options: Options,
    /// Payload bytes.
    pub payload: &'a [u8],
}

impl<'a> Segment<'a> {
    /// Decodes a whole datagram as a segment. Never panics.
    pub fn decode(bytes: &'a [u8]) -> Result<Segment<'a>, DecodeError> {
        todo!("helper: implement")
    }

    /// Length of the encoded datagram.
    pub fn encoded_len(&self) -> usize {
        todo!("helper: implement")
    }

    /// Appends the encoded datagram to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        todo!("helper: implement")
    }

    /// Sequence space consumed: payload length plus one for SYN and one for FIN.
    pub fn seq_len(&self) -> u64 {
        self.payload.len() as u64
            + u64::from(self.flags.contains(Flags::SYN))
            + u64::from(self.flags.contains(Flags::FIN))
    }
}
