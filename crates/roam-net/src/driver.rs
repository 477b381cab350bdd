//! The driver: feeds received datagrams and timer expiries into an [`Endpoint`] and sends
//! what its connections emit. The application owns the driver and calls [`Driver::step`] in
//! a loop, reading and writing its connections between steps through
//! [`Driver::endpoint`] (no callbacks, no home-made event loop: tokio waits).
//!
//! The driver reads its sockets itself, in batches, and sends runs of datagrams with one
//! system call each ([`crate::batch`]: GRO/`recvmmsg` and GSO through `quinn-udp`).

use std::future::poll_fn;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use quinn_udp::{UdpSockRef, UdpSocketState};
use roam_proto::endpoint::{Acceptor, DatagramEvent, Endpoint, EndpointConfig, TokenKey};
use roam_proto::Time;
use tokio::io::Interest;
use tokio::net::UdpSocket;
use tokio::sync::Notify;

use crate::batch::{segments, RecvBatch, SendRun};
use crate::socket::{self, LocalSpec};
use crate::{Clock, NetError};

/// Datagrams handled per wakeup at most before the driver sends again (keeps acknowledgements
/// flowing under load); checked after each receive call, which may bring up to
/// `quinn_udp::BATCH_SIZE` buffers of coalesced datagrams.
const RECV_BATCH: usize = 256;

/// How long a socket whose receive failed is left alone (an interface that went away must not
/// make the driver spin).
const RECV_ERROR_PAUSE: Duration = Duration::from_millis(10);

/// The runtime's endpoint: peers are socket addresses, locals are indexes of the driver's
/// sockets.
pub type NetEndpoint<P> = Endpoint<SocketAddr, usize, P>;

/// Counters of the driver's sockets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DriverStats {
    /// Datagrams received.
    pub received: u64,
    /// Datagrams sent.
    pub sent: u64,
    /// Sends that failed (the local address went away, no route).
    pub send_errors: u64,
    /// Receive errors reported by the sockets.
    pub recv_errors: u64,
    /// System calls that sent datagrams (one per GSO run).
    pub send_calls: u64,
    /// Receive calls that brought datagrams (one per `recvmmsg` batch).
    pub recv_calls: u64,
    /// Received buffers the kernel had coalesced from several datagrams (GRO).
    pub coalesced: u64,
}

/// A socket the driver owns.
struct Local {
    spec: LocalSpec,
    addr: SocketAddr,
    socket: UdpSocket,
    /// `quinn-udp`'s view of the socket: GSO segments it may send, GRO.
    state: UdpSocketState,
    /// The last send or receive error, cleared by a successful receive.
    error: Option<std::io::ErrorKind>,
    /// Not read until then (its last receive failed).
    paused_until: Option<Instant>,
}

impl Local {
    fn paused(&self, now: Instant) -> bool {
        self.paused_until.is_some_and(|p| p > now)
    }
}

/// Owns the sockets and the endpoint. See the module docs.
pub struct Driver<P: Acceptor> {
    endpoint: NetEndpoint<P>,
    locals: Vec<Option<Local>>,
    clock: Clock,
    /// One datagram the endpoint writes.
    buf: Vec<u8>,
    /// Received datagrams, as the last receive call left them.
    recv: RecvBatch,
    /// Datagrams waiting to leave in one send.
    run: SendRun,
    /// Replies the endpoint gave to datagrams of the current receive batch.
    replies: Vec<(usize, SocketAddr, Vec<u8>)>,
    stats: DriverStats,
    /// Wakes [`Driver::step`] early (work done off the driver's task completed).
    wake: Arc<Notify>,
}

/// A fresh address-validation key from the OS RNG.
pub fn random_key() -> Result<TokenKey, NetError> {
    let mut k = [0u8; 16];
    getrandom::getrandom(&mut k).map_err(|e| NetError::Io(std::io::Error::other(e.to_string())))?;
    Ok(TokenKey::new(k))
}

/// A random u64 from the OS RNG (connection ids).
pub fn random_u64() -> Result<u64, NetError> {
    let mut k = [0u8; 8];
    getrandom::getrandom(&mut k).map_err(|e| NetError::Io(std::io::Error::other(e.to_string())))?;
    Ok(u64::from_le_bytes(k))
}

