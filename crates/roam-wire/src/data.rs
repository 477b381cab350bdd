//! RCP data (DATA), sender → receiver (rcp-r2cp.txt §3.2–3.3).
//!
//! ```text
//! common header (12; flags SYN/ACK/FIN/RST/TOKEN) | seq u64 | window u64 | ts_val u32 |
//! ts_ecr u32 | pull_id u32 | ext u8 | [object_len u64 if ext bit 0] |
//! [TOKEN: token (18 bytes)] | payload (rest)
//! ```
//! A data segment is 41 bytes before its payload, exactly as long as the TCP segment
//! (`SEGMENT_FIXED_LEN`): RCP is a TCP clone, and equal wire sizes keep comparisons between
//! the two free of packet-size effects at drop-tail queues (see `docs/RCP.md`).
//! * `seq` is the object offset of the first payload byte (object offsets are the sequence
//!   space: any sender holding the object serves any range).
//! * `window` (SND.WND) is the highest object offset the receiver may request: the sender's
//!   reverse flow control (§3.3.4).
//! * `object_len` is the object's length ([`UNKNOWN_LENGTH`] for an unbounded source); it
//!   rides only when `ext` bit 0 is set (the sender sets it on SYN+ACK and window updates).
//! * `ts_ecr` echoes the timestamp of the REQ that asked for this data, so the receiver takes
//!   unambiguous RTT samples even for re-requested data.
//! * `pull_id` is the pull serial number this segment answers (0 for cumulative-mode data).
//! * `token` (flag TOKEN) rides on the SYN+ACK a sender answers a SYN with, keeping no state:
//!   the receiver echoes it in its requests (see [`crate::Request`], `docs/HANDSHAKE-RCP.md`).

use crate::reader::Reader;
use crate::token::{encode_header_with_token, take_token, token_len};
use crate::{ConnId, DecodeError, Flags, Header, PacketType, Token, HEADER_LEN};

/// Bytes of a data datagram before its payload (without the optional object length).
pub const DATA_FIXED_LEN: usize = HEADER_LEN + 8 + 8 + 4 + 4 + 4 + 1;

/// `ext` bit: an object length follows.
const EXT_OBJECT_LEN: u8 = 1;

/// `object_len` of an object without a known end (an unbounded bulk source).
pub const UNKNOWN_LENGTH: u64 = u64::MAX;

/// A decoded (or to-be-encoded) data datagram borrowing its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Data<'a> {
    /// Connection identifier.
    pub conn_id: ConnId,
    /// SYN+ACK opens, FIN+ACK closes, RST aborts.
    pub flags: Flags,
    /// Object offset of the first payload byte.
    pub seq: u64,
    /// SND.WND: highest offset the receiver may request.
    pub window: u64,
    /// Object length ([`UNKNOWN_LENGTH`] for unbounded), if carried.
    pub object_len: Option<u64>,
    /// Sender's timestamp (µs, wrapping).
    pub ts_val: u32,
    /// Echo of the requesting REQ's timestamp.
    pub ts_ecr: u32,
    /// Pull serial number answered (0: cumulative mode).
    pub pull_id: u32,
    /// The sender's address-validation token (sets the TOKEN flag on the wire).
    pub token: Option<Token>,
    /// Object bytes `seq .. seq + payload.len()`.
    pub payload: &'a [u8],
}

