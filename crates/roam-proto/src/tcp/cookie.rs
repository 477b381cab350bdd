//! SYN cookies: the server's initial sequence number *is* its handshake state.
//!
//! A server answers a SYN without remembering it. Its SYN-ACK's sequence number (the server's
//! ISN, below 2^62) packs what the server must recover when the client's first segment
//! arrives, plus two truncated MACs ([`TokenKey`]) over the client's address, the connection id
//! and the 64 s time slot:
//!
//! ```text
//! bit 61 ........ 46 | 45   | 44 .. 37 | 36 ......... 0
//!     MSS (16 bits)  | SACK | tag (8)  | MAC (37 bits)
//! ```
//!
//! - the *tag* covers the recoverable fields but not the client's ISN: it tells a segment that
//!   echoes a cookie this server issued to this peer (a later segment of a handshake in
//!   progress, to be dropped) from one that echoes nothing (which earns a reset);
//! - the *MAC* also covers the client's ISN, recovered from the echoing segment as `seq − 1`
//!   (the handshake's pure ACK and the first data segment both start at the client's ISN + 1).
//!
//! A blind attacker must match both: one chance in 2^45 per forged segment, in a window of
//! two slots (64–128 s). Design notes: `docs/HANDSHAKE.md`.

use std::hash::Hash;

use roam_wire::ConnId;

use crate::endpoint::{low_bits, token_slot, TokenKey};
use crate::Time;

/// The largest initial sequence number: ISNs are below 2^62, so that a connection's 64-bit
/// sequence numbers never reach the end of the sequence space (2^62 bytes are 4.6 EB), and a
/// server's ISN — its cookie — is the 62 bits drawn above. The host draws a client's ISN at
/// random (see [`super::Connection::connect`]). A SYN or SYN-ACK with a larger one is dropped.
pub const MAX_ISN: u64 = (1 << 62) - 1;

/// Bits of the MAC over everything, the client's ISN included.
const MAC_BITS: u32 = 37;
/// Bits of the tag over the recoverable fields only.
const TAG_BITS: u32 = 8;
const TAG_SHIFT: u32 = MAC_BITS;
const SACK_SHIFT: u32 = TAG_SHIFT + TAG_BITS;
const MSS_SHIFT: u32 = SACK_SHIFT + 1;

/// What a cookie carries for the server: the handshake's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Negotiated {
    /// The MSS both ends use: the smaller of the two offered.
    pub mss: u16,
    /// Both ends offered SACK.
    pub sack: bool,
}

impl Negotiated {
    fn fields(self) -> [u8; 3] {
        let [a, b] = self.mss.to_be_bytes();
        [a, b, u8::from(self.sack)]
    }

    fn mac_fields(self, client_isn: u64) -> [u8; 11] {
        let mut f = [0; 11];
        f[..8].copy_from_slice(&client_isn.to_be_bytes());
        f[8..].copy_from_slice(&self.fields());
        f
    }
}

/// What an echoed number turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Echo {
    /// A cookie this server issued to this peer and connection for this client ISN.
    Valid(Negotiated),
    /// A cookie this server issued to this peer and connection, but not for this client ISN:
    /// a later segment of the client that arrived before its first one.
    Ours,
    /// Not a cookie of this server's for this peer and connection (in this slot or the one
    /// before).
    Foreign,
}

/// The cookie (the server's ISN) for a SYN from `peer` on `conn_id` starting at `client_isn`.
pub(crate) fn issue<A: Hash + ?Sized>(
    key: &TokenKey,
    peer: &A,
    conn_id: ConnId,
    now: Time,
    client_isn: u64,
    n: Negotiated,
) -> u64 {
    let slot = token_slot(now);
    let tag = key.mac(peer, conn_id, slot, &n.fields()) & low_bits(TAG_BITS);
    let mac = key.mac(peer, conn_id, slot, &n.mac_fields(client_isn)) & low_bits(MAC_BITS);
    let cookie =
        u64::from(n.mss) << MSS_SHIFT | u64::from(n.sack) << SACK_SHIFT | tag << TAG_SHIFT | mac;
    debug_assert!(cookie <= MAX_ISN);
    cookie
}

