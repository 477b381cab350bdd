//! The R²CP receiver engine (rcp-r2cp.txt §4.2–4.3): the pipes, the shared receive buffer, the
//! *pending* and reassignment sets, and the scheduler that binds global ranges to pipe
//! requests. Driving contract as [`crate::rcp::RcpReceiver`]: feed datagrams, call
//! `poll_transmit` until `None`, re-arm the timer from `poll_timeout`, drain `poll_event`, read.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use roam_wire::{ConnId, Data, Flags};

use super::flow::Reservations;
use super::policy::{TokenBucket, TokenPolicy};
use super::ranges::RangeSet;
use super::slot::{Out, PipeState, Slot};

mod head;
mod schedule;
use super::{PipeId, PipeSpec, R2cpError, R2cpEvent, Removal, Scheme};
use crate::endpoint::{EndpointConnection, Outgoing, PathId};
use crate::linkinfo::LinkInfo;
use crate::loss_cause::Scheme as LossScheme;
use crate::rcp::estimated_facts::HoleJudge;
use crate::rcp::{
    echo_rtt, pipe_for, Arrival, ControlDue, ControlTimer, Phase, RcpConfig, RecvBuffer,
};
use crate::Time;

/// Why a pipe is deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Deletion {
    /// Make-before-break, done: FIN, then removal.
    Drained,
    /// Break-before-make (or the interface went down): removed now.
    Broken,
    /// Its sender failed it: removed now.
    Failed,
}

/// Counters of an R²CP receiver.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct R2cpStats {
    /// DATA payloads received.
    pub data_received: u64,
    /// DATA payloads already held.
    pub duplicates: u64,
    /// Arrivals that found the buffer at least 75 % full (Fig. 12(c)).
    pub arrivals_buffer_75: u64,
    /// Bytes bound to requests for the first time (taken from *pending*).
    pub bytes_bound_new: u64,
    /// Bytes bound again (holes: lost, or outstanding on a deleted pipe).
    pub bytes_rebound: u64,
    /// Holes moved from the pipe that lost them to another pipe.
    pub reassigned: u64,
    /// Pipes that failed.
    pub pipes_failed: u64,
    /// Bytes requested a second time while their first request was still outstanding: the
    /// blocking hole rescued through a faster pipe, and the units of a silent pipe
    /// (`docs/R2CP.md`, "Head-of-line awareness"). The overhead of head-of-line awareness.
    pub bytes_redundant: u64,
    /// Times a pipe was taken for dead after a silence.
    pub silences: u64,
}

/// What a host may read about one pipe.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PipeInfo {
    /// Its name.
    pub id: PipeId,
    /// Its path.
    pub path: PathId,
    /// Life state.
    pub state: PipeState,
    /// Draining (make-before-break).
    pub draining: bool,
    /// Congestion window (bytes).
    pub cwnd: u64,
    /// Smoothed RTT, if sampled.
    pub srtt: Option<Duration>,
    /// Units outstanding.
    pub outstanding: usize,
    /// Payload bytes new to the buffer that arrived through it.
    pub bytes_received: u64,
    /// Re-requests and timeouts of its pipe.
    pub rerequests: u64,
    /// Timeouts.
    pub timeouts: u64,
    /// Window reductions (recovery episodes entered).
    pub recoveries: u64,
    /// Holes declared and then answered by their original request (reordering, not loss).
    pub spurious_holes: u64,
    /// Holes answered without a window cut because they were wireless losses (ELN).
    pub wireless_holes: u64,
}

