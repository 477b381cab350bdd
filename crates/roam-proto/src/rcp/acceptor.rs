//! The server side of RCP's handshake (issue 16; `docs/HANDSHAKE-RCP.md`): what a host does
//! with a request that names no connection it holds.
//!
//! * a SYN for an object the store holds is answered with a SYN+ACK carrying a token (the
//!   first offset, the segment size and a MAC over the receiver's address), **keeping no
//!   state**; the SYN+ACK is never larger than the SYN (receivers pad their SYNs to
//!   [`roam_wire::SYN_MIN_LEN`]), and a SYN too small to answer is dropped;
//! * a request echoing a token that verifies (this address, this connection, this object, at
//!   most two 64 s slots old) opens the sender, which serves it at once;
//! * a SYN for an object the store does not hold, a request with a token that does not verify
//!   or without one, is answered with a reset ([`reset_for`]: never larger than the request;
//!   the endpoint draws it from its reset budget);
//! * anything else (undecodable, a reset) is dropped.

use std::hash::Hash;
use std::sync::Arc;

use roam_wire::{Data, Flags, Request};

use super::sender::{initial_window, micros, syn_mss, Opening};
use super::token::TokenFields;
use super::{reset_for, ObjectStore, RcpConfig, RcpSender};
use crate::endpoint::{Acceptor, TokenKey, Unknown};
use crate::Time;

/// Opens RCP senders for receivers that proved their address. Holds the configuration and
/// the object source; keeps no per-peer state.
#[derive(Clone)]
pub struct RcpAcceptor {
    config: Arc<RcpConfig>,
    store: Arc<dyn ObjectStore>,
}

impl std::fmt::Debug for RcpAcceptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RcpAcceptor")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl RcpAcceptor {
    /// An acceptor serving the objects of `store`.
    pub fn new(config: Arc<RcpConfig>, store: Arc<dyn ObjectStore>) -> Self {
        RcpAcceptor { config, store }
    }

    /// The configuration senders are opened with.
    pub fn config(&self) -> &Arc<RcpConfig> {
        &self.config
    }

    /// The SYN+ACK for `syn` (`syn_len` bytes on the wire), or a reset for an object the
    /// store does not hold.
    fn answer_syn<A: Hash + ?Sized>(
        &self,
        now: Time,
        key: &TokenKey,
        peer: &A,
        syn: &Request<'_>,
        datagram: &[u8],
        out: &mut Vec<u8>,
    ) -> Unknown<RcpSender> {
        let Some(object_len) = self.store.object_len(syn.object) else {
            return reset(now, datagram, out);
        };
        let fields = TokenFields {
            start: syn.req.min(object_len),
            mss: syn_mss(syn.deq),
        };
        let available = self.store.available(syn.object);
        Data {
            conn_id: syn.conn_id,
            flags: Flags::SYN | Flags::ACK,
            seq: fields.start,
            window: initial_window(&self.config, object_len, available, fields.start),
            object_len: Some(object_len),
            ts_val: micros(now),
            ts_ecr: syn.ts_val,
            pull_id: 0,
            token: Some(fields.issue(key, peer, syn.conn_id, syn.object, now)),
            payload: &[],
        }
        .encode(out);
        if out.len() > datagram.len() {
            // Answering would send more than the (unvalidated) peer sent.
            out.clear();
            return Unknown::Drop;
        }
        Unknown::Reply { len: out.len() }
    }
}

fn reset<C>(now: Time, datagram: &[u8], out: &mut Vec<u8>) -> Unknown<C> {
    match reset_for(now, datagram, out) {
        Some(len) => Unknown::Reset { len },
        None => {
            out.clear();
            Unknown::Drop
        }
    }
}

impl Acceptor for RcpAcceptor {
    type Connection = RcpSender;

    fn on_unknown<A: Hash + ?Sized>(
        &mut self,
        now: Time,
        key: &TokenKey,
        peer: &A,
        datagram: &[u8],
        out: &mut Vec<u8>,
    ) -> Unknown<RcpSender> {
        out.clear();
        let Ok(r) = Request::decode(datagram) else {
            return Unknown::Drop;
        };
        if r.flags.contains(Flags::RST) {
            return Unknown::Drop;
        }
        if r.flags.contains(Flags::SYN) {
            return self.answer_syn(now, key, peer, &r, datagram, out);
        }
        let opened = r
            .token
            .and_then(|t| TokenFields::verify(&t, key, peer, r.conn_id, r.object, now))
            .and_then(|f| {
                let object_len = self.store.object_len(r.object)?;
                Some(Opening {
                    conn_id: r.conn_id,
                    name: r.object,
                    object_len,
                    available: self.store.available(r.object),
                    start: f.start,
                    mss: f.mss,
                })
            });
        match opened {
            Some(o) => {
                let mut tx = RcpSender::open(&self.config, self.store.clone(), now, o);
                // The request that proved the address is the connection's first.
                let _ = tx.handle_datagram(now, datagram);
                Unknown::Accept(tx)
            }
            None => reset(now, datagram, out),
        }
    }
}
