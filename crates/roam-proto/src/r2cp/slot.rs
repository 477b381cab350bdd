//! One R²CP pipe's wire state at the receiver: an ordinary RCP connection to one sender (its
//! own connection id, handshake, pull ids and recent-pull list, rcp-r2cp.txt §3.3.1–3.3.2:
//! the same [`RequestWire`] the single-path RCP receiver keeps), whose congestion state is a
//! [`ReceiverPipe`] in the pipe's local sequence space and whose requests are all pulls of
//! global ranges looked up in its [`Binding`] (§4.2).

use std::collections::VecDeque;
use std::time::Duration;

use roam_wire::{ConnId, Flags, PullBlock, RequestMode, Token};

use super::binding::Binding;
use super::estimate::PathEstimate;
use super::{PipeId, PipeSpec};
use crate::rcp::estimated_facts::HoleJudge;
use crate::rcp::{ControlTimer, ReceiverPipe, RequestWire};
use crate::Time;

/// Where a pipe is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PipeState {
    /// SYN sent, waiting for SYN+ACK.
    Connecting,
    /// Requesting data.
    Established,
    /// FIN sent (the connection completed, or the pipe was deleted), waiting for FIN+ACK.
    Closing,
}

/// A datagram waiting to leave through this pipe.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Out {
    Syn,
    /// A REQ pulling nothing new (the handshake's ACK).
    Ack,
    /// A pull of one block, with the most recent pulls.
    Pull,
    Fin,
}

/// One pipe of an R²CP connection.
#[derive(Debug)]
pub(crate) struct Slot {
    pub spec: PipeSpec,
    pub state: PipeState,
    pub pipe: ReceiverPipe,
    pub binding: Binding,
    /// The offset named in the SYN; every REQ's cumulative edge stays there (pull mode only).
    pub start: u64,
    /// Make-before-break: no new bindings; deleted once nothing is outstanding.
    pub draining: bool,
    /// Connection id, sender's window and timestamp, token handshake, SYN/FIN
    /// retransmission, recent pulls: the RCP receiver's code.
    pub wire: RequestWire,
    /// Pulls waiting to be sent, oldest first.
    pulls: VecDeque<PullBlock>,
    pub outgoing: VecDeque<Out>,
    syn_sent_at: Time,
    /// The handshake's round trip (Karn: only from an unrepeated SYN), used for the rank
    /// estimate until the first data sample.
    pub handshake_rtt: Option<Duration>,
    /// Payload bytes that arrived through this pipe (new to the buffer).
    pub bytes_received: u64,
    /// REQ datagrams sent.
    pub requests_sent: u64,
    /// Delivery rate and last sign of life of its path (`estimate.rs`).
    pub est: PathEstimate,
    /// Taken for dead after a silence (`hol.rs`): takes no units until it delivers again.
    pub silent: bool,
    /// Made while the connection was already delivering (`head.rs`,
    /// `exit_slow_start_on_delay`).
    pub joined: bool,
    /// Consecutive RTT samples in slow start above the base RTT by the delay threshold.
    pub queue_samples: u32,
    /// Wireless-loss facts estimated for this pipe (issue 30): its holes judged from its own
    /// arrivals, in its local sequence space, instead of reported by the host. `None`: the
    /// host's corruption reports.
    pub judge: Option<HoleJudge>,
}

impl Slot {
    pub fn new(spec: PipeSpec, pipe: ReceiverPipe, start: u64, now: Time, rto: Duration) -> Slot {
        Slot {
            spec,
            state: PipeState::Connecting,
            pipe,
            binding: Binding::new(),
            start,
            draining: false,
            wire: RequestWire::new(spec.conn_id, start, now, rto),
            pulls: VecDeque::new(),
            outgoing: VecDeque::from([Out::Syn]),
            syn_sent_at: now,
            handshake_rtt: None,
            bytes_received: 0,
            requests_sent: 0,
            est: PathEstimate::default(),
            silent: false,
            joined: false,
            queue_samples: 0,
            judge: None,
        }
    }

    /// DATA for the local unit `[local, local + len)` arrived at `now` with the sender's
    /// timestamp `ts_val`. With an estimator, a hole it reveals in the pipe's local sequence
    /// space (units requested through this pipe before it and not yet arrived) that the judge
    /// calls wireless has its outstanding units marked corrupted, as the host's report would
    /// (`rcp/estimated_facts.rs`; local sequence numbers follow the pipe's request order,
    /// rcp-r2cp.txt §4.2, so a pipe's holes are gaps there, whatever their global offsets).
    pub fn judge_arrival(&mut self, now: Time, local: u64, len: u64, ts_val: u32) {
        let Some(judge) = self.judge.as_mut() else {
            return;
        };
        if let Some((from, to)) = judge.on_data(now, local, local.saturating_add(len), ts_val) {
            self.pipe.note_corrupted_in(from, to);
        }
    }

    pub fn id(&self) -> PipeId {
        self.spec.id
    }

    pub fn conn_id(&self) -> ConnId {
        self.wire.conn_id
    }

    /// The SYN+ACK arrived, with the sender's token.
    pub fn on_established(&mut self, now: Time, token: Option<Token>) {
        if self.wire.control.tries == 0 {
            self.handshake_rtt = Some(now.saturating_since(self.syn_sent_at));
        }
        self.state = PipeState::Established;
        self.wire.on_syn_ack(token);
    }

