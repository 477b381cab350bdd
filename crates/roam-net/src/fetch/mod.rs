//! Fetching one object, verified: its metadata (`.roam-meta/NAME`: length and BLAKE3, from
//! every mirror, cross-checked) and BLAKE3 tree first ([`meta`]), then its bytes into the
//! output ([`output`]: a part file renamed to `FILE` only once length and digest match), each
//! group verified as it arrives ([`verify`]). The pipeline ([`run`]) is written once here; it
//! builds one engine per phase ([`Engine`]), each a leaf that moves bytes: single-path RCP
//! ([`rcp`]), R²CP over several local addresses or servers ([`r2cp`]), the TCP-like engine
//! ([`tcp`]).

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use roam_proto::endpoint::NoAcceptor;
use roam_proto::r2cp::reopen::backoff;
use roam_proto::r2cp::Scheme;
use roam_proto::rcp::{RcpCc, RcpConfig};

use crate::engines::rcp_config;
use crate::pipe_meter::PipeProgress;
use crate::{Clock, Driver, LinkTable, LocalSpec, LocalStatus, NetConn, NetError};

mod meta;
mod output;
mod r2cp;
mod rcp;
mod tcp;
mod verify;

pub(crate) use rcp::receive_generated;
pub use tcp::fetch_tcp;

use output::Output;

/// The default [`FetchPlan::give_up_after`]: 15 minutes, about when Linux TCP gives up on a
/// silent peer (`tcp_retries2` = 15, ip-sysctl.rst), as the RCP engine's own `max_retries` does.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(15 * 60);

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
    /// Attempts (connections opened) at most before giving up while no connection has ever
    /// been established (a wrong address, a server that is down); under R²CP, pipe attempts
    /// at most while no pipe is up.
    pub max_attempts: usize,
    /// Once connected, the single-path RCP fetch gives up only after this long without a
    /// byte: it rides out outages (a tunnel, a dead zone) as TCP does, opening a new
    /// connection after each stall with a backoff of 0.25 s doubling to 8 s.
    pub give_up_after: Duration,
    /// RCP configuration.
    pub rcp: RcpConfig,
    /// Facts about the local links, handed to each connection opened on them.
    pub links: LinkTable,
    /// Local addresses the host marked down (used by the R²CP fetch).
    pub status: LocalStatus,
    /// The object's BLAKE3 digest as the user knows it (a published checksum): metadata that
    /// says otherwise is refused before the object is fetched, so a lying server cannot
    /// substitute both the metadata and the bytes.
    pub expected_digest: Option<[u8; 32]>,
    /// Continue from a part file an earlier download left (`roam get --continue`): its bytes
    /// are kept, the rest fetched, and the whole file verified as stored at the end.
    pub resume: bool,
    /// R²CP pipes couple their window increase (RFC 6356 LIA): where they share a bottleneck
    /// (two mirrors behind one access link) the download takes about one flow's share. Off by
    /// default: on disjoint paths coupling leaves a slow, long path nearly unused
    /// (`docs/R2CP.md`, "Coupling").
    pub coupled: bool,
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
            stall: roam_proto::r2cp::reopen::DEFAULT_STALL,
            give_up_after: GIVE_UP_AFTER,
            rcp: rcp_config(),
            links: LinkTable::new(),
            status: LocalStatus::new(),
            expected_digest: None,
            resume: false,
            coupled: false,
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
    /// Seconds since the last byte, while the fetch waits for the path to come back (nothing
    /// for longer than the stall): for a "waiting" display.
    pub waiting: Option<f64>,
    /// While the server is still computing the object's digest (a large file asked for the
    /// first time): bytes it has hashed and the object's length.
    pub server_hashing: Option<(u64, u64)>,
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
    /// Servers dropped during the download, and why: metadata that disagreed with the
    /// others' (or the pinned digest), a tree that does not merge to the digest, or bytes
    /// that failed verification.
    pub dropped: Vec<(SocketAddr, String)>,
}

/// Where the bytes of a transfer go.
pub(crate) trait Sink {
    /// Appends the next bytes of the object.
    fn put(&mut self, bytes: &[u8]) -> Result<(), NetError>;
    /// Forgets everything put so far (a transfer that starts again from the first byte).
    fn restart(&mut self) -> Result<(), NetError>;
    /// Whether bytes put can be taken back (a part file can be cut; a FIFO cannot): a
    /// verifying sink holds each group back from one that cannot until it is verified.
    fn rewindable(&self) -> bool {
        true
    }
    /// Says that the object's bytes `start .. end` (put now or later) came from `server`, so
    /// that a verifying sink can blame the server whose bytes fail (issue 28: blame by
    /// delivery). Engines call it before putting the bytes.
    fn supplied(&mut self, _start: u64, _end: u64, _server: SocketAddr) {}
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) -> Result<(), NetError> {
        self.extend_from_slice(bytes);
        Ok(())
    }

    fn restart(&mut self) -> Result<(), NetError> {
        self.clear();
        Ok(())
    }
}