impl<P: Acceptor> Driver<P> {
    /// Binds one socket per entry of `locals` (must be called inside a tokio runtime).
    pub fn bind(
        locals: &[LocalSpec],
        config: EndpointConfig,
        acceptor: P,
    ) -> Result<Self, NetError> {
        let mut endpoint = Endpoint::new(config, random_key()?, acceptor);
        endpoint.set_host_of(crate::host_key::host_key);
        let mut d = Driver {
            endpoint,
            locals: Vec::new(),
            clock: Clock::new(),
            buf: Vec::with_capacity(socket::MAX_DATAGRAM),
            recv: RecvBatch::new(),
            run: SendRun::default(),
            replies: Vec::new(),
            stats: DriverStats::default(),
            wake: Arc::new(Notify::new()),
        };
        for spec in locals {
            d.add_local(spec)?;
        }
        Ok(d)
    }

    /// Binds another local address (an interface that came up); returns its index.
    pub fn add_local(&mut self, spec: &LocalSpec) -> Result<usize, NetError> {
        let sock = socket::bind(spec)?;
        let addr = sock.local_addr()?;
        let state = UdpSocketState::new(UdpSockRef::from(&sock))
            .map_err(|source| NetError::Bind { addr, source })?;
        let index = self.locals.len();
        self.locals.push(Some(Local {
            spec: spec.clone(),
            addr,
            socket: sock,
            state,
            error: None,
            paused_until: None,
        }));
        Ok(index)
    }

    /// Closes local address `index` (an interface that went away).
    pub fn remove_local(&mut self, index: usize) {
        if let Some(slot) = self.locals.get_mut(index) {
            *slot = None;
        }
        if self.run.local() == index {
            self.run.clear();
        }
    }

    /// Number of local slots (including closed ones).
    pub fn locals(&self) -> usize {
        self.locals.len()
    }

    /// The bound address of local `index` (with the port the OS chose).
    pub fn local_addr(&self, index: usize) -> Option<SocketAddr> {
        self.locals.get(index)?.as_ref().map(|l| l.addr)
    }

    /// What local `index` was bound with.
    pub fn local_spec(&self, index: usize) -> Option<&LocalSpec> {
        self.locals.get(index)?.as_ref().map(|l| &l.spec)
    }

    /// The last error a send or receive on local `index` met, if it has not received since.
    pub fn local_error(&self, index: usize) -> Option<std::io::ErrorKind> {
        self.locals.get(index)?.as_ref().and_then(|l| l.error)
    }

    /// The endpoint, for the application (open, read, write, poll events).
    pub fn endpoint(&mut self) -> &mut NetEndpoint<P> {
        &mut self.endpoint
    }

    /// The engines' time now.
    pub fn now(&self) -> Time {
        self.clock.now()
    }

    /// A handle that ends the current (or next) [`Driver::step`]'s wait: for work done off
    /// the driver's task, such as file reads, whose results the application hands to a
    /// connection between steps.
    pub fn waker(&self) -> Arc<Notify> {
        self.wake.clone()
    }

    /// Socket counters.
    pub fn stats(&self) -> DriverStats {
        self.stats
    }

    /// Sends everything the connections have to send now.
    pub async fn flush(&mut self) {
        let now = self.clock.now();
        while let Some(t) = self.endpoint.poll_transmit(now, &mut self.buf) {
            let max = self.max_segments(t.local);
            let datagram = &self.buf[..t.len.min(self.buf.len())];
            if !self.run.push(t.local, t.remote, datagram, max) {
                self.send_run().await;
                let datagram = &self.buf[..t.len.min(self.buf.len())];
                self.run.push(t.local, t.remote, datagram, max);
            }
        }
        self.send_run().await;
    }

    /// GSO segments one send on local `index` may carry (1 where the platform has no GSO).
    fn max_segments(&self, index: usize) -> usize {
        self.locals
            .get(index)
            .and_then(Option::as_ref)
            .map_or(1, |l| l.state.max_gso_segments().max(1))
    }

