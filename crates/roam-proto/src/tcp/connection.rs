//! The connection state machine (RFC 793 states) tying a [`Sender`] and a [`Receiver`] to the
//! wire format.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use roam_wire::{
    ConnId, DecodeError, Flags, LastLinkReport, LinkInfoReport, Options, ProbeKind, ProbeOption,
    Segment, SegmentHead,
};

use super::config::{Facts, TcpConfigError};
use super::cookie::Negotiated;
pub use super::cookie::MAX_ISN;
use super::estimated_facts::FactsEstimator;
use super::receiver::Receiver;
use super::sender::{earliest, AckMarks, Sender, SenderStats, TxSegment};
use super::TcpConfig;
use crate::cc::CcKind;
use crate::linkinfo::LinkInfo;
use crate::source::ByteSource;
use crate::Time;

/// A SYN-ACK or handshake-completing segment whose timestamp echo implies a round trip this
/// long or longer gives no RTT sample (its echo is stale or forged).
const MAX_RTT_SAMPLE: Duration = Duration::from_secs(120);

/// RFC 793 connection states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// SYN sent, waiting for SYN-ACK. (A server keeps no state before the client's first
    /// segment echoes its SYN cookie, so there is no SYN-RECEIVED state: see
    /// [`super::TcpAcceptor`].)
    SynSent,
    /// Open in both directions.
    Established,
    /// We closed; our FIN is not yet acknowledged.
    FinWait1,
    /// Our FIN is acknowledged; waiting for the peer's.
    FinWait2,
    /// The peer closed; we may still send.
    CloseWait,
    /// Both closed at once; waiting for the ACK of our FIN.
    Closing,
    /// The peer closed first and we closed too; waiting for the ACK of our FIN.
    LastAck,
    /// Both FINs acknowledged; lingering to answer a retransmitted FIN.
    TimeWait,
    /// Done (or aborted).
    Closed,
}

/// Something the application should know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The handshake completed.
    Connected,
    /// In-order data can be read.
    Readable,
    /// The peer finished sending (end of stream after the readable data).
    Eof,
    /// The connection closed cleanly.
    Closed,
    /// The peer reset the connection.
    Reset,
    /// The connection gave up (handshake or retransmission limit reached).
    TimedOut,
}

/// A datagram written by [`Connection::poll_transmit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit {
    /// Bytes written into the caller's buffer.
    pub len: usize,
    /// True if it carries payload being sent for the second time or later.
    pub retransmission: bool,
    /// False when nothing more can follow until a segment arrives, a timer fires or the
    /// application acts (a pure acknowledgement: nothing else was ready when it was chosen);
    /// true when another call may return a segment.
    pub more: bool,
}

/// Per-connection counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnStats {
    /// Datagrams sent.
    pub datagrams_sent: u64,
    /// Bytes sent (whole datagrams).
    pub bytes_sent: u64,
    /// Datagrams received and decoded.
    pub datagrams_received: u64,
    /// Datagrams that failed to decode.
    pub malformed_received: u64,
    /// Sender-side counters.
    pub sender: SenderStats,
}

/// Why a connection (or an acceptor) could not be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    /// The configuration is invalid.
    #[error("invalid configuration: {0}")]
    Config(#[from] TcpConfigError),
    /// An initial sequence number above [`MAX_ISN`].
    #[error("initial sequence number {0} above {MAX_ISN}")]
    IsnOutOfRange(u64),
}

/// A client's wait for proof that the server holds the connection (docs/HANDSHAKE.md): the
/// server keeps no state until the client's first segment arrives, so a client that has
/// nothing outstanding repeats its handshake ACK until the server answers anything.
#[derive(Debug, Clone, Copy)]
struct Unconfirmed {
    /// When to repeat the ACK (if nothing is outstanding then).
    deadline: Time,
    /// Repetitions so far.
    retries: u32,
}