/// An R²CP connection at the receiver. See the module docs and `docs/R2CP.md`.
#[derive(Debug)]
pub struct R2cpReceiver {
    config: Arc<RcpConfig>,
    scheme: Scheme,
    object: Vec<u8>,
    mss: u64,
    range_start: u64,
    range_end: u64,
    buf: RecvBuffer,
    /// Global ranges not yet requested (§4.3.1 *pending*).
    pending: RangeSet,
    /// Global ranges whose pipe is gone, to be bound again first (ours).
    reassign: RangeSet,
    /// Requested ranges whose data has not arrived: what the buffer reserves (§3.3.4).
    reserved: Reservations,
    /// Coupled increase across the pipes (RFC 6356 LIA; `docs/R2CP.md`, "Coupling").
    coupled: bool,
    /// Ranges requested a second time while their first request is outstanding (`head.rs`),
    /// at or above RCV.NXT: never a third time.
    rescued: RangeSet,
    slots: Vec<Slot>,
    policy: Option<TokenBucket>,
    /// The last scheduling round stopped for lack of tokens.
    token_blocked: bool,
    events: VecDeque<R2cpEvent>,
    connected: bool,
    eof: bool,
    closed: bool,
    next_tx: usize,
    stats: R2cpStats,
    /// Which pipe delivered which bytes new to the buffer, while recorded
    /// ([`R2cpReceiver::record_deliveries`]); drained by [`R2cpReceiver::take_deliveries`].
    deliveries: Option<Vec<(PipeId, u64, u64)>>,
}

impl R2cpReceiver {
    /// A connection for bytes `range.0 .. range.1` of `object` (`u64::MAX` as the end: to the
    /// end of the object), with no pipe yet ([`R2cpReceiver::add_pipe`]).
    pub fn new(
        config: Arc<RcpConfig>,
        scheme: Scheme,
        object: &[u8],
        range: (u64, u64),
    ) -> Result<R2cpReceiver, R2cpError> {
        config.validate()?;
        let (start, end) = range;
        if end < start {
            return Err(R2cpError::Range);
        }
        let mut pending = RangeSet::new();
        pending.insert(start, end);
        let mss = u64::from(config.mss);
        let scheme = match scheme {
            Scheme::Apps { stripe } => Scheme::Apps {
                stripe: stripe.max(1),
            },
            s => s,
        };
        Ok(R2cpReceiver {
            mss,
            scheme,
            object: object.to_vec(),
            range_start: start,
            range_end: end,
            buf: RecvBuffer::new(start),
            pending,
            reassign: RangeSet::new(),
            reserved: Reservations::default(),
            rescued: RangeSet::new(),
            coupled: false,
            slots: Vec::new(),
            policy: None,
            token_blocked: false,
            events: VecDeque::new(),
            connected: false,
            eof: start == end,
            closed: false,
            next_tx: 0,
            stats: R2cpStats::default(),
            deliveries: None,
            config,
        })
    }

    /// Creates a pipe (§4.2: "a new RCP pipe between the newly active interface and the
    /// server is created"); its SYN names the object and the current in-order point.
    pub fn add_pipe(&mut self, now: Time, spec: PipeSpec) -> Result<(), R2cpError> {
        if self
            .slots
            .iter()
            .any(|s| s.id() == spec.id || s.conn_id() == spec.conn_id)
        {
            return Err(R2cpError::DuplicatePipe(spec.id));
        }
        // Local sequence space from 0 (§4.2).
        let pipe = pipe_for(&self.config, spec.cc, 0);
        let rto = Duration::from_millis(self.config.initial_rto_ms);
        let mut slot = Slot::new(spec, pipe, self.buf.rcv_nxt(), now, rto);
        slot.joined = self.stats.data_received > 0;
        if self.eof {
            slot.close(now);
        }
        self.slots.push(slot);
        Ok(())
    }

    /// Deletes a pipe (make-before-break or break-before-make, §2.2.1). Unknown ids are
    /// ignored.
    pub fn remove_pipe(&mut self, now: Time, id: PipeId, how: Removal) {
        let Some(i) = self.slots.iter().position(|s| s.id() == id) else {
            return;
        };
        match how {
            Removal::Drain if self.slots[i].state == PipeState::Established => {
                self.slots[i].draining = true;
                self.retire_drained(now);
            }
            _ if self.slots[i].state == PipeState::Closing => {}
            _ => self.delete(now, i, Deletion::Broken),
        }
    }

    /// Sets or clears the aggregation policy (§4.4.3).
    pub fn set_policy(&mut self, now: Time, policy: Option<TokenPolicy>) {
        self.policy = policy.map(|p| TokenBucket::new(p, now));
        self.token_blocked = false;
    }

    /// Couples (or uncouples) the window increase of the pipes (RFC 6356 LIA: at a bottleneck
    /// the pipes share, the connection takes about one flow's share). Off by default
    /// (`docs/R2CP.md`, "Coupling").
    pub fn set_coupled(&mut self, on: bool) {
        self.coupled = on;
        if !on {
            for s in &mut self.slots {
                s.pipe.set_coupling(None);
            }
        }
    }

