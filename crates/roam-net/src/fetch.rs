//! Fetching one object over RCP: its metadata (`.roam-meta/NAME`: length and BLAKE3) first,
//! then its bytes into `FILE.roam-part`, hashed as they arrive in order, renamed to `FILE` only
//! once length and digest match. When the local address in use or the server stops
//! delivering, the fetch continues on a new connection from another local address or server,
//! asking only for the bytes not yet received (see `docs/RUNTIME.md`, "Mobility"). With more
//! than one local address or server the download runs over R²CP instead (`r2cp_fetch.rs`).

use std::fs::File;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use roam_proto::endpoint::{EndpointConfig, Handle, NoAcceptor, PathAddrs, PathId};
use roam_proto::r2cp::Scheme;
use roam_proto::rcp::{RcpCc, RcpConfig, RcpEvent, RcpReceiver};
use roam_wire::ConnId;

use crate::engines::rcp_config;
use crate::pipe_meter::{PipeMeter, PipeProgress};
use crate::store::{ObjectMeta, META_PREFIX};
use crate::{random_u64, Clock, Driver, LinkTable, LocalSpec, LocalStatus, NetConn, NetError};

/// What to fetch, from where, how.
#[derive(Debug, Clone)]
pub struct FetchPlan {
    /// Object name on the servers.
    pub name: String,
    /// Servers (mirrors), tried in order.
    pub servers: Vec<SocketAddr>,
    /// Local addresses (interfaces), tried in order.
    pub vias: Vec<LocalSpec>,
    /// Receiver congestion controller (RCP; each R²CP pipe's).
    pub cc: RcpCc,
    /// How R²CP assigns data to pipes (used with more than one local address or server).
    pub scheme: Scheme,

    /// A connection that delivers nothing for this long is abandoned for another local
    /// address or server (under R²CP: a pipe is broken and its pair tried again later).
    pub stall: Duration,
    /// Attempts (connections opened) at most before giving up.
    pub max_attempts: usize,
    /// RCP configuration.
    pub rcp: RcpConfig,
    /// Facts about the local links, handed to each connection opened on them.
    pub links: LinkTable,
    /// Local addresses the host marked down (used by the R²CP fetch).
    pub status: LocalStatus,
}

impl FetchPlan {
    /// A plan with the defaults: NewReno, R²CP by rank, 3 s stall, the runtime's RCP configuration.
    pub fn new(name: &str, servers: Vec<SocketAddr>, vias: Vec<SocketAddr>) -> Self {
        FetchPlan {
            name: name.to_string(),
            max_attempts: 4 * servers.len().max(1) * vias.len().max(1) + 4,
            servers,
            vias: vias.into_iter().map(LocalSpec::addr).collect(),
            cc: RcpCc::default(),
            scheme: Scheme::Rank,
            stall: Duration::from_secs(3),
            rcp: rcp_config(),
            links: LinkTable::new(),
            status: LocalStatus::new(),
        }
    }
}

/// Where a fetch stands, for progress displays.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Bytes received in order (written to the file).
    pub bytes: u64,
    /// Object length, once known.
    pub total: Option<u64>,
    /// The local address in use (under R²CP: of the pipe that delivered most).
    pub via: SocketAddr,
    /// The server in use (under R²CP: of the pipe that delivered most).
    pub server: SocketAddr,
    /// Connections abandoned for another local address or server so far (under R²CP: pipes
    /// broken or failed).
    pub switches: u32,
    /// Every (local address, server) pair used so far: bytes and recent rate.
    pub pipes: Vec<PipeProgress>,
}

/// What a finished fetch did.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchReport {
    /// Object bytes received (the object's length).
    pub bytes: u64,
    /// Its BLAKE3 digest (verified).
    pub digest: [u8; 32],
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Connections abandoned for another local address or server.
    pub switches: u32,
    /// Bytes delivered per (local address, server): in order of use (one entry per
    /// connection); under R²CP one entry per pair.
    pub per_path: Vec<(SocketAddr, SocketAddr, u64)>,
}

/// Where the bytes of a transfer go.
pub(crate) trait Sink {
    fn put(&mut self, bytes: &[u8]) -> Result<(), NetError>;
}

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
}

