//! The sending half of a connection: one sender *pipe* — sequence space, scoreboard, RTT
//! estimator, congestion controller, loss recovery and the retransmission/persist timers.
//!
//! Loss recovery follows RFC 6675 (SACK) or RFC 6582 (NewReno, when SACK is off); the window
//! arithmetic on loss is the congestion controller's (see [`crate::cc`]).

mod probe_cycle;
mod recovery;
mod timers;

use std::time::Duration;

use roam_wire::{ProbeKind, ProbeOption, SackBlock};

use super::initial_pacing::InitialPacing;
use super::last_link::{LastLinkRtt, LastLinkTuning};
use super::pacing::Pacer;
use super::probing::{ProbeCycle, ProbeHistory, ProbeTrigger, ProbingConfig};
use super::scoreboard::{Scoreboard, SentSegment};
use super::send_buffer::SendBuffer;
use super::{RecoveryMode, TcpConfig};
use crate::cc::{CcKind, CongestionController, Delivered};
use crate::linkinfo::LinkInfo;
use crate::rtt::RttEstimator;
use crate::source::ByteSource;
use crate::Time;

/// What the sender wants to put on the wire next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxSegment {
    /// First sequence number.
    pub seq: u64,
    /// Payload bytes.
    pub payload_len: u32,
    /// Carries the FIN.
    pub fin: bool,
    /// This is a retransmission.
    pub retransmission: bool,
}

/// An ongoing loss-recovery episode.
#[derive(Debug, Clone, Copy)]
struct Recovery {
    /// RFC 6675 RecoveryPoint / RFC 6582 "recover": recovery ends when this is acknowledged.
    point: u64,
    /// RFC 6582 window inflation (dup-ACKs beyond the window), NewReno mode only.
    inflation: u64,
    /// The episode was entered without a window cut because the last-link PER heuristic
    /// judged the loss wireless; a later loss detected in the same episode consults it again
    /// (last-link-heuristics.txt §3.3, "whenever a segment loss is detected").
    per_excused: bool,
}

/// Sender-side counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Data segments sent for the first time.
    pub segments_sent: u64,
    /// Data segments retransmitted.
    pub retransmitted_segments: u64,
    /// Retransmission-timer expiries.
    pub timeouts: u64,
    /// Loss-recovery episodes entered.
    pub recoveries: u64,
    /// Bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    /// Recovery episodes entered without a window cut because the loss was wireless (ELN mark
    /// or the last-link PER heuristic).
    pub wireless_recoveries: u64,
    /// TCP-Probing: probe cycles started.
    pub probe_cycles: u64,
    /// TCP-Probing: exchanges restarted with a new id after a lost probe or probe ACK.
    pub probe_restarts: u64,
    /// TCP-Probing: cycles ending in Immediate Recovery.
    pub probe_immediate: u64,
    /// TCP-Probing: cycles ending in Gentle Recovery.
    pub probe_gentle: u64,
    /// TCP-Probing: cycles ending in Reno halving or Slow Start.
    pub probe_backoffs: u64,
}

/// Marks an acknowledgement carries besides its sequence fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckMarks {
    /// The ELN bit: the hole at the acknowledgement point was lost on the receiver's wireless
    /// hop.
    pub eln: bool,
    /// A probe option (PR1_ACK / PR2_ACK) — this segment answers a probe, it is not a
    /// duplicate ACK.
    pub probe: Option<ProbeOption>,
}

