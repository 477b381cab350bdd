//! [`Endpoint`]: one host's connections (for one socket set: a node and port in the
//! simulator, a set of bound UDP sockets in the runtime), driven sans-IO.

use std::collections::{HashMap, VecDeque};
use std::fmt::Debug;
use std::hash::Hash;

use roam_wire::{ConnId, Header};

use super::demux::{Entry, Handle, PathAddrs, Table};
use super::limits::{EndpointConfig, EndpointStats, Refusal};
use super::timers::Timers;
use super::{Acceptor, EndpointConnection, PathId, TokenKey, Unknown};
use crate::rcp::ResetLimiter;
use crate::Time;

/// Datagrams for unmapped paths one [`Endpoint::poll_transmit`] call drops at most before
/// it gives up (returns `None`; the connections stay queued for the next call).
const MAX_UNROUTABLE_PER_POLL: usize = 64;

/// What became of a datagram handed to [`Endpoint::handle`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatagramEvent<L, A> {
    /// Delivered to connection `0`.
    Delivered(Handle),
    /// Opened connection `0` (which has processed the datagram); also reported by
    /// [`Endpoint::poll_event`].
    Accepted(Handle),
    /// Send the first `len` bytes of the output buffer to `remote` from `local` (a stateless
    /// handshake reply or a reset, never larger than the datagram received).
    Respond {
        /// The local address the datagram arrived at.
        local: L,
        /// Its sender.
        remote: A,
        /// Bytes to send.
        len: usize,
    },
}

/// A datagram a connection wrote, with its addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit<L, A> {
    /// The connection.
    pub handle: Handle,
    /// The path it leaves by.
    pub path: PathId,
    /// Send from this local address…
    pub local: L,
    /// …to this one.
    pub remote: A,
    /// Bytes written into the caller's buffer.
    pub len: usize,
}

/// Why a connection left the endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoveReason {
    /// It reported [`EndpointConnection::is_drained`].
    Drained,
    /// It received nothing for [`EndpointConfig::idle_timeout`].
    Expired,
    /// The host removed it ([`Endpoint::remove`]).
    Removed,
}

/// What happened to the endpoint's connections, for the host.
#[derive(Debug)]
pub enum EndpointEvent<C> {
    /// A connection was accepted.
    Accepted(Handle),
    /// A connection left the endpoint; here it is, for its final state.
    Removed {
        /// Its handle (no longer valid).
        handle: Handle,
        /// Why.
        reason: RemoveReason,
        /// The connection.
        conn: C,
    },
}

/// How long an *open* connection of a host must have heard nothing before a new connection of
/// the same host, over its share, may displace it ([`EndpointConfig::max_per_peer`]): one the
/// client abandoned without a word. Far longer than a retransmission backoff on a loaded
/// machine (an open connection can be silent for seconds while its sender's RTO backs off:
/// 0.2 + 0.4 + 0.8 + 1.6 s; with 250 ms here, twenty gets of one loaded host lost a live
/// connection this way, issue 28's item 8 in CI), and far below the idle timeout. Finished
/// connections ([`EndpointConnection::is_finished`]: lingering in TIME-WAIT or a sender's
/// linger) are displaced first and at once.
pub(crate) const QUIET_BEFORE_DISPLACING_OPEN: std::time::Duration =
    std::time::Duration::from_secs(10);

/// Why [`Endpoint::insert`] or [`Endpoint::add_path`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InsertError {
    /// A connection id is held by another connection already.
    #[error("connection id {0:?} is in use")]
    ConnIdInUse(ConnId),
    /// One of the connection's conn ids names a path that has no addresses.
    #[error("path {0:?} has no addresses")]
    UnmappedPath(PathId),
    /// No such connection.
    #[error("no such connection")]
    NoSuchConnection,
}

