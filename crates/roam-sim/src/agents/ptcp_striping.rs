//! The application striping baselines of ptcp.txt §2 and §5: one independent TCP connection
//! per pipe (the same sans-IO [`Connection`] engine as every TCP flow, each with its own send
//! and receive buffer, congestion control and flow control) and an application on each end
//! that stripes a stream of records over them and puts them back in order.
//!
//! - **Unaware** (§2): "the application stripes data by keeping the send buffer of each pipe
//!   filled": it writes records to one socket until the socket's send buffer is full ("blocks
//!   on a write"), then goes on to the next.
//! - **Smart** (§5: "a striping ratio based on the average bandwidths of the different
//!   links"): records go to the sockets by a fixed weighted round robin of the pipes' weights
//!   (one record the unit, §5.2.2: "the minimum striping unit is one packet"); when the chosen
//!   socket's buffer is full the application waits for it.
//!
//! The receiving application (§2): it reads in-sequence records from every socket; a record
//! beyond the next expected one goes to its resequencing buffer while that has room; when the
//! buffer is full it "peeks into the next available packet in each of the other sockets and
//! reads a packet only when it is the next in-sequence packet". A socket whose records are
//! not read fills its receive buffer and advertises a zero window (head-of-line blocking).
//! The engine has no peek: the application takes one record at a time out of a socket and
//! holds it (the socket's "head") until it can place it — one record per socket more than a
//! true `MSG_PEEK` would hold.
//!
//! A record is a 10-byte header (the payload's stream offset, u64, and its length, u16, big
//! endian) and up to `mss − 10` bytes of the integrity pattern at that offset; the receiver
//! verifies every payload byte and counts only payload as delivered.

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::Rng;
use roam_proto::endpoint::{
    DatagramEvent, Endpoint, EndpointConfig, EndpointEvent, Handle, NoAcceptor, PathAddrs, PathId,
    TokenKey,
};
use roam_proto::tcp::{Connection, Event, TcpAcceptor, TcpConfig, MAX_ISN};
use roam_proto::Time;
use roam_wire::ConnId;

use super::pattern;
use super::ptcp::PtcpPipePlan;
use crate::agent::{Agent, AgentSample, FlowIdx, IfaceIdx, NetCtx, Packet, SockAddr};
use crate::result::FlowFailure;
use crate::rng::{derived_rng, token_key};

/// Bytes of a record's header: the payload's stream offset (u64) and length (u16).
const HEADER: usize = 10;

/// Which application stripes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StripingApp {
    /// Fills each socket's send buffer in turn (ptcp.txt §2).
    Unaware,
    /// Assigns records by a fixed ratio of weights (ptcp.txt §5).
    Smart,
}

/// How to build a striping flow's two agents.
#[derive(Debug, Clone)]
pub struct StripingParams {
    /// The flow.
    pub flow: FlowIdx,
    /// Every connection's options (MSS, buffers, SACK, timers).
    pub config: Arc<TcpConfig>,
    /// One connection per pipe; `cc` is its controller.
    pub pipes: Vec<PtcpPipePlan>,
    /// The smart application's weight per pipe (same order as `pipes`).
    pub weights: Vec<f64>,
    /// The application.
    pub app: StripingApp,
    /// The receiving application's resequencing buffer (payload bytes).
    pub reseq_buffer: u64,
    /// Payload bytes to send (`None`: unbounded).
    pub size: Option<u64>,
    /// The flow's seed: connection identifiers derive from it.
    pub conn_seed: u64,
}

impl StripingParams {
    fn conn_id(&self, k: usize) -> ConnId {
        ConnId(self.conn_seed.rotate_left(23) ^ 0x7374_7269_0000 ^ (k as u64 + 1))
    }

    /// Payload bytes per record.
    fn payload_per_record(&self) -> usize {
        usize::from(self.config.mss).saturating_sub(HEADER).max(1)
    }
}

