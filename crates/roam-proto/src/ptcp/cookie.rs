//! SYN cookies for pTCP pipes, and the server's stateless aggregate identifier (ptcp.txt §4.4;
//! the design is the TCP-like engine's, `docs/HANDSHAKE.md`): a server answers a pipe's SYN
//! without keeping state, and its SYN-ACK's sequence number (the pipe's ISN at the server,
//! below 2^62) carries what the server needs when the client's next segment echoes it.
//!
//! ```text
//! bit 60 ........ 45 | 44 .. 37 | 36 ......... 0
//!     MSS (16 bits)  | tag (8)  | MAC (37 bits)
//! ```
//!
//! - the *tag* covers the MSS: it tells a segment that echoes a cookie this server issued to
//!   this peer and pipe from one that echoes nothing;
//! - the *MAC* also covers the client's ISN, recovered from the echoing segment as `seq − 1`.
//!
//! Both are [`TokenKey`] MACs over the peer's address, the pipe's connection id and the 64 s
//! time slot; a cookie verifies in its slot and the next. A blind attacker matches both with
//! one chance in 2^45 per forged segment.
//!
//! The server's aggregate identifier (pSRC on its side) is a MAC of the client's aggregate
//! identifier and the time slot ([`server_id`]): the server keeps no state for a first SYN,
//! yet recognises a genuine identifier in any pipe's completing segment ([`is_server_id`]),
//! whichever of the client's addresses it comes from; pipes joining name it as pDST, and only
//! a host that saw a SYN-ACK knows it.

use std::hash::Hash;

use roam_wire::ConnId;

use crate::endpoint::{low_bits, token_slot, TokenKey};
use crate::tcp::MAX_ISN;
use crate::Time;

const MAC_BITS: u32 = 37;
const TAG_BITS: u32 = 8;
const TAG_SHIFT: u32 = MAC_BITS;
const MSS_SHIFT: u32 = TAG_SHIFT + TAG_BITS;

/// Bits of the server's aggregate identifier that are its MAC (the top bit is always set, so
/// it is never 0, the "not known yet" of a first SYN).
const ID_BITS: u32 = 63;

/// What an echoed number turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Echo {
    /// A cookie this server issued to this peer and pipe for this client ISN: the MSS.
    Valid(u16),
    /// A cookie of this server's for this peer and pipe, not for this client ISN (a later
    /// segment that arrived before the first).
    Ours,
    /// Not a cookie of this server's for this peer and pipe.
    Foreign,
}

/// The cookie for a SYN from `peer` on pipe `pipe` starting at `client_isn`, negotiating `mss`.
pub(crate) fn issue<A: Hash + ?Sized>(
    key: &TokenKey,
    peer: &A,
    pipe: ConnId,
    now: Time,
    client_isn: u64,
    mss: u16,
) -> u64 {
    let slot = token_slot(now);
    let tag = key.mac(peer, pipe, slot, &mss.to_be_bytes()) & low_bits(TAG_BITS);
    let mac = key.mac(peer, pipe, slot, &mac_fields(client_isn, mss)) & low_bits(MAC_BITS);
    let cookie = u64::from(mss) << MSS_SHIFT | tag << TAG_SHIFT | mac;
    debug_assert!(cookie <= MAX_ISN);
    cookie
}

fn mac_fields(client_isn: u64, mss: u16) -> [u8; 10] {
    let mut f = [0; 10];
    f[..8].copy_from_slice(&client_isn.to_be_bytes());
    f[8..].copy_from_slice(&mss.to_be_bytes());
    f
}

/// Checks `cookie` (an acknowledgement number minus one) from `peer` on pipe `pipe`, with the
/// client ISN the echoing segment implies.
pub(crate) fn check<A: Hash + ?Sized>(
    key: &TokenKey,
    peer: &A,
    pipe: ConnId,
    now: Time,
    cookie: u64,
    client_isn: u64,
) -> Echo {
    if cookie > MAX_ISN || client_isn > MAX_ISN {
        return Echo::Foreign;
    }
    let mss = (cookie >> MSS_SHIFT) as u16;
    if !key.verify(
        cookie >> TAG_SHIFT,
        TAG_BITS,
        peer,
        pipe,
        now,
        &mss.to_be_bytes(),
    ) {
        return Echo::Foreign;
    }
    if key.verify(
        cookie,
        MAC_BITS,
        peer,
        pipe,
        now,
        &mac_fields(client_isn, mss),
    ) {
        Echo::Valid(mss)
    } else {
        Echo::Ours
    }
}

/// The server's aggregate identifier for the connection `client` opens. Not bound to the
/// client's address: pipes come from several.
pub(crate) fn server_id(key: &TokenKey, client: ConnId, now: Time) -> ConnId {
    let mac = key.mac(&(), client, token_slot(now), b"ptcp-id") & low_bits(ID_BITS);
    ConnId(mac | 1 << ID_BITS)
}

/// True if `id` is the identifier [`server_id`] gave `client` in this slot or the one before.
pub(crate) fn is_server_id(key: &TokenKey, client: ConnId, id: ConnId, now: Time) -> bool {
    id.0 >> ID_BITS == 1 && key.verify(id.0, ID_BITS, &(), client, now, b"ptcp-id")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::TOKEN_SLOT;

    #[test]
    fn a_cookie_verifies_for_its_peer_pipe_and_isn_within_two_slots() {
        let k = TokenKey::new(*b"ptcp-cookie-test");
        let now = Time::from_secs_f64(100.0);
        let c = issue(&k, &1u32, ConnId(7), now, 5000, 1000);
        assert!(c <= MAX_ISN);
        assert_eq!(check(&k, &1u32, ConnId(7), now, c, 5000), Echo::Valid(1000));
        let later = now + TOKEN_SLOT;
        assert_eq!(
            check(&k, &1u32, ConnId(7), later, c, 5000),
            Echo::Valid(1000)
        );
        assert_eq!(check(&k, &1u32, ConnId(7), now, c, 5001), Echo::Ours);
        assert_eq!(check(&k, &2u32, ConnId(7), now, c, 5000), Echo::Foreign);
        assert_eq!(check(&k, &1u32, ConnId(8), now, c, 5000), Echo::Foreign);
        let much_later = now + TOKEN_SLOT * 3;
        assert_eq!(
            check(&k, &1u32, ConnId(7), much_later, c, 5000),
            Echo::Foreign
        );
        assert_eq!(check(&k, &1u32, ConnId(7), now, u64::MAX, 1), Echo::Foreign);
    }

    #[test]
    fn the_server_id_is_never_zero_and_verifies_for_its_client_only() {
        let k = TokenKey::new(*b"ptcp-cookie-test");
        let now = Time::from_secs_f64(100.0);
        let id = server_id(&k, ConnId(9), now);
        assert_ne!(id, ConnId(0));
        assert!(is_server_id(&k, ConnId(9), id, now));
        assert!(is_server_id(&k, ConnId(9), id, now + TOKEN_SLOT));
        assert!(!is_server_id(&k, ConnId(9), id, now + TOKEN_SLOT * 3));
        assert!(!is_server_id(&k, ConnId(10), id, now));
        assert!(!is_server_id(&k, ConnId(9), ConnId(id.0 & !(1 << 63)), now));
    }
}
