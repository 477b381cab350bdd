//! The server side of pTCP's connection establishment (ptcp.txt §4.4) as an endpoint
//! [`Acceptor`], and both ends as [`EndpointConnection`]s: a pTCP connection is accepted like
//! every other engine's, with the endpoint's demultiplexing, address validation, caps and
//! expiry (`docs/ENDPOINT.md`, `docs/HANDSHAKE.md`, `docs/PTCP.md`).
//!
//! What the acceptor does with a pTCP datagram for no pipe held here:
//!
//! | datagram | answer |
//! |---|---|
//! | undecodable, not pTCP, a SYN-ACK, a reset, a segment without ACK | `Drop` |
//! | a pipe's SYN (ISN ≤ `MAX_ISN`, with an MSS option) whose SYN-ACK is no larger | `Reply`: the SYN-ACK, its ISN a cookie; on the first pipe's SYN (pSYN extension) it names our aggregate identifier, nRx and our addresses (as many as fit) |
//! | a segment echoing a valid cookie, pDST naming a connection held | a join ([`Acceptor::join_target`], asked first): the endpoint hands it to that connection ([`PtcpReceiver::join`]) |
//! | a segment echoing a valid cookie, no connection held for pDST, pDST the identifier we give its pSRC | `Accept`: a new [`PtcpReceiver`] with this pipe as its first (whichever of the client's pipes completes first: the first pipe's path may be dark) |
//! | anything else | `Drop` (no reset: a pTCP client whose server forgot it times out) |
//!
//! The server keeps no state for a SYN; one datagram in earns at most one out, never larger.

use std::hash::Hash;

use roam_wire::{ConnId, Flags, Options, PtcpHandshake, PtcpHeader, PtcpSegment, Segment};

use super::cookie::{self, Echo};
use super::sender::ts_of;
use super::{PtcpReceiver, PtcpSender};
use crate::endpoint::{Acceptor, EndpointConnection, Outgoing, PathId, TokenKey, Unknown};
use crate::tcp::{TcpConfig, MAX_ISN};
use crate::Time;

/// Smallest MSS a SYN may negotiate.
const MIN_MSS: u16 = 64;

/// Counters of a pTCP acceptor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PtcpAcceptorStats {
    /// SYN-ACKs sent (first pipes and joins).
    pub syn_acks: u64,
    /// SYNs dropped: no MSS option, an ISN out of range, or too small to answer.
    pub syns_dropped: u64,
    /// Connections opened.
    pub accepted: u64,
    /// Pipes passed on to join a connection.
    pub joins: u64,
}

/// The server side of pTCP's handshake.
#[derive(Debug)]
pub struct PtcpAcceptor {
    cfg: TcpConfig,
    max_pipes: u8,
    /// Our addresses (ipRx), encoded by the host.
    addrs: Vec<Vec<u8>>,
    stats: PtcpAcceptorStats,
}

impl PtcpAcceptor {
    /// An acceptor opening connections with the pipes' options `cfg`, at most `max_pipes`
    /// pipes each (nRx: the server's limit, ptcp.txt §4.3 footnote 3; at least 1), announcing
    /// `addrs` (at most [`roam_wire::MAX_PTCP_ADDRS`] are sent, each at most
    /// [`roam_wire::MAX_PTCP_ADDR_LEN`] bytes; longer ones are left out).
    pub fn new(cfg: TcpConfig, max_pipes: u8, addrs: Vec<Vec<u8>>) -> Self {
        let addrs = addrs
            .into_iter()
            .filter(|a| a.len() <= roam_wire::MAX_PTCP_ADDR_LEN)
            .take(roam_wire::MAX_PTCP_ADDRS)
            .collect();
        PtcpAcceptor {
            cfg,
            max_pipes: max_pipes.max(1),
            addrs,
            stats: PtcpAcceptorStats::default(),
        }
    }

    /// Counters.
    pub fn stats(&self) -> PtcpAcceptorStats {
        self.stats
    }