/// Builds the (sender, receiver) agents of a striping flow.
pub fn striping_agents(
    p: StripingParams,
    sender_port: u16,
    receiver_port: u16,
) -> (Box<dyn Agent>, Box<dyn Agent>) {
    let n = p.pipes.len();
    let sender = StripeSender {
        port: sender_port,
        endpoint: Endpoint::new(
            EndpointConfig {
                idle_timeout: None,
                ..EndpointConfig::default()
            },
            TokenKey::new([0; 16]),
            NoAcceptor::default(),
        ),
        conns: Vec::new(),
        written: 0,
        cursor: 0,
        wrr: vec![0.0; n],
        chosen: None,
        closed: false,
        next_timer: None,
        record: Vec::new(),
        p: p.clone(),
    };
    let receiver = StripeReceiver {
        port: receiver_port,
        endpoint: None,
        conns: Vec::new(),
        reseq: BTreeMap::new(),
        reseq_bytes: 0,
        next: 0,
        next_timer: None,
        p,
    };
    (Box::new(sender), Box::new(receiver))
}

/// A connection while its endpoint holds it, or its final state once removed.
enum Slot {
    Held(Handle),
    Done(Box<Connection>),
}

fn conn_mut<'a, P>(
    ep: &'a mut Endpoint<SockAddr, IfaceIdx, P>,
    slot: &'a mut Slot,
) -> Option<&'a mut Connection>
where
    P: roam_proto::endpoint::Acceptor<Connection = Connection>,
{
    match slot {
        Slot::Held(h) => ep.connection_mut(*h),
        Slot::Done(c) => Some(c),
    }
}

fn conn_ref<'a, P>(
    ep: &'a Endpoint<SockAddr, IfaceIdx, P>,
    slot: &'a Slot,
) -> Option<&'a Connection>
where
    P: roam_proto::endpoint::Acceptor<Connection = Connection>,
{
    match slot {
        Slot::Held(h) => ep.connection(*h),
        Slot::Done(c) => Some(c),
    }
}

/// Marks `handle`'s slot done with the connection's final state.
fn note_removed<'a>(slots: impl Iterator<Item = &'a mut Slot>, handle: Handle, conn: Connection) {
    let mut conn = Some(conn);
    for s in slots {
        if matches!(s, Slot::Held(h) if *h == handle) {
            if let Some(c) = conn.take() {
                *s = Slot::Done(Box::new(c));
            }
        }
    }
}

struct StripeSender {
    p: StripingParams,
    port: u16,
    endpoint: Endpoint<SockAddr, IfaceIdx, NoAcceptor<Connection>>,
    /// One per pipe, in the pipes' order (empty until started).
    conns: Vec<Slot>,
    /// Payload bytes written so far (the next record's offset).
    written: u64,
    /// Unaware: the socket written to until it blocks.
    cursor: usize,
    /// Smart: the smooth weighted round robin's running credits.
    wrr: Vec<f64>,
    /// Smart: the socket the next record must go to (the application waits for it).
    chosen: Option<usize>,
    closed: bool,
    next_timer: Option<Time>,
    record: Vec<u8>,
}

impl StripeSender {
    /// The next record (header and payload) in `self.record`, or false at the end.
    fn make_record(&mut self) -> bool {
        let left = self.p.size.map_or(u64::MAX, |s| s - self.written);
        if left == 0 {
            return false;
        }
        let len = (self.p.payload_per_record() as u64).min(left) as usize;
        self.record.clear();
        self.record.extend_from_slice(&self.written.to_be_bytes());
        self.record.extend_from_slice(&(len as u16).to_be_bytes());
        pattern::fill(self.written, len, &mut self.record);
        true
    }

    /// Smart striping's next socket: smooth weighted round robin over the weights, so the
    /// records follow the ratio as closely as one-record units allow.
    fn pick_weighted(&mut self) -> usize {
        let total: f64 = self.p.weights.iter().sum();
        let mut best = 0;
        for (k, w) in self.p.weights.iter().enumerate() {
            self.wrr[k] += w;
            if self.wrr[k] > self.wrr[best] {
                best = k;
            }
        }
        self.wrr[best] -= total;
        best
    }

