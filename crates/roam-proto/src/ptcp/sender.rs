//! The sending end of a pTCP connection (ptcp.txt §3–4): one send stream, one TCP-v sender
//! pipe per path, the bindings table between them.
//!
//! * A pipe asks for data only when its congestion window has room (§3, delayed binding):
//!   [`PtcpSender::poll_transmit`] walks the pipes; a pipe with a lost segment retransmits the
//!   bytes that sequence number carries, a pipe with room binds new stream bytes to its next
//!   sequence number ([`Bindings::bind`]), and one that gets NO DATA waits among the active
//!   pipes until data arrives (`resume`, §4.1).
//! * When a pipe's window shrinks (an acknowledgement, a timeout) or its repair of a loss
//!   finds more lost, what it still owes (lost or passed by a SACKed segment, not SACKed, not
//!   sent again) beyond a window's worth is unbound at once for another pipe (§3, dynamic
//!   reassignment; segments still in flight stay bound, see `unbind_owed`); after a timeout
//!   the first segment of its window is also striped onto another pipe (§3, redundant
//!   striping for blackouts).
//! * Flow control is the connection's (§4.5): new bytes are bound only below pACK plus the
//!   pTCP window the receiver advertises on every pipe.
//! * Every pipe has its own congestion controller (§4.2, per-pipe congestion control).
//! * The end of the stream (pFIN) rides on the segment carrying the last byte; once every
//!   byte is acknowledged and the end is not, a bare pFIN goes out on the next live pipe, on a
//!   timer backed off like a retransmission timer.
//!
//! * Connection management (§4.4, `docs/PTCP.md`): [`PtcpSender::connect`] opens the first
//!   pipe with a SYN carrying the handshake extension (nTx, the client's addresses); its
//!   SYN-ACK names the server's aggregate identifier, nRx and the server's addresses, the
//!   connection is usable at once (ESTABLISHED(1)) and the other pipes open then, at most nRx
//!   in all. Each pipe completes its handshake with an ACK and closes with its own FIN
//!   exchange once the stream is acknowledged (TIME-WAIT, then CLOSED).
//!   [`PtcpSender::add_pipe`] adds a pipe already established (tests that skip the handshake).
//!
//! Not yet here: data in the other direction.

use std::time::Duration;

use roam_wire::{ConnId, Flags, Options, PtcpHeader, PtcpSegment, Segment};

use super::bindings::{Bindings, PipeId};
use crate::cc::CcKind;
use crate::seqspace::{PipeSeq, StreamOffset};
use crate::source::ByteSource;
use crate::tcp::{PipeAckInput, SendStream, SenderPipe, TcpConfig, TxSegment};
use crate::Time;

mod open;

/// Longest plausible round trip from a timestamp echo.
const MAX_RTT_SAMPLE: Duration = Duration::from_secs(120);

/// Longest wait between two bare pFIN or window probes.
const MAX_PROBE_INTERVAL: Duration = Duration::from_secs(60);

/// RFC 7323 timestamps: a wrapping microsecond clock.
pub(super) fn ts_of(now: Time) -> u32 {
    now.as_micros() as u32
}

/// One datagram to send: `len` bytes of the caller's buffer, on path `path`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtcpTransmit {
    /// The pipe's path (the index the host gave it).
    pub path: u32,
    /// Bytes written.
    pub len: usize,
}

/// Counters of a pTCP sender.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PtcpSenderStats {
    /// Stream bytes unbound from shrunk windows (§3, dynamic reassignment).
    pub bytes_unbound: u64,
    /// Segments striped redundantly after a timeout.
    pub redundant_stripes: u64,
    /// NO DATA answers (a pipe with room and nothing to bind).
    pub no_data: u64,
    /// Bare pFIN or window probes sent.
    pub probes: u64,
}

