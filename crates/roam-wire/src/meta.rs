//! The metadata message a server synthesises as the object `.roam-meta/NAME` (issue 28,
//! items 5 and 9): either the object's length, BLAKE3 digest and tree group size, or — while
//! the server is still computing the digest of a large file — the length and how many bytes
//! it has hashed so far, so a client waits instead of giving up at its stall timeout.
//!
//! Every message is [`META_LEN`] bytes, whatever its kind: a server announces the metadata
//! object's length when a connection opens, before it knows which kind it will send.
//!
//! ```text
//! 0      2   3    4          12                                    48
//! +------+---+----+----------+-------------------------------------+
//! | "RM" | 1 |kind| len u64  | kind 0 (ready):   group_log2 u8,     |
//! |      |   |    |  (BE)    |   3 zero bytes, BLAKE3 digest (32)   |
//! |      |   |    |          | kind 1 (hashing): hashed u64 (BE),   |
//! |      |   |    |          |   28 zero bytes                      |
//! |      |   |    |  (0)     | kind 2 (unavailable): reason u8      |
//! |      |   |    |          |   (1 not readable, 2 not a regular   |
//! |      |   |    |          |   file), 35 zero bytes               |
//! +------+---+----+----------+-------------------------------------+
//! ```
//!
//! `group_log2` is the size (as a power of two bytes, 10 ..= 40) of the aligned groups of
//! BLAKE3 chunks whose chaining values the server serves as `.roam-tree/NAME`, so that a
//! client can verify each group of the object as it arrives. *Unavailable* says the name
//! exists on the server but cannot be served (instead of the reset a missing object gets), so
//! that the user learns why.

use crate::DecodeError;

/// Bytes of every metadata message.
pub const META_LEN: usize = 48;

/// Smallest tree group: one BLAKE3 chunk (1 KiB).
pub const MIN_GROUP_LOG2: u8 = 10;

/// Largest tree group (1 TiB).
pub const MAX_GROUP_LOG2: u8 = 40;

const MAGIC: &[u8; 2] = b"RM";
const META_VERSION: u8 = 1;
const KIND_READY: u8 = 0;
const KIND_HASHING: u8 = 1;
const KIND_UNAVAILABLE: u8 = 2;

/// Why a name that exists on the server cannot be served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unavailable {
    /// The server may not read it (permissions).
    Unreadable = 1,
    /// It is not a regular file (a directory, a FIFO, a device).
    NotRegular = 2,
}

/// A metadata object's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaMessage {
    /// The object's length, its BLAKE3 digest and the tree's group size.
    Ready {
        /// Object bytes.
        len: u64,
        /// BLAKE3 of the object.
        digest: [u8; 32],
        /// log2 of the tree's group size in bytes.
        group_log2: u8,
    },
    /// The server is computing the digest: come back later.
    Hashing {
        /// Object bytes.
        len: u64,
        /// Bytes hashed so far.
        hashed: u64,
    },
    /// The name exists but cannot be served.
    Unavailable(Unavailable),
}

impl MetaMessage {
    /// The message's [`META_LEN`] bytes.
    pub fn encode(&self) -> [u8; META_LEN] {
        let mut out = [0u8; META_LEN];
        out[..2].copy_from_slice(MAGIC);
        out[2] = META_VERSION;
        match *self {
            MetaMessage::Ready {
                len,
                digest,
                group_log2,
            } => {
                out[3] = KIND_READY;
                out[4..12].copy_from_slice(&len.to_be_bytes());
                out[12] = group_log2;
                out[16..48].copy_from_slice(&digest);
            }
            MetaMessage::Hashing { len, hashed } => {
                out[3] = KIND_HASHING;
                out[4..12].copy_from_slice(&len.to_be_bytes());
                out[12..20].copy_from_slice(&hashed.to_be_bytes());
            }
            MetaMessage::Unavailable(why) => {
                out[3] = KIND_UNAVAILABLE;
                out[12] = why as u8;
            }
        }
        out
    }

