//! The address-validation token some datagrams carry (issue 16: validated handshakes).
//!
//! A server answers a connection-opening datagram without keeping state; its reply carries a
//! token (a keyed MAC over the peer's address, the connection id, a coarse time and the fields
//! the server needs back, chosen and checked by the engine: `roam_proto::endpoint::TokenKey`).
//! The peer echoes it until the server answers with state, so the server keeps state and sends
//! more than it received only for a peer that proved it receives at its address.
//!
//! On the wire a token is [`TOKEN_LEN`] opaque bytes, present when the common header's
//! [`crate::Flags::TOKEN`] bit is set; where it sits is given by each format (RCP REQ and DATA,
//! media packets and reports). Decoders clear the bit from the decoded flags and return the
//! token in its own field instead; encoders set the bit exactly when a token is given.

/// Bytes of a token: room for a 64-bit MAC and ten bytes of fields the server packs in.
pub const TOKEN_LEN: usize = 18;

use crate::reader::Reader;
use crate::{ConnId, DecodeError, Flags, Header, PacketType};

/// An address-validation token: opaque to whoever echoes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Token(pub [u8; TOKEN_LEN]);

/// Appends the common header of a datagram of a format that may carry a token: `flags` with
/// [`Flags::TOKEN`] set exactly when `token` is given (the format places the token itself).
pub(crate) fn encode_header_with_token(
    packet_type: PacketType,
    conn_id: ConnId,
    mut flags: Flags,
    token: Option<&Token>,
    out: &mut Vec<u8>,
) {
    flags.remove(Flags::TOKEN);
    if token.is_some() {
        flags.insert(Flags::TOKEN);
    }
    Header {
        packet_type,
        flags,
        conn_id,
    }
    .encode(out);
}

/// Splits a decoded header's `flags` into the flags without [`Flags::TOKEN`] and the token,
/// read from `r` when the bit is set: what a decoder does where its format places the token.
pub(crate) fn take_token(
    mut flags: Flags,
    r: &mut Reader<'_>,
) -> Result<(Flags, Option<Token>), DecodeError> {
    if !flags.contains(Flags::TOKEN) {
        return Ok((flags, None));
    }
    flags.remove(Flags::TOKEN);
    Ok((flags, Some(Token(r.array::<TOKEN_LEN>()?))))
}

/// Bytes `token` takes on the wire (none when absent).
pub(crate) fn token_len(token: Option<&Token>) -> usize {
    if token.is_some() {
        TOKEN_LEN
    } else {
        0
    }
}
