//! The RCP receiver connection: handshake, request generation (cumulative and pull modes),
//! resequencing, receiver flow control, persist mode, teardown, freeze/thaw
//! (rcp-r2cp.txt §3.2–3.3). Congestion control and loss detection live in its
//! [`ReceiverPipe`]; the wire state (handshake rules, token echo, SYN/FIN retransmission, REQ
//! header, recent pulls) is the `RequestWire` (`request_wire.rs`) every R²CP pipe keeps too.
//! What differs from an R²CP pipe is what it requests: new data in cumulative mode (§3.3.1),
//! where R²CP always pulls (§4.2).
//!
//! Driving contract (sans-IO, as the TCP engine): feed datagrams to
//! [`RcpReceiver::handle_datagram`], call [`RcpReceiver::poll_transmit`] until `None` (requests
//! are generated there, so call it after reads too), arm a timer for
//! [`RcpReceiver::poll_timeout`] and call [`RcpReceiver::handle_timeout`] when it fires
//! (spurious calls are harmless), drain [`RcpReceiver::poll_event`], read in-order bytes with
//! [`RcpReceiver::read`].

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use roam_wire::{ConnId, Data, Flags, PullBlock, RequestMode, MAX_OBJECT_NAME, MAX_REQUEST_BLOCKS};

use super::estimated_facts::HoleJudge;
use super::pipe::ReceiverPipe;
use super::reassembly::{RecvBuffer, PIECE_OVERHEAD};
use super::request_wire::{
    echo_rtt, pipe_for, Arrival, ControlDue, ControlTimer, Phase, RequestWire,
};
use super::{RcpCc, RcpConfig, RcpError, RcpEvent};
use crate::linkinfo::LinkInfo;
use crate::loss_cause::Scheme;
use crate::Time;

/// Connection state of a receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxState {
    /// SYN sent, waiting for SYN+ACK.
    SynSent,
    /// Requesting data.
    Established,
    /// Everything received; FIN sent, waiting for FIN+ACK.
    Closing,
    /// Done (or failed).
    Closed,
}

/// A request waiting to be transmitted.
#[derive(Debug, Clone, Copy)]
enum Outgoing {
    Syn,
    /// Cumulative request up to the current edge (also the handshake's final ACK).
    Cumulative,
    /// A pull of one block, with the three most recent pulls at the time.
    Pull([PullBlock; MAX_REQUEST_BLOCKS], u8),
    Probe,
    Fin,
}

/// Counters of a receiver.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// REQ datagrams sent (all kinds).
    pub requests_sent: u64,
    /// Pull-mode REQs sent (re-requests of holes).
    pub pulls_sent: u64,
    /// Window probes sent in persist mode.
    pub probes_sent: u64,
    /// DATA datagrams with payload received.
    pub data_received: u64,
    /// DATA payloads that were already held.
    pub duplicates: u64,
}

/// The receiving end of an RCP connection. See the module docs.
#[derive(Debug)]
pub struct RcpReceiver {
    config: Arc<RcpConfig>,
    object: Vec<u8>,
    state: RxState,
    pipe: ReceiverPipe,
    mss: u64,
    /// End of the range the application asked for (clipped to the object length once known).
    range_end: u64,
    buf: RecvBuffer,
    /// Most outstanding units (and out-of-order pieces) held: see [`max_units`].
    max_units: usize,
    /// Cumulative request edge: every unit below it has been requested.
    req_edge: u64,
    /// The wire state every R²CP pipe keeps alike: connection id, sender's window and
    /// timestamp, token handshake and SYN/FIN retransmission (`control`), recent pulls.
    wire: RequestWire,
    outgoing: VecDeque<Outgoing>,
    /// Window probing (§3.3.4).
    persist: ControlTimer,
    frozen: Option<FrozenControl>,
    events: VecDeque<RcpEvent>,
    eof_signalled: bool,
    stats: ReceiverStats,
    /// Wireless-loss facts estimated from arrivals instead of reported by the link.
    judge: Option<HoleJudge>,
    /// RCP-STP: request only at status instants (see `docs/RCP.md`).
    status_interval: Option<Duration>,
    next_status: Option<Time>,
}

#[derive(Debug, Clone, Copy)]
struct FrozenControl {
    control_left: Option<Duration>,
    persist_left: Option<Duration>,
    status_left: Option<Duration>,
}

/// Bytes of bookkeeping one outstanding unit costs at most (the pipe's map and lost-set
/// entries).
const UNIT_OVERHEAD: usize = 128;

