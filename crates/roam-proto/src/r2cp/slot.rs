//! One R²CP pipe's wire state at the receiver: an ordinary RCP connection to one sender (its
//! own connection id, handshake, pull ids and recent-pull list, rcp-r2cp.txt §3.3.1–3.3.2),
//! whose congestion state is a [`ReceiverPipe`] in the pipe's local sequence space and whose
//! requests are all pulls of global ranges looked up in its [`Binding`] (§4.2).

use std::collections::VecDeque;
use std::time::Duration;

use roam_wire::{ConnId, Flags, PullBlock, Request, RequestMode, Token, MAX_REQUEST_BLOCKS};

use super::binding::Binding;
use super::{PipeId, PipeSpec};
use crate::rcp::{ReceiverPipe, TokenEcho};
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

/// A retransmitted control exchange (SYN or FIN).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ControlTimer {
    pub at: Option<Time>,
    pub tries: u32,
}

/// REQs a pulled block rides in (its own and the next three, §3.3.1).
const PULL_RIDES: u8 = 4;

/// One pipe of an R²CP connection.
#[derive(Debug)]
pub(crate) struct Slot {
    pub spec: PipeSpec,
    pub state: PipeState,
    pub pipe: ReceiverPipe,
    pub binding: Binding,
    /// The offset named in the SYN; every REQ's cumulative edge stays there (pull mode only).
    pub start: u64,
    /// The sender's window (highest offset it lets us request).
    pub snd_wnd: u64,
    /// Make-before-break: no new bindings; deleted once nothing is outstanding.
    pub draining: bool,
    recent_pulls: VecDeque<(PullBlock, u8)>,
    next_pull_id: u32,
    pub ts_recent: u32,
    /// Pulls waiting to be sent, oldest first.
    pulls: VecDeque<PullBlock>,
    pub outgoing: VecDeque<Out>,
    pub ack_pending: bool,
    /// The sender's token, echoed with the object name until its first DATA
    /// (docs/HANDSHAKE-RCP.md; the same code as the RCP receiver's).
    pub token: TokenEcho,
    pub control: ControlTimer,
    syn_sent_at: Time,
    /// The handshake's round trip (Karn: only from an unrepeated SYN), used for the rank
    /// estimate until the first data sample.
    pub handshake_rtt: Option<Duration>,
    /// Payload bytes that arrived through this pipe (new to the buffer).
    pub bytes_received: u64,
    /// REQ datagrams sent.
    pub requests_sent: u64,
}

fn micros(now: Time) -> u32 {
    (now.as_micros() as u32).max(1)
}

impl Slot {
    pub fn new(spec: PipeSpec, pipe: ReceiverPipe, start: u64, now: Time, rto: Duration) -> Slot {
        Slot {
            spec,
            state: PipeState::Connecting,
            pipe,
            binding: Binding::new(),
            start,
            snd_wnd: start,
            draining: false,
            recent_pulls: VecDeque::new(),
            next_pull_id: 1,
            ts_recent: 0,
            pulls: VecDeque::new(),
            outgoing: VecDeque::from([Out::Syn]),
            ack_pending: false,
            token: TokenEcho::default(),
            control: ControlTimer {
                at: Some(now + rto),
                tries: 0,
            },
            syn_sent_at: now,
            handshake_rtt: None,
            bytes_received: 0,
            requests_sent: 0,
        }
    }

    pub fn id(&self) -> PipeId {
        self.spec.id
    }

    pub fn conn_id(&self) -> ConnId {
        self.spec.conn_id
    }

    /// The SYN+ACK arrived, with the sender's token.
    pub fn on_established(&mut self, now: Time, token: Option<Token>) {
        self.token.on_syn_ack(token);
        if self.control.tries == 0 {
            self.handshake_rtt = Some(now.saturating_since(self.syn_sent_at));
        }
        self.state = PipeState::Established;
        self.control = ControlTimer::default();
        self.ack_pending = true;
    }

    /// The smoothed RTT, else the handshake's, else `None`.
    pub fn rtt_estimate(&self) -> Option<Duration> {
        self.pipe.rtt().srtt().or(self.handshake_rtt)
    }

    /// Queues a pull of the global range `[start, end)`.
    pub fn pull(&mut self, start: u64, end: u64) {
        let block = PullBlock {
            id: self.next_pull_id,
            start,
            end,
        };
        self.next_pull_id = self.next_pull_id.wrapping_add(1).max(1);
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
        self.control = ControlTimer {
            at: Some(now + self.pipe.rtt().rto()),
            tries: 0,
        };
    }

    /// True if a datagram is waiting.
    pub fn wants_to_send(&self) -> bool {
        !self.outgoing.is_empty() || (self.ack_pending && self.state == PipeState::Established)
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
            None if self.ack_pending && self.state == PipeState::Established => Out::Ack,
            None => return None,
        };
        let mut req = Request {
            conn_id: self.spec.conn_id,
            flags: Flags::default(),
            mode: RequestMode::default(),
            req: self.start,
            deq: 0,
            ts_val: micros(now),
            ts_ecr: self.ts_recent,
            nblocks: 0,
            blocks: [PullBlock::default(); MAX_REQUEST_BLOCKS],
            object: &[],
            token: None,
        };
        match out {
            Out::Syn => {
                req.flags = Flags::SYN;
                // As RCP's SYN: the start offset in `req`, our segment size in `deq`.
                req.deq = u32::try_from(mss).unwrap_or(u32::MAX);
                req.object = object;
                self.syn_sent_at = now;
            }
            Out::Ack => {}
            Out::Pull => {
                if let Some(b) = self.pulls.pop_front() {
                    // §4.2: "the request is always transmitted in the pull mode".
                    req.mode = RequestMode::PULL;
                    self.recent_pulls.push_front((b, 0));
                    self.recent_pulls.truncate(MAX_REQUEST_BLOCKS);
                }
            }
            Out::Fin => req.flags = Flags::FIN | Flags::ACK,
        }
        if !matches!(out, Out::Syn) {
            req.flags.insert(Flags::ACK);
            self.ack_pending = false;
            // Until the sender opens the connection it holds nothing: the request brings back
            // its token and the object name (docs/HANDSHAKE-RCP.md).
            self.token.apply(&mut req, object);
            // §3.3.1: the most recent pulls ride along (newest first), each in four REQs.
            if !matches!(out, Out::Fin) {
                for (slot, (b, rides)) in req.blocks.iter_mut().zip(self.recent_pulls.iter_mut()) {
                    *slot = *b;
                    *rides = rides.saturating_add(1);
                }
                req.nblocks = self.recent_pulls.len() as u8;
                self.recent_pulls.retain(|(_, rides)| *rides < PULL_RIDES);
            }
        }
        buf.clear();
        req.encode(buf);
        self.requests_sent += 1;
        Some(buf.len())
    }
}
