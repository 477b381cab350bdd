//! roam datagram formats.
//!
//! Every roam datagram starts with a [`Header`]: version, packet type, flags and the random
//! connection identifier. What follows depends on the packet type; the baseline is the
//! TCP-like [`Segment`] (sequence, acknowledgement, window, timestamps, options, payload).
//!
//! # Panic contract
//! Decoding untrusted bytes never panics: [`Segment::decode`] and friends return a typed
//! [`DecodeError`] for every malformed input. Encoders write into a caller-owned `Vec<u8>` and
//! never allocate otherwise. Both directions are fuzzed (`fuzz/`) and property-tested for round
//! trips.

mod data;
mod error;
mod header;
mod media;
mod meta;
mod options;
mod ptcp;
mod reader;
mod request;
mod segment;
mod summary;
mod token;

pub use data::{Data, DATA_FIXED_LEN, UNKNOWN_LENGTH};
pub use error::DecodeError;
pub use header::{ConnId, Flags, Header, PacketType, HEADER_LEN, VERSION};
pub use media::{
    MediaPacket, MediaReport, MEDIA_FIXED_LEN, MEDIA_REPORT_LEN, MEDIA_REPORT_LINK_LEN,
};
pub use meta::{MetaMessage, Unavailable, MAX_GROUP_LOG2, META_LEN, MIN_GROUP_LOG2};
pub use options::{
    LastLinkReport, LinkInfoReport, OptionKind, Options, ProbeKind, ProbeOption, SackBlock,
    MAX_OPTIONS_LEN, MAX_SACK_BLOCKS,
};
pub use ptcp::{
    PtcpHandshake, PtcpHeader, PtcpSegment, MAX_PTCP_ADDRS, MAX_PTCP_ADDR_LEN, PTCP_HEADER_LEN,
};
pub use request::{
    PullBlock, Request, RequestMode, MAX_OBJECT_NAME, MAX_REQUEST_BLOCKS, PULL_BLOCK_LEN,
    REQUEST_FIXED_LEN, SYN_MIN_LEN,
};
pub use segment::{Segment, SegmentHead, SEGMENT_FIXED_LEN};
pub use summary::Summary;
pub use token::{Token, TOKEN_LEN};
