//! A server: a directory served over RCP to every client, on one or more local addresses.
//!
//! The RCP sender never blocks on the disk: it asks for byte ranges
//! ([`RcpSender::poll_read`](roam_proto::rcp::RcpSender::poll_read)), the server reads them on
//! tokio's blocking pool ([`DirStore::read_blocking`]) and supplies them when done.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use roam_proto::cc::CcKind;
use roam_proto::endpoint::{EndpointConfig, EndpointEvent, Handle};
use roam_proto::rcp::ObjectStore;
use roam_proto::tcp;
use tokio::sync::{mpsc, Notify};

use crate::{DirStore, Driver, LocalSpec, NetConn, NetError, ServerAcceptor};

/// How often an idle server wakes up (it sleeps until a datagram or deadline otherwise).
const IDLE_WAKE: Duration = Duration::from_secs(1);

/// A completed host read: (connection, offset, bytes).
type ReadDone = (Handle, u64, Vec<u8>);

/// Serves a directory. See the crate docs for an example.
pub struct Server {
    driver: Driver<ServerAcceptor>,
    store: Arc<DirStore>,
    /// Accepted connections: RCP senders (served) and TCP-like ones (discard sinks).
    conns: Vec<Handle>,
    reads_tx: mpsc::UnboundedSender<ReadDone>,
    reads_rx: mpsc::UnboundedReceiver<ReadDone>,
    waker: Arc<Notify>,
}

impl Server {
    /// Binds `locals` and serves the files under `dir` (must be called inside a tokio
    /// runtime). Fails with a one-line error for a missing directory or an address that
    /// cannot be bound (in use, not local).
    pub fn bind(dir: &Path, locals: &[LocalSpec]) -> Result<Server, NetError> {
        Self::with_config(dir, locals, EndpointConfig::default(), CcKind::NewReno)
    }

    /// As [`Server::bind`], with the endpoint's limits and the TCP-like controller given.
    pub fn with_config(
        dir: &Path,
        locals: &[LocalSpec],
        config: EndpointConfig,
        cc: CcKind,
    ) -> Result<Server, NetError> {
        let store = Arc::new(DirStore::new(dir)?);
        let shared: Arc<dyn ObjectStore> = store.clone();
        let driver = Driver::bind(locals, config, ServerAcceptor::new(shared, cc)?)?;
        let (reads_tx, reads_rx) = mpsc::unbounded_channel();
        Ok(Server {
            waker: driver.waker(),
            driver,
            store,
            conns: Vec::new(),
            reads_tx,
            reads_rx,
        })
    }

    /// The bound address of local `index`.
    pub fn local_addr(&self, index: usize) -> Option<SocketAddr> {
        self.driver.local_addr(index)
    }

    /// The driver (counters, endpoint statistics).
    pub fn driver(&mut self) -> &mut Driver<ServerAcceptor> {
        &mut self.driver
    }

    /// Serves until the task is dropped or aborted.
    ///
    /// RCP connections serve objects; TCP-like connections are a discard sink (what
    /// `roam perf` measures): their bytes are read and dropped, and the server closes its
    /// side when the client has.
    pub async fn run(mut self) -> Result<(), NetError> {
        loop {
            self.step().await;
            self.serve_connections();
        }
    }

    /// One turn of the driver only, for hosts that run their own applications on the
    /// server's connections (they poll the endpoint's events themselves; RCP senders then
    /// need [`Server::serve_connections`]).
    pub async fn step(&mut self) {
        self.driver.step(IDLE_WAKE).await;
    }

    /// Takes the endpoint's events, supplies completed reads, starts the reads the senders
    /// ask for, and drains the TCP-like sinks.
    pub fn serve_connections(&mut self) {
        let ep = self.driver.endpoint();
        while let Some(ev) = ep.poll_event() {
            match ev {
                EndpointEvent::Accepted(h) => self.conns.push(h),
                EndpointEvent::Removed { handle, reason, .. } => {
                    self.conns.retain(|h| *h != handle);
                    tracing::debug!(?handle, ?reason, "connection removed");
                }
            }
        }
        while let Ok((h, offset, bytes)) = self.reads_rx.try_recv() {
            if let Some(NetConn::RcpSender(s)) = ep.connection_mut(h) {
                s.supply(offset, &bytes);
            }
        }
        let mut sink = Vec::new();
        for &h in &self.conns {
            match ep.connection_mut(h) {
                Some(NetConn::RcpSender(s)) => {
                    while let Some(req) = s.poll_read() {
                        let (store, tx, name) = (
                            self.store.clone(),
                            self.reads_tx.clone(),
                            s.object_name().to_vec(),
                        );
                        let wake = self.waker.clone();
                        tokio::task::spawn_blocking(move || {
                            let mut bytes = Vec::with_capacity(req.len);
                            store.read_blocking(&name, req.offset, req.len, &mut bytes);
                            let _ = tx.send((h, req.offset, bytes));
                            wake.notify_one();
                        });
                    }
                }
                Some(NetConn::Tcp(c)) => {
                    sink.clear();
                    c.read(&mut sink, usize::MAX);
                    while let Some(ev) = c.poll_event() {
                        if ev == tcp::Event::Eof {
                            c.close();
                        }
                    }
                }
                _ => {}
            }
        }
    }
}
