//! Fetching one object over the TCP-like engine: a connection asks for `.roam-meta/NAME`
//! (length and BLAKE3), another for `NAME` (the request format: [`crate::tcp_request`]); the
//! bytes go to `FILE.roam-part`, hashed as they arrive, renamed to `FILE` only once length and
//! digest match. A server that refuses, resets or stalls is left for the next `--server`;
//! unlike RCP, a TCP transfer cannot ask for a byte range, so it restarts from the first byte.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use roam_proto::cc::CcKind;
use roam_proto::endpoint::{EndpointConfig, EndpointEvent, NoAcceptor, PathAddrs, PathId};
use roam_proto::tcp;

use super::{FetchPlan, FetchReport, Progress, Sink};
use crate::engines::tcp_connect;
use crate::pipe_meter::PipeMeter;
use crate::tcp_request::{decode_reply, TcpRequest, REPLY_HEADER};
use crate::{Clock, Driver, NetConn, NetError};

/// Fetches `plan.name` into `out` over the TCP-like engine, verified; `progress` is called
/// after every turn that delivered bytes of the object.
pub async fn fetch_tcp<F: FnMut(&Progress)>(
    plan: &FetchPlan,
    out: &Path,
    progress: F,
) -> Result<FetchReport, NetError> {
    super::check_plan(plan)?;
    super::run(plan, out, super::Kind::Tcp, progress).await
}

impl<'a, F> TcpFetch<'a, F> {
    /// Binds the plan's first local address.
    pub(super) fn new(plan: &'a FetchPlan, progress: F) -> Result<Self, NetError> {
        let driver = Driver::bind(&plan.vias, EndpointConfig::default(), NoAcceptor::default())?;
        Ok(TcpFetch {
            plan,
            driver,
            first: 0,
            switches: 0,
            per_path: Vec::new(),
            progress,
            object: false,
            last_byte: Clock::wall(),
            ever_connected: false,
        })
    }
}

/// The TCP-like engine's state across the two transfers: the metadata from the first server
/// that answers, then the object from the first (from that one on) that delivers it whole.
pub(super) struct TcpFetch<'a, F> {
    plan: &'a FetchPlan,
    driver: Driver<NoAcceptor<NetConn>>,
    /// The server the last transfer came from.
    first: usize,
    switches: u32,
    per_path: Vec<(SocketAddr, SocketAddr, u64)>,
    progress: F,
    /// The object (not the metadata) is being fetched: progress is reported.
    object: bool,
    /// When the last byte arrived (or the fetch started).
    last_byte: std::time::Instant,
    /// Some connection completed its handshake: later silences are outages to ride out
    /// until `give_up_after`.
    ever_connected: bool,
}

/// The longest a connection that delivered is kept through a silence before a new one is
/// opened: below a server's 60 s idle expiry, which would drop it silently.
const HOLD_MAX: Duration = Duration::from_secs(30);

/// What a connection reports: bytes so far, the object's length, and (while it waits through
/// a silence) seconds since the last byte.
type OnBytes<'a> = dyn FnMut(u64, Option<u64>, Option<f64>) + 'a;

/// How one connection ended without the whole object.
enum Failure {
    /// The server has no such object.
    Refused(NetError),
    /// The connection failed, stalled or was cut short; `connected`: its handshake completed.
    Lost { error: NetError, connected: bool },
    /// Writing the bytes failed (the output): the download stops.
    Fatal(NetError),
}

