//! The pTCP header (ptcp.txt §4.2, Figure 2) and the pTCP segment that carries it in front of a
//! TCP-v pipe's segment.
//!
//! ```text
//! common header (12; type PTCP, flags: pFIN or none, connection id = pDST) | pSRC u64 | pSEQ u64 |
//! pACK u64 | the pipe's segment: a whole [`Segment`] datagram (its own common header names
//! the pipe; its window field carries the pTCP window)
//! ```
//! * pSRC and pDST are the aggregate connection's identifiers at the sending and the
//!   receiving end ("used to uniquely identify the aggregate pTCP connection at both ends");
//!   pDST rides as the common header's connection id, so datagrams demultiplex to the
//!   aggregate connection before the pipe is looked at.
//! * pSEQ is the stream offset of the pipe segment's first payload byte, "independent of the
//!   TCP sequence number" the pipe segment carries.
//! * pACK is the cumulative stream acknowledgement; the pipe segment's ACK and SACK fields
//!   stay the pipe's, for its congestion control and loss recovery.
//! * "pTCP reuses and overrides the TCP window advertisement field for performing flow
//!   control": the pipe segment's `window` is the pTCP receive window, counted from pACK.
//!
//! * pFIN (the common header's FIN flag) marks the end of the stream: it ends at pSEQ plus
//!   the payload's length. (The pipe segment's own FIN stays the pipe's: each TCP-v pipe
//!   closes by its own handshake, §4.4.)
//!
//! The connection-establishment extension (nTx, nRx and the address lists of §4.2) is not
//! part of this header; another flag bit will announce it.

use crate::reader::Reader;
use crate::{ConnId, DecodeError, Flags, Header, PacketType, Segment, HEADER_LEN};

/// Bytes of the pTCP header: the common header and pSRC, pSEQ, pACK.
pub const PTCP_HEADER_LEN: usize = HEADER_LEN + 8 + 8 + 8;

/// The pTCP header (ptcp.txt §4.2): pSRC, pDST, pSEQ, pACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PtcpHeader {
    /// pSRC: the aggregate connection's identifier at the sender of this datagram.
    pub src: ConnId,
    /// pDST: the aggregate connection's identifier at its receiver.
    pub dst: ConnId,
    /// pSEQ: the stream offset of the first payload byte.
    pub seq: u64,
    /// pACK: the next stream offset the sender of this datagram expects.
    pub ack: u64,
    /// pFIN: the stream ends after this datagram's payload.
    pub fin: bool,
}

impl PtcpHeader {
    /// Decodes the pTCP header at the front of `bytes`; returns it and the bytes after it
    /// (the pipe's segment). Never panics.
    pub fn decode(bytes: &[u8]) -> Result<(PtcpHeader, &[u8]), DecodeError> {
        let header = Header::decode_as(bytes, PacketType::Ptcp)?;
        if header.flags != Flags::default() && header.flags != Flags::FIN {
            // pFIN is the only pTCP flag defined (the handshake extension will take another).
            return Err(DecodeError::FieldOutOfRange {
                field: "ptcp flags",
            });
        }
        let mut r = Reader::at(bytes, HEADER_LEN);
        let src = ConnId(r.u64()?);
        let seq = r.u64()?;
        let ack = r.u64()?;
        let rest = r.take_rest();
        let ptcp = PtcpHeader {
            src,
            dst: header.conn_id,
            seq,
            ack,
            fin: header.flags == Flags::FIN,
        };
        Ok((ptcp, rest))
    }

    /// Appends the encoded header to `out` (the pipe's segment is the caller's to append).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(PTCP_HEADER_LEN);
        Header {
            packet_type: PacketType::Ptcp,
            flags: if self.fin {
                Flags::FIN
            } else {
                Flags::default()
            },
            conn_id: self.dst,
        }
        .encode(out);
        out.extend_from_slice(&self.src.0.to_be_bytes());
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.ack.to_be_bytes());
    }
}

/// A pTCP datagram: the pTCP header and the pipe segment it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtcpSegment<'a> {
    /// The pTCP header.
    pub ptcp: PtcpHeader,
    /// The TCP-v pipe's segment (its payload is stream bytes from `ptcp.seq`).
    pub segment: Segment<'a>,
}

