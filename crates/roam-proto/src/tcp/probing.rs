//! TCP-Probing's probe cycle and its end-of-cycle decision (tcp-probing.txt §3).
//!
//! On a timeout or three duplicate ACKs the sender suspends data transmission and runs a probe
//! cycle: PROBE1 → PR1_ACK → PROBE2 → PR2_ACK, header-only segments carrying an id number
//! (§3.1). The probe timer is the RTT estimate current when the cycle was triggered; when it
//! expires (a probe or its ACK was lost) the exchange restarts from PROBE1 with a new id. When
//! the PR2_ACK arrives the two measured probe RTTs feed the §3.2 decision: Immediate Recovery,
//! Gentle Recovery, Reno-style halving or Slow Start. This module is the state machine and the
//! decision; the sender ([`super::sender`]) suspends data and applies the outcome.
//!
//! One addition to the paper: a *late* answer — the PR1_ACK or PR2_ACK of an exchange the timer
//! already abandoned — proves the timer shorter than the path's RTT (a handoff to a slower
//! network, a queue built up). Without it the cycle could restart forever, every answer
//! arriving just after its exchange was given up. Such an answer still does not advance the
//! cycle, but its RTT (unambiguous: the id names the probe) raises the timer to three times that
//! RTT, the value RFC 6298 §2.2 gives a first measurement (docs/DECISIONS.md, "TCP-Probing").

use std::time::Duration;

use roam_wire::{ProbeKind, ProbeOption};
use serde::Deserialize;

use crate::Time;

/// Tuning of TCP-Probing (`[flow.tcp.probing]`).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProbingConfig {
    /// Weight of the previous average in `acprtt = a·acprtt + b·sample` (§3.2 "a = 0.2").
    pub a: f64,
    /// Weight of the new probe RTT sample (§3.2 "b = 08", read as 0.8 so that a + b = 1 and
    /// the average "relies heavily on recent probe RTT samples").
    pub b: f64,
}

impl Default for ProbingConfig {
    fn default() -> Self {
        ProbingConfig { a: 0.2, b: 0.8 }
    }
}

/// What started a probe cycle (§3, cases 1 and 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeTrigger {
    /// The retransmission timer expired.
    Timeout,
    /// Three duplicate ACKs arrived.
    DupAcks,
}

/// The window action chosen when a probe cycle completes (§3.2 pseudo-code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeDecision {
    /// Conditions are good: resume with the previous window (plus the dup-ACKs counted during a
    /// dup-ACK-triggered cycle); ssthresh unchanged.
    Immediate,
    /// The error was not congestion, but the path is near capacity: window in
    /// [old/2, old], in reverse proportion to where acprtt lies in [best, worst]; ssthresh
    /// unchanged. Carries the new window in bytes.
    Gentle(u64),
    /// Left edge of the RTT space but the samples exceed acprtt: halve as Reno would.
    Reno,
    /// Right edge and the samples exceed acprtt: Slow Start (window one segment, ssthresh
    /// halved), like Tahoe.
    SlowStart,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// PROBE1 must be sent.
    SendProbe1,
    /// PROBE1 sent at `.0`; waiting for PR1_ACK.
    AwaitPr1(Time),
    /// PROBE2 must be sent.
    SendProbe2,
    /// PROBE2 sent at `.0`; waiting for PR2_ACK.
    AwaitPr2(Time),
}

/// One running probe cycle.
#[derive(Debug, Clone)]
pub struct ProbeCycle {
    /// What triggered it.
    pub trigger: ProbeTrigger,
    /// The congestion window when the cycle began ("old cwnd").
    pub old_cwnd: u64,
    /// Duplicate ACKs counted during a dup-ACK-triggered cycle (used by Immediate Recovery).
    pub dupacks: u32,
    id: u32,
    phase: Phase,
    probe_timeout: Duration,
    max_timeout: Duration,
    deadline: Option<Time>,
    rtt1: Option<Duration>,
    /// Probes of abandoned exchanges whose answers may still arrive late: (id, the answer
    /// expected, when the probe left). Only the exchanges abandoned by the 1st, 2nd, 4th, 8th, …
    /// restart are kept — at most 32, however long the cycle — so that whatever the path's RTT
    /// has grown to, some remembered probe was sent long enough ago for its answer to come back.
    abandoned: Vec<(u32, ProbeKind, Time)>,
    /// Exchanges restarted because a probe or probe ACK was lost.
    pub restarts: u32,
}

