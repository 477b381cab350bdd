//! The connection state machine (RFC 793 states) tying a [`Sender`] and a [`Receiver`] to the
//! wire format.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use roam_wire::{
    ConnId, DecodeError, Flags, LastLinkReport, LinkInfoReport, Options, ProbeKind, ProbeOption,
    Segment,
};

use super::receiver::Receiver;
use super::sender::{AckMarks, Sender, SenderStats, TxSegment};
use super::TcpConfig;
use crate::cc::CcKind;
use crate::linkinfo::LinkInfo;
use crate::Time;

/// Initial sequence number. Connections are told apart by their random [`ConnId`], not by the
/// ISN, so the ISN can be fixed; sequence numbers are 64-bit and never wrap.
const ISN: u64 = 0;

/// Initial sequence numbers are below 2^62, so that a connection's 64-bit sequence numbers
/// never reach the end of the sequence space (2^62 bytes are 4.6 EB). A SYN or SYN-ACK with a
/// larger one is dropped.
pub const MAX_ISN: u64 = (1 << 62) - 1;

/// RFC 793 connection states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// SYN sent, waiting for SYN-ACK.
    SynSent,
    /// SYN received and SYN-ACK sent, waiting for the ACK.
    SynReceived,
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

/// Why a datagram could not open a connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AcceptError {
    /// Not a valid segment.
    #[error("malformed datagram: {0}")]
    Decode(#[from] DecodeError),
    /// A valid segment, but not a connection-opening SYN.
    #[error("not a SYN")]
    NotSyn,
    /// The configuration is invalid.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// An initial sequence number above [`MAX_ISN`].
    #[error("initial sequence number {0} above {MAX_ISN}")]
    IsnOutOfRange(u64),
}

/// One endpoint of a TCP-like connection. See the [module docs](super) for the driving loop.
#[derive(Debug)]
pub struct Connection {
    cfg: Arc<TcpConfig>,
    cc: CcKind,
    conn_id: ConnId,
    state: State,
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
    /// TCP-Probing: the PR1_ACK / PR2_ACK owed to the peer's latest probe.
    probe_reply: Option<ProbeOption>,
    events: VecDeque<Event>,
    stats: ConnStats,
}

fn ts_of(now: Time) -> u32 {
    // RFC 7323 timestamps: a wrapping microsecond clock.
    now.as_micros() as u32
}

