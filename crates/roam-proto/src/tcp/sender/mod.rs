//! The sending half of a connection: one send stream ([`SendStream`]: the application's
//! bytes, the peer's window, persist, FIN, Nagle and silly-window avoidance) carried by one
//! sender pipe ([`SenderPipe`]: sequence space, scoreboard, RTT, congestion control, loss
//! recovery, retransmission timer, probing, pacing) through an identity binding — pipe
//! sequence number *n* carries stream offset *n* ([`IdentityBinding`]).
//!
//! A striping engine (pTCP, ptcp.txt §3–4) composes the same two halves differently: one
//! stream, several pipes, a bindings table between them.

mod pipe;
mod stream;

use std::time::Duration;

use roam_wire::{ProbeOption, SackBlock};

use crate::cc::CcKind;
use crate::linkinfo::LinkInfo;
use crate::rtt::RttEstimator;
use crate::seqspace::{PipeSeq, StreamOffset};
use crate::source::ByteSource;
use crate::Time;

pub(super) use pipe::earliest;
pub use pipe::{PipeAck, PipeAckInput, SenderPipe, SenderStats};
pub use stream::{SendStream, StreamOffer};

use super::TcpConfig;

/// What the sender wants to put on the wire next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxSegment {
    /// First sequence number (in the pipe's space).
    pub seq: u64,
    /// Payload bytes.
    pub payload_len: u32,
    /// Carries the FIN.
    pub fin: bool,
    /// This is a retransmission.
    pub retransmission: bool,
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

/// What an incoming acknowledgement did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckOutcome {
    /// Bytes newly cumulatively acknowledged.
    pub acked: u64,
    /// The ACK acknowledged our FIN.
    pub fin_acked: bool,
}

/// The TCP-like engine's binding of one stream to one pipe: pipe sequence number *n* carries
/// stream offset *n* (the stream's first byte is the pipe's first sequence number after the
/// SYN), and the FIN takes the sequence number after the last byte.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IdentityBinding;

impl IdentityBinding {
    /// The stream offset pipe sequence number `seq` carries.
    #[inline]
    pub fn offset(self, seq: PipeSeq) -> StreamOffset {
        StreamOffset(seq.0)
    }

    /// The pipe sequence number that carries stream offset `offset`.
    #[inline]
    pub fn seq(self, offset: StreamOffset) -> PipeSeq {
        PipeSeq(offset.0)
    }
}

/// One send stream over one sender pipe.
#[derive(Debug)]
pub struct Sender {
    pipe: SenderPipe,
    stream: SendStream,
    binding: IdentityBinding,
}

impl Sender {
    /// A sender whose first data byte has sequence number `isn + 1` (the SYN takes `isn`).
    pub fn new(cfg: &TcpConfig, cc: CcKind, mss: u64, sack: bool, first_seq: u64) -> Self {
        let binding = IdentityBinding;
        let first = PipeSeq(first_seq);
        Sender {
            pipe: SenderPipe::new(cfg, cc, mss, sack, first),
            stream: SendStream::new(
                binding.offset(first),
                cfg.send_buffer as usize,
                u64::from(cfg.mss),
            ),
            binding,
        }
    }

    /// Applies the handshake's outcome (MSS and SACK) before any data was sent; data already
    /// written stays queued.
    pub fn negotiate(&mut self, cfg: &TcpConfig, cc: CcKind, mss: u64, sack: bool) {
        self.pipe.negotiate(cfg, cc, mss, sack);
    }

    /// Passes the host's facts about the local link to the congestion controller.
    pub fn on_local_link(&mut self, now: Time, info: &LinkInfo) {
        self.pipe.on_local_link(now, info);
    }

    /// Passes the peer's reported link facts to the congestion controller and the last-link
    /// heuristics (last-link-heuristics.txt §3.2: the first report sets cwnd = ssthresh).
    pub fn on_peer_link(&mut self, now: Time, info: &LinkInfo) {
        self.pipe.on_peer_link(now, info);
    }