impl ProbeCycle {
    /// Starts a cycle with exchange id `id`; the probe timer is `probe_timeout` (§3.1: the RTT
    /// estimate current when the cycle is triggered). Late answers may raise the timer, never
    /// above `max_timeout`.
    pub fn new(
        trigger: ProbeTrigger,
        old_cwnd: u64,
        dupacks: u32,
        id: u32,
        probe_timeout: Duration,
        max_timeout: Duration,
    ) -> Self {
        let max_timeout = max_timeout.max(Duration::from_micros(1));
        ProbeCycle {
            trigger,
            old_cwnd,
            dupacks,
            id,
            phase: Phase::SendProbe1,
            probe_timeout: probe_timeout.clamp(Duration::from_micros(1), max_timeout),
            max_timeout,
            deadline: None,
            rtt1: None,
            abandoned: Vec::new(),
            restarts: 0,
        }
    }

    /// The probe timer's current length.
    pub fn probe_timeout(&self) -> Duration {
        self.probe_timeout
    }

    /// The id of the exchange in progress.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The probe segment to send now, if any; arms the probe timer.
    pub fn poll_probe(&mut self, now: Time) -> Option<ProbeOption> {
        let kind = match self.phase {
            Phase::SendProbe1 => {
                self.phase = Phase::AwaitPr1(now);
                ProbeKind::Probe1
            }
            Phase::SendProbe2 => {
                self.phase = Phase::AwaitPr2(now);
                ProbeKind::Probe2
            }
            _ => return None,
        };
        self.deadline = Some(now + self.probe_timeout);
        Some(ProbeOption { kind, id: self.id })
    }

    /// The probe timer's deadline.
    pub fn deadline(&self) -> Option<Time> {
        self.deadline
    }

    /// Handles the probe timer: a probe or its ACK was lost, so the exchange restarts from
    /// PROBE1 with the new id `next_id` (§3.1). Returns true if it restarted.
    pub fn on_timer(&mut self, now: Time, next_id: u32) -> bool {
        match self.deadline {
            Some(d) if d <= now => {}
            _ => return false,
        }
        self.deadline = None;
        let awaited = match self.phase {
            Phase::AwaitPr1(sent) => Some((ProbeKind::Pr1Ack, sent)),
            Phase::AwaitPr2(sent) => Some((ProbeKind::Pr2Ack, sent)),
            Phase::SendProbe1 | Phase::SendProbe2 => None,
        };
        self.restarts = self.restarts.saturating_add(1);
        if let Some((answer, sent)) = awaited {
            if self.restarts.is_power_of_two() {
                self.abandoned.push((self.id, answer, sent));
            }
        }
        self.id = next_id;
        self.rtt1 = None;
        self.phase = Phase::SendProbe1;
        true
    }

    /// A late answer to an abandoned exchange: the timer was shorter than this RTT, so it
    /// becomes 3 × the RTT (RFC 6298 §2.2's first-measurement value), capped, and the probe now
    /// awaited gets the longer timer.
    fn on_late_answer(&mut self, now: Time, probe: ProbeOption) {
        let Some(pos) = self
            .abandoned
            .iter()
            .position(|&(id, answer, _)| id == probe.id && answer == probe.kind)
        else {
            return;
        };
        let (_, _, sent) = self.abandoned.swap_remove(pos);
        let timeout = (now.saturating_since(sent) * 3).min(self.max_timeout);
        if timeout <= self.probe_timeout {
            return;
        }
        self.probe_timeout = timeout;
        if let Phase::AwaitPr1(sent) | Phase::AwaitPr2(sent) = self.phase {
            self.deadline = Some(sent + timeout);
        }
    }

    /// A probe acknowledgement arrived. Returns both probe RTTs when this PR2_ACK completes the
    /// cycle. Acknowledgements with another id (a restarted exchange's late answers) do not
    /// advance the cycle; they only lengthen a timer that proved too short.
    pub fn on_probe_ack(&mut self, now: Time, probe: ProbeOption) -> Option<(Duration, Duration)> {
        if probe.id != self.id {
            self.on_late_answer(now, probe);
            return None;
        }
        match (probe.kind, self.phase) {
            (ProbeKind::Pr1Ack, Phase::AwaitPr1(sent)) => {
                self.rtt1 = Some(now.saturating_since(sent));
                self.phase = Phase::SendProbe2;
                self.deadline = None;
                None
            }
            (ProbeKind::Pr2Ack, Phase::AwaitPr2(sent)) => {
                self.deadline = None;
                let rtt2 = now.saturating_since(sent);
                self.rtt1.map(|r1| (r1, rtt2))
            }
            _ => None,
        }
    }
}

/// The probe-RTT history of a connection: acprtt, best and worst probe RTT (§3.2).
#[derive(Debug, Clone, Default)]
pub struct ProbeHistory {
    acprtt: Option<f64>,
    best: Option<f64>,
    worst: Option<f64>,
}

impl ProbeHistory {
    /// The active average of probe RTTs, in seconds.
    pub fn acprtt(&self) -> Option<f64> {
        self.acprtt
    }

