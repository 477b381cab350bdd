//! Loss recovery of the sender pipe: RFC 6582 (NewReno) and RFC 6675 (SACK) episodes, with
//! the wireless exceptions — TCP-ELN marks (rcp-r2cp.txt §3.4.2) and the last-link PER
//! heuristic (last-link-heuristics.txt §3.3) retransmit without cutting the window.

use super::{Recovery, SenderPipe};
use crate::cc::{LossCause, LossEvent};
use crate::tcp::probing::ProbeTrigger;
use crate::tcp::RecoveryMode;
use crate::Time;

impl SenderPipe {
    /// Starts, advances or ends a loss-recovery episode after an acknowledgement
    /// (RFC 6582 / RFC 6675 entry, partial and full ACKs, window inflation), with the ELN and
    /// PER-heuristic exceptions and TCP-Probing's dup-ACK trigger.
    pub(super) fn update_recovery(&mut self, now: Time, acked: u64, eln: bool) {
        if let Some(mut rec) = self.recovery {
            if self.snd_una >= rec.point {
                // Full acknowledgement: recovery ends (RFC 6582 §3.2 step 3, RFC 6675 §5).
                self.recovery = None;
                self.cc.on_recovery_end(now);
            } else if acked > 0 {
                // A partial ACK reveals a further loss in the episode. last-link-heuristics.txt
                // §3.3 asks for the PLR/PER comparison "whenever a segment loss is detected":
                // if the episode was excused as wireless but the connection's PLR now exceeds
                // the PER, do the congestion response (once per episode, as NewReno cuts once).
                if rec.per_excused && !self.per_says_wireless() {
                    rec.per_excused = false;
                    // The loss window is the window in force: without SACK the pipe counts
                    // everything outstanding, which the episode's inflation has let grow
                    // far beyond what is in the network.
                    self.cc.on_loss(&LossEvent {
                        now,
                        cause: LossCause::DupAcks,
                        in_flight: self.board.pipe().min(self.cc.window()),
                    });
                }
                if !self.sack {
                    // RFC 6582 §3.2 step 3 partial ACK: retransmit the first unacknowledged
                    // segment, deflate by the amount acknowledged, add back one segment.
                    rec.inflation = rec.inflation.saturating_sub(acked).saturating_add(self.mss);
                    self.board.mark_first_lost();
                    self.force_retransmit = true;
                }
                self.recovery = Some(rec);
            } else if !self.sack && self.dupacks > self.dup_thresh {
                // RFC 6582 §3.2 step 4: each further duplicate ACK inflates the window.
                rec.inflation = rec.inflation.saturating_add(self.mss);
                self.recovery = Some(rec);
            }
            return;
        }
        // TCP-ELN: an ELN-marked duplicate ACK names a hole lost on the receiver's wireless hop,
        // so it is retransmitted at once (rcp-r2cp.txt §3.4.2).
        let eln_hole = self.eln && eln && self.dupacks > 0;
        let triggered = eln_hole
            || self.dupacks >= self.dup_thresh
            || (self.sack && self.board.first_is_lost());
        // RFC 6582 §3.2 step 1: only when the ACK covers more than `recover`.
        if triggered && !self.board.is_empty() && self.snd_una >= self.recover {
            // A loss ends the pacing of the initial window (the ACK clock takes over).
            self.initial_pacing = None;
            let per_excused = !eln_hole && self.per_says_wireless();
            let wireless = eln_hole || per_excused;
            if !wireless && self.recovery_mode == RecoveryMode::Probing {
                // tcp-probing.txt §3 case 2: three dup-ACKs start a probe cycle instead.
                self.start_probe_cycle(ProbeTrigger::DupAcks);
                return;
            }
            // RFC 6675 §5 (4.2) halves "FlightSize"; like ns-3 we measure it as the pipe at
            // the moment of entry (outstanding − SACKed − lost), the data still in the
            // network. See docs/DECISIONS.md ("Loss window at recovery entry").
            let flight = self.board.pipe();
            self.recovery = Some(Recovery {
                point: self.snd_nxt,
                // RFC 6582 step 2: inflate by the dup-ACKs seen (fewer than three when an ELN
                // mark started recovery early).
                inflation: if self.sack {
                    0
                } else {
                    u64::from(self.dupacks.min(self.dup_thresh)) * self.mss
                },
                per_excused,
            });
            self.recover = self.snd_nxt;
            self.stats.recoveries += 1;
            if wireless {
                // ELN / PER heuristic: retransmit without cutting the window.
                self.stats.wireless_recoveries += 1;
            }
            self.cc.on_loss(&LossEvent {
                now,
                cause: if wireless {
                    LossCause::WirelessEln
                } else {
                    LossCause::DupAcks
                },
                in_flight: flight,
            });
            self.board.mark_first_lost();
            self.force_retransmit = true;
        }
    }

    /// last-link-heuristics.txt §3.3: PLR = N_retr / N_tx over the connection so far (every
    /// segment retransmitted / every segment transmitted, retransmissions included) is not
    /// larger than the reported PER, so the loss counts as corruption.
    pub(super) fn per_says_wireless(&self) -> bool {
        self.last_link.loss_is_wireless(
            self.stats.retransmitted_segments,
            self.stats.segments_sent + self.stats.retransmitted_segments,
        )
    }
}
