//! The server side of the TCP-like handshake, stateless until the client proves its address
//! (SYN cookies, `cookie.rs`; design in `docs/HANDSHAKE.md`):
//! - a SYN is answered with a SYN-ACK whose sequence number is the cookie, no larger than the
//!   SYN (a SYN too small for the answer is dropped), and nothing is remembered;
//! - a segment whose acknowledgement echoes a valid cookie + 1, from the address and on the
//!   connection id the cookie was issued for, opens the connection (already established);
//! - a later segment of a handshake in progress (the cookie is ours but its sequence number is
//!   not the client's ISN + 1) is dropped: the client's retransmission completes the handshake;
//! - any other segment with ACK earns a reset no larger than itself (the host's reset budget
//!   decides whether it leaves); everything else is dropped.

use std::hash::Hash;
use std::sync::Arc;

use roam_wire::{Flags, Options, Segment};

use super::connection::{ts_of, Connection, OpenError, MAX_ISN};
use super::cookie::{self, Echo, Negotiated};
use super::TcpConfig;
use crate::cc::CcKind;
use crate::endpoint::{Acceptor, TokenKey, Unknown};
use crate::linkinfo::LinkInfo;
use crate::Time;

/// What an acceptor did with the datagrams it saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AcceptorStats {
    /// SYNs answered with a SYN-ACK.
    pub syn_acks: u64,
    /// SYNs dropped: smaller than their answer, or with an initial sequence number above
    /// [`MAX_ISN`].
    pub syns_dropped: u64,
    /// Connections opened by a valid cookie echo.
    pub accepted: u64,
    /// Later segments of a handshake in progress, dropped.
    pub early_segments: u64,
    /// Resets written.
    pub resets: u64,
    /// Anything else dropped (undecodable datagrams, resets, stale SYN-ACKs, segments
    /// without ACK).
    pub dropped: u64,
}

/// Answers TCP-like datagrams that name no connection held here: see the module docs.
#[derive(Debug, Clone)]
pub struct TcpAcceptor {
    cfg: Arc<TcpConfig>,
    cc: CcKind,
    local_link: Option<LinkInfo>,
    stats: AcceptorStats,
}

impl TcpAcceptor {
    /// An acceptor opening connections with `cfg` and congestion controller `cc`.
    pub fn new(cfg: Arc<TcpConfig>, cc: CcKind) -> Result<Self, OpenError> {
        cfg.validate().map_err(OpenError::Config)?;
        Ok(TcpAcceptor {
            cfg,
            cc,
            local_link: None,
            stats: AcceptorStats::default(),
        })
    }

    /// The host's current facts about the local link, handed to each connection it opens
    /// (as [`Connection::set_link_info`] would be).
    pub fn set_link_info(&mut self, info: LinkInfo) {
        self.local_link = Some(info.sanitized());
    }

    /// Counters.
    pub fn stats(&self) -> AcceptorStats {
        self.stats
    }

    /// The SYN-ACK for `syn`, written into `out`, or `None` if it would be larger than the SYN
    /// or the SYN's ISN is out of range.
    fn answer_syn<A: Hash + ?Sized>(
        &mut self,
        now: Time,
        key: &TokenKey,
        peer: &A,
        syn: &Segment<'_>,
        received: usize,
        out: &mut Vec<u8>,
    ) -> Option<usize> {
        if syn.seq > MAX_ISN {
            return None;
        }
        let n = Negotiated {
            mss: syn
                .options
                .mss
                .unwrap_or(self.cfg.mss)
                .min(self.cfg.mss)
                .max(64),
            sack: self.cfg.sack && syn.options.sack_permitted,
        };
        let cookie = cookie::issue(key, peer, syn.conn_id, now, syn.seq, n);
        let reply = Segment {
            conn_id: syn.conn_id,
            flags: Flags::SYN | Flags::ACK,
            seq: cookie,
            ack: syn.seq + 1,
            // The window a fresh receiver offers (validate() keeps it within u32).
            window: u32::try_from(self.cfg.recv_buffer).unwrap_or(u32::MAX),
            ts_val: ts_of(now),
            // RFC 7323 §3.2: echo the SYN's timestamp, so the client's first RTT sample
            // measures this exchange.
            ts_ecr: syn.ts_val,
            options: Options {
                mss: Some(self.cfg.mss),
                sack_permitted: n.sack,
                ..Options::default()
            },
            payload: &[],
        };
        // No amplification: the answer is never larger than what earned it.
        if reply.encoded_len() > received {
            return None;
        }
        reply.encode(out);
        Some(out.len())
    }