    /// Folds a completed cycle's two samples into the history and decides (§3.2):
    ///
    /// ```text
    /// acprtt = a·acprtt + b·sample            (for each of the two samples, in order)
    /// if acprtt <= (best + worst)/2:           left edge of the space
    ///     both samples <= acprtt → Immediate Recovery, else Reno (halve)
    /// else:                                    right edge
    ///     both samples <= acprtt → Gentle Recovery, else Slow Start
    /// ```
    ///
    /// Gentle Recovery's window is `old/2 + (worst − acprtt)/(worst − best) · old/2`, which
    /// stays in the text's range [old/2, old] (see docs/DECISIONS.md, "TCP-Probing").
    pub fn decide(
        &mut self,
        cfg: &ProbingConfig,
        samples: (Duration, Duration),
        old_cwnd: u64,
        mss: u64,
    ) -> ProbeDecision {
        let (s1, s2) = (samples.0.as_secs_f64(), samples.1.as_secs_f64());
        for s in [s1, s2] {
            self.best = Some(self.best.map_or(s, |b| b.min(s)));
            self.worst = Some(self.worst.map_or(s, |w| w.max(s)));
            self.acprtt = Some(match self.acprtt {
                None => s,
                Some(avg) => cfg.a * avg + cfg.b * s,
            });
        }
        let (acp, best, worst) = (
            self.acprtt.unwrap_or(s2),
            self.best.unwrap_or(s2),
            self.worst.unwrap_or(s2),
        );
        let both_below = s1 <= acp && s2 <= acp;
        let mid = (best + worst) / 2.0;
        if acp <= mid || worst <= best {
            if both_below {
                ProbeDecision::Immediate
            } else {
                ProbeDecision::Reno
            }
        } else if both_below {
            let frac = ((worst - acp) / (worst - best)).clamp(0.0, 1.0);
            let half = old_cwnd as f64 / 2.0;
            let w = (half + frac * half).round() as u64;
            ProbeDecision::Gentle(w.clamp(mss.min(old_cwnd), old_cwnd.max(mss)))
        } else {
            ProbeDecision::SlowStart
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn full_exchange_yields_two_rtts() {
        let mut c = ProbeCycle::new(ProbeTrigger::DupAcks, 10_000, 3, 7, ms(100), ms(60_000));
        let p1 = c.poll_probe(Time::from_millis(0)).unwrap();
        assert_eq!(
            p1,
            ProbeOption {
                kind: ProbeKind::Probe1,
                id: 7
            }
        );
        assert!(c.poll_probe(Time::from_millis(1)).is_none());
        let ack1 = ProbeOption {
            kind: ProbeKind::Pr1Ack,
            id: 7,
        };
        assert!(c.on_probe_ack(Time::from_millis(40), ack1).is_none());
        let p2 = c.poll_probe(Time::from_millis(40)).unwrap();
        assert_eq!(p2.kind, ProbeKind::Probe2);
        let ack2 = ProbeOption {
            kind: ProbeKind::Pr2Ack,
            id: 7,
        };
        assert_eq!(
            c.on_probe_ack(Time::from_millis(70), ack2),
            Some((ms(40), ms(30)))
        );
    }

    #[test]
    fn lost_probe_restarts_with_a_new_id_and_ignores_the_old_one() {
        let mut c = ProbeCycle::new(ProbeTrigger::Timeout, 10_000, 0, 1, ms(100), ms(60_000));
        c.poll_probe(Time::ZERO).unwrap();
        assert!(!c.on_timer(Time::from_millis(99), 2));
        assert!(c.on_timer(Time::from_millis(100), 2));
        let p = c.poll_probe(Time::from_millis(100)).unwrap();
        assert_eq!(
            p,
            ProbeOption {
                kind: ProbeKind::Probe1,
                id: 2
            }
        );
        let stale = ProbeOption {
            kind: ProbeKind::Pr1Ack,
            id: 1,
        };
        assert!(c.on_probe_ack(Time::from_millis(120), stale).is_none());
        assert!(
            c.poll_probe(Time::from_millis(120)).is_none(),
            "stale ack must not advance"
        );
        assert_eq!(c.restarts, 1);
    }

    #[test]
    fn late_answers_lengthen_a_timer_shorter_than_the_path() {
        // The path's RTT (250 ms) grew past the probe timer (100 ms), e.g. after a handoff.
        let ack = |kind, id| ProbeOption { kind, id };
        let mut c = ProbeCycle::new(ProbeTrigger::Timeout, 10_000, 0, 1, ms(100), ms(60_000));
        c.poll_probe(Time::ZERO).unwrap();
        assert!(c.on_timer(Time::from_millis(100), 2));
        c.poll_probe(Time::from_millis(100)).unwrap();
        assert!(c.on_timer(Time::from_millis(200), 3));
        c.poll_probe(Time::from_millis(200)).unwrap();
        // id 1's answer, 250 ms after its probe: the timer becomes 750 ms, re-armed for id 3.
        assert!(c
            .on_probe_ack(Time::from_millis(250), ack(ProbeKind::Pr1Ack, 1))
            .is_none());
        assert_eq!(c.probe_timeout(), ms(750));
        assert_eq!(c.deadline(), Some(Time::from_millis(950)));
        assert!(
            !c.on_timer(Time::from_millis(300), 4),
            "no restart at the old deadline"
        );
        // A shorter late sample (id 2) never shortens the timer; the wrong answer kind for an
        // abandoned id is not a sample.
        c.on_probe_ack(Time::from_millis(350), ack(ProbeKind::Pr1Ack, 2));
        c.on_probe_ack(Time::from_millis(360), ack(ProbeKind::Pr2Ack, 1));
        assert_eq!(c.probe_timeout(), ms(750));
        // id 3 is answered in time and the cycle completes.
        assert!(c
            .on_probe_ack(Time::from_millis(450), ack(ProbeKind::Pr1Ack, 3))
            .is_none());
        let p2 = c.poll_probe(Time::from_millis(450)).unwrap();
        assert_eq!((p2.kind, p2.id), (ProbeKind::Probe2, 3));
        assert_eq!(
            c.on_probe_ack(Time::from_millis(700), ack(ProbeKind::Pr2Ack, 3)),
            Some((ms(250), ms(250)))
        );
        assert_eq!(c.restarts, 2);
    }

    #[test]
    fn a_late_answer_is_recognised_after_many_restarts() {
        // 100 ms timer, 10 s RTT (a deep queue on a slow link): 100 restarts happen before the
        // first answer comes back, and it must still be recognised.
        let mut c = ProbeCycle::new(ProbeTrigger::Timeout, 10_000, 0, 1, ms(100), ms(60_000));
        for k in 1..=100u32 {
            c.poll_probe(Time::from_millis(u64::from(k - 1) * 100))
                .unwrap();
            assert!(c.on_timer(Time::from_millis(u64::from(k) * 100), k + 1));
        }
        c.poll_probe(Time::from_millis(10_000)).unwrap();
        let first = ProbeOption {
            kind: ProbeKind::Pr1Ack,
            id: 1,
        };
        c.on_probe_ack(Time::from_millis(10_000), first);
        assert_eq!(c.probe_timeout(), ms(30_000));
        assert_eq!(c.deadline(), Some(Time::from_millis(40_000)));
    }

    #[test]
    fn a_late_answer_never_raises_the_timer_past_its_cap() {
        let mut c = ProbeCycle::new(ProbeTrigger::Timeout, 10_000, 0, 1, ms(100), ms(1000));
        c.poll_probe(Time::ZERO).unwrap();
        assert!(c.on_timer(Time::from_millis(100), 2));
        c.poll_probe(Time::from_millis(100)).unwrap();
        let late = ProbeOption {
            kind: ProbeKind::Pr1Ack,
            id: 1,
        };
        c.on_probe_ack(Time::from_millis(900), late);
        assert_eq!(c.probe_timeout(), ms(1000));
    }

    #[test]
    fn steady_rtts_give_immediate_recovery() {
        let mut h = ProbeHistory::default();
        let cfg = ProbingConfig::default();
        assert_eq!(
            h.decide(&cfg, (ms(50), ms(50)), 8000, 1000),
            ProbeDecision::Immediate
        );
        assert_eq!(
            h.decide(&cfg, (ms(50), ms(50)), 8000, 1000),
            ProbeDecision::Immediate
        );
    }

    #[test]
    fn gentle_recovery_lands_between_half_and_full_window() {
        let mut h = ProbeHistory::default();
        let cfg = ProbingConfig::default();
        // History: best 20 ms, worst 200 ms.
        h.decide(&cfg, (ms(20), ms(20)), 10_000, 1000);
        h.decide(&cfg, (ms(200), ms(200)), 10_000, 1000);
        // acprtt is now high (right edge); falling samples below it → Gentle.
        match h.decide(&cfg, (ms(140), ms(150)), 10_000, 1000) {
            ProbeDecision::Gentle(w) => assert!((5000..=10_000).contains(&w), "w = {w}"),
            other => panic!("expected Gentle, got {other:?}"),
        }
    }

    #[test]
    fn rising_rtts_at_the_right_edge_give_slow_start() {
        let mut h = ProbeHistory::default();
        let cfg = ProbingConfig::default();
        h.decide(&cfg, (ms(20), ms(20)), 10_000, 1000);
        h.decide(&cfg, (ms(100), ms(100)), 10_000, 1000);
        assert_eq!(
            h.decide(&cfg, (ms(150), ms(300)), 10_000, 1000),
            ProbeDecision::SlowStart
        );
    }
}
