//! RCP request (REQ), receiver → sender (rcp-r2cp.txt §3.3.1).
//!
//! ```text
//! common header (12; flags SYN/ACK/FIN/RST/TOKEN) | mode u8 | nblocks u8 | req u64 | deq u32 |
//! ts_val u32 | ts_ecr u32 | nblocks × (id u32, start u64, end u64) |
//! [TOKEN: token (18 bytes)] | [SYN or TOKEN: name_len u8 | object name (name_len bytes)] |
//! [SYN: zero padding up to SYN_MIN_LEN bytes]
//! ```
//! * `req` (SEG.REQ) is the cumulative request: the receiver asks for every byte of the object
//!   below `req`; the sender sends from its SND.NXT up to `req` (§3.3.1, cumulative mode).
//! * `deq` (SEG.DEQ) is the distance from the receiver's in-order point to `req`:
//!   `req − deq` is the highest in-sequence byte received, so the sender may purge below it
//!   (§3.3.5).
//! * `blocks` are the (at most three) most recently *pulled* blocks, newest first, each with the
//!   receiver's pull serial number. With [`RequestMode::PULL`] the first block is this REQ's own
//!   pull (§3.3.1, pull mode); the sender compares the others with its cyclic buffer of the
//!   last blocks it sent and serves any it never saw (a lost pull REQ).
//! * [`RequestMode::PROBE`] asks the sender for its current window (persist mode, §3.3.4).
//! * **Address validation** (issue 16; `docs/HANDSHAKE-RCP.md`). A SYN is padded with zeros to
//!   at least [`SYN_MIN_LEN`] bytes, the size of the largest SYN+ACK, so that a sender can
//!   answer it without sending more than it received. The SYN+ACK carries a token; the
//!   receiver's requests echo it (flag TOKEN), with the object name again, until the first
//!   DATA shows that the sender has accepted the connection: the sender keeps no state before.

use crate::reader::Reader;
use crate::token::{encode_header_with_token, take_token, token_len};
use crate::{ConnId, DecodeError, Flags, Header, PacketType, Token, HEADER_LEN, TOKEN_LEN};

/// Most pulled blocks one REQ carries (three, as the SACK option proposes; §3.3.1).
pub const MAX_REQUEST_BLOCKS: usize = 3;

/// Bytes of a request before its blocks.
pub const REQUEST_FIXED_LEN: usize = HEADER_LEN + 1 + 1 + 8 + 4 + 4 + 4;

/// Bytes of one encoded pull block.
pub const PULL_BLOCK_LEN: usize = 4 + 8 + 8;

/// Longest object name a SYN request carries.
pub const MAX_OBJECT_NAME: usize = 255;

/// Least length of an encoded SYN request: the length of a SYN+ACK (a DATA with the object
/// length and a token), so that the SYN+ACK never exceeds the SYN it answers.
pub const SYN_MIN_LEN: usize = crate::DATA_FIXED_LEN + 8 + TOKEN_LEN;

/// Request mode bits (the REQ's own flag byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RequestMode(pub u8);

impl RequestMode {
    /// Pull: the first block is a new request for exactly that range (PUL, §3.3.1).
    pub const PULL: RequestMode = RequestMode(1 << 0);
    /// Window probe from a receiver in persist mode (§3.3.4).
    pub const PROBE: RequestMode = RequestMode(1 << 1);
    /// Every bit this version defines.
    pub const ALL: RequestMode = RequestMode(0x03);

    /// True if every bit of `other` is set.
    pub fn contains(self, other: RequestMode) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for RequestMode {
    type Output = RequestMode;
    fn bitor(self, rhs: RequestMode) -> RequestMode {
        RequestMode(self.0 | rhs.0)
    }
}

/// One pulled block: the receiver's pull serial number and the byte range `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PullBlock {
    /// Pull serial number (increases by one per pull the receiver issues).
    pub id: u32,
    /// First byte.
    pub start: u64,
    /// One past the last byte (`start < end`).
    pub end: u64,
}