    /// RFC 793 §3.4's reset for an ACK-bearing segment to no connection: `<SEQ=SEG.ACK>
    /// <CTL=RST>`, no options (41 bytes: never more than any segment).
    fn reset_for(
        now: Time,
        seg: &Segment<'_>,
        received: usize,
        out: &mut Vec<u8>,
    ) -> Option<usize> {
        let rst = Segment {
            conn_id: seg.conn_id,
            flags: Flags::RST,
            seq: seg.ack,
            ack: 0,
            window: 0,
            ts_val: ts_of(now),
            ts_ecr: seg.ts_val,
            options: Options::default(),
            payload: &[],
        };
        if rst.encoded_len() > received {
            return None;
        }
        rst.encode(out);
        Some(out.len())
    }
}

impl Acceptor for TcpAcceptor {
    type Connection = Connection;

    fn on_unknown<A: Hash + ?Sized>(
        &mut self,
        now: Time,
        key: &TokenKey,
        peer: &A,
        datagram: &[u8],
        out: &mut Vec<u8>,
    ) -> Unknown<Connection> {
        out.clear();
        let Ok(seg) = Segment::decode(datagram) else {
            self.stats.dropped += 1;
            return Unknown::Drop;
        };
        let syn = seg.flags.contains(Flags::SYN);
        let ack = seg.flags.contains(Flags::ACK);
        if seg.flags.contains(Flags::RST) || (syn && ack) || !(syn || ack) {
            // Never answer a reset; a SYN-ACK for no connection is a stale reply (or a
            // reflection of someone else's SYN); our peers set ACK on everything after the SYN.
            self.stats.dropped += 1;
            return Unknown::Drop;
        }
        if syn {
            return match self.answer_syn(now, key, peer, &seg, datagram.len(), out) {
                Some(len) => {
                    self.stats.syn_acks += 1;
                    Unknown::Reply { len }
                }
                None => {
                    out.clear();
                    self.stats.syns_dropped += 1;
                    Unknown::Drop
                }
            };
        }
        let Some(iss) = seg.ack.checked_sub(1) else {
            return self.reset(now, &seg, datagram.len(), out);
        };
        match cookie::check(key, peer, seg.conn_id, now, iss, seg.seq.checked_sub(1)) {
            Echo::Valid(n) => {
                self.stats.accepted += 1;
                Unknown::Accept(Connection::accepted(
                    self.cfg.clone(),
                    self.cc,
                    now,
                    &seg,
                    iss,
                    n,
                    self.local_link,
                ))
            }
            Echo::Ours => {
                self.stats.early_segments += 1;
                Unknown::Drop
            }
            Echo::Foreign => self.reset(now, &seg, datagram.len(), out),
        }
    }
}

impl TcpAcceptor {
    fn reset(
        &mut self,
        now: Time,
        seg: &Segment<'_>,
        received: usize,
        out: &mut Vec<u8>,
    ) -> Unknown<Connection> {
        match Self::reset_for(now, seg, received, out) {
            Some(len) => {
                self.stats.resets += 1;
                Unknown::Reset { len }
            }
            None => {
                out.clear();
                self.stats.dropped += 1;
                Unknown::Drop
            }
        }
    }
}