/// One endpoint of a TCP-like connection. See the [module docs](super) for the driving loop.
#[derive(Debug)]
pub struct Connection {
    cfg: Arc<TcpConfig>,
    cc: CcKind,
    conn_id: ConnId,
    state: State,
    /// Our initial sequence number (ISS): the SYN's, or the SYN-ACK's (the SYN cookie).
    iss: u64,
    /// The peer's initial sequence number (IRS), once known.
    irs: u64,
    /// Opened by a validated cookie echo (server side).
    passive: bool,
    /// Client side: the server has not yet shown that it holds the connection.
    unconfirmed: Option<Unconfirmed>,
    sack: bool,
    sender: Sender,
    receiver: Receiver,
    syn_pending: bool,
    syn_deadline: Option<Time>,
    syn_retries: u32,
    time_wait_deadline: Option<Time>,
    rst_pending: bool,
    /// The application closed before the handshake completed.
    close_requested: bool,
    /// Latest facts about the local link, if the host supplied any.
    local_link: Option<LinkInfo>,
    /// Loss facts estimated from arrivals instead of the host's ([`Facts::Estimated`]).
    estimator: Option<FactsEstimator>,
    /// TCP-Probing: the PR1_ACK / PR2_ACK owed to the peer's latest probe.
    probe_reply: Option<ProbeOption>,
    events: VecDeque<Event>,
    stats: ConnStats,
}

/// Heap a connection holds beside its buffers, scoreboard and PER window, at most: the
/// event queue (a handful), TCP-Probing's abandoned exchanges (at most 32: one per power of
/// two of restarts), the controller's state — for TCP-ATL its local-link average (at most 4097
/// change points of 16 bytes, a ring of 8192 after doubling) and its loss window (33 buckets);
/// for BBR its delivered-counter snapshots and per-round bandwidth maxima (fixed rings).
fn heap_slack(cc: CcKind) -> usize {
    const SMALL: usize = 4096;
    match cc {
        CcKind::Atl => SMALL + 8192 * 16,
        CcKind::Bbr | CcKind::BbrAggr => {
            SMALL + 2 * crate::cc::bbr::model::SNAPSHOTS * 16 + 2 * 12 * 16
        }
        CcKind::NewReno | CcKind::Westwood | CcKind::Cubic | CcKind::CubicHyStart => SMALL,
    }
}

/// `base` doubled `retries` times (at most 10), at most `max` (whatever the configured values).
fn backoff(base: Duration, retries: u32, max: Duration) -> Duration {
    base.checked_mul(1 << retries.min(10))
        .unwrap_or(Duration::MAX)
        .min(max)
}

/// RFC 7323 timestamps: a wrapping microsecond clock.
pub(crate) fn ts_of(now: Time) -> u32 {
    now.as_micros() as u32
}

/// The round trip a timestamp echo implies, if plausible.
fn echo_rtt(now: Time, ts_ecr: u32) -> Option<Duration> {
    let rtt = Duration::from_micros(u64::from(ts_of(now).wrapping_sub(ts_ecr)));
    (rtt < MAX_RTT_SAMPLE).then_some(rtt)
}

impl Connection {
    fn new(cfg: Arc<TcpConfig>, cc: CcKind, conn_id: ConnId, state: State, iss: u64) -> Self {
        let mss = u64::from(cfg.mss);
        // iss <= MAX_ISN: checked by both constructors.
        let sender = Sender::new(&cfg, cc, mss, cfg.sack, iss + 1);
        // A placeholder until the peer's ISN is known (negotiate replaces it).
        let receiver = Receiver::new(0, cfg.recv_buffer, mss, cfg.delayed_ack, cfg.delayed_ack_ms);
        let estimator = (cfg.facts == Facts::Estimated).then(|| FactsEstimator::new(mss));
        Connection {
            estimator,
            sack: cfg.sack,
            cfg,
            cc,
            conn_id,
            state,
            iss,
            irs: 0,
            passive: false,
            unconfirmed: None,
            sender,
            receiver,
            syn_pending: true,
            syn_deadline: None,
            syn_retries: 0,
            time_wait_deadline: None,
            rst_pending: false,
            close_requested: false,
            local_link: None,
            probe_reply: None,
            events: VecDeque::new(),
            stats: ConnStats::default(),
        }
    }

    /// Opens a connection actively (client side). `conn_id` should be random, and `isn` (the
    /// initial sequence number, at most [`MAX_ISN`]) drawn at random per connection, both
    /// from the host's RNG (the engine draws no randomness itself).
    pub fn connect(
        cfg: Arc<TcpConfig>,
        cc: CcKind,
        conn_id: ConnId,
        isn: u64,
        now: Time,
    ) -> Result<Self, OpenError> {
        cfg.validate().map_err(OpenError::Config)?;
        if isn > MAX_ISN {
            return Err(OpenError::IsnOutOfRange(isn));
        }
        let mut c = Connection::new(cfg, cc, conn_id, State::SynSent, isn);
        c.syn_deadline = Some(now + c.cfg.initial_rto());
        Ok(c)
    }

