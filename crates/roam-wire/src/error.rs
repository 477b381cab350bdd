//! Typed decoding errors.

use thiserror::Error;

/// Why a datagram could not be decoded. Every decoder returns one of these instead of panicking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// The datagram ended before the field that was being read.
    #[error("datagram truncated: needed {needed} bytes at offset {offset}, have {len}")]
    Truncated {
        /// Offset of the field being read.
        offset: usize,
        /// Bytes the field needs.
        needed: usize,
        /// Total datagram length.
        len: usize,
    },
    /// The version byte is not one this build speaks.
    #[error("unsupported version {0}")]
    UnsupportedVersion(u8),
    /// The packet-type byte names no known packet type.
    #[error("unknown packet type {0:#04x}")]
    UnknownPacketType(u8),
    /// The packet is of a known type but not the one the caller asked to decode.
    #[error("wrong packet type: expected {expected:?}, found {found:?}")]
    WrongPacketType {
        /// What the decoder handles.
        expected: crate::PacketType,
        /// What the datagram says it is.
        found: crate::PacketType,
    },
    /// Flag bits that this version does not define are set.
    #[error("reserved flag bits set: {0:#06x}")]
    ReservedFlags(u16),
    /// The options area length points past the end of the datagram.
    #[error("options length {opts_len} exceeds remaining {remaining} bytes")]
    OptionsOverrun {
        /// Declared options length.
        opts_len: usize,
        /// Bytes left after the fixed header.
        remaining: usize,
    },
    /// An option's length byte is inconsistent with its kind or with the options area.
    #[error("malformed option kind {kind} (length {len})")]
    MalformedOption {
        /// Option kind byte.
        kind: u8,
        /// Option length byte (total option length including kind and length bytes).
        len: u8,
    },
    /// The same option appears twice.
    #[error("duplicate option kind {0}")]
    DuplicateOption(u8),
    /// A SACK block has `start >= end`.
    #[error("invalid SACK block [{start}, {end})")]
    InvalidSackBlock {
        /// Left edge.
        start: u64,
        /// Right edge (exclusive).
        end: u64,
    },
    /// A field holds a value outside its legal range (e.g. a probability above one).
    #[error("field {field} out of range")]
    FieldOutOfRange {
        /// Name of the field.
        field: &'static str,
    },
}
