//! Single-path RCP: one connection at a time, from one local address to one server; when it
//! stops delivering the fetch continues on a new connection from another local address or
//! server, asking only for the bytes not yet received (see `docs/RUNTIME.md`, "Mobility").

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use roam_proto::endpoint::{EndpointConfig, Handle, NoAcceptor, PathAddrs, PathId};
use roam_proto::loss_cause::Scheme as LossScheme;
use roam_proto::rcp::{RcpConfig, RcpEvent, RcpReceiver};
use roam_wire::ConnId;

use super::{FetchPlan, Progress, Sink};
use crate::pipe_meter::{PipeMeter, PipeProgress};
use crate::{random_u64, Clock, Driver, NetConn, NetError};

/// Counts the bytes and checks them against the generated pattern.
struct CountSink {
    bytes: u64,
    wrong: u64,
}

impl Sink for CountSink {
    fn put(&mut self, bytes: &[u8]) -> Result<(), NetError> {
        self.wrong += crate::pattern::mismatches(bytes, self.bytes);
        self.bytes += bytes.len() as u64;
        Ok(())
    }

    fn restart(&mut self) -> Result<(), NetError> {
        (self.bytes, self.wrong) = (0, 0);
        Ok(())
    }
}

/// Receives `bytes` of a generated object (or receives until `duration` has passed) from
/// `plan.servers[0]` over `plan.vias[0]`, checking every byte against the pattern; returns
/// (bytes, seconds).
pub async fn receive_generated(
    plan: &FetchPlan,
    bytes: u64,
    duration: Option<Duration>,
) -> Result<(u64, f64), NetError> {
    let mut s = Session::new(plan, |_: &Progress| {}, duration)?;
    let started = s.started;
    let name = format!("{}{bytes}", crate::store::PERF_PREFIX);
    let mut sink = CountSink { bytes: 0, wrong: 0 };
    let got = s.receive(&name, 0, bytes, &mut sink).await?;
    if sink.wrong > 0 {
        return Err(NetError::Integrity {
            name,
            reason: format!("{} bytes differ from the pattern", sink.wrong),
        });
    }
    Ok((got, started.elapsed().as_secs_f64()))
}

/// The rotation over local addresses and servers.
struct Route {
    via: usize,
    server: usize,
    switches: u32,
    attempts: usize,
    /// Servers that reset a request for this object (they do not hold it).
    refused: Vec<bool>,
    per_path: Vec<(SocketAddr, SocketAddr, u64)>,
    meter: PipeMeter,
}

impl Route {
    /// Every pair's bytes so far (summed over its connections) and rate; `current` is open.
    fn pipes(&mut self, current: (SocketAddr, SocketAddr), now: Instant) -> Vec<PipeProgress> {
        let mut sums: Vec<(SocketAddr, SocketAddr, u64)> = Vec::new();
        for &(v, s, b) in &self.per_path {
            match sums.iter_mut().find(|x| (x.0, x.1) == (v, s)) {
                Some(x) => x.2 += b,
                None => sums.push((v, s, b)),
            }
        }
        for (v, s, b) in sums {
            self.meter.set(v, s, b, (v, s) == current);
        }
        self.meter.tick(now);
        self.meter.snapshot()
    }
}

pub(super) struct Session<'a, F> {
    plan: &'a FetchPlan,
    driver: Driver<NoAcceptor<NetConn>>,
    route: Route,
    progress: F,
    started: Instant,
    /// Stop receiving at this instant (a timed `roam perf`).
    deadline: Option<Instant>,
    /// When the last byte arrived (or the fetch started).
    last_byte: Instant,
    /// Some connection was established (the server is there; later silences are outages).
    ever_connected: bool,
    /// Connections abandoned since the last byte (the backoff's exponent).
    failures: u32,
}

impl<'a, F: FnMut(&Progress)> Session<'a, F> {
    /// Binds the plan's local addresses; a timed `roam perf` stops receiving at `deadline`.
    pub(super) fn new(
        plan: &'a FetchPlan,
        progress: F,
        deadline: Option<Duration>,
    ) -> Result<Self, NetError> {
        let driver = Driver::bind(&plan.vias, EndpointConfig::default(), NoAcceptor::default())?;
        let started = Clock::wall();
        Ok(Session {
            plan,
            driver,
            route: Route {
                via: 0,
                server: 0,
                switches: 0,
                attempts: 0,
                refused: vec![false; plan.servers.len()],
                per_path: Vec::new(),
                meter: PipeMeter::default(),
            },
            progress,
            started,
            deadline: deadline.map(|d| started + d),
            last_byte: started,
            ever_connected: false,
            failures: 0,
        })
    }
}