/// One host's connections, sans-IO: demultiplexing, the accept policy, limits, expiry and
/// the reset budget. `A` is the host's peer address type, `L` its local address type
/// (which socket), `P` the protocol's [`Acceptor`]. See `docs/ENDPOINT.md`.
pub struct Endpoint<A, L, P: Acceptor> {
    config: EndpointConfig,
    key: TokenKey,
    acceptor: P,
    table: Table<P::Connection, L, A>,
    pub(super) timers: Timers,
    /// Connections that may have something to send, in round-robin order.
    ready: VecDeque<Handle>,
    events: VecDeque<EndpointEvent<P::Connection>>,
    /// Accepted connections per peer *host* (the key [`Endpoint::set_host_of`] maps a peer
    /// address to).
    pub(super) per_peer: HashMap<A, usize>,
    /// Maps a peer address to its host's key, for [`EndpointConfig::max_per_peer`].
    host_of: fn(&A) -> A,
    memory: usize,
    resets: ResetLimiter,
    stats: EndpointStats,
    scratch: Vec<(ConnId, PathId)>,
    /// Connections handed out by `connection_mut` whose deadline must be re-read.
    touched: Vec<Handle>,
    /// A connection was handed out by `connection_mut` since [`Self::remove_drained`] last
    /// looked: the only way a held connection can have drained unseen (the endpoint checks
    /// after everything it does to one itself).
    app_changed: bool,
}

