//! One connection type for every engine, and the acceptor of a host that serves more than one
//! protocol on one set of sockets: what a host shares whatever engines it runs (as quinn-proto
//! keeps its `Endpoint` in the sans-IO core).
//!
//! [`AnyConnection`] puts the engines' own [`EndpointConnection`] implementations behind one
//! type, so that one [`super::Endpoint`] holds connections of every protocol; a
//! [`ServerAcceptor`] hands a datagram for no connection to the engine its packet type names
//! (read with [`Header::peek_packet_type`]): the TCP-like engine's [`TcpAcceptor`] (SYN
//! cookies) or RCP's [`RcpAcceptor`] (a token the receiver echoes). Both answer statelessly
//! and open a connection only once the peer proved its address.

use std::hash::Hash;

use roam_wire::{ConnId, Header, PacketType};

use super::{Acceptor, EndpointConnection, Outgoing, PathId, TokenKey, Unknown};
use crate::r2cp::R2cpReceiver;
use crate::rcp::{RcpAcceptor, RcpReceiver, RcpSender};
use crate::tcp::{self, TcpAcceptor};
use crate::Time;

/// One connection of any engine a host drives.
#[derive(Debug)]
pub enum AnyConnection {
    /// A TCP-like connection (either end).
    Tcp(Box<tcp::Connection>),
    /// The sending end of an RCP connection (a server).
    RcpSender(Box<RcpSender>),
    /// The receiving end of an RCP connection (a client fetching an object).
    RcpReceiver(Box<RcpReceiver>),
    /// An R²CP connection (a client fetching an object over several pipes).
    R2cp(Box<R2cpReceiver>),
}

impl AnyConnection {
    fn inner(&self) -> &dyn EndpointConnection {
        match self {
            AnyConnection::Tcp(c) => &**c,
            AnyConnection::RcpSender(c) => &**c,
            AnyConnection::RcpReceiver(c) => &**c,
            AnyConnection::R2cp(c) => &**c,
        }
    }

    fn inner_mut(&mut self) -> &mut dyn EndpointConnection {
        match self {
            AnyConnection::Tcp(c) => &mut **c,
            AnyConnection::RcpSender(c) => &mut **c,
            AnyConnection::RcpReceiver(c) => &mut **c,
            AnyConnection::R2cp(c) => &mut **c,
        }
    }
}

impl EndpointConnection for AnyConnection {
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
    fn is_finished(&self) -> bool {
        self.inner().is_finished()
    }
    fn memory_bound(&self) -> usize {
        self.inner().memory_bound()
    }
}

/// A server's acceptor: TCP-like segments go to the TCP acceptor, RCP requests to the RCP
/// acceptor (serving the objects of its store); anything else is dropped.
pub struct ServerAcceptor {
    tcp: TcpAcceptor,
    rcp: RcpAcceptor,
}

impl ServerAcceptor {
    /// Accepts TCP-like connections with `tcp` and serves RCP requests with `rcp`.
    pub fn new(tcp: TcpAcceptor, rcp: RcpAcceptor) -> Self {
        ServerAcceptor { tcp, rcp }
    }
}

/// `u` with the connection it opens (if any) wrapped by `wrap`.
fn wrapped<C>(u: Unknown<C>, wrap: impl FnOnce(C) -> AnyConnection) -> Unknown<AnyConnection> {
    match u {
        Unknown::Drop => Unknown::Drop,
        Unknown::Reply { len } => Unknown::Reply { len },
        Unknown::Reset { len } => Unknown::Reset { len },
        Unknown::Accept(c) => Unknown::Accept(wrap(c)),
    }
}

impl Acceptor for ServerAcceptor {
    type Connection = AnyConnection;

    fn on_unknown<A: Hash + ?Sized>(
        &mut self,
        now: Time,
        key: &TokenKey,
        peer: &A,
        datagram: &[u8],
        out: &mut Vec<u8>,
    ) -> Unknown<AnyConnection> {
        out.clear();
        match Header::peek_packet_type(datagram) {
            Ok(PacketType::Segment) => {
                wrapped(self.tcp.on_unknown(now, key, peer, datagram, out), |c| {
                    AnyConnection::Tcp(Box::new(c))
                })
            }
            Ok(PacketType::Request) => {
                wrapped(self.rcp.on_unknown(now, key, peer, datagram, out), |c| {
                    AnyConnection::RcpSender(Box::new(c))
                })
            }
            _ => Unknown::Drop,
        }
    }

    fn refuse(&mut self, now: Time, datagram: &[u8], out: &mut Vec<u8>) -> Option<usize> {
        match Header::peek_packet_type(datagram) {
            Ok(PacketType::Segment) => self.tcp.refuse(now, datagram, out),
            Ok(PacketType::Request) => self.rcp.refuse(now, datagram, out),
            _ => None,
        }
    }
}
