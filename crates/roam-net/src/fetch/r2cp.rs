//! Fetching one object over R²CP (rcp-r2cp.txt §4) when a download has more than one local
//! address or server: one [`R2cpReceiver`] per transfer (metadata, then the object), one
//! pipe per (local address, server) pair, each an ordinary RCP connection to an unchanged
//! server (§4.1.2: "No change is necessary at the RCP sender"). Pipes are removed and added
//! while the transfer runs: a local address whose socket reports an error loses its pipes and
//! its socket (re-bound later), a pipe that stalls is broken (`Removal::Break`: its
//! outstanding requests go to the other pipes), and a removed or failed pair gets a new pipe
//! after a backoff. Verification and the part file are the pipeline's (`fetch/mod.rs`). Design:
//! `docs/RUNTIME.md`, "R²CP over sockets".

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use roam_proto::endpoint::{EndpointConfig, Handle, NoAcceptor, PathId};
use roam_proto::r2cp::{PipeId, PipeRole, PipeSpec, PipeState, R2cpEvent, R2cpReceiver, Removal};
use roam_wire::ConnId;

use super::{FetchPlan, Progress, Sink, Transfer};
use crate::pipe_meter::PipeMeter;
use crate::{random_u64, Clock, Driver, NetConn, NetError};

/// First delay before a failed pair or local address is tried again; doubled per consecutive
/// failure up to [`RETRY_MAX`].
const RETRY_BASE: Duration = Duration::from_millis(250);

/// Longest delay between two tries of a pair or a local address.
const RETRY_MAX: Duration = Duration::from_secs(8);

/// How often the progress callback runs while nothing is delivered (rates decay).
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// The delay before try number `failures + 1`.
fn backoff(failures: u32) -> Duration {
    let shift = failures.saturating_sub(1).min(6);
    (RETRY_BASE * (1u32 << shift)).min(RETRY_MAX)
}

/// One local address of the plan.
struct Via {
    /// The driver's index of its socket, while bound.
    local: Option<usize>,
    /// Its address as first bound (the name progress reports use).
    addr: SocketAddr,
    failures: u32,
    retry_at: Option<Instant>,
}

/// The pipe a pair has open now.
struct Live {
    id: PipeId,
    path: PathId,
    opened: Instant,
    /// Handshake completed.
    up: bool,
    /// The pipe's `bytes_received` when last read.
    seen: u64,
    /// Units it has outstanding, when last read.
    outstanding: usize,
    /// Last time it delivered new bytes (or came up).
    last_progress: Instant,
}

/// One (local address, server) pair.
struct Pair {
    via: usize,
    server: usize,
    live: Option<Live>,
    failures: u32,
    retry_at: Option<Instant>,
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
    meter: PipeMeter,
    progress: F,
}