impl<F: FnMut(&Progress)> Session<'_, F> {
    /// Between the metadata and the object: forgets the metadata's per-path counts.
    pub(super) fn start_object(&mut self) {
        self.route.per_path.clear();
    }

    /// Hands `progress` to the progress callback.
    pub(super) fn show(&mut self, progress: &Progress) {
        (self.progress)(progress);
    }

    /// Switches and bytes per (local address, server).
    pub(super) fn outcome(self) -> (u32, Vec<(SocketAddr, SocketAddr, u64)>) {
        (self.route.switches, self.route.per_path)
    }
}

/// Why a connection was abandoned.
enum Abandon {
    /// The local address reported an error or delivered nothing.
    Local,
    /// The server reset, failed or stopped answering.
    Server,
}

impl<F: FnMut(&Progress)> Session<'_, F> {
    /// Receives `object` bytes `from .. limit` (to its end if shorter) into `sink`, switching
    /// connections as needed; returns `from` plus the bytes received.
    pub(super) async fn receive<S: Sink>(
        &mut self,
        object: &str,
        from: u64,
        limit: u64,
        sink: &mut S,
    ) -> Result<u64, NetError> {
        let mut got = from;
        let mut total: Option<u64> = None;
        let mut chunk = Vec::new();
        loop {
            let (h, via_addr, server) = self.open(object, got, limit)?;
            let mut last_progress = Clock::wall();
            // DATA received so far on this connection: any arrival is progress, not only the
            // in-order bytes read (behind a deep queue a lost segment's repair holds in-order
            // delivery back for many seconds while the path delivers at full rate; counting
            // only what is read abandoned such connections — measured in the test bed's
            // deep-buffer case: 14.4 MB on the wire for a 10 MB file; docs/EMU.md).
            let mut arrived = 0u64;
            let mut connected = false;
            let outcome = loop {
                self.driver.step(Duration::from_millis(50)).await;
                let ep = self.driver.endpoint();
                let Some(NetConn::RcpReceiver(r)) = ep.connection_mut(h) else {
                    break Abandon::Server;
                };
                chunk.clear();
                let n = r.read(&mut chunk, usize::MAX) as u64;
                let data = r.stats().data_received;
                if data > arrived {
                    arrived = data;
                    last_progress = Clock::wall();
                }
                let mut ended = None;
                while let Some(ev) = r.poll_event() {
                    match ev {
                        RcpEvent::Connected { object_len } => {
                            connected = true;
                            self.ever_connected = true;
                            last_progress = Clock::wall();
                            if let Some(len) = object_len {
                                total = Some(len.min(limit));
                            }
                        }
                        RcpEvent::Eof | RcpEvent::Closed => ended = Some(true),
                        RcpEvent::Reset => {
                            self.route.refused[self.route.server] = true;
                            ended = Some(false);
                        }
                        RcpEvent::Failed | RcpEvent::TimedOut => ended = Some(false),
                    }
                }
                if n > 0 {
                    sink.supplied(got, got + n, server);
                    sink.put(&chunk)?;
                    got += n;
                    last_progress = Clock::wall();
                    (self.last_byte, self.failures) = (last_progress, 0);
                    if let Some(p) = self.route.per_path.last_mut() {
                        p.2 += n;
                    }
                    let pipes = self.route.pipes((via_addr, server), Clock::wall());
                    (self.progress)(&Progress {
                        bytes: got,
                        total,
                        via: via_addr,
                        server,
                        switches: self.route.switches,
                        pipes,
                        waiting: None,
                        server_hashing: None,
                    });
                }
                let timed_out = self.deadline.is_some_and(|d| Clock::wall() >= d);
                if total.is_some_and(|t| got >= t) || ended == Some(true) || timed_out {
                    tracing::debug!(stats = ?r.stats(), pipe = ?r.pipe().stats(), "transfer done");
                    // Send the FIN the receiver queued, then forget the connection.
                    self.driver.flush().await;
                    self.driver.endpoint().remove(h);
                    return Ok(got);
                }
                if ended == Some(false) {
                    break if connected {
                        Abandon::Local
                    } else {
                        Abandon::Server
                    };
                }
                if self.driver.local_error(self.route.via).is_some() {
                    break Abandon::Local;
                }
                if last_progress.elapsed() >= self.plan.stall {
                    break if connected {
                        Abandon::Local
                    } else {
                        Abandon::Server
                    };
                }
            };
            self.driver.endpoint().remove(h);
            self.switch(outcome)?;
            self.back_off(got, total).await;
        }
    }

    /// Opens a receiver for `object` bytes `from .. limit` on the current route.
    fn open(
        &mut self,
        object: &str,
        from: u64,
        limit: u64,
    ) -> Result<(Handle, SocketAddr, SocketAddr), NetError> {
        self.route.attempts += 1;
        let via = self.route.via;
        let server = self.plan.servers[self.route.server];
        let via_addr = self
            .driver
            .local_addr(via)
            .unwrap_or(self.plan.vias[via].addr);
        let now = self.driver.now();
        let stated = self.plan.links.get(via_addr.ip());
        // Issue 30: without stated facts (`--link`) the receiver estimates which holes were
        // wireless (Spike) and answers them with per-hole ELN.
        let config = match stated {
            Some(_) => self.plan.rcp.clone(),
            None => RcpConfig {
                eln: true,
                ..self.plan.rcp.clone()
            },
        };
        let mut r = RcpReceiver::connect(
            Arc::new(config),
            self.plan.cc,
            ConnId(random_u64()?),
            object.as_bytes(),
            (from, limit),
            now,
        )?;
        match stated {
            Some(info) => r.set_link_info(now, &info),
            None => r.set_loss_estimator(Some(LossScheme::Spike)),
        }
        let path = PathAddrs {
            path: PathId::PRIMARY,
            local: via,
            remote: server,
        };
        let h = self
            .driver
            .endpoint()
            .insert(now, NetConn::RcpReceiver(Box::new(r)), &[path])?;
        self.route.per_path.push((via_addr, server, 0));
        tracing::debug!(%via_addr, %server, from, "opened");
        Ok((h, via_addr, server))
    }

    /// Waits before the next connection (`super::back_off`), telling the progress display
    /// that the fetch is waiting while nothing has arrived for longer than the stall.
    async fn back_off(&mut self, got: u64, total: Option<u64>) {
        let current = (
            self.plan.vias[self.route.via].addr,
            self.plan.servers[self.route.server],
        );
        let (route, progress) = (&mut self.route, &mut self.progress);
        let since = (self.last_byte, self.plan.stall);
        super::back_off(&mut self.driver, self.failures, since, |idle| {
            let pipes = route.pipes(current, Clock::wall());
            progress(&Progress {
                bytes: got,
                total,
                via: current.0,
                server: current.1,
                switches: route.switches,
                pipes,
                waiting: Some(idle),
                server_hashing: None,
            });
        })
        .await;
    }

    /// Moves to another local address (if the local side failed and there is one) or the
    /// next server, or gives up: when every server refused the object, when no connection
    /// was ever established after `max_attempts` tries, or when nothing arrived for
    /// `give_up_after`.
    fn switch(&mut self, why: Abandon) -> Result<(), NetError> {
        self.route.switches += 1;
        self.failures = self.failures.saturating_add(1);
        if self.route.refused.iter().all(|r| *r) {
            return Err(NetError::Unreachable {
                name: self.plan.name.clone(),
                reason: "every server refused it (no such object, or a reset)".into(),
            });
        }
        let paths = format!(
            "{} local address(es) and {} server(s)",
            self.plan.vias.len(),
            self.plan.servers.len()
        );
        if !self.ever_connected && self.route.attempts >= self.plan.max_attempts {
            return Err(NetError::Unreachable {
                name: self.plan.name.clone(),
                reason: format!(
                    "no answer after {} attempts over {paths}",
                    self.route.attempts
                ),
            });
        }
        let idle = self.last_byte.elapsed();
        if self.ever_connected && idle >= self.plan.give_up_after {
            return Err(NetError::Unreachable {
                name: self.plan.name.clone(),
                reason: format!(
                    "no data for {:.0} s over {paths} (gave up after {:.0} s)",
                    idle.as_secs_f64(),
                    self.plan.give_up_after.as_secs_f64()
                ),
            });
        }
        let (vias, servers) = (self.plan.vias.len(), self.plan.servers.len());
        match why {
            Abandon::Local if vias > 1 => self.route.via = (self.route.via + 1) % vias,
            _ if servers > 1 => {
                self.route.server = (self.route.server + 1) % servers;
                // Skip the servers that refused the object.
                for _ in 0..servers {
                    if !self.route.refused[self.route.server] {
                        break;
                    }
                    self.route.server = (self.route.server + 1) % servers;
                }
            }
            _ => self.route.via = (self.route.via + 1) % vias,
        }
        Ok(())
    }
}
