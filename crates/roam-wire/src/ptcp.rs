//! The pTCP header (ptcp.txt §4.2, Figure 2) and the pTCP segment that carries it in front of a
//! TCP-v pipe's segment.
//!
//! ```text
//! common header (12; type PTCP, flags: pFIN, pSYN or none, connection id = the pipe's) |
//! pSRC u64 | pDST u64 | pSEQ u64 | pACK u64 | [pSYN: nTx u8 | nRx u8 | list len u16 | address
//! list] | the pipe's segment: a whole [`Segment`] datagram (its own common header names the
//! same pipe; its window field carries the pTCP window)
//! ```
//! * The common header's connection id is the *pipe's* (the TCP-v 4-tuple's role): a host's
//!   endpoint demultiplexes every datagram by it and checks it against the pipe's addresses,
//!   as for every other engine; it must equal the pipe segment's own id (else the datagram is
//!   rejected, so the endpoint and the engine never disagree about the pipe).
//! * pSRC and pDST are the aggregate connection's identifiers at the sending and the
//!   receiving end ("used to uniquely identify the aggregate pTCP connection at both ends").
//!   A first SYN carries pDST 0: the client does not know the server's identifier yet.
//! * pSEQ is the stream offset of the pipe segment's first payload byte, "independent of the
//!   TCP sequence number" the pipe segment carries.
//! * pACK is the cumulative stream acknowledgement; the pipe segment's ACK and SACK fields
//!   stay the pipe's, for its congestion control and loss recovery.
//! * "pTCP reuses and overrides the TCP window advertisement field for performing flow
//!   control": the pipe segment's `window` is the pTCP receive window, counted from pACK.
//! * pFIN (the common header's FIN flag) marks the end of the stream: it ends at pSEQ plus
//!   the payload's length. (The pipe segment's own FIN stays the pipe's: each TCP-v pipe
//!   closes by its own handshake, §4.4.)
//! * pSYN (the common header's SYN flag) announces the connection-establishment extension of
//!   §4.2: nTx, nRx and an address list ([`PtcpHandshake`]), on the first pipe's SYN and its
//!   SYN-ACK.

use crate::reader::Reader;
use crate::{ConnId, DecodeError, Flags, Header, PacketType, Segment, HEADER_LEN};

/// Bytes of the pTCP header: the common header and pSRC, pDST, pSEQ, pACK.
pub const PTCP_HEADER_LEN: usize = HEADER_LEN + 8 + 8 + 8 + 8;

/// Most addresses an address list carries.
pub const MAX_PTCP_ADDRS: usize = 16;

/// Longest address in an address list (bytes; the host chooses the encoding).
pub const MAX_PTCP_ADDR_LEN: usize = 32;

/// The pTCP header (ptcp.txt §4.2): the pipe, pSRC, pDST, pSEQ, pACK, and two flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PtcpHeader {
    /// The pipe this datagram travels on (the common header's connection id).
    pub pipe: ConnId,
    /// pSRC: the aggregate connection's identifier at the sender of this datagram.
    pub src: ConnId,
    /// pDST: the aggregate connection's identifier at its receiver (0 before it is known).
    pub dst: ConnId,
    /// pSEQ: the stream offset of the first payload byte.
    pub seq: u64,
    /// pACK: the next stream offset the sender of this datagram expects.
    pub ack: u64,
    /// pFIN: the stream ends after this datagram's payload.
    pub fin: bool,
    /// pSYN: the connection-establishment extension follows the header.
    pub syn: bool,
}

impl PtcpHeader {
    /// Decodes the pTCP header at the front of `bytes`; returns it and the bytes after it
    /// (the extension if `syn`, then the pipe's segment). Never panics.
    pub fn decode(bytes: &[u8]) -> Result<(PtcpHeader, &[u8]), DecodeError> {
        let header = Header::decode_as(bytes, PacketType::Ptcp)?;
        let known = Flags(Flags::FIN.0 | Flags::SYN.0);
        if header.flags.0 & !known.0 != 0 {
            // pFIN and pSYN are the only pTCP flags defined.
            return Err(DecodeError::FieldOutOfRange {
                field: "ptcp flags",
            });
        }
        let mut r = Reader::at(bytes, HEADER_LEN);
        let src = ConnId(r.u64()?);
        let dst = ConnId(r.u64()?);
        let seq = r.u64()?;
        let ack = r.u64()?;
        let rest = r.take_rest();
        let ptcp = PtcpHeader {
            pipe: header.conn_id,
            src,
            dst,
            seq,
            ack,
            fin: header.flags.contains(Flags::FIN),
            syn: header.flags.contains(Flags::SYN),
        };
        Ok((ptcp, rest))
    }