    /// The SYN-ACK for `d` (a SYN), written into `out` if it is no larger than the SYN.
    fn syn_ack<A: Hash + ?Sized>(
        &mut self,
        now: Time,
        key: &TokenKey,
        peer: &A,
        d: &PtcpSegment<'_>,
        wire_len: usize,
        out: &mut Vec<u8>,
    ) -> Unknown<PtcpReceiver> {
        let seg = &d.segment;
        let first = d.handshake.is_some();
        let Some(their_mss) = seg.options.mss else {
            self.stats.syns_dropped += 1;
            return Unknown::Drop;
        };
        if seg.seq > MAX_ISN || (!first && d.ptcp.dst == ConnId(0)) {
            self.stats.syns_dropped += 1;
            return Unknown::Drop;
        }
        let mss = their_mss.min(self.cfg.mss).max(MIN_MSS);
        let isn = cookie::issue(key, peer, seg.conn_id, now, seg.seq, mss);
        let src = if first {
            cookie::server_id(key, d.ptcp.src, now)
        } else {
            d.ptcp.dst
        };
        // As many of our addresses as keep the answer no larger than the SYN.
        let mut n = self.addrs.len();
        let mut list = Vec::new();
        loop {
            let addrs: Vec<&[u8]> = self.addrs[..n].iter().map(Vec::as_slice).collect();
            if PtcpHandshake::write_list(&addrs, &mut list).is_none() {
                list.clear();
                list.push(0);
            }
            let reply = PtcpSegment {
                ptcp: PtcpHeader {
                    pipe: seg.conn_id,
                    src,
                    dst: d.ptcp.src,
                    ..PtcpHeader::default()
                },
                handshake: first.then_some(PtcpHandshake {
                    ntx: 0,
                    nrx: self.max_pipes,
                    list: &list,
                }),
                segment: Segment {
                    conn_id: seg.conn_id,
                    flags: Flags(Flags::SYN.0 | Flags::ACK.0),
                    seq: isn,
                    ack: seg.seq + 1,
                    window: self.cfg.recv_buffer.min(u64::from(u32::MAX)) as u32,
                    ts_val: ts_of(now),
                    ts_ecr: seg.ts_val,
                    options: Options {
                        mss: Some(mss),
                        sack_permitted: self.cfg.sack && seg.options.sack_permitted,
                        ..Options::default()
                    },
                    payload: &[],
                },
            };
            if reply.encoded_len() <= wire_len {
                out.clear();
                reply.encode(out);
                self.stats.syn_acks += 1;
                return Unknown::Reply { len: out.len() };
            }
            if n == 0 {
                // No amplification: a SYN too small for its answer is dropped.
                self.stats.syns_dropped += 1;
                return Unknown::Drop;
            }
            n -= 1;
        }
    }
}

impl Acceptor for PtcpAcceptor {
    type Connection = PtcpReceiver;

    fn on_unknown<A: Hash + ?Sized>(
        &mut self,
        now: Time,
        key: &TokenKey,
        peer: &A,
        datagram: &[u8],
        out: &mut Vec<u8>,
    ) -> Unknown<PtcpReceiver> {
        out.clear();
        let Ok(d) = PtcpSegment::decode(datagram) else {
            return Unknown::Drop;
        };
        let seg = &d.segment;
        if seg.flags.contains(Flags::RST) {
            return Unknown::Drop;
        }
        if seg.flags.contains(Flags::SYN) {
            if seg.flags.contains(Flags::ACK) {
                // A SYN-ACK: a stale reply, or someone else's reflection.
                return Unknown::Drop;
            }
            return self.syn_ack(now, key, peer, &d, datagram.len(), out);
        }
        let Some((mss, client_isn, server_isn)) = valid_echo(now, key, peer, &d) else {
            // A later segment of a handshake in progress (its first one lost or late), or
            // garbage: the client's retransmission completes the handshake.
            return Unknown::Drop;
        };
        if !cookie::is_server_id(key, d.ptcp.src, d.ptcp.dst, now) {
            // Not an identifier we gave (or given more than two slots ago).
            return Unknown::Drop;
        }
        let mut cfg = self.cfg.clone();
        cfg.mss = mss;
        let mut conn = PtcpReceiver::accept(
            &cfg,
            (d.ptcp.dst, d.ptcp.src),
            usize::from(self.max_pipes),
            seg.conn_id,
            (client_isn, server_isn),
        );
        conn.handle_datagram(now, datagram);
        self.stats.accepted += 1;
        Unknown::Accept(conn)
    }

