//! One sender *pipe*: one path's state — its own sequence space, scoreboard, RTT estimator,
//! congestion controller, loss recovery, retransmission timer, TCP-Probing cycle and pacing.
//!
//! A pipe knows nothing of the application's bytes, the peer's receive window, the FIN's
//! place in the stream or Nagle: those are the send stream's ([`super::stream::SendStream`]).
//! It says how much room its window has ([`SenderPipe::room`]), takes new segments
//! ([`SenderPipe::send_new`]) and chooses retransmissions ([`SenderPipe::retransmit_lost`]) in
//! its own sequence space ([`PipeSeq`]), and reports when its window shrinks
//! ([`PipeAck::shrunk`]) or it times out ([`SenderPipe::on_rto`]) — the TCP-v roles of
//! ptcp.txt §4.2 (`send`, `shrunk`) a striping engine binds stream data through. The TCP-like
//! engine drives one pipe with an identity binding ([`super::Sender`]).
//!
//! Loss recovery follows RFC 6675 (SACK) or RFC 6582 (NewReno, when SACK is off); the window
//! arithmetic on loss is the congestion controller's (see [`crate::cc`]).

mod probe_cycle;
mod recovery;
mod timers;

use std::time::Duration;

use roam_wire::{ProbeKind, ProbeOption, SackBlock};

use super::TxSegment;
use crate::cc::{CcKind, CongestionController, Delivered};
use crate::linkinfo::LinkInfo;
use crate::rtt::RttEstimator;
use crate::seqspace::PipeSeq;
use crate::tcp::initial_pacing::InitialPacing;
use crate::tcp::last_link::{LastLinkRtt, LastLinkTuning};
use crate::tcp::pacing::Pacer;
use crate::tcp::probing::{ProbeCycle, ProbeHistory, ProbeTrigger, ProbingConfig};
use crate::tcp::scoreboard::{Scoreboard, SentSegment};
use crate::tcp::{RecoveryMode, TcpConfig};
use crate::Time;

/// An ongoing loss-recovery episode.
#[derive(Debug, Clone, Copy)]
pub(super) struct Recovery {
    /// RFC 6675 RecoveryPoint / RFC 6582 "recover": recovery ends when this is acknowledged.
    point: u64,
    /// RFC 6582 window inflation (dup-ACKs beyond the window), NewReno mode only.
    pub(super) inflation: u64,
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

/// The acknowledgement fields a pipe takes in (its own sequence space).
#[derive(Debug, Clone, Copy)]
pub struct PipeAckInput<'a> {
    /// The cumulative acknowledgement; [`SenderPipe::acceptable`] must have accepted it.
    pub ack: PipeSeq,
    /// SACK blocks (ignored without SACK).
    pub sack_blocks: &'a [SackBlock],
    /// An RTT sample the acknowledgement yields (none from a probe answer).
    pub rtt_sample: Option<Duration>,
    /// The acknowledgement may count as a duplicate ACK: it carries no data and answers no
    /// probe (RFC 5681 §2).
    pub may_be_duplicate: bool,
    /// It changed the peer's advertised window (without SACK, such an ACK is no duplicate).
    pub window_changed: bool,
    /// The ELN bit (rcp-r2cp.txt §3.4.2).
    pub eln: bool,
}

/// What an acknowledgement did to a pipe.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PipeAck {
    /// Sequence numbers newly cumulatively acknowledged.
    pub acked: u64,
    /// Something was outstanding before and nothing is now.
    pub emptied: bool,
    /// The congestion window is smaller than before the acknowledgement (ptcp.txt §4.2
    /// `shrunk()`: a striping engine unbinds what lies beyond it).
    pub shrunk: bool,
}

