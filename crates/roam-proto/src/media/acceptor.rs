//! The sink side of RCP-ATL's handshake (issue 16; `docs/HANDSHAKE-RCP.md`): what a host does
//! with a media packet of a flow it does not hold.
//!
//! The source opens a flow by sending; nothing makes a source send to an address its
//! application did not choose. A sink, though, answers packets, so a packet with a forged
//! source address could make it send reports to a victim and hold state for flows that do not
//! exist. Therefore:
//! * a packet without a token is answered with a report carrying a token (a MAC over the
//!   source's address and the connection id), keeping no state; the report is never larger
//!   than the packet (a packet too small to answer is dropped);
//! * a packet echoing a token that verifies opens the sink ([`MediaReceiver`]), which counts
//!   it;
//! * a packet with a token that does not verify (forged, or older than two 64 s slots) is
//!   answered like one without, so that a source whose token went stale gets a fresh one.

use std::hash::Hash;

use roam_wire::{ConnId, MediaPacket, MediaReport, Token, TOKEN_LEN};

use super::{MediaConfig, MediaReceiver};
use crate::endpoint::{token_slot, Acceptor, TokenKey, Unknown};
use crate::Time;

/// Separates media MACs from other protocols' under the same key.
const DOMAIN: &[u8] = b"roam-media-v1";

/// Opens media sinks for sources that proved their address. Keeps no per-peer state.
#[derive(Debug, Clone)]
pub struct MediaAcceptor {
    config: MediaConfig,
}

impl MediaAcceptor {
    /// An acceptor opening sinks with `config` (its `report_link_info` and `idle_timeout`).
    pub fn new(config: MediaConfig) -> Self {
        MediaAcceptor { config }
    }
}

fn issue<A: Hash + ?Sized>(key: &TokenKey, peer: &A, conn_id: ConnId, now: Time) -> Token {
    let mac = key.mac(peer, conn_id, token_slot(now), DOMAIN);
    let mut t = [0; TOKEN_LEN];
    t[TOKEN_LEN - 8..].copy_from_slice(&mac.to_be_bytes());
    Token(t)
}

fn verify<A: Hash + ?Sized>(
    token: &Token,
    key: &TokenKey,
    peer: &A,
    conn_id: ConnId,
    now: Time,
) -> bool {
    let (fields, mac) = token.0.split_at(TOKEN_LEN - 8);
    let Ok(mac) = <[u8; 8]>::try_from(mac) else {
        return false;
    };
    fields.iter().all(|b| *b == 0)
        && key.verify(u64::from_be_bytes(mac), 64, peer, conn_id, now, DOMAIN)
}

impl Acceptor for MediaAcceptor {
    type Connection = MediaReceiver;

    fn on_unknown<A: Hash + ?Sized>(
        &mut self,
        now: Time,
        key: &TokenKey,
        peer: &A,
        datagram: &[u8],
        out: &mut Vec<u8>,
    ) -> Unknown<MediaReceiver> {
        out.clear();
        let Ok(p) = MediaPacket::decode(datagram) else {
            return Unknown::Drop;
        };
        if p.token
            .is_some_and(|t| verify(&t, key, peer, p.conn_id, now))
        {
            let mut rx = MediaReceiver::new(
                p.conn_id,
                self.config.report_link_info,
                self.config.idle_timeout,
                now,
            );
            let _ = rx.handle_datagram(now, datagram);
            return Unknown::Accept(rx);
        }
        // A report about this packet only (nothing is kept), with the token to echo.
        MediaReport {
            conn_id: p.conn_id,
            highest_seq: p.seq,
            received: 0,
            lost: 0,
            fraction_lost: 0,
            echo_time_us: p.send_time_us,
            hold_us: 0,
            link: None,
            token: Some(issue(key, peer, p.conn_id, now)),
        }
        .encode(out);
        if out.len() > datagram.len() {
            out.clear();
            return Unknown::Drop;
        }
        Unknown::Reply { len: out.len() }
    }
}