impl<F: FnMut(&Progress)> Transfer for Multi<'_, F> {
    async fn transfer<S: Sink>(
        &mut self,
        object: &str,
        from: u64,
        limit: u64,
        sink: &mut S,
    ) -> Result<u64, NetError> {
        self.receive(object, from, limit, sink).await
    }

    fn start_object(&mut self) {
        for p in &mut self.pairs {
            p.bytes = 0;
        }
        self.meter = PipeMeter::default();
        self.switches = 0;
    }

    fn show(&mut self, progress: &Progress) {
        (self.progress)(progress);
    }

    fn outcome(self) -> (u32, Vec<(SocketAddr, SocketAddr, u64)>) {
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
        let now = Clock::wall();
        let mut vias = Vec::new();
        let mut first_error = None;
        for spec in &plan.vias {
            match driver.add_local(spec) {
                Ok(i) => vias.push(Via {
                    local: Some(i),
                    addr: driver.local_addr(i).unwrap_or(spec.addr),
                    failures: 0,
                    retry_at: None,
                }),
                Err(e) => {
                    tracing::debug!(addr = %spec.addr, error = %e, "local address not usable yet");
                    vias.push(Via {
                        local: None,
                        addr: spec.addr,
                        failures: 1,
                        retry_at: Some(now + backoff(1)),
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
                    failures: 0,
                    retry_at: None,
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

    /// Receives `object` bytes `0 .. limit` (to its end if shorter) into `sink` over every
    /// pair; returns the bytes received.
    async fn receive<S: Sink>(
        &mut self,
        object: &str,
        from: u64,
        limit: u64,
        sink: &mut S,
    ) -> Result<u64, NetError> {
        let now = self.driver.now();
        let mut r = R2cpReceiver::new(
            Arc::new(self.plan.rcp.clone()),
            self.plan.scheme,
            object.as_bytes(),
            (from, limit),
        )?;
        r.set_coupled(self.plan.coupled);
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
            let ep = self.driver.endpoint();
            let Some(NetConn::R2cp(r)) = ep.connection_mut(h) else {
                return Err(self.unreachable("the connection expired".into()));
            };
            chunk.clear();
            let n = r.read(&mut chunk, usize::MAX) as u64;
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
                                live.up = true;
                                live.last_progress = wall;
                            }
                            p.failures = 0;
                            self.vias[p.via].failures = 0;
                            self.refused[p.server] = 0;
                            self.ever_up = true;
                        }
                    }
                    R2cpEvent::PipeFailed(id) => {
                        if let Some(k) = pair_index(&self.pairs, id) {
                            let p = &self.pairs[k];
                            let refused = p.live.as_ref().is_some_and(|l| {
                                !l.up && wall.duration_since(l.opened) < self.plan.stall
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
                    if info.bytes_received > live.seen {
                        p.bytes += info.bytes_received - live.seen;
                        live.seen = info.bytes_received;
                        live.last_progress = wall;
                    }
                    live.outstanding = info.outstanding;
                    live.up |= info.state != PipeState::Connecting;
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
                        self.schedule_retry(k, wall);
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
                .any(|p| p.live.as_ref().is_some_and(|l| l.up));
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
        let wall = Clock::wall();
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
                        self.break_pipe(h, k, wall);
                    }
                }
                self.driver.remove_local(i);
                let via = &mut self.vias[v];
                via.local = None;
                via.failures += 1;
                via.retry_at = Some(wall + backoff(via.failures));
            }
        }
        // Stalled pipes: no handshake answer, or nothing delivered with requests outstanding.
        for k in 0..self.pairs.len() {
            let stalled = self.pairs[k].live.as_ref().is_some_and(|l| {
                if l.up {
                    l.outstanding > 0 && wall.duration_since(l.last_progress) >= stall
                } else {
                    wall.duration_since(l.opened) >= stall
                }
            });
            if stalled {
                tracing::debug!(pair = k, "pipe stalled");
                self.break_pipe(h, k, wall);
            }
        }
        // Local addresses due for another try.
        for v in 0..self.vias.len() {
            let via = &self.vias[v];
            if via.local.is_some()
                || via.retry_at.is_some_and(|t| t > wall)
                || self.plan.status.is_down(via.addr.ip())
            {
                continue;
            }
            match self.driver.add_local(&self.plan.vias[v]) {
                Ok(i) => self.vias[v].local = Some(i),
                Err(e) => {
                    tracing::debug!(addr = %self.vias[v].addr, error = %e, "bind failed");
                    let via = &mut self.vias[v];
                    via.failures += 1;
                    via.retry_at = Some(wall + backoff(via.failures));
                }
            }
        }
        // Pairs without a pipe, on a bound local address, due.
        for k in 0..self.pairs.len() {
            let p = &self.pairs[k];
            let Some(local) = self.vias[p.via].local else {
                continue;
            };
            if p.live.is_some() || p.retry_at.is_some_and(|t| t > wall) {
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
            if let Some(info) = info {
                r.set_link_info(now, id, &info);
            }
            if let Err(e) = ep.add_path(h, path, local, server) {
                if let Some(NetConn::R2cp(r)) = ep.connection_mut(h) {
                    r.remove_pipe(now, id, Removal::Break);
                }
                return Err(e.into());
            }
            self.attempts += 1;
            tracing::debug!(via = %self.vias[self.pairs[k].via].addr, %server, ?id, "pipe opened");
            self.pairs[k].live = Some(Live {
                id,
                path,
                opened: wall,
                up: false,
                seen: 0,
                outstanding: 0,
                last_progress: wall,
            });
        }
        Ok(())
    }

    /// Deletes pair `k`'s pipe break-before-make (its outstanding units go to the other
    /// pipes) and schedules the pair's next try.
    fn break_pipe(&mut self, h: Handle, k: usize, wall: Instant) {
        let Some(live) = self.pairs[k].live.take() else {
            return;
        };
        let now = self.driver.now();
        let ep = self.driver.endpoint();
        if let Some(NetConn::R2cp(r)) = ep.connection_mut(h) {
            r.remove_pipe(now, live.id, Removal::Break);
        }
        let _ = ep.remove_path(h, live.path);
        self.schedule_retry(k, wall);
    }

    /// Counts pair `k`'s pipe as lost and schedules the pair's next try.
    fn schedule_retry(&mut self, k: usize, wall: Instant) {
        let p = &mut self.pairs[k];
        p.failures += 1;
        p.retry_at = Some(wall + backoff(p.failures));
        self.switches += 1;
    }

    /// Calls the progress callback with every pair's bytes and rate (and, while nothing has
    /// arrived for longer than the stall, for how long).
    fn report(&mut self, got: u64, total: Option<u64>, wall: Instant, waiting: Option<f64>) {
        let servers = &self.plan.servers;
        for p in &self.pairs {
            let up = p.live.as_ref().is_some_and(|l| l.up);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_from_a_quarter_second_to_eight() {
        assert_eq!(backoff(1), Duration::from_millis(250));
        assert_eq!(backoff(2), Duration::from_millis(500));
        assert_eq!(backoff(5), Duration::from_secs(4));
        assert_eq!(backoff(6), RETRY_MAX);
        assert_eq!(backoff(u32::MAX), RETRY_MAX);
    }
}