/// Most units a receiver keeps outstanding, and most out-of-order pieces its buffer holds:
/// twice the segments its buffer holds, plus 64. A unit or piece costs about a hundred bytes
/// of bookkeeping whatever its length, so without this a sender raising its window a byte at
/// a time (or sending one-byte fragments) would make the receiver spend a hundred times its
/// buffer. Full-size units never reach it (the buffer bounds what is outstanding).
pub(crate) fn max_units(config: &RcpConfig) -> usize {
    let segments = config.recv_buffer / u64::from(config.mss.max(1));
    usize::try_from(segments)
        .unwrap_or(usize::MAX)
        .saturating_mul(2)
        .saturating_add(64)
}

impl RcpReceiver {
    /// Opens a connection asking for bytes `range.0 .. range.1` of the object `object` (use
    /// `u64::MAX` as the end for "to the end of the object"). The SYN is sent on the next
    /// [`RcpReceiver::poll_transmit`].
    pub fn connect(
        config: Arc<RcpConfig>,
        cc: RcpCc,
        conn_id: ConnId,
        object: &[u8],
        range: (u64, u64),
        now: Time,
    ) -> Result<RcpReceiver, RcpError> {
        config.validate()?;
        let mss = u64::from(config.mss);
        let (start, end) = range;
        if end < start {
            return Err(RcpError::Range);
        }
        let pipe = pipe_for(&config, cc, start);
        let status_interval = (config.status_interval_ms > 0)
            .then(|| Duration::from_millis(config.status_interval_ms));
        let max_units = max_units(&config);
        Ok(RcpReceiver {
            object: object.to_vec(),
            state: RxState::SynSent,
            pipe,
            mss,
            range_end: end,
            buf: RecvBuffer::with_max_pieces(start, max_units),
            max_units,
            req_edge: start,
            wire: RequestWire::new(
                conn_id,
                start,
                now,
                Duration::from_millis(config.initial_rto_ms),
            ),
            outgoing: VecDeque::from([Outgoing::Syn]),
            persist: ControlTimer::default(),
            frozen: None,
            events: VecDeque::new(),
            eof_signalled: false,
            stats: ReceiverStats::default(),
            judge: None,
            status_interval,
            next_status: None,
            config,
        })
    }

    /// Estimates the wireless-loss facts itself (`Some(scheme)`): every hole an arrival
    /// reveals is judged by `scheme` (`crate::loss_cause`) and, if judged wireless, marked
    /// corrupted as [`RcpReceiver::note_corrupted`] would (ELN, with `eln` on). The host then
    /// reports no corruption itself (`estimated_facts.rs`). `None` (the default): facts come
    /// from the host only.
    pub fn set_loss_estimator(&mut self, scheme: Option<Scheme>) {
        self.judge = scheme.map(|s| HoleJudge::new(s, self.mss));
    }

    /// Connection state.
    pub fn state(&self) -> RxState {
        self.state
    }

    /// The receiver pipe (congestion window, RTT, loss counters).
    pub fn pipe(&self) -> &ReceiverPipe {
        &self.pipe
    }

    /// The connection's identifier (every datagram of the connection carries it).
    pub fn conn_id(&self) -> ConnId {
        self.wire.conn_id
    }

    /// Counters.
    pub fn stats(&self) -> ReceiverStats {
        self.stats
    }

    /// RCV.NXT.
    pub fn rcv_nxt(&self) -> u64 {
        self.buf.rcv_nxt()
    }

    /// Offset of the next byte [`RcpReceiver::read`] returns.
    pub fn read_point(&self) -> u64 {
        self.buf.read_point()
    }

    /// The cumulative request edge.
    pub fn request_edge(&self) -> u64 {
        self.req_edge
    }

    /// The sender's advertised window (highest offset requestable).
    pub fn sender_window(&self) -> u64 {
        self.wire.snd_wnd
    }

    /// True while in persist mode (blocked by the sender's window, probing).
    pub fn in_persist(&self) -> bool {
        self.persist.at.is_some()
    }

    /// The three most recently pulled blocks, newest first.
    pub fn recent_pulls(&self) -> impl Iterator<Item = &PullBlock> {
        self.wire.pulls.iter()
    }

    /// Next event for the application.
    pub fn poll_event(&mut self) -> Option<RcpEvent> {
        self.events.pop_front()
    }

    /// Moves up to `max` in-order bytes into `out`.
    pub fn read(&mut self, out: &mut Vec<u8>, max: usize) -> usize {
        self.buf.read(out, max)
    }