    /// Appends the encoded header to `out` (the extension and the pipe's segment are the
    /// caller's to append).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(PTCP_HEADER_LEN);
        let mut flags = Flags::default();
        if self.fin {
            flags.insert(Flags::FIN);
        }
        if self.syn {
            flags.insert(Flags::SYN);
        }
        Header {
            packet_type: PacketType::Ptcp,
            flags,
            conn_id: self.pipe,
        }
        .encode(out);
        out.extend_from_slice(&self.src.0.to_be_bytes());
        out.extend_from_slice(&self.dst.0.to_be_bytes());
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.ack.to_be_bytes());
    }
}

/// The connection-establishment extension (ptcp.txt §4.2): "(i) number of transmitting
/// interfaces to be desirably used (nTx), (ii) number of receiving interfaces that can be used
/// (nRx), (iii) list of IP addresses corresponding to nTx (ipTx), and (iv) list of IP addresses
/// corresponding to nRx (ipRx)". One address list travels: the client's (ipTx) on its SYN, the
/// server's (ipRx) on its SYN-ACK. Addresses are opaque bytes the host encodes.
///
/// ```text
/// nTx u8 | nRx u8 | list length u16 | count u8 | count × (length u8 | address bytes)
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtcpHandshake<'a> {
    /// nTx: pipes the sender of this datagram would like to transmit on.
    pub ntx: u8,
    /// nRx: pipes the sender of this datagram agrees to receive on.
    pub nrx: u8,
    /// The encoded address list (see [`PtcpHandshake::write_list`]; at most 65,535 bytes);
    /// validated by the decoder.
    pub list: &'a [u8],
}

impl<'a> PtcpHandshake<'a> {
    /// Encodes `addrs` as an address list into `out` (cleared first); `None` if there are more
    /// than [`MAX_PTCP_ADDRS`] or one is longer than [`MAX_PTCP_ADDR_LEN`].
    pub fn write_list(addrs: &[&[u8]], out: &mut Vec<u8>) -> Option<()> {
        out.clear();
        if addrs.len() > MAX_PTCP_ADDRS || addrs.iter().any(|a| a.len() > MAX_PTCP_ADDR_LEN) {
            return None;
        }
        out.push(addrs.len() as u8);
        for a in addrs {
            out.push(a.len() as u8);
            out.extend_from_slice(a);
        }
        Some(())
    }

    /// The addresses in the list.
    pub fn addresses(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let list = self.list;
        let count = list.first().copied().unwrap_or(0) as usize;
        let mut pos = 1;
        (0..count).map_while(move |_| {
            let len = *list.get(pos)? as usize;
            let a = list.get(pos + 1..pos + 1 + len)?;
            pos += 1 + len;
            Some(a)
        })
    }

    /// Bytes of the encoded extension.
    pub fn encoded_len(&self) -> usize {
        4 + self.list.len()
    }

    fn decode(r: &mut Reader<'a>) -> Result<PtcpHandshake<'a>, DecodeError> {
        let ntx = r.u8()?;
        let nrx = r.u8()?;
        let len = usize::from(r.u16()?);
        let list = r.take(len)?;
        // The list must be exactly `count` well-formed addresses.
        let bad = DecodeError::FieldOutOfRange {
            field: "ptcp address list",
        };
        let Some((&count, mut rest)) = list.split_first() else {
            return Err(bad);
        };
        if usize::from(count) > MAX_PTCP_ADDRS {
            return Err(bad);
        }
        for _ in 0..count {
            let Some((&n, tail)) = rest.split_first() else {
                return Err(bad);
            };
            let n = usize::from(n);
            if n > MAX_PTCP_ADDR_LEN || tail.len() < n {
                return Err(bad);
            }
            rest = &tail[n..];
        }
        if !rest.is_empty() {
            return Err(bad);
        }
        Ok(PtcpHandshake { ntx, nrx, list })
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.ntx);
        out.push(self.nrx);
        out.extend_from_slice(&(self.list.len() as u16).to_be_bytes());
        out.extend_from_slice(self.list);
    }
}

/// A pTCP datagram: the pTCP header, the handshake extension if any, and the pipe segment it
/// carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtcpSegment<'a> {
    /// The pTCP header (its `syn` says whether `handshake` is present; the encoder sets it
    /// from `handshake`).
    pub ptcp: PtcpHeader,
    /// The connection-establishment extension (pSYN).
    pub handshake: Option<PtcpHandshake<'a>>,
    /// The TCP-v pipe's segment (its payload is stream bytes from `ptcp.seq`).
    pub segment: Segment<'a>,
}

