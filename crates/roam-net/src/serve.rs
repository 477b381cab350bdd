//! A server: a directory served over RCP to every client, on one or more local addresses.
//!
//! The RCP sender never blocks on the disk: it asks for byte ranges
//! ([`RcpSender::poll_read`](roam_proto::rcp::RcpSender::poll_read)), the server reads them on
//! tokio's blocking pool ([`DirStore::read_blocking`]) and supplies them when done.
//!
//! A TCP-like connection starts with a request ([`crate::tcp_request`]): `get` streams the
//! object from a [`ReplySource`] (positioned reads as segments are encoded), `discard` reads
//! and drops everything (`roam perf`).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use roam_proto::cc::CcKind;
use roam_proto::endpoint::{EndpointConfig, EndpointEvent, Handle, PathId};
use roam_proto::rcp::ObjectStore;
use roam_proto::tcp;
use tokio::sync::{mpsc, Notify};

use crate::store::{META_PREFIX, TREE_PREFIX};
use crate::tcp_request::{encode_reply, ReplySource, RequestError, TcpRequest};
use crate::{DirStore, Driver, LinkTable, LocalSpec, NetConn, NetError, ServerAcceptor};

/// How often an idle server wakes up (it sleeps until a datagram or deadline otherwise).
const IDLE_WAKE: Duration = Duration::from_secs(1);

/// A completed host read: (connection, offset, bytes).
type ReadDone = (Handle, u64, Vec<u8>);

/// A TCP `get` whose object was looked up off the driver's task: (connection, name, length
/// if it exists, a synthesised object's bytes).
type Prepared = (Handle, Vec<u8>, Option<u64>, Option<Vec<u8>>);

/// Where a TCP-like connection of the server stands.
#[derive(Debug)]
enum TcpServe {
    /// Reading the request (the bytes so far).
    Request(Vec<u8>),
    /// The object is being looked up.
    Preparing,
    /// Streaming a reply of `total` stream bytes, `pushed` made available so far.
    Streaming { total: u64, pushed: u64 },
    /// Reading and dropping everything (`roam perf`), or finished: the server closes its
    /// side when the client has.
    Sink,
}

