//! The acknowledgement state of one receiver pipe: when to acknowledge (immediately or
//! delayed, RFC 5681 §4.2), the timestamp to echo (RFC 7323 §4.3) and the ranges the host
//! reported lost to wireless corruption (TCP-ELN). It counts in its pipe's sequence numbers
//! and holds no bytes: the cumulative acknowledgement and the SACK blocks come from whatever
//! records the pipe's arrivals — the TCP-like engine's reassembly under its identity binding,
//! a pTCP pipe's own record of sequence numbers (ptcp.txt §4.2: each TCP-v pipe acknowledges
//! its own sequence space).

use std::collections::BTreeMap;
use std::time::Duration;

use super::super::reassembly::Arrival;
use crate::seqspace::PipeSeq;
use crate::Time;

/// Most ranges reported corrupted (TCP-ELN) that a receiver pipe remembers.
pub const MAX_CORRUPTED_RANGES: usize = 1024;

/// Bytes one remembered corrupted range costs at most (two `u64` and its share of the map's
/// nodes).
pub const CORRUPTED_ENTRY: usize = 2 * std::mem::size_of::<u64>() + 48;

/// One receiver pipe's acknowledgement state.
#[derive(Debug, Clone)]
pub struct ReceiverPipe {
    mss: u64,
    delayed_ack: bool,
    delayed_ack_timeout: Duration,
    /// RFC 7323 TS.Recent.
    ts_recent: u32,
    /// RFC 7323 Last.ACK.sent.
    last_ack_sent: PipeSeq,
    ack_now: bool,
    unacked_segments: u32,
    delack_deadline: Option<Time>,
    /// Sequence ranges `[start, end)` the host reported lost to wireless corruption and not
    /// yet received (TCP-ELN), keyed by start.
    corrupted: BTreeMap<u64, u64>,
}

impl ReceiverPipe {
    /// A pipe expecting `rcv_nxt` next, taking segments of at most `mss` bytes, delaying
    /// acknowledgements by up to `delack_ms` when `delayed_ack`.
    pub fn new(rcv_nxt: PipeSeq, mss: u64, delayed_ack: bool, delack_ms: u64) -> Self {
        ReceiverPipe {
            mss,
            delayed_ack,
            delayed_ack_timeout: Duration::from_millis(delack_ms),
            ts_recent: 0,
            last_ack_sent: rcv_nxt,
            ack_now: false,
            unacked_segments: 0,
            delack_deadline: None,
            corrupted: BTreeMap::new(),
        }
    }

    /// Records that the segment `[seq, seq + len)` arrived corrupted on the local wireless hop
    /// (reported by the host; TCP-ELN); nothing below `rcv_nxt` is remembered. At most
    /// 1024 ranges (`MAX_CORRUPTED_RANGES`) are remembered.
    pub fn note_corrupted(&mut self, seq: PipeSeq, len: u64, rcv_nxt: PipeSeq) {
        let end = seq.0.saturating_add(len);
        if len == 0 || end <= rcv_nxt.0 {
            return;
        }
        if self.corrupted.len() >= MAX_CORRUPTED_RANGES {
            self.corrupted.pop_first();
        }
        let e = self.corrupted.entry(seq.0).or_insert(end);
        *e = (*e).max(end);
    }

    /// The ELN bit for the next ACK (rcp-r2cp.txt §3.4.2): set when the hole at the
    /// acknowledgement point `rcv_nxt` was lost on the wireless hop (`has_holes`: data beyond
    /// it was received). Forgets repaired holes.
    pub fn eln_mark(&mut self, rcv_nxt: PipeSeq, has_holes: bool) -> bool {
        while let Some((&start, &end)) = self.corrupted.first_key_value() {
            if end > rcv_nxt.0 {
                return start <= rcv_nxt.0 && has_holes;
            }
            self.corrupted.remove(&start);
        }
        false
    }

    /// The timestamp to echo.
    pub fn ts_recent(&self) -> u32 {
        self.ts_recent
    }

    /// Records the TSval of the peer's SYN (or SYN-ACK, or a repeated SYN) as TS.Recent, so the
    /// handshake's answer echoes it (RFC 7323 §3.2, §4.3).
    pub fn on_syn(&mut self, ts_val: u32) {
        self.ts_recent = ts_val;
    }

