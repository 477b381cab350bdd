//! A server: a directory served over RCP to every client, on one or more local addresses.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use roam_proto::cc::CcKind;
use roam_proto::endpoint::{EndpointConfig, EndpointEvent, Handle};
use roam_proto::tcp;

use crate::{DirStore, Driver, LocalSpec, NetConn, NetError, ServerAcceptor};

/// How often an idle server wakes up (it sleeps until a datagram or deadline otherwise).
const IDLE_WAKE: Duration = Duration::from_secs(1);

/// Serves a directory. See the crate docs for an example.
pub struct Server {
    driver: Driver<ServerAcceptor>,
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
        let driver = Driver::bind(locals, config, ServerAcceptor::new(store, cc))?;
        Ok(Server { driver })
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
        let mut sinks: Vec<Handle> = Vec::new();
        let mut scratch = Vec::new();
        loop {
            self.step().await;
            let ep = self.driver.endpoint();
            while let Some(ev) = ep.poll_event() {
                match ev {
                    EndpointEvent::Accepted(h) => {
                        if matches!(ep.connection(h), Some(NetConn::Tcp(_))) {
                            sinks.push(h);
                        }
                    }
                    EndpointEvent::Removed { handle, reason, .. } => {
                        sinks.retain(|h| *h != handle);
                        tracing::debug!(?handle, ?reason, "connection removed");
                    }
                }
            }
            for h in &sinks {
                if let Some(NetConn::Tcp(c)) = ep.connection_mut(*h) {
                    scratch.clear();
                    c.read(&mut scratch, usize::MAX);
                    while let Some(ev) = c.poll_event() {
                        if ev == tcp::Event::Eof {
                            c.close();
                        }
                    }
                }
            }
        }
    }

    /// One turn of the server, for hosts that run their own applications on its
    /// connections (they poll the endpoint's events themselves).
    pub async fn step(&mut self) {
        self.driver.step(IDLE_WAKE).await;
    }
}
