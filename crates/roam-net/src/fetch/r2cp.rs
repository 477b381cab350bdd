//! Fetching one object over R²CP (rcp-r2cp.txt §4) when a download has more than one local
//! address or server: one [`R2cpReceiver`] per transfer (metadata, then the object), one
//! pipe per (local address, server) pair, each an ordinary RCP connection to an unchanged
//! server (§4.1.2: "No change is necessary at the RCP sender"). Pipes are removed and added
//! while the transfer runs: a local address whose socket reports an error loses its pipes and
//! its socket (re-bound later), a pipe that stalls is broken (`Removal::Break`: its
//! outstanding requests go to the other pipes), and a removed or failed pair gets a new pipe
//! after a backoff. What counts as a failure, the stall and the backoff are roam-proto's rule,
//! the one the simulator's R²CP agent follows too ([`roam_proto::r2cp::reopen`];
//! `docs/R2CP.md`, "Reopening failed pipes"). Verification and the part file are the
//! pipeline's (`fetch/mod.rs`). Design: `docs/RUNTIME.md`, "R²CP over sockets".

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use roam_proto::endpoint::{EndpointConfig, Handle, NoAcceptor, PathId};
use roam_proto::loss_cause::Scheme as LossScheme;
use roam_proto::r2cp::reopen::{PipeWatch, Reopen};
use roam_proto::r2cp::{PipeId, PipeRole, PipeSpec, PipeState, R2cpEvent, R2cpReceiver, Removal};
use roam_proto::rcp::RcpConfig;
use roam_proto::Time;
use roam_wire::ConnId;

use super::{FetchPlan, Progress, Sink};
use crate::pipe_meter::PipeMeter;
use crate::{random_u64, Clock, Driver, NetConn, NetError};

/// How often the progress callback runs while nothing is delivered (rates decay).
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// One local address of the plan.
struct Via {
    /// The driver's index of its socket, while bound.
    local: Option<usize>,
    /// Its address as first bound (the name progress reports use).
    addr: SocketAddr,
    /// When it is bound again after its socket failed (the pairs' backoff).
    reopen: Reopen,
}

/// The pipe a pair has open now.
struct Live {
    id: PipeId,
    path: PathId,
    /// Its handshake, bytes and outstanding units, for the stall rule.
    watch: PipeWatch,
}

/// One (local address, server) pair.
struct Pair {
    via: usize,
    server: usize,
    live: Option<Live>,
    /// When it gets a new pipe after its pipe failed.
    reopen: Reopen,
    /// Bytes new to the transfer that arrived through its pipes.
    bytes: u64,
}

/// A multipath download's state across its two transfers (metadata, object).
pub(super) struct Multi<'a, F> {
    plan: &'a FetchPlan,
    driver: Driver<NoAcceptor<NetConn>>,
    vias: Vec<Via>,
    pairs: Vec<Pair>,
    next_pipe: u32,
    /// Pipes removed or failed before the transfer ended.
    switches: u32,
    /// Pipes opened since the last byte arrived.
    attempts: usize,
    /// Some pipe came up during this download: the servers are there, and later silences are
    /// outages to ride out until `give_up_after`.
    ever_up: bool,
    /// Per server: pipes refused (failed before they came up, well within the stall: a
    /// reset, as for an object the server does not have) since one last came up.
    refused: Vec<u32>,
    /// The server of every pipe opened (pipe ids are never reused within a download): whose
    /// bytes the receiver's deliveries are.
    server_of: HashMap<PipeId, SocketAddr>,
    meter: PipeMeter,
    progress: F,
}

