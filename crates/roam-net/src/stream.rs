//! Byte streams over the TCP-like engine for applications: [`Listener`] (bind, then
//! [`accept`](Listener::accept) connections) and [`Stream`] ([`connect`](Stream::connect);
//! [`AsyncRead`] + [`AsyncWrite`]), in the spirit of an endpoint/connection split: one
//! background task per [`Listener`] (all its accepted streams) or per connecting [`Stream`]
//! owns the [`Driver`] and runs the engines; handles share buffers with it
//! (`stream_task.rs`). No request protocol: the bytes are the application's.
//!
//! - `write` copies into the stream's buffer (up to 256 KiB ahead of the engine's own 4 MiB
//!   send buffer) and waits when both are full; `flush` waits until the engine holds every
//!   written byte; `shutdown` closes the sending direction (the engine's FIN follows the
//!   data) and returns once the close is handed to the engine.
//! - `read` returns 0 once the peer's FIN arrived and everything before it was read.
//! - A reset, the engine's retransmission limit or the endpoint's idle timeout end the
//!   stream: reads (after the bytes already received) and writes fail with
//!   `ConnectionReset`, `TimedOut` or `ConnectionAborted`.
//! - Dropping a stream closes it gracefully (its written bytes are still delivered, then a
//!   FIN); dropping a [`Listener`] refuses new connections with a reset and leaves accepted
//!   streams running.
//!
//! Design: `docs/RUNTIME.md`, "Byte streams".
//!
//! # Example: echo 1 MB over loopback
//!
//! ```
//! # fn main() -> Result<(), roam_net::NetError> {
//! use roam_net::stream::{Listener, Stream, StreamConfig};
//! use roam_net::LocalSpec;
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! rt.block_on(async {
//!     let local = LocalSpec::addr("127.0.0.1:0".parse().unwrap());
//!     let mut listener = Listener::bind(&[local], StreamConfig::default())?;
//!     let addr = listener.local_addr(0).expect("bound");
//!     // The server reads everything, then sends it back and closes.
//!     let echo = tokio::spawn(async move {
//!         let mut s = listener.accept().await?;
//!         let mut got = Vec::new();
//!         s.read_to_end(&mut got).await?;
//!         s.write_all(&got).await?;
//!         s.shutdown().await?;
//!         Ok::<_, std::io::Error>(s.stats())
//!     });
//!     let data: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
//!     let mut s = Stream::connect(addr, StreamConfig::default()).await?;
//!     s.write_all(&data).await?;
//!     s.shutdown().await?;
//!     let mut back = Vec::new();
//!     s.read_to_end(&mut back).await?;
//!     assert_eq!(back, data);
//!     let server = echo.await.expect("echo task").expect("echo");
//!     assert_eq!(server.bytes_received, data.len() as u64);
//!     Ok::<_, roam_net::NetError>(())
//! })?;
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use roam_proto::cc::CcKind;
use roam_proto::endpoint::{EndpointConfig, NoAcceptor, PathAddrs, PathId};
use roam_proto::tcp::{self, TcpAcceptor};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{mpsc, Notify};

use crate::engines::{tcp_config, tcp_connect};
use crate::stream_task::{lock, run, AcceptQueue, StreamState, TX_LIMIT};
use crate::{Driver, LocalSpec, NetError};

/// How streams are opened and accepted.
#[derive(Debug, Clone)]
pub struct StreamConfig {
    /// The congestion controller of the streams' sending directions.
    pub cc: CcKind,
    /// [`Stream::connect`] fails with `TimedOut` when the handshake has not completed by
    /// then.
    pub connect_timeout: Duration,
    /// Accepted connections a [`Listener`] holds for [`Listener::accept`]; beyond it new
    /// ones are reset.
    pub backlog: usize,
    /// The endpoint's limits (connections, per peer, memory, idle timeout).
    pub endpoint: EndpointConfig,
    /// The local address a connecting stream binds (port 0: the OS picks one); `None`: the
    /// unspecified address of the server's family.
    pub local: Option<LocalSpec>,
}

impl Default for StreamConfig {
    fn default() -> Self {
        StreamConfig {
            cc: CcKind::NewReno,
            connect_timeout: Duration::from_secs(10),
            backlog: 128,
            endpoint: EndpointConfig::default(),
            local: None,
        }
    }
}

/// A snapshot of a stream's progress ([`Stream::stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamStats {
    /// Bytes the application wrote.
    pub bytes_written: u64,
    /// Of those, bytes the peer acknowledged.
    pub bytes_acked: u64,
    /// Bytes received in order (taken from the engine; some may not be read yet).
    pub bytes_received: u64,
    /// Bytes the application read.
    pub bytes_read: u64,
    /// Datagrams the connection sent.
    pub datagrams_sent: u64,
    /// Datagrams it received and decoded.
    pub datagrams_received: u64,
    /// Data segments sent again.
    pub retransmitted_segments: u64,
    /// The congestion window (bytes).
    pub cwnd: u64,
    /// The smoothed round-trip time, once measured.
    pub srtt: Option<Duration>,
    /// The engine's connection state.
    pub state: tcp::State,
}

impl Default for StreamStats {
    fn default() -> Self {
        StreamStats {
            bytes_written: 0,
            bytes_acked: 0,
            bytes_received: 0,
            bytes_read: 0,
            datagrams_sent: 0,
            datagrams_received: 0,
            retransmitted_segments: 0,
            cwnd: 0,
            srtt: None,
            state: tcp::State::SynSent,
        }
    }
}

/// Accepts byte streams on one or more local addresses. See the module docs.
pub struct Listener {
    accepted: mpsc::Receiver<Stream>,
    locals: Vec<Option<SocketAddr>>,
    wake: Arc<Notify>,
}

impl Listener {
    /// Binds `locals` and starts accepting TCP-like connections (SYN cookies: no state is
    /// kept before the client proved its address). Must be called inside a tokio runtime.
    pub fn bind(locals: &[LocalSpec], config: StreamConfig) -> Result<Listener, NetError> {
        let acceptor = TcpAcceptor::new(Arc::new(tcp_config()), config.cc)?;
        let driver = Driver::bind(locals, config.endpoint.clone(), acceptor)?;
        let (tx, accepted) = mpsc::channel(config.backlog.max(1));
        let listener = Listener {
            accepted,
            locals: (0..driver.locals()).map(|i| driver.local_addr(i)).collect(),
            wake: driver.waker(),
        };
        tokio::spawn(run(driver, HashMap::new(), Some(AcceptQueue { tx })));
        Ok(listener)
    }

    /// The bound address of local `index` (with the port the OS chose).
    pub fn local_addr(&self, index: usize) -> Option<SocketAddr> {
        self.locals.get(index).copied().flatten()
    }

    /// The next connection whose handshake completed.
    pub async fn accept(&mut self) -> io::Result<Stream> {
        self.accepted
            .recv()
            .await
            .ok_or_else(|| io::Error::other("the listener's task ended"))
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.accepted.close();
        self.wake.notify_one();
    }
}

/// One byte stream (either end). See the module docs.
pub struct Stream {
    state: Arc<Mutex<StreamState>>,
    wake: Arc<Notify>,
    peer: SocketAddr,
    local: Option<SocketAddr>,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("peer", &self.peer)
            .field("local", &self.local)
            .finish_non_exhaustive()
    }
}