/// One sender pipe.
#[derive(Debug)]
pub struct SenderPipe {
    mss: u64,
    dup_thresh: u32,
    max_window: u64,
    max_retries: u32,
    sack: bool,
    pub(super) board: Scoreboard,
    snd_una: u64,
    pub(super) snd_nxt: u64,
    cc: Box<dyn CongestionController>,
    rtt: RttEstimator,
    pub(super) recovery: Option<Recovery>,
    /// RFC 6582 `recover`: no new recovery episode until the ACK passes it.
    recover: u64,
    pub(super) dupacks: u32,
    pub(super) force_retransmit: bool,
    rto_deadline: Option<Time>,
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

impl SenderPipe {
    /// A pipe whose first sequence number is `first_seq`.
    pub fn new(cfg: &TcpConfig, cc: CcKind, mss: u64, sack: bool, first_seq: PipeSeq) -> Self {
        let max_window = if cfg.max_window_segments == 0 {
            u64::MAX
        } else {
            u64::from(cfg.max_window_segments) * mss
        };
        let first_seq = first_seq.0;
        SenderPipe {
            mss,
            dup_thresh: cfg.dup_thresh,
            max_window,
            max_retries: cfg.max_retries,
            sack,
            board: Scoreboard::default(),
            snd_una: first_seq,
            snd_nxt: first_seq,
            cc: cc.build(mss, cfg.initial_window),
            rtt: RttEstimator::new(cfg.initial_rto(), cfg.min_rto(), cfg.max_rto()),
            recovery: None,
            recover: first_seq,
            dupacks: 0,
            force_retransmit: false,
            rto_deadline: None,
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

    /// Applies the handshake's outcome (MSS and SACK) before any data was sent.
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

    /// The negotiated maximum segment size.
    pub fn mss(&self) -> u64 {
        self.mss
    }

    /// Most bytes this pipe holds when at most `max_bytes` of payload can be outstanding: the
    /// scoreboard, one entry per outstanding segment — full segments but for at most three (a
    /// short one sent with nothing outstanding, Nagle then holds short ones back; the last
    /// before the FIN; the FIN) — twice over for its ring's growth; the PER heuristic's window.
    pub fn memory_bound(&self, max_bytes: usize) -> usize {
        let mss = usize::try_from(self.mss).unwrap_or(usize::MAX).max(1);
        let segments = max_bytes / mss + 3;
        let board = 2 * segments * std::mem::size_of::<SentSegment>();
        board.saturating_add(self.last_link.memory_bound())
    }

    /// SND.UNA: the first sequence number not cumulatively acknowledged.
    #[inline]
    pub fn snd_una(&self) -> PipeSeq {
        PipeSeq(self.snd_una)
    }

    /// SND.NXT: the next new sequence number.
    #[inline]
    pub fn snd_nxt(&self) -> PipeSeq {
        PipeSeq(self.snd_nxt)
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

    /// Nothing outstanding (sent and not acknowledged).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.board.is_empty()
    }

    /// True after too many consecutive timeouts.
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// The pipe sends nothing now: it failed, or a TCP-Probing cycle suspends data
    /// (tcp-probing.txt §3.1).
    #[inline]
    pub fn suspended(&self) -> bool {
        self.failed || self.probe.is_some()
    }

    /// Feeds the first RTT sample taken during the handshake.
    pub fn on_handshake_rtt(&mut self, rtt: Duration) {
        self.rtt.on_sample(rtt);
    }

    /// Takes in a probe option an acknowledgement carries; true if it answers a probe
    /// (PR1_ACK / PR2_ACK), which then is no duplicate ACK and yields no RTT sample.
    pub fn on_probe_answer(&mut self, now: Time, probe: Option<ProbeOption>) -> bool {
        let answer = probe.filter(|p| matches!(p.kind, ProbeKind::Pr1Ack | ProbeKind::Pr2Ack));
        if let Some(p) = answer {
            self.on_probe_ack(now, p);
        }
        answer.is_some()
    }

    /// An acknowledgement of SND.UNA with nothing outstanding and no recovery episode (the
    /// receiving end of a one-way transfer): [`SenderPipe::on_idle_ack`] is all it does.
    #[inline]
    pub fn is_idle_ack(&self, ack: PipeSeq) -> bool {
        ack.0 == self.snd_una && self.board.is_empty() && self.recovery.is_none()
    }

    /// The acknowledgement is neither of data never sent nor older than SND.UNA
    /// (RFC 793 §3.9: otherwise it is ignored).
    #[inline]
    pub fn acceptable(&self, ack: PipeSeq) -> bool {
        ack.0 <= self.snd_nxt && ack.0 >= self.snd_una
    }

    /// What [`SenderPipe::on_ack`] does for an idle acknowledgement
    /// ([`SenderPipe::is_idle_ack`]): its SACK blocks mark nothing on an empty board, it
    /// counts no duplicate ACK (nothing is outstanding), and recovery cannot start (it needs
    /// something outstanding) nor end (none is in progress); only the controller may want to
    /// hear of the empty delivery.
    pub fn on_idle_ack(&mut self, now: Time) {
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

    /// Processes an acceptable acknowledgement ([`SenderPipe::acceptable`]): SACK blocks,
    /// the cumulative ACK, duplicate ACKs, loss recovery and the controller's delivery.
    pub fn on_ack(&mut self, now: Time, input: &PipeAckInput<'_>) -> PipeAck {
        let mut out = PipeAck::default();
        let window_before = self.cc.window();
        let ack = input.ack.0;
        let newly_sacked = if self.sack && !input.sack_blocks.is_empty() {
            self.board.sack(input.sack_blocks)
        } else {
            0
        };
        let mut delivered = 0;
        if ack > self.snd_una {
            let was_outstanding = !self.board.is_empty();
            let acked = self.board.ack_to(ack);
            delivered = acked.newly_delivered;
            out.acked = ack - self.snd_una;
            self.stats.bytes_acked += out.acked;
            self.snd_una = ack;
            self.dupacks = 0;
            if let Some(rtt) = input.rtt_sample {
                self.rtt.on_sample(rtt);
                self.cc.on_rtt_sample(now, rtt, self.rtt.min_rtt());
            }
            out.emptied = was_outstanding && self.board.is_empty();
            self.rto_deadline = if self.board.is_empty() || self.probe.is_some() {
                None
            } else {
                Some(self.rtt.rto_deadline(now))
            };
        } else if !self.board.is_empty()
            && input.may_be_duplicate
            && (newly_sacked > 0 || (!self.sack && !input.window_changed))
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
            self.update_recovery(now, out.acked, input.eln);
        }
        self.deliver(&Delivered {
            now,
            bytes: delivered,
            sacked_bytes: newly_sacked,
            in_flight: self.board.pipe(),
            in_recovery: was_in_recovery || self.recovery.is_some(),
            rtt: input.rtt_sample.filter(|_| out.acked > 0),
        });
        out.shrunk = self.cc.window() < window_before;
        out
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
    pub(super) fn window(&self) -> u64 {
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

    /// The bytes in the network (RFC 6675 `pipe`) and the usable window, in that order.
    #[inline]
    pub fn pipe_and_window(&self) -> (u64, u64) {
        (self.board.pipe(), self.window())
    }

    /// Room in the window for new data now (ptcp.txt §3, "when a TCP-v pipe has space in its
    /// congestion window ... it requests pTCP for data").
    pub fn room(&self) -> u64 {
        let (pipe, window) = self.pipe_and_window();
        window.saturating_sub(pipe)
    }

    /// True while a loss is being repaired: a fast-recovery episode, or what is outstanding
    /// since a timeout.
    pub fn repairing(&self) -> bool {
        self.recovery.is_some() || self.board.first_is_lost()
    }

    /// True if the segment that starts at `seq` is one the pipe still has to send again: not
    /// SACKed, and either deemed lost (RFC 6675 IsLost, fast retransmit, or every un-SACKed
    /// one after a timeout) and not retransmitted since, or — with SACK — sent once and below
    /// a SACKed segment (a later transmission arrived first; RFC 8985 §2 reasons the same
    /// way). A segment in flight and not passed is not owed: it may still arrive. False for a
    /// sequence number that starts no outstanding segment.
    pub fn owes(&self, seq: PipeSeq) -> bool {
        self.board
            .get(seq.0)
            .is_some_and(|s| self.board.is_owed(s, self.sack))
    }

    /// The first sequence number of the segments the pipe owes ([`SenderPipe::owes`]) beyond
    /// a congestion window's worth of them: the window's worth go out again in the pipe's
    /// next round trip, the rest would wait for the window to open (ptcp.txt §3, "Dynamic
    /// Reassignment"). `None` if they fit in the window.
    pub fn owed_beyond_window(&self) -> Option<PipeSeq> {
        self.board
            .owed_beyond(self.cc.window(), self.sack)
            .map(PipeSeq)
    }

    /// The next segment marked lost and not yet retransmitted.
    #[inline]
    pub fn next_lost(&mut self) -> Option<SentSegment> {
        self.board.next_lost()
    }

    /// Forgets a forced retransmission (nothing is left to retransmit).
    #[inline]
    pub fn clear_force_retransmit(&mut self) {
        self.force_retransmit = false;
    }

    /// Retransmits `lost` (from [`SenderPipe::next_lost`]) if the window allows it, a
    /// retransmission is forced or nothing is in the network; `pipe` and `window` are
    /// [`SenderPipe::pipe_and_window`]. None: retransmissions come before new data
    /// (RFC 6675 NextSeg rule 1), so nothing leaves.
    #[inline]
    pub fn retransmit_lost(
        &mut self,
        now: Time,
        lost: SentSegment,
        pipe: u64,
        window: u64,
    ) -> Option<TxSegment> {
        if self.force_retransmit || pipe + u64::from(lost.len) <= window || pipe == 0 {
            self.force_retransmit = false;
            return Some(self.retransmit(now, lost.seq, lost.len, lost.fin));
        }
        None
    }

    /// The rate a rate-based controller (BBR) paces at, if any.
    #[inline]
    pub fn pacing_rate(&self) -> Option<f64> {
        self.cc.pacing_rate()
    }

    /// May a segment leave now at pacing `rate` (pacing.rs)?
    #[inline]
    pub fn pacer_permits(&mut self, now: Time, rate: f64) -> bool {
        self.pacer.permits(now, self.mss, rate)
    }

    /// Records a paced segment of `len` bytes.
    #[inline]
    pub fn on_paced(&mut self, now: Time, len: u64, rate: f64) {
        self.pacer.on_sent(now, len, rate);
    }

    /// last-link-heuristics.txt §3.2 with our pacing (`initial_pacing.rs`): may the next new
    /// segment of the initial window leave now? Ends the pacing once the window has left.
    pub fn initial_pacing_permits(&mut self, now: Time) -> bool {
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

    /// Sends `len` new sequence numbers from SND.NXT, plus one for a FIN (ptcp.txt §4.2
    /// `send()`: the caller binds data to them).
    pub fn send_new(&mut self, now: Time, len: u64, fin: bool) -> TxSegment {
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

    /// The earliest of the pipe's timers: retransmission, probe cycle, pacing.
    pub fn deadline(&self) -> Option<Time> {
        // Plain comparisons: the host asks after every transmission, and an iterator over an
        // array of options compiled to stack copies and reloads (docs/SCALE.md).
        let mut t = self.rto_deadline;
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
pub(in crate::tcp) fn earliest(a: Option<Time>, b: Option<Time>) -> Option<Time> {
    // Without branches: a missing deadline counts as the end of time, and the result is
    // missing only when both are (a deadline may itself be the end of time: `Time` saturates).
    let t = a.unwrap_or(Time::MAX).min(b.unwrap_or(Time::MAX));
    (a.is_some() || b.is_some()).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SACK pipe with a 4-segment initial window, its first sequence number 1.
    fn pipe() -> SenderPipe {
        let cfg = TcpConfig {
            initial_window: 4,
            ..TcpConfig::default()
        };
        SenderPipe::new(&cfg, CcKind::NewReno, 1000, true, PipeSeq(1))
    }

    fn ack(p: &mut SenderPipe, now: Time, ack: u64, sack: &[SackBlock]) -> PipeAck {
        let input = PipeAckInput {
            ack: PipeSeq(ack),
            sack_blocks: sack,
            rtt_sample: None,
            may_be_duplicate: true,
            window_changed: false,
            eln: false,
        };
        assert!(p.acceptable(input.ack));
        p.on_ack(now, &input)
    }

    /// A pipe alone, without a stream: its room is its window, it sends in its own sequence
    /// space, and three SACKed segments above a hole cut its window, reported as `shrunk`.
    #[test]
    fn a_pipe_reports_its_room_and_a_shrunk_window() {
        let mut p = pipe();
        assert_eq!(p.room(), 4000);
        for k in 0..4u64 {
            let seg = p.send_new(Time::ZERO, 1000, false);
            assert_eq!((seg.seq, seg.retransmission), (1 + k * 1000, false));
        }
        assert_eq!((p.room(), p.snd_nxt()), (0, PipeSeq(4001)));
        let t = Time::from_millis(100);
        let mut shrunk = Vec::new();
        for end in [2001, 3001, 4001] {
            let sack = [SackBlock { start: 1001, end }];
            shrunk.push(ack(&mut p, t, 1, &sack).shrunk);
        }
        assert_eq!(
            shrunk,
            [false, false, true],
            "the third SACK starts recovery"
        );
        assert!(p.cwnd() < 4000);
        let lost = p.next_lost().expect("the hole is lost");
        assert_eq!(lost.seq, 1);
        let (pipe, window) = p.pipe_and_window();
        let re = p.retransmit_lost(t, lost, pipe, window).expect("forced");
        assert!(re.retransmission);
        let done = ack(&mut p, t, 4001, &[]);
        assert_eq!((done.acked, done.emptied), (4000, true));
    }

    /// The retransmission timer: expired with data outstanding, the pipe times out
    /// (`on_rto`), its window collapses and everything outstanding is to be retransmitted.
    #[test]
    fn a_pipe_times_out() {
        let mut p = pipe();
        p.send_new(Time::ZERO, 1000, false);
        p.send_new(Time::ZERO, 1000, false);
        let rto = p.deadline().expect("the RTO is armed");
        assert!(!p.take_expired_rto(Time::ZERO));
        assert!(p.take_expired_rto(rto));
        assert!(p.on_rto(rto));
        assert_eq!(p.cwnd(), 1000);
        assert_eq!(p.stats().timeouts, 1);
        assert_eq!(p.next_lost().map(|s| s.seq), Some(1));
    }
}