/// ptcp.txt §3, "Dynamic Reassignment", and §4.2 `shrunk()`: data bound to `p` beyond its
/// congestion window is unbound at once for another pipe. Our reading (docs/PTCP.md, "Which
/// data a shrunk window unbinds"): the window that matters is over what the pipe still *owes*
/// ([`SenderPipe::owes`]: deemed lost and not sent again, or passed by a SACKed segment; not
/// SACKed) — a window's worth of it goes out again in the pipe's next round trip, the rest
/// would be "blocked from transmission till the cwnd opens up" (§3) and is unbound. Segments
/// in flight and not passed stay bound: most of them arrive, and unbinding them sent a second
/// copy of up to half a window over the other pipe at every halving (§5.2.5: 85.7–87.3 % of
/// the ideal against 91.4–93.4 %). After a timeout every un-SACKed segment is owed and the
/// window is one segment, so all but the first are unbound (the first is striped, §3).
/// Called when the window shrinks and on every acknowledgement while the pipe repairs a loss
/// (what it owes grows as SACKs reveal losses). Returns the bytes made available.
fn unbind_owed(bindings: &mut Bindings, p: &TxPipe) -> u64 {
    let Some(edge) = p.pipe.owed_beyond_window() else {
        return 0;
    };
    bindings.unbind_beyond_where(p.id, edge, |seq| p.pipe.owes(seq))
}

/// A pipe's place in its TCP-v state machine (ptcp.txt §4.4: "the state machine for TCP-v is
/// the same as that of default TCP"), as far as a sending client needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Not opened yet: waits for the first pipe's SYN-ACK (§4.4: "When the client pTCP
    /// receives the SYN + ACK, it creates the remaining nIF − 1 TCP-v TCBs").
    Idle,
    /// SYN sent `tries` times; the next one is due at `deadline` (`Time::MAX`: due now, the
    /// timer fired).
    SynSent { tries: u32, deadline: Time },
    /// Carries data.
    Established,
    /// Our FIN is in the pipe (FIN-WAIT-1, or FIN-WAIT-2 once it is acknowledged).
    Closing,
    /// Both FINs exchanged; closed at the deadline (acknowledging a repeated FIN until then).
    TimeWait(Time),
    /// Closed (or never opened: the server agreed to fewer pipes, or the stream ended first).
    Closed,
}

/// One sender pipe and what the engine knows about it.
#[derive(Debug)]
struct TxPipe {
    id: PipeId,
    path: u32,
    conn_id: ConnId,
    pipe: SenderPipe,
    cc: CcKind,
    /// Our initial sequence number on this pipe.
    isn: u64,
    /// The acknowledgement number our segments carry: the peer's ISN + 1 (+ 1 after its FIN).
    peer_next: u64,
    phase: Phase,
    /// The handshake's ACK (or the ACK of the peer's FIN) is owed.
    ack_due: bool,
    /// The peer's last timestamp on this pipe (echoed).
    ts_recent: u32,
    /// Gave up (too many consecutive timeouts, or its handshake failed): no longer used.
    dead: bool,
}

impl TxPipe {
    fn closed(&self) -> bool {
        self.dead || self.phase == Phase::Closed
    }
}

/// The sending end of a pTCP connection.
#[derive(Debug)]
pub struct PtcpSender {
    cfg: TcpConfig,
    local: ConnId,
    remote: ConnId,
    mss: u64,
    stream: SendStream,
    bindings: Bindings,
    pipes: Vec<TxPipe>,
    /// pACK: every stream byte below it was received (the end of stream counts one).
    acked: StreamOffset,
    /// The pTCP window the receiver advertised, counted from `acked`.
    peer_window: u64,
    /// The pipe `poll_transmit` asks first (round robin, so no pipe starves the others).
    turn: usize,
    /// When the next bare pFIN or window probe goes out.
    probe_deadline: Option<Time>,
    /// Probes sent since the last progress of pACK.
    probe_backoff: u32,
    /// A probe is due now.
    probe_due: bool,
    stats: PtcpSenderStats,
    /// Scratch: pipes resumed (§4.1 `resume()`).
    resumed: Vec<PipeId>,
    /// Scratch: one segment's payload.
    payload: Vec<u8>,
    /// Opened by [`PtcpSender::connect`]: pipes do the handshake; `remote` is known once the
    /// first SYN-ACK named it.
    handshake: Option<ClientHandshake>,
}

/// What a connecting client keeps of the handshake (ptcp.txt §4.2–4.4).
#[derive(Debug)]
struct ClientHandshake {
    /// Our address list (ipTx), encoded ([`PtcpHandshake::write_list`]).
    list: Vec<u8>,
    /// The server's answer: nRx and its address list (ipRx).
    server: Option<(u8, Vec<u8>)>,
}

/// Unanswered SYNs with the extension after which another pipe opens too.
const FIRST_SYN_TRIES: u32 = 2;

