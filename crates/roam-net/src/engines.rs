//! The engines as the runtime's connections, and the server's acceptor that opens one per
//! protocol.
//!
//! **Interim**: the engines' own `EndpointConnection` implementations and validating
//! acceptors (stateless, token-echoing handshakes) are being written on the engine branches.
//! Until they land, [`NetConn`] delegates to the engines' public APIs and [`ServerAcceptor`]
//! opens a connection on the first SYN, as the engines do today: it is **not** safe on an
//! open network (see `docs/RUNTIME.md`, "Status").

use std::hash::Hash;
use std::sync::Arc;

use roam_proto::cc::CcKind;
use roam_proto::endpoint::{Acceptor, EndpointConnection, Outgoing, PathId, TokenKey, Unknown};
use roam_proto::rcp::{
    reset_for, ObjectStore, RcpConfig, RcpReceiver, RcpSender, RxState, TxState,
};
use roam_proto::tcp::{self, TcpConfig};
use roam_proto::Time;
use roam_wire::{ConnId, Flags, Header, PacketType};

/// One connection of any engine the runtime drives.
#[derive(Debug)]
pub enum NetConn {
    /// A TCP-like connection (either end).
    Tcp(Box<tcp::Connection>),
    /// The sending end of an RCP connection (a server).
    RcpSender(Box<RcpSender>),
    /// The receiving end of an RCP connection (a client fetching an object).
    RcpReceiver(Box<RcpReceiver>),
}

impl NetConn {
    fn conn_id(&self) -> ConnId {
        match self {
            NetConn::Tcp(c) => c.conn_id(),
            NetConn::RcpSender(c) => c.conn_id(),
            NetConn::RcpReceiver(c) => c.conn_id(),
        }
    }
}

impl EndpointConnection for NetConn {
    fn conn_ids(&self, out: &mut Vec<(ConnId, PathId)>) {
        out.push((self.conn_id(), PathId::PRIMARY));
    }

    fn handle_datagram(&mut self, now: Time, _path: PathId, datagram: &[u8]) {
        // Undecodable datagrams are counted by the engines and otherwise ignored.
        let _ = match self {
            NetConn::Tcp(c) => c.handle_datagram(now, datagram).map_err(|e| e.to_string()),
            NetConn::RcpSender(c) => c.handle_datagram(now, datagram),
            NetConn::RcpReceiver(c) => c.handle_datagram(now, datagram),
        };
    }

    fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Outgoing> {
        let len = match self {
            NetConn::Tcp(c) => c.poll_transmit(now, buf).map(|t| t.len),
            NetConn::RcpSender(c) => c.poll_transmit(now, buf),
            NetConn::RcpReceiver(c) => c.poll_transmit(now, buf),
        }?;
        Some(Outgoing {
            path: PathId::PRIMARY,
            len,
        })
    }

    fn poll_timeout(&self) -> Option<Time> {
        match self {
            NetConn::Tcp(c) => c.poll_timeout(),
            NetConn::RcpSender(c) => c.poll_timeout(),
            NetConn::RcpReceiver(c) => c.poll_timeout(),
        }
    }

    fn handle_timeout(&mut self, now: Time) {
        match self {
            NetConn::Tcp(c) => c.handle_timeout(now),
            NetConn::RcpSender(c) => c.handle_timeout(now),
            NetConn::RcpReceiver(c) => c.handle_timeout(now),
        }
    }

    fn is_drained(&self) -> bool {
        match self {
            NetConn::Tcp(c) => c.is_closed(),
            NetConn::RcpSender(c) => c.state() == TxState::Expired,
            // The application reads a receiver's data and removes it itself.
            NetConn::RcpReceiver(_) => false,
        }
    }

    fn memory_bound(&self) -> usize {
        match self {
            // Send and receive buffers (the configured bounds are not exposed; these are the
            // defaults the runtime configures, see `ServerAcceptor`).
            NetConn::Tcp(_) => 2 * TCP_BUFFER,
            NetConn::RcpSender(c) => c.buffered_bytes().max(RCP_SENDER_BOUND),
            NetConn::RcpReceiver(_) => RCP_RECEIVER_BOUND,
        }
    }
}

/// TCP-like send and receive buffer the runtime configures.
pub const TCP_BUFFER: usize = 4 << 20;
/// What an RCP sender keeps for re-requests at most (its window), as the runtime configures it.
pub const RCP_SENDER_BOUND: usize = 8 << 20;
/// An RCP receiver's reassembly buffer.
pub const RCP_RECEIVER_BOUND: usize = 8 << 20;

/// The TCP-like configuration the runtime uses: larger buffers and segments than the
/// simulator's defaults, for real links.
pub fn tcp_config() -> TcpConfig {
    TcpConfig {
        mss: 1400,
        send_buffer: TCP_BUFFER as u64,
        recv_buffer: TCP_BUFFER as u64,
        ..TcpConfig::default()
    }
}

/// The RCP configuration the runtime uses.
pub fn rcp_config() -> RcpConfig {
    RcpConfig {
        mss: 1400,
        recv_buffer: RCP_RECEIVER_BOUND as u64,
        initial_rto_ms: 200,
        min_rto_ms: 200,
        ..RcpConfig::default()
    }
}

/// A server's acceptor: TCP-like SYNs open TCP connections, RCP SYN requests open senders of
/// objects in the store, other requests for no connection earn a reset.
pub struct ServerAcceptor {
    tcp: Arc<TcpConfig>,
    cc: CcKind,
    rcp: RcpConfig,
    store: Arc<dyn ObjectStore>,
}

impl ServerAcceptor {
    /// Serves `store` over RCP and accepts TCP-like connections with controller `cc`.
    pub fn new(store: Arc<dyn ObjectStore>, cc: CcKind) -> Self {
        ServerAcceptor {
            tcp: Arc::new(tcp_config()),
            cc,
            rcp: rcp_config(),
            store,
        }
    }
}

impl Acceptor for ServerAcceptor {
    type Connection = NetConn;

    fn on_unknown<A: Hash + ?Sized>(
        &mut self,
        now: Time,
        _key: &TokenKey,
        _peer: &A,
        datagram: &[u8],
        out: &mut Vec<u8>,
    ) -> Unknown<NetConn> {
        out.clear();
        let Ok(h) = Header::decode(datagram) else {
            return Unknown::Drop;
        };
        match h.packet_type {
            PacketType::Segment if h.flags == Flags::SYN => {
                match tcp::Connection::accept(self.tcp.clone(), self.cc, now, datagram) {
                    Ok(c) => Unknown::Accept(NetConn::Tcp(Box::new(c))),
                    Err(_) => Unknown::Drop,
                }
            }
            PacketType::Request => {
                if h.flags.contains(Flags::SYN) {
                    if let Ok(s) = RcpSender::accept(&self.rcp, self.store.clone(), now, datagram) {
                        return Unknown::Accept(NetConn::RcpSender(Box::new(s)));
                    }
                }
                match reset_for(now, datagram, out) {
                    Some(len) => Unknown::Reset { len },
                    None => Unknown::Drop,
                }
            }
            _ => Unknown::Drop,
        }
    }
}

/// True once a receiver has nothing more to give (closed, failed, reset or timed out).
pub fn receiver_finished(r: &RcpReceiver) -> bool {
    r.state() == RxState::Closed
}