    /// Writes whole records while the application may (§2 unaware, §5 smart).
    fn write_records(&mut self) {
        let n = self.conns.len();
        if n == 0 || self.closed {
            return;
        }
        let rec_len = self.p.payload_per_record() + HEADER;
        let mut blocked = 0;
        loop {
            let k = match self.p.app {
                StripingApp::Unaware => self.cursor,
                StripingApp::Smart => match self.chosen {
                    Some(k) => k,
                    None => {
                        let k = self.pick_weighted();
                        self.chosen = Some(k);
                        k
                    }
                },
            };
            let room =
                conn_mut(&mut self.endpoint, &mut self.conns[k]).map_or(0, |c| c.write_capacity());
            if room < rec_len {
                match self.p.app {
                    // Blocked: go on to the next socket, until every one blocked.
                    StripingApp::Unaware => {
                        self.cursor = (k + 1) % n;
                        blocked += 1;
                        if blocked >= n {
                            return;
                        }
                        continue;
                    }
                    // Blocked on the chosen socket: wait for it.
                    StripingApp::Smart => return,
                }
            }
            if !self.make_record() {
                for s in &mut self.conns {
                    if let Some(c) = conn_mut(&mut self.endpoint, s) {
                        c.close();
                    }
                }
                self.closed = true;
                return;
            }
            let Some(c) = conn_mut(&mut self.endpoint, &mut self.conns[k]) else {
                return;
            };
            let wrote = c.write(&self.record);
            debug_assert_eq!(wrote, self.record.len());
            self.written += (self.record.len() - HEADER) as u64;
            blocked = 0;
            self.chosen = None;
        }
    }

    fn after_call(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        self.write_records();
        let mut gave_up = false;
        for s in &mut self.conns {
            if let Some(c) = conn_mut(&mut self.endpoint, s) {
                while let Some(ev) = c.poll_event() {
                    gave_up |= matches!(ev, Event::TimedOut | Event::Reset);
                }
            }
        }
        loop {
            let mut buf = ctx.buffer();
            let Some(t) = self.endpoint.poll_transmit(now, &mut buf) else {
                ctx.give_back(buf);
                break;
            };
            buf.truncate(t.len);
            super::send_counted(ctx, (self.p.flow, t.local, self.port), t.remote, buf);
        }
        while let Some(ev) = self.endpoint.poll_event() {
            if let EndpointEvent::Removed { handle, conn, .. } = ev {
                note_removed(self.conns.iter_mut(), handle, conn);
            }
        }
        self.next_timer = self.endpoint.poll_timeout();
        let (mut retx, mut timeouts, mut recoveries) = (0, 0, 0);
        for s in &self.conns {
            if let Some(c) = conn_ref(&self.endpoint, s) {
                let st = c.stats().sender;
                retx += st.retransmitted_segments;
                timeouts += st.timeouts;
                recoveries += st.recoveries;
            }
        }
        let c = ctx.counters(self.p.flow);
        c.retransmitted_segments = retx;
        c.timeouts = timeouts;
        c.recoveries = recoveries;
        if gave_up {
            c.fail(now, FlowFailure::GaveUp);
        }
    }
}

impl Agent for StripeSender {
    fn start(&mut self, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let mut isn_rng = derived_rng(ctx.rng(), "striping:isn");
        for (k, plan) in self.p.pipes.iter().enumerate() {
            let isn = isn_rng.gen::<u64>() & MAX_ISN;
            let Ok(conn) =
                Connection::connect(self.p.config.clone(), plan.cc, self.p.conn_id(k), isn, now)
            else {
                // The configuration was validated when the scenario was loaded.
                continue;
            };
            let path = PathAddrs {
                path: PathId::PRIMARY,
                local: plan.from_iface,
                remote: plan.receiver,
            };
            if let Ok(h) = self.endpoint.insert(now, conn, &[path]) {
                self.conns.push(Slot::Held(h));
            }
        }
        if self.conns.len() != self.p.pipes.len() {
            ctx.counters(self.p.flow).fail(now, FlowFailure::GaveUp);
            self.conns.clear();
        }
        self.after_call(ctx);
    }

