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
