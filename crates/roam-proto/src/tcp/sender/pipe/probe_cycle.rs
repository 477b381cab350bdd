//! TCP-Probing's probe cycle as seen from the sender pipe (tcp-probing.txt §3): suspending
//! data, the probe exchange, and the §3.2 decision applied when the cycle completes. The cycle's
//! own state machine is `tcp/probing.rs`.

use std::time::Duration;

use roam_wire::ProbeOption;

use super::{Recovery, SenderPipe};
use crate::cc::{LossCause, LossEvent};
use crate::tcp::probing::{ProbeCycle, ProbeDecision, ProbeTrigger};
use crate::Time;

impl SenderPipe {
    /// True while a TCP-Probing probe cycle suspends data transmission.
    pub fn probing(&self) -> bool {
        self.probe.is_some()
    }

    /// The probe segment (PROBE1 / PROBE2) to send now, if a probe cycle wants one.
    pub fn poll_probe(&mut self, now: Time) -> Option<ProbeOption> {
        self.probe.as_mut()?.poll_probe(now)
    }

    pub(super) fn new_probe_id(&mut self) -> u32 {
        let id = self.next_probe_id;
        self.next_probe_id = self.next_probe_id.wrapping_add(1).max(1);
        id
    }

    /// tcp-probing.txt §3: suspend data and start a probe cycle; the probe timer is the RTT
    /// estimate current now (§3.1).
    pub(super) fn start_probe_cycle(&mut self, trigger: ProbeTrigger) {
        let id = self.new_probe_id();
        // The RTT estimate current at the trigger, as a timeout: SRTT + max(G, 4·RTTVAR). A timer
        // of exactly SRTT would expire before the answer to about every other probe and the
        // exchange could never complete (docs/DECISIONS.md, "TCP-Probing").
        let timer = self.rtt.timeout_estimate();
        let dupacks = if trigger == ProbeTrigger::DupAcks {
            self.dupacks
        } else {
            0
        };
        self.probe = Some(ProbeCycle::new(
            trigger,
            self.cc.window(),
            dupacks,
            id,
            timer,
            self.rtt.max_rto(),
        ));
        self.stats.probe_cycles += 1;
        self.recovery = None;
        self.rto_deadline = None;
    }

    /// Applies the §3.2 decision at the end of a probe cycle and resumes: the first
    /// unacknowledged segment is retransmitted and the usual recovery machinery (partial ACKs,
    /// SACK) repairs the rest of the window.
    fn finish_probe_cycle(&mut self, now: Time, cycle: ProbeCycle, rtts: (Duration, Duration)) {
        let decision = self
            .probe_history
            .decide(&self.probing_cfg, rtts, cycle.old_cwnd, self.mss);
        let mut inflation = 0;
        match decision {
            ProbeDecision::Immediate => {
                // Immediate Recovery: neither cwnd nor ssthresh is adjusted downwards; after
                // dup-ACKs the window also grows by the dup-ACKs counted (§3, case 2).
                self.stats.probe_immediate += 1;
                if self.cc.window() < cycle.old_cwnd {
                    self.cc.set_window(cycle.old_cwnd, None);
                }
                if cycle.trigger == ProbeTrigger::DupAcks {
                    inflation = u64::from(cycle.dupacks) * self.mss;
                }
            }
            ProbeDecision::Gentle(w) => {
                self.stats.probe_gentle += 1;
                self.cc.set_window(w, None);
            }
            ProbeDecision::Reno => {
                self.stats.probe_backoffs += 1;
                self.cc.on_loss(&LossEvent {
                    now,
                    cause: LossCause::DupAcks,
                    in_flight: cycle.old_cwnd,
                });
            }
            ProbeDecision::SlowStart => {
                self.stats.probe_backoffs += 1;
                self.cc.on_timeout(now, cycle.old_cwnd);
            }
        }
        // After a dup-ACK-triggered cycle, further dup-ACKs keep inflating the window one
        // segment each, as in Reno's fast recovery (RFC 6582 step 4).
        self.dupacks = match cycle.trigger {
            ProbeTrigger::DupAcks => self.dup_thresh,
            ProbeTrigger::Timeout => 0,
        };
        if self.board.is_empty() {
            return;
        }
        let after_timeout = cycle.trigger == ProbeTrigger::Timeout;
        if after_timeout && (decision == ProbeDecision::SlowStart || self.sack) {
            // As after an RTO: everything outstanding and not SACKed is presumed lost
            // (go-back-N; RFC 6675 §5.1). With SACK this holds whatever the decision: the
            // decision chooses the window, the timeout already told what was lost. Re-arming
            // only the first segment would leave a lost tail that no SACK ever reveals to be
            // repaired one segment per RTO.
            self.board.mark_all_lost();
        } else {
            self.board.remark_first_lost();
        }
        self.force_retransmit = true;
        self.recovery = Some(Recovery {
            point: self.snd_nxt,
            inflation: if self.sack { 0 } else { inflation },
            per_excused: false,
        });
        self.recover = self.snd_nxt;
        self.rto_deadline = Some(self.rtt.rto_deadline(now));
    }

    /// A PR1_ACK / PR2_ACK arrived: the cycle measures it and, once both answers are in,
    /// decides.
    pub(super) fn on_probe_ack(&mut self, now: Time, probe: ProbeOption) {
        let Some(cycle) = self.probe.as_mut() else {
            return;
        };
        if let Some(rtts) = cycle.on_probe_ack(now, probe) {
            if let Some(cycle) = self.probe.take() {
                self.finish_probe_cycle(now, cycle, rtts);
            }
        }
    }
}