/// Bytes a first SYN is padded to, so that the server's SYN-ACK (with its address list) is no
/// larger than the SYN that earns it (docs/HANDSHAKE.md: no amplification).
pub const SYN_PAD: usize = 320;

impl PtcpSender {
    /// A sender of connection `local` to the peer's `remote`, with the pipes' options in
    /// `cfg` (MSS, buffers, SACK, timers, recovery); the peer's window is taken to be
    /// `cfg.recv_buffer` until it advertises one. No pipe yet.
    pub fn new(cfg: &TcpConfig, local: ConnId, remote: ConnId) -> Self {
        PtcpSender {
            cfg: cfg.clone(),
            local,
            remote,
            mss: u64::from(cfg.mss),
            stream: SendStream::new(StreamOffset(0), cfg.send_buffer as usize, cfg.recv_buffer),
            bindings: Bindings::new(StreamOffset(0)),
            pipes: Vec::new(),
            acked: StreamOffset(0),
            peer_window: cfg.recv_buffer,
            turn: 0,
            probe_deadline: None,
            probe_backoff: 0,
            probe_due: false,
            stats: PtcpSenderStats::default(),
            resumed: Vec::new(),
            payload: Vec::new(),
            handshake: None,
        }
    }

    /// Adds an established pipe on path `path`, named `conn_id` on the wire, with its own
    /// congestion controller `cc` (ptcp.txt §4.2: each TCP-v pipe runs its own). Its first
    /// sequence number is 1.
    pub fn add_pipe(&mut self, path: u32, conn_id: ConnId, cc: CcKind) -> PipeId {
        let id = self.bindings.add_pipe();
        let pipe = SenderPipe::new(&self.cfg, cc, self.mss, self.cfg.sack, PipeSeq(1));
        self.pipes.push(TxPipe {
            id,
            path,
            conn_id,
            pipe,
            cc,
            isn: 0,
            peer_next: 1,
            phase: Phase::Established,
            ack_due: false,
            ts_recent: 0,
            dead: false,
        });
        id
    }

    /// Application write; returns bytes accepted.
    pub fn write(&mut self, data: &[u8]) -> usize {
        self.stream.write(data)
    }

    /// Takes the stream's bytes from `source` (see [`crate::source`]); refused once bytes
    /// were written.
    pub fn set_source(&mut self, source: Box<dyn ByteSource>) -> bool {
        self.stream.set_source(source)
    }

    /// With a source: makes up to `n` more bytes available; returns how many were accepted.
    pub fn push(&mut self, n: u64) -> u64 {
        self.stream.push(n)
    }

    /// Free space in the send buffer.
    pub fn write_capacity(&self) -> usize {
        self.stream.write_capacity()
    }

    /// Ends the stream after the bytes written.
    pub fn close(&mut self) {
        self.stream.close();
    }

    /// True once the peer acknowledged every byte and the end of the stream.
    pub fn is_complete(&self) -> bool {
        self.stream.fin_pending() && self.acked > self.stream.end()
    }

    /// True when every pipe gave up (or never opened and cannot any more).
    pub fn failed(&self) -> bool {
        !self.pipes.is_empty()
            && self
                .pipes
                .iter()
                .all(|p| p.dead || (p.phase == Phase::Closed && !self.is_complete()))
    }

    /// pACK: the stream bytes acknowledged.
    pub fn acked(&self) -> StreamOffset {
        self.acked
    }

    /// Counters.
    pub fn stats(&self) -> PtcpSenderStats {
        self.stats
    }