impl<F: FnMut(&Progress)> Multi<'_, F> {
    /// Between the metadata and the object: forgets the metadata's per-pair counts.
    pub(super) fn start_object(&mut self) {
        for p in &mut self.pairs {
            p.bytes = 0;
        }
        self.meter = PipeMeter::default();
        self.switches = 0;
    }

    /// Hands `progress` to the progress callback.
    pub(super) fn show(&mut self, progress: &Progress) {
        (self.progress)(progress);
    }

    /// Switches and bytes per (local address, server) pair.
    pub(super) fn outcome(self) -> (u32, Vec<(SocketAddr, SocketAddr, u64)>) {
        let per_path = self
            .pairs
            .iter()
            .map(|p| (self.vias[p.via].addr, self.plan.servers[p.server], p.bytes))
            .collect();
        (self.switches, per_path)
    }
}

impl<'a, F: FnMut(&Progress)> Multi<'a, F> {
    /// Binds every local address (a bind that fails is retried later, unless all fail).
    pub(super) fn new(plan: &'a FetchPlan, progress: F) -> Result<Self, NetError> {
        let mut driver = Driver::bind(&[], EndpointConfig::default(), NoAcceptor::default())?;
        let now = driver.now();
        let mut vias = Vec::new();
        let mut first_error = None;
        for spec in &plan.vias {
            match driver.add_local(spec) {
                Ok(i) => vias.push(Via {
                    local: Some(i),
                    addr: driver.local_addr(i).unwrap_or(spec.addr),
                    reopen: Reopen::new(),
                }),
                Err(e) => {
                    tracing::debug!(addr = %spec.addr, error = %e, "local address not usable yet");
                    let mut reopen = Reopen::new();
                    reopen.failed(now);
                    vias.push(Via {
                        local: None,
                        addr: spec.addr,
                        reopen,
                    });
                    first_error.get_or_insert(e);
                }
            }
        }
        if let (true, Some(e)) = (vias.iter().all(|v| v.local.is_none()), first_error) {
            return Err(e);
        }
        let pairs = (0..vias.len())
            .flat_map(|via| {
                (0..plan.servers.len()).map(move |server| Pair {
                    via,
                    server,
                    live: None,
                    reopen: Reopen::new(),
                    bytes: 0,
                })
            })
            .collect();
        Ok(Multi {
            plan,
            driver,
            vias,
            pairs,
            next_pipe: 1,
            switches: 0,
            attempts: 0,
            ever_up: false,
            refused: vec![0; plan.servers.len()],
            server_of: HashMap::new(),
            meter: PipeMeter::default(),
            progress,
        })
    }

    fn unreachable(&self, reason: String) -> NetError {
        NetError::Unreachable {
            name: self.plan.name.clone(),
            reason,
        }
    }