/// Checks `cookie` (an acknowledgement number minus one) from `peer` on `conn_id`, with the
/// client ISN the echoing segment implies (`None` when its sequence number is zero).
pub(crate) fn check<A: Hash + ?Sized>(
    key: &TokenKey,
    peer: &A,
    conn_id: ConnId,
    now: Time,
    cookie: u64,
    client_isn: Option<u64>,
) -> Echo {
    if cookie > MAX_ISN {
        return Echo::Foreign;
    }
    let n = Negotiated {
        mss: (cookie >> MSS_SHIFT) as u16,
        sack: cookie >> SACK_SHIFT & 1 == 1,
    };
    let tag = cookie >> TAG_SHIFT;
    if !key.verify(tag, TAG_BITS, peer, conn_id, now, &n.fields()) {
        return Echo::Foreign;
    }
    match client_isn {
        Some(isn)
            if isn <= MAX_ISN
                && key.verify(cookie, MAC_BITS, peer, conn_id, now, &n.mac_fields(isn)) =>
        {
            Echo::Valid(n)
        }
        _ => Echo::Ours,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::TOKEN_SLOT;

    fn key() -> TokenKey {
        TokenKey::new(*b"roam-tcp-cookies")
    }

    const N: Negotiated = Negotiated {
        mss: 1460,
        sack: true,
    };

    #[test]
    fn a_cookie_recovers_the_negotiated_fields_for_its_client_isn_only() {
        let k = key();
        let now = Time::from_secs_f64(100.0);
        let c = issue(&k, "10.0.0.1:9", ConnId(5), now, 777, N);
        assert!(c <= MAX_ISN);
        assert_eq!(c >> MSS_SHIFT, 1460);
        assert_eq!(
            check(&k, "10.0.0.1:9", ConnId(5), now, c, Some(777)),
            Echo::Valid(N)
        );
        assert_eq!(
            check(&k, "10.0.0.1:9", ConnId(5), now, c, Some(778)),
            Echo::Ours
        );
        assert_eq!(check(&k, "10.0.0.1:9", ConnId(5), now, c, None), Echo::Ours);
        let n = Negotiated {
            mss: 1460,
            sack: false,
        };
        let forged = c & !(1 << SACK_SHIFT);
        assert_ne!(
            check(&k, "10.0.0.1:9", ConnId(5), now, forged, Some(777)),
            Echo::Valid(n)
        );
    }

    #[test]
    fn a_cookie_is_bound_to_peer_connection_key_and_slot() {
        let k = key();
        let now = Time::from_secs_f64(100.0);
        let c = issue(&k, "a", ConnId(5), now, 1, N);
        assert_eq!(check(&k, "b", ConnId(5), now, c, Some(1)), Echo::Foreign);
        assert_eq!(check(&k, "a", ConnId(6), now, c, Some(1)), Echo::Foreign);
        let other = TokenKey::new([1; 16]);
        assert_eq!(
            check(&other, "a", ConnId(5), now, c, Some(1)),
            Echo::Foreign
        );
        let next = now + TOKEN_SLOT;
        assert_eq!(check(&k, "a", ConnId(5), next, c, Some(1)), Echo::Valid(N));
        let later = now + TOKEN_SLOT * 2;
        assert_eq!(check(&k, "a", ConnId(5), later, c, Some(1)), Echo::Foreign);
    }

    #[test]
    fn numbers_that_no_cookie_can_be_are_foreign() {
        let k = key();
        for n in [MAX_ISN + 1, u64::MAX, 0, 1 << 61] {
            assert_ne!(
                check(&k, "a", ConnId(1), Time::ZERO, n, Some(0)),
                Echo::Valid(N)
            );
        }
        assert_eq!(
            check(&k, "a", ConnId(1), Time::ZERO, u64::MAX, Some(0)),
            Echo::Foreign
        );
    }
}
