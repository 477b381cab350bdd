//! One TCP host of a simulated flow (a node and port): an [`Endpoint`] holding the flow's one
//! connection, shared by the TCP and HTTP agents. The endpoint owns the accept policy (a
//! [`TcpAcceptor`] answering SYNs with SYN cookies, or [`NoAcceptor`] for the active opener),
//! the conn-id lookup, drained-connection removal and the reset budget; the agent reaches its
//! connection only through [`TcpHost::conn_mut`].

use rand::Rng;
use roam_proto::endpoint::{
    Acceptor, DatagramEvent, Endpoint, EndpointConfig, EndpointEvent, Handle, NoAcceptor,
    PathAddrs, PathId, TokenKey,
};
use roam_proto::tcp::{Connection, TcpAcceptor};
use roam_proto::Time;

use crate::agent::{FlowIdx, IfaceIdx, NetCtx, Packet, SockAddr};
use crate::rng::derived_rng;

/// The active opener's host: it accepts nothing.
pub(crate) type ActiveHost = TcpHost<NoAcceptor<Connection>>;
/// The passive opener's host: SYN cookies.
pub(crate) type PassiveHost = TcpHost<TcpAcceptor>;

/// A TCP flow's end on one host: its endpoint and the handle of its connection.
pub(crate) struct TcpHost<P: Acceptor<Connection = Connection>> {
    /// Where this host sends from, and whose counters its datagrams go to.
    iface: IfaceIdx,
    port: u16,
    flow: FlowIdx,
    /// The accept side, until the endpoint is built (with this host's key, on first use);
    /// `None` only for a configuration the scenario loader would have refused.
    acceptor: Option<P>,
    endpoint: Option<Endpoint<SockAddr, (), P>>,
    /// The connection, while the endpoint holds it.
    conn: Option<Handle>,
    /// The connection once the endpoint removed it (drained), for its final state.
    done: Option<Connection>,
    /// The endpoint's next deadline, re-read by [`TcpHost::flush`].
    next_timer: Option<Time>,
    /// A buffer for the endpoint to write into, kept between calls: most calls end with a
    /// poll that writes nothing, and most datagrams need no reply, so it is seldom handed on.
    spare: Vec<u8>,
}

impl<P: Acceptor<Connection = Connection>> TcpHost<P> {
    /// A host sending from `iface`, `port` for `flow`, accepting with `acceptor`.
    pub(crate) fn new(iface: IfaceIdx, port: u16, flow: FlowIdx, acceptor: Option<P>) -> Self {
        TcpHost {
            iface,
            port,
            flow,
            acceptor,
            endpoint: None,
            conn: None,
            done: None,
            next_timer: None,
            spare: Vec::new(),
        }
    }

    /// The endpoint, built on first use. Its SYN-cookie key comes from a stream derived from
    /// the agent's own (drawing it moves no other draw of the run). The engine closes its
    /// connections itself (retransmission limits, TIME-WAIT), so the endpoint expires none.
    fn endpoint(&mut self, ctx: &mut dyn NetCtx) -> Option<&mut Endpoint<SockAddr, (), P>> {
        if self.endpoint.is_none() {
            let acceptor = self.acceptor.take()?;
            let key = TokenKey::new(derived_rng(ctx.rng(), "tcp:token").gen());
            let config = EndpointConfig {
                idle_timeout: None,
                ..EndpointConfig::default()
            };
            self.endpoint = Some(Endpoint::new(config, key, acceptor));
        }
        self.endpoint.as_mut()
    }

    /// Opens `conn` (an active opener's) towards `peer`.
    pub(crate) fn connect(&mut self, conn: Connection, peer: SockAddr, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let path = PathAddrs {
            path: PathId::PRIMARY,
            local: (),
            remote: peer,
        };
        // The host's only connection: its id cannot be in use.
        self.conn = self
            .endpoint(ctx)
            .and_then(|ep| ep.insert(now, conn, &[path]).ok());
    }

    /// Hands `packet` to the endpoint, sending its handshake reply or reset. Returns true when
    /// this packet opened the connection.
    pub(crate) fn on_packet(&mut self, packet: &Packet, ctx: &mut dyn NetCtx) -> bool {
        let now = ctx.now();
        let mut out = std::mem::take(&mut self.spare);
        out.clear();
        let Some(ep) = self.endpoint(ctx) else {
            self.spare = out;
            return false;
        };
        match ep.handle(now, (), packet.src, &packet.payload, &mut out) {
            Some(DatagramEvent::Respond { remote, len, .. }) => {
                out.truncate(len);
                super::send_counted(ctx, (self.flow, self.iface, self.port), remote, out);
                false
            }
            Some(DatagramEvent::Accepted(h)) => {
                self.spare = out;
                self.conn = Some(h);
                true
            }
            Some(DatagramEvent::Delivered(_)) | None => {
                self.spare = out;
                false
            }
        }
    }

    /// Fires the connection's due timers.
    pub(crate) fn on_timer(&mut self, now: Time) {
        if let Some(ep) = self.endpoint.as_mut() {
            ep.handle_timeout(now);
        }
    }

    /// The connection for the application (held, or removed with its final state).
    pub(crate) fn conn_mut(&mut self) -> Option<&mut Connection> {
        match (self.conn, self.endpoint.as_mut()) {
            (Some(h), Some(ep)) => ep.connection_mut(h),
            _ => self.done.as_mut(),
        }
    }

    /// The connection (held, or removed with its final state).
    pub(crate) fn conn(&self) -> Option<&Connection> {
        match (self.conn, self.endpoint.as_ref()) {
            (Some(h), Some(ep)) => ep.connection(h),
            _ => self.done.as_ref(),
        }
    }

    /// The next deadline of the connection, as of the last [`TcpHost::flush`].
    pub(crate) fn next_timer(&self) -> Option<Time> {
        self.next_timer
    }

    /// Sends every datagram the endpoint has ready (none while the interface has no address:
    /// the engine keeps them), notes a removed connection and re-reads the deadline.
    pub(crate) fn flush(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let addressed = ctx.local_addr(self.iface).is_some();
        let at = (self.iface, self.port, self.flow);
        let Some(ep) = self.endpoint.as_mut() else {
            return;
        };
        if addressed {
            let mut buf = std::mem::take(&mut self.spare);
            buf.clear();
            while let Some(t) = ep.poll_transmit(now, &mut buf) {
                buf.truncate(t.len);
                let sent = std::mem::replace(&mut buf, ctx.buffer());
                super::send_counted(ctx, (at.2, at.0, at.1), t.remote, sent);
            }
            self.spare = buf;
        }
        while let Some(ev) = ep.poll_event() {
            if let EndpointEvent::Removed { conn, .. } = ev {
                self.conn = None;
                self.done = Some(conn);
            }
        }
        self.next_timer = ep.poll_timeout();
    }
}