    /// The sender pipe.
    pub fn pipe(&self) -> &SenderPipe {
        &self.pipe
    }

    /// The send stream.
    pub fn stream(&self) -> &SendStream {
        &self.stream
    }

    /// Application write; returns bytes accepted.
    pub fn write(&mut self, data: &[u8]) -> usize {
        self.stream.write(data)
    }

    /// Takes the stream's bytes from `source` instead of copies (see [`crate::source`]);
    /// refused (false) once bytes were written.
    pub fn set_source(&mut self, source: Box<dyn ByteSource>) -> bool {
        self.stream.set_source(source)
    }

    /// With a source: makes up to `n` more stream bytes available; returns how many were
    /// accepted (bounded by the send buffer, like [`Sender::write`]).
    pub fn push(&mut self, n: u64) -> u64 {
        self.stream.push(n)
    }

    /// Free space in the send buffer.
    pub fn write_capacity(&self) -> usize {
        self.stream.write_capacity()
    }

    /// Queues a FIN after all written data.
    pub fn close(&mut self) {
        self.stream.close();
    }

    /// The negotiated maximum segment size.
    pub fn mss(&self) -> u64 {
        self.pipe.mss()
    }

    /// Most bytes this sender holds (`docs/HANDSHAKE.md`, "Memory"): the send buffer (nothing
    /// with a [`ByteSource`]) and the pipe for a buffer's worth outstanding
    /// ([`SenderPipe::memory_bound`]).
    pub fn memory_bound(&self) -> usize {
        self.stream
            .memory_bound()
            .saturating_add(self.pipe.memory_bound(self.stream.capacity()))
    }

    /// SND.UNA.
    pub fn snd_una(&self) -> u64 {
        self.pipe.snd_una().0
    }

    /// SND.NXT.
    pub fn snd_nxt(&self) -> u64 {
        self.pipe.snd_nxt().0
    }

    /// Congestion window (bytes).
    pub fn cwnd(&self) -> u64 {
        self.pipe.cwnd()
    }