    /// The smoothed RTT, else the handshake's, else `None`.
    pub fn rtt_estimate(&self) -> Option<Duration> {
        self.pipe.rtt().srtt().or(self.handshake_rtt)
    }

    /// The unit at `local` leaves this pipe without its data (it moved to another pipe, or is
    /// not needed any more): unbound, settled in the pipe without a congestion signal, and
    /// forgotten by the estimate.
    pub fn forget_unit(&mut self, now: Time, local: u64) {
        self.binding.unbind(local);
        self.pipe.forget(now, local);
        self.est.forget(local);
    }

    /// Queues a pull of the global range `[start, end)`.
    pub fn pull(&mut self, start: u64, end: u64) {
        let block = self.wire.pulls.block(start, end);
        self.pulls.push_back(block);
        self.outgoing.push_back(Out::Pull);
    }

    /// Starts the teardown (§3.3.2): FIN, retransmitted on the RTO.
    pub fn close(&mut self, now: Time) {
        if self.state == PipeState::Closing {
            return;
        }
        self.state = PipeState::Closing;
        self.pulls.clear();
        self.outgoing.clear();
        self.outgoing.push_back(Out::Fin);
        self.wire.control = ControlTimer::armed(now, self.pipe.rtt().rto());
    }

    /// True if a datagram is waiting.
    pub fn wants_to_send(&self) -> bool {
        !self.outgoing.is_empty() || (self.wire.ack_pending && self.state == PipeState::Established)
    }

    /// Writes the next REQ into `buf`; `object` is the name a SYN carries.
    pub fn poll_transmit(
        &mut self,
        now: Time,
        object: &[u8],
        mss: u64,
        buf: &mut Vec<u8>,
    ) -> Option<usize> {
        let out = match self.outgoing.pop_front() {
            Some(o) => o,
            None if self.wire.ack_pending && self.state == PipeState::Established => Out::Ack,
            None => return None,
        };
        // §4.2: "the request is always transmitted in the pull mode": the cumulative edge
        // stays at the SYN's offset and DEQ at 0; only the pulled blocks name data.
        let mut req = self.wire.request(now, self.start, 0);
        match out {
            Out::Syn => {
                RequestWire::make_syn(&mut req, object, mss);
                self.syn_sent_at = now;
            }
            Out::Ack => {}
            Out::Pull => {
                if let Some(b) = self.pulls.pop_front() {
                    req.mode = RequestMode::PULL;
                    self.wire.pulls.push(b);
                }
            }
            Out::Fin => req.flags = Flags::FIN | Flags::ACK,
        }
        if !matches!(out, Out::Syn) {
            self.wire.finish_after_syn(&mut req, object);
            // §3.3.1: the most recent pulls ride along (newest first), each in four REQs.
            if !matches!(out, Out::Fin) {
                (req.blocks, req.nblocks) = self.wire.pulls.recent();
                self.wire.pulls.rode(req.blocks());
            }
        }
        buf.clear();
        req.encode(buf);
        self.requests_sent += 1;
        Some(buf.len())
    }
}

#[cfg(test)]
mod tests {
    use roam_wire::ConnId;

    use super::*;
    use crate::cc::CcKind;
    use crate::endpoint::PathId;
    use crate::loss_cause::Scheme;
    use crate::r2cp::PipeRole;
    use crate::rcp::{pipe_for, RcpCc, RcpConfig};

    /// Ten 1000-byte units requested through one pipe (local 0..10 000); units 4 and 5 are
    /// lost. Arrivals at a steady 50 ms one-way time after one 150 ms spike (Spike's range
    /// [50, 150] ms, as in `rcp/estimated_facts.rs`): the hole [4000, 6000) that unit 6 reveals
    /// is judged wireless, so with an estimator the three later arrivals answer it as two
    /// wireless holes without a window cut; without one, as a congestion loss.
    fn run(estimate: bool) -> (u64, u64) {
        let config = RcpConfig {
            mss: 1000,
            eln: true,
            ..RcpConfig::default()
        };
        let cc = RcpCc::Shared(CcKind::NewReno);
        let spec = PipeSpec {
            id: PipeId(1),
            conn_id: ConnId(7),
            path: PathId(0),
            role: PipeRole::Primary,
            cc,
        };
        let rto = Duration::from_secs(1);
        let mut slot = Slot::new(spec, pipe_for(&config, cc, 0), 0, Time::ZERO, rto);
        if estimate {
            slot.judge = Some(HoleJudge::new(Scheme::Spike, 1000));
        }
        for i in 0..10 {
            slot.pipe.on_requested(Time::ZERO, i * 1000, (i + 1) * 1000);
        }
        // (arrival ms, unit, sender timestamp µs): one-way times 50, 50, 150, 50, then 50.
        let arrivals = [
            (100, 0, 50_000),
            (200, 1, 150_000),
            (400, 2, 250_000),
            (500, 3, 450_000),
            (600, 6, 550_000),
            (610, 7, 560_000),
            (620, 8, 570_000),
            (630, 9, 580_000),
        ];
        for (ms, unit, ts) in arrivals {
            let now = Time::from_millis(ms);
            slot.judge_arrival(now, unit * 1000, 1000, ts);
            slot.pipe.on_arrival(now, unit * 1000, None);
        }
        let s = slot.pipe.stats();
        (s.wireless_holes, s.recoveries)
    }

    #[test]
    fn a_pipe_judges_the_holes_of_its_local_sequence_space() {
        assert_eq!(run(true), (2, 0));
        assert_eq!(run(false), (0, 1));
    }
}