    /// The pipes: (path, congestion window, bytes in flight, its sender's counters).
    pub fn pipes(&self) -> impl Iterator<Item = (u32, u64, u64, crate::tcp::SenderStats)> + '_ {
        self.pipes
            .iter()
            .map(|p| (p.path, p.pipe.cwnd(), p.pipe.in_flight(), p.pipe.stats()))
    }

    /// The pipes: (path, its connection id).
    pub fn pipe_ids(&self) -> impl Iterator<Item = (u32, ConnId)> + '_ {
        self.pipes.iter().map(|p| (p.path, p.conn_id))
    }

    /// Bytes of memory held at most: the send buffer, and per pipe its scoreboard (one entry
    /// per segment of a send buffer, twice over for growth) and a bindings table of the same
    /// count (at most 64 bytes an entry, its unbound ranges included).
    pub fn memory_bound(&self) -> usize {
        let buffer = self.cfg.send_buffer as usize;
        let per_pipe = |p: &TxPipe| {
            let segments = buffer / (p.pipe.mss() as usize).max(1) + 3;
            p.pipe.memory_bound(buffer) + segments * 64
        };
        buffer + 4096 + self.pipes.iter().map(per_pipe).sum::<usize>()
    }

    /// The bindings table.
    pub fn bindings(&self) -> &Bindings {
        &self.bindings
    }

    /// The first offset beyond what flow control lets new data reach: the end of the written
    /// data and of the peer's window (§4.5).
    fn limit(&self) -> StreamOffset {
        let window_end = self.acked.plus(self.peer_window);
        self.stream.end().min(window_end)
    }

    /// Handles one datagram for this connection (an acknowledgement on one of its pipes).
    /// Anything else — undecodable, another connection, an unknown pipe, an acknowledgement of
    /// data never sent — is ignored. Never panics.
    pub fn handle_datagram(&mut self, now: Time, bytes: &[u8]) {
        let Ok(d) = PtcpSegment::decode(bytes) else {
            return;
        };
        if d.ptcp.dst != self.local {
            return;
        }
        let seg = &d.segment;
        let Some(k) = self.pipes.iter().position(|p| p.conn_id == seg.conn_id) else {
            return;
        };
        if seg.flags.contains(Flags::SYN) {
            self.on_syn_ack(now, k, &d);
            return;
        }
        if d.ptcp.src != self.remote || !seg.flags.contains(Flags::ACK) {
            return;
        }
        match self.pipes[k].phase {
            Phase::Established | Phase::Closing => {}
            Phase::TimeWait(_) => {
                // The peer repeats its FIN: our ACK of it was lost.
                let p = &mut self.pipes[k];
                if seg.flags.contains(Flags::FIN) && seg.seq.checked_add(1) == Some(p.peer_next) {
                    p.ack_due = true;
                }
                return;
            }
            Phase::Idle | Phase::SynSent { .. } | Phase::Closed => return,
        }
        // pACK and the pTCP window (§4.5): the receiver's single buffer. Beyond the end of
        // the stream plus its FIN it acknowledges nothing we sent.
        let pack = StreamOffset(d.ptcp.ack);
        let sent_end = self
            .bindings
            .next_new()
            .plus(u64::from(self.stream.fin_pending()));
        if pack <= sent_end && pack >= self.acked {
            if pack > self.acked {
                self.acked = pack;
                self.stream.ack_to(pack.min(self.stream.end()));
                self.bindings.on_stream_ack(pack);
                self.probe_backoff = 0;
                self.probe_deadline = None;
            }
            self.peer_window = u64::from(seg.window);
        }
        let p = &mut self.pipes[k];
        let ack = PipeSeq(seg.ack);
        p.ts_recent = seg.ts_val;
        if p.pipe.is_idle_ack(ack) {
            p.pipe.on_idle_ack(now);
            return;
        }
        if !p.pipe.acceptable(ack) {
            return;
        }
        // RFC 7323 §4.1: a TSecr updates the RTT estimate only from an ACK that advances
        // SND.UNA.
        let rtt_sample = (ack > p.pipe.snd_una())
            .then(|| Duration::from_micros(u64::from(ts_of(now).wrapping_sub(seg.ts_ecr))))
            .filter(|rtt| *rtt < MAX_RTT_SAMPLE);
        let out = p.pipe.on_ack(
            now,
            &PipeAckInput {
                ack,
                sack_blocks: seg.options.sack_blocks(),
                rtt_sample,
                may_be_duplicate: seg.payload.is_empty(),
                // The window is the connection's (§4.5): it moves with every pipe's arrivals
                // and reads, so a change says nothing about this pipe (RFC 5681 §2's
                // "window unchanged" test would hide its duplicate ACKs).
                window_changed: false,
                eln: seg.flags.contains(Flags::ELN),
            },
        );
        self.bindings.on_pipe_ack(p.id, p.pipe.snd_una());
        if out.shrunk || p.pipe.repairing() {
            // ptcp.txt §4.2 shrunk(), and losses found while repairing: unbind what the pipe
            // owes beyond its window.
            self.stats.bytes_unbound += unbind_owed(&mut self.bindings, p);
        }
        // §4.4 termination: the peer's FIN, once ours is acknowledged (the server sends its
        // FIN only after ours, on the segment that acknowledges it).
        if p.phase == Phase::Closing
            && p.pipe.is_empty()
            && seg.flags.contains(Flags::FIN)
            && seg.seq == p.peer_next
        {
            p.peer_next += 1;
            p.ack_due = true;
            p.phase = Phase::TimeWait(now + Duration::from_millis(self.cfg.time_wait_ms));
        }
    }

    /// Handles expired timers (spurious calls are harmless).
    pub fn handle_timeout(&mut self, now: Time) {
        let max_syn = self.cfg.max_syn_retries;
        let unanswered = self.remote == ConnId(0)
            && self.pipes.iter().any(|p| {
                matches!(p.phase, Phase::SynSent { tries, deadline }
                    if tries >= FIRST_SYN_TRIES && deadline <= now)
            });
        if unanswered {
            // Beyond the paper (docs/PTCP.md): the first pipe's path may be broken. After
            // its second unanswered SYN, the next pipe opens too, with the extension; the
            // first SYN-ACK to arrive makes the connection.
            if let Some(q) = self.pipes.iter_mut().find(|q| q.phase == Phase::Idle) {
                q.phase = Phase::SynSent {
                    tries: 0,
                    deadline: now,
                };
            }
        }
        for p in &mut self.pipes {
            if p.dead {
                continue;
            }
            match p.phase {
                Phase::SynSent { tries, deadline } if deadline <= now => {
                    if tries > max_syn {
                        // Its handshake failed: the connection goes on without it.
                        p.dead = true;
                    } else {
                        // Due now: the next SYN leaves at the next transmit, which moves
                        // the deadline (until then it is not reported again).
                        p.phase = Phase::SynSent {
                            tries,
                            deadline: Time::MAX,
                        };
                    }
                    continue;
                }
                Phase::TimeWait(deadline) if deadline <= now => {
                    p.phase = Phase::Closed;
                    continue;
                }
                Phase::Established | Phase::Closing => {}
                _ => continue,
            }
            p.pipe.on_timers(now);
            if !p.pipe.take_expired_rto(now) {
                continue;
            }
            let una = p.pipe.snd_una();
            if !p.pipe.on_rto(now) {
                // Gave up: everything it holds goes to the other pipes.
                p.dead = true;
                self.stats.bytes_unbound += self.bindings.unbind_beyond(p.id, una);
                continue;
            }
            // ptcp.txt §3: the first segment of the window goes to another pipe too, and the
            // collapsed window unbinds the rest (every un-SACKed segment is deemed lost now).
            if self.bindings.stripe_redundantly(p.id, una).is_some() {
                self.stats.redundant_stripes += 1;
            }
            self.stats.bytes_unbound += unbind_owed(&mut self.bindings, p);
        }
        if self.probe_deadline.is_some_and(|d| d <= now) {
            self.probe_deadline = None;
            self.probe_backoff = self.probe_backoff.saturating_add(1);
            self.probe_due = true;
        }
    }

    /// The earliest timer deadline.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.pipes
            .iter()
            .filter(|p| !p.dead)
            .filter_map(|p| match p.phase {
                Phase::SynSent { deadline, .. } if deadline < Time::MAX => Some(deadline),
                Phase::TimeWait(deadline) => Some(deadline),
                Phase::Established | Phase::Closing => p.pipe.deadline(),
                _ => None,
            })
            .chain(self.probe_deadline)
            .min()
    }

    /// Writes the next datagram into `out` (cleared first), if a pipe may send one: pipes are
    /// asked in turn, so that each in turn gets the first chance. Call until `None`.
    pub fn poll_transmit(&mut self, now: Time, out: &mut Vec<u8>) -> Option<PtcpTransmit> {
        out.clear();
        let n = self.pipes.len();
        if self.bindings.unbound_bytes() > 0 || self.limit() > self.bindings.next_new() {
            // Data to bind: §4.1 resume() the pipes answered NO DATA.
            self.resumed.clear();
            self.bindings.take_active(&mut self.resumed);
        }
        for i in 0..n {
            let k = (self.turn + i) % n;
            if let Some(t) = self.transmit_on(now, k, out) {
                self.turn = (k + 1) % n;
                return Some(t);
            }
        }
        self.probe(now, out)
    }

    /// The next segment of pipe `k`, written into `out`: a lost segment again (the bytes its
    /// sequence numbers carry), or new bytes bound to its next sequence number when its window
    /// has room.
    fn transmit_on(&mut self, now: Time, k: usize, out: &mut Vec<u8>) -> Option<PtcpTransmit> {
        let limit = self.limit();
        let complete = self.is_complete();
        let p = &mut self.pipes[k];
        if p.dead {
            return None;
        }
        match p.phase {
            Phase::Idle | Phase::Closed => return None,
            Phase::SynSent { tries, deadline } => {
                if complete {
                    // The stream ended before this pipe opened: it is not needed.
                    p.phase = Phase::Closed;
                    return None;
                }
                if deadline > now && deadline < Time::MAX {
                    return None;
                }
                let wait = p
                    .pipe
                    .rtt()
                    .rto()
                    .saturating_mul(1 << tries.min(16))
                    .min(MAX_PROBE_INTERVAL);
                p.phase = Phase::SynSent {
                    tries: tries + 1,
                    deadline: now + wait,
                };
                return Some(self.encode_syn(now, k, out));
            }
            Phase::TimeWait(_) => {
                if !p.ack_due {
                    return None;
                }
                return Some(self.encode_ack(now, k, out));
            }
            Phase::Established | Phase::Closing => {}
        }
        if p.ack_due {
            // The handshake's third segment (§4.4: the pipe "enters the ESTABLISHED state
            // after sending back an ACK"), or the ACK of the peer's FIN.
            return Some(self.encode_ack(now, k, out));
        }
        let p = &mut self.pipes[k];
        if p.pipe.suspended() {
            return None;
        }
        if complete && p.phase == Phase::Established && p.pipe.is_empty() {
            // §4.4 termination: every byte and the end of the stream are acknowledged; this
            // pipe closes by its own FIN.
            let tx = p.pipe.send_new(now, 0, true);
            p.phase = Phase::Closing;
            self.payload.clear();
            let end = self.stream.end().plus(1);
            self.encode(now, out, k, tx.seq, end, false, true);
            return Some(PtcpTransmit {
                path: self.pipes[k].path,
                len: out.len(),
            });
        }
        let lost = p.pipe.next_lost();
        if lost.is_none() && p.phase == Phase::Closing {
            return None;
        }
        let mss = p.pipe.mss();
        let (in_pipe, window) = p.pipe.pipe_and_window();
        if lost.is_none() {
            p.pipe.clear_force_retransmit();
            if in_pipe >= window {
                return None;
            }
        }
        let rate = p.pipe.pacing_rate();
        if let Some(rate) = rate {
            if !p.pipe.pacer_permits(now, rate) {
                return None;
            }
        }
        let (tx, offset): (TxSegment, StreamOffset) = if let Some(lost) = lost {
            let tx = p.pipe.retransmit_lost(now, lost, in_pipe, window)?;
            if tx.payload_len == 0 {
                // The pipe's FIN again: it carries no stream bytes.
                (tx, self.stream.end().plus(1))
            } else {
                // Every sequence number sent keeps its binding until the pipe acknowledges it.
                let b = self.bindings.lookup(p.id, PipeSeq(tx.seq))?;
                (tx, b.offset.plus(tx.seq - b.seq.0))
            }
        } else {
            let room = window - in_pipe;
            let max_len = room.min(mss);
            // Whole segments while data is outstanding (sender silly-window avoidance, RFC
            // 1122 §4.2.3.4).
            if max_len < mss && !p.pipe.is_empty() {
                return None;
            }
            // Nagle (RFC 896) at the connection's level: a pipe with data outstanding waits
            // for a full segment of new data while the stream is open.
            let new_bytes = limit.since(self.bindings.next_new());
            if new_bytes < self.mss
                && !self.stream.fin_pending()
                && !p.pipe.is_empty()
                && !self.bindings.has_reassigned_for(p.id)
            {
                return None;
            }
            if !p.pipe.initial_pacing_permits(now) {
                return None;
            }
            let was_active = self.bindings.is_active(p.id);
            let seq = p.pipe.snd_nxt();
            let Some(b) = self.bindings.bind(p.id, seq, max_len as u32, limit) else {
                // NO DATA (§4.2): the pipe waits among the active pipes.
                if !was_active {
                    self.stats.no_data += 1;
                }
                return None;
            };
            (p.pipe.send_new(now, u64::from(b.len), false), b.offset)
        };
        if let Some(rate) = rate {
            p.pipe.on_paced(now, u64::from(tx.payload_len), rate);
        }
        let len = tx.payload_len as usize;
        self.payload.clear();
        // Bytes the stream acknowledgement already covers are gone from the buffer; the
        // receiver drops them unread (they lie below its pACK), so zeros keep the pipe's
        // sequence space whole.
        let gone = self
            .acked
            .min(self.stream.end())
            .since(offset)
            .min(len as u64) as usize;
        self.payload.resize(gone, 0);
        self.stream
            .copy(offset.plus(gone as u64), len - gone, &mut self.payload);
        self.payload.resize(len, 0);
        let fin =
            len > 0 && self.stream.fin_pending() && offset.plus(len as u64) == self.stream.end();
        let pipe_fin = tx.fin;
        let path = p.path;
        self.encode(now, out, k, tx.seq, offset, fin, pipe_fin);
        Some(PtcpTransmit {
            path,
            len: out.len(),
        })
    }

    /// Encodes one data or bare datagram of pipe `k`: pipe sequence number `seq`, stream
    /// offset `offset`, the payload in `self.payload`, pFIN `fin`, the pipe's own FIN
    /// `pipe_fin`.
    #[allow(clippy::too_many_arguments)]
    fn encode(
        &self,
        now: Time,
        out: &mut Vec<u8>,
        k: usize,
        seq: u64,
        offset: StreamOffset,
        fin: bool,
        pipe_fin: bool,
    ) {
        let p = &self.pipes[k];
        let (conn_id, ts_recent) = (p.conn_id, p.ts_recent);
        let mut flags = Flags::ACK;
        if pipe_fin {
            flags.insert(Flags::FIN);
        }
        PtcpSegment {
            ptcp: PtcpHeader {
                pipe: conn_id,
                src: self.local,
                dst: self.remote,
                seq: offset.0,
                ack: 0,
                fin,
                syn: false,
            },
            handshake: None,
            segment: Segment {
                conn_id,
                flags,
                seq,
                ack: p.peer_next,
                window: 0,
                ts_val: ts_of(now),
                ts_ecr: ts_recent,
                options: Options::default(),
                payload: &self.payload,
            },
        }
        .encode(out);
    }

    /// A bare pFIN once every byte is acknowledged and the end is not; a window probe when the
    /// peer's window is closed, data waits and nothing is outstanding (RFC 1122 §4.2.2.17 at
    /// the connection's level: the window is the connection's, §4.5). The first pFIN leaves at
    /// once; the next ones, and every window probe, after the retransmission timeout of the
    /// pipe they use, doubled each time, on the next live pipe each time.
    fn probe(&mut self, now: Time, out: &mut Vec<u8>) -> Option<PtcpTransmit> {
        let end = self.stream.end();
        let fin_wait = self.stream.fin_pending() && self.acked == end;
        let window_wait = self.peer_window == 0
            && end > self.bindings.next_new()
            && self.pipes.iter().all(|p| p.pipe.is_empty());
        if !(fin_wait || window_wait) {
            self.probe_deadline = None;
            self.probe_due = false;
            return None;
        }
        let live: Vec<usize> = (0..self.pipes.len())
            .filter(|&k| !self.pipes[k].dead && self.pipes[k].phase == Phase::Established)
            .collect();
        if live.is_empty() {
            return None;
        }
        let k = live[(self.turn + self.probe_backoff as usize) % live.len()];
        let rto = self.pipes[k].pipe.rtt().rto();
        let first_fin = fin_wait && self.probe_backoff == 0 && self.probe_deadline.is_none();
        if !self.probe_due && !first_fin {
            if self.probe_deadline.is_none() {
                self.probe_deadline = Some(now + rto);
            }
            return None;
        }
        self.probe_due = false;
        let wait = rto
            .saturating_mul(1 << self.probe_backoff.min(16))
            .min(MAX_PROBE_INTERVAL);
        self.probe_deadline = Some(now + wait);
        if self.probe_backoff == 0 {
            self.probe_backoff = 1;
        }
        self.stats.probes += 1;
        self.payload.clear();
        let offset = if fin_wait { end } else { self.acked };
        let seq = self.pipes[k].pipe.snd_nxt().0;
        self.encode(now, out, k, seq, offset, fin_wait, false);
        Some(PtcpTransmit {
            path: self.pipes[k].path,
            len: out.len(),
        })
    }
}