impl<'a> PtcpSegment<'a> {
    /// Decodes a whole datagram as a pTCP segment. Never panics.
    pub fn decode(bytes: &'a [u8]) -> Result<PtcpSegment<'a>, DecodeError> {
        let (ptcp, rest) = PtcpHeader::decode(bytes)?;
        let segment = Segment::decode(rest)?;
        if ptcp.seq.checked_add(segment.payload.len() as u64).is_none() {
            return Err(DecodeError::FieldOutOfRange { field: "pseq" });
        }
        Ok(PtcpSegment { ptcp, segment })
    }

    /// Length of the encoded datagram.
    pub fn encoded_len(&self) -> usize {
        PTCP_HEADER_LEN + self.segment.encoded_len()
    }

    /// Appends the encoded datagram to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(self.encoded_len());
        self.ptcp.encode(out);
        self.segment.encode(out);
    }

    /// One past the last stream byte the payload carries.
    pub fn stream_end(&self) -> u64 {
        self.ptcp
            .seq
            .saturating_add(self.segment.payload.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Options;

    fn sample(payload: &[u8]) -> PtcpSegment<'_> {
        PtcpSegment {
            ptcp: PtcpHeader {
                src: ConnId(0x0a0b),
                dst: ConnId(0x0102_0304_0506_0708),
                seq: 5000,
                ack: 77,
                fin: false,
            },
            segment: Segment {
                conn_id: ConnId(42),
                flags: Flags::ACK,
                seq: 1001,
                ack: 1,
                window: 65535,
                ts_val: 3,
                ts_ecr: 4,
                options: Options::default(),
                payload,
            },
        }
    }

    #[test]
    fn layout_is_the_common_header_then_psrc_pseq_pack_then_the_pipe_segment() {
        let s = sample(b"xyz");
        let mut out = Vec::new();
        s.encode(&mut out);
        assert_eq!(out.len(), s.encoded_len());
        assert_eq!(out[1], PacketType::Ptcp as u8);
        assert_eq!(&out[2..4], &[0, 0], "no flags");
        assert_eq!(&out[4..12], &0x0102_0304_0506_0708u64.to_be_bytes(), "pDST");
        assert_eq!(&out[12..20], &0x0a0bu64.to_be_bytes(), "pSRC");
        assert_eq!(&out[20..28], &5000u64.to_be_bytes(), "pSEQ");
        assert_eq!(&out[28..36], &77u64.to_be_bytes(), "pACK");
        assert_eq!(Segment::decode(&out[PTCP_HEADER_LEN..]), Ok(s.segment));
        assert_eq!(PtcpSegment::decode(&out), Ok(s));
        assert_eq!(s.stream_end(), 5003);
        // pFIN is the common header's FIN flag.
        let fin = PtcpSegment {
            ptcp: PtcpHeader {
                fin: true,
                ..s.ptcp
            },
            ..s
        };
        let mut out = Vec::new();
        fin.encode(&mut out);
        assert_eq!(&out[2..4], &Flags::FIN.0.to_be_bytes(), "pFIN");
        assert_eq!(PtcpSegment::decode(&out), Ok(fin));
    }

    #[test]
    fn malformed_ptcp_datagrams_are_typed_errors() {
        let s = sample(b"xyz");
        let mut out = Vec::new();
        s.encode(&mut out);
        for cut in 0..PTCP_HEADER_LEN {
            assert!(matches!(
                PtcpSegment::decode(&out[..cut]),
                Err(DecodeError::Truncated { .. })
            ));
        }
        assert!(PtcpSegment::decode(&out[..PTCP_HEADER_LEN + 5]).is_err());
        let mut flagged = out.clone();
        flagged[3] = Flags::SYN.0 as u8;
        assert_eq!(
            PtcpSegment::decode(&flagged),
            Err(DecodeError::FieldOutOfRange {
                field: "ptcp flags"
            })
        );
        let mut plain = Vec::new();
        s.segment.encode(&mut plain);
        assert!(matches!(
            PtcpSegment::decode(&plain),
            Err(DecodeError::WrongPacketType { .. })
        ));
        let overflowing = PtcpSegment {
            ptcp: PtcpHeader {
                seq: u64::MAX,
                ..s.ptcp
            },
            ..s
        };
        let mut out = Vec::new();
        overflowing.encode(&mut out);
        assert_eq!(
            PtcpSegment::decode(&out),
            Err(DecodeError::FieldOutOfRange { field: "pseq" })
        );
    }
}