impl Stream {
    pub(crate) fn new(
        state: Arc<Mutex<StreamState>>,
        wake: Arc<Notify>,
        peer: SocketAddr,
        local: Option<SocketAddr>,
    ) -> Self {
        Stream {
            state,
            wake,
            peer,
            local,
        }
    }

    /// Opens a stream to `server` (a [`Listener`]) from `config.local`, with its own socket
    /// and task. Fails with an [`io::Error`] ([`NetError::Io`]) of kind `TimedOut` when the
    /// handshake does not complete within `config.connect_timeout` (nothing listening there
    /// looks the same: the engine hears nothing, the socket reports no ICMP error),
    /// `ConnectionReset` when the server resets it. Must be called inside a tokio runtime.
    pub async fn connect(server: SocketAddr, config: StreamConfig) -> Result<Stream, NetError> {
        let local = config.local.clone().unwrap_or_else(|| {
            let any: SocketAddr = if server.is_ipv4() {
                (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
            } else {
                (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
            };
            LocalSpec::addr(any)
        });
        let mut driver = Driver::bind(
            &[local],
            config.endpoint.clone(),
            NoAcceptor::<tcp::Connection>::default(),
        )?;
        let now = driver.now();
        let conn = tcp_connect(config.cc, now, None)?;
        let path = PathAddrs {
            path: PathId::PRIMARY,
            local: 0,
            remote: server,
        };
        let h = driver.endpoint().insert(now, conn, &[path])?;
        let state = StreamState::shared(false);
        let stream = Stream::new(state.clone(), driver.waker(), server, driver.local_addr(0));
        tokio::spawn(run(driver, HashMap::from([(h, state)]), None));
        let handshake = std::future::poll_fn(|cx| {
            let mut s = lock(&stream.state);
            if let Some(e) = s.io_error() {
                return Poll::Ready(Err(e));
            }
            if s.connected {
                return Poll::Ready(Ok(()));
            }
            s.write_waker = Some(cx.waker().clone());
            Poll::Pending
        });
        match tokio::time::timeout(config.connect_timeout, handshake).await {
            Ok(Ok(())) => Ok(stream),
            Ok(Err(e)) => Err(NetError::Io(io::Error::new(
                e.kind(),
                format!("cannot connect to {server}: {e}"),
            ))),
            // Dropping the stream aborts the half-open connection.
            Err(_) => Err(NetError::Io(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "cannot connect to {server}: no answer within {:.1} s",
                    config.connect_timeout.as_secs_f64()
                ),
            ))),
        }
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> SocketAddr {
        self.peer
    }

    /// The local address the stream uses.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.local
    }