    fn on_packet(&mut self, iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        let mut out = ctx.buffer();
        // An endpoint without an acceptor answers nothing.
        let _ = self
            .endpoint
            .handle(ctx.now(), iface, packet.src, &packet.payload, &mut out);
        ctx.give_back(out);
        self.after_call(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        self.endpoint.handle_timeout(ctx.now());
        self.after_call(ctx);
    }

    fn next_timer(&self) -> Option<Time> {
        self.next_timer
    }

    fn sample(&self) -> AgentSample {
        let mut cwnd = 0;
        let mut acked = 0;
        for s in &self.conns {
            if let Some(c) = conn_ref(&self.endpoint, s) {
                cwnd += c.sender().cwnd();
                acked += c.sender().snd_una().saturating_sub(c.initial_seq());
            }
        }
        AgentSample {
            cwnd_bytes: Some(cwnd),
            seq: Some(acked),
        }
    }
}

/// One accepted connection at the receiving application.
struct RxConn {
    slot: Slot,
    /// The record being taken out of the socket (header, then payload); complete, it is the
    /// socket's head (the emulated peek).
    staged: Vec<u8>,
    eof: bool,
}

/// Bytes a staged record still needs (0: complete).
fn missing(staged: &[u8]) -> usize {
    if staged.len() < HEADER {
        return HEADER - staged.len();
    }
    let len = u16::from_be_bytes([staged[8], staged[9]]) as usize;
    HEADER + len - staged.len()
}

impl RxConn {
    fn head_offset(&self) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.staged[..8]);
        u64::from_be_bytes(b)
    }
}

struct StripeReceiver {
    p: StripingParams,
    port: u16,
    /// Built at the start, with this host's SYN-cookie key.
    endpoint: Option<Endpoint<SockAddr, IfaceIdx, TcpAcceptor>>,
    conns: Vec<RxConn>,
    /// The resequencing buffer: payloads by stream offset.
    reseq: BTreeMap<u64, Vec<u8>>,
    reseq_bytes: u64,
    /// The next in-sequence payload offset.
    next: u64,
    next_timer: Option<Time>,
}

impl StripeReceiver {
    /// The receiving application of ptcp.txt §2: in-sequence records are delivered, others
    /// resequenced while the buffer has room, and when it is full a socket's head is taken
    /// only if it is the next in sequence.
    fn read_records(&mut self, ctx: &mut dyn NetCtx) {
        let Some(ep) = self.endpoint.as_mut() else {
            return;
        };
        let mut payload = Vec::new();
        loop {
            let mut progress = false;
            while let Some(e) = self.reseq.first_entry() {
                if *e.key() != self.next {
                    break;
                }
                let (off, data) = e.remove_entry();
                self.reseq_bytes -= data.len() as u64;
                let c = ctx.counters(self.p.flow);
                c.integrity_errors += pattern::mismatches(off, &data);
                c.bytes_delivered += data.len() as u64;
                self.next = off + data.len() as u64;
                progress = true;
            }
            for k in 0..self.conns.len() {
                let rc = &mut self.conns[k];
                let Some(conn) = conn_mut(ep, &mut rc.slot) else {
                    continue;
                };
                // Take the socket's next record out, a piece at a time.
                let staged = &mut rc.staged;
                while missing(staged) > 0 && conn.receiver().readable() > 0 {
                    let want = missing(staged);
                    if conn.read_with(want, |b| staged.extend_from_slice(b)) == 0 {
                        break;
                    }
                }
                while let Some(ev) = conn.poll_event() {
                    if ev == Event::Eof {
                        rc.eof = true;
                        conn.close();
                    }
                }
                if missing(&rc.staged) > 0 {
                    continue;
                }
                let off = rc.head_offset();
                let len = rc.staged.len() - HEADER;
                if off == self.next {
                    payload.clear();
                    payload.extend_from_slice(&rc.staged[HEADER..]);
                    rc.staged.clear();
                    let c = ctx.counters(self.p.flow);
                    c.integrity_errors += pattern::mismatches(off, &payload);
                    c.bytes_delivered += payload.len() as u64;
                    self.next = off + len as u64;
                    progress = true;
                } else if off < self.next || self.reseq.contains_key(&off) {
                    // Cannot happen with an honest sender: counted as an integrity error.
                    ctx.counters(self.p.flow).integrity_errors += len as u64;
                    rc.staged.clear();
                    progress = true;
                } else if self.reseq_bytes + len as u64 <= self.p.reseq_buffer {
                    self.reseq.insert(off, rc.staged[HEADER..].to_vec());
                    self.reseq_bytes += len as u64;
                    rc.staged.clear();
                    progress = true;
                }
                // Else the buffer is full: peek mode, the head waits.
            }
            if !progress {
                break;
            }
        }
        let all_done = !self.conns.is_empty()
            && self.conns.iter().all(|c| c.eof && c.staged.is_empty())
            && self.reseq.is_empty();
        if all_done && self.p.size.is_some_and(|s| self.next >= s) {
            let now = ctx.now();
            ctx.counters(self.p.flow).completed_at.get_or_insert(now);
        }
    }