    /// Decodes a message; every malformed input is a typed error.
    pub fn decode(bytes: &[u8]) -> Result<MetaMessage, DecodeError> {
        if bytes.len() < META_LEN {
            return Err(DecodeError::Truncated {
                offset: 0,
                needed: META_LEN,
                len: bytes.len(),
            });
        }
        if bytes.len() > META_LEN {
            return Err(DecodeError::FieldOutOfRange {
                field: "meta length",
            });
        }
        if &bytes[..2] != MAGIC {
            return Err(DecodeError::FieldOutOfRange {
                field: "meta magic",
            });
        }
        if bytes[2] != META_VERSION {
            return Err(DecodeError::UnsupportedVersion(bytes[2]));
        }
        let u64_at = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[at..at + 8]);
            u64::from_be_bytes(b)
        };
        let len = u64_at(4);
        let zeros = |range: std::ops::Range<usize>| bytes[range].iter().all(|b| *b == 0);
        match bytes[3] {
            KIND_READY => {
                let group_log2 = bytes[12];
                if !(MIN_GROUP_LOG2..=MAX_GROUP_LOG2).contains(&group_log2) {
                    return Err(DecodeError::FieldOutOfRange {
                        field: "meta group size",
                    });
                }
                if !zeros(13..16) {
                    return Err(DecodeError::FieldOutOfRange {
                        field: "meta padding",
                    });
                }
                let mut digest = [0u8; 32];
                digest.copy_from_slice(&bytes[16..48]);
                Ok(MetaMessage::Ready {
                    len,
                    digest,
                    group_log2,
                })
            }
            KIND_HASHING => {
                let hashed = u64_at(12);
                if hashed > len {
                    return Err(DecodeError::FieldOutOfRange {
                        field: "meta hashed bytes",
                    });
                }
                if !zeros(20..48) {
                    return Err(DecodeError::FieldOutOfRange {
                        field: "meta padding",
                    });
                }
                Ok(MetaMessage::Hashing { len, hashed })
            }
            KIND_UNAVAILABLE => {
                if len != 0 || !zeros(13..48) {
                    return Err(DecodeError::FieldOutOfRange {
                        field: "meta padding",
                    });
                }
                match bytes[12] {
                    1 => Ok(MetaMessage::Unavailable(Unavailable::Unreadable)),
                    2 => Ok(MetaMessage::Unavailable(Unavailable::NotRegular)),
                    _ => Err(DecodeError::FieldOutOfRange {
                        field: "meta unavailable reason",
                    }),
                }
            }
            _ => Err(DecodeError::FieldOutOfRange { field: "meta kind" }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_kinds_round_trip_at_one_length() {
        for m in [
            MetaMessage::Ready {
                len: 1 << 33,
                digest: [7; 32],
                group_log2: 16,
            },
            MetaMessage::Hashing { len: 10, hashed: 3 },
        ] {
            let b = m.encode();
            assert_eq!(b.len(), META_LEN);
            assert_eq!(MetaMessage::decode(&b), Ok(m));
        }
    }

    #[test]
    fn malformed_messages_are_typed_errors() {
        let good = MetaMessage::Ready {
            len: 5,
            digest: [1; 32],
            group_log2: 16,
        }
        .encode();
        assert!(MetaMessage::decode(&good[..47]).is_err());
        let mut long = good.to_vec();
        long.push(0);
        assert!(MetaMessage::decode(&long).is_err());
        for (at, value) in [(0, b'X'), (2, 9), (3, 7), (12, 9), (12, 41), (13, 1)] {
            let mut b = good;
            b[at] = value;
            assert!(MetaMessage::decode(&b).is_err(), "byte {at} = {value}");
        }
        let mut h = MetaMessage::Hashing { len: 5, hashed: 5 }.encode();
        assert!(MetaMessage::decode(&h).is_ok());
        h[19] = 6;
        assert!(MetaMessage::decode(&h).is_err(), "hashed past the length");
        h[19] = 1;
        h[40] = 1;
        assert!(MetaMessage::decode(&h).is_err(), "padding");
        let mut u = MetaMessage::Unavailable(Unavailable::NotRegular).encode();
        u[12] = 3;
        assert!(MetaMessage::decode(&u).is_err(), "unknown reason");
    }
}