/// A decoded (or to-be-encoded) request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request<'a> {
    /// Connection identifier.
    pub conn_id: ConnId,
    /// SYN / ACK / FIN / RST for connection management (§3.3.2).
    pub flags: Flags,
    /// PUL / PROBE.
    pub mode: RequestMode,
    /// SEG.REQ: cumulative request edge.
    pub req: u64,
    /// SEG.DEQ: `req − deq` is the receiver's in-order point.
    pub deq: u32,
    /// Receiver's timestamp (µs, wrapping), echoed in DATA for RTT samples.
    pub ts_val: u32,
    /// Echo of the last DATA timestamp.
    pub ts_ecr: u32,
    /// Number of valid entries in `blocks`.
    pub nblocks: u8,
    /// Most recently pulled blocks, newest first.
    pub blocks: [PullBlock; MAX_REQUEST_BLOCKS],
    /// Object name (carried with SYN or a token; empty otherwise).
    pub object: &'a [u8],
    /// The sender's address-validation token, echoed (sets the TOKEN flag on the wire).
    pub token: Option<Token>,
}

impl<'a> Request<'a> {
    /// The valid blocks.
    pub fn blocks(&self) -> &[PullBlock] {
        &self.blocks[..usize::from(self.nblocks).min(MAX_REQUEST_BLOCKS)]
    }

    /// The in-order point the receiver reports (`req − deq`, saturating).
    pub fn dequeued(&self) -> u64 {
        self.req.saturating_sub(u64::from(self.deq))
    }