    /// RFC 7323 §4.3: a segment `[seq, seg_end)` covering Last.ACK.sent updates TS.Recent.
    #[inline]
    pub fn on_timestamp(&mut self, seq: PipeSeq, seg_end: PipeSeq, ts_val: u32) {
        if seq <= self.last_ack_sent && seg_end >= self.last_ack_sent {
            self.ts_recent = ts_val;
        }
    }

    /// Records that an ACK carrying `ack` is being sent.
    pub fn on_ack_sent(&mut self, ack: PipeSeq) {
        self.last_ack_sent = ack;
        self.ack_now = false;
        self.unacked_segments = 0;
        self.delack_deadline = None;
    }

    /// True when an ACK should go out now.
    pub fn wants_ack(&self) -> bool {
        self.ack_now
    }

    /// Requests an immediate ACK.
    pub fn force_ack(&mut self) {
        self.ack_now = true;
    }

    /// Delayed-ACK deadline.
    pub fn deadline(&self) -> Option<Time> {
        self.delack_deadline
    }

    /// Handles an expired delayed-ACK timer.
    pub fn on_timeout(&mut self, now: Time) {
        if self.delack_deadline.is_some_and(|d| d <= now) {
            self.delack_deadline = None;
            self.ack_now = true;
        }
    }

    /// The acknowledgement policy for a segment whose `usable` payload bytes made `arrival`;
    /// `holes` tells whether the pipe still misses data below what it holds. An in-order
    /// segment that fills no hole may wait (every second full segment, or the timer);
    /// out-of-order, duplicate and hole-filling segments are acknowledged at once (RFC 5681
    /// §4.2), as is everything when delayed ACKs are off.
    #[inline]
    pub fn on_arrival(&mut self, now: Time, arrival: Arrival, usable: u64, holes: bool) {
        match arrival {
            Arrival::InOrder { filled_hole: false } if self.delayed_ack && !holes => {
                self.unacked_segments = self.unacked_segments.saturating_add(1);
                if self.unacked_segments >= 2 || usable >= 2 * self.mss {
                    self.ack_now = true;
                } else if self.delack_deadline.is_none() {
                    self.delack_deadline = Some(now + self.delayed_ack_timeout);
                }
            }
            _ => self.ack_now = true,
        }
    }

    /// Most bytes this pipe's state holds beside its struct (the corrupted ranges).
    pub fn memory_bound(&self) -> usize {
        MAX_CORRUPTED_RANGES * CORRUPTED_ENTRY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delayed_acks_wait_for_a_second_segment_or_the_timer() {
        let mut p = ReceiverPipe::new(PipeSeq(1), 1000, true, 200);
        let first = Arrival::InOrder { filled_hole: false };
        p.on_arrival(Time::ZERO, first, 1000, false);
        assert!(!p.wants_ack());
        assert_eq!(p.deadline(), Some(Time::from_millis(200)));
        p.on_arrival(Time::from_millis(1), first, 1000, false);
        assert!(p.wants_ack(), "every second full segment");
        p.on_ack_sent(PipeSeq(2001));
        assert_eq!((p.wants_ack(), p.deadline()), (false, None));
        p.on_arrival(Time::from_millis(2), first, 1000, false);
        p.on_timeout(Time::from_millis(202));
        assert!(p.wants_ack(), "the timer");
        p.on_ack_sent(PipeSeq(3001));
        p.on_arrival(Time::from_millis(3), Arrival::OutOfOrder, 1000, true);
        assert!(p.wants_ack(), "out of order: at once");
    }

    #[test]
    fn the_eln_mark_covers_the_hole_at_the_acknowledgement_point_only() {
        let mut p = ReceiverPipe::new(PipeSeq(1), 1000, false, 200);
        p.note_corrupted(PipeSeq(1001), 1000, PipeSeq(1001));
        assert!(
            !p.eln_mark(PipeSeq(1), true),
            "the hole at 1 is not the corrupted one"
        );
        assert!(p.eln_mark(PipeSeq(1001), true));
        assert!(!p.eln_mark(PipeSeq(1001), false), "no data beyond: no hole");
        assert!(!p.eln_mark(PipeSeq(2001), true), "repaired, forgotten");
        assert!(p.corrupted.is_empty());
    }
}
