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

use super::{FetchPlan, FetchReport, Progress, Sink, Transfer};
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
    let driver = Driver::bind(&plan.vias, EndpointConfig::default(), NoAcceptor::default())?;
    let started = Clock::wall();
    let engine = TcpFetch {
        plan,
        driver,
        first: 0,
        switches: 0,
        per_path: Vec::new(),
        progress,
        object: false,
    };
    super::run(plan, out, engine, started).await
}

/// The TCP-like engine's state across the two transfers: the metadata from the first server
/// that answers, then the object from the first (from that one on) that delivers it whole.
struct TcpFetch<'a, F> {
    plan: &'a FetchPlan,
    driver: Driver<NoAcceptor<NetConn>>,
    /// The server the last transfer came from.
    first: usize,
    switches: u32,
    per_path: Vec<(SocketAddr, SocketAddr, u64)>,
    progress: F,
    /// The object (not the metadata) is being fetched: progress is reported.
    object: bool,
}

impl<F: FnMut(&Progress)> Transfer for TcpFetch<'_, F> {
    async fn transfer<S: Sink>(
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
        let mut last = None;
        for (i, &server) in plan.servers.iter().enumerate().skip(self.first) {
            let mut meter = PipeMeter::default();
            let (report, switches, progress) = (self.object, self.switches, &mut self.progress);
            let mut on_bytes = |bytes: u64, total: Option<u64>| {
                if !report {
                    return;
                }
                meter.set(via, server, bytes, true);
                meter.tick(Clock::wall());
                progress(&Progress {
                    bytes,
                    total,
                    via,
                    server,
                    switches,
                    pipes: meter.snapshot(),
                    waiting: None,
                    server_hashing: None,
                })
            };
            match get_once(&mut self.driver, plan, server, object, sink, &mut on_bytes).await {
                Ok(got) => {
                    self.first = i;
                    self.per_path = vec![(via, server, got)];
                    return Ok(got);
                }
                Err(e) => {
                    sink.restart()?;
                    self.switches += 1;
                    last = Some(e);
                }
            }
        }
        Err(last.unwrap_or(NetError::Unreachable {
            name: plan.name.clone(),
            reason: "no server delivered it".into(),
        }))
    }

    fn start_object(&mut self) {
        self.object = true;
    }

    fn show(&mut self, progress: &Progress) {
        (self.progress)(progress);
    }

    fn outcome(self) -> (u32, Vec<(SocketAddr, SocketAddr, u64)>) {
        (self.switches, self.per_path)
    }
}

/// What one connection's reply has delivered so far.
struct Reply {
    header: Vec<u8>,
    /// The object's length, once the header arrived.
    len: Option<u64>,
    got: u64,
    /// The stream ended (FIN).
    eof: bool,
    /// The connection failed (reset or timed out).
    failed: Option<tcp::Event>,
}

impl Reply {
    /// Takes what `c` has: reply header, object bytes into `sink`, events.
    fn take<S: Sink>(
        &mut self,
        c: &mut tcp::Connection,
        buf: &mut Vec<u8>,
        sink: &mut S,
        name: &str,
    ) -> Result<u64, NetError> {
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
                self.len = Some(
                    decode_reply(&h)
                        .map_err(bad)?
                        .ok_or_else(|| bad("the server has no such object".into()))?,
                );
            }
        }
        let len = self.len.unwrap_or(0);
        // A server sending more than it announced is cut at the announced length.
        let room = usize::try_from(len.saturating_sub(self.got)).unwrap_or(usize::MAX);
        let body = &body[..body.len().min(room)];
        if !body.is_empty() {
            sink.put(body)?;
            self.got += body.len() as u64;
        }
        while let Some(ev) = c.poll_event() {
            match ev {
                tcp::Event::Eof | tcp::Event::Closed => self.eof = true,
                tcp::Event::Reset | tcp::Event::TimedOut => self.failed = Some(ev),
                tcp::Event::Connected | tcp::Event::Readable => {}
            }
        }
        Ok(body.len() as u64)
    }
}

/// One connection to `server` from local 0 asking for `name`; its bytes go to `sink`.
/// Returns the object's length once all of it arrived; fails when the server refuses, the
/// connection fails, or nothing arrives for `plan.stall`.
async fn get_once<S: Sink>(
    d: &mut Driver<NoAcceptor<NetConn>>,
    plan: &FetchPlan,
    server: SocketAddr,
    name: &str,
    sink: &mut S,
    on_bytes: &mut dyn FnMut(u64, Option<u64>),
) -> Result<u64, NetError> {
    let now = d.now();
    let link = d.local_addr(0).and_then(|a| plan.links.get(a.ip()));
    // The server's controller paces the object; the client sends only the request.
    let mut c = tcp_connect(CcKind::NewReno, now, link)?;
    let request = TcpRequest::Get(name.as_bytes().to_vec()).encode();
    if c.write(&request) < request.len() {
        return Err(NetError::Config(
            "the request does not fit the send buffer".into(),
        ));
    }
    let path = PathAddrs {
        path: PathId::PRIMARY,
        local: 0,
        remote: server,
    };
    let h = d
        .endpoint()
        .insert(now, NetConn::Tcp(Box::new(c)), &[path])
        .map_err(|e| NetError::Config(e.to_string()))?;
    let mut reply = Reply {
        header: Vec::new(),
        len: None,
        got: 0,
        eof: false,
        failed: None,
    };
    let mut buf = Vec::new();
    let mut last_progress = Clock::wall();
    // Errors name the object the user asked for, also while its metadata is fetched.
    let shown = plan.name.as_str();
    let unreachable = |reason: String| NetError::Unreachable {
        name: shown.to_string(),
        reason: format!("{server}: {reason}"),
    };
    let outcome = loop {
        d.step(Duration::from_millis(50)).await;
        let ep = d.endpoint();
        let mut n = 0;
        let mut gone = true;
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
                    n += match reply.take(&mut c, &mut buf, sink, shown) {
                        Ok(n) => n,
                        Err(e) => return Err(e),
                    };
                    gone = true;
                }
            }
        }
        if n > 0 {
            last_progress = Clock::wall();
            on_bytes(reply.got, reply.len);
        }
        if let Some(len) = reply.len {
            if reply.got == len && (reply.eof || gone) {
                break Ok(len);
            }
        }
        if let Some(ev) = reply.failed {
            break Err(unreachable(format!("the connection ended: {ev:?}")));
        }
        if reply.eof || gone {
            break Err(unreachable(match reply.len {
                Some(len) => format!("the stream ended after {} of {len} bytes", reply.got),
                None => "the stream ended before the reply header".into(),
            }));
        }
        if last_progress.elapsed() >= plan.stall {
            break Err(unreachable(format!(
                "nothing arrived for {:.1} s",
                plan.stall.as_secs_f64()
            )));
        }
    };
    // Close our side (the server's FIN has arrived on success), send it, forget the
    // connection.
    if let Some(NetConn::Tcp(c)) = d.endpoint().connection_mut(h) {
        c.close();
    }
    d.flush().await;
    d.endpoint().remove(h);
    outcome
}
