//! The request a TCP-like connection opens with, the server's reply header, and the byte
//! source a server streams a reply from (`docs/RUNTIME.md`, "TCP `get`").
//!
//! Client → server, at the start of the stream: `ROAM`, an operation byte (`G` get an
//! object, `D` discard everything that follows: `roam perf`), a big-endian `u16` name
//! length and the name (empty for `D`). Server → client for `G`: `ROAM`, a status byte
//! (0: the object follows; 1: no such object) and the object length as a big-endian `u64`,
//! then the object's bytes and a FIN. A stream that does not start with a valid request is
//! answered with a close and nothing else.

use std::sync::Arc;

use roam_proto::source::ByteSource;

use crate::store::Opened;
use crate::DirStore;

/// The four bytes every request and reply starts with.
const MAGIC: &[u8; 4] = b"ROAM";

/// Longest object name a request may carry.
pub const MAX_NAME: usize = 4096;

/// Bytes of a reply header.
pub const REPLY_HEADER: usize = 13;

/// What a client asks of a TCP-like connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TcpRequest {
    /// Send the object of this name.
    Get(Vec<u8>),
    /// Read and drop everything that follows (`roam perf`).
    Discard,
}

/// Why the start of a stream is not a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestError {
    /// More bytes are needed to decide.
    Incomplete,
    /// Not a request (wrong magic or operation, name too long).
    Invalid,
}

impl TcpRequest {
    /// The request's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let (op, name): (u8, &[u8]) = match self {
            TcpRequest::Get(n) => (b'G', n),
            TcpRequest::Discard => (b'D', &[]),
        };
        let len = u16::try_from(name.len()).unwrap_or(u16::MAX);
        let mut out = Vec::with_capacity(7 + name.len());
        out.extend_from_slice(MAGIC);
        out.push(op);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&name[..usize::from(len)]);
        out
    }

    /// Decodes a request from the start of a stream; returns it and its length in bytes.
    pub fn decode(bytes: &[u8]) -> Result<(TcpRequest, usize), RequestError> {
        let head = bytes.get(..7).ok_or(RequestError::Incomplete);
        // Reject a wrong prefix as soon as it is seen, not only once 7 bytes arrived.
        let seen = bytes.len().min(4);
        if bytes[..seen] != MAGIC[..seen] {
            return Err(RequestError::Invalid);
        }
        let head = head?;
        let len = usize::from(u16::from_be_bytes([head[5], head[6]]));
        if len > MAX_NAME {
            return Err(RequestError::Invalid);
        }
        match head[4] {
            b'D' if len == 0 => Ok((TcpRequest::Discard, 7)),
            b'G' => {
                let name = bytes.get(7..7 + len).ok_or(RequestError::Incomplete)?;
                Ok((TcpRequest::Get(name.to_vec()), 7 + len))
            }
            _ => Err(RequestError::Invalid),
        }
    }
}

/// A reply header: `Some(len)` (the object follows) or `None` (no such object).
pub fn encode_reply(len: Option<u64>) -> [u8; REPLY_HEADER] {
    let mut h = [0u8; REPLY_HEADER];
    h[..4].copy_from_slice(MAGIC);
    h[4] = u8::from(len.is_none());
    h[5..].copy_from_slice(&len.unwrap_or(0).to_be_bytes());
    h
}

/// Decodes a reply header: `Ok(Some(len))`, `Ok(None)` (no such object), or an error for a
/// malformed one.
pub fn decode_reply(h: &[u8; REPLY_HEADER]) -> Result<Option<u64>, String> {
    if &h[..4] != MAGIC {
        return Err("the reply does not start with ROAM".into());
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&h[5..]);
    match h[4] {
        0 => Ok(Some(u64::from_be_bytes(len))),
        1 => Ok(None),
        s => Err(format!("unknown reply status {s}")),
    }
}

/// A reply's stream: the header, then the object's bytes read from the store with
/// positioned reads when the engine encodes a segment (the file is not copied into the send
/// buffer). A synthesised object (metadata, tree) is computed before the source is created
/// and served from its bytes, so these reads never hash a whole file.
#[derive(Debug)]
pub struct ReplySource {
    header: [u8; REPLY_HEADER],
    body: Body,
}