/// One sender pipe.
#[derive(Debug)]
pub struct Sender {
    mss: u64,
    dup_thresh: u32,
    max_window: u64,
    max_retries: u32,
    sack: bool,
    buf: SendBuffer,
    board: Scoreboard,
    snd_una: u64,
    snd_nxt: u64,
    peer_window: u64,
    /// The largest window the peer has offered (RFC 1122 §4.2.3.4's "max(SND.WND)").
    max_peer_window: u64,
    cc: Box<dyn CongestionController>,
    rtt: RttEstimator,
    recovery: Option<Recovery>,
    /// RFC 6582 `recover`: no new recovery episode until the ACK passes it.
    recover: u64,
    dupacks: u32,
    force_retransmit: bool,
    fin_queued: bool,
    fin_sent: bool,
    rto_deadline: Option<Time>,
    persist_deadline: Option<Time>,
    persist_backoff: u32,
    probe_pending: bool,
    failed: bool,
    stats: SenderStats,
    recovery_mode: RecoveryMode,
    probing_cfg: ProbingConfig,
    probe: Option<ProbeCycle>,
    probe_history: ProbeHistory,
    next_probe_id: u32,
    eln: bool,
    last_link: LastLinkTuning,
    /// Pacing of the window Initial Cwnd tuning installed, while it lasts.
    initial_pacing: Option<InitialPacing>,
    /// RFC 3042 Limited Transmit asked for (it applies only without SACK).
    limited_transmit: bool,
    /// Spacing of segments for a controller with a pacing rate (BBR).
    pacer: Pacer,
}

/// What an incoming acknowledgement did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckOutcome {
    /// Bytes newly cumulatively acknowledged.
    pub acked: u64,
    /// The ACK acknowledged our FIN.
    pub fin_acked: bool,
}

impl Sender {
    /// A sender whose first data byte has sequence number `isn + 1` (the SYN takes `isn`).
    pub fn new(cfg: &TcpConfig, cc: CcKind, mss: u64, sack: bool, first_seq: u64) -> Self {
        let max_window = if cfg.max_window_segments == 0 {
            u64::MAX
        } else {
            u64::from(cfg.max_window_segments) * mss
        };
        Sender {
            mss,
            dup_thresh: cfg.dup_thresh,
            max_window,
            max_retries: cfg.max_retries,
            sack,
            buf: SendBuffer::new(first_seq, cfg.send_buffer as usize),
            board: Scoreboard::default(),
            snd_una: first_seq,
            snd_nxt: first_seq,
            peer_window: u64::from(cfg.mss),
            max_peer_window: 0,
            cc: cc.build(mss, cfg.initial_window),
            rtt: RttEstimator::new(cfg.initial_rto(), cfg.min_rto(), cfg.max_rto()),
            recovery: None,
            recover: first_seq,
            dupacks: 0,
            force_retransmit: false,
            fin_queued: false,
            fin_sent: false,
            rto_deadline: None,
            persist_deadline: None,
            persist_backoff: 0,
            probe_pending: false,
            failed: false,
            stats: SenderStats::default(),
            recovery_mode: cfg.recovery,
            probing_cfg: cfg.probing,
            probe: None,
            probe_history: ProbeHistory::default(),
            next_probe_id: 1,
            eln: cfg.eln,
            last_link: LastLinkTuning::new(cfg.last_link),
            initial_pacing: None,
            limited_transmit: cfg.limited_transmit,
            pacer: Pacer::default(),
        }
    }

    /// Applies the handshake's outcome (MSS and SACK) before any data was sent; data already
    /// written stays queued.
    pub fn negotiate(&mut self, cfg: &TcpConfig, cc: CcKind, mss: u64, sack: bool) {
        self.mss = mss;
        self.sack = sack;
        self.cc = cc.build(mss, cfg.initial_window);
        if cfg.max_window_segments != 0 {
            self.max_window = u64::from(cfg.max_window_segments) * mss;
        }
    }

    /// Passes the host's facts about the local link to the congestion controller.
    pub fn on_local_link(&mut self, now: Time, info: &LinkInfo) {
        self.cc.on_local_link(now, info);
    }

    /// Passes the peer's reported link facts to the congestion controller and the last-link
    /// heuristics (last-link-heuristics.txt §3.2: the first report sets cwnd = ssthresh).
    pub fn on_peer_link(&mut self, now: Time, info: &LinkInfo) {
        self.cc.on_peer_link(now, info);
        if let Some(w) = self
            .last_link
            .on_peer_link(info, self.last_link_rtt(), self.mss)
        {
            self.cc.set_window(w, Some(w));
            if self.last_link.paces_initial() {
                self.initial_pacing =
                    InitialPacing::new(now, self.snd_nxt, w, self.mss, info.bandwidth_bps);
            }
        }
    }