    /// Receives `object` bytes `from .. limit` (to its end if shorter) into `sink` over every
    /// pair; returns `from` plus the bytes received.
    pub(super) async fn receive<S: Sink>(
        &mut self,
        object: &str,
        from: u64,
        limit: u64,
        sink: &mut S,
    ) -> Result<u64, NetError> {
        let now = self.driver.now();
        // Issue 30: a pipe without stated facts (`--link`) estimates which of its holes were
        // wireless (Spike) and answers them with per-hole ELN, as single-path RCP does; ELN
        // changes nothing for a pipe whose holes nobody marks.
        let config = RcpConfig {
            eln: true,
            ..self.plan.rcp.clone()
        };
        let mut r = R2cpReceiver::new(
            Arc::new(config),
            self.plan.scheme,
            object.as_bytes(),
            (from, limit),
        )?;
        r.set_coupled(self.plan.coupled);
        // Which pipe delivered which bytes: the sink blames the server whose bytes fail.
        r.record_deliveries();
        let h = self
            .driver
            .endpoint()
            .insert(now, NetConn::R2cp(Box::new(r)), &[])?;
        for p in &mut self.pairs {
            p.live = None;
        }
        self.attempts = 0;
        let mut got = from;
        let mut total: Option<u64> = None;
        let mut chunk = Vec::new();
        let mut closed = Vec::new();
        let mut last_report = Clock::wall();
        let mut last_byte = last_report;
        // With every local address gone no pipe is opened, so attempts stop counting: bound
        // the wait by time too.
        let max_idle = self
            .plan
            .stall
            .saturating_mul(u32::try_from(self.plan.max_attempts).unwrap_or(u32::MAX));
        loop {
            self.maintain(h)?;
            self.driver.step(Duration::from_millis(50)).await;
            let wall = Clock::wall();
            let now = self.driver.now();
            let ep = self.driver.endpoint();
            let Some(NetConn::R2cp(r)) = ep.connection_mut(h) else {
                return Err(self.unreachable("the connection expired".into()));
            };
            chunk.clear();
            let n = r.read(&mut chunk, usize::MAX) as u64;
            for (id, start, end) in r.take_deliveries() {
                if let Some(&server) = self.server_of.get(&id) {
                    sink.supplied(start, end, server);
                }
            }
            let mut eof = false;
            closed.clear();
            while let Some(ev) = r.poll_event() {
                match ev {
                    R2cpEvent::Connected { object_len } => {
                        total = object_len.map(|l| l.min(limit));
                    }
                    R2cpEvent::PipeUp(id) => {
                        if let Some(k) = pair_index(&self.pairs, id) {
                            let p = &mut self.pairs[k];
                            if let Some(live) = p.live.as_mut() {
                                live.watch.on_up(now);
                            }
                            p.reopen.succeeded();
                            self.vias[p.via].reopen.succeeded();
                            self.refused[p.server] = 0;
                            self.ever_up = true;
                        }
                    }
                    R2cpEvent::PipeFailed(id) => {
                        if let Some(k) = pair_index(&self.pairs, id) {
                            let p = &self.pairs[k];
                            let refused = p.live.as_ref().is_some_and(|l| {
                                !l.watch.up
                                    && now.saturating_since(l.watch.opened) < self.plan.stall
                            });
                            if refused {
                                self.refused[p.server] += 1;
                            }
                        }
                        closed.push(id);
                    }
                    R2cpEvent::PipeClosed(id) => closed.push(id),
                    R2cpEvent::Eof | R2cpEvent::Closed => eof = true,
                }
            }
            if tracing::enabled!(tracing::Level::TRACE) {
                let stats = r.stats();
                for info in r.pipes() {
                    tracing::trace!(
                        pipe = ?info.id, cwnd = info.cwnd, srtt = ?info.srtt,
                        outstanding = info.outstanding, bytes = info.bytes_received,
                        rerequests = info.rerequests, timeouts = info.timeouts,
                        recoveries = info.recoveries, spurious = info.spurious_holes,
                        redundant = stats.bytes_redundant, got = got + n,
                        "pipe state"
                    );
                }
            }
            for info in r.pipes() {
                let Some(k) = pair_index(&self.pairs, info.id) else {
                    continue;
                };
                let p = &mut self.pairs[k];
                if let Some(live) = p.live.as_mut() {
                    let up = info.state != PipeState::Connecting;
                    p.bytes += live
                        .watch
                        .observe(now, info.bytes_received, info.outstanding, up);
                }
            }
            let done = eof || total.is_some_and(|t| got + n >= t);
            if !done {
                for id in closed.drain(..) {
                    // The engine deleted it (its sender reset or stopped answering).
                    if let Some(k) = pair_index(&self.pairs, id) {
                        if let Some(live) = self.pairs[k].live.take() {
                            let _ = self.driver.endpoint().remove_path(h, live.path);
                        }
                        self.schedule_retry(k, now);
                        tracing::debug!(?id, "pipe failed");
                    }
                }
            }
            if n > 0 {
                sink.put(&chunk)?;
                got += n;
                self.attempts = 0;
                last_byte = wall;
            }
            if n > 0 || wall.duration_since(last_report) >= PROGRESS_EVERY || done {
                last_report = wall;
                let idle = wall.duration_since(last_byte);
                let waiting = (idle >= self.plan.stall).then_some(idle.as_secs_f64());
                self.report(got, total, wall, waiting);
            }
            if done {
                if let Some(NetConn::R2cp(r)) = self.driver.endpoint().connection(h) {
                    tracing::debug!(stats = ?r.stats(), "transfer done");
                }
                // Send the FINs the pipes queued, then forget the connection.
                self.driver.flush().await;
                self.driver.endpoint().remove(h);
                return Ok(got);
            }
            let any_up = self
                .pairs
                .iter()
                .any(|p| p.live.as_ref().is_some_and(|l| l.watch.up));
            let idle = wall.duration_since(last_byte);
            let paths = format!(
                "{} local address(es) and {} server(s)",
                self.plan.vias.len(),
                self.plan.servers.len()
            );
            // Every server refused the object (twice each, none came up since): it is not
            // there; say so at once instead of retrying until the attempts run out.
            if !any_up && self.refused.iter().all(|r| *r >= 2) {
                self.driver.endpoint().remove(h);
                return Err(self.unreachable(
                    "every server refused it: no such object (or not a readable file)".into(),
                ));
            }
            // Once a pipe has been up, silences are outages: ride them out (pairs are tried
            // again with a backoff up to 8 s) until give_up_after without a byte.
            if self.ever_up && idle >= self.plan.give_up_after {
                self.driver.endpoint().remove(h);
                return Err(self.unreachable(format!(
                    "no data for {:.0} s over {paths} (gave up after {:.0} s)",
                    idle.as_secs_f64(),
                    self.plan.give_up_after.as_secs_f64()
                )));
            }
            if !self.ever_up
                && !any_up
                && (self.attempts >= self.plan.max_attempts || idle >= max_idle)
            {
                self.driver.endpoint().remove(h);
                return Err(self.unreachable(format!(
                    "no answer for {:.1} s after {} pipe attempts over {paths}",
                    idle.as_secs_f64(),
                    self.attempts,
                )));
            }
        }
    }

