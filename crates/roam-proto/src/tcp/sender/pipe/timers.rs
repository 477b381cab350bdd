//! The sender pipe's timers: retransmission timeout (RFC 6298) and the re-arming of a
//! zero-window probe it carries (RFC 1122 §4.2.2.17), the probe-cycle timer (tcp-probing.txt
//! §3.1) and the initial window's pacing. The persist timer is the send stream's.

use std::time::Duration;

use super::{Recovery, SenderPipe};
use crate::tcp::probing::{ProbeCycle, ProbeTrigger};
use crate::tcp::RecoveryMode;
use crate::Time;

impl SenderPipe {
    /// Handles the pipe's expired timers but the retransmission timer: the initial window's
    /// pacing, the pacer and the probe-cycle timer.
    pub fn on_timers(&mut self, now: Time) {
        if let Some(p) = self.initial_pacing.as_mut() {
            p.on_timeout(now);
        }
        self.pacer.on_timeout(now);
        if self
            .probe
            .as_ref()
            .and_then(ProbeCycle::deadline)
            .is_some_and(|d| d <= now)
        {
            // tcp-probing.txt §3.1: a probe or probe ACK was lost: restart with a new id.
            let id = self.new_probe_id();
            if let Some(cycle) = self.probe.as_mut() {
                if cycle.on_timer(now, id) {
                    self.stats.probe_restarts += 1;
                }
            }
        }
    }

    /// Takes an expired retransmission timer: true if it expired with something outstanding,
    /// and then the caller must either re-arm a zero-window probe
    /// ([`SenderPipe::rearm_zero_window_probe`]) or time out ([`SenderPipe::on_rto`]).
    pub fn take_expired_rto(&mut self, now: Time) -> bool {
        if self.rto_deadline.is_none_or(|d| d > now) {
            return false;
        }
        self.rto_deadline = None;
        !self.board.is_empty()
    }

    /// The retransmission timer expired while the peer's window is zero: the outstanding byte
    /// is a zero-window probe. Probe again without treating the silence as congestion, and
    /// never give up (RFC 1122 §4.2.2.17), every RTO·2^`backoff` (at most 60 s). The probe
    /// byte has usually been sent before: re-arm it even if already retransmitted.
    pub fn rearm_zero_window_probe(&mut self, now: Time, backoff: u32) {
        self.board.remark_first_lost();
        self.force_retransmit = true;
        let every = self
            .rtt
            .rto()
            .checked_mul(1 << backoff)
            .unwrap_or(Duration::MAX);
        self.rto_deadline = Some(now + every.min(Duration::from_secs(60)));
    }

    /// The retransmission timer expired with something outstanding and an open peer window:
    /// the pipe times out (ptcp.txt §3: a striping engine stripes the first segment of its
    /// window redundantly onto another pipe). False if it gave up instead (too many
    /// consecutive timeouts; [`SenderPipe::failed`]).
    pub fn on_rto(&mut self, now: Time) -> bool {
        if self.rtt.backoff_count() >= self.max_retries {
            self.failed = true;
            return false;
        }
        self.stats.timeouts += 1;
        self.dupacks = 0;
        self.initial_pacing = None;
        if self.recovery_mode == RecoveryMode::Probing {
            // tcp-probing.txt §3 case 1: a timeout starts a probe cycle; neither the window
            // nor the threshold nor the timer is adjusted until it completes.
            self.start_probe_cycle(ProbeTrigger::Timeout);
            return true;
        }
        if self.per_says_wireless() {
            // last-link-heuristics.txt §3.3 applies "whenever a segment loss is detected",
            // and §1.1 names the timeout as one of the two detections. With PLR not above
            // PER the sender "only retransmits the lost segment without Cwnd reduction":
            // the first unacknowledged segment (re-armed: it may itself be a lost
            // retransmission), no go-back-N, window kept. The timer still backs off
            // (RFC 6298 §5.5), and the rest of the window is repaired by partial ACKs in a
            // recovery episode that consults the heuristic again on each of them.
            self.stats.wireless_recoveries += 1;
            self.board.remark_first_lost();
            self.recovery = Some(Recovery {
                point: self.snd_nxt,
                inflation: 0,
                per_excused: true,
            });
        } else {
            // RFC 6298 §5.4–5.6 and RFC 5681 §3.1: collapse the window, retransmit all.
            self.cc.on_timeout(now, self.board.outstanding());
            self.board.mark_all_lost();
            self.recovery = None;
        }
        self.rtt.back_off();
        self.recover = self.snd_nxt;
        self.force_retransmit = true;
        self.rto_deadline = Some(self.rtt.rto_deadline(now));
        true
    }
}