    /// The RTT the last-link heuristics multiply the bandwidth by (configurable).
    fn last_link_rtt(&self) -> Option<Duration> {
        match self.last_link.rtt_kind() {
            LastLinkRtt::Min => Some(self.rtt.min_rtt()).filter(|d| *d != Duration::MAX),
            LastLinkRtt::Smoothed => self.rtt.srtt(),
        }
    }

    /// Application write; returns bytes accepted.
    pub fn write(&mut self, data: &[u8]) -> usize {
        if self.fin_queued {
            return 0;
        }
        self.buf.write(data)
    }

    /// Takes the stream's bytes from `source` instead of copies (see [`crate::source`]);
    /// refused (false) once bytes were written.
    pub fn set_source(&mut self, source: Box<dyn ByteSource>) -> bool {
        let origin = self.buf.end();
        self.buf.set_source(source, origin)
    }

    /// With a source: makes up to `n` more stream bytes available; returns how many were
    /// accepted (bounded by the send buffer, like [`Sender::write`]).
    pub fn push(&mut self, n: u64) -> u64 {
        if self.fin_queued {
            return 0;
        }
        self.buf.push(n)
    }

    /// Free space in the send buffer.
    pub fn write_capacity(&self) -> usize {
        if self.fin_queued {
            0
        } else {
            self.buf.free()
        }
    }

    /// Queues a FIN after all written data.
    pub fn close(&mut self) {
        self.fin_queued = true;
    }

    /// The negotiated maximum segment size.
    pub fn mss(&self) -> u64 {
        self.mss
    }

    /// Most bytes this sender holds (`docs/HANDSHAKE.md`, "Memory"): the send buffer (nothing
    /// with a [`ByteSource`]); the scoreboard, one entry per outstanding segment — full segments but for at most three (a
    /// short one sent with nothing outstanding, Nagle then holds short ones back; the last
    /// before the FIN; the FIN) — twice over for its ring's growth; the PER heuristic's window.
    pub fn memory_bound(&self) -> usize {
        let mss = usize::try_from(self.mss).unwrap_or(usize::MAX).max(1);
        let segments = self.buf.capacity() / mss + 3;
        let board = 2 * segments * std::mem::size_of::<super::scoreboard::SentSegment>();
        self.buf
            .memory_bound()
            .saturating_add(board)
            .saturating_add(self.last_link.memory_bound())
    }

