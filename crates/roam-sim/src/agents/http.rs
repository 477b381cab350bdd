//! HTTP-like cross traffic: request/response exchanges over one persistent TCP connection, with
//! heavy-tailed (Pareto) response sizes and exponential think times between them — the "HTTP
//! traffic sources" of rcp-r2cp.txt §3.4.3's satellite setup.
//!
//! The server (on the flow's `from` host) opens the connection at the flow's start; the client
//! (on `to`) then sends a [`REQUEST_LEN`]-byte request, the server answers with an 8-byte length
//! followed by that many pattern bytes, the client reads the whole response, thinks, and asks
//! again. Response bytes received count as the flow's delivered bytes.

use std::sync::Arc;
use std::time::Duration;

use rand::Rng;
use roam_proto::cc::CcKind;
use roam_proto::endpoint::NoAcceptor;
use roam_proto::tcp::{Connection, Event, TcpAcceptor, TcpConfig};
use roam_proto::Time;
use roam_wire::ConnId;

use super::pattern;
use super::tcp::draw_isn;
use super::tcp_host::{ActiveHost, PassiveHost};
use crate::agent::{Agent, FlowIdx, IfaceIdx, NetCtx, Packet, SockAddr};

/// Bytes of one request.
pub const REQUEST_LEN: usize = 300;

/// Largest response (bounds the Pareto tail).
const MAX_RESPONSE: u64 = 20 << 20;

/// Response-size and think-time distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HttpParams {
    /// Mean response size (bytes).
    pub mean_response: u64,
    /// Pareto shape of the response size (> 1).
    pub shape: f64,
    /// Mean think time between a response and the next request (exponential).
    pub think: Duration,
}

impl Default for HttpParams {
    fn default() -> Self {
        HttpParams {
            mean_response: 12_000,
            shape: 1.2,
            think: Duration::from_secs(1),
        }
    }
}

/// Where an HTTP flow's endpoints live.
#[derive(Debug, Clone)]
pub struct HttpEnds {
    /// The flow.
    pub flow: FlowIdx,
    /// Server interface and port.
    pub server_iface: IfaceIdx,
    /// Server port.
    pub server_port: u16,
    /// Client interface.
    pub client_iface: IfaceIdx,
    /// Client port.
    pub client_port: u16,
    /// The client's address.
    pub client: SockAddr,
    /// Connection-id seed.
    pub conn_seed: u64,
}

/// Builds the (server, client) agents of an HTTP-like flow.
pub fn http_agents(p: HttpParams, e: &HttpEnds) -> (Box<dyn Agent>, Box<dyn Agent>) {
    let config = Arc::new(TcpConfig::default());
    let server = HttpServer {
        p,
        e: e.clone(),
        config: config.clone(),
        host: ActiveHost::new(
            e.server_iface,
            e.server_port,
            e.flow,
            Some(NoAcceptor::default()),
        ),
        req_bytes: 0,
        out: Vec::new(),
        out_offset: 0,
        sent_body: 0,
        buf: Vec::new(),
    };
    let client = HttpClient {
        p,
        e: e.clone(),
        host: PassiveHost::new(
            e.client_iface,
            e.client_port,
            e.flow,
            TcpAcceptor::new(config, CcKind::default()).ok(),
        ),
        want: None,
        header: Vec::new(),
        got: 0,
        next_request: None,
        connected: false,
        buf: Vec::new(),
    };
    (Box::new(server), Box::new(client))
}

struct HttpServer {
    p: HttpParams,
    e: HttpEnds,
    config: Arc<TcpConfig>,
    host: ActiveHost,
    req_bytes: usize,
    /// Pending response bytes (header + body), written as the send buffer allows.
    out: Vec<u8>,
    out_offset: usize,
    sent_body: u64,
    buf: Vec<u8>,
}

impl HttpServer {
    fn response_size(&self, ctx: &mut dyn NetCtx) -> u64 {
        let k = self.p.shape.max(1.01);
        let xm = self.p.mean_response as f64 * (k - 1.0) / k;
        let u: f64 = ctx.rng().gen_range(f64::EPSILON..1.0);
        ((xm / u.powf(1.0 / k)) as u64).clamp(1, MAX_RESPONSE)
    }