/// Receives `bytes` of a generated object (or receives until `duration` has passed) from
/// `plan.servers[0]` over `plan.vias[0]`, checking every byte against the pattern; returns
/// (bytes, seconds).
pub async fn receive_generated(
    plan: &FetchPlan,
    bytes: u64,
    duration: Option<Duration>,
) -> Result<(u64, f64), NetError> {
    let driver = Driver::bind(&plan.vias, EndpointConfig::default(), NoAcceptor::default())?;
    let started = Clock::wall();
    let mut s = Session {
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
        progress: |_: &Progress| {},
        started,
        deadline: duration.map(|d| started + d),
    };
    let name = format!("{}{bytes}", crate::store::PERF_PREFIX);
    let mut sink = CountSink { bytes: 0, wrong: 0 };
    let got = s.transfer(&name, bytes, &mut sink).await?;
    if sink.wrong > 0 {
        return Err(NetError::Integrity {
            name,
            reason: format!("{} bytes differ from the pattern", sink.wrong),
        });
    }
    Ok((got, started.elapsed().as_secs_f64()))
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) -> Result<(), NetError> {
        self.extend_from_slice(bytes);
        Ok(())
    }
}

/// A download's part file, hashed as it is written.
pub(crate) struct FileSink {
    file: File,
    path: PathBuf,
    hasher: blake3::Hasher,
}

impl FileSink {
    /// Creates (truncates) the part file.
    pub(crate) fn create(part: &Path) -> Result<FileSink, NetError> {
        let file = File::create(part).map_err(|source| NetError::File {
            path: part.display().to_string(),
            source,
        })?;
        Ok(FileSink {
            file,
            path: part.to_path_buf(),
            hasher: blake3::Hasher::new(),
        })
    }

    /// Ends a download of `name` whose transfer returned `result` (bytes received): syncs
    /// the part file and renames it to `out` if length and digest match `meta`; otherwise
    /// removes it and returns why.
    pub(crate) fn finish(
        self,
        name: &str,
        result: Result<u64, NetError>,
        meta: &ObjectMeta,
        out: &Path,
    ) -> Result<(), NetError> {
        let part = self.path.clone();
        let finish = result.and_then(|got| {
            self.file.sync_all().map_err(|source| NetError::File {
                path: part.display().to_string(),
                source,
            })?;
            if got != meta.len {
                return Err(NetError::Integrity {
                    name: name.to_string(),
                    reason: format!("received {got} bytes, the object has {}", meta.len),
                });
            }
            if *self.hasher.finalize().as_bytes() != meta.digest {
                return Err(NetError::Integrity {
                    name: name.to_string(),
                    reason: "BLAKE3 digest mismatch".into(),
                });
            }
            std::fs::rename(&part, out).map_err(|source| NetError::File {
                path: out.display().to_string(),
                source,
            })
        });
        if finish.is_err() {
            let _ = std::fs::remove_file(&part);
        }
        finish
    }
}

impl Sink for FileSink {
    fn put(&mut self, bytes: &[u8]) -> Result<(), NetError> {
        self.hasher.update(bytes);
        self.file.write_all(bytes).map_err(|source| NetError::File {
            path: self.path.display().to_string(),
            source,
        })
    }
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

struct Session<'a, F> {
    plan: &'a FetchPlan,
    driver: Driver<NoAcceptor<NetConn>>,
    route: Route,
    progress: F,
    started: Instant,
    /// Stop receiving at this instant (a timed `roam perf`).
    deadline: Option<Instant>,
}

