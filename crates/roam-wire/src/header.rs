//! The common datagram header.
//!
//! ```text
//!  0       1       2               4                               12
//! +-------+-------+---------------+-------------------------------+
//! |version| type  |    flags      |      connection id (u64)      |
//! +-------+-------+---------------+-------------------------------+
//! ```
//! All integers are big-endian.

/// The wire-format version this build encodes and accepts.
pub const VERSION: u8 = 1;

/// Length of the common header in bytes.
pub const HEADER_LEN: usize = 12;

/// A random connection identifier chosen by the connection's initiator; demultiplexes datagrams
/// to connections independently of addresses (so a connection survives address changes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ConnId(pub u64);

/// What follows the common header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PacketType {
    /// A TCP-like segment (sender-driven engines: TCP, pTCP pipes). See [`crate::Segment`].
    Segment = 0x01,
    /// Reserved: RCP request (receiver → sender).
    Request = 0x02,
    /// Reserved: RCP object data (sender → receiver).
    Data = 0x03,
    /// Reserved: RCP-ATL media datagram.
    Media = 0x04,
    /// Reserved: RCP-ATL receiver report.
    MediaReport = 0x05,
}

impl PacketType {
    /// Decodes the packet-type byte.
    pub fn from_u8(b: u8) -> Result<Self, crate::DecodeError> {
        match b {
            0x01 => Ok(Self::Segment),
            0x02 => Ok(Self::Request),
            0x03 => Ok(Self::Data),
            0x04 => Ok(Self::Media),
            0x05 => Ok(Self::MediaReport),
            other => Err(crate::DecodeError::UnknownPacketType(other)),
        }
    }
}

/// Segment flags (16 bits on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(pub u16);

impl Flags {
    /// Synchronise: opens a connection.
    pub const SYN: Flags = Flags(1 << 0);
    /// The acknowledgement field is valid.
    pub const ACK: Flags = Flags(1 << 1);
    /// No more data from the sender.
    pub const FIN: Flags = Flags(1 << 2);
    /// Reset: abort the connection.
    pub const RST: Flags = Flags(1 << 3);
    /// Explicit loss notification: the hole at the acknowledgement point was lost on the
    /// receiver's wireless hop, not to congestion (rcp-r2cp.txt §3.4.2, ptcp.txt §5.2.5).
    pub const ELN: Flags = Flags(1 << 4);
    /// Every bit this version defines.
    pub const ALL: Flags = Flags(0x001f);

    /// True if every bit of `other` is set in `self`.
    pub fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
    /// Sets the bits of `other`.
    pub fn insert(&mut self, other: Flags) {
        self.0 |= other.0;
    }
    /// Clears the bits of `other`.
    pub fn remove(&mut self, other: Flags) {
        self.0 &= !other.0;
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        Flags(self.0 | rhs.0)
    }
}

/// The common header of every roam datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// What follows.
    pub packet_type: PacketType,
    /// Flag bits (meaning depends on the packet type; see [`Flags`] for segments).
    pub flags: Flags,
    /// Connection identifier.
    pub conn_id: ConnId,
}

impl Header {
    /// Decodes the common header from the front of `bytes` (version checked, reserved flag
    /// bits rejected).
    pub fn decode(bytes: &[u8]) -> Result<Header, crate::DecodeError> {
        todo!("helper: implement")
    }

    /// Appends the encoded header to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        todo!("helper: implement")
    }

    /// Reads only the connection id, for demultiplexing before a full decode.
    pub fn peek_conn_id(bytes: &[u8]) -> Result<ConnId, crate::DecodeError> {
        todo!("helper: implement")
    }
}