    /// Between turns: drops the pipes of local addresses whose socket failed and of pipes that
    /// stalled, re-binds local addresses and opens pipes on pairs that are due.
    fn maintain(&mut self, h: Handle) -> Result<(), NetError> {
        let now = self.driver.now();
        let stall = self.plan.stall;
        // Local addresses whose socket reported an error or that the host marked down: their
        // pipes break, the socket goes.
        for v in 0..self.vias.len() {
            let Some(i) = self.vias[v].local else {
                continue;
            };
            let marked_down = self.plan.status.is_down(self.vias[v].addr.ip());
            let error = self.driver.local_error(i);
            if marked_down || error.is_some() {
                tracing::debug!(addr = %self.vias[v].addr, ?error, marked_down, "local address failed");
                for k in 0..self.pairs.len() {
                    if self.pairs[k].via == v {
                        self.break_pipe(h, k, now);
                    }
                }
                self.driver.remove_local(i);
                let via = &mut self.vias[v];
                via.local = None;
                via.reopen.failed(now);
            }
        }
        // Stalled pipes: no handshake answer, or nothing delivered with requests outstanding.
        for k in 0..self.pairs.len() {
            let stalled = self.pairs[k]
                .live
                .as_ref()
                .is_some_and(|l| l.watch.stalled(now, stall));
            if stalled {
                tracing::debug!(pair = k, "pipe stalled");
                self.break_pipe(h, k, now);
            }
        }
        // Local addresses due for another try.
        for v in 0..self.vias.len() {
            let via = &self.vias[v];
            if via.local.is_some()
                || !via.reopen.due(now)
                || self.plan.status.is_down(via.addr.ip())
            {
                continue;
            }
            match self.driver.add_local(&self.plan.vias[v]) {
                Ok(i) => self.vias[v].local = Some(i),
                Err(e) => {
                    tracing::debug!(addr = %self.vias[v].addr, error = %e, "bind failed");
                    self.vias[v].reopen.failed(now);
                }
            }
        }
        // Pairs without a pipe, on a bound local address, due.
        for k in 0..self.pairs.len() {
            let p = &self.pairs[k];
            let Some(local) = self.vias[p.via].local else {
                continue;
            };
            if p.live.is_some() || !p.reopen.due(now) {
                continue;
            }
            let id = PipeId(self.next_pipe);
            let path = PathId(self.next_pipe);
            self.next_pipe = self.next_pipe.wrapping_add(1).max(1);
            let server = self.plan.servers[p.server];
            let spec = PipeSpec {
                id,
                conn_id: ConnId(random_u64()?),
                path,
                role: PipeRole::Primary,
                cc: self.plan.cc,
            };
            let info = self
                .driver
                .local_addr(local)
                .and_then(|a| self.plan.links.get(a.ip()));
            let ep = self.driver.endpoint();
            let Some(NetConn::R2cp(r)) = ep.connection_mut(h) else {
                return Ok(());
            };
            if r.is_complete() {
                return Ok(());
            }
            r.add_pipe(now, spec)?;
            match info {
                Some(info) => r.set_link_info(now, id, &info),
                None => r.set_loss_estimator(id, Some(LossScheme::Spike)),
            }
            if let Err(e) = ep.add_path(h, path, local, server) {
                if let Some(NetConn::R2cp(r)) = ep.connection_mut(h) {
                    r.remove_pipe(now, id, Removal::Break);
                }
                return Err(e.into());
            }
            self.attempts += 1;
            self.server_of.insert(id, server);
            tracing::debug!(via = %self.vias[self.pairs[k].via].addr, %server, ?id, "pipe opened");
            self.pairs[k].live = Some(Live {
                id,
                path,
                watch: PipeWatch::new(now),
            });
        }
        Ok(())
    }

