//! The task behind [`crate::stream`]: it owns one [`Driver`] (the sans-IO TCP-like engines
//! and their socket), and between the driver's turns moves bytes between each stream's
//! [`StreamState`] (shared with the application's [`Stream`] handle under a mutex) and its
//! [`tcp::Connection`]; a listener's task also hands accepted connections to
//! [`crate::stream::Listener::accept`] through a bounded channel.
//!
//! Handles never touch the driver: they fill and drain the shared buffers and ring the
//! driver's waker ([`Driver::waker`]), which ends the task's wait in [`Driver::step`]; the
//! task wakes the handles' tasks (their [`Waker`]s) when it moved bytes or an event came.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Waker;
use std::time::Duration;

use roam_proto::endpoint::{Acceptor, EndpointEvent, Handle, PathId, RemoveReason};
use roam_proto::tcp;
use tokio::sync::mpsc;

use crate::stream::{Stream, StreamStats};
use crate::Driver;

/// Bytes a handle's writes may hold before they reach the engine (whose own send buffer,
/// [`crate::engines::TCP_BUFFER`], holds the rest); a write beyond waits.
pub(crate) const TX_LIMIT: usize = 256 << 10;

/// Received bytes the task takes out of the engine ahead of the application's reads; beyond
/// it the bytes stay in the engine, whose receive window then closes (backpressure).
pub(crate) const RX_LIMIT: usize = 256 << 10;

/// How long the task waits at most when nothing happens (it also rechecks whether its
/// handles are gone).
const IDLE_WAKE: Duration = Duration::from_millis(250);

/// What a [`Stream`] handle and the task share.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    /// Written by the application, not yet accepted by the engine.
    pub tx: Vec<u8>,
    /// Received in order, taken from the engine; `rx[rx_pos..]` is unread.
    pub rx: Vec<u8>,
    pub rx_pos: usize,
    /// The engine holds more readable bytes than fitted into `rx`.
    pub rx_blocked: bool,
    /// The application asked to close its sending direction (or dropped the handle).
    pub shutdown: bool,
    /// The engine has the close: its FIN follows the written bytes.
    pub closed: bool,
    /// The handshake completed.
    pub connected: bool,
    /// The peer finished sending.
    pub eof: bool,
    /// The connection failed: the error's kind and message.
    pub error: Option<(io::ErrorKind, String)>,
    /// The connection left the endpoint.
    pub gone: bool,
    /// The handle was dropped: the task closes the connection and discards what arrives.
    pub dropped: bool,
    /// Bytes the engine accepted from `tx`.
    pub in_engine: u64,
    pub read_waker: Option<Waker>,
    /// Woken for writes, flushes, shutdowns and the connect.
    pub write_waker: Option<Waker>,
    pub stats: StreamStats,
}

impl StreamState {
    /// A new state; `connected` for an accepted connection.
    pub fn shared(connected: bool) -> Arc<Mutex<StreamState>> {
        Arc::new(Mutex::new(StreamState {
            connected,
            ..StreamState::default()
        }))
    }

    /// The error, as a fresh `io::Error`.
    pub fn io_error(&self) -> Option<io::Error> {
        self.error
            .as_ref()
            .map(|(kind, msg)| io::Error::new(*kind, msg.clone()))
    }

    /// Records the first failure and wakes both directions.
    pub fn fail(&mut self, kind: io::ErrorKind, msg: impl Into<String>) {
        if self.error.is_none() {
            self.error = Some((kind, msg.into()));
        }
        self.wake_all();
    }

    pub fn wake_all(&mut self) {
        if let Some(w) = self.read_waker.take() {
            w.wake();
        }
        if let Some(w) = self.write_waker.take() {
            w.wake();
        }
    }
}