/// Where a reply's object bytes come from.
#[derive(Debug)]
enum Body {
    /// A served file, opened once beneath the root, so the whole reply comes from one file
    /// version.
    File(Opened),
    /// A synthesised object's bytes, computed beforehand.
    Bytes(Vec<u8>),
    /// Read from the store by name (generated objects, or a file that could not be opened:
    /// zeros, which the client's checks catch).
    Store(Arc<DirStore>, Vec<u8>),
}

impl ReplySource {
    /// The reply for `name` of `len` bytes from `store` (a served file is opened now).
    pub fn new(store: Arc<DirStore>, name: Vec<u8>, len: u64) -> ReplySource {
        let file = if name.starts_with(b".roam-") {
            None
        } else {
            store.open(&name)
        };
        ReplySource {
            header: encode_reply(Some(len)),
            body: match file {
                Some(f) => Body::File(f),
                None => Body::Store(store, name),
            },
        }
    }

    /// The reply carrying `bytes` (a synthesised object computed beforehand).
    pub fn synthesised(bytes: Vec<u8>) -> ReplySource {
        ReplySource {
            header: encode_reply(Some(bytes.len() as u64)),
            body: Body::Bytes(bytes),
        }
    }

    /// Stream bytes of the reply: header plus object.
    pub fn stream_len(len: u64) -> u64 {
        len.saturating_add(REPLY_HEADER as u64)
    }
}

impl ByteSource for ReplySource {
    fn read(&self, offset: u64, len: usize, out: &mut Vec<u8>) {
        let h = REPLY_HEADER as u64;
        let mut offset = offset;
        let mut len = len;
        if offset < h {
            let from = usize::try_from(offset).unwrap_or(REPLY_HEADER);
            let to = from.saturating_add(len).min(REPLY_HEADER);
            out.extend_from_slice(&self.header[from..to]);
            len -= to - from;
            offset = h;
        }
        if len > 0 {
            match &self.body {
                Body::File(f) => f.read_into(offset - h, len, out),
                Body::Bytes(b) => {
                    let from = usize::try_from(offset - h)
                        .unwrap_or(usize::MAX)
                        .min(b.len());
                    let to = from.saturating_add(len).min(b.len());
                    out.extend_from_slice(&b[from..to]);
                    out.resize(out.len() + len - (to - from), 0);
                }
                Body::Store(store, name) => store.read_blocking(name, offset - h, len, out),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_and_prefixes_are_judged_early() {
        for r in [TcpRequest::Get(b"a/b.iso".to_vec()), TcpRequest::Discard] {
            let bytes = r.encode();
            assert_eq!(TcpRequest::decode(&bytes), Ok((r.clone(), bytes.len())));
            for cut in 0..bytes.len() {
                assert_eq!(
                    TcpRequest::decode(&bytes[..cut]),
                    Err(RequestError::Incomplete)
                );
            }
        }
        assert_eq!(TcpRequest::decode(b"\0"), Err(RequestError::Invalid));
        assert_eq!(TcpRequest::decode(b"ROAX"), Err(RequestError::Invalid));
        assert_eq!(TcpRequest::decode(b"ROAMX\0\0"), Err(RequestError::Invalid));
        assert_eq!(
            TcpRequest::decode(b"ROAMD\0\x01a"),
            Err(RequestError::Invalid)
        );
        assert_eq!(
            TcpRequest::decode(b"ROAMG\xff\xff"),
            Err(RequestError::Invalid)
        );
    }

    #[test]
    fn reply_headers_round_trip_and_bad_ones_are_errors() {
        assert_eq!(decode_reply(&encode_reply(Some(7))), Ok(Some(7)));
        assert_eq!(decode_reply(&encode_reply(None)), Ok(None));
        let mut h = encode_reply(Some(1));
        h[4] = 9;
        assert!(decode_reply(&h).is_err());
        h[0] = b'X';
        assert!(decode_reply(&h).is_err());
    }

    #[test]
    fn the_source_serves_header_then_object_at_any_offset() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..1000u32).map(|i| (i % 253) as u8).collect();
        std::fs::write(dir.path().join("f"), &data).unwrap();
        let store = Arc::new(DirStore::new(dir.path()).unwrap());
        let src = ReplySource::new(store, b"f".to_vec(), 1000);
        let mut whole = encode_reply(Some(1000)).to_vec();
        whole.extend_from_slice(&data);
        for (off, len) in [(0, 5), (3, 20), (13, 100), (500, 513), (0, 1013)] {
            let mut out = Vec::new();
            src.read(off, len, &mut out);
            assert_eq!(out, whole[off as usize..off as usize + len]);
        }
    }
}