    /// The receive buffer (in-order bytes waiting to be read, out-of-order pieces).
    pub fn recv_buffer(&self) -> &RecvBuffer {
        &self.buf
    }

    /// In-order bytes waiting for [`RcpReceiver::read`].
    pub fn readable(&self) -> usize {
        self.buf.readable()
    }

    /// True while [`RcpReceiver::poll_event`] has something.
    pub fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    /// Object bytes held: in order and unread, and out of order.
    pub fn buffered_bytes(&self) -> usize {
        self.buf.readable() + self.buf.out_of_order_bytes()
    }

    /// Bytes of memory this receiver holds at most, whatever its sender sends: the received
    /// bytes never exceed [`RcpConfig::recv_buffer`] (it accepts only what it requested, and
    /// requests at most that far past its read point), counted twice for the growth of the
    /// buffers that hold them; at most `2 · recv_buffer / mss + 64` outstanding units,
    /// out-of-order pieces and queued requests with their bookkeeping; the object name and the
    /// fixed state.
    pub fn memory_bound(&self) -> usize {
        let data = usize::try_from(self.config.recv_buffer).unwrap_or(usize::MAX);
        let per_unit = PIECE_OVERHEAD + UNIT_OVERHEAD + std::mem::size_of::<Outgoing>();
        data.saturating_mul(2)
            .saturating_add(self.max_units.saturating_mul(per_unit))
            .saturating_add(MAX_OBJECT_NAME)
            .saturating_add(std::mem::size_of::<RcpReceiver>())
    }

    /// Local link facts for the pipe's controller.
    pub fn set_link_info(&mut self, now: Time, info: &LinkInfo) {
        self.pipe.set_link_info(now, &info.sanitized());
    }

    /// The host saw a DATA packet for offset `seq` corrupted on the local wireless hop (its
    /// payload failed the link checksum): per-hole ELN input (§3.4.2).
    pub fn note_corrupted(&mut self, seq: u64) {
        self.pipe.note_corrupted(seq);
    }

    /// Freezes the connection (power management, §3.4.4): no requests, all timers stopped with
    /// their remaining time kept. Requests queued but not yet sent are dropped (their units
    /// become holes at [`RcpReceiver::thaw`]).
    pub fn freeze(&mut self, now: Time) {
        if self.frozen.is_some() {
            return;
        }
        let left = |t: Option<Time>| t.map(|t| t.saturating_since(now));
        self.frozen = Some(FrozenControl {
            control_left: left(self.wire.control.at.take()),
            persist_left: left(self.persist.at.take()),
            status_left: left(self.next_status.take()),
        });
        self.pipe.freeze(now);
        self.outgoing
            .retain(|o| matches!(o, Outgoing::Syn | Outgoing::Fin));
    }

    /// True while frozen.
    pub fn is_frozen(&self) -> bool {
        self.frozen.is_some()
    }

    /// Resumes a frozen connection: timers continue with the time they had left and the holes
    /// of the receive buffer (everything requested and not received) are requested again in
    /// pull mode as the window allows. Returns the holes.
    pub fn thaw(&mut self, now: Time) -> Vec<(u64, u64)> {
        let Some(f) = self.frozen.take() else {
            return Vec::new();
        };
        self.wire.control.at = f.control_left.map(|d| now + d);
        self.persist.at = f.persist_left.map(|d| now + d);
        self.next_status = f.status_left.map(|d| now + d);
        self.pipe.thaw(now)
    }

    /// Handles one datagram from the sender. Malformed or foreign datagrams are ignored
    /// (returned as an error for the host's statistics).
    pub fn handle_datagram(&mut self, now: Time, bytes: &[u8]) -> Result<(), RcpError> {
        let d = Data::decode(bytes)?;
        if d.conn_id != self.wire.conn_id {
            return Err(RcpError::ForeignConnection);
        }
        if d.flags.contains(Flags::RST) {
            self.close(RcpEvent::Reset);
            return Ok(());
        }
        let phase = match self.state {
            RxState::Closed => return Ok(()),
            RxState::SynSent => Phase::Handshake,
            RxState::Established => Phase::Open,
            RxState::Closing => Phase::Closing,
        };
        match self.wire.classify(phase, &d) {
            Arrival::Ignored => return Ok(()),
            Arrival::SynAck { token, object_len } => {
                if let Some(len) = object_len {
                    self.range_end = self.range_end.min(len);
                }
                self.state = RxState::Established;
                self.wire.on_syn_ack(token);
                self.events.push_back(RcpEvent::Connected { object_len });
            }
            Arrival::Fin => {
                self.close(RcpEvent::Closed);
                return Ok(());
            }
            Arrival::Data => {}
        }
        if self.wire.on_data(&d) {
            self.persist = ControlTimer::default();
        }
        if !d.payload.is_empty() {
            self.on_payload(now, &d);
        }
        self.check_complete(now);
        Ok(())
    }