    /// Sends the pending run (waiting while the socket buffer is full).
    async fn send_run(&mut self) {
        if self.run.is_empty() {
            return;
        }
        let count = self.run.count() as u64;
        let sent = match (
            self.locals.get(self.run.local()).and_then(Option::as_ref),
            self.run.transmit(),
        ) {
            (Some(l), Some(t)) => Some(
                l.socket
                    .async_io(Interest::WRITABLE, || {
                        l.state.try_send(UdpSockRef::from(&l.socket), &t)
                    })
                    .await,
            ),
            _ => None,
        };
        match sent {
            Some(Ok(())) => {
                self.stats.sent += count;
                self.stats.send_calls += 1;
            }
            Some(Err(e)) => {
                self.stats.send_errors += count;
                if let Some(l) = self
                    .locals
                    .get_mut(self.run.local())
                    .and_then(Option::as_mut)
                {
                    l.error = Some(e.kind());
                }
            }
            None => self.stats.send_errors += count,
        }
        self.run.clear();
    }

    /// Queues a datagram behind the pending run.
    async fn send(&mut self, local: usize, to: SocketAddr, bytes: &[u8]) {
        let max = self.max_segments(local);
        if !self.run.push(local, to, bytes, max) {
            self.send_run().await;
            self.run.push(local, to, bytes, max);
        }
    }

    /// One turn: sends what is pending, waits for datagrams, a deadline or `max_wait`
    /// (whichever comes first), handles what arrived and fired, and sends again.
    pub async fn step(&mut self, max_wait: Duration) {
        self.flush().await;
        let wall = Clock::wall();
        let mut deadline = wall + max_wait;
        if let Some(t) = self.endpoint.poll_timeout() {
            deadline = deadline.min(self.clock.instant(t));
        }
        for l in self.locals.iter().flatten() {
            if let Some(p) = l.paused_until.filter(|p| *p > wall) {
                deadline = deadline.min(p);
            }
        }
        let locals = &self.locals;
        let readable = poll_fn(|cx| {
            for l in locals.iter().flatten() {
                if !l.paused(wall) && l.socket.poll_recv_ready(cx).is_ready() {
                    return Poll::Ready(());
                }
            }
            Poll::Pending
        });
        tokio::select! {
            _ = readable => {}
            _ = tokio::time::sleep_until(deadline.into()) => {}
            _ = self.wake.notified() => {}
        }
        self.receive().await;
        let now = self.clock.now();
        self.endpoint.handle_timeout(now);
        self.flush().await;
    }

    /// Reads every readable socket, up to [`RECV_BATCH`] datagrams in all, handing each
    /// datagram (each segment of a coalesced buffer) to the endpoint.
    async fn receive(&mut self) {
        let wall = Clock::wall();
        let mut handled = 0;
        for index in 0..self.locals.len() {
            while handled < RECV_BATCH {
                let Some(l) = self.locals.get_mut(index).and_then(Option::as_mut) else {
                    break;
                };
                if l.paused(wall) {
                    break;
                }
                match self.recv.recv(&l.state, &l.socket) {
                    Ok(_) => {
                        l.error = None;
                        self.stats.recv_calls += 1;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) => {
                        // An error (ICMP unreachable reported on the socket, interface gone):
                        // the application decides what it means.
                        self.stats.recv_errors += 1;
                        l.error = Some(e.kind());
                        l.paused_until = Some(wall + RECV_ERROR_PAUSE);
                        break;
                    }
                }
                handled += self.handle_batch(index);
                for (local, to, bytes) in std::mem::take(&mut self.replies) {
                    self.send(local, to, &bytes).await;
                }
            }
        }
    }

    /// Hands the datagrams of the last receive call on local `index` to the endpoint; returns
    /// how many there were.
    fn handle_batch(&mut self, index: usize) -> usize {
        let mut n = 0;
        for i in 0..self.recv.filled() {
            let Some((from, bytes, stride)) = self.recv.buffer(i) else {
                break;
            };
            let now = self.clock.now();
            let mut count = 0;
            for datagram in segments(bytes, stride) {
                count += 1;
                let ev = self
                    .endpoint
                    .handle(now, index, from, datagram, &mut self.buf);
                if let Some(DatagramEvent::Respond { local, remote, len }) = ev {
                    let reply = self.buf.get(..len).unwrap_or_default().to_vec();
                    self.replies.push((local, remote, reply));
                }
            }
            if count > 1 {
                self.stats.coalesced += 1;
            }
            self.stats.received += count as u64;
            n += count;
        }
        n
    }
}