impl<F: FnMut(&Progress)> TcpFetch<'_, F> {
    /// Receives `object` into `sink` from the first server (from the last one used on) that
    /// delivers it whole; a TCP-like request cannot ask for a range, so `from` > 0 restarts the
    /// sink. Returns the object's length.
    pub(super) async fn receive<S: Sink>(
        &mut self,
        object: &str,
        from: u64,
        _limit: u64,
        sink: &mut S,
    ) -> Result<u64, NetError> {
        let plan = self.plan;
        if from > 0 {
            // A TCP-like request cannot ask for a range: start again from the first byte.
            sink.restart()?;
        }
        let via = self.driver.local_addr(0).unwrap_or(plan.vias[0].addr);
        let n = plan.servers.len();
        let mut refused = vec![false; n];
        let mut failures = 0u32;
        let mut attempts = 0usize;
        let mut i = self.first;
        loop {
            let server = plan.servers[i];
            let mut meter = PipeMeter::default();
            let (report, switches, progress) = (self.object, self.switches, &mut self.progress);
            let mut on_bytes = |bytes: u64, total: Option<u64>, waiting: Option<f64>| {
                if !report && waiting.is_none() {
                    return;
                }
                meter.set(via, server, bytes, waiting.is_none());
                meter.tick(Clock::wall());
                progress(&Progress {
                    bytes,
                    total,
                    via,
                    server,
                    switches,
                    pipes: meter.snapshot(),
                    waiting,
                    server_hashing: None,
                })
            };
            attempts += 1;
            let once = get_once(
                &mut self.driver,
                plan,
                (server, n == 1),
                object,
                sink,
                (self.last_byte, &mut on_bytes),
            )
            .await;
            let error = match once {
                Ok((got, _)) => {
                    self.first = i;
                    self.per_path = vec![(via, server, got)];
                    self.last_byte = Clock::wall();
                    return Ok(got);
                }
                Err((Failure::Fatal(e), _)) => return Err(e),
                Err((Failure::Refused(e), _)) => {
                    refused[i] = true;
                    e
                }
                Err((Failure::Lost { error, connected }, delivered)) => {
                    self.ever_connected |= connected;
                    if delivered {
                        self.last_byte = Clock::wall();
                        failures = 0;
                    }
                    error
                }
            };
            sink.restart()?;
            self.switches += 1;
            failures = failures.saturating_add(1);
            if refused.iter().all(|r| *r) {
                return Err(NetError::Unreachable {
                    name: plan.name.clone(),
                    reason: "every server refused it: no such object (or not a readable file)"
                        .into(),
                });
            }
            let idle = self.last_byte.elapsed();
            if self.ever_connected && idle >= plan.give_up_after {
                return Err(NetError::Unreachable {
                    name: plan.name.clone(),
                    reason: format!(
                        "no data for {:.0} s over {n} server(s) (gave up after {:.0} s); last: \
                         {error}",
                        idle.as_secs_f64(),
                        plan.give_up_after.as_secs_f64()
                    ),
                });
            }
            if !self.ever_connected && attempts >= plan.max_attempts {
                return Err(error);
            }
            // The next server that has not refused, after a backoff.
            for _ in 0..n {
                i = (i + 1) % n;
                if !refused[i] {
                    break;
                }
            }
            // Before any connection came up there is no outage to report.
            let stall = if self.ever_connected {
                plan.stall
            } else {
                Duration::MAX
            };
            let since = (self.last_byte, stall);
            super::back_off(&mut self.driver, failures, since, |idle| {
                on_bytes(0, None, Some(idle));
            })
            .await;
        }
    }

    /// Between the metadata and the object: progress is reported from now on.
    pub(super) fn start_object(&mut self) {
        self.object = true;
    }

    /// Hands `progress` to the progress callback.
    pub(super) fn show(&mut self, progress: &Progress) {
        (self.progress)(progress);
    }

    /// Switches and bytes per (local address, server).
    pub(super) fn outcome(self) -> (u32, Vec<(SocketAddr, SocketAddr, u64)>) {
        (self.switches, self.per_path)
    }
}

/// What one connection's reply has delivered so far.
struct Reply {
    /// The server it comes from.
    server: SocketAddr,
    header: Vec<u8>,
    /// The object's length, once the header arrived.
    len: Option<u64>,
    got: u64,
    /// The stream ended (FIN).
    eof: bool,
    /// The connection failed (reset or timed out).
    failed: Option<tcp::Event>,
    /// Its handshake completed.
    connected: bool,
}

impl Reply {
    /// Takes what `c` has: reply header, object bytes into `sink`, events.
    fn take<S: Sink>(
        &mut self,
        c: &mut tcp::Connection,
        buf: &mut Vec<u8>,
        sink: &mut S,
        name: &str,
    ) -> Result<u64, Failure> {
        buf.clear();
        c.read(buf, usize::MAX);
        let mut body = &buf[..];
        if self.len.is_none() {
            let need = REPLY_HEADER - self.header.len();
            let n = need.min(body.len());
            self.header.extend_from_slice(&body[..n]);
            body = &body[n..];
            if self.header.len() == REPLY_HEADER {
                let mut h = [0u8; REPLY_HEADER];
                h.copy_from_slice(&self.header);
                let bad = |reason: String| NetError::Unreachable {
                    name: name.to_string(),
                    reason,
                };
                let connected = true;
                match decode_reply(&h) {
                    Ok(Some(len)) => self.len = Some(len),
                    Ok(None) => {
                        return Err(Failure::Refused(
                            bad("the server has no such object".into()),
                        ))
                    }
                    Err(e) => {
                        return Err(Failure::Lost {
                            error: bad(e),
                            connected,
                        })
                    }
                }
            }
        }
        let len = self.len.unwrap_or(0);
        // A server sending more than it announced is cut at the announced length.
        let room = usize::try_from(len.saturating_sub(self.got)).unwrap_or(usize::MAX);
        let body = &body[..body.len().min(room)];
        if !body.is_empty() {
            sink.supplied(self.got, self.got + body.len() as u64, self.server);
            sink.put(body).map_err(Failure::Fatal)?;
            self.got += body.len() as u64;
        }
        while let Some(ev) = c.poll_event() {
            match ev {
                tcp::Event::Eof | tcp::Event::Closed => self.eof = true,
                tcp::Event::Reset | tcp::Event::TimedOut => self.failed = Some(ev),
                tcp::Event::Connected => self.connected = true,
                tcp::Event::Readable => {}
            }
        }
        Ok(body.len() as u64)
    }
}

