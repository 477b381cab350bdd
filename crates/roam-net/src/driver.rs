//! The driver: feeds received datagrams and timer expiries into an [`Endpoint`] and sends
//! what its connections emit. The application owns the driver and calls [`Driver::step`] in
//! a loop, reading and writing its connections between steps through
//! [`Driver::endpoint`] (no callbacks, no home-made event loop: tokio waits).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use roam_proto::endpoint::{Acceptor, DatagramEvent, Endpoint, EndpointConfig, TokenKey};
use roam_proto::Time;
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, Notify};
use tokio::task::JoinHandle;

use crate::socket::{self, Incoming, LocalSpec};
use crate::{Clock, NetError};

/// Datagrams handled per wakeup at most before the driver sends again (keeps acknowledgements
/// flowing under load).
const RECV_BATCH: usize = 256;

/// Received datagrams queued between the socket readers and the driver.
const QUEUE: usize = 4096;

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
}

/// A socket the driver owns.
struct Local {
    spec: LocalSpec,
    addr: SocketAddr,
    socket: Arc<UdpSocket>,
    reader: JoinHandle<()>,
    /// The last send or receive error, cleared by a successful receive.
    error: Option<std::io::ErrorKind>,
}

/// Owns the sockets and the endpoint. See the module docs.
pub struct Driver<P: Acceptor> {
    endpoint: NetEndpoint<P>,
    locals: Vec<Option<Local>>,
    rx: mpsc::Receiver<Incoming>,
    tx: mpsc::Sender<Incoming>,
    clock: Clock,
    buf: Vec<u8>,
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
        let (tx, rx) = mpsc::channel(QUEUE);
        let mut d = Driver {
            endpoint: Endpoint::new(config, random_key()?, acceptor),
            locals: Vec::new(),
            rx,
            tx,
            clock: Clock::new(),
            buf: Vec::with_capacity(socket::MAX_DATAGRAM),
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
        let sock = Arc::new(socket::bind(spec)?);
        let addr = sock.local_addr()?;
        let index = self.locals.len();
        let reader = socket::spawn_reader(index, sock.clone(), self.tx.clone());
        self.locals.push(Some(Local {
            spec: spec.clone(),
            addr,
            socket: sock,
            reader,
            error: None,
        }));
        Ok(index)
    }

    /// Closes local address `index` (an interface that went away).
    pub fn remove_local(&mut self, index: usize) {
        if let Some(l) = self.locals.get_mut(index).and_then(Option::take) {
            l.reader.abort();
        }
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
            let bytes = &self.buf[..t.len];
            self.send(t.local, t.remote, bytes_owned(bytes)).await;
        }
    }

    async fn send(&mut self, local: usize, to: SocketAddr, bytes: Vec<u8>) {
        let Some(l) = self.locals.get_mut(local).and_then(Option::as_mut) else {
            self.stats.send_errors += 1;
            return;
        };
        match l.socket.send_to(&bytes, to).await {
            Ok(_) => self.stats.sent += 1,
            Err(e) => {
                self.stats.send_errors += 1;
                l.error = Some(e.kind());
            }
        }
    }

    /// One turn: sends what is pending, waits for datagrams, a deadline or `max_wait`
    /// (whichever comes first), handles what arrived and fired, and sends again.
    pub async fn step(&mut self, max_wait: Duration) {
        self.flush().await;
        let wake = Clock::wall() + max_wait;
        let deadline = self
            .endpoint
            .poll_timeout()
            .map(|t| self.clock.instant(t).min(wake))
            .unwrap_or(wake);
        let first = tokio::select! {
            m = self.rx.recv() => m,
            _ = tokio::time::sleep_until(deadline.into()) => None,
            _ = self.wake.notified() => None,
        };
        if let Some(m) = first {
            self.incoming(m).await;
            for _ in 1..RECV_BATCH {
                match self.rx.try_recv() {
                    Ok(m) => self.incoming(m).await,
                    Err(_) => break,
                }
            }
        }
        let now = self.clock.now();
        self.endpoint.handle_timeout(now);
        self.flush().await;
    }

    async fn incoming(&mut self, m: Incoming) {
        let Some(l) = self.locals.get_mut(m.local).and_then(Option::as_mut) else {
            return;
        };
        match m.datagram {
            Ok((from, bytes)) => {
                l.error = None;
                self.stats.received += 1;
                let now = self.clock.now();
                let mut out = std::mem::take(&mut self.buf);
                let ev = self.endpoint.handle(now, m.local, from, &bytes, &mut out);
                if let Some(DatagramEvent::Respond { local, remote, len }) = ev {
                    let reply = bytes_owned(&out[..len]);
                    self.buf = out;
                    self.send(local, remote, reply).await;
                } else {
                    self.buf = out;
                }
            }
            Err(e) => {
                self.stats.recv_errors += 1;
                l.error = Some(e.kind());
            }
        }
    }
}

fn bytes_owned(b: &[u8]) -> Vec<u8> {
    b.to_vec()
}

impl<P: Acceptor> Drop for Driver<P> {
    fn drop(&mut self) {
        for l in self.locals.iter().flatten() {
            l.reader.abort();
        }
    }
}