    /// SND.UNA.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// SND.NXT.
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }

    /// Congestion window (bytes).
    pub fn cwnd(&self) -> u64 {
        self.cc.window()
    }

    /// Slow-start threshold (bytes).
    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }

    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// Counters.
    pub fn stats(&self) -> SenderStats {
        self.stats
    }

    /// Bytes believed in the network.
    pub fn in_flight(&self) -> u64 {
        self.board.pipe()
    }

    /// True when every byte and the FIN (if queued) were acknowledged.
    pub fn all_acked(&self) -> bool {
        self.board.is_empty() && self.snd_nxt == self.buf.end() + u64::from(self.fin_sent)
    }

    /// True if the FIN was sent and acknowledged.
    pub fn fin_acked(&self) -> bool {
        self.fin_sent && self.board.is_empty()
    }

    /// True after too many consecutive timeouts.
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// Copies payload bytes of `seg` into `out`.
    pub fn copy_payload(&self, seg: &TxSegment, out: &mut Vec<u8>) {
        self.buf.copy_range(seg.seq, seg.payload_len as usize, out);
    }

    /// Feeds the first RTT sample taken during the handshake.
    pub fn on_handshake_rtt(&mut self, rtt: Duration) {
        self.rtt.on_sample(rtt);
    }

    /// Sets the peer's advertised window (from the handshake).
    pub fn set_peer_window(&mut self, w: u64) {
        self.peer_window = w;
        self.max_peer_window = self.max_peer_window.max(w);
    }

    /// Processes the acknowledgement fields of an incoming segment.
    #[allow(clippy::too_many_arguments)] // The fields of one acknowledgement, passed flat.
    pub fn on_ack(
        &mut self,
        now: Time,
        ack: u64,
        window: u64,
        sack_blocks: &[SackBlock],
        rtt_sample: Option<Duration>,
        carries_data: bool,
        marks: AckMarks,
    ) -> AckOutcome {
        let mut out = AckOutcome::default();
        let probe_answer = marks
            .probe
            .filter(|p| matches!(p.kind, ProbeKind::Pr1Ack | ProbeKind::Pr2Ack));
        if let Some(p) = probe_answer {
            self.on_probe_ack(now, p);
        }
        // A probe answer echoes the timestamp of the last *data* segment the receiver took in,
        // possibly seconds ago: its timing belongs to the probe (measured by the cycle), so it
        // yields no RTT sample for the estimator.
        let rtt_sample = rtt_sample.filter(|_| probe_answer.is_none());
        if ack == self.snd_una && self.board.is_empty() && self.recovery.is_none() {
            // Nothing outstanding and nothing acknowledged (the receiving end of a one-way
            // transfer, with every data segment): the general path below only takes the
            // window and reports an empty delivery.
            self.on_idle_ack(now, window);
            return out;
        }
        if ack > self.snd_nxt || ack < self.snd_una {
            // Acknowledges data never sent, or an old ACK: ignore (RFC 793 §3.9).
            return out;
        }
        let window_changed = window != self.peer_window;
        self.take_window(window);
        let newly_sacked = if self.sack && !sack_blocks.is_empty() {
            self.board.sack(sack_blocks)
        } else {
            0
        };
        let mut delivered = 0;
        if ack > self.snd_una {
            let fin_was_outstanding = self.fin_sent && !self.board.is_empty();
            let acked = self.board.ack_to(ack);
            delivered = acked.newly_delivered;
            out.acked = ack - self.snd_una;
            self.stats.bytes_acked += out.acked;
            self.snd_una = ack;
            self.buf.ack_to(ack);
            self.dupacks = 0;
            if let Some(rtt) = rtt_sample {
                self.rtt.on_sample(rtt);
                self.cc.on_rtt_sample(now, rtt, self.rtt.min_rtt());
            }
            out.fin_acked = fin_was_outstanding && self.board.is_empty();
            self.rto_deadline = if self.board.is_empty() || self.probe.is_some() {
                None
            } else {
                Some(self.rtt.rto_deadline(now))
            };
        } else if !self.board.is_empty()
            && !carries_data
            && probe_answer.is_none()
            && (newly_sacked > 0 || (!self.sack && !window_changed))
        {
            // RFC 5681 §2 duplicate ACK (with SACK: one that SACKs new data, RFC 6675 §2).
            // A peer may send duplicate ACKs for ever: the counters saturate.
            self.dupacks = self.dupacks.saturating_add(1);
            if let Some(cycle) = self.probe.as_mut() {
                // tcp-probing.txt §3.1: dup-ACKs are counted in a dup-ACK-triggered cycle.
                if cycle.trigger == ProbeTrigger::DupAcks {
                    cycle.dupacks = cycle.dupacks.saturating_add(1);
                }
            }
        }
        if self.sack && (newly_sacked > 0 || out.acked > 0) {
            self.board.mark_losses(self.dup_thresh, self.mss);
        }
        // The ACK that ends a recovery episode does not grow the window (RFC 6582 §3.2 step
        // 3: cwnd is set to ssthresh on the full acknowledgement).
        let was_in_recovery = self.recovery.is_some();
        if self.probe.is_none() {
            self.update_recovery(now, out.acked, marks.eln);
        }
        self.deliver(&Delivered {
            now,
            bytes: delivered,
            sacked_bytes: newly_sacked,
            in_flight: self.board.pipe(),
            in_recovery: was_in_recovery || self.recovery.is_some(),
            rtt: rtt_sample.filter(|_| out.acked > 0),
        });
        out
    }

    /// [`Sender::on_ack`] of an acknowledgement of SND.UNA with nothing outstanding and no
    /// recovery episode: what the general path does then. Its SACK blocks mark nothing on an
    /// empty board, it counts no duplicate ACK (nothing is outstanding), and recovery cannot
    /// start (it needs something outstanding) nor end (none is in progress).
    fn on_idle_ack(&mut self, now: Time, window: u64) {
        self.take_window(window);
        if self.cc.ignores_empty_deliveries() {
            return;
        }
        self.deliver(&Delivered {
            now,
            bytes: 0,
            sacked_bytes: 0,
            in_flight: self.board.pipe(),
            in_recovery: false,
            rtt: None,
        });
    }

    /// Takes the peer's advertised `window` from an acceptable acknowledgement; an open one
    /// ends the persist timer and its backoff (RFC 1122 §4.2.2.17: probing lasts while the
    /// window is zero).
    #[inline]
    fn take_window(&mut self, window: u64) {
        self.peer_window = window;
        self.max_peer_window = self.max_peer_window.max(window);
        if window > 0 {
            self.persist_deadline = None;
            self.persist_backoff = 0;
        }
    }

    /// Reports a delivery to the congestion controller, then applies the last-link cap.
    #[inline]
    fn deliver(&mut self, delivered: &Delivered) {
        let cap = self.last_link.cwnd_cap(self.last_link_rtt(), self.mss);
        let window_before = self.cc.window();
        self.cc.on_delivered(delivered);
        // last-link-heuristics.txt §3.1: "If Cwnd is less than Cwnd_max, it keeps increasing
        // ... Otherwise, it stops to increase Cwnd" (Cwnd_max = BW·RTT/(8·L_segment)). Growth
        // past the cap is undone here rather than hidden from the controller, so rate
        // estimators (Westwood+, ATL) still see every delivered byte.
        if let Some(cap) = cap {
            let limit = window_before.max(cap);
            if self.cc.window() > limit {
                self.cc.set_window(limit, None);
            }
        }
    }

    /// The usable window: congestion window (capped) plus NewReno inflation, or plus the
    /// Limited Transmit allowance before recovery.
    fn window(&self) -> u64 {
        let extra = match self.recovery {
            Some(r) => r.inflation,
            None => self.limited_transmit_allowance(),
        };
        self.cc.window().min(self.max_window).saturating_add(extra)
    }

    /// RFC 3042 §2: one segment beyond cwnd per duplicate ACK below the threshold (without
    /// SACK only: with it, the pipe already discounts what the duplicate ACKs SACKed).
    fn limited_transmit_allowance(&self) -> u64 {
        if !self.limited_transmit || self.sack {
            return 0;
        }
        u64::from(self.dupacks.min(self.dup_thresh.saturating_sub(1))) * self.mss
    }

    /// Chooses the next segment to send, if the windows allow one, and records it as sent.
    #[inline]
    pub fn next_segment(&mut self, now: Time) -> Option<TxSegment> {
        if self.failed || self.probe.is_some() {
            // tcp-probing.txt §3.1: no data is sent before the probe cycle completes.
            return None;
        }
        let lost = self.board.next_lost();
        if lost.is_none() && self.buf.end() <= self.snd_nxt && (!self.fin_queued || self.fin_sent) {
            // Nothing to retransmit and nothing new (a receiver that sends no data asks after
            // every segment it takes in): what the general path below concludes too.
            self.force_retransmit = false;
            return None;
        }
        let pipe = self.board.pipe();
        let window = self.window();
        if lost.is_none() && !self.probe_pending && pipe >= window {
            // The congestion window is full and nothing is lost (the sender's every other
            // poll, after the segment an ACK let out): the general path below sends nothing
            // either, and arms the persist timer only for a zero peer window.
            self.force_retransmit = false;
            if self.peer_window == 0 {
                self.arm_persist(now);
            }
            return None;
        }
        match self.cc.pacing_rate() {
            None => self.choose_segment(now, lost, pipe, window),
            Some(rate) => {
                // A rate-based controller: segments, retransmissions included, leave no faster
                // than its pacing rate (pacing.rs).
                if !self.pacer.permits(now, self.mss, rate) {
                    return None;
                }
                let seg = self.choose_segment(now, lost, pipe, window)?;
                self.pacer.on_sent(now, u64::from(seg.payload_len), rate);
                Some(seg)
            }
        }
    }

    /// [`Sender::next_segment`] with something to retransmit or to send: `lost` is the
    /// scoreboard's next lost segment, `pipe` and `window` its pipe and [`Sender::window`].
    fn choose_segment(
        &mut self,
        now: Time,
        lost: Option<SentSegment>,
        pipe: u64,
        window: u64,
    ) -> Option<TxSegment> {
        if let Some(lost) = lost {
            if self.force_retransmit || pipe + u64::from(lost.len) <= window || pipe == 0 {
                self.force_retransmit = false;
                return Some(self.retransmit(now, lost.seq, lost.len, lost.fin));
            }
            // Retransmissions come before new data (RFC 6675 NextSeg rule 1).
            return None;
        }
        self.force_retransmit = false;
        let data_end = self.buf.end();
        let avail = data_end.saturating_sub(self.snd_nxt);
        let right_edge = self.snd_una.saturating_add(self.peer_window);
        let wnd_room = right_edge.saturating_sub(self.snd_nxt);
        let fin_pending = self.fin_queued && !self.fin_sent;
        if avail == 0 && !fin_pending {
            return None;
        }
        // The persist timer fired with nothing outstanding: probe a zero window, or send what
        // a small one allows (RFC 1122 §4.2.3.4's override timeout).
        let overriding = std::mem::take(&mut self.probe_pending);
        if overriding && avail > 0 && wnd_room == 0 {
            // Zero-window probe (RFC 1122 §4.2.2.17): one byte past the window.
            return Some(self.send_new(now, 1, false));
        }
        let mut len = avail.min(self.mss).min(wnd_room);
        let cwnd_room = window.saturating_sub(pipe);
        if len > cwnd_room {
            len = if cwnd_room >= self.mss { self.mss } else { 0 };
            len = len.min(cwnd_room);
        }
        // Sender-side silly-window avoidance (RFC 1122 §4.2.3.4): a segment shorter than the
        // MSS that is not all the queued data leaves only if it fills at least half the largest
        // window the peer has offered, or on the override timeout. Holding with nothing
        // outstanding arms that timeout (the persist timer): no ACK may come to reopen the
        // window, since the receiver announces only growth of a full threshold.
        if len > 0 && len < self.mss && len < avail && 2 * len < self.max_peer_window && !overriding
        {
            self.arm_persist(now);
            return None;
        }
        // Nagle (RFC 896): hold back a small segment while data is outstanding.
        if len > 0 && len < self.mss && !self.board.is_empty() && !fin_pending {
            return None;
        }
        if len > 0 && !self.initial_pacing_permits(now) {
            return None;
        }
        let fin = fin_pending && self.snd_nxt + len == data_end && (len > 0 || cwnd_room > 0);
        if len == 0 && !fin {
            if self.peer_window == 0 {
                self.arm_persist(now);
            }
            return None;
        }
        Some(self.send_new(now, len, fin))
    }

    /// Arms the persist timer when nothing is outstanding (with data outstanding, its ACKs or
    /// the retransmission timer keep the connection going).
    fn arm_persist(&mut self, now: Time) {
        if self.board.is_empty() && self.persist_deadline.is_none() {
            self.persist_deadline = Some(self.rtt.rto_deadline(now));
        }
    }

    /// last-link-heuristics.txt §3.2 with our pacing (`initial_pacing.rs`): may the next new
    /// segment of the initial window leave now? Ends the pacing once the window has left.
    fn initial_pacing_permits(&mut self, now: Time) -> bool {
        let snd_nxt = self.snd_nxt;
        match self.initial_pacing.as_mut() {
            Some(p) if p.active(snd_nxt) => p.permits(now),
            Some(_) => {
                self.initial_pacing = None;
                true
            }
            None => true,
        }
    }

    fn send_new(&mut self, now: Time, len: u64, fin: bool) -> TxSegment {
        if let Some(p) = self.initial_pacing.as_mut() {
            p.on_sent(now);
        }
        let seg = TxSegment {
            seq: self.snd_nxt,
            payload_len: len as u32,
            fin,
            retransmission: false,
        };
        let seq_len = len as u32 + u32::from(fin);
        self.board.push(self.snd_nxt, seq_len, fin, now);
        self.snd_nxt += u64::from(seq_len);
        if fin {
            self.fin_sent = true;
        }
        self.stats.segments_sent += 1;
        self.last_link.on_transmission(false);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(self.rtt.rto_deadline(now));
        }
        seg
    }

    fn retransmit(&mut self, now: Time, seq: u64, len: u32, fin: bool) -> TxSegment {
        self.board.on_retransmit(seq, now);
        self.stats.retransmitted_segments += 1;
        self.last_link.on_transmission(true);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(self.rtt.rto_deadline(now));
        }
        TxSegment {
            seq,
            payload_len: len - u32::from(fin),
            fin,
            retransmission: true,
        }
    }

    /// The earliest timer deadline.
    pub fn deadline(&self) -> Option<Time> {
        // Plain comparisons: the host asks after every transmission, and an iterator over an
        // array of options compiled to stack copies and reloads (docs/SCALE.md).
        let mut t = earliest(self.rto_deadline, self.persist_deadline);
        if let Some(p) = &self.probe {
            t = earliest(t, p.deadline());
        }
        if let Some(p) = &self.initial_pacing {
            t = earliest(t, p.deadline());
        }
        earliest(t, self.pacer.deadline())
    }
}

