//! One host's connections, sans-IO: the layer every host (the simulator, the UDP runtime,
//! tests) drives, so that demultiplexing, the accept policy, address validation, limits,
//! expiry and the reset budget are written once (as quinn-proto's `Endpoint`).
//!
//! This module defines the contract between the endpoint and the engines:
//! - [`EndpointConnection`]: what the endpoint needs of one connection of any engine
//!   (TCP-like, RCP sender or receiver, RCP-ATL media, and later the multipath engines, whose
//!   pipes each receive on their own connection id and path);
//! - [`Acceptor`]: how a protocol answers a datagram that belongs to no connection held here
//!   (a stateless handshake reply carrying a [`TokenKey`] token, a reset, or — only once the
//!   peer echoed a valid token — a new connection).
//!
//! Design notes: `docs/ENDPOINT.md`.

pub mod any;
mod demux;
mod host;
mod limits;
#[cfg(test)]
mod tests;
mod timers;
pub mod token;

use std::hash::Hash;
use std::marker::PhantomData;

use roam_wire::ConnId;

use crate::Time;
pub use any::{AnyConnection, ServerAcceptor};
pub use demux::{Handle, PathAddrs};
pub use host::{DatagramEvent, Endpoint, EndpointEvent, InsertError, RemoveReason, Transmit};
pub use limits::{EndpointConfig, EndpointStats, Refusal};
pub use token::{low_bits, token_slot, TokenKey, TOKEN_SLOT};

/// Which of a connection's paths a datagram arrived on or leaves by. Single-path engines use
/// [`PathId::PRIMARY`] only; a multipath engine numbers its pipes' paths as the host adds
/// them (the host maps a `PathId` to a local address and a remote address).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct PathId(pub u32);

impl PathId {
    /// The only path of a single-path connection.
    pub const PRIMARY: PathId = PathId(0);
}

/// A datagram a connection wrote into the caller's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outgoing {
    /// The path it leaves by.
    pub path: PathId,
    /// Bytes written.
    pub len: usize,
    /// False when the connection is certain to have nothing more to send until it receives a
    /// datagram, a deadline passes or the application changes it: the endpoint then does not
    /// ask it again before one of those (the call would only return `None`, and a host asks
    /// after every datagram in and out). `true` is always correct.
    pub more: bool,
}

/// What the endpoint needs of one connection, whatever its engine. Implemented by every
/// engine beside its own module; the engines keep their full, protocol-specific APIs for the
/// application (read, write, fetch progress, events).
pub trait EndpointConnection {
    /// The connection ids this connection receives on, with the path each belongs to (one for
    /// a single-path engine; one per pipe for a multipath one).
    fn conn_ids(&self, out: &mut Vec<(ConnId, PathId)>);
    /// Hands over one datagram that arrived on `path` for one of [`Self::conn_ids`].
    fn handle_datagram(&mut self, now: Time, path: PathId, datagram: &[u8]);
    /// Writes the next datagram to send into `buf` (cleared first).
    fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Outgoing>;
    /// The next deadline, if any.
    fn poll_timeout(&self) -> Option<Time>;
    /// A deadline passed (spurious calls are harmless).
    fn handle_timeout(&mut self, now: Time);
    /// True once the connection is finished and holds nothing the application still needs
    /// from the endpoint; the endpoint then forgets it.
    fn is_drained(&self) -> bool;
    /// True once the exchange is over for the peer: the connection only lingers (to answer a
    /// retransmitted FIN, as in TCP's TIME-WAIT, RFC 9293 §3.6.1) or waits for a peer that has
    /// everything already. A new connection of the same host over its per-host share may
    /// displace it at once (a new SYN may end TIME-WAIT: RFC 6191), where an open connection,
    /// which may be silent through a retransmission backoff, is displaced only after a long
    /// silence. The default, false, keeps a connection until it drains or idles out.
    fn is_finished(&self) -> bool {
        false
    }
    /// Bytes of memory the connection holds at most (its buffers' configured bounds), for the
    /// endpoint's overall bound.
    fn memory_bound(&self) -> usize;
    /// A multipath engine whose peer opens pipes one by one (pTCP, ptcp.txt §4.4): the
    /// acceptor validated `datagram` (it echoed a handshake token) and named this connection
    /// ([`Acceptor::join_target`]). The connection takes it as a new pipe, processes it, and returns
    /// the pipe's path (the endpoint maps that path to the datagram's addresses and registers
    /// the ids the connection then reports); `None` refuses it (a pipe limit, a datagram that
    /// does not belong here). The default refuses every join.
    fn join(&mut self, _now: Time, _datagram: &[u8]) -> Option<PathId> {
        None
    }
}