impl Connection {
    fn new(cfg: Arc<TcpConfig>, cc: CcKind, conn_id: ConnId, state: State) -> Self {
        let mss = u64::from(cfg.mss);
        let sender = Sender::new(&cfg, cc, mss, cfg.sack, ISN + 1);
        let receiver = Receiver::new(
            ISN + 1,
            cfg.recv_buffer,
            mss,
            cfg.delayed_ack,
            cfg.delayed_ack_ms,
        );
        Connection {
            sack: cfg.sack,
            cfg,
            cc,
            conn_id,
            state,
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

    /// Opens a connection actively (client side). `conn_id` should be random (the host's RNG).
    pub fn connect(
        cfg: Arc<TcpConfig>,
        cc: CcKind,
        conn_id: ConnId,
        now: Time,
    ) -> Result<Self, AcceptError> {
        cfg.validate().map_err(AcceptError::Config)?;
        let mut c = Connection::new(cfg, cc, conn_id, State::SynSent);
        c.syn_deadline = Some(now + c.cfg.initial_rto());
        Ok(c)
    }

    /// Opens a connection passively from a received SYN (server side).
    pub fn accept(
        cfg: Arc<TcpConfig>,
        cc: CcKind,
        now: Time,
        datagram: &[u8],
    ) -> Result<Self, AcceptError> {
        cfg.validate().map_err(AcceptError::Config)?;
        let seg = Segment::decode(datagram)?;
        if !seg.flags.contains(Flags::SYN) || seg.flags.contains(Flags::ACK) {
            return Err(AcceptError::NotSyn);
        }
        if seg.seq > MAX_ISN {
            return Err(AcceptError::IsnOutOfRange(seg.seq));
        }
        let mut c = Connection::new(cfg, cc, seg.conn_id, State::SynReceived);
        c.negotiate(now, &seg);
        c.receiver.on_syn(seg.ts_val);
        c.syn_deadline = Some(now + c.cfg.initial_rto());
        c.stats.datagrams_received += 1;
        Ok(c)
    }

    /// Applies the peer's SYN options: MSS, SACK, window; the receiver starts after its SYN.
    fn negotiate(&mut self, now: Time, syn: &Segment<'_>) {
        let mss = u64::from(syn.options.mss.unwrap_or(self.cfg.mss).min(self.cfg.mss)).max(64);
        self.sack = self.cfg.sack && syn.options.sack_permitted;
        self.sender.negotiate(&self.cfg, self.cc, mss, self.sack);
        // The controller was rebuilt for the negotiated MSS: hand it the link facts the host
        // supplied before the handshake completed.
        if let Some(li) = self.local_link {
            self.sender.on_local_link(now, &li);
        }
        self.sender.set_peer_window(u64::from(syn.window));
        self.receiver = Receiver::new(
            syn.seq + 1,
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

    /// Queues application data; returns how many bytes were accepted (bounded by the send
    /// buffer). Data written before the handshake completes is sent after it.
    pub fn write(&mut self, data: &[u8]) -> usize {
        match self.state {
            State::SynSent | State::SynReceived | State::Established | State::CloseWait => {
                self.sender.write(data)
            }
            _ => 0,
        }
    }

    /// Free space in the send buffer.
    pub fn write_capacity(&self) -> usize {
        match self.state {
            State::SynSent | State::SynReceived | State::Established | State::CloseWait => {
                self.sender.write_capacity()
            }
            _ => 0,
        }
    }

    /// Moves up to `max` in-order received bytes into `out`.
    pub fn read(&mut self, out: &mut Vec<u8>, max: usize) -> usize {
        self.receiver.read(out, max)
    }

    /// Closes the sending direction after all written data (a FIN follows the data).
    pub fn close(&mut self) {
        match self.state {
            State::SynSent => {
                // RFC 793 CLOSE in SYN-SENT with queued data: close once established.
                self.sender.close();
                self.close_requested = true;
            }
            State::SynReceived | State::Established => {
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
        let info = info.sanitized();
        self.local_link = Some(info);
        self.sender.on_local_link(now, &info);
    }

    /// The host reports that a datagram for this connection arrived corrupted on the local
    /// wireless hop (its transport header intact, its payload not). With
    /// [`TcpConfig::eln`], the receiver then marks ACKs for that hole with the ELN bit
    /// (rcp-r2cp.txt §3.4.2, ptcp.txt §5.2.5). Undecodable or foreign datagrams are ignored.
    pub fn handle_corrupted(&mut self, _now: Time, datagram: &[u8]) {
        if !self.cfg.eln {
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
        let seg = match Segment::decode(datagram) {
            Ok(s) => s,
            Err(e) => {
                self.stats.malformed_received += 1;
                return Err(e);
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
        match self.state {
            State::SynSent => {
                if seg.flags.contains(Flags::SYN | Flags::ACK)
                    && seg.ack == ISN + 1
                    && seg.seq <= MAX_ISN
                {
                    self.negotiate(now, &seg);
                    let rtt = Duration::from_micros(u64::from(ts_of(now).wrapping_sub(seg.ts_ecr)));
                    self.sender.on_handshake_rtt(rtt);
                    self.receiver.on_syn(seg.ts_val);
                    self.state = if self.close_requested {
                        State::FinWait1
                    } else {
                        State::Established
                    };
                    self.syn_deadline = None;
                    self.receiver.force_ack();
                    self.push_event(Event::Connected);
                }
                return Ok(());
            }
            State::SynReceived => {
                if seg.flags.contains(Flags::SYN) && !seg.flags.contains(Flags::ACK) {
                    // Our SYN-ACK was lost: answer the repeated SYN, echoing its timestamp so
                    // the peer's first RTT sample measures this exchange.
                    self.receiver.on_syn(seg.ts_val);
                    self.syn_pending = true;
                    return Ok(());
                }
                if !seg.flags.contains(Flags::ACK) || seg.ack < ISN + 1 {
                    return Ok(());
                }
                let rtt = Duration::from_micros(u64::from(ts_of(now).wrapping_sub(seg.ts_ecr)));
                self.sender.on_handshake_rtt(rtt);
                self.state = State::Established;
                self.syn_deadline = None;
                self.push_event(Event::Connected);
            }
            _ => {}
        }
        self.process(now, &seg);
        Ok(())
    }

    fn process(&mut self, now: Time, seg: &Segment<'_>) {
        if seg.flags.contains(Flags::SYN) {
            // A repeated SYN-ACK: our handshake ACK was lost; acknowledge again.
            self.receiver.force_ack();
            return;
        }
        if let Some(peer) = peer_link(&seg.options) {
            self.sender.on_peer_link(now, &peer);
        }
        if seg.flags.contains(Flags::ACK) {
            let rtt = Duration::from_micros(u64::from(ts_of(now).wrapping_sub(seg.ts_ecr)));
            let rtt = (rtt < Duration::from_secs(120)).then_some(rtt);
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
                State::Established | State::SynReceived => self.state = State::CloseWait,
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
        let mut t: Option<Time> = None;
        let mut consider = |d: Option<Time>| {
            if let Some(d) = d {
                t = Some(t.map_or(d, |t| t.min(d)));
            }
        };
        match self.state {
            State::SynSent | State::SynReceived => consider(self.syn_deadline),
            State::Closed => {}
            State::TimeWait => consider(self.time_wait_deadline),
            _ => {
                consider(self.sender.deadline());
                consider(self.receiver.deadline());
            }
        }
        t
    }

    /// Handles expired timers (handshake retransmission, RTO, persist, delayed ACK,
    /// TIME-WAIT). Calling it early is harmless.
    pub fn handle_timeout(&mut self, now: Time) {
        match self.state {
            State::SynSent | State::SynReceived => {
                if self.syn_deadline.is_some_and(|d| d <= now) {
                    self.syn_retries += 1;
                    if self.syn_retries > self.cfg.max_syn_retries {
                        self.state = State::Closed;
                        self.push_event(Event::TimedOut);
                        return;
                    }
                    self.syn_pending = true;
                    let backoff = self.cfg.initial_rto() * (1u32 << self.syn_retries.min(10));
                    self.syn_deadline = Some(now + backoff.min(self.cfg.max_rto()));
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
            return Some(self.emit(&seg, None, buf));
        }
        match self.state {
            State::Closed => None,
            State::SynSent | State::SynReceived => {
                if !self.syn_pending {
                    return None;
                }
                self.syn_pending = false;
                let mut opts = Options {
                    mss: Some(self.cfg.mss),
                    sack_permitted: self.cfg.sack,
                    ..Options::default()
                };
                let mut flags = Flags::SYN;
                if self.state == State::SynReceived {
                    flags.insert(Flags::ACK);
                    opts.sack_permitted = self.sack;
                }
                let seg = self.segment(now, flags, ISN, opts);
                Some(self.emit(&seg, None, buf))
            }
            _ => {
                if let Some(probe) = self.probe_reply.take() {
                    let mut seg = self.ack_segment(now, Flags::ACK, self.sender.snd_nxt());
                    seg.options.probe = Some(probe);
                    return Some(self.emit(&seg, None, buf));
                }
                if let Some(probe) = self.sender.poll_probe(now) {
                    // A header-only probe segment (tcp-probing.txt §3.1).
                    let mut seg = self.ack_segment(now, Flags::ACK, self.sender.snd_nxt());
                    seg.options.probe = Some(probe);
                    return Some(self.emit(&seg, None, buf));
                }
                if let Some(tx) = self.sender.next_segment(now) {
                    let mut flags = Flags::ACK;
                    if tx.fin {
                        flags.insert(Flags::FIN);
                    }
                    let seg = self.ack_segment(now, flags, tx.seq);
                    return Some(self.emit(&seg, Some(tx), buf));
                }
                if self.receiver.wants_ack() {
                    let seg = self.ack_segment(now, Flags::ACK, self.sender.snd_nxt());
                    return Some(self.emit(&seg, None, buf));
                }
                None
            }
        }
    }

    fn ack_segment(&mut self, now: Time, mut flags: Flags, seq: u64) -> Segment<'static> {
        if self.cfg.eln && self.receiver.eln_mark() {
            flags.insert(Flags::ELN);
        }
        let mut opts = Options::default();
        if self.sack {
            self.receiver.fill_sack(&mut opts);
        }
        if let Some(li) = self
            .local_link
            .filter(|l| self.cfg.report_link_info && l.wireless)
        {
            report_link(&li, &mut opts);
        }
        self.segment(now, flags, seq, opts)
    }

    fn segment(&self, now: Time, flags: Flags, seq: u64, options: Options) -> Segment<'static> {
        let ack_valid = flags.contains(Flags::ACK);
        Segment {
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
            options,
            payload: &[],
        }
    }

    /// Encodes `seg` (header and options) followed by the payload of `tx`.
    fn emit(&mut self, seg: &Segment<'_>, tx: Option<TxSegment>, buf: &mut Vec<u8>) -> Transmit {
        seg.encode(buf);
        if let Some(tx) = &tx {
            self.sender.copy_payload(tx, buf);
        }
        if seg.flags.contains(Flags::ACK) {
            self.receiver.on_ack_sent();
        }
        self.stats.datagrams_sent += 1;
        self.stats.bytes_sent += buf.len() as u64;
        Transmit {
            len: buf.len(),
            retransmission: tx.is_some_and(|t| t.retransmission),
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