/// Locks a stream's state; a panic elsewhere while it was held leaves plain buffers and
/// flags, so the state is used as it is.
pub(crate) fn lock(state: &Mutex<StreamState>) -> MutexGuard<'_, StreamState> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Moves what can move between `s` and `c`, takes `c`'s events, refreshes the statistics.
fn sync(c: &mut tcp::Connection, s: &mut StreamState) {
    // Application → engine.
    if !s.tx.is_empty() {
        let n = c.write(&s.tx);
        if n > 0 {
            s.tx.drain(..n);
            s.in_engine += n as u64;
            if let Some(w) = s.write_waker.take() {
                w.wake();
            }
        }
    }
    if s.dropped && !s.connected && !s.closed {
        // Given up before the handshake completed (a connect that timed out).
        c.abort();
        s.closed = true;
    }
    if s.shutdown && s.tx.is_empty() && !s.closed {
        c.close();
        s.closed = true;
        if let Some(w) = s.write_waker.take() {
            w.wake();
        }
    }
    // Engine → application.
    if s.rx_pos > 0 {
        s.rx.drain(..s.rx_pos);
        s.rx_pos = 0;
    }
    let room = RX_LIMIT.saturating_sub(s.rx.len());
    let n = c.read(&mut s.rx, room);
    s.stats.bytes_received += n as u64;
    if s.dropped {
        s.rx.clear();
    }
    s.rx_blocked = c.receiver().readable() > 0;
    if n > 0 {
        if let Some(w) = s.read_waker.take() {
            w.wake();
        }
    }
    while let Some(ev) = c.poll_event() {
        match ev {
            tcp::Event::Connected => {
                s.connected = true;
                s.wake_all();
            }
            tcp::Event::Eof => {
                s.eof = true;
                s.wake_all();
            }
            tcp::Event::Reset => s.fail(
                io::ErrorKind::ConnectionReset,
                "the peer reset the connection",
            ),
            tcp::Event::TimedOut => s.fail(
                io::ErrorKind::TimedOut,
                "the peer stopped answering (retransmission or handshake limit reached)",
            ),
            tcp::Event::Readable | tcp::Event::Closed => {}
        }
    }
    let stats = c.stats();
    let st = &mut s.stats;
    st.bytes_acked = stats.sender.bytes_acked.min(s.in_engine);
    st.datagrams_sent = stats.datagrams_sent;
    st.datagrams_received = stats.datagrams_received;
    st.retransmitted_segments = stats.sender.retransmitted_segments;
    st.cwnd = c.sender().cwnd();
    st.srtt = c.sender().rtt().srtt();
    st.state = c.state();
}

/// Where accepted streams go (a listener's task only).
pub(crate) struct AcceptQueue {
    pub tx: mpsc::Sender<Stream>,
}

/// Runs `driver` until every stream's connection is gone and, for a listener, the
/// [`crate::stream::Listener`] was dropped.
pub(crate) async fn run<P>(
    mut driver: Driver<P>,
    mut slots: HashMap<Handle, Arc<Mutex<StreamState>>>,
    accept: Option<AcceptQueue>,
) where
    P: Acceptor<Connection = tcp::Connection>,
{
    let waker = driver.waker();
    let mut handles = Vec::new();
    loop {
        driver.step(IDLE_WAKE).await;
        while let Some(ev) = driver.endpoint().poll_event() {
            match ev {
                EndpointEvent::Accepted(h) => {
                    let Some(path) = driver.endpoint().path(h, PathId::PRIMARY) else {
                        continue;
                    };
                    let state = StreamState::shared(true);
                    let stream = Stream::new(
                        state.clone(),
                        waker.clone(),
                        path.remote,
                        driver.local_addr(path.local),
                    );
                    let taken = accept
                        .as_ref()
                        .is_some_and(|q| q.tx.try_send(stream).is_ok());
                    if taken {
                        slots.insert(h, state);
                    } else if let Some(c) = driver.endpoint().connection_mut(h) {
                        // The backlog is full or the listener is gone: refuse with a reset.
                        c.abort();
                    }
                }
                EndpointEvent::Removed {
                    handle,
                    reason,
                    mut conn,
                } => {
                    let Some(state) = slots.remove(&handle) else {
                        continue;
                    };
                    let mut s = lock(&state);
                    sync(&mut conn, &mut s);
                    s.gone = true;
                    let finished = s.eof && s.closed;
                    if reason == RemoveReason::Expired && !finished {
                        s.fail(io::ErrorKind::TimedOut, "nothing heard from the peer");
                    } else if !s.eof {
                        s.fail(
                            io::ErrorKind::ConnectionAborted,
                            "the connection ended before the peer finished sending",
                        );
                    }
                    s.wake_all();
                }
            }
        }
        handles.clear();
        handles.extend(slots.keys().copied());
        for h in &handles {
            let (Some(state), Some(c)) = (slots.get(h), driver.endpoint().connection_mut(*h))
            else {
                continue;
            };
            sync(c, &mut lock(state));
        }
        let listening = accept.as_ref().is_some_and(|q| !q.tx.is_closed());
        if slots.is_empty() && !listening {
            break;
        }
    }
    // The last resets and FINs.
    driver.flush().await;
}