/// Serves a directory. See the crate docs for an example.
pub struct Server {
    driver: Driver<ServerAcceptor>,
    store: Arc<DirStore>,
    /// Accepted connections: RCP senders (served) and TCP-like ones (discard sinks).
    conns: Vec<Handle>,
    reads_tx: mpsc::UnboundedSender<ReadDone>,
    reads_rx: mpsc::UnboundedReceiver<ReadDone>,
    /// TCP-like connections' application state.
    tcp: HashMap<Handle, TcpServe>,
    prepared_tx: mpsc::UnboundedSender<Prepared>,
    prepared_rx: mpsc::UnboundedReceiver<Prepared>,
    /// Facts about the server's local links, handed to the TCP-like connections it accepts.
    links: LinkTable,
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
        let driver = Driver::bind(locals, config, crate::engines::server_acceptor(shared, cc)?)?;
        let (reads_tx, reads_rx) = mpsc::unbounded_channel();
        let (prepared_tx, prepared_rx) = mpsc::unbounded_channel();
        Ok(Server {
            tcp: HashMap::new(),
            links: LinkTable::new(),
            prepared_tx,
            prepared_rx,
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

    /// Facts about the local links (by address): each TCP-like connection accepted on one
    /// gets them (`set_link_info`), so its sender's controller can use them. RCP senders
    /// are driven by their receivers and take none.
    pub fn set_links(&mut self, links: LinkTable) {
        self.links = links;
    }

    /// The driver (counters, endpoint statistics).
    pub fn driver(&mut self) -> &mut Driver<ServerAcceptor> {
        &mut self.driver
    }

    /// Serves until the task is dropped or aborted.
    ///
    /// RCP connections serve objects; TCP-like connections serve an object or are a
    /// discard sink (what `roam perf` measures), as their request says.
    pub async fn run(mut self) -> Result<(), NetError> {
        loop {
            self.step().await;
            self.serve_connections();
            // An RCP sender serving pulls holds one pulled segment at a time (`host_reads`):
            // the segment just supplied must leave before the sender asks for the next read.
            // Without this second round the next read waited for the next datagram or timer
            // (an R²CP pipe, all pulls, then crawled at one segment per receiver RTO).
            self.driver.flush().await;
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
    /// ask for, and serves the TCP-like connections.
    pub fn serve_connections(&mut self) {
        let now = self.driver.now();
        let local_addrs: Vec<Option<SocketAddr>> = (0..self.driver.locals())
            .map(|i| self.driver.local_addr(i))
            .collect();
        let ep = self.driver.endpoint();
        while let Some(ev) = ep.poll_event() {
            match ev {
                EndpointEvent::Accepted(h) => {
                    self.conns.push(h);
                    let link = ep
                        .path(h, PathId::PRIMARY)
                        .and_then(|p| local_addrs.get(p.local).copied().flatten())
                        .and_then(|a| self.links.get(a.ip()));
                    if let (Some(info), Some(NetConn::Tcp(c))) = (link, ep.connection_mut(h)) {
                        // Stated facts replace the estimate (issue 30).
                        c.set_facts_source(roam_proto::tcp::Facts::Oracle);
                        c.set_link_info(now, info);
                    }
                }
                EndpointEvent::Removed { handle, reason, .. } => {
                    self.conns.retain(|h| *h != handle);
                    self.tcp.remove(&handle);
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
                    let state = self
                        .tcp
                        .entry(h)
                        .or_insert_with(|| TcpServe::Request(Vec::new()));
                    let mut eof = false;
                    while let Some(ev) = c.poll_event() {
                        eof |= ev == tcp::Event::Eof;
                    }
                    sink.clear();
                    c.read(&mut sink, usize::MAX);
                    if let TcpServe::Request(head) = state {
                        head.extend_from_slice(&sink);
                        match TcpRequest::decode(head) {
                            Ok((TcpRequest::Discard, _)) => *state = TcpServe::Sink,
                            Ok((TcpRequest::Get(name), _)) => {
                                *state = TcpServe::Preparing;
                                prepare(&self.store, &self.prepared_tx, &self.waker, h, name);
                            }
                            Err(RequestError::Incomplete) if !eof => {}
                            Err(_) => {
                                // Not a request (or cut short): close, send nothing.
                                c.close();
                                *state = TcpServe::Sink;
                            }
                        }
                    }
                    if let TcpServe::Streaming { total, pushed } = state {
                        *pushed += c.push(*total - *pushed);
                        if *pushed >= *total {
                            c.close();
                            *state = TcpServe::Sink;
                        }
                    }
                    if eof && matches!(state, TcpServe::Sink) {
                        c.close();
                    }
                }
                _ => {}
            }
        }
        while let Ok((h, name, len, bytes)) = self.prepared_rx.try_recv() {
            let Some(NetConn::Tcp(c)) = ep.connection_mut(h) else {
                continue;
            };
            let state = match len {
                Some(len) => {
                    let source = match bytes {
                        Some(b) => ReplySource::synthesised(b),
                        None => ReplySource::new(self.store.clone(), name, len),
                    };
                    if c.set_source(Box::new(source)) {
                        let total = ReplySource::stream_len(len);
                        let pushed = c.push(total);
                        TcpServe::Streaming { total, pushed }
                    } else {
                        c.close();
                        TcpServe::Sink
                    }
                }
                None => {
                    c.write(&encode_reply(None));
                    c.close();
                    TcpServe::Sink
                }
            };
            self.tcp.insert(h, state);
        }
    }
}

/// Looks up the object a TCP `get` names on the blocking pool (a metadata object waits a
/// little for the digest and otherwise says "hashing"; a tree object may need the file read),
/// then hands it back to the driver's task.
fn prepare(
    store: &Arc<DirStore>,
    tx: &mpsc::UnboundedSender<Prepared>,
    wake: &Arc<Notify>,
    h: Handle,
    name: Vec<u8>,
) {
    let (store, tx, wake) = (store.clone(), tx.clone(), wake.clone());
    tokio::task::spawn_blocking(move || {
        let synthesised = if name.starts_with(META_PREFIX.as_bytes())
            || name.starts_with(TREE_PREFIX.as_bytes())
        {
            store.synthesised(&name)
        } else {
            None
        };
        let len = match &synthesised {
            Some(b) => Some(b.len() as u64),
            None if name.starts_with(b".roam-") && !name.starts_with(b".roam-perf/") => None,
            None => store.object_len(&name),
        };
        let _ = tx.send((h, name, len, synthesised));
        wake.notify_one();
    });
}