    fn on_payload(&mut self, now: Time, d: &Data<'_>) {
        self.stats.data_received += 1;
        let rtt = echo_rtt(now, d.ts_ecr);
        if self.buf.has(d.seq, d.end()) && !self.pipe.is_outstanding(d.seq) {
            self.stats.duplicates += 1;
            return;
        }
        // Accept only what was requested (the buffer space reserved for it, §3.3.4).
        let limit = self.req_edge.max(self.pipe.highest_requested());
        let n = d
            .payload
            .len()
            .min(usize::try_from(limit.saturating_sub(d.seq)).unwrap_or(usize::MAX));
        let accepted = &d.payload[..n];
        if let Some((from, to)) = self
            .judge
            .as_mut()
            .and_then(|j| j.on_data(now, d.seq, d.seq.saturating_add(n as u64), d.ts_val))
        {
            self.pipe.note_corrupted_in(from, to);
        }
        self.buf.insert(d.seq, accepted);
        // Bytes the buffer refused (its piece limit, a hostile sender's fragments) count as
        // lost: the unit stays outstanding and is requested again.
        if self.buf.has(d.seq, d.seq.saturating_add(n as u64)) {
            self.pipe.on_arrival(now, d.seq, rtt);
        }
    }

    fn check_complete(&mut self, now: Time) {
        if self.state == RxState::Established && self.buf.rcv_nxt() >= self.range_end {
            if !self.eof_signalled {
                self.eof_signalled = true;
                self.events.push_back(RcpEvent::Eof);
            }
            self.state = RxState::Closing;
            self.outgoing.clear();
            self.outgoing.push_back(Outgoing::Fin);
            self.wire.control = ControlTimer::armed(now, self.pipe.rtt().rto());
        }
    }

    fn close(&mut self, ev: RcpEvent) {
        if self.state != RxState::Closed {
            self.state = RxState::Closed;
            self.events.push_back(ev);
        }
        self.outgoing.clear();
        self.wire.control = ControlTimer::default();
        self.persist = ControlTimer::default();
    }

