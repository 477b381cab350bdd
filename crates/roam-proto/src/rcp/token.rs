//! The RCP sender's address-validation token (issue 16; `docs/HANDSHAKE-RCP.md`).
//!
//! A sender answers a SYN without keeping state: its SYN+ACK carries a token packing what it
//! will need once the receiver proves its address — the first offset asked for and the
//! receiver's segment size — followed by a MAC ([`TokenKey::mac`]) over the receiver's address,
//! the connection id, the time slot, those fields and the object name. The receiver echoes the
//! token, with the object name, in its requests until the first DATA arrives; the sender
//! accepts a connection only for an echo whose MAC verifies.

use roam_wire::{ConnId, Token, TOKEN_LEN};

use crate::endpoint::{token_slot, TokenKey};
use crate::Time;

/// Separates RCP's MACs from other protocols' under the same key.
const DOMAIN: &[u8] = b"roam-rcp-v1";

/// What a token carries back to the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TokenFields {
    /// The first object offset the receiver asked for (SEG.REQ of its SYN, clipped to the
    /// object).
    pub start: u64,
    /// The receiver's segment size.
    pub mss: u16,
}

impl TokenFields {
    fn bytes(&self) -> [u8; 10] {
        let mut b = [0; 10];
        b[..8].copy_from_slice(&self.start.to_be_bytes());
        b[8..].copy_from_slice(&self.mss.to_be_bytes());
        b
    }

    fn mac_input(&self, name: &[u8]) -> Vec<u8> {
        let mut v = Vec::with_capacity(DOMAIN.len() + 10 + name.len());
        v.extend_from_slice(DOMAIN);
        v.extend_from_slice(&self.bytes());
        v.extend_from_slice(name);
        v
    }

    /// The token for a receiver at `peer` opening `conn_id` for object `name` at `now`.
    pub fn issue<A: std::hash::Hash + ?Sized>(
        &self,
        key: &TokenKey,
        peer: &A,
        conn_id: ConnId,
        name: &[u8],
        now: Time,
    ) -> Token {
        let mac = key.mac(peer, conn_id, token_slot(now), &self.mac_input(name));
        let mut t = [0; TOKEN_LEN];
        t[..10].copy_from_slice(&self.bytes());
        t[10..].copy_from_slice(&mac.to_be_bytes());
        Token(t)
    }

    /// The fields of an echoed token, if its MAC verifies for this peer, connection, name and
    /// time (the slot it was issued in or the next one).
    pub fn verify<A: std::hash::Hash + ?Sized>(
        token: &Token,
        key: &TokenKey,
        peer: &A,
        conn_id: ConnId,
        name: &[u8],
        now: Time,
    ) -> Option<TokenFields> {
        let t = &token.0;
        let start = u64::from_be_bytes(t[..8].try_into().ok()?);
        let mss = u16::from_be_bytes(t[8..10].try_into().ok()?);
        let mac = u64::from_be_bytes(t[10..].try_into().ok()?);
        let fields = TokenFields { start, mss };
        key.verify(mac, 64, peer, conn_id, now, &fields.mac_input(name))
            .then_some(fields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::TOKEN_SLOT;

    #[test]
    fn a_token_verifies_only_for_its_peer_connection_name_and_time() {
        let key = TokenKey::new([3; 16]);
        let f = TokenFields {
            start: 1 << 40,
            mss: 1400,
        };
        let now = Time::from_millis(5);
        let t = f.issue(&key, "10.0.0.1:9", ConnId(4), b"obj", now);
        assert_eq!(
            TokenFields::verify(&t, &key, "10.0.0.1:9", ConnId(4), b"obj", now),
            Some(f)
        );
        let later = now + TOKEN_SLOT;
        assert!(TokenFields::verify(&t, &key, "10.0.0.1:9", ConnId(4), b"obj", later).is_some());
        let stale = now + TOKEN_SLOT * 2;
        assert!(TokenFields::verify(&t, &key, "10.0.0.1:9", ConnId(4), b"obj", stale).is_none());
        assert!(TokenFields::verify(&t, &key, "10.0.0.2:9", ConnId(4), b"obj", now).is_none());
        assert!(TokenFields::verify(&t, &key, "10.0.0.1:9", ConnId(5), b"obj", now).is_none());
        assert!(TokenFields::verify(&t, &key, "10.0.0.1:9", ConnId(4), b"obk", now).is_none());
        let mut forged = t;
        forged.0[9] ^= 1; // A larger segment size.
        assert!(TokenFields::verify(&forged, &key, "10.0.0.1:9", ConnId(4), b"obj", now).is_none());
    }
}