/// Fetches `plan.name` into `out`, verified: over single-path RCP with one local address and
/// one server, over R²CP (one pipe per pair) with more. `progress` is called after every turn
/// that delivered bytes (under R²CP also every quarter second while nothing arrives).
pub async fn fetch<F: FnMut(&Progress)>(
    plan: &FetchPlan,
    out: &Path,
    progress: F,
) -> Result<FetchReport, NetError> {
    if plan.servers.is_empty() || plan.vias.is_empty() {
        return Err(NetError::Unreachable {
            name: plan.name.clone(),
            reason: "no server or no local address given".into(),
        });
    }
    if plan.vias.len() > 1 || plan.servers.len() > 1 {
        return crate::r2cp_fetch::fetch_r2cp(plan, out, progress).await;
    }
    let driver = Driver::bind(&plan.vias, EndpointConfig::default(), NoAcceptor::default())?;
    let mut s = Session {
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
        started: Clock::wall(),
        deadline: None,
    };
    let meta_name = format!("{META_PREFIX}{}", plan.name);
    let mut meta_bytes = Vec::new();
    s.transfer(&meta_name, 1024, &mut meta_bytes).await?;
    let meta = ObjectMeta::decode(&meta_bytes).map_err(|reason| NetError::Meta {
        name: plan.name.clone(),
        reason,
    })?;
    s.route.per_path.clear();

    let part = part_path(out);
    let mut sink = FileSink::create(&part)?;
    let result = s.transfer(&plan.name, meta.len, &mut sink).await;
    sink.finish(&plan.name, result, &meta, out)?;
    Ok(FetchReport {
        bytes: meta.len,
        digest: meta.digest,
        seconds: s.started.elapsed().as_secs_f64(),
        switches: s.route.switches,
        per_path: s.route.per_path,
    })
}

/// `FILE.roam-part` beside `FILE`.
pub(crate) fn part_path(out: &Path) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".roam-part");
    out.with_file_name(name)
}

/// Why a connection was abandoned.
enum Abandon {
    /// The local address reported an error or delivered nothing.
    Local,
    /// The server reset, failed or stopped answering.
    Server,
}

impl<F: FnMut(&Progress)> Session<'_, F> {
    /// Receives `object` bytes `0 .. limit` (to its end if shorter) into `sink`, switching
    /// connections as needed; returns the bytes received.
    async fn transfer<S: Sink>(
        &mut self,
        object: &str,
        limit: u64,
        sink: &mut S,
    ) -> Result<u64, NetError> {
        let mut got = 0u64;
        let mut total: Option<u64> = None;
        let mut chunk = Vec::new();
        loop {
            let (h, via_addr, server) = self.open(object, got, limit)?;
            let mut last_progress = Clock::wall();
            let mut connected = false;
            let outcome = loop {
                self.driver.step(Duration::from_millis(50)).await;
                let ep = self.driver.endpoint();
                let Some(NetConn::RcpReceiver(r)) = ep.connection_mut(h) else {
                    break Abandon::Server;
                };
                chunk.clear();
                let n = r.read(&mut chunk, usize::MAX) as u64;
                let mut ended = None;
                while let Some(ev) = r.poll_event() {
                    match ev {
                        RcpEvent::Connected { object_len } => {
                            connected = true;
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
                    sink.put(&chunk)?;
                    got += n;
                    last_progress = Clock::wall();
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
        let mut r = RcpReceiver::connect(
            Arc::new(self.plan.rcp.clone()),
            self.plan.cc,
            ConnId(random_u64()?),
            object.as_bytes(),
            (from, limit),
            now,
        )
        .map_err(NetError::Config)?;
        if let Some(info) = self.plan.links.get(via_addr.ip()) {
            r.set_link_info(now, &info);
        }
        let path = PathAddrs {
            path: PathId::PRIMARY,
            local: via,
            remote: server,
        };
        let h = self
            .driver
            .endpoint()
            .insert(now, NetConn::RcpReceiver(Box::new(r)), &[path])
            .map_err(|e| NetError::Config(e.to_string()))?;
        self.route.per_path.push((via_addr, server, 0));
        tracing::debug!(%via_addr, %server, from, "opened");
        Ok((h, via_addr, server))
    }

    /// Moves to another local address (if the local side failed and there is one) or the
    /// next server, or gives up.
    fn switch(&mut self, why: Abandon) -> Result<(), NetError> {
        self.route.switches += 1;
        if self.route.refused.iter().all(|r| *r) {
            return Err(NetError::Unreachable {
                name: self.plan.name.clone(),
                reason: "every server refused it (no such object, or a reset)".into(),
            });
        }
        if self.route.attempts >= self.plan.max_attempts {
            return Err(NetError::Unreachable {
                name: self.plan.name.clone(),
                reason: format!(
                    "no progress after {} attempts over {} local address(es) and {} server(s)",
                    self.route.attempts,
                    self.plan.vias.len(),
                    self.plan.servers.len()
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