    /// A snapshot of the stream's progress (as of the task's last turn; the application's
    /// own byte counts exactly).
    pub fn stats(&self) -> StreamStats {
        lock(&self.state).stats
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let mut s = lock(&self.state);
        let avail = s.rx.len() - s.rx_pos;
        if avail > 0 {
            let n = avail.min(buf.remaining());
            let from = s.rx_pos;
            buf.put_slice(&s.rx[from..from + n]);
            s.rx_pos += n;
            s.stats.bytes_read += n as u64;
            if s.rx_blocked {
                // The task left bytes in the engine: there is room again.
                self.wake.notify_one();
            }
            return Poll::Ready(Ok(()));
        }
        if !s.rx_blocked {
            if s.eof {
                return Poll::Ready(Ok(()));
            }
            if let Some(e) = s.io_error() {
                return Poll::Ready(Err(e));
            }
        }
        s.read_waker = Some(cx.waker().clone());
        self.wake.notify_one();
        Poll::Pending
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut s = lock(&self.state);
        if let Some(e) = s.io_error() {
            return Poll::Ready(Err(e));
        }
        if s.shutdown {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the stream was shut down",
            )));
        }
        if s.gone {
            return Poll::Ready(Err(gone_error()));
        }
        let room = TX_LIMIT.saturating_sub(s.tx.len());
        if room == 0 {
            s.write_waker = Some(cx.waker().clone());
            self.wake.notify_one();
            return Poll::Pending;
        }
        let n = room.min(data.len());
        s.tx.extend_from_slice(&data[..n]);
        s.stats.bytes_written += n as u64;
        self.wake.notify_one();
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut s = lock(&self.state);
        if let Some(e) = s.io_error() {
            return Poll::Ready(Err(e));
        }
        if s.tx.is_empty() {
            return Poll::Ready(Ok(()));
        }
        if s.gone {
            return Poll::Ready(Err(gone_error()));
        }
        s.write_waker = Some(cx.waker().clone());
        self.wake.notify_one();
        Poll::Pending
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut s = lock(&self.state);
        if s.closed {
            return Poll::Ready(Ok(()));
        }
        if let Some(e) = s.io_error() {
            return Poll::Ready(Err(e));
        }
        if s.gone {
            return Poll::Ready(Err(gone_error()));
        }
        s.shutdown = true;
        s.write_waker = Some(cx.waker().clone());
        self.wake.notify_one();
        Poll::Pending
    }
}

/// Writing to a stream whose connection ended.
fn gone_error() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the connection ended")
}

impl Drop for Stream {
    fn drop(&mut self) {
        let mut s = lock(&self.state);
        s.dropped = true;
        s.shutdown = true;
        s.read_waker = None;
        s.write_waker = None;
        self.wake.notify_one();
    }
}