impl<A, L, P> Endpoint<A, L, P>
where
    A: Copy + Eq + Hash + Debug,
    L: Copy + Eq + Debug,
    P: Acceptor,
{
    /// An endpoint with `config`, the address-validation `key` (from the host's RNG) and the
    /// protocol's `acceptor`.
    pub fn new(config: EndpointConfig, key: TokenKey, acceptor: P) -> Self {
        let resets = ResetLimiter::new(config.resets_per_second);
        Endpoint {
            config,
            key,
            acceptor,
            table: Table::new(),
            timers: Timers::default(),
            ready: VecDeque::new(),
            events: VecDeque::new(),
            per_peer: HashMap::new(),
            host_of: |a| *a,
            memory: 0,
            resets,
            stats: EndpointStats::default(),
            scratch: Vec::new(),
            touched: Vec::new(),
            app_changed: false,
        }
    }

    /// The limits.
    pub fn config(&self) -> &EndpointConfig {
        &self.config
    }

    /// The counters.
    pub fn stats(&self) -> EndpointStats {
        self.stats
    }

    /// How peer addresses are grouped into hosts for [`EndpointConfig::max_per_peer`]: `f`
    /// maps an address to its host's key (a UDP host maps `ip:port` to `ip:0`, an IPv6
    /// address to its /64, so one machine cannot take the whole table by using many ports or
    /// addresses of its prefix). By default every address is its own host. Call it before the
    /// first connection is accepted.
    pub fn set_host_of(&mut self, f: fn(&A) -> A) {
        self.host_of = f;
    }

    /// The acceptor (to configure the protocol's accept side at run time).
    pub fn acceptor_mut(&mut self) -> &mut P {
        &mut self.acceptor
    }

    /// Connections held.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True if no connection is held.
    pub fn is_empty(&self) -> bool {
        self.table.len() == 0
    }

    /// Sum of the held connections' memory bounds, in bytes.
    pub fn memory(&self) -> usize {
        self.memory
    }

    /// Handles of all connections held.
    pub fn handles(&self) -> Vec<Handle> {
        self.table.handles().collect()
    }

    /// The connection `h`, if held.
    pub fn connection(&self, h: Handle) -> Option<&P::Connection> {
        self.table.get(h).map(|e| &e.conn)
    }

    /// The connection `h` for the application (write, read, close…). The endpoint assumes
    /// the call changed it: it is offered to [`Endpoint::poll_transmit`] again and its
    /// deadline is re-read.
    pub fn connection_mut(&mut self, h: Handle) -> Option<&mut P::Connection> {
        let e = self.table.get_mut(h)?;
        queue(e, h, &mut self.ready);
        // Its deadline is re-read when next asked for, after the change.
        mark_touched(e, h, &mut self.touched);
        self.app_changed = true;
        Some(&mut e.conn)
    }

    /// The addresses of path `path` of connection `h`.
    pub fn path(&self, h: Handle, path: PathId) -> Option<PathAddrs<L, A>> {
        self.table.get(h).and_then(|e| e.path(path).copied())
    }

    /// Adds a connection the host opened (a client; its conn ids come from the host's RNG)
    /// with the addresses of its paths. Client connections count towards the overall cap
    /// and memory bound but are never refused by them: the host chose to open them.
    pub fn insert(
        &mut self,
        now: Time,
        conn: P::Connection,
        paths: &[PathAddrs<L, A>],
    ) -> Result<Handle, InsertError> {
        self.scratch.clear();
        conn.conn_ids(&mut self.scratch);
        for (id, path) in &self.scratch {
            if self.table.lookup(*id).is_some() {
                return Err(InsertError::ConnIdInUse(*id));
            }
            if !paths.iter().any(|p| p.path == *path) {
                return Err(InsertError::UnmappedPath(*path));
            }
        }
        Ok(self.store(now, conn, paths.to_vec(), None))
    }

    /// Maps `path` of connection `h` to `local` and `remote` (a new pipe of a multipath
    /// connection, or a new address for an existing path) and registers the conn ids the
    /// connection now reports.
    pub fn add_path(
        &mut self,
        h: Handle,
        path: PathId,
        local: L,
        remote: A,
    ) -> Result<(), InsertError> {
        let e = self.table.get_mut(h).ok_or(InsertError::NoSuchConnection)?;
        self.scratch.clear();
        e.conn.conn_ids(&mut self.scratch);
        for (id, p) in &self.scratch {
            if *p == path && self.table.any_in_use(&[(*id, *p)], Some(h)) {
                return Err(InsertError::ConnIdInUse(*id));
            }
        }
        let e = self.table.get_mut(h).ok_or(InsertError::NoSuchConnection)?;
        e.paths.retain(|p| p.path != path);
        e.paths.push(PathAddrs {
            path,
            local,
            remote,
        });
        let mut scratch = std::mem::take(&mut self.scratch);
        self.table.sync_ids(h, &mut scratch);
        self.scratch = scratch;
        self.touch(h);
        Ok(())
    }

    /// Forgets `path` of connection `h`: its conn ids stop demultiplexing to `h` and what the
    /// connection writes for it is dropped (counted as unroutable).
    pub fn remove_path(&mut self, h: Handle, path: PathId) -> Result<(), InsertError> {
        let e = self.table.get_mut(h).ok_or(InsertError::NoSuchConnection)?;
        e.paths.retain(|p| p.path != path);
        let mut scratch = std::mem::take(&mut self.scratch);
        self.table.sync_ids(h, &mut scratch);
        self.scratch = scratch;
        Ok(())
    }

    /// Removes connection `h` at the host's request and returns it.
    pub fn remove(&mut self, h: Handle) -> Option<P::Connection> {
        self.take(h).map(|e| e.conn)
    }

    /// Handles one datagram that arrived at `local` from `remote`. A reply to send is
    /// written into `out` ([`DatagramEvent::Respond`]). Every datagram is hostile input:
    /// see `docs/ENDPOINT.md` for what is dropped and counted.
    pub fn handle(
        &mut self,
        now: Time,
        local: L,
        remote: A,
        datagram: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<DatagramEvent<L, A>> {
        self.remove_drained();
        let Ok(id) = Header::peek_conn_id(datagram) else {
            self.stats.dropped_malformed += 1;
            return None;
        };
        if let Some((h, path)) = self.table.lookup(id) {
            let e = self.table.get_mut(h)?;
            // A datagram for a known conn id from elsewhere is dropped: connections do not
            // migrate (a mobile RCP receiver opens a new connection on its new address).
            if !e
                .path(path)
                .is_some_and(|p| p.remote == remote && p.local == local)
            {
                self.stats.dropped_wrong_source += 1;
                return None;
            }
            e.conn.handle_datagram(now, path, datagram);
            e.last_heard = now;
            self.stats.delivered += 1;
            if changed(e, h, &mut self.ready, &mut self.touched) {
                self.drained(h);
            }
            return Some(DatagramEvent::Delivered(h));
        }
        if let Some(conn) = self.acceptor.join_target(now, &self.key, &remote, datagram) {
            if self.table.lookup(conn).is_some() {
                return self.join(now, local, remote, conn, datagram);
            }
        }
        match self
            .acceptor
            .on_unknown(now, &self.key, &remote, datagram, out)
        {
            Unknown::Drop => {
                self.stats.dropped_unknown += 1;
                None
            }
            Unknown::Reply { len } => {
                if len > datagram.len() || len > out.len() {
                    self.stats.dropped_oversized_reply += 1;
                    return None;
                }
                self.stats.replies += 1;
                Some(DatagramEvent::Respond { local, remote, len })
            }
            Unknown::Reset { len } => self.reset(now, local, remote, datagram.len(), len),
            Unknown::Accept(conn) => {
                self.make_room(now, remote);
                if let Some(why) = self.refusal(&conn, remote) {
                    self.stats.refuse(why);
                    out.clear();
                    let len = self.acceptor.refuse(now, datagram, out)?;
                    return self.reset(now, local, remote, datagram.len(), len);
                }
                self.scratch.clear();
                conn.conn_ids(&mut self.scratch);
                let paths: Vec<PathAddrs<L, A>> = self
                    .scratch
                    .iter()
                    .map(|(_, path)| PathAddrs {
                        path: *path,
                        local,
                        remote,
                    })
                    .collect();
                let host = (self.host_of)(&remote);
                let h = self.store(now, conn, paths, Some(host));
                *self.per_peer.entry(host).or_insert(0) += 1;
                self.stats.accepted += 1;
                self.events.push_back(EndpointEvent::Accepted(h));
                Some(DatagramEvent::Accepted(h))
            }
        }
    }

    /// A validated datagram opens a new path of the connection receiving on `conn`
    /// ([`Acceptor::join_target`]): the connection takes it or refuses it, and the new path is mapped
    /// to the datagram's addresses.
    fn join(
        &mut self,
        now: Time,
        local: L,
        remote: A,
        conn: ConnId,
        datagram: &[u8],
    ) -> Option<DatagramEvent<L, A>> {
        let Some((h, _)) = self.table.lookup(conn) else {
            self.stats.dropped_unknown += 1;
            return None;
        };
        let e = self.table.get_mut(h)?;
        let Some(path) = e.conn.join(now, datagram) else {
            self.stats.dropped_unknown += 1;
            return None;
        };
        e.paths.retain(|p| p.path != path);
        e.paths.push(PathAddrs {
            path,
            local,
            remote,
        });
        e.last_heard = now;
        let mut scratch = std::mem::take(&mut self.scratch);
        self.table.sync_ids(h, &mut scratch);
        self.scratch = scratch;
        self.stats.joined += 1;
        self.stats.delivered += 1;
        let e = self.table.get_mut(h)?;
        if changed(e, h, &mut self.ready, &mut self.touched) {
            self.drained(h);
        }
        Some(DatagramEvent::Delivered(h))
    }

    /// Writes the next datagram any connection has to send into `buf`. Only connections that
    /// may have something to send are asked (those that received a datagram, fired a timer,
    /// were opened or were touched through [`Endpoint::connection_mut`]), round robin.
    pub fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Transmit<L, A>> {
        self.remove_drained();
        // Bounds the work of one call when connections write for unmapped paths.
        let mut unroutable = 0;
        while let Some(h) = self.ready.pop_front() {
            let Some(e) = self.table.get_mut(h) else {
                continue;
            };
            match e.conn.poll_transmit(now, buf) {
                Some(out) => {
                    let Some(p) = e.path(out.path).copied() else {
                        // Not sendable; ask again (the connection moves on to its next one).
                        self.stats.unroutable += 1;
                        self.ready.push_back(h);
                        unroutable += 1;
                        if unroutable >= MAX_UNROUTABLE_PER_POLL {
                            return None;
                        }
                        continue;
                    };
                    let drained = sent(e, h, &mut self.touched);
                    if out.more {
                        self.ready.push_back(h);
                    } else {
                        // Nothing more until it receives, fires or is touched again.
                        e.queued = false;
                    }
                    if drained {
                        self.drained(h);
                    }
                    return Some(Transmit {
                        handle: h,
                        path: out.path,
                        local: p.local,
                        remote: p.remote,
                        len: out.len,
                    });
                }
                None => {
                    // Nothing more until it receives, fires or is touched again.
                    e.queued = false;
                    if sent(e, h, &mut self.touched) {
                        self.drained(h);
                    }
                }
            }
        }
        None
    }

    /// The earliest deadline of any connection (its own timers and the idle expiry).
    pub fn poll_timeout(&mut self) -> Option<Time> {
        self.settle();
        while let Some((at, h)) = self.timers.peek() {
            if self.table.get(h).is_some_and(|e| e.deadline == Some(at)) {
                return Some(at);
            }
            self.timers.pop();
        }
        None
    }

    /// Fires every deadline at or before `now`: expires idle connections, hands the others
    /// their timeouts.
    pub fn handle_timeout(&mut self, now: Time) {
        self.settle();
        while let Some((at, h)) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            let Some(e) = self.table.get_mut(h) else {
                continue;
            };
            if e.deadline != Some(at) {
                continue;
            }
            e.deadline = None;
            let idle_until = self
                .config
                .idle_timeout
                .map(|d| e.last_heard.saturating_add(d));
            if idle_until.is_some_and(|d| d <= now) {
                self.stats.expired += 1;
                self.remove_with(h, RemoveReason::Expired);
                continue;
            }
            e.conn.handle_timeout(now);
            self.after_change(h);
            // Its new deadline is read at once: one still due fires again in this call.
            self.settle();
        }
    }

    /// The next thing that happened to a connection.
    pub fn poll_event(&mut self) -> Option<EndpointEvent<P::Connection>> {
        self.events.pop_front()
    }

    // --- internals ---

    /// Removes the connections marked changed that have drained, newest mark first, as
    /// [`Self::settle`] does, but leaves their deadlines for it: the calls that take
    /// in or send datagrams need the table right (a drained connection neither receives nor
    /// counts against the caps), only the calls that read deadlines need those. Looks only
    /// when the application changed a connection since it last looked: what the endpoint does
    /// to a connection itself (a datagram in or out, a timer) is followed by that check at
    /// once (in [`Self::handle`], [`Self::poll_transmit`] and [`Self::after_change`]).
    fn remove_drained(&mut self) {
        if !std::mem::take(&mut self.app_changed) {
            return;
        }
        for i in (0..self.touched.len()).rev() {
            let h = self.touched[i];
            if self.table.get(h).is_some_and(|e| e.conn.is_drained()) {
                self.drained(h);
            }
        }
    }

    /// Re-reads the deadlines of the connections marked changed (by a datagram, a send, a
    /// timer or the application), and removes those that drained.
    fn settle(&mut self) {
        while let Some(h) = self.touched.pop() {
            let Some(e) = self.table.get_mut(h) else {
                continue;
            };
            e.touched = false;
            if e.conn.is_drained() {
                self.drained(h);
                continue;
            }
            // Its next deadline: the engine's, or the idle timeout's if earlier.
            let idle = self
                .config
                .idle_timeout
                .map(|d| e.last_heard.saturating_add(d));
            let next = match (e.conn.poll_timeout(), idle) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            if next == e.deadline {
                continue;
            }
            e.deadline = next;
            if let Some(at) = next {
                self.timers.schedule(at, h);
                self.compact_timers();
            }
        }
    }

    /// A host at its share ([`EndpointConfig::max_per_peer`]) that opens another connection
    /// gives up one of its own: the finished one that has heard nothing for longest
    /// (typically a closed connection lingering to answer a repeated FIN, like TCP's
    /// TIME-WAIT, which a new SYN may also end: RFC 6191), else an open one silent for at
    /// least [`QUIET_BEFORE_DISPLACING_OPEN`] (one the client abandoned). Without this a host
    /// that fetches more than its share of objects a minute would be refused until they
    /// expire; a host can only ever displace its own connections, never another host's, and
    /// never a live transfer waiting out a retransmission backoff.
    fn make_room(&mut self, now: Time, remote: A) {
        let host = (self.host_of)(&remote);
        if self.per_peer.get(&host).copied().unwrap_or(0) < self.config.max_per_peer {
            return;
        }
        let own = || {
            self.table
                .handles()
                .filter_map(|h| self.table.get(h).map(|e| (h, e)))
                .filter(|(_, e)| e.accepted_from == Some(host))
        };
        let finished = own()
            .filter(|(_, e)| e.conn.is_finished())
            .min_by_key(|(_, e)| e.last_heard);
        let victim = finished.or_else(|| {
            own()
                .filter(|(_, e)| now >= e.last_heard.saturating_add(QUIET_BEFORE_DISPLACING_OPEN))
                .min_by_key(|(_, e)| e.last_heard)
        });
        if let Some((h, _)) = victim {
            self.stats.evicted += 1;
            self.remove_with(h, RemoveReason::Expired);
        }
    }

    /// Why `conn` from `remote` may not be accepted, if it may not.
    fn refusal(&mut self, conn: &P::Connection, remote: A) -> Option<Refusal> {
        if self.table.len() >= self.config.max_connections {
            return Some(Refusal::Overall);
        }
        let host = (self.host_of)(&remote);
        if self.per_peer.get(&host).copied().unwrap_or(0) >= self.config.max_per_peer {
            return Some(Refusal::PerPeer);
        }
        if self.memory.saturating_add(conn.memory_bound()) > self.config.max_memory {
            return Some(Refusal::Memory);
        }
        self.scratch.clear();
        conn.conn_ids(&mut self.scratch);
        if self.table.any_in_use(&self.scratch, None) {
            return Some(Refusal::ConnIdInUse);
        }
        None
    }

    /// A reset of `len` bytes answering a datagram of `received` bytes, if small enough and
    /// within budget.
    fn reset(
        &mut self,
        now: Time,
        local: L,
        remote: A,
        received: usize,
        len: usize,
    ) -> Option<DatagramEvent<L, A>> {
        if len > received {
            self.stats.dropped_oversized_reply += 1;
            return None;
        }
        if !self.resets.allow(now) {
            self.stats.resets_suppressed += 1;
            return None;
        }
        self.stats.resets_sent += 1;
        Some(DatagramEvent::Respond { local, remote, len })
    }

    fn store(
        &mut self,
        now: Time,
        conn: P::Connection,
        paths: Vec<PathAddrs<L, A>>,
        accepted_from: Option<A>,
    ) -> Handle {
        let memory = conn.memory_bound();
        self.memory = self.memory.saturating_add(memory);
        let h = self.table.insert(Entry {
            conn,
            paths,
            ids: Vec::new(),
            accepted_from,
            memory,
            last_heard: now,
            deadline: None,
            queued: false,
            touched: false,
        });
        let mut scratch = std::mem::take(&mut self.scratch);
        self.table.sync_ids(h, &mut scratch);
        self.scratch = scratch;
        self.after_change(h);
        h
    }

    /// Marks `h` as possibly having something to send, and its deadline as changed.
    fn touch(&mut self, h: Handle) {
        if let Some(e) = self.table.get_mut(h) {
            queue(e, h, &mut self.ready);
            mark_touched(e, h, &mut self.touched);
        }
    }

    /// After the connection received, fired or was opened: removes it if drained, else
    /// queues it for sending and marks its deadline for re-reading ([`mark_touched`]).
    fn after_change(&mut self, h: Handle) {
        let Some(e) = self.table.get_mut(h) else {
            return;
        };
        if changed(e, h, &mut self.ready, &mut self.touched) {
            self.drained(h);
        }
    }

    /// Removes `h`, which reported [`EndpointConnection::is_drained`].
    fn drained(&mut self, h: Handle) {
        self.stats.drained += 1;
        self.remove_with(h, RemoveReason::Drained);
    }

    /// Rebuilds the timer heap from the live deadlines once stale entries outnumber them.
    fn compact_timers(&mut self) {
        if self.timers.len() > 64 + 4 * self.table.len() {
            let live: Vec<(Time, Handle)> = self
                .table
                .handles()
                .filter_map(|h| self.table.get(h).and_then(|e| e.deadline.map(|d| (d, h))))
                .collect();
            self.timers.rebuild(live.into_iter());
        }
    }

    fn take(&mut self, h: Handle) -> Option<Entry<P::Connection, L, A>> {
        let e = self.table.remove(h)?;
        self.memory = self.memory.saturating_sub(e.memory);
        if let Some(peer) = e.accepted_from {
            if let Some(n) = self.per_peer.get_mut(&peer) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    self.per_peer.remove(&peer);
                }
            }
        }
        Some(e)
    }

    fn remove_with(&mut self, h: Handle, reason: RemoveReason) {
        if let Some(e) = self.take(h) {
            self.events.push_back(EndpointEvent::Removed {
                handle: h,
                reason,
                conn: e.conn,
            });
        }
    }
}

