//! The media source: paces unreliable datagrams at the allowed rate S(t), learns loss and RTT
//! from receiver reports, and tells the application (an adaptive encoder) every new S(t).
//!
//! The source opens the flow: it sends to a sink its application chose, and no datagram from
//! anyone else makes it send (reports only steer its rate). The sink keeps no state until the
//! source proves its address: its first reports carry a token, which the source echoes in its
//! packets until a report without one arrives (`docs/HANDSHAKE-RCP.md`).

use std::collections::VecDeque;
use std::time::Duration;

use roam_wire::{ConnId, DecodeError, MediaPacket, MediaReport, Token};

use super::rate::{RateController, RateKind};
use super::{payload_byte, MediaConfig};
use crate::linkinfo::LinkInfo;
use crate::Time;

/// What the sender tells its application.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MediaEvent {
    /// The allowed rate S(t) changed (atl.txt §IV-B: the adaptive encoder follows R(t) ≈ S(t)).
    RateChanged {
        /// Allowed payload rate in bits per second.
        bps: f64,
    },
}

/// Events a source keeps for its application at most (the oldest are dropped).
const MAX_EVENTS: usize = 1024;

/// Sender counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MediaSenderStats {
    /// Media packets sent.
    pub packets_sent: u64,
    /// Reports received.
    pub reports: u64,
    /// Rate decreases (loss events and feedback timeouts).
    pub decreases: u64,
    /// Feedback timeouts (no report for a while).
    pub feedback_timeouts: u64,
}

/// The sending end of an RCP-ATL (or plain rate AIMD) media flow.
#[derive(Debug)]
pub struct MediaSender {
    conn_id: ConnId,
    cfg: MediaConfig,
    rate: RateController,
    next_send: Time,
    /// The pacing deadline `next_send` fired ([`MediaSender::handle_timeout`]) and waits for
    /// [`MediaSender::poll_transmit`]: [`MediaSender::poll_timeout`] stops reporting it, so a
    /// host that fires timers but cannot send yet is not woken again at the same instant.
    send_due: bool,
    seq: u64,
    last_received: u64,
    last_lost: u64,
    /// The highest sequence number the last accepted report covered.
    last_highest: Option<u64>,
    last_report: Option<Time>,
    feedback_deadline: Option<Time>,
    peer_handoffs: Option<u16>,
    events: VecDeque<MediaEvent>,
    stats: MediaSenderStats,
    started: bool,
    /// The sink's token, echoed in every packet until a report without one arrives.
    token: Option<Token>,
    stopped: bool,
    payload: Vec<u8>,
}

impl MediaSender {
    /// A sender for connection `conn_id` running `kind`.
    pub fn new(cfg: MediaConfig, kind: RateKind, conn_id: ConnId) -> Self {
        let rate = RateController::new(
            kind,
            cfg.initial_rate_pps(),
            cfg.min_rate_pps(),
            cfg.max_rate_pps(),
            cfg.atl,
        );
        MediaSender {
            conn_id,
            cfg,
            rate,
            next_send: Time::ZERO,
            send_due: false,
            seq: 0,
            last_received: 0,
            last_lost: 0,
            last_highest: None,
            last_report: None,
            feedback_deadline: None,
            peer_handoffs: None,
            events: VecDeque::new(),
            stats: MediaSenderStats::default(),
            started: false,
            token: None,
            stopped: false,
            payload: Vec::new(),
        }
    }

    /// The connection id.
    pub fn conn_id(&self) -> ConnId {
        self.conn_id
    }

    /// The application stops the flow: nothing more is sent, and the host may drop the
    /// source.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// True once stopped.
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// True while the source echoes the sink's token (the sink has not accepted it yet).
    pub fn echoing_token(&self) -> bool {
        self.token.is_some()
    }

    /// Bytes of memory this source holds at most: one packet's payload, the queued events and
    /// the fixed state.
    pub fn memory_bound(&self) -> usize {
        self.cfg.packet_size as usize
            + MAX_EVENTS * std::mem::size_of::<MediaEvent>()
            + std::mem::size_of::<MediaSender>()
    }

    /// The allowed rate S(t) in payload bits per second.
    pub fn rate_bps(&self) -> f64 {
        self.rate.rate() * f64::from(self.cfg.packet_size) * 8.0
    }

    /// The rate controller (its (α, β), RTT, measurements).
    pub fn rate_controller(&self) -> &RateController {
        &self.rate
    }

    /// Counters.
    pub fn stats(&self) -> MediaSenderStats {
        self.stats
    }

    /// The next application event.
    pub fn poll_event(&mut self) -> Option<MediaEvent> {
        self.events.pop_front()
    }

    fn rate_changed(&mut self) {
        self.events.push_back(MediaEvent::RateChanged {
            bps: self.rate_bps(),
        });
        if self.events.len() > MAX_EVENTS {
            self.events.pop_front();
        }
    }

    /// The host's facts about the local link (the source is the wireless end).
    pub fn set_link_info(&mut self, now: Time, info: LinkInfo) {
        self.rate.on_local_link(now, &info.sanitized());
    }