    /// Opens the server side of a connection from the client's first segment after the
    /// handshake, whose acknowledgement echoed the SYN cookie `iss` (verified by
    /// [`super::TcpAcceptor`], which passes `seg.seq >= 1` and `iss <= MAX_ISN`): the
    /// connection is established at once and processes `seg`.
    pub(crate) fn accepted(
        cfg: Arc<TcpConfig>,
        cc: CcKind,
        now: Time,
        seg: &Segment<'_>,
        iss: u64,
        negotiated: Negotiated,
        local_link: Option<LinkInfo>,
    ) -> Self {
        let mut c = Connection::new(cfg, cc, seg.conn_id, State::Established, iss);
        c.passive = true;
        c.syn_pending = false;
        c.local_link = local_link;
        c.irs = seg.seq - 1;
        let mss = u64::from(negotiated.mss.min(c.cfg.mss)).max(64);
        c.negotiate(now, mss, negotiated.sack, seg.window, seg.seq);
        // RFC 7323 §4.3: the segment's TSval is the one to echo; its TSecr echoes our SYN-ACK,
        // which gives the first RTT sample as SYN-RECEIVED's ACK did.
        c.receiver.on_syn(seg.ts_val);
        if let Some(rtt) = echo_rtt(now, seg.ts_ecr) {
            c.sender.on_handshake_rtt(rtt);
        }
        c.stats.datagrams_received += 1;
        c.push_event(Event::Connected);
        c.process(now, seg);
        c
    }

    /// Applies the handshake's outcome: MSS, SACK, the peer's window; the receiver expects
    /// `rcv_nxt` (one past the peer's SYN) next.
    fn negotiate(&mut self, now: Time, mss: u64, sack: bool, peer_window: u32, rcv_nxt: u64) {
        self.sack = sack;
        self.sender.negotiate(&self.cfg, self.cc, mss, self.sack);
        // The controller was rebuilt for the negotiated MSS: hand it the link facts the host
        // supplied before the handshake completed.
        if let Some(li) = self.link_facts() {
            self.sender.on_local_link(now, &li);
        }
        self.sender.set_peer_window(u64::from(peer_window));
        self.receiver = Receiver::new(
            rcv_nxt,
            self.cfg.recv_buffer,
            mss,
            self.cfg.delayed_ack,
            self.cfg.delayed_ack_ms,
        );
    }

    /// The connection identifier.
    pub fn conn_id(&self) -> ConnId {
        self.conn_id
    }

    /// Current state.
    pub fn state(&self) -> State {
        self.state
    }

    /// True once closed or aborted.
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    /// Counters.
    pub fn stats(&self) -> ConnStats {
        ConnStats {
            sender: self.sender.stats(),
            ..self.stats
        }
    }

    /// The sender pipe (congestion window, RTT, sequence numbers).
    pub fn sender(&self) -> &Sender {
        &self.sender
    }

    /// The receiving half.
    pub fn receiver(&self) -> &Receiver {
        &self.receiver
    }

    /// Whether SACK was negotiated.
    pub fn sack_enabled(&self) -> bool {
        self.sack
    }

    /// Our initial sequence number: the one given to [`Connection::connect`], or the server's
    /// SYN cookie.
    pub fn initial_seq(&self) -> u64 {
        self.iss
    }

    /// Most bytes of memory this connection holds, whatever its peer sends: its receiver's
    /// and sender's bounds (`docs/HANDSHAKE.md`, "Memory") and its own fixed size.
    pub fn memory_bound(&self) -> usize {
        std::mem::size_of::<Self>()
            .saturating_add(heap_slack(self.cc))
            .saturating_add(self.receiver.memory_bound())
            .saturating_add(self.sender.memory_bound())
    }

    /// No reset waiting to be sent and no event waiting to be taken.
    pub(crate) fn is_quiet(&self) -> bool {
        !self.rst_pending && self.events.is_empty()
    }

    /// Queues application data; returns how many bytes were accepted (bounded by the send
    /// buffer). Data written before the handshake completes is sent after it.
    pub fn write(&mut self, data: &[u8]) -> usize {
        match self.state {
            State::SynSent | State::Established | State::CloseWait => self.sender.write(data),
            _ => 0,
        }
    }