/// The engine family a download runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// RCP: single-path with one local address and one server, else R²CP.
    Rcp,
    /// The TCP-like engine.
    Tcp,
}

/// One engine for one phase of a download; the pipeline ([`run`]) uses one for the metadata,
/// then one for the object. Each leaf has the four methods below of the same names.
enum Engine<'p, G> {
    Single(rcp::Session<'p, G>),
    Multi(r2cp::Multi<'p, G>),
    Tcp(tcp::TcpFetch<'p, G>),
}

/// The engine `kind` for `plan`.
fn engine<G: FnMut(&Progress)>(
    kind: Kind,
    plan: &FetchPlan,
    progress: G,
) -> Result<Engine<'_, G>, NetError> {
    Ok(match kind {
        Kind::Tcp => Engine::Tcp(tcp::TcpFetch::new(plan, progress)?),
        Kind::Rcp if plan.vias.len() > 1 || plan.servers.len() > 1 => {
            Engine::Multi(r2cp::Multi::new(plan, progress)?)
        }
        Kind::Rcp => Engine::Single(rcp::Session::new(plan, progress, None)?),
    })
}

impl<G: FnMut(&Progress)> Engine<'_, G> {
    /// Receives `object` bytes `from .. limit` (to its end if shorter) into `sink`, switching
    /// connections, pipes or servers as the engine does; returns the object's bytes now held
    /// (`from` plus those received). An engine that cannot ask for a range restarts the sink
    /// and fetches from the first byte.
    async fn receive<S: Sink>(
        &mut self,
        object: &str,
        from: u64,
        limit: u64,
        sink: &mut S,
    ) -> Result<u64, NetError> {
        match self {
            Engine::Single(e) => e.receive(object, from, limit, sink).await,
            Engine::Multi(e) => e.receive(object, from, limit, sink).await,
            Engine::Tcp(e) => e.receive(object, from, limit, sink).await,
        }
    }

    /// Between the metadata and the object: forgets the metadata's per-path counts.
    fn start_object(&mut self) {
        match self {
            Engine::Single(e) => e.start_object(),
            Engine::Multi(e) => e.start_object(),
            Engine::Tcp(e) => e.start_object(),
        }
    }

    /// Hands `progress` to the engine's progress callback (the pipeline's own states).
    fn show(&mut self, progress: &Progress) {
        match self {
            Engine::Single(e) => e.show(progress),
            Engine::Multi(e) => e.show(progress),
            Engine::Tcp(e) => e.show(progress),
        }
    }

    /// Switches and bytes per (local address, server), for the report.
    fn outcome(self) -> (u32, Vec<(SocketAddr, SocketAddr, u64)>) {
        match self {
            Engine::Single(e) => e.outcome(),
            Engine::Multi(e) => e.outcome(),
            Engine::Tcp(e) => e.outcome(),
        }
    }
}

/// The delay after `failures` consecutive abandoned connections (single-path RCP, the
/// TCP-like engine): the first new connection is immediate, then R²CP's reopening backoff
/// (`roam_proto::r2cp::reopen`: 0.25 s doubling to 8 s).
fn retry_delay(failures: u32) -> Duration {
    backoff(failures.saturating_sub(1))
}

/// Waits [`retry_delay`]`(failures)` before the next connection, stepping `driver`; while
/// nothing has arrived for `stall` or longer since `last_byte`, tells `waiting` for how many
/// seconds (for the progress line's "waiting" state).
async fn back_off(
    driver: &mut Driver<NoAcceptor<NetConn>>,
    failures: u32,
    (last_byte, stall): (Instant, Duration),
    mut waiting: impl FnMut(f64),
) {
    let until = Clock::wall() + retry_delay(failures);
    loop {
        let now = Clock::wall();
        let idle = now.duration_since(last_byte);
        if idle >= stall {
            waiting(idle.as_secs_f64());
        }
        if now >= until {
            return;
        }
        driver
            .step((until - now).min(Duration::from_millis(250)))
            .await;
    }
}

/// Rounds in a row whose failed group no server's copy failed again (corruption on the way,
/// not at a server) before the download gives up.
const BLAMELESS_ROUNDS: u32 = 3;

