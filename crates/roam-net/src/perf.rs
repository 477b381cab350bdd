//! `roam perf`'s client side: goodput of one connection of each engine against a
//! [`Server`](crate::Server) (RCP: a generated object; TCP-like: a discard request, then
//! bytes the server reads and drops), for a byte count or a duration.

use std::net::SocketAddr;
use std::time::Duration;

use roam_proto::cc::CcKind;
use roam_proto::endpoint::{EndpointConfig, EndpointEvent, NoAcceptor, PathAddrs, PathId};
use roam_proto::rcp::RcpCc;
use roam_proto::tcp;

use crate::engines::tcp_connect;
use crate::fetch::receive_generated;
use crate::tcp_request::TcpRequest;
use crate::{Clock, Driver, FetchPlan, NetConn, NetError};

/// One measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfReport {
    /// Payload bytes delivered (RCP: received and checked; TCP-like: written and
    /// acknowledged, the connection closed cleanly).
    pub bytes: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl PerfReport {
    /// Goodput in bits per second.
    pub fn bps(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.seconds.max(1e-9)
    }
}

/// How much to send: a byte count, or as much as fits in a duration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Amount {
    /// Exactly this many bytes.
    Bytes(u64),
    /// For this long.
    Duration(Duration),
}

/// RCP goodput: fetches a generated object from `server`.
pub async fn perf_rcp(
    server: SocketAddr,
    via: SocketAddr,
    cc: RcpCc,
    amount: Amount,
) -> Result<PerfReport, NetError> {
    let mut plan = FetchPlan::new("", vec![server], vec![via]);
    plan.cc = cc;
    plan.max_attempts = 1;
    let (bytes, duration) = match amount {
        Amount::Bytes(n) => (n, None),
        Amount::Duration(d) => (crate::store::MAX_PERF_OBJECT, Some(d)),
    };
    let (bytes, seconds) = receive_generated(&plan, bytes, duration).await?;
    Ok(PerfReport { bytes, seconds })
}

/// TCP-like goodput: writes the pattern to `server`'s discard sink and closes; the time
/// ends when the close completes (everything acknowledged).
pub async fn perf_tcp(
    server: SocketAddr,
    via: SocketAddr,
    cc: CcKind,
    amount: Amount,
) -> Result<PerfReport, NetError> {
    let mut d: Driver<NoAcceptor<NetConn>> = Driver::bind(
        &[crate::LocalSpec::addr(via)],
        EndpointConfig::default(),
        NoAcceptor::default(),
    )?;
    let now = d.now();
    let mut c = tcp_connect(cc, now, None)?;
    // The server reads and drops what follows this request (`docs/RUNTIME.md`, "TCP get").
    let request = TcpRequest::Discard.encode();
    if c.write(&request) < request.len() {
        return Err(NetError::RequestTooLarge);
    }
    let path = PathAddrs {
        path: PathId::PRIMARY,
        local: 0,
        remote: server,
    };
    let h = d
        .endpoint()
        .insert(now, NetConn::Tcp(Box::new(c)), &[path])?;
    let started = Clock::wall();
    let (limit, until) = match amount {
        Amount::Bytes(n) => (n, None),
        Amount::Duration(t) => (u64::MAX, Some(started + t)),
    };
    let mut chunk = vec![0u8; 256 << 10];
    let mut written = 0u64;
    let mut closed = false;
    // Bounded: a connection that stops making progress times out in the engine.
    loop {
        d.step(Duration::from_millis(20)).await;
        let ep = d.endpoint();
        while let Some(ev) = ep.poll_event() {
            if let EndpointEvent::Removed { conn, .. } = ev {
                let NetConn::Tcp(mut c) = conn else { continue };
                let mut failed = false;
                while let Some(ev) = c.poll_event() {
                    failed |= matches!(ev, tcp::Event::Reset | tcp::Event::TimedOut);
                }
                return if closed && !failed {
                    Ok(PerfReport {
                        bytes: written,
                        seconds: started.elapsed().as_secs_f64(),
                    })
                } else {
                    Err(NetError::Unreachable {
                        name: server.to_string(),
                        reason: format!("the connection ended in state {:?}", c.state()),
                    })
                };
            }
        }
        let Some(NetConn::Tcp(c)) = ep.connection_mut(h) else {
            continue;
        };
        // Take the events (a drained connection has none left): the clean close ends the
        // measurement; a reset or timeout fails it.
        while let Some(ev) = c.poll_event() {
            match ev {
                tcp::Event::Closed if closed => {
                    return Ok(PerfReport {
                        bytes: written,
                        seconds: started.elapsed().as_secs_f64(),
                    })
                }
                tcp::Event::Reset | tcp::Event::TimedOut => {
                    return Err(NetError::Unreachable {
                        name: server.to_string(),
                        reason: format!("the connection ended: {ev:?}"),
                    })
                }
                _ => {}
            }
        }
        // Our FIN acknowledged (so every byte) and the server's received: done, without
        // waiting out TIME-WAIT.
        if closed && matches!(c.state(), tcp::State::TimeWait | tcp::State::Closed) {
            return Ok(PerfReport {
                bytes: written,
                seconds: started.elapsed().as_secs_f64(),
            });
        }
        let stop = until.is_some_and(|u| Clock::wall() >= u);
        while !closed && !stop && written < limit {
            let want = usize::try_from((limit - written).min(chunk.len() as u64)).unwrap_or(0);
            crate::pattern::fill(&mut chunk[..want], written);
            let n = c.write(&chunk[..want]);
            written += n as u64;
            if n < want {
                break;
            }
        }
        if !closed && (stop || written >= limit) {
            c.close();
            closed = true;
        }
    }
}