    /// Slow-start threshold (bytes).
    pub fn ssthresh(&self) -> u64 {
        self.pipe.ssthresh()
    }

    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        self.pipe.rtt()
    }

    /// Counters.
    pub fn stats(&self) -> SenderStats {
        self.pipe.stats()
    }

    /// Bytes believed in the network.
    pub fn in_flight(&self) -> u64 {
        self.pipe.in_flight()
    }

    /// True when every byte and the FIN (if queued) were acknowledged.
    pub fn all_acked(&self) -> bool {
        self.pipe.is_empty()
            && self.pipe.snd_nxt()
                == self
                    .binding
                    .seq(self.stream.end())
                    .plus(u64::from(self.stream.fin_sent()))
    }

    /// True if the FIN was sent and acknowledged.
    pub fn fin_acked(&self) -> bool {
        self.stream.fin_sent() && self.pipe.is_empty()
    }

    /// True after too many consecutive timeouts.
    pub fn failed(&self) -> bool {
        self.pipe.failed()
    }

    /// True while a TCP-Probing probe cycle suspends data transmission.
    pub fn probing(&self) -> bool {
        self.pipe.probing()
    }

    /// The probe segment (PROBE1 / PROBE2) to send now, if a probe cycle wants one.
    pub fn poll_probe(&mut self, now: Time) -> Option<ProbeOption> {
        self.pipe.poll_probe(now)
    }

    /// Copies payload bytes of `seg` into `out`.
    pub fn copy_payload(&self, seg: &TxSegment, out: &mut Vec<u8>) {
        let offset = self.binding.offset(PipeSeq(seg.seq));
        self.stream.copy(offset, seg.payload_len as usize, out);
    }

    /// Feeds the first RTT sample taken during the handshake.
    pub fn on_handshake_rtt(&mut self, rtt: Duration) {
        self.pipe.on_handshake_rtt(rtt);
    }

    /// Sets the peer's advertised window (from the handshake).
    pub fn set_peer_window(&mut self, w: u64) {
        self.stream.set_peer_window(w);
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
        let probe_answer = self.pipe.on_probe_answer(now, marks.probe);
        // A probe answer echoes the timestamp of the last *data* segment the receiver took in,
        // possibly seconds ago: its timing belongs to the probe (measured by the cycle), so it
        // yields no RTT sample for the estimator.
        let rtt_sample = rtt_sample.filter(|_| !probe_answer);
        let ack = PipeSeq(ack);
        if self.pipe.is_idle_ack(ack) {
            // Nothing outstanding and nothing acknowledged (the receiving end of a one-way
            // transfer, with every data segment): the general path below only takes the
            // window and reports an empty delivery.
            self.stream.take_window(window);
            self.pipe.on_idle_ack(now);
            return out;
        }
        if !self.pipe.acceptable(ack) {
            // Acknowledges data never sent, or an old ACK: ignore (RFC 793 §3.9).
            return out;
        }
        let window_changed = window != self.stream.peer_window();
        self.stream.take_window(window);
        let acked = self.pipe.on_ack(
            now,
            &PipeAckInput {
                ack,
                sack_blocks,
                rtt_sample,
                may_be_duplicate: !carries_data && !probe_answer,
                window_changed,
                eln: marks.eln,
            },
        );
        if acked.acked > 0 {
            self.stream.ack_to(self.binding.offset(ack));
        }
        out.acked = acked.acked;
        out.fin_acked = self.stream.fin_sent() && acked.emptied;
        out
    }

    /// Chooses the next segment to send, if the windows allow one, and records it as sent.
    #[inline]
    pub fn next_segment(&mut self, now: Time) -> Option<TxSegment> {
        if self.pipe.suspended() {
            // tcp-probing.txt §3.1: no data is sent before the probe cycle completes.
            return None;
        }
        let lost = self.pipe.next_lost();
        if lost.is_none()
            && self
                .stream
                .drained(self.binding.offset(self.pipe.snd_nxt()))
        {
            // Nothing to retransmit and nothing new (a receiver that sends no data asks after
            // every segment it takes in): what the general path below concludes too.
            self.pipe.clear_force_retransmit();
            return None;
        }
        let (pipe, window) = self.pipe.pipe_and_window();
        if lost.is_none() && !self.stream.override_pending() && pipe >= window {
            // The congestion window is full and nothing is lost (the sender's every other
            // poll, after the segment an ACK let out): the general path below sends nothing
            // either, and arms the persist timer only for a zero peer window.
            self.pipe.clear_force_retransmit();
            if self.stream.peer_window() == 0 {
                self.arm_persist(now);
            }
            return None;
        }
        match self.pipe.pacing_rate() {
            None => self.choose_segment(now, lost, pipe, window),
            Some(rate) => {
                // A rate-based controller: segments, retransmissions included, leave no faster
                // than its pacing rate (pacing.rs).
                if !self.pipe.pacer_permits(now, rate) {
                    return None;
                }
                let seg = self.choose_segment(now, lost, pipe, window)?;
                self.pipe.on_paced(now, u64::from(seg.payload_len), rate);
                Some(seg)
            }
        }
    }

    /// [`Sender::next_segment`] with something to retransmit or to send: `lost` is the
    /// pipe's next lost segment, `pipe` and `window` its [`SenderPipe::pipe_and_window`].
    fn choose_segment(
        &mut self,
        now: Time,
        lost: Option<super::SentSegment>,
        pipe: u64,
        window: u64,
    ) -> Option<TxSegment> {
        if let Some(lost) = lost {
            return self.pipe.retransmit_lost(now, lost, pipe, window);
        }
        self.pipe.clear_force_retransmit();
        let mss = self.pipe.mss();
        let next = self.binding.offset(self.pipe.snd_nxt());
        let offer = self
            .stream
            .offer(self.binding.offset(self.pipe.snd_una()), next);
        let (avail, wnd_room, fin_pending) = (offer.avail, offer.wnd_room, offer.fin_pending);
        if avail == 0 && !fin_pending {
            return None;
        }
        // The persist timer fired with nothing outstanding: probe a zero window, or send what
        // a small one allows (RFC 1122 §4.2.3.4's override timeout).
        let overriding = self.stream.take_override();
        if overriding && avail > 0 && wnd_room == 0 {
            // Zero-window probe (RFC 1122 §4.2.2.17): one byte past the window.
            return Some(self.pipe.send_new(now, 1, false));
        }
        let mut len = avail.min(mss).min(wnd_room);
        let cwnd_room = window.saturating_sub(pipe);
        if len > cwnd_room {
            len = if cwnd_room >= mss { mss } else { 0 };
            len = len.min(cwnd_room);
        }
        // Sender-side silly-window avoidance (RFC 1122 §4.2.3.4). Holding with nothing
        // outstanding arms the override timeout (the persist timer): no ACK may come to reopen
        // the window, since the receiver announces only growth of a full threshold.
        if self.stream.sws_holds(len, mss, avail, overriding) {
            self.arm_persist(now);
            return None;
        }
        // Nagle (RFC 896): hold back a small segment while data is outstanding.
        if len > 0 && len < mss && !self.pipe.is_empty() && !fin_pending {
            return None;
        }
        if len > 0 && !self.pipe.initial_pacing_permits(now) {
            return None;
        }
        let fin = fin_pending && next.plus(len) == self.stream.end() && (len > 0 || cwnd_room > 0);
        if len == 0 && !fin {
            if self.stream.peer_window() == 0 {
                self.arm_persist(now);
            }
            return None;
        }
        if fin {
            self.stream.on_fin_sent();
        }
        Some(self.pipe.send_new(now, len, fin))
    }

    /// Arms the persist timer when nothing is outstanding (with data outstanding, its ACKs or
    /// the retransmission timer keep the connection going).
    fn arm_persist(&mut self, now: Time) {
        let pipe = &self.pipe;
        self.stream
            .arm_persist(pipe.is_empty(), || pipe.rtt().rto_deadline(now));
    }

    /// Handles expired timers.
    pub fn on_timeout(&mut self, now: Time) {
        self.pipe.on_timers(now);
        self.stream.on_timeout(now, self.pipe.is_empty());
        if self.pipe.take_expired_rto(now) {
            if self.stream.peer_window() == 0 {
                // The outstanding byte is a zero-window probe (RFC 1122 §4.2.2.17).
                let backoff = self.stream.back_off_persist();
                self.pipe.rearm_zero_window_probe(now, backoff);
            } else {
                self.pipe.on_rto(now);
            }
        }
    }

    /// The earliest timer deadline.
    pub fn deadline(&self) -> Option<Time> {
        earliest(self.pipe.deadline(), self.stream.deadline())
    }
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
            |s| s.pipe.force_retransmit = true,
            // The congestion window full, data still queued.
            |s| {
                s.write(&vec![7; 100_000]);
                while s.next_segment(Time::ZERO).is_some() {}
                assert!(
                    s.pipe.board.pipe() >= s.pipe.window() && s.stream.buf.end() > s.pipe.snd_nxt
                );
            },
        ];
        for sack in [false, true] {
            for setup in setups {
                let (mut fast, mut general) = (sending(sack, 4), sending(sack, 4));
                setup(&mut fast);
                setup(&mut general);
                let now = Time::from_millis(1);
                let lost = general.pipe.board.next_lost();
                let (pipe, window) = (general.pipe.board.pipe(), general.pipe.window());
                let chosen = general.choose_segment(now, lost, pipe, window);
                assert_eq!(fast.next_segment(now), chosen);
                assert_eq!(fast.pipe.force_retransmit, general.pipe.force_retransmit);
                assert_eq!(fast.deadline(), general.deadline());
                assert_eq!(fast.pipe.board.len(), general.pipe.board.len());
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
            s.pipe.dupacks = u32::MAX - 2;
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
            assert!(
                s.pipe.dupacks >= u32::MAX - 2,
                "sack={sack}: {}",
                s.pipe.dupacks
            );
            if let Some(r) = s.pipe.recovery.as_mut() {
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