    /// Takes the stream's payload from `source` when segments are encoded, instead of keeping
    /// copies of written bytes: memory then follows the window, not the send buffer
    /// ([`crate::source`]). Make bytes available with [`Connection::push`]; [`Connection::write`]
    /// then accepts nothing. Refused (false) once bytes were written.
    pub fn set_source(&mut self, source: Box<dyn ByteSource>) -> bool {
        self.sender.set_source(source)
    }

    /// With a source: makes the next `n` stream bytes available for sending; returns how many
    /// were accepted (bounded by the send buffer's free space, like [`Connection::write`]).
    pub fn push(&mut self, n: u64) -> u64 {
        match self.state {
            State::SynSent | State::Established | State::CloseWait => self.sender.push(n),
            _ => 0,
        }
    }

    /// Free space in the send buffer.
    pub fn write_capacity(&self) -> usize {
        match self.state {
            State::SynSent | State::Established | State::CloseWait => self.sender.write_capacity(),
            _ => 0,
        }
    }

    /// Moves up to `max` in-order received bytes into `out`.
    pub fn read(&mut self, out: &mut Vec<u8>, max: usize) -> usize {
        self.receiver.read(out, max)
    }

    /// As [`Connection::read`], but hands up to `max` readable bytes to `f` where the
    /// connection holds them (one or two slices, in stream order) instead of copying them: a
    /// reader that only inspects the bytes saves a copy. Returns how many were consumed.
    pub fn read_with(&mut self, max: usize, f: impl FnMut(&[u8])) -> usize {
        self.receiver.read_with(max, f)
    }

    /// Closes the sending direction after all written data (a FIN follows the data).
    pub fn close(&mut self) {
        match self.state {
            State::SynSent => {
                // RFC 793 CLOSE in SYN-SENT with queued data: close once established.
                self.sender.close();
                self.close_requested = true;
            }
            State::Established => {
                self.sender.close();
                self.state = State::FinWait1;
            }
            State::CloseWait => {
                self.sender.close();
                self.state = State::LastAck;
            }
            _ => {}
        }
    }

    /// Aborts the connection, sending a reset.
    pub fn abort(&mut self) {
        if self.state != State::Closed {
            self.rst_pending = true;
            self.state = State::Closed;
        }
    }

    /// Updates what the host knows about the local link (the simulator's link model, the OS,
    /// or the user). Reaches the congestion controller, and the peer when
    /// [`TcpConfig::report_link_info`] is set.
    pub fn set_link_info(&mut self, now: Time, info: LinkInfo) {
        self.local_link = Some(info.sanitized());
        if let Some(info) = self.link_facts() {
            self.sender.on_local_link(now, &info);
        }
    }

    /// The local link's facts the engine uses: the host's, or with [`Facts::Estimated`] the
    /// host's with the loss facts estimated from arrivals ([`FactsEstimator::overlay`]).
    fn link_facts(&self) -> Option<LinkInfo> {
        match &self.estimator {
            Some(e) => Some(e.overlay(self.local_link)),
            None => self.local_link,
        }
    }

    /// Switches where the wireless-loss facts come from: a host that was told facts (a user's
    /// `--link`) sets [`Facts::Oracle`] for a connection configured with
    /// [`Facts::Estimated`], and the reverse. An estimator started now has seen nothing yet.
    pub fn set_facts_source(&mut self, facts: Facts) {
        match (facts, &self.estimator) {
            (Facts::Oracle, _) => self.estimator = None,
            (Facts::Estimated, None) => {
                self.estimator = Some(FactsEstimator::new(u64::from(self.cfg.mss)));
            }
            (Facts::Estimated, Some(_)) => {}
        }
    }

    /// The wireless loss probability estimated from arrivals, with [`Facts::Estimated`].
    pub fn estimated_loss_prob(&self) -> Option<f64> {
        self.estimator.as_ref().map(FactsEstimator::loss_prob)
    }

    /// The host reports that a datagram for this connection arrived corrupted on the local
    /// wireless hop (its transport header intact, its payload not). With
    /// [`TcpConfig::eln`], the receiver then marks ACKs for that hole with the ELN bit
    /// (rcp-r2cp.txt §3.4.2, ptcp.txt §5.2.5). Undecodable or foreign datagrams are ignored,
    /// and so is every report with [`Facts::Estimated`] (the engine judges holes itself).
    pub fn handle_corrupted(&mut self, _now: Time, datagram: &[u8]) {
        if !self.cfg.eln || self.estimator.is_some() {
            return;
        }
        let Ok(seg) = Segment::decode(datagram) else {
            return;
        };
        if seg.conn_id != self.conn_id || seg.payload.is_empty() {
            return;
        }
        self.receiver
            .note_corrupted(seg.seq, seg.payload.len() as u64);
    }