/// After connection `h` (entry `e`) received, fired or was opened: true if it drained (the
/// caller removes it), else it is queued for sending and its deadline marked for re-reading.
fn changed<C: EndpointConnection, L, A>(
    e: &mut Entry<C, L, A>,
    h: Handle,
    ready: &mut VecDeque<Handle>,
    touched: &mut Vec<Handle>,
) -> bool {
    if e.conn.is_drained() {
        return true;
    }
    queue(e, h, ready);
    mark_touched(e, h, touched);
    false
}

/// After connection `h` (entry `e`) was asked for a datagram: true if it drained (its last
/// datagram: the caller removes it at once), else its deadline, which sending may have moved
/// (a retransmission timer armed), is marked for re-reading.
fn sent<C: EndpointConnection, L, A>(
    e: &mut Entry<C, L, A>,
    h: Handle,
    touched: &mut Vec<Handle>,
) -> bool {
    if e.conn.is_drained() {
        return true;
    }
    mark_touched(e, h, touched);
    false
}

/// Puts connection `h` (entry `e`) on the send queue unless it is there.
fn queue<C, L, A>(e: &mut Entry<C, L, A>, h: Handle, ready: &mut VecDeque<Handle>) {
    if !e.queued {
        e.queued = true;
        ready.push_back(h);
    }
}

/// Notes that connection `h`'s (entry `e`) deadline may have moved: it is re-read by the next
/// [`Endpoint::settle`], which the calls that read deadlines ([`Endpoint::poll_timeout`],
/// [`Endpoint::handle_timeout`]) run first. Reading it once there, rather than after each
/// datagram in and out, spares a host several deadline computations per packet.
fn mark_touched<C, L, A>(e: &mut Entry<C, L, A>, h: Handle, touched: &mut Vec<Handle>) {
    if !e.touched {
        e.touched = true;
        touched.push(h);
    }
}