    fn accept(&mut self, h: Handle) {
        if !self
            .conns
            .iter()
            .any(|c| matches!(c.slot, Slot::Held(x) if x == h))
        {
            self.conns.push(RxConn {
                slot: Slot::Held(h),
                staged: Vec::new(),
                eof: false,
            });
        }
    }

    fn after_call(&mut self, ctx: &mut dyn NetCtx) {
        self.read_records(ctx);
        let now = ctx.now();
        let Some(ep) = self.endpoint.as_mut() else {
            return;
        };
        loop {
            let mut buf = ctx.buffer();
            let Some(t) = ep.poll_transmit(now, &mut buf) else {
                ctx.give_back(buf);
                break;
            };
            buf.truncate(t.len);
            super::send_counted(ctx, (self.p.flow, t.local, self.port), t.remote, buf);
        }
        let mut accepted = Vec::new();
        while let Some(ev) = ep.poll_event() {
            match ev {
                EndpointEvent::Accepted(h) => accepted.push(h),
                EndpointEvent::Removed { handle, conn, .. } => {
                    note_removed(self.conns.iter_mut().map(|c| &mut c.slot), handle, conn);
                }
            }
        }
        for h in accepted {
            self.accept(h);
        }
        self.next_timer = self.endpoint.as_mut().and_then(|ep| ep.poll_timeout());
    }
}

impl Agent for StripeReceiver {
    fn start(&mut self, ctx: &mut dyn NetCtx) {
        let key = token_key(ctx.rng());
        // A sink sends no data: the default controller.
        if let Ok(acceptor) = TcpAcceptor::new(self.p.config.clone(), Default::default()) {
            self.endpoint = Some(Endpoint::new(EndpointConfig::default(), key, acceptor));
        }
    }

    fn on_packet(&mut self, iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        let now = ctx.now();
        let Some(ep) = self.endpoint.as_mut() else {
            return;
        };
        let mut buf = ctx.buffer();
        match ep.handle(now, iface, packet.src, &packet.payload, &mut buf) {
            Some(DatagramEvent::Respond { local, remote, len }) => {
                buf.truncate(len);
                super::send_counted(ctx, (self.p.flow, local, self.port), remote, buf);
            }
            Some(DatagramEvent::Accepted(h)) => {
                ctx.give_back(buf);
                self.accept(h);
            }
            Some(DatagramEvent::Delivered(_)) | None => ctx.give_back(buf),
        }
        self.after_call(ctx);
    }

    fn on_timer(&mut self, ctx: &mut dyn NetCtx) {
        if let Some(ep) = self.endpoint.as_mut() {
            ep.handle_timeout(ctx.now());
        }
        self.after_call(ctx);
    }

    fn next_timer(&self) -> Option<Time> {
        self.next_timer
    }
}