/// The pipeline every engine shares: metadata (cross-checked between servers), the tree, then
/// the object into the part file, each group verified as it arrives (a server whose copy
/// fails is found out, dropped, and the rest fetched from the others), the whole verified as
/// stored and renamed to `out`.
async fn run<F: FnMut(&Progress)>(
    plan: &FetchPlan,
    out: &Path,
    kind: Kind,
    mut progress: F,
) -> Result<FetchReport, NetError> {
    let started = Clock::wall();
    // The output first: a bad -o (a directory, a symlink, a part file another download
    // holds) fails before anything is fetched.
    let mut output = Output::open(out, plan.resume)?;
    let mut now = plan.clone();
    let mut dropped = Vec::new();
    let prepared = match meta::prepare(&mut now, kind, &mut progress, &mut dropped).await {
        Ok((meta, tree)) => output
            .resume_from(&meta)
            .and_then(|from| verify_kept(&mut output, &tree, from))
            .map(|from| (meta, tree, from)),
        Err(e) => Err(e),
    };
    let (meta, tree, mut from) = match prepared {
        Ok(x) => x,
        Err(e) => {
            output.abandon();
            return Err(e);
        }
    };
    let (mut switches, mut per_path) = (0, Vec::new());
    let mut blameless = 0;
    let result = loop {
        let mut e = match engine(kind, &now, &mut progress) {
            Ok(e) => e,
            Err(err) => break Err(err),
        };
        e.start_object();
        let mut sink = verify::Verify::new(&mut output, &tree, &plan.name, from);
        let r = e.receive(&plan.name, from, meta.len, &mut sink).await;
        let (sw, pp) = e.outcome();
        switches += sw;
        per_path.extend(pp);
        let Err(NetError::Corrupt {
            group, start, end, ..
        }) = r
        else {
            break r;
        };
        // Who sent the bytes that fail: by delivery, probing where several servers did.
        let origins = sink.origins(group).to_vec();
        let held = sink.take_failed();
        let stored = held.or_else(|| output.stored(start, end));
        let bad = verify::blame(&now, &tree, group, &origins, stored.as_deref()).await;
        if bad.is_empty() {
            blameless += 1;
            if blameless >= BLAMELESS_ROUNDS {
                break Err(NetError::Integrity {
                    name: plan.name.clone(),
                    reason: format!(
                        "bytes {start}..{end} failed verification {blameless} times, but no \
                         server's own copy fails"
                    ),
                });
            }
        }
        for (s, why) in &bad {
            tracing::warn!(server = %s, %why, "server dropped");
            dropped.push((*s, why.clone()));
        }
        now.servers.retain(|s| !bad.iter().any(|(x, _)| x == s));
        if now.servers.is_empty() {
            break Err(NetError::Integrity {
                name: plan.name.clone(),
                reason: format!("every server sent bytes {start}..{end} that fail verification"),
            });
        }
        if let Err(e) = output.rewind_to(start) {
            break Err(e);
        }
        from = start;
    };
    output.finish(&plan.name, result, &meta)?;
    Ok(FetchReport {
        bytes: meta.len,
        digest: meta.digest,
        seconds: started.elapsed().as_secs_f64(),
        switches,
        per_path,
        dropped,
    })
}

/// Verifies the groups of a part file kept by `--continue` before trusting them: returns
/// where the download continues (the first byte of the first group that is incomplete or
/// fails), the part file cut there.
fn verify_kept(output: &mut Output, tree: &verify::Tree, from: u64) -> Result<u64, NetError> {
    if from == 0 {
        return Ok(0);
    }
    if !tree.per_group() {
        return Ok(from);
    }
    let mut good = 0;
    if let Some(file) = output.kept() {
        use std::os::unix::fs::FileExt;
        let mut buf = Vec::new();
        let mut index = 0;
        loop {
            let (start, end) = crate::tree::group_range(tree.len, tree.log2, index);
            if end > from || start == end {
                break;
            }
            buf.resize(usize::try_from(end - start).unwrap_or(0), 0);
            if file.read_exact_at(&mut buf, start).is_err() || !tree.verify(index, &buf) {
                break;
            }
            good = end;
            index += 1;
        }
    }
    if good != from {
        tracing::debug!(from, good, "kept part file verified up to here");
        output.rewind_to(good)?;
    }
    Ok(good)
}

/// Refuses a plan without a server or a local address, or for a name no server would serve
/// or that does not fit a request (never cut short: issue 28, item 7).
fn check_plan(plan: &FetchPlan) -> Result<(), NetError> {
    crate::store::check_name(&plan.name).map_err(|reason| NetError::Name {
        name: plan.name.clone(),
        reason,
    })?;
    if plan.servers.is_empty() || plan.vias.is_empty() {
        return Err(NetError::Unreachable {
            name: plan.name.clone(),
            reason: "no server or no local address given".into(),
        });
    }
    Ok(())
}

/// Fetches `plan.name` into `out`, verified: over single-path RCP with one local address and
/// one server, over R²CP (one pipe per pair) with more. `progress` is called after every turn
/// that delivered bytes (under R²CP also every quarter second while nothing arrives).
pub async fn fetch<F: FnMut(&Progress)>(
    plan: &FetchPlan,
    out: &Path,
    progress: F,
) -> Result<FetchReport, NetError> {
    check_plan(plan)?;
    run(plan, out, Kind::Rcp, progress).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use roam_proto::r2cp::reopen::REOPEN_MAX;

    #[test]
    fn a_first_switch_is_immediate_then_retries_back_off_to_eight_seconds() {
        assert_eq!(retry_delay(0), Duration::ZERO);
        assert_eq!(retry_delay(1), Duration::ZERO);
        assert_eq!(retry_delay(2), Duration::from_millis(250));
        assert_eq!(retry_delay(3), Duration::from_millis(500));
        assert_eq!(retry_delay(7), REOPEN_MAX);
        assert_eq!(retry_delay(u32::MAX), REOPEN_MAX);
    }
}
