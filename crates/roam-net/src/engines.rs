//! The engines as the runtime's connections, and the server's acceptor.
//!
//! [`NetConn`] puts the engines' own [`EndpointConnection`] implementations behind one type so
//! that one endpoint (one set of sockets) serves every protocol; [`ServerAcceptor`] hands a
//! datagram for no connection to the engine its packet type names: the TCP-like engine's
//! [`TcpAcceptor`] (SYN cookies) or RCP's [`RcpAcceptor`] (a token the receiver echoes). Both
//! answer statelessly and open a connection only once the peer proved its address.

use std::hash::Hash;
use std::sync::Arc;

use roam_proto::cc::CcKind;
use roam_proto::endpoint::{Acceptor, EndpointConnection, Outgoing, PathId, TokenKey, Unknown};
use roam_proto::rcp::{ObjectStore, RcpAcceptor, RcpConfig, RcpReceiver, RcpSender};
use roam_proto::tcp::{self, TcpAcceptor, TcpConfig};
use roam_proto::Time;
use roam_wire::{ConnId, PacketType};

use crate::NetError;

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
    fn inner(&self) -> &dyn EndpointConnection {
        match self {
            NetConn::Tcp(c) => &**c,
            NetConn::RcpSender(c) => &**c,
            NetConn::RcpReceiver(c) => &**c,
        }
    }

    fn inner_mut(&mut self) -> &mut dyn EndpointConnection {
        match self {
            NetConn::Tcp(c) => &mut **c,
            NetConn::RcpSender(c) => &mut **c,
            NetConn::RcpReceiver(c) => &mut **c,
        }
    }
}

impl EndpointConnection for NetConn {
    fn conn_ids(&self, out: &mut Vec<(ConnId, PathId)>) {
        self.inner().conn_ids(out);
    }
    fn handle_datagram(&mut self, now: Time, path: PathId, datagram: &[u8]) {
        self.inner_mut().handle_datagram(now, path, datagram);
    }
    fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Outgoing> {
        self.inner_mut().poll_transmit(now, buf)
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.inner().poll_timeout()
    }
    fn handle_timeout(&mut self, now: Time) {
        self.inner_mut().handle_timeout(now);
    }
    fn is_drained(&self) -> bool {
        self.inner().is_drained()
    }
    fn memory_bound(&self) -> usize {
        self.inner().memory_bound()
    }
}

/// TCP-like send and receive buffer the runtime configures.
pub const TCP_BUFFER: u64 = 4 << 20;

/// The TCP-like configuration the runtime uses: larger buffers and segments than the
/// simulator's defaults, for real links.
pub fn tcp_config() -> TcpConfig {
    TcpConfig {
        mss: 1400,
        send_buffer: TCP_BUFFER,
        recv_buffer: TCP_BUFFER,
        ..TcpConfig::default()
    }
}

/// The RCP configuration the runtime uses.
pub fn rcp_config() -> RcpConfig {
    RcpConfig {
        mss: 1400,
        recv_buffer: 2 << 20,
        initial_rto_ms: 200,
        min_rto_ms: 200,
        ..RcpConfig::default()
    }
}

/// A server's acceptor: TCP-like segments go to the TCP acceptor, RCP requests to the RCP
/// acceptor (serving objects of the store); anything else is dropped.
pub struct ServerAcceptor {
    tcp: TcpAcceptor,
    rcp: RcpAcceptor,
}

impl ServerAcceptor {
    /// Serves `store` over RCP and accepts TCP-like connections with controller `cc`.
    pub fn new(store: Arc<dyn ObjectStore>, cc: CcKind) -> Result<Self, NetError> {
        Ok(ServerAcceptor {
            tcp: TcpAcceptor::new(Arc::new(tcp_config()), cc)
                .map_err(|e| NetError::Config(e.to_string()))?,
            rcp: RcpAcceptor::new(Arc::new(rcp_config()), store),
        })
    }
}

fn boxed<C>(u: Unknown<C>, wrap: impl FnOnce(C) -> NetConn) -> Unknown<NetConn> {
    match u {
        Unknown::Drop => Unknown::Drop,
        Unknown::Reply { len } => Unknown::Reply { len },
        Unknown::Reset { len } => Unknown::Reset { len },
        Unknown::Accept(c) => Unknown::Accept(wrap(c)),
    }
}

impl Acceptor for ServerAcceptor {
    type Connection = NetConn;

    fn on_unknown<A: Hash + ?Sized>(
        &mut self,
        now: Time,
        key: &TokenKey,
        peer: &A,
        datagram: &[u8],
        out: &mut Vec<u8>,
    ) -> Unknown<NetConn> {
        out.clear();
        match datagram.get(1).map(|b| PacketType::from_u8(*b)) {
            Some(Ok(PacketType::Segment)) => {
                boxed(self.tcp.on_unknown(now, key, peer, datagram, out), |c| {
                    NetConn::Tcp(Box::new(c))
                })
            }
            Some(Ok(PacketType::Request)) => {
                boxed(self.rcp.on_unknown(now, key, peer, datagram, out), |c| {
                    NetConn::RcpSender(Box::new(c))
                })
            }
            _ => Unknown::Drop,
        }
    }

    fn refuse(&mut self, now: Time, datagram: &[u8], out: &mut Vec<u8>) -> Option<usize> {
        match datagram.get(1).map(|b| PacketType::from_u8(*b)) {
            Some(Ok(PacketType::Segment)) => self.tcp.refuse(now, datagram, out),
            Some(Ok(PacketType::Request)) => self.rcp.refuse(now, datagram, out),
            _ => None,
        }
    }
}
