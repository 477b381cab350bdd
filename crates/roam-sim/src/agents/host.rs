//! One host of a simulated flow (a node and port): an [`Endpoint`] of any engine and the
//! handle of the connection the agent follows, shared by every agent that drives an endpoint
//! (TCP, HTTP, RCP, R²CP, media). The endpoint owns the accept policy (an [`Acceptor`], or
//! [`NoAcceptor`] for a client), the conn-id lookup, drained-connection removal and the reset
//! budget; the host adds what every simulated host does around it: sending the endpoint's
//! datagrams from the flow's interface and port (counted as the flow's), keeping a removed
//! connection for its final state, and remembering the endpoint's next deadline.
//!
//! The agents keep their own order of calls (`docs/ENDPOINT.md`: what is asked of the endpoint
//! and when is part of a run's result); the host only writes each step once.

use std::fmt::Debug;

use rand_chacha::ChaCha8Rng;
use roam_proto::endpoint::{
    Acceptor, DatagramEvent, Endpoint, EndpointConfig, EndpointEvent, Handle, NoAcceptor,
    PathAddrs, PathId, TokenKey,
};
use roam_proto::Time;

use crate::agent::{FlowIdx, IfaceIdx, NetCtx, Packet, SockAddr};

/// The local address a host's endpoint knows its paths by.
pub(crate) trait Local: Copy + Eq + Debug {
    /// The interface a datagram of this local address leaves by, for a host whose own
    /// interface is `home`.
    fn iface(self, home: IfaceIdx) -> IfaceIdx;
}

/// A host that sends from its one interface: its endpoint needs no local address.
impl Local for () {
    fn iface(self, home: IfaceIdx) -> IfaceIdx {
        home
    }
}

/// A host with one path per interface (R²CP's receiver): the endpoint names the interface.
impl Local for IfaceIdx {
    fn iface(self, _home: IfaceIdx) -> IfaceIdx {
        self
    }
}

/// How a host draws its endpoint's address-validation key from its agent's random stream
/// (without consuming it: see [`crate::rng::derived_rng`]).
pub(crate) type KeyFrom = fn(&ChaCha8Rng) -> TokenKey;

/// The key of a host that accepts nothing: it mints no tokens, so its key is never used.
fn unused_key(_agent_rng: &ChaCha8Rng) -> TokenKey {
    TokenKey::new([0; 16])
}

/// What became of a datagram the host handed to its endpoint (a reply the endpoint asked for
/// was sent already).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arrived {
    /// Delivered to a connection held.
    Delivered(Handle),
    /// Opened a connection, which the host now follows; `replaced` is the one it followed
    /// before, if any (still held by the endpoint).
    Accepted {
        /// The new connection.
        handle: Handle,
        /// The connection the host followed until now.
        replaced: Option<Handle>,
    },
}

impl Arrived {
    /// The connection the datagram went to.
    pub(crate) fn handle(self) -> Handle {
        match self {
            Arrived::Delivered(h) | Arrived::Accepted { handle: h, .. } => h,
        }
    }
}

/// A flow's end on one host: its endpoint and the connection the agent follows (the one it
/// opened, or the last one accepted).
pub(crate) struct Host<L: Local, P: Acceptor> {
    /// Where this host sends from (unless the endpoint names the interface), and whose
    /// counters its datagrams go to.
    iface: IfaceIdx,
    port: u16,
    flow: FlowIdx,
    /// The endpoint's limits.
    config: EndpointConfig,
    /// How the endpoint's key is drawn, when it is built.
    key: KeyFrom,
    /// The accept side, until the endpoint is built (with this host's key, on first use);
    /// `None` only for a configuration the scenario loader would have refused.
    acceptor: Option<P>,
    endpoint: Option<Endpoint<SockAddr, L, P>>,
    /// The connection followed, while the endpoint holds it.
    conn: Option<Handle>,
    /// The connection followed, once the endpoint removed it (drained), for its final state.
    done: Option<P::Connection>,
    /// The endpoint's next deadline, as of the last [`Host::settle`].
    next_timer: Option<Time>,
    /// A buffer for the endpoint to write into, kept between calls: most calls end with a
    /// poll that writes nothing, and most datagrams need no reply, so it is seldom handed on.
    spare: Vec<u8>,
}

impl<L: Local, P: Acceptor> Host<L, P> {
    /// A host sending from `iface`, `port` for `flow`, accepting with `acceptor` and keying
    /// its tokens with `key`. The engines close their connections themselves (retransmission
    /// limits, TIME-WAIT, idle timeouts), so by default the endpoint expires none.
    pub(crate) fn keyed(
        (iface, port, flow): (IfaceIdx, u16, FlowIdx),
        acceptor: Option<P>,
        key: KeyFrom,
    ) -> Self {
        Host {
            iface,
            port,
            flow,
            config: EndpointConfig {
                idle_timeout: None,
                ..EndpointConfig::default()
            },
            key,
            acceptor,
            endpoint: None,
            conn: None,
            done: None,
            next_timer: None,
            spare: Vec::new(),
        }
    }