/// What a protocol does with a datagram that names no connection held here.
#[derive(Debug)]
pub enum Unknown<C> {
    /// Ignore it (garbage, a stale reply, a SYN too small to answer without amplifying).
    Drop,
    /// Send the `len` bytes written into the output buffer back to the sender, keeping no
    /// state: a handshake reply carrying a token, never larger than the datagram received.
    Reply {
        /// Bytes written.
        len: usize,
    },
    /// Send the reset written into the output buffer (`len` bytes), if the endpoint's reset
    /// budget allows; a reset is never larger than the datagram that earned it.
    Reset {
        /// Bytes written.
        len: usize,
    },
    /// The datagram echoed a valid token: here is the new connection, which has already
    /// processed the datagram.
    Accept(C),
}

/// How one protocol answers datagrams for no connection (the server side of a handshake).
pub trait Acceptor {
    /// The connections it opens.
    type Connection: EndpointConnection;
    /// Decides what to do with `datagram` from `peer`, which names no connection held here.
    /// A reply or reset is written into `out` (cleared first). Implementations validate the
    /// peer's address with `key` before keeping any state: see [`token`].
    fn on_unknown<A: Hash + ?Sized>(
        &mut self,
        now: Time,
        key: &TokenKey,
        peer: &A,
        datagram: &[u8],
        out: &mut Vec<u8>,
    ) -> Unknown<Self::Connection>;

    /// The endpoint refuses the connection `datagram` would have opened (a cap or the memory
    /// bound): writes a reset for it into `out` (cleared first), or returns `None` to drop
    /// it silently (the default). The endpoint sends it within its reset budget, and only if
    /// it is no larger than `datagram`.
    fn refuse(&mut self, _now: Time, _datagram: &[u8], _out: &mut Vec<u8>) -> Option<usize> {
        None
    }

    /// Asked first about a datagram that names no connection held: if it echoed a valid
    /// token and opens a new pipe of an existing connection (pTCP: a pipe joining its
    /// aggregate connection from another address, ptcp.txt §4.4), the id of a connection
    /// that connection reports. The endpoint then hands it to that connection's
    /// [`EndpointConnection::join`] (when it refuses, the datagram is dropped and counted,
    /// `dropped_unknown`). With no such connection, or with the default `None`, the datagram
    /// goes on to [`Acceptor::on_unknown`].
    fn join_target<A: Hash + ?Sized>(
        &mut self,
        _now: Time,
        _key: &TokenKey,
        _peer: &A,
        _datagram: &[u8],
    ) -> Option<ConnId> {
        None
    }
}

/// An acceptor for a host that only opens connections (a client): drops every datagram that
/// names no connection held.
#[derive(Debug)]
pub struct NoAcceptor<C>(PhantomData<fn() -> C>);

impl<C> Default for NoAcceptor<C> {
    fn default() -> Self {
        NoAcceptor(PhantomData)
    }
}

impl<C: EndpointConnection> Acceptor for NoAcceptor<C> {
    type Connection = C;
    fn on_unknown<A: Hash + ?Sized>(
        &mut self,
        _now: Time,
        _key: &TokenKey,
        _peer: &A,
        _datagram: &[u8],
        _out: &mut Vec<u8>,
    ) -> Unknown<C> {
        Unknown::Drop
    }
}