impl<'a> Data<'a> {
    /// Decodes a whole datagram as data. Never panics.
    pub fn decode(bytes: &'a [u8]) -> Result<Data<'a>, DecodeError> {
        let header = Header::decode_as(bytes, PacketType::Data)?;
        let mut r = Reader::at(bytes, HEADER_LEN);
        let seq = r.u64()?;
        let window = r.u64()?;
        let ts_val = r.u32()?;
        let ts_ecr = r.u32()?;
        let pull_id = r.u32()?;
        let ext = r.u8()?;
        if ext & !EXT_OBJECT_LEN != 0 {
            return Err(DecodeError::FieldOutOfRange { field: "ext" });
        }
        let object_len = if ext & EXT_OBJECT_LEN != 0 {
            Some(r.u64()?)
        } else {
            None
        };
        let (flags, token) = take_token(header.flags, &mut r)?;
        let payload = r.take_rest();
        if seq.checked_add(payload.len() as u64).is_none() {
            return Err(DecodeError::FieldOutOfRange { field: "seq" });
        }
        Ok(Data {
            conn_id: header.conn_id,
            flags,
            seq,
            window,
            object_len,
            ts_val,
            ts_ecr,
            pull_id,
            token,
            payload,
        })
    }

    /// Length of the encoded datagram.
    pub fn encoded_len(&self) -> usize {
        DATA_FIXED_LEN
            + if self.object_len.is_some() { 8 } else { 0 }
            + token_len(self.token.as_ref())
            + self.payload.len()
    }

    /// Appends the encoded datagram to `out`. The TOKEN flag is set exactly when `token` is
    /// given.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(self.encoded_len());
        encode_header_with_token(
            PacketType::Data,
            self.conn_id,
            self.flags,
            self.token.as_ref(),
            out,
        );
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.window.to_be_bytes());
        out.extend_from_slice(&self.ts_val.to_be_bytes());
        out.extend_from_slice(&self.ts_ecr.to_be_bytes());
        out.extend_from_slice(&self.pull_id.to_be_bytes());
        match self.object_len {
            Some(len) => {
                out.push(EXT_OBJECT_LEN);
                out.extend_from_slice(&len.to_be_bytes());
            }
            None => out.push(0),
        }
        if let Some(t) = &self.token {
            out.extend_from_slice(&t.0);
        }
        out.extend_from_slice(self.payload);
    }

    /// One past the last payload byte.
    pub fn end(&self) -> u64 {
        self.seq.saturating_add(self.payload.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TOKEN_LEN;

    #[test]
    fn data_round_trips_and_rejects_other_types() {
        let d = Data {
            conn_id: ConnId(9),
            flags: Flags::ACK,
            seq: 1000,
            window: 1 << 40,
            object_len: Some(UNKNOWN_LENGTH),
            ts_val: 1,
            ts_ecr: 2,
            pull_id: 3,
            token: None,
            payload: b"abc",
        };
        let mut out = Vec::new();
        d.encode(&mut out);
        assert_eq!(out.len(), d.encoded_len());
        assert_eq!(Data::decode(&out), Ok(d));
        assert_eq!(d.end(), 1003);
        let plain = Data {
            object_len: None,
            ..d
        };
        assert_eq!(plain.encoded_len(), crate::SEGMENT_FIXED_LEN + 3);
        out[1] = PacketType::Segment as u8;
        assert!(Data::decode(&out).is_err());
    }

    #[test]
    fn data_whose_range_overflows_is_rejected() {
        let d = Data {
            conn_id: ConnId(9),
            flags: Flags::ACK,
            seq: u64::MAX,
            window: 0,
            object_len: None,
            ts_val: 0,
            ts_ecr: 0,
            pull_id: 0,
            token: None,
            payload: b"x",
        };
        let mut out = Vec::new();
        d.encode(&mut out);
        assert!(Data::decode(&out).is_err());
    }

    #[test]
    fn a_syn_ack_with_a_token_round_trips_and_fits_the_padded_syn() {
        let d = Data {
            conn_id: ConnId(9),
            flags: Flags::SYN | Flags::ACK,
            seq: 0,
            window: 1 << 20,
            object_len: Some(1 << 20),
            ts_val: 1,
            ts_ecr: 2,
            pull_id: 0,
            token: Some(Token([7; TOKEN_LEN])),
            payload: b"",
        };
        let mut out = Vec::new();
        d.encode(&mut out);
        assert_eq!(out.len(), d.encoded_len());
        assert_eq!(out.len(), crate::SYN_MIN_LEN);
        assert_eq!(Data::decode(&out), Ok(d));
        assert!(Data::decode(&out[..out.len() - 1]).is_err());
    }
}