    /// The same host with a reset budget of `per_second` (the flow's engine configuration's).
    pub(crate) fn with_resets_per_second(mut self, per_second: u32) -> Self {
        self.config.resets_per_second = per_second;
        self
    }

    /// The endpoint, built on first use with a key drawn from the agent's stream (drawing it
    /// moves no other draw of the run).
    fn endpoint(&mut self, ctx: &mut dyn NetCtx) -> Option<&mut Endpoint<SockAddr, L, P>> {
        if self.endpoint.is_none() {
            let acceptor = self.acceptor.take()?;
            let key = (self.key)(ctx.rng());
            self.endpoint = Some(Endpoint::new(self.config.clone(), key, acceptor));
        }
        self.endpoint.as_mut()
    }

    /// Adds `conn` (one the host opened) with its `paths`, and follows it. False if the
    /// endpoint refused it (a conn id in use, an unmapped path).
    pub(crate) fn open(
        &mut self,
        conn: P::Connection,
        paths: &[PathAddrs<L, SockAddr>],
        ctx: &mut dyn NetCtx,
    ) -> bool {
        let now = ctx.now();
        self.conn = self
            .endpoint(ctx)
            .and_then(|ep| ep.insert(now, conn, paths).ok());
        self.conn.is_some()
    }

    /// Hands `packet`, which arrived at `local`, to the endpoint, sending its handshake reply
    /// or reset. A connection it opens becomes the one the host follows.
    pub(crate) fn on_packet_at(
        &mut self,
        local: L,
        packet: &Packet,
        ctx: &mut dyn NetCtx,
    ) -> Option<Arrived> {
        let now = ctx.now();
        let mut out = std::mem::take(&mut self.spare);
        out.clear();
        let Some(ep) = self.endpoint(ctx) else {
            self.spare = out;
            return None;
        };
        match ep.handle(now, local, packet.src, &packet.payload, &mut out) {
            Some(DatagramEvent::Respond { local, remote, len }) => {
                out.truncate(len);
                let from = (self.flow, local.iface(self.iface), self.port);
                super::send_counted(ctx, from, remote, out);
                None
            }
            Some(DatagramEvent::Accepted(handle)) => {
                self.spare = out;
                let replaced = self.conn.replace(handle);
                Some(Arrived::Accepted { handle, replaced })
            }
            Some(DatagramEvent::Delivered(h)) => {
                self.spare = out;
                Some(Arrived::Delivered(h))
            }
            None => {
                self.spare = out;
                None
            }
        }
    }

    /// Fires the endpoint's due timers.
    pub(crate) fn on_timer(&mut self, now: Time) {
        if let Some(ep) = self.endpoint.as_mut() {
            ep.handle_timeout(now);
        }
    }

    /// True once the host opened or accepted the connection it follows (which may since have
    /// been removed).
    pub(crate) fn opened(&self) -> bool {
        self.conn.is_some() || self.done.is_some()
    }

    /// True while the endpoint holds the connection followed.
    pub(crate) fn is_held(&self) -> bool {
        self.conn.is_some()
    }

    /// The connection followed, while the endpoint holds it.
    pub(crate) fn held(&self) -> Option<&P::Connection> {
        self.endpoint.as_ref()?.connection(self.conn?)
    }

    /// The connection followed, for the application, while the endpoint holds it (the
    /// endpoint then offers it to send and re-reads its deadline).
    pub(crate) fn held_mut(&mut self) -> Option<&mut P::Connection> {
        self.endpoint.as_mut()?.connection_mut(self.conn?)
    }

    /// The connection followed (held, or removed with its final state).
    pub(crate) fn conn(&self) -> Option<&P::Connection> {
        match (self.conn, self.endpoint.as_ref()) {
            (Some(h), Some(ep)) => ep.connection(h),
            _ => self.done.as_ref(),
        }
    }

    /// The connection followed, for the application (held, or removed with its final state).
    pub(crate) fn conn_mut(&mut self) -> Option<&mut P::Connection> {
        match (self.conn, self.endpoint.as_mut()) {
            (Some(h), Some(ep)) => ep.connection_mut(h),
            _ => self.done.as_mut(),
        }
    }

    /// Any connection the endpoint holds (a server's other connections).
    pub(crate) fn connection(&self, h: Handle) -> Option<&P::Connection> {
        self.endpoint.as_ref()?.connection(h)
    }

    /// Any connection the endpoint holds, for the application ([`Endpoint::connection_mut`]).
    pub(crate) fn connection_mut(&mut self, h: Handle) -> Option<&mut P::Connection> {
        self.endpoint.as_mut()?.connection_mut(h)
    }