    /// 2·RTT, at least the configured minimum, and never zero: a fired feedback timer moves
    /// its deadline forward (docs/ENDPOINT.md, "Timers make progress").
    fn feedback_timeout(&self) -> Duration {
        let rtt = self.rate.srtt().unwrap_or(Duration::from_secs(1));
        (rtt * 2)
            .max(self.cfg.min_feedback_timeout)
            .max(Duration::from_nanos(1))
    }

    /// A datagram from the receiver (a report). Malformed or foreign datagrams are rejected
    /// with the decoding error and change nothing.
    pub fn handle_datagram(&mut self, now: Time, bytes: &[u8]) -> Result<(), DecodeError> {
        let r = MediaReport::decode(bytes)?;
        if r.conn_id != self.conn_id || r.highest_seq >= self.seq {
            return Ok(()); // Not ours, or acknowledging packets never sent.
        }
        // A report with a token about a packet newer than the last report covered comes from
        // a sink that holds nothing for us any more (it expired while nothing arrived): its
        // counts start over, and so does our baseline; we echo its token to open it again.
        let sink_restarted = r.token.is_some()
            && r.received < self.last_received
            && self.last_highest.is_some_and(|h| r.highest_seq > h);
        if sink_restarted {
            self.last_received = 0;
            self.last_lost = 0;
        }
        if r.received < self.last_received {
            return Ok(()); // Stale (reordered).
        }
        // A report with a token comes from a sink that holds nothing yet: echo the token. One
        // without comes from the sink that accepted the flow.
        self.token = r.token;
        self.stats.reports += 1;
        let echo = Time::from_micros(r.echo_time_us);
        let rtt = now
            .saturating_since(echo)
            .saturating_sub(Duration::from_micros(u64::from(r.hold_us)));
        if echo <= now && !rtt.is_zero() {
            self.rate.on_rtt(rtt);
        }
        if let Some(l) = r.link {
            let info = LinkInfo {
                wireless: true,
                loss_prob: f64::from(l.p_w_ppm) / 1e6,
                one_way_delay: Duration::from_micros(u64::from(l.d_w_us)),
                up: true,
                handoffs: u32::from(l.handoff_count),
                ..LinkInfo::default()
            };
            self.peer_handoffs = Some(l.handoff_count);
            self.rate.on_peer_link(now, &info);
        }
        let delivered = r.received - self.last_received;
        let lost = r.lost.saturating_sub(self.last_lost);
        self.last_received = r.received;
        self.last_lost = self.last_lost.max(r.lost);
        self.last_highest = Some(r.highest_seq);
        self.last_report = Some(now);
        self.feedback_deadline = Some(now + self.feedback_timeout());
        if self.rate.on_report(now, delivered, lost) {
            self.stats.decreases += 1;
            self.rate_changed();
        }
        Ok(())
    }

    /// The next media datagram, if the pacing allows one at `now`; appended to `buf`.
    pub fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<usize> {
        if self.rate.tick(now) {
            self.rate_changed();
        }
        if !self.started {
            self.started = true;
            self.next_send = now;
            self.feedback_deadline = Some(now + self.feedback_timeout());
            self.rate_changed();
        }
        if now < self.next_send || self.stopped {
            return None;
        }
        let payload_len = self.cfg.packet_size as usize;
        let seq = self.seq;
        self.payload.clear();
        self.payload
            .extend((0..payload_len).map(|i| payload_byte(seq, i)));
        let p = MediaPacket {
            conn_id: self.conn_id,
            seq: self.seq,
            send_time_us: now.as_micros(),
            rate_bps: self.rate_bps() as u64,
            token: self.token,
            payload: &self.payload,
        };
        let start = buf.len();
        p.encode(buf);
        self.seq += 1;
        self.stats.packets_sent += 1;
        let gap = Duration::from_secs_f64(1.0 / self.rate.rate().max(1e-3));
        // Pace from the scheduled time, but never bank more than one gap of idle credit.
        self.next_send = (self.next_send + gap).max(now);
        self.send_due = false;
        Some(buf.len() - start)
    }

    /// The earliest time the sender wants to be called: the feedback deadline, and the next
    /// paced send unless that one already fired and waits for [`MediaSender::poll_transmit`].
    pub fn poll_timeout(&self) -> Option<Time> {
        if !self.started || self.stopped {
            return None;
        }
        let pacing = (!self.send_due).then_some(self.next_send);
        match (self.feedback_deadline, pacing) {
            (Some(d), Some(p)) => Some(d.min(p)),
            (d, p) => d.or(p),
        }
    }

    /// Handles the timers. The pacing deadline only makes a packet due (the host sends it with
    /// [`MediaSender::poll_transmit`]); it is not reported again until then, so every fired
    /// timer makes progress or moves its deadline forward. The feedback timer: no report for
    /// a while (a blackout, or every report lost) counts as a congestion event, as RAP's
    /// timeout does.
    pub fn handle_timeout(&mut self, now: Time) {
        if self.stopped {
            return;
        }
        if self.started && self.next_send <= now {
            self.send_due = true;
        }
        if self.feedback_deadline.is_some_and(|d| d <= now) {
            self.stats.feedback_timeouts += 1;
            self.feedback_deadline = Some(now + self.feedback_timeout());
            // Counted as one lost packet in p (the adapter learns of the outage too).
            if self.rate.on_report(now, 0, 1) {
                self.stats.decreases += 1;
                self.rate_changed();
            }
        }
    }
}