    /// Decodes a whole datagram as a request. Never panics.
    pub fn decode(bytes: &'a [u8]) -> Result<Request<'a>, DecodeError> {
        let header = Header::decode_as(bytes, PacketType::Request)?;
        let mut r = Reader::at(bytes, HEADER_LEN);
        let mode = r.u8()?;
        if mode & !RequestMode::ALL.0 != 0 {
            return Err(DecodeError::FieldOutOfRange { field: "mode" });
        }
        let nblocks = r.u8()?;
        if usize::from(nblocks) > MAX_REQUEST_BLOCKS {
            return Err(DecodeError::FieldOutOfRange { field: "nblocks" });
        }
        let req = r.u64()?;
        let deq = r.u32()?;
        let ts_val = r.u32()?;
        let ts_ecr = r.u32()?;
        let mut blocks = [PullBlock::default(); MAX_REQUEST_BLOCKS];
        for b in blocks.iter_mut().take(usize::from(nblocks)) {
            let id = r.u32()?;
            let start = r.u64()?;
            let end = r.u64()?;
            if start >= end {
                return Err(DecodeError::InvalidSackBlock { start, end });
            }
            *b = PullBlock { id, start, end };
        }
        let mode = RequestMode(mode);
        if mode.contains(RequestMode::PULL) && nblocks == 0 {
            return Err(DecodeError::FieldOutOfRange { field: "nblocks" });
        }
        let (flags, token) = take_token(header.flags, &mut r)?;
        // Bytes after the name (a SYN's padding) are ignored.
        let object = if flags.contains(Flags::SYN) || token.is_some() {
            let n = usize::from(r.u8()?);
            r.take(n)?
        } else {
            &[]
        };
        Ok(Request {
            conn_id: header.conn_id,
            flags,
            mode,
            req,
            deq,
            ts_val,
            ts_ecr,
            nblocks,
            blocks,
            object,
            token,
        })
    }

    /// True if the name rides (with SYN or a token).
    fn carries_name(&self) -> bool {
        self.flags.contains(Flags::SYN) || self.token.is_some()
    }

    /// Length of the encoded datagram.
    pub fn encoded_len(&self) -> usize {
        let name = if self.carries_name() {
            1 + self.object.len().min(MAX_OBJECT_NAME)
        } else {
            0
        };
        let token = token_len(self.token.as_ref());
        let len = REQUEST_FIXED_LEN + self.blocks().len() * PULL_BLOCK_LEN + token + name;
        if self.flags.contains(Flags::SYN) {
            len.max(SYN_MIN_LEN)
        } else {
            len
        }
    }

    /// Appends the encoded datagram to `out`. Object names longer than [`MAX_OBJECT_NAME`] are
    /// truncated; the name is written only with SYN or a token; a SYN is padded to
    /// [`SYN_MIN_LEN`] bytes. The TOKEN flag is set exactly when `token` is given.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(self.encoded_len());
        let start = out.len();
        encode_header_with_token(
            PacketType::Request,
            self.conn_id,
            self.flags,
            self.token.as_ref(),
            out,
        );
        let blocks = self.blocks();
        out.push(self.mode.0);
        out.push(blocks.len() as u8);
        out.extend_from_slice(&self.req.to_be_bytes());
        out.extend_from_slice(&self.deq.to_be_bytes());
        out.extend_from_slice(&self.ts_val.to_be_bytes());
        out.extend_from_slice(&self.ts_ecr.to_be_bytes());
        for b in blocks {
            out.extend_from_slice(&b.id.to_be_bytes());
            out.extend_from_slice(&b.start.to_be_bytes());
            out.extend_from_slice(&b.end.to_be_bytes());
        }
        if let Some(t) = &self.token {
            out.extend_from_slice(&t.0);
        }
        if self.carries_name() {
            let name = &self.object[..self.object.len().min(MAX_OBJECT_NAME)];
            out.push(name.len() as u8);
            out.extend_from_slice(name);
        }
        if self.flags.contains(Flags::SYN) {
            out.resize(out.len().max(start + SYN_MIN_LEN), 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Request<'static> {
        Request {
            conn_id: ConnId(7),
            flags: Flags::ACK,
            mode: RequestMode::PULL,
            req: 10_000,
            deq: 3000,
            ts_val: 5,
            ts_ecr: 6,
            nblocks: 2,
            blocks: [
                PullBlock {
                    id: 2,
                    start: 4000,
                    end: 5000,
                },
                PullBlock {
                    id: 1,
                    start: 1000,
                    end: 2000,
                },
                PullBlock::default(),
            ],
            object: b"",
            token: None,
        }
    }

    #[test]
    fn request_round_trips_with_blocks_and_reports_dequeued_point() {
        let mut out = Vec::new();
        sample().encode(&mut out);
        assert_eq!(out.len(), sample().encoded_len());
        let back = Request::decode(&out).unwrap();
        assert_eq!(back, sample());
        assert_eq!(back.dequeued(), 7000);
    }

    #[test]
    fn syn_request_carries_the_object_name() {
        let mut r = sample();
        r.flags = Flags::SYN;
        r.object = b"movie.mp4";
        let mut out = Vec::new();
        r.encode(&mut out);
        assert_eq!(Request::decode(&out).unwrap().object, b"movie.mp4");
    }

    #[test]
    fn a_syn_is_padded_to_the_length_of_the_largest_syn_ack() {
        let mut r = sample();
        r.flags = Flags::SYN;
        r.mode = RequestMode::default();
        r.nblocks = 0;
        r.blocks = [PullBlock::default(); MAX_REQUEST_BLOCKS];
        r.object = b"a";
        let mut out = Vec::new();
        r.encode(&mut out);
        assert_eq!(out.len(), SYN_MIN_LEN);
        assert_eq!(r.encoded_len(), SYN_MIN_LEN);
        assert_eq!(Request::decode(&out).unwrap(), r);
        r.object = &[b'x'; 200];
        let mut long = Vec::new();
        r.encode(&mut long);
        assert_eq!(long.len(), REQUEST_FIXED_LEN + 1 + 200, "no padding needed");
    }

    #[test]
    fn a_token_echo_carries_the_token_and_the_name() {
        let mut r = sample();
        r.token = Some(Token([9; TOKEN_LEN]));
        r.object = b"movie.mp4";
        let mut out = Vec::new();
        r.encode(&mut out);
        assert_eq!(out.len(), r.encoded_len());
        assert_eq!(
            Header::decode(&out).unwrap().flags,
            Flags::ACK | Flags::TOKEN
        );
        let back = Request::decode(&out).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.flags, Flags::ACK, "the flag becomes the token field");
        assert!(Request::decode(&out[..out.len() - 1]).is_err());
        // A TOKEN flag without its token is truncated.
        let mut bare = Vec::new();
        sample().encode(&mut bare);
        bare[3] |= Flags::TOKEN.0 as u8;
        assert!(Request::decode(&bare).is_err());
    }

    #[test]
    fn pull_without_blocks_and_empty_blocks_are_rejected() {
        let mut r = sample();
        r.nblocks = 0;
        let mut out = Vec::new();
        r.encode(&mut out);
        assert!(Request::decode(&out).is_err());
        let mut out = Vec::new();
        sample().encode(&mut out);
        // Make the first block empty: end := start.
        let at = REQUEST_FIXED_LEN + 4 + 8;
        out[at..at + 8].copy_from_slice(&4000u64.to_be_bytes());
        assert!(Request::decode(&out).is_err());
    }
}