    /// Whether the pipes' increase is coupled.
    pub fn is_coupled(&self) -> bool {
        self.coupled
    }

    /// Refreshes every pipe's coupling from the windows and RTTs of the established pipes.
    fn couple(&mut self) {
        let lia = crate::cc::Coupling::lia(
            self.slots
                .iter()
                .filter(|s| s.state == PipeState::Established && !s.draining)
                .filter_map(|s| Some((s.pipe.cwnd(), s.pipe.rtt().srtt()?))),
        );
        for s in &mut self.slots {
            s.pipe.set_coupling(lia);
        }
    }

    /// Local link facts for one pipe's controller.
    pub fn set_link_info(&mut self, now: Time, id: PipeId, info: &LinkInfo) {
        if let Some(s) = self.slots.iter_mut().find(|s| s.id() == id) {
            s.pipe.set_link_info(now, &info.sanitized());
        }
    }

    /// Pipe `id` estimates its wireless-loss facts itself (`Some(scheme)`, issue 30): every
    /// hole an arrival reveals in its local sequence space is judged by `scheme`
    /// (`crate::loss_cause`) and, if judged wireless, marked corrupted as
    /// [`R2cpReceiver::note_corrupted`] would mark it; the host's reports for the pipe are then
    /// ignored. `None` (the default): facts come from the host. Unknown ids are ignored.
    pub fn set_loss_estimator(&mut self, id: PipeId, scheme: Option<LossScheme>) {
        let mss = self.mss;
        if let Some(s) = self.slots.iter_mut().find(|s| s.id() == id) {
            s.judge = scheme.map(|sc| HoleJudge::new(sc, mss));
        }
    }

    /// The host saw a DATA for global offset `seq` corrupted on pipe `id`'s wireless hop
    /// (per-hole ELN, §3.4.2). Ignored for a pipe that estimates its facts.
    pub fn note_corrupted(&mut self, id: PipeId, seq: u64) {
        if let Some(s) = self
            .slots
            .iter_mut()
            .find(|s| s.id() == id && s.judge.is_none())
        {
            if let Some(local) = s.binding.local(seq) {
                s.pipe.note_corrupted(local);
            }
        }
    }

    /// The assignment scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// Counters.
    pub fn stats(&self) -> R2cpStats {
        self.stats
    }

