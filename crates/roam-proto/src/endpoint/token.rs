//! Stateless address-validation tokens (as QUIC's Retry tokens and TCP's SYN cookies).
//!
//! A server answers a connection-opening datagram without keeping any state: its reply
//! carries a token, a keyed MAC over the peer's address, the connection id, a coarse time
//! slot and whatever fields the protocol needs back later. Only a peer that received the reply
//! at that address can echo the token, so a server that keeps state (and sends data) only
//! after a valid echo cannot be used to reflect or amplify traffic towards a spoofed address.
//!
//! The key comes from the host's RNG (the simulator's seeded stream, the OS RNG in the
//! runtime); the engine never draws randomness itself. Design notes: `docs/ENDPOINT.md`.

use std::hash::{Hash, Hasher};
use std::time::Duration;

use roam_wire::ConnId;
use siphasher::sip::SipHasher13;

use crate::Time;

/// Length of one token time slot. A token is accepted in the slot it was issued in and the
/// next one, so it lives between one and two slots (TCP SYN cookies use 64 s as well).
pub const TOKEN_SLOT: Duration = Duration::from_secs(64);

/// The secret a host validates its peers' addresses with.
#[derive(Clone)]
pub struct TokenKey {
    k0: u64,
    k1: u64,
}

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret.
        f.write_str("TokenKey(..)")
    }
}

/// The coarse time slot `now` falls in.
pub fn token_slot(now: Time) -> u64 {
    now.as_nanos() / TOKEN_SLOT.as_nanos() as u64
}

impl TokenKey {
    /// A key from 16 bytes of the host's randomness.
    pub fn new(key: [u8; 16]) -> Self {
        let (a, b) = key.split_at(8);
        TokenKey {
            k0: u64::from_le_bytes(a.try_into().unwrap_or([0; 8])),
            k1: u64::from_le_bytes(b.try_into().unwrap_or([0; 8])),
        }
    }

    /// The 64-bit MAC (SipHash-1-3 keyed with this secret) of `peer` (any hashable address
    /// type the host uses), `conn_id`, `slot` and `fields` (the protocol's own bytes: what it
    /// must recover from the echo, such as an MSS or an ISN).
    pub fn mac<A: Hash + ?Sized>(
        &self,
        peer: &A,
        conn_id: ConnId,
        slot: u64,
        fields: &[u8],
    ) -> u64 {
        let mut h = SipHasher13::new_with_keys(self.k0, self.k1);
        peer.hash(&mut h);
        h.write_u64(conn_id.0);
        h.write_u64(slot);
        h.write(fields);
        h.finish()
    }

    /// Checks an echoed MAC (truncated to its low `bits` bits) against the slot of `now` and
    /// the one before it. `bits` must be in `1..=64`; values outside are clamped.
    pub fn verify<A: Hash + ?Sized>(
        &self,
        echoed: u64,
        bits: u32,
        peer: &A,
        conn_id: ConnId,
        now: Time,
        fields: &[u8],
    ) -> bool {
        let mask = low_bits(bits);
        let slot = token_slot(now);
        [Some(slot), slot.checked_sub(1)]
            .into_iter()
            .flatten()
            .any(|s| self.mac(peer, conn_id, s, fields) & mask == echoed & mask)
    }
}

/// A mask of the low `bits` bits (clamped to 1..=64).
pub fn low_bits(bits: u32) -> u64 {
    match bits.clamp(1, 64) {
        64 => u64::MAX,
        b => (1u64 << b) - 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> TokenKey {
        TokenKey::new(*b"0123456789abcdef")
    }

    #[test]
    fn verifies_in_its_slot_and_the_next_only() {
        let k = key();
        let t0 = Time::from_secs_f64(10.0);
        let mac = k.mac("10.0.0.1:5", ConnId(7), token_slot(t0), b"x");
        assert!(k.verify(mac, 64, "10.0.0.1:5", ConnId(7), t0, b"x"));
        let next = t0 + TOKEN_SLOT;
        assert!(k.verify(mac, 64, "10.0.0.1:5", ConnId(7), next, b"x"));
        let later = t0 + TOKEN_SLOT * 2;
        assert!(!k.verify(mac, 64, "10.0.0.1:5", ConnId(7), later, b"x"));
    }

    #[test]
    fn binds_address_conn_id_fields_and_key() {
        let k = key();
        let now = Time::ZERO;
        let mac = k.mac("a", ConnId(1), 0, b"f");
        assert!(!k.verify(mac, 64, "b", ConnId(1), now, b"f"));
        assert!(!k.verify(mac, 64, "a", ConnId(2), now, b"f"));
        assert!(!k.verify(mac, 64, "a", ConnId(1), now, b"g"));
        let other = TokenKey::new([9; 16]);
        assert!(!other.verify(mac, 64, "a", ConnId(1), now, b"f"));
    }

    #[test]
    fn truncated_macs_compare_low_bits() {
        let k = key();
        let mac = k.mac("a", ConnId(1), 0, b"");
        let t = mac & low_bits(45);
        assert!(k.verify(t, 45, "a", ConnId(1), Time::ZERO, b""));
        assert!(!k.verify(t ^ 1, 45, "a", ConnId(1), Time::ZERO, b""));
        assert_eq!(low_bits(0), 1);
        assert_eq!(low_bits(99), u64::MAX);
    }
}