    /// The next application event.
    #[inline]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    fn push_event(&mut self, ev: Event) {
        if ev == Event::Readable && self.events.back() == Some(&Event::Readable) {
            return;
        }
        self.events.push_back(ev);
    }

    /// Processes one datagram addressed to this connection. Undecodable datagrams are counted
    /// and reported; datagrams for another connection are ignored.
    pub fn handle_datagram(&mut self, now: Time, datagram: &[u8]) -> Result<(), DecodeError> {
        // Borrowed where it was decoded (moving a segment out copies its option block).
        let decoded = Segment::decode(datagram);
        let seg = match &decoded {
            Ok(s) => s,
            Err(e) => {
                self.stats.malformed_received += 1;
                return Err(*e);
            }
        };
        if seg.conn_id != self.conn_id || self.state == State::Closed {
            return Ok(());
        }
        self.stats.datagrams_received += 1;
        if seg.flags.contains(Flags::RST) {
            self.state = State::Closed;
            self.push_event(Event::Reset);
            return Ok(());
        }
        if self.state == State::SynSent {
            if seg.flags.contains(Flags::SYN | Flags::ACK)
                && seg.ack == self.iss + 1
                && seg.seq <= MAX_ISN
            {
                self.on_syn_ack(now, seg);
            }
            return Ok(());
        }
        if self.unconfirmed.is_some()
            && seg.flags.contains(Flags::ACK)
            && !seg.flags.contains(Flags::SYN)
        {
            // Only a server that holds the connection sends anything but a SYN-ACK.
            self.unconfirmed = None;
        }
        self.process(now, seg);
        Ok(())
    }

    /// SYN-SENT receives the SYN-ACK acknowledging our SYN: established.
    fn on_syn_ack(&mut self, now: Time, seg: &Segment<'_>) {
        let mss = u64::from(seg.options.mss.unwrap_or(self.cfg.mss).min(self.cfg.mss)).max(64);
        let sack = self.cfg.sack && seg.options.sack_permitted;
        self.irs = seg.seq;
        // seq <= MAX_ISN: checked by the caller.
        self.negotiate(now, mss, sack, seg.window, seg.seq + 1);
        if let Some(rtt) = echo_rtt(now, seg.ts_ecr) {
            self.sender.on_handshake_rtt(rtt);
        }
        self.receiver.on_syn(seg.ts_val);
        self.state = if self.close_requested {
            State::FinWait1
        } else {
            State::Established
        };
        self.syn_deadline = None;
        self.receiver.force_ack();
        self.unconfirmed = Some(Unconfirmed {
            deadline: now + self.sender.rtt().rto(),
            retries: 0,
        });
        self.push_event(Event::Connected);
    }

    /// True for the client's handshake ACK (or a repetition of it) at the server: a pure ACK
    /// of our SYN from a peer that has sent nothing yet, while we have sent nothing either.
    /// The server answers it so that the client learns its connection is held
    /// (docs/HANDSHAKE.md); the client repeats it only while unconfirmed, so this ends.
    fn is_handshake_ack(&self, seg: &Segment<'_>) -> bool {
        self.passive
            && seg.flags.contains(Flags::ACK)
            && !seg.flags.contains(Flags::SYN)
            && !seg.flags.contains(Flags::FIN)
            && seg.payload.is_empty()
            && seg.ack == self.iss + 1
            && seg.seq == self.irs + 1
            && self.sender.snd_nxt() == self.iss + 1
    }

    fn process(&mut self, now: Time, seg: &Segment<'_>) {
        if seg.flags.contains(Flags::SYN) {
            // A repeated SYN-ACK (an answer to a repeated SYN): acknowledge again.
            self.receiver.force_ack();
            return;
        }
        if self.is_handshake_ack(seg) {
            self.receiver.force_ack();
        }
        if let Some(peer) = peer_link(&seg.options) {
            self.sender.on_peer_link(now, &peer);
        }
        if seg.flags.contains(Flags::ACK) {
            // RFC 7323 §4.1: a TSecr updates the RTT estimate only from a segment that
            // advances SND.UNA (`Sender::on_ack` applies the rule); other ACKs need no echo.
            let rtt = if seg.ack > self.sender.snd_una() {
                echo_rtt(now, seg.ts_ecr)
            } else {
                None
            };
            let outcome = self.sender.on_ack(
                now,
                seg.ack,
                u64::from(seg.window),
                seg.options.sack_blocks(),
                rtt,
                !seg.payload.is_empty(),
                AckMarks {
                    eln: seg.flags.contains(Flags::ELN),
                    probe: seg.options.probe,
                },
            );
            if outcome.fin_acked {
                match self.state {
                    State::FinWait1 => self.state = State::FinWait2,
                    State::Closing => self.enter_time_wait(now),
                    State::LastAck => {
                        self.state = State::Closed;
                        self.push_event(Event::Closed);
                    }
                    _ => {}
                }
            }
        }
        if let Some(p) = seg.options.probe {
            // tcp-probing.txt §3.1: answer PROBE1 with PR1_ACK and PROBE2 with PR2_ACK at once,
            // with the same id.
            let answer = match p.kind {
                ProbeKind::Probe1 => Some(ProbeKind::Pr1Ack),
                ProbeKind::Probe2 => Some(ProbeKind::Pr2Ack),
                _ => None,
            };
            if let Some(kind) = answer {
                self.probe_reply = Some(ProbeOption { kind, id: p.id });
            }
        }
        let fin = seg.flags.contains(Flags::FIN);
        if seg.payload.is_empty() && !fin {
            return;
        }
        if let (Some(e), false) = (self.estimator.as_mut(), seg.payload.is_empty()) {
            let end = seg.seq.saturating_add(seg.payload.len() as u64);
            if let Some((from, to)) = e.on_data(now, seg.seq, end, seg.ts_val) {
                // Judged wireless: marked as the host's corruption report would mark it.
                self.receiver.note_corrupted(from, to - from);
            }
        }
        let had_fin = self.receiver.fin_received();
        let n = self
            .receiver
            .on_segment(now, seg.seq, seg.payload, fin, seg.ts_val);
        if n > 0 {
            self.push_event(Event::Readable);
        }
        if !had_fin && self.receiver.fin_received() {
            self.push_event(Event::Eof);
            match self.state {
                State::Established => self.state = State::CloseWait,
                State::FinWait1 => self.state = State::Closing,
                State::FinWait2 => self.enter_time_wait(now),
                _ => {}
            }
        }
    }

    fn enter_time_wait(&mut self, now: Time) {
        self.state = State::TimeWait;
        self.time_wait_deadline = Some(now + Duration::from_millis(self.cfg.time_wait_ms));
    }

    /// When [`Connection::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Time> {
        match self.state {
            State::SynSent => self.syn_deadline,
            State::Closed => None,
            State::TimeWait => self.time_wait_deadline,
            _ => {
                let t = earliest(self.sender.deadline(), self.receiver.deadline());
                match self.unconfirmed {
                    Some(u) if self.nothing_outstanding() => earliest(t, Some(u.deadline)),
                    _ => t,
                }
            }
        }
    }

    /// The sequence number of a segment without payload: SND.NXT, except at a client that has
    /// not heard from the server since the SYN-ACK, whose pure ACKs and probes carry ISN + 1
    /// (as its first data segment does) so that any of them can complete the handshake at a
    /// server that keeps no state before it (docs/HANDSHAKE.md). A TCP-Probing probe sent
    /// after the first data segment was lost thus opens the connection and is answered, as it
    /// was when the server held state from the SYN.
    fn header_seq(&self) -> u64 {
        if self.unconfirmed.is_some() {
            self.iss + 1
        } else {
            self.sender.snd_nxt()
        }
    }

    /// Everything sent was acknowledged (or nothing was sent).
    fn nothing_outstanding(&self) -> bool {
        self.sender.snd_una() == self.sender.snd_nxt()
    }

    /// Client side, unconfirmed and idle at its deadline: repeat the handshake ACK, backing
    /// off as the SYN does; give up after as many repetitions as SYNs. With data or a FIN
    /// outstanding their retransmissions (which start at ISN + 1 too) complete the handshake.
    fn on_unconfirmed_timeout(&mut self, now: Time) {
        let Some(mut u) = self.unconfirmed else {
            return;
        };
        if u.deadline > now || !self.nothing_outstanding() {
            return;
        }
        u.retries = u.retries.saturating_add(1);
        if u.retries > self.cfg.max_syn_retries {
            self.unconfirmed = None;
            self.state = State::Closed;
            self.push_event(Event::TimedOut);
            return;
        }
        self.receiver.force_ack();
        u.deadline = now + backoff(self.sender.rtt().rto(), u.retries, self.cfg.max_rto());
        self.unconfirmed = Some(u);
    }

    /// Handles expired timers (handshake retransmission, RTO, persist, delayed ACK,
    /// TIME-WAIT). Calling it early is harmless.
    pub fn handle_timeout(&mut self, now: Time) {
        match self.state {
            State::SynSent => {
                if self.syn_deadline.is_some_and(|d| d <= now) {
                    self.syn_retries = self.syn_retries.saturating_add(1);
                    if self.syn_retries > self.cfg.max_syn_retries {
                        self.state = State::Closed;
                        self.push_event(Event::TimedOut);
                        return;
                    }
                    self.syn_pending = true;
                    let b = backoff(self.cfg.initial_rto(), self.syn_retries, self.cfg.max_rto());
                    self.syn_deadline = Some(now + b);
                }
            }
            State::Closed => {}
            State::TimeWait => {
                if self.time_wait_deadline.is_some_and(|d| d <= now) {
                    self.state = State::Closed;
                    self.push_event(Event::Closed);
                }
            }
            _ => {
                self.on_unconfirmed_timeout(now);
                if self.state == State::Closed {
                    return;
                }
                self.sender.on_timeout(now);
                self.receiver.on_timeout(now);
                if self.sender.failed() {
                    self.state = State::Closed;
                    self.rst_pending = true;
                    self.push_event(Event::TimedOut);
                }
            }
        }
    }

    /// Writes the next datagram to send into `buf` (cleared first), if any.
    pub fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Transmit> {
        buf.clear();
        if self.rst_pending {
            self.rst_pending = false;
            let seg = self.segment(now, Flags::RST, self.sender.snd_nxt(), Options::default());
            return Some(self.emit(&seg, buf));
        }
        match self.state {
            State::Closed => None,
            State::SynSent => {
                if !self.syn_pending {
                    return None;
                }
                self.syn_pending = false;
                let opts = Options {
                    mss: Some(self.cfg.mss),
                    sack_permitted: self.cfg.sack,
                    ..Options::default()
                };
                let seg = self.segment(now, Flags::SYN, self.iss, opts);
                Some(self.emit(&seg, buf))
            }
            _ => {
                if let Some(probe) = self.probe_reply.take() {
                    let seq = self.header_seq();
                    return Some(self.emit_ack(now, Flags::ACK, seq, Some(probe), None, buf));
                }
                if let Some(probe) = self.sender.poll_probe(now) {
                    // A header-only probe segment (tcp-probing.txt §3.1).
                    let seq = self.header_seq();
                    return Some(self.emit_ack(now, Flags::ACK, seq, Some(probe), None, buf));
                }
                if let Some(tx) = self.sender.next_segment(now) {
                    let mut flags = Flags::ACK;
                    if tx.fin {
                        flags.insert(Flags::FIN);
                    }
                    return Some(self.emit_ack(now, flags, tx.seq, None, Some(tx), buf));
                }
                if self.receiver.wants_ack() {
                    let seq = self.header_seq();
                    // Every other source was empty at `now`, and sending an acknowledgement
                    // fills none of them: the next call would return `None`.
                    let mut t = self.emit_ack(now, Flags::ACK, seq, None, None, buf);
                    t.more = false;
                    return Some(t);
                }
                None
            }
        }
    }

    /// Encodes a segment carrying an acknowledgement into `buf`: `flags` (with ELN when
    /// due) and `seq`, its options (SACK blocks, link reports, `probe`), then the payload of
    /// `tx`. Most carry no option: their fixed part is written without building an options
    /// block.
    fn emit_ack(
        &mut self,
        now: Time,
        mut flags: Flags,
        seq: u64,
        probe: Option<ProbeOption>,
        tx: Option<TxSegment>,
        buf: &mut Vec<u8>,
    ) -> Transmit {
        if self.cfg.eln && self.receiver.eln_mark() {
            flags.insert(Flags::ELN);
        }
        let sack = self.sack && self.receiver.sack_blocks_due();
        let facts = self.link_facts();
        let link = self.cfg.report_link_info && facts.is_some_and(|l| l.wireless);
        let head = self.head(now, flags, seq);
        if sack || link || probe.is_some() {
            let mut opts = Options {
                probe,
                ..Options::default()
            };
            if sack {
                self.receiver.fill_sack(&mut opts);
            }
            if let Some(li) = facts.as_ref().filter(|_| link) {
                report_link(li, &mut opts);
            }
            head.encode(&opts, buf);
        } else {
            head.encode_bare(buf);
        }
        self.sent(&head, tx, buf)
    }

    /// The fixed fields of a segment sent now.
    fn head(&self, now: Time, flags: Flags, seq: u64) -> SegmentHead {
        let ack_valid = flags.contains(Flags::ACK);
        SegmentHead {
            conn_id: self.conn_id,
            flags,
            seq,
            ack: if ack_valid {
                self.receiver.rcv_nxt()
            } else {
                0
            },
            window: self.receiver.window() as u32,
            ts_val: ts_of(now),
            ts_ecr: self.receiver.ts_recent(),
        }
    }

    fn segment(&self, now: Time, flags: Flags, seq: u64, options: Options) -> Segment<'static> {
        self.head(now, flags, seq).with(options, &[])
    }

    /// Encodes `seg` (header and options; no payload).
    fn emit(&mut self, seg: &Segment<'_>, buf: &mut Vec<u8>) -> Transmit {
        seg.encode(buf);
        self.sent(&seg.head(), None, buf)
    }

    /// Appends the payload of `tx` to the segment encoded in `buf` from `head`, and records
    /// the datagram as sent.
    fn sent(&mut self, head: &SegmentHead, tx: Option<TxSegment>, buf: &mut Vec<u8>) -> Transmit {
        if let Some(tx) = &tx {
            self.sender.copy_payload(tx, buf);
        }
        if head.flags.contains(Flags::ACK) {
            // `head` wrote RCV.NXT and the window into it.
            self.receiver.on_ack_sent(head.ack, head.window);
        }
        self.stats.datagrams_sent += 1;
        self.stats.bytes_sent += buf.len() as u64;
        Transmit {
            len: buf.len(),
            retransmission: tx.is_some_and(|t| t.retransmission),
            more: true,
        }
    }
}