    /// The pipes, in creation order.
    pub fn pipes(&self) -> impl Iterator<Item = PipeInfo> + '_ {
        self.slots.iter().map(|s| {
            let ps = s.pipe.stats();
            PipeInfo {
                id: s.id(),
                path: s.spec.path,
                state: s.state,
                draining: s.draining,
                cwnd: s.pipe.cwnd(),
                srtt: s.pipe.rtt().srtt(),
                outstanding: s.binding.len(),
                bytes_received: s.bytes_received,
                rerequests: ps.rerequests,
                timeouts: ps.timeouts,
                recoveries: ps.recoveries,
                spurious_holes: ps.spurious_holes,
                wireless_holes: ps.wireless_holes,
            }
        })
    }

    /// RCV.NXT.
    pub fn rcv_nxt(&self) -> u64 {
        self.buf.rcv_nxt()
    }

    /// Offset of the next byte [`R2cpReceiver::read`] returns.
    pub fn read_point(&self) -> u64 {
        self.buf.read_point()
    }

    /// Bytes held in the receive buffer (in order and not read, plus out of order).
    pub fn buffered(&self) -> usize {
        self.buf.readable() + self.buf.out_of_order_bytes()
    }

    /// Bytes the receive buffer is charged for (§3.3.4): held (in order and not read, or out
    /// of order) plus requested and not yet arrived. At most the receive buffer plus one
    /// segment (`docs/R2CP.md`, "Flow control").
    pub fn charged(&self) -> u64 {
        self.charge().charged()
    }

    /// Global ranges not yet requested.
    pub fn pending(&self) -> &RangeSet {
        &self.pending
    }

    /// Global ranges waiting to be requested again (their pipe is gone).
    pub fn reassign_queue(&self) -> &RangeSet {
        &self.reassign
    }

    /// True once every byte arrived.
    pub fn is_complete(&self) -> bool {
        self.eof
    }

    /// True once every pipe closed after completion.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Next event.
    pub fn poll_event(&mut self) -> Option<R2cpEvent> {
        self.events.pop_front()
    }

    /// Records, from now on, which pipe delivered each range of bytes new to the receive
    /// buffer (the first copy stored; duplicates are not recorded), for a caller that must
    /// know where bytes came from (e.g. to blame the server whose bytes fail verification).
    /// Off by default; the caller drains the record with [`R2cpReceiver::take_deliveries`].
    pub fn record_deliveries(&mut self) {
        self.deliveries.get_or_insert_with(Vec::new);
    }

    /// The (pipe, first byte, end) of every range stored since the last call, in arrival
    /// order; empty unless [`R2cpReceiver::record_deliveries`] was called.
    pub fn take_deliveries(&mut self) -> Vec<(PipeId, u64, u64)> {
        self.deliveries
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Moves up to `max` in-order bytes into `out`.
    pub fn read(&mut self, out: &mut Vec<u8>, max: usize) -> usize {
        self.buf.read(out, max)
    }

    /// Handles one DATA for one of the pipes. Foreign or malformed datagrams are errors.
    pub fn handle_datagram(&mut self, now: Time, bytes: &[u8]) -> Result<(), R2cpError> {
        let d = Data::decode(bytes)?;
        let Some(i) = self.slots.iter().position(|s| s.conn_id() == d.conn_id) else {
            return Err(R2cpError::ForeignConnection);
        };
        if d.flags.contains(Flags::RST) {
            self.fail(now, i);
            return Ok(());
        }
        let phase = match self.slots[i].state {
            PipeState::Connecting => Phase::Handshake,
            PipeState::Established => Phase::Open,
            PipeState::Closing => Phase::Closing,
        };
        // The RCP receiver's handshake and teardown rules, per pipe.
        match self.slots[i].wire.classify(phase, &d) {
            Arrival::Ignored => return Ok(()),
            Arrival::SynAck { token, object_len } => {
                if let Some(len) = object_len {
                    self.clip_range(len);
                }
                self.slots[i].on_established(now, token);
                self.events.push_back(R2cpEvent::PipeUp(self.slots[i].id()));
                if !self.connected {
                    self.connected = true;
                    self.events.push_back(R2cpEvent::Connected { object_len });
                }
            }
            Arrival::Fin => {
                let id = self.slots[i].id();
                self.slots.remove(i);
                self.events.push_back(R2cpEvent::PipeClosed(id));
                self.check_closed();
                return Ok(());
            }
            Arrival::Data => {}
        }
        self.slots[i].wire.on_data(&d);
        if !d.payload.is_empty() {
            self.on_payload(now, i, &d);
        }
        self.retire_drained(now);
        self.check_complete(now);
        Ok(())
    }

    /// The first sender to report the object's length bounds the range.
    fn clip_range(&mut self, len: u64) {
        if len < self.range_end {
            self.range_end = len.max(self.range_start);
            self.pending.truncate(self.range_end);
            self.reassign.truncate(self.range_end);
            self.reserved.truncate(self.range_end);
        }
    }

    fn on_payload(&mut self, now: Time, i: usize, d: &Data<'_>) {
        self.stats.data_received += 1;
        if self.coupled {
            self.couple();
        }
        let rtt = echo_rtt(now, d.ts_ecr);
        // Only a joining pipe's slow start ends on delay: the pipes scan only for those.
        let hol = self.slots[i].joined && self.hol_applies();
        let mss = self.mss;
        let slot = &mut self.slots[i];
        // Back from global to local (§4.2).
        let bound = slot.binding.local(d.seq).and_then(|l| {
            let g = slot.binding.global(l)?;
            Some((l, g.1))
        });
        let min_rtt = slot.pipe.rtt().min_rtt();
        slot.est
            .on_arrival(now, bound.map(|b| b.0), d.payload.len() as u64, min_rtt);
        slot.silent = false;
        let limit = match bound {
            Some((local, end)) => {
                slot.binding.unbind(local);
                slot.judge_arrival(now, local, d.payload.len() as u64, d.ts_val);
                slot.pipe.on_arrival(now, local, rtt);
                if hol {
                    Self::exit_slow_start_on_delay(slot, rtt, mss);
                }
                // Not past the object a sender reported since (its reservation is gone).
                end.min(self.range_end)
            }
            // Data this pipe requested before its unit moved elsewhere: kept only where the
            // connection still awaits it (a reservation, §3.3.4); data nobody requested has no
            // room in the buffer and is dropped.
            None => self.reserved.awaited_end(d.seq).unwrap_or(d.seq),
        };
        if self.buf.has(d.seq, d.end()) || d.seq < self.buf.rcv_nxt() {
            self.stats.duplicates += 1;
        } else {
            let n = d.payload.len().min(limit.saturating_sub(d.seq) as usize);
            let held = (self.buf.readable() + self.buf.out_of_order_bytes()) as u64;
            if held.saturating_mul(4) >= self.config.recv_buffer.saturating_mul(3) {
                self.stats.arrivals_buffer_75 += 1;
            }
            let end = d.seq + n as u64;
            self.buf.insert(d.seq, &d.payload[..n]);
            if self.buf.has(d.seq, end) {
                self.reserved.fill(d.seq, end);
                self.slots[i].bytes_received += n as u64;
                if let Some(log) = self.deliveries.as_mut() {
                    log.push((self.slots[i].id(), d.seq, end));
                }
            }
        }
        // A unit this pipe waited for that is still not held whole (a short DATA, or one the
        // buffer refused for its out-of-order piece limit): as lost. It keeps its reservation
        // and is requested again through the first pipe with room.
        if let Some((_, unit_end)) = bound {
            if !self.buf.has(d.seq, unit_end) {
                self.reassign
                    .insert(d.seq.max(self.buf.rcv_nxt()), unit_end.min(self.range_end));
            }
        }
    }

    fn check_complete(&mut self, now: Time) {
        if !self.eof && self.buf.rcv_nxt() >= self.range_end && self.connected {
            self.eof = true;
            self.events.push_back(R2cpEvent::Eof);
            self.pending = RangeSet::new();
            self.reassign = RangeSet::new();
            self.reserved.clear();
            for s in &mut self.slots {
                s.close(now);
            }
        }
    }

    fn check_closed(&mut self) {
        if self.eof && self.slots.is_empty() && !self.closed {
            self.closed = true;
            self.events.push_back(R2cpEvent::Closed);
        }
    }

    /// Deletes slot `i`, moving its outstanding units to the reassignment queue. A drained
    /// pipe says goodbye to its sender (FIN, then it is removed); a broken or failed one is
    /// removed at once.
    fn delete(&mut self, now: Time, i: usize, how: Deletion) {
        for (s, e) in self.slots[i].binding.globals() {
            if !self.buf.has(s, e) {
                self.reassign.insert(s, e);
            }
        }
        let id = self.slots[i].id();
        match how {
            Deletion::Drained => {
                let slot = &mut self.slots[i];
                slot.binding = super::binding::Binding::new();
                slot.est.forget_all();
                slot.draining = false;
                slot.close(now);
                return;
            }
            Deletion::Failed => {
                self.stats.pipes_failed += 1;
                self.events.push_back(R2cpEvent::PipeFailed(id));
            }
            Deletion::Broken => self.events.push_back(R2cpEvent::PipeClosed(id)),
        }
        self.slots.remove(i);
        self.next_tx = 0;
        self.check_closed();
    }

    fn fail(&mut self, now: Time, i: usize) {
        if self.slots[i].state == PipeState::Closing {
            let id = self.slots[i].id();
            self.slots.remove(i);
            self.events.push_back(R2cpEvent::PipeClosed(id));
            self.check_closed();
            return;
        }
        self.delete(now, i, Deletion::Failed);
    }

    /// Deletes draining pipes with nothing outstanding.
    fn retire_drained(&mut self, now: Time) {
        while let Some(i) = self
            .slots
            .iter()
            .position(|s| s.draining && s.binding.is_empty() && s.state == PipeState::Established)
        {
            self.delete(now, i, Deletion::Drained);
        }
    }

    /// When [`R2cpReceiver::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Time> {
        let mut t: Option<Time> = None;
        let mut min = |x: Option<Time>| {
            if let Some(x) = x {
                t = Some(t.map_or(x, |t| t.min(x)));
            }
        };
        for s in &self.slots {
            min(s.wire.control.at);
            if s.state == PipeState::Established {
                min(s.pipe.poll_timeout());
            }
        }
        if self.token_blocked {
            min(self.policy.as_ref().and_then(|b| b.ready_at(self.mss)));
        }
        // A pipe falling silent is noticed on time (`head.rs`).
        for i in 0..self.slots.len() {
            min(self.silent_at(i));
        }
        t
    }

    /// Runs due timers.
    pub fn handle_timeout(&mut self, now: Time) {
        // A pipe whose silence limit passed is taken for dead now (its instant is in
        // `poll_timeout`), whether or not the host polls for datagrams next.
        self.detect_silence(now);
        if self.token_blocked
            && self
                .policy
                .as_ref()
                .and_then(|b| b.ready_at(self.mss))
                .is_some_and(|t| t <= now)
        {
            self.token_blocked = false;
        }
        let mut i = 0;
        while i < self.slots.len() {
            let s = &mut self.slots[i];
            let base = match s.state {
                PipeState::Connecting => Duration::from_millis(self.config.initial_rto_ms),
                _ => s.pipe.rtt().rto(),
            };
            match s
                .wire
                .control
                .on_timeout(now, base, self.config.max_syn_retries)
            {
                ControlDue::No => {}
                ControlDue::GiveUp => {
                    // No answer to the SYN (or FIN): the pipe is gone.
                    self.fail(now, i);
                    continue;
                }
                ControlDue::Resend => match s.state {
                    PipeState::Connecting => s.outgoing.push_back(Out::Syn),
                    PipeState::Closing => s.outgoing.push_back(Out::Fin),
                    PipeState::Established => s.wire.control = ControlTimer::default(),
                },
            }
            if s.state == PipeState::Established
                && s.pipe.handle_timeout(now)
                && (s.pipe.rtt().backoff_count() > self.config.max_retries || s.draining)
            {
                {
                    // The sender stopped answering (as RcpReceiver's TimedOut), or a draining
                    // pipe timed out: what it had outstanding goes to the other pipes.
                    if s.draining {
                        self.delete(now, i, Deletion::Drained);
                        i += 1;
                    } else {
                        self.fail(now, i);
                    }
                    continue;
                }
            }
            i += 1;
        }
    }

    /// Writes the next REQ (from any pipe, in turn) into `buf`; returns its path and length.
    pub fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<(PathId, usize)> {
        self.make_requests(now);
        let n = self.slots.len();
        for k in 0..n {
            let i = (self.next_tx + k) % n;
            if !self.slots[i].wants_to_send() {
                continue;
            }
            let len = self.slots[i].poll_transmit(now, &self.object, self.mss, buf)?;
            self.next_tx = (i + 1) % n;
            return Some((self.slots[i].spec.path, len));
        }
        None
    }
}

impl EndpointConnection for R2cpReceiver {
    fn conn_ids(&self, out: &mut Vec<(ConnId, PathId)>) {
        out.extend(self.slots.iter().map(|s| (s.conn_id(), s.spec.path)));
    }

    fn handle_datagram(&mut self, now: Time, _path: PathId, datagram: &[u8]) {
        let _ = R2cpReceiver::handle_datagram(self, now, datagram);
    }

    fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Outgoing> {
        R2cpReceiver::poll_transmit(self, now, buf).map(|(path, len)| Outgoing {
            path,
            len,
            more: true,
        })
    }

    fn poll_timeout(&self) -> Option<Time> {
        R2cpReceiver::poll_timeout(self)
    }

    fn handle_timeout(&mut self, now: Time) {
        R2cpReceiver::handle_timeout(self, now)
    }

    fn is_drained(&self) -> bool {
        self.closed && self.buf.readable() == 0
    }

    fn memory_bound(&self) -> usize {
        // §3.3.4's charge bounds the bytes held by the buffer, overdrawn by at most the one
        // unit at RCV.NXT (`BufferCharge::admits`).
        usize::try_from(self.config.recv_buffer.saturating_add(self.mss)).unwrap_or(usize::MAX)
    }
}