    /// True if `h` is the connection followed (and still held).
    pub(crate) fn follows(&self, h: Handle) -> bool {
        self.conn == Some(h)
    }

    /// Maps `path` of the connection followed to `local` and `remote`
    /// ([`Endpoint::add_path`]); false if the endpoint refused (a conn id in use).
    pub(crate) fn add_path(&mut self, path: PathId, local: L, remote: SockAddr) -> bool {
        match (self.conn, self.endpoint.as_mut()) {
            (Some(h), Some(ep)) => ep.add_path(h, path, local, remote).is_ok(),
            _ => false,
        }
    }

    /// Forgets `path` of the connection followed ([`Endpoint::remove_path`]).
    pub(crate) fn remove_path(&mut self, path: PathId) {
        if let (Some(h), Some(ep)) = (self.conn, self.endpoint.as_mut()) {
            // The connection is held: nothing to refuse.
            let _ = ep.remove_path(h, path);
        }
    }

    /// True while the host's interface has an address (without one, a host that keeps what
    /// it would send leaves it in the engine).
    pub(crate) fn addressed(&self, ctx: &dyn NetCtx) -> bool {
        ctx.local_addr(self.iface).is_some()
    }

    /// Sends every datagram the endpoint has ready, from the interface each leaves by, as the
    /// flow's; `sent` hears the length of each one that left (the interface had an address).
    pub(crate) fn transmit(&mut self, ctx: &mut dyn NetCtx, mut sent: impl FnMut(usize)) {
        let now = ctx.now();
        let Some(ep) = self.endpoint.as_mut() else {
            return;
        };
        let mut buf = std::mem::take(&mut self.spare);
        buf.clear();
        while let Some(t) = ep.poll_transmit(now, &mut buf) {
            buf.truncate(t.len);
            let datagram = std::mem::replace(&mut buf, ctx.buffer());
            let from = (self.flow, t.local.iface(self.iface), self.port);
            if super::send_counted(ctx, from, t.remote, datagram) {
                sent(t.len);
            }
        }
        self.spare = buf;
    }

    /// Notes what the endpoint removed — `removed` hears each connection and whether it was
    /// the one followed, which the host then keeps for its final state — and re-reads the
    /// endpoint's deadline.
    pub(crate) fn settle(&mut self, mut removed: impl FnMut(&P::Connection, bool)) {
        let Some(ep) = self.endpoint.as_mut() else {
            return;
        };
        while let Some(ev) = ep.poll_event() {
            if let EndpointEvent::Removed { handle, conn, .. } = ev {
                let followed = self.conn == Some(handle);
                removed(&conn, followed);
                if followed {
                    self.conn = None;
                    self.done = Some(conn);
                }
            }
        }
        self.next_timer = ep.poll_timeout();
    }

    /// Re-reads the endpoint's deadline only (after the application changed a connection),
    /// leaving its events for the next [`Host::settle`].
    pub(crate) fn reread_deadline(&mut self) {
        if let Some(ep) = self.endpoint.as_mut() {
            self.next_timer = ep.poll_timeout();
        }
    }

    /// Sends what the endpoint has ready while the interface has an address (without one the
    /// engine keeps it), then [`Host::settle`]s, ignoring removed connections but the one
    /// followed.
    pub(crate) fn flush(&mut self, ctx: &mut dyn NetCtx) {
        if self.endpoint.is_none() {
            return;
        }
        if self.addressed(ctx) {
            self.transmit(ctx, |_| {});
        }
        self.settle(|_, _| {});
    }

    /// The endpoint's next deadline, as of the last [`Host::settle`].
    pub(crate) fn next_timer(&self) -> Option<Time> {
        self.next_timer
    }
}

impl<P: Acceptor> Host<(), P> {
    /// Hands `packet` to the endpoint of a host sending from its one interface
    /// ([`Host::on_packet_at`]).
    pub(crate) fn on_packet(&mut self, packet: &Packet, ctx: &mut dyn NetCtx) -> Option<Arrived> {
        self.on_packet_at((), packet, ctx)
    }

    /// Opens `conn` (a single-path one) towards `peer` and follows it; the host's only
    /// connection, so its id cannot be in use.
    pub(crate) fn connect(&mut self, conn: P::Connection, peer: SockAddr, ctx: &mut dyn NetCtx) {
        let path = PathAddrs {
            path: PathId::PRIMARY,
            local: (),
            remote: peer,
        };
        self.open(conn, &[path], ctx);
    }
}

impl<L: Local, C: roam_proto::endpoint::EndpointConnection> Host<L, NoAcceptor<C>> {
    /// A client host (it accepts nothing) sending from `iface`, `port` for `flow`.
    pub(crate) fn client(at: (IfaceIdx, u16, FlowIdx)) -> Self {
        Host::keyed(at, Some(NoAcceptor::default()), unused_key)
    }
}