/// The earlier of two optional deadlines (a missing one never wins).
#[inline]
pub(super) fn earliest(a: Option<Time>, b: Option<Time>) -> Option<Time> {
    // Without branches: a missing deadline counts as the end of time, and the result is
    // missing only when both are (a deadline may itself be the end of time: `Time` saturates).
    let t = a.unwrap_or(Time::MAX).min(b.unwrap_or(Time::MAX));
    (a.is_some() || b.is_some()).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::bbr;

    /// A sender with `n` full segments outstanding from sequence number 1.
    fn sending(sack: bool, n: usize) -> Sender {
        let cfg = TcpConfig {
            sack,
            initial_window: n as u32,
            ..TcpConfig::default()
        };
        let mut s = Sender::new(&cfg, CcKind::NewReno, 1000, sack, 1);
        s.set_peer_window(1 << 20);
        s.write(&vec![7; n * 1000]);
        for _ in 0..n {
            s.next_segment(Time::ZERO).expect("window open");
        }
        s
    }

    /// The "nothing to send" and "window full" exits of `next_segment` and the general path
    /// agree, and leave the sender in the same state: idle, everything acknowledged, the FIN
    /// sent, a retransmission forced with nothing lost, the congestion window full.
    #[test]
    fn nothing_to_send_exits_as_the_general_path_does() {
        // Everything the four segments carried is acknowledged.
        fn ack_all(s: &mut Sender) {
            let marks = AckMarks::default();
            s.on_ack(Time::ZERO, 4001, 1 << 20, &[], None, false, marks);
        }
        let setups: [fn(&mut Sender); 5] = [
            |_| {},
            ack_all,
            |s| {
                ack_all(s);
                s.close();
                assert!(s.next_segment(Time::ZERO).is_some_and(|t| t.fin));
            },
            |s| s.force_retransmit = true,
            // The congestion window full, data still queued.
            |s| {
                s.write(&vec![7; 100_000]);
                while s.next_segment(Time::ZERO).is_some() {}
                assert!(s.board.pipe() >= s.window() && s.buf.end() > s.snd_nxt);
            },
        ];
        for sack in [false, true] {
            for setup in setups {
                let (mut fast, mut general) = (sending(sack, 4), sending(sack, 4));
                setup(&mut fast);
                setup(&mut general);
                let now = Time::from_millis(1);
                let lost = general.board.next_lost();
                let (pipe, window) = (general.board.pipe(), general.window());
                let chosen = general.choose_segment(now, lost, pipe, window);
                assert_eq!(fast.next_segment(now), chosen);
                assert_eq!(fast.force_retransmit, general.force_retransmit);
                assert_eq!(fast.deadline(), general.deadline());
                assert_eq!(fast.board.len(), general.board.len());
            }
        }
    }

    /// A rate-based controller's pacing reaches the host through the sender's deadline: BBR
    /// with IW 10 and a 100 ms RTT paces at 2.885 · 10 000 B / 0.1 s = 288.5 kB/s, one
    /// 1000-byte segment per 3.466 ms in bursts of two (draft send quantum below 24 Mb/s); the
    /// held segment leaves when the deadline the sender reported has come. NewReno is not
    /// paced.
    #[test]
    fn bbr_pacing_is_a_sender_deadline() {
        for (cc, paced) in [(CcKind::Bbr, true), (CcKind::NewReno, false)] {
            let cfg = TcpConfig {
                initial_window: 10,
                ..TcpConfig::default()
            };
            let mut s = Sender::new(&cfg, cc, 1000, true, 1);
            s.set_peer_window(1 << 20);
            s.write(&vec![7; 100_000]);
            assert!(s.next_segment(Time::ZERO).is_some());
            let t = Time::from_millis(100);
            let rtt = Some(Duration::from_millis(100));
            s.on_ack(t, 1001, 1 << 20, &[], rtt, false, AckMarks::default());
            let mut sent = 0;
            while s.next_segment(t).is_some() {
                sent += 1;
            }
            if !paced {
                assert!(sent >= 10, "{sent}");
                continue;
            }
            assert_eq!(sent, 2, "a burst of one send quantum");
            let wake = s.deadline().expect("a pacing deadline");
            let gap = 1000.0 / (bbr::HIGH_GAIN * 10_000.0 / 0.1);
            let expected = Time::from_secs_f64(0.1 + gap);
            assert!(wake.saturating_since(expected) < Duration::from_micros(2));
            assert!(expected.saturating_since(wake) < Duration::from_micros(2));
            assert!(s.next_segment(Time::from_millis(101)).is_none());
            s.on_timeout(wake);
            assert!(s.next_segment(wake).is_some());
        }
    }

    /// A peer may repeat an acknowledgement for ever: the counters and the NewReno inflation
    /// saturate instead of overflowing.
    #[test]
    fn endless_duplicate_acks_saturate() {
        for sack in [false, true] {
            let mut s = sending(sack, 4);
            s.dupacks = u32::MAX - 2;
            let blocks = [SackBlock {
                start: 1001,
                end: 2001,
            }];
            for k in 0..8u32 {
                let sack_blocks: &[SackBlock] = if sack { &blocks[..] } else { &[] };
                s.on_ack(
                    Time::from_millis(u64::from(k)),
                    1,
                    1 << 20,
                    sack_blocks,
                    None,
                    false,
                    AckMarks::default(),
                );
            }
            assert!(s.dupacks >= u32::MAX - 2, "sack={sack}: {}", s.dupacks);
            if let Some(r) = s.recovery.as_mut() {
                r.inflation = u64::MAX - 10;
            }
            s.on_ack(
                Time::from_millis(9),
                1,
                1 << 20,
                &[],
                None,
                false,
                AckMarks::default(),
            );
            s.on_ack(
                Time::from_millis(10),
                1001,
                1 << 20,
                &[],
                None,
                false,
                AckMarks::default(),
            );
            let _ = s.next_segment(Time::from_millis(10));
        }
    }
}