impl<'a> PtcpSegment<'a> {
    /// Decodes a whole datagram as a pTCP segment. Never panics.
    pub fn decode(bytes: &'a [u8]) -> Result<PtcpSegment<'a>, DecodeError> {
        let (ptcp, _) = PtcpHeader::decode(bytes)?;
        let mut r = Reader::at(bytes, PTCP_HEADER_LEN);
        let handshake = if ptcp.syn {
            Some(PtcpHandshake::decode(&mut r)?)
        } else {
            None
        };
        let segment = Segment::decode(r.take_rest())?;
        if segment.conn_id != ptcp.pipe {
            return Err(DecodeError::FieldOutOfRange { field: "ptcp pipe" });
        }
        if ptcp.seq.checked_add(segment.payload.len() as u64).is_none() {
            return Err(DecodeError::FieldOutOfRange { field: "pseq" });
        }
        Ok(PtcpSegment {
            ptcp,
            handshake,
            segment,
        })
    }

    /// Length of the encoded datagram.
    pub fn encoded_len(&self) -> usize {
        PTCP_HEADER_LEN + self.handshake.map_or(0, |h| h.encoded_len()) + self.segment.encoded_len()
    }

    /// Appends the encoded datagram to `out`. The header's connection id is the pipe
    /// segment's, its pSYN flag says whether the extension is there.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(self.encoded_len());
        PtcpHeader {
            pipe: self.segment.conn_id,
            syn: self.handshake.is_some(),
            ..self.ptcp
        }
        .encode(out);
        if let Some(h) = &self.handshake {
            h.encode(out);
        }
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
                pipe: ConnId(42),
                src: ConnId(0x0a0b),
                dst: ConnId(0x0102_0304_0506_0708),
                seq: 5000,
                ack: 77,
                fin: false,
                syn: false,
            },
            handshake: None,
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
    fn layout_is_the_common_header_then_psrc_pdst_pseq_pack_then_the_pipe_segment() {
        let s = sample(b"xyz");
        let mut out = Vec::new();
        s.encode(&mut out);
        assert_eq!(out.len(), s.encoded_len());
        assert_eq!(out[1], PacketType::Ptcp as u8);
        assert_eq!(&out[2..4], &[0, 0], "no flags");
        assert_eq!(&out[4..12], &42u64.to_be_bytes(), "the pipe");
        assert_eq!(&out[12..20], &0x0a0bu64.to_be_bytes(), "pSRC");
        assert_eq!(
            &out[20..28],
            &0x0102_0304_0506_0708u64.to_be_bytes(),
            "pDST"
        );
        assert_eq!(&out[28..36], &5000u64.to_be_bytes(), "pSEQ");
        assert_eq!(&out[36..44], &77u64.to_be_bytes(), "pACK");
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
        flagged[3] = Flags::RST.0 as u8;
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
        // The pipe named in front must be the pipe segment's.
        let mut other_pipe = out.clone();
        other_pipe[11] ^= 1;
        assert_eq!(
            PtcpSegment::decode(&other_pipe),
            Err(DecodeError::FieldOutOfRange { field: "ptcp pipe" })
        );
        // pSYN without a well-formed extension.
        let mut syn = out.clone();
        syn[3] = Flags::SYN.0 as u8;
        assert!(PtcpSegment::decode(&syn).is_err());
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

    #[test]
    fn the_handshake_extension_round_trips_and_lists_its_addresses() {
        let mut list = Vec::new();
        PtcpHandshake::write_list(&[b"10.0.0.1:80", b"", b"fe80::1"], &mut list).unwrap();
        let s = PtcpSegment {
            handshake: Some(PtcpHandshake {
                ntx: 3,
                nrx: 2,
                list: &list,
            }),
            ..sample(b"")
        };
        let mut out = Vec::new();
        s.encode(&mut out);
        assert_eq!(out.len(), s.encoded_len());
        assert_eq!(&out[2..4], &Flags::SYN.0.to_be_bytes(), "pSYN");
        let d = PtcpSegment::decode(&out).unwrap();
        assert!(d.ptcp.syn);
        assert_eq!(d.handshake, s.handshake);
        let addrs: Vec<&[u8]> = d.handshake.unwrap().addresses().collect();
        assert_eq!(addrs, vec![&b"10.0.0.1:80"[..], b"", b"fe80::1"]);
        // Too many or too long addresses cannot be written.
        let many = vec![&b"a"[..]; MAX_PTCP_ADDRS + 1];
        assert!(PtcpHandshake::write_list(&many, &mut list).is_none());
        let long = [0u8; MAX_PTCP_ADDR_LEN + 1];
        assert!(PtcpHandshake::write_list(&[&long], &mut list).is_none());
        // A list whose count or lengths do not add up is rejected.
        let at = PTCP_HEADER_LEN + 4;
        for (i, b) in [(at, 4u8), (at + 1, 200), (at, 17)] {
            let mut bad = out.clone();
            bad[i] = b;
            assert!(PtcpSegment::decode(&bad).is_err(), "byte {i} = {b}");
        }
    }
}