/// Encodes the local link facts as the link-info (atl.txt §IV-A) and last-link
/// (last-link-heuristics.txt) options.
fn report_link(li: &LinkInfo, opts: &mut Options) {
    let ppm = |p: f64| (p * 1e6).round().clamp(0.0, 1e6) as u32;
    opts.link_info = Some(LinkInfoReport {
        p_w_ppm: ppm(li.loss_prob),
        d_w_us: u32::try_from(li.one_way_delay.as_micros()).unwrap_or(u32::MAX),
        handoff_count: li.handoffs as u16,
    });
    opts.last_link = Some(LastLinkReport {
        bandwidth_bps: li.bandwidth_bps,
        per_ppm: ppm(li.per),
    });
}

/// The peer's link facts, if its segment reported any.
fn peer_link(opts: &Options) -> Option<LinkInfo> {
    if opts.link_info.is_none() && opts.last_link.is_none() {
        return None;
    }
    let mut li = LinkInfo {
        wireless: true,
        up: true,
        ..LinkInfo::default()
    };
    if let Some(r) = opts.link_info {
        li.loss_prob = f64::from(r.p_w_ppm) / 1e6;
        li.one_way_delay = Duration::from_micros(u64::from(r.d_w_us));
        li.handoffs = u32::from(r.handoff_count);
    }
    if let Some(r) = opts.last_link {
        li.bandwidth_bps = r.bandwidth_bps;
        li.per = f64::from(r.per_ppm) / 1e6;
    }
    Some(li.sanitized())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reported_link_facts_survive_the_options_round_trip() {
        let li = LinkInfo {
            wireless: true,
            loss_prob: 0.0125,
            per: 0.008,
            one_way_delay: Duration::from_millis(50),
            bandwidth_bps: 7_000_000,
            handoffs: 3,
            ..LinkInfo::wired(0, Duration::ZERO)
        };
        let mut opts = Options::default();
        report_link(&li, &mut opts);
        let back = peer_link(&opts).expect("reported");
        assert_eq!(back.loss_prob, 0.0125);
        assert_eq!(back.per, 0.008);
        assert_eq!(back.one_way_delay, Duration::from_millis(50));
        assert_eq!(back.bandwidth_bps, 7_000_000);
        assert_eq!(back.handoffs, 3);
        assert!(peer_link(&Options::default()).is_none());
    }
}