/// One connection to `server` from local 0 asking for `name`; its bytes go to `sink`.
/// Returns the object's length once all of it arrived (and whether bytes arrived); fails when
/// the server refuses, the connection fails, or nothing arrives for `plan.stall` — except
/// that a connection that has delivered, to the only server there is (`only`), is kept through
/// a silence (an outage: its sender retransmits when the path is back) for up to
/// `give_up_after` (at most [`HOLD_MAX`]), reporting the wait through `on_bytes`.
async fn get_once<S: Sink>(
    d: &mut Driver<NoAcceptor<NetConn>>,
    plan: &FetchPlan,
    (server, only): (SocketAddr, bool),
    name: &str,
    sink: &mut S,
    (last_byte, on_bytes): (std::time::Instant, &mut OnBytes<'_>),
) -> Result<(u64, bool), (Failure, bool)> {
    let now = d.now();
    let link = d.local_addr(0).and_then(|a| plan.links.get(a.ip()));
    let lost = |error: NetError| {
        (
            Failure::Lost {
                error,
                connected: false,
            },
            false,
        )
    };
    // The server's controller paces the object; the client sends only the request.
    let mut c = tcp_connect(CcKind::NewReno, now, link).map_err(lost)?;
    let request = TcpRequest::Get(name.as_bytes().to_vec()).encode();
    if c.write(&request) < request.len() {
        return Err(lost(NetError::RequestTooLarge));
    }
    let path = PathAddrs {
        path: PathId::PRIMARY,
        local: 0,
        remote: server,
    };
    let h = d
        .endpoint()
        .insert(now, NetConn::Tcp(Box::new(c)), &[path])
        .map_err(|e| lost(e.into()))?;
    let mut reply = Reply {
        server,
        header: Vec::new(),
        len: None,
        got: 0,
        eof: false,
        failed: None,
        connected: false,
    };
    let mut buf = Vec::new();
    let mut last_progress = Clock::wall();
    let mut last_byte = last_byte;
    // Errors name the object the user asked for, also while its metadata is fetched.
    let shown = plan.name.as_str();
    let unreachable = |reason: String| NetError::Unreachable {
        name: shown.to_string(),
        reason: format!("{server}: {reason}"),
    };
    let hold = plan.give_up_after.min(HOLD_MAX).max(plan.stall);
    let outcome = loop {
        d.step(Duration::from_millis(50)).await;
        let ep = d.endpoint();
        let mut n = 0;
        let mut gone = true;
        let mut taken = None;
        if let Some(NetConn::Tcp(c)) = ep.connection_mut(h) {
            gone = false;
            n = match reply.take(c, &mut buf, sink, shown) {
                Ok(n) => n,
                Err(e) => break Err(e),
            };
        }
        while let Some(ev) = ep.poll_event() {
            if let EndpointEvent::Removed {
                handle,
                conn: NetConn::Tcp(mut c),
                ..
            } = ev
            {
                if handle == h {
                    match reply.take(&mut c, &mut buf, sink, shown) {
                        Ok(k) => n += k,
                        Err(e) => taken = Some(e),
                    }
                    gone = true;
                }
            }
        }
        if let Some(e) = taken {
            break Err(e);
        }
        if n > 0 {
            last_progress = Clock::wall();
            last_byte = last_progress;
            on_bytes(reply.got, reply.len, None);
        }
        if let Some(len) = reply.len {
            if reply.got == len && (reply.eof || gone) {
                break Ok(len);
            }
        }
        if let Some(ev) = reply.failed {
            break Err(Failure::Lost {
                error: unreachable(format!("the connection ended: {ev:?}")),
                connected: reply.connected,
            });
        }
        if reply.eof || gone {
            break Err(Failure::Lost {
                error: unreachable(match reply.len {
                    Some(len) => format!("the stream ended after {} of {len} bytes", reply.got),
                    None => "the stream ended before the reply header".into(),
                }),
                connected: reply.connected,
            });
        }
        let silent = last_progress.elapsed();
        let riding_out = only && reply.got > 0;
        if silent >= plan.stall && riding_out {
            on_bytes(
                reply.got,
                reply.len,
                Some(last_byte.elapsed().as_secs_f64()),
            );
        }
        let limit = if riding_out { hold } else { plan.stall };
        if silent >= limit || last_byte.elapsed() >= plan.give_up_after {
            break Err(Failure::Lost {
                error: unreachable(format!("nothing arrived for {:.1} s", silent.as_secs_f64())),
                connected: reply.connected,
            });
        }
    };
    // Close our side (the server's FIN has arrived on success), send it, forget the
    // connection.
    if let Some(NetConn::Tcp(c)) = d.endpoint().connection_mut(h) {
        c.close();
    }
    d.flush().await;
    d.endpoint().remove(h);
    let delivered = reply.got > 0;
    outcome
        .map(|len| (len, delivered))
        .map_err(|f| (f, delivered))
}