    /// When [`RcpReceiver::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.frozen.is_some() || self.state == RxState::Closed {
            return None;
        }
        let pipe = match self.state {
            RxState::Established => self.pipe.poll_timeout(),
            _ => None,
        };
        [
            pipe,
            self.wire.control.at,
            self.persist.at,
            self.next_status,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Runs due timers.
    pub fn handle_timeout(&mut self, now: Time) {
        if self.frozen.is_some() {
            return;
        }
        let base = match self.state {
            RxState::SynSent => Duration::from_millis(self.config.initial_rto_ms),
            _ => self.pipe.rtt().rto(),
        };
        match self
            .wire
            .control
            .on_timeout(now, base, self.config.max_syn_retries)
        {
            ControlDue::No => {}
            ControlDue::GiveUp => {
                let ev = if self.state == RxState::SynSent {
                    RcpEvent::Failed
                } else {
                    RcpEvent::Closed
                };
                self.close(ev);
                return;
            }
            ControlDue::Resend => match self.state {
                RxState::SynSent => self.outgoing.push_back(Outgoing::Syn),
                RxState::Closing => self.outgoing.push_back(Outgoing::Fin),
                _ => self.wire.control.at = None,
            },
        }
        if self.persist.at.is_some_and(|t| t <= now) {
            // §3.3.4: probe the sender for request permission, backing off like TCP's persist.
            self.persist.tries += 1;
            let interval = self.pipe.rtt().rto() * (1u32 << self.persist.tries.min(6));
            let interval = interval.min(Duration::from_millis(self.config.max_rto_ms));
            self.persist.at = Some(now + interval);
            self.outgoing.push_back(Outgoing::Probe);
            self.stats.probes_sent += 1;
        }
        if self.next_status.is_some_and(|t| t <= now) {
            self.next_status = None; // Requests are made in poll_transmit at this instant.
        }
        if self.state == RxState::Established && self.pipe.handle_timeout(now) {
            if self.pipe.rtt().backoff_count() > self.config.max_retries {
                // The sender is gone (as TCP gives up after its retransmission limit).
                self.close(RcpEvent::TimedOut);
                return;
            }
            // The cumulative request edge may itself have been lost: re-send it too.
            self.outgoing.push_back(Outgoing::Cumulative);
        }
    }

    /// Decides which requests to send now (§3.3.1, §3.3.3, §3.3.4).
    fn make_requests(&mut self, now: Time) {
        if self.state != RxState::Established || self.frozen.is_some() {
            return;
        }
        if let Some(interval) = self.status_interval {
            // RCP-STP: requests leave only at status instants.
            if self.next_status.is_some() {
                return;
            }
            self.next_status = Some(now + interval);
        }
        // Holes first, in pull mode (§3.3.1: "the pull mode only for retransmission").
        while let Some((s, e)) = self.pipe.next_lost() {
            if !self.pipe.has_room(e - s) {
                break;
            }
            if self.buf.has(s, e) {
                // Arrived after all (spurious hole): settle it without a request.
                self.pipe.forget(now, s);
                continue;
            }
            self.pipe.on_requested(now, s, e);
            // The pull rides in its own REQ with the most recent ones (a snapshot now: the
            // REQ is sent later in this poll_transmit, after the pulls queued before it).
            let block = self.wire.pulls.block(s, e);
            self.wire.pulls.push(block);
            let (blocks, n) = self.wire.pulls.recent();
            self.outgoing.push_back(Outgoing::Pull(blocks, n));
        }
        // New data in cumulative mode, within the window, the sender's window and the buffer.
        let limit = self.range_end.min(self.wire.snd_wnd);
        let buffer_end = self
            .buf
            .read_point()
            .saturating_add(self.config.recv_buffer);
        let before = self.req_edge;
        while self.req_edge < limit {
            let end = self.req_edge.saturating_add(self.mss).min(limit);
            if end > buffer_end
                || !self.pipe.has_room(end - self.req_edge)
                || self.pipe.outstanding_units() >= self.max_units
            {
                break;
            }
            self.pipe.on_requested(now, self.req_edge, end);
            self.req_edge = end;
        }
        let queued = self
            .outgoing
            .iter()
            .any(|o| matches!(o, Outgoing::Cumulative));
        if (self.req_edge > before || self.wire.ack_pending) && !queued {
            self.outgoing.push_back(Outgoing::Cumulative);
        }
        // Persist mode: blocked by the sender's window with nothing outstanding (§3.3.4).
        let blocked = self.req_edge >= self.wire.snd_wnd && self.req_edge < self.range_end;
        if blocked && self.pipe.outstanding_units() == 0 {
            if self.persist.at.is_none() {
                self.persist = ControlTimer {
                    at: Some(now + self.pipe.rtt().rto()),
                    tries: 0,
                };
            }
        } else {
            self.persist = ControlTimer::default();
        }
    }

    /// Writes the next request into `buf` (cleared first); returns its length, or `None`.
    pub fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<usize> {
        if self.frozen.is_some() {
            return None;
        }
        self.make_requests(now);
        let out = self.outgoing.pop_front()?;
        // Cumulative mode (§3.3.1): every REQ names the request edge and DEQ, the bytes
        // requested past RCV.NXT, and carries the recent pulls.
        let deq = self.req_edge.saturating_sub(self.buf.rcv_nxt());
        let mut req = self
            .wire
            .request(now, self.req_edge, u32::try_from(deq).unwrap_or(u32::MAX));
        (req.blocks, req.nblocks) = self.wire.pulls.recent();
        match out {
            Outgoing::Syn => RequestWire::make_syn(&mut req, &self.object, self.mss),
            Outgoing::Cumulative => {}
            Outgoing::Pull(blocks, n) => {
                req.mode = RequestMode::PULL;
                req.blocks = blocks;
                req.nblocks = n;
                self.stats.pulls_sent += 1;
            }
            Outgoing::Probe => req.mode = RequestMode::PROBE,
            Outgoing::Fin => req.flags = Flags::FIN | Flags::ACK,
        }
        if !matches!(out, Outgoing::Syn) {
            self.wire.finish_after_syn(&mut req, &self.object);
        }
        // §3.3.1: a pull rides in its own REQ and the next three ("at least four REQs"), then
        // is dropped, so REQs are back to their fixed size once no pull is recent.
        self.wire.pulls.rode(req.blocks());
        buf.clear();
        req.encode(buf);
        self.stats.requests_sent += 1;
        Some(buf.len())
    }
}