    fn after_call(&mut self, ctx: &mut dyn NetCtx) {
        let Some(conn) = self.host.conn_mut() else {
            self.host.flush(ctx);
            return;
        };
        self.buf.clear();
        self.req_bytes += conn.read(&mut self.buf, usize::MAX);
        while conn.poll_event().is_some() {}
        let mut new = 0;
        while self.req_bytes >= REQUEST_LEN {
            self.req_bytes -= REQUEST_LEN;
            new += 1;
        }
        for _ in 0..new {
            let n = self.response_size(ctx);
            self.out.extend_from_slice(&n.to_be_bytes());
            pattern::fill(self.sent_body, n as usize, &mut self.out);
            self.sent_body += n;
        }
        let Some(conn) = self.host.conn_mut() else {
            self.host.flush(ctx);
            return;
        };
        if self.out_offset < self.out.len() {
            let took = conn.write(&self.out[self.out_offset..]);
            self.out_offset += took;
            if self.out_offset == self.out.len() {
                self.out.clear();
                self.out_offset = 0;
            }
        }
        self.host.flush(ctx);
    }
}

impl Agent for HttpServer {
    fn start(&mut self, ctx: &mut dyn NetCtx) {
        let id = ConnId(self.e.conn_seed ^ rand::RngCore::next_u64(ctx.rng()));
        let isn = draw_isn(ctx.rng());
        let config = self.config.clone();
        if let Ok(c) = Connection::connect(config, CcKind::default(), id, isn, ctx.now()) {
            self.host.connect(c, self.e.client, ctx);
        }
        self.after_call(ctx);
    }

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        self.host.on_packet(packet, ctx);
        self.after_call(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        self.host.on_timer(ctx.now());
        self.after_call(ctx);
    }

    fn next_timer(&self) -> Option<Time> {
        self.host.next_timer()
    }
}

struct HttpClient {
    p: HttpParams,
    e: HttpEnds,
    host: PassiveHost,
    /// Body length of the response being read, once its header arrived.
    want: Option<u64>,
    header: Vec<u8>,
    got: u64,
    next_request: Option<Time>,
    connected: bool,
    buf: Vec<u8>,
}

impl HttpClient {
    fn request(&mut self) {
        if let Some(c) = self.host.conn_mut() {
            let _ = c.write(&[b'G'; REQUEST_LEN]);
        }
    }

    fn after_call(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let Some(conn) = self.host.conn_mut() else {
            self.host.flush(ctx);
            return;
        };
        while let Some(ev) = conn.poll_event() {
            if ev == Event::Connected && !self.connected {
                self.connected = true;
                self.next_request = Some(now);
            }
        }
        self.buf.clear();
        conn.read(&mut self.buf, usize::MAX);
        let mut i = 0;
        let mut done = false;
        while i < self.buf.len() {
            match self.want {
                None => {
                    let need = 8 - self.header.len();
                    let take = need.min(self.buf.len() - i);
                    self.header.extend_from_slice(&self.buf[i..i + take]);
                    i += take;
                    if self.header.len() == 8 {
                        let mut b = [0u8; 8];
                        b.copy_from_slice(&self.header);
                        self.want = Some(u64::from_be_bytes(b));
                        self.header.clear();
                        self.got = 0;
                    }
                }
                Some(n) => {
                    let take = ((n - self.got) as usize).min(self.buf.len() - i);
                    self.got += take as u64;
                    i += take;
                    ctx.counters(self.e.flow).bytes_delivered += take as u64;
                    if self.got == n {
                        self.want = None;
                        done = true;
                    }
                }
            }
        }
        if done {
            let mean = self.p.think.as_secs_f64();
            let u: f64 = ctx.rng().gen_range(f64::EPSILON..1.0);
            self.next_request = Some(now + Duration::from_secs_f64(-mean * u.ln()));
        }
        if self.next_request.is_some_and(|t| t <= now) {
            self.next_request = None;
            self.request();
        }
        self.host.flush(ctx);
    }
}

impl Agent for HttpClient {
    fn start(&mut self, _ctx: &mut dyn NetCtx) {}

    fn on_packet(&mut self, _iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        self.host.on_packet(packet, ctx);
        self.after_call(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        self.host.on_timer(ctx.now());
        self.after_call(ctx);
    }

    fn next_timer(&self) -> Option<Time> {
        [self.host.next_timer(), self.next_request]
            .into_iter()
            .flatten()
            .min()
    }
}