    fn join_target<A: Hash + ?Sized>(
        &mut self,
        now: Time,
        key: &TokenKey,
        peer: &A,
        datagram: &[u8],
    ) -> Option<ConnId> {
        let d = PtcpSegment::decode(datagram).ok()?;
        valid_echo(now, key, peer, &d)?;
        // A pipe joining a connection another of its pipes opened: the endpoint hands it to
        // the connection that holds pDST; if there is none, `on_unknown` opens one.
        self.stats.joins += 1;
        Some(d.ptcp.dst)
    }
}

/// The MSS, the client's ISN and ours if `d` is an ACK-bearing segment echoing a cookie we
/// issued to `peer` for its pipe.
fn valid_echo<A: Hash + ?Sized>(
    now: Time,
    key: &TokenKey,
    peer: &A,
    d: &PtcpSegment<'_>,
) -> Option<(u16, u64, u64)> {
    let seg = &d.segment;
    if !seg.flags.contains(Flags::ACK) || seg.flags.contains(Flags::SYN) {
        return None;
    }
    let (client_isn, server_isn) = (seg.seq.checked_sub(1)?, seg.ack.checked_sub(1)?);
    match cookie::check(key, peer, seg.conn_id, now, server_isn, client_isn) {
        Echo::Valid(mss) => Some((mss, client_isn, server_isn)),
        Echo::Ours | Echo::Foreign => None,
    }
}

impl EndpointConnection for PtcpReceiver {
    fn conn_ids(&self, out: &mut Vec<(ConnId, PathId)>) {
        // The aggregate identifier names the connection for joining pipes (it never travels
        // as a datagram's connection id: a datagram naming it is handed over and ignored).
        out.push((self.ids().0, PathId(0)));
        out.extend(self.pipe_ids().map(|(path, id)| (id, PathId(path))));
    }

    fn handle_datagram(&mut self, now: Time, _path: PathId, datagram: &[u8]) {
        PtcpReceiver::handle_datagram(self, now, datagram);
    }

    fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Outgoing> {
        let t = PtcpReceiver::poll_transmit(self, now, buf)?;
        Some(Outgoing {
            path: PathId(t.path),
            len: t.len,
            more: true,
        })
    }

    fn poll_timeout(&self) -> Option<Time> {
        PtcpReceiver::poll_timeout(self)
    }

    fn handle_timeout(&mut self, now: Time) {
        PtcpReceiver::handle_timeout(self, now);
    }

    fn is_drained(&self) -> bool {
        self.is_closed()
    }

    fn memory_bound(&self) -> usize {
        self.memory_bound()
    }

    fn join(&mut self, now: Time, datagram: &[u8]) -> Option<PathId> {
        PtcpReceiver::join(self, now, datagram).map(PathId)
    }
}

impl EndpointConnection for PtcpSender {
    fn conn_ids(&self, out: &mut Vec<(ConnId, PathId)>) {
        out.extend(self.pipe_ids().map(|(path, id)| (id, PathId(path))));
    }

    fn handle_datagram(&mut self, now: Time, _path: PathId, datagram: &[u8]) {
        PtcpSender::handle_datagram(self, now, datagram);
    }

    fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Outgoing> {
        let t = PtcpSender::poll_transmit(self, now, buf)?;
        Some(Outgoing {
            path: PathId(t.path),
            len: t.len,
            more: true,
        })
    }

    fn poll_timeout(&self) -> Option<Time> {
        PtcpSender::poll_timeout(self)
    }

    fn handle_timeout(&mut self, now: Time) {
        PtcpSender::handle_timeout(self, now);
    }

    fn is_drained(&self) -> bool {
        self.is_closed()
    }

    fn memory_bound(&self) -> usize {
        self.memory_bound()
    }
}
