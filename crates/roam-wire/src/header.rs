//! The common datagram header.
//!
//! ```text
//!  0       1       2               4                               12
//! +-------+-------+---------------+-------------------------------+
//! |version| type  |    flags      |      connection id (u64)      |
//! +-------+-------+---------------+-------------------------------+
//! ```
//! All integers are big-endian.

use crate::reader::Reader;
use crate::DecodeError;

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
    /// A pTCP datagram: the pTCP header and a pipe segment (see [`crate::PtcpSegment`]).
    Ptcp = 0x06,
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
            0x06 => Ok(Self::Ptcp),
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
    /// An address-validation token ([`crate::Token`]) follows the format's fixed fields (RCP
    /// REQ and DATA, media packets and reports; see each format). Decoders move it out of the
    /// flags into the format's `token` field.
    pub const TOKEN: Flags = Flags(1 << 5);
    /// Every bit this version defines.
    pub const ALL: Flags = Flags(0x003f);

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
        let [version, packet_type, f0, f1, id @ ..] = Reader::new(bytes).array::<HEADER_LEN>()?;
        check_version(version)?;
        let packet_type = PacketType::from_u8(packet_type)?;
        let flags = u16::from_be_bytes([f0, f1]);
        if flags & !Flags::ALL.0 != 0 {
            return Err(DecodeError::ReservedFlags(flags & !Flags::ALL.0));
        }
        Ok(Header {
            packet_type,
            flags: Flags(flags),
            conn_id: ConnId(u64::from_be_bytes(id)),
        })
    }

    /// [`Header::decode`], then checks that the packet is of type `expected`
    /// ([`DecodeError::WrongPacketType`] otherwise): the first step of every packet type's
    /// `decode`.
    pub fn decode_as(bytes: &[u8], expected: PacketType) -> Result<Header, crate::DecodeError> {
        let header = Header::decode(bytes)?;
        if header.packet_type != expected {
            return Err(DecodeError::WrongPacketType {
                expected,
                found: header.packet_type,
            });
        }
        Ok(header)
    }

    /// Appends the encoded header to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_bytes());
    }

    /// The encoded header.
    pub(crate) fn to_bytes(self) -> [u8; HEADER_LEN] {
        let [f0, f1] = self.flags.0.to_be_bytes();
        let [i0, i1, i2, i3, i4, i5, i6, i7] = self.conn_id.0.to_be_bytes();
        [
            VERSION,
            self.packet_type as u8,
            f0,
            f1,
            i0,
            i1,
            i2,
            i3,
            i4,
            i5,
            i6,
            i7,
        ]
    }

    /// Reads only the connection id, for demultiplexing before a full decode.
    ///
    /// Checks the length and the version byte; the packet type and flags are left to
    /// [`Header::decode`].
    #[inline]
    pub fn peek_conn_id(bytes: &[u8]) -> Result<ConnId, crate::DecodeError> {
        let [version, _, _, _, id @ ..] = Reader::new(bytes).array::<HEADER_LEN>()?;
        check_version(version)?;
        Ok(ConnId(u64::from_be_bytes(id)))
    }

    /// Reads only the packet type, to hand a datagram for no connection to the protocol it
    /// belongs to before a full decode.
    ///
    /// Checks the length and the version byte, as [`Header::peek_conn_id`].
    #[inline]
    pub fn peek_packet_type(bytes: &[u8]) -> Result<PacketType, crate::DecodeError> {
        let [version, packet_type, ..] = Reader::new(bytes).array::<HEADER_LEN>()?;
        check_version(version)?;
        PacketType::from_u8(packet_type)
    }
}

fn check_version(version: u8) -> Result<(), DecodeError> {
    if version == VERSION {
        Ok(())
    } else {
        Err(DecodeError::UnsupportedVersion(version))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Header {
        Header {
            packet_type: PacketType::Segment,
            flags: Flags::SYN | Flags::ACK,
            conn_id: ConnId(0x0102_0304_0506_0708),
        }
    }

    fn encoded(h: &Header) -> Vec<u8> {
        let mut out = Vec::new();
        h.encode(&mut out);
        out
    }

    #[test]
    fn header_layout_is_big_endian() {
        assert_eq!(
            encoded(&sample()),
            [VERSION, 0x01, 0x00, 0x03, 1, 2, 3, 4, 5, 6, 7, 8]
        );
    }

    #[test]
    fn header_round_trips_and_ignores_trailing_bytes() {
        let mut bytes = encoded(&sample());
        bytes.extend_from_slice(b"payload");
        assert_eq!(Header::decode(&bytes), Ok(sample()));
        assert_eq!(Header::peek_conn_id(&bytes), Ok(sample().conn_id));
    }

    #[test]
    fn header_shorter_than_twelve_bytes_is_truncated() {
        let bytes = encoded(&sample());
        let err = DecodeError::Truncated {
            offset: 0,
            needed: HEADER_LEN,
            len: HEADER_LEN - 1,
        };
        assert_eq!(Header::decode(&bytes[..HEADER_LEN - 1]), Err(err));
        assert_eq!(Header::peek_conn_id(&bytes[..HEADER_LEN - 1]), Err(err));
    }

    #[test]
    fn header_with_other_version_is_unsupported() {
        let mut bytes = encoded(&sample());
        bytes[0] = VERSION + 1;
        let err = DecodeError::UnsupportedVersion(VERSION + 1);
        assert_eq!(Header::decode(&bytes), Err(err));
        assert_eq!(Header::peek_conn_id(&bytes), Err(err));
    }

    #[test]
    fn header_with_unknown_packet_type_is_rejected() {
        let mut bytes = encoded(&sample());
        bytes[1] = 0xee;
        assert_eq!(
            Header::decode(&bytes),
            Err(DecodeError::UnknownPacketType(0xee))
        );
    }

    #[test]
    fn header_with_reserved_flag_bits_is_rejected() {
        let mut bytes = encoded(&sample());
        bytes[2] = 0x80;
        bytes[3] = 0x40 | 0x01;
        assert_eq!(
            Header::decode(&bytes),
            Err(DecodeError::ReservedFlags(0x8040))
        );
    }

    #[test]
    fn peek_conn_id_ignores_packet_type_and_flags() {
        let mut bytes = encoded(&sample());
        bytes[1] = 0xff;
        bytes[2] = 0xff;
        assert_eq!(Header::peek_conn_id(&bytes), Ok(sample().conn_id));
    }

    #[test]
    fn every_packet_type_round_trips_through_its_byte() {
        for t in [
            PacketType::Segment,
            PacketType::Request,
            PacketType::Data,
            PacketType::Media,
            PacketType::MediaReport,
            PacketType::Ptcp,
        ] {
            assert_eq!(PacketType::from_u8(t as u8), Ok(t));
        }
        assert_eq!(
            PacketType::from_u8(0),
            Err(DecodeError::UnknownPacketType(0))
        );
    }

    #[test]
    fn packet_type_is_peeked_from_a_whole_header_only() {
        let mut b = Vec::new();
        sample().encode(&mut b);
        assert_eq!(Header::peek_packet_type(&b), Ok(sample().packet_type));
        assert!(Header::peek_packet_type(&b[..HEADER_LEN - 1]).is_err());
        b[0] = VERSION.wrapping_add(1);
        assert!(Header::peek_packet_type(&b).is_err());
        b[0] = VERSION;
        b[1] = 0xee;
        assert_eq!(
            Header::peek_packet_type(&b),
            Err(DecodeError::UnknownPacketType(0xee))
        );
    }
}