    /// Deletes pair `k`'s pipe break-before-make (its outstanding units go to the other
    /// pipes) and schedules the pair's next try.
    fn break_pipe(&mut self, h: Handle, k: usize, now: Time) {
        let Some(live) = self.pairs[k].live.take() else {
            return;
        };
        let ep = self.driver.endpoint();
        if let Some(NetConn::R2cp(r)) = ep.connection_mut(h) {
            r.remove_pipe(now, live.id, Removal::Break);
        }
        let _ = ep.remove_path(h, live.path);
        self.schedule_retry(k, now);
    }

    /// Counts pair `k`'s pipe as lost and schedules the pair's next try (the backoff of
    /// `roam_proto::r2cp::reopen`).
    fn schedule_retry(&mut self, k: usize, now: Time) {
        self.pairs[k].reopen.failed(now);
        self.switches += 1;
    }

    /// Calls the progress callback with every pair's bytes and rate (and, while nothing has
    /// arrived for longer than the stall, for how long).
    fn report(&mut self, got: u64, total: Option<u64>, wall: Instant, waiting: Option<f64>) {
        let servers = &self.plan.servers;
        for p in &self.pairs {
            let up = p.live.as_ref().is_some_and(|l| l.watch.up);
            self.meter
                .set(self.vias[p.via].addr, servers[p.server], p.bytes, up);
        }
        self.meter.tick(wall);
        let lead = self
            .pairs
            .iter()
            .max_by_key(|p| p.bytes)
            .map(|p| (self.vias[p.via].addr, servers[p.server]))
            .unwrap_or((self.vias[0].addr, servers[0]));
        (self.progress)(&Progress {
            bytes: got,
            total,
            via: lead.0,
            server: lead.1,
            switches: self.switches,
            pipes: self.meter.snapshot(),
            waiting,
            server_hashing: None,
        });
    }
}

/// The index of the pair whose live pipe is `id`.
fn pair_index(pairs: &[Pair], id: PipeId) -> Option<usize> {
    pairs
        .iter()
        .position(|p| p.live.as_ref().is_some_and(|l| l.id == id))
}
