//! The receiving half of a connection: reassembly, acknowledgement policy (immediate or
//! delayed, RFC 5681 §4.2), SACK generation (RFC 2018), timestamp echo (RFC 7323 §4.3) and the
//! advertised receive window.

use std::time::Duration;

use super::reassembly::{Arrival, Reassembly, PIECE_OVERHEAD, SPARE_BOUND};
use crate::Time;

/// Most ranges reported corrupted (TCP-ELN) that a receiver remembers.
const MAX_CORRUPTED_RANGES: usize = 1024;

/// The receiving half.
#[derive(Debug)]
pub struct Receiver {
    reasm: Reassembly,
    capacity: u64,
    mss: u64,
    delayed_ack: bool,
    delayed_ack_timeout: Duration,
    /// RFC 7323 TS.Recent.
    ts_recent: u32,
    /// RFC 7323 Last.ACK.sent.
    last_ack_sent: u64,
    /// Right edge of the window last advertised (never moved left: RFC 793 / RFC 7323 §2.4).
    rcv_adv: u64,
    ack_now: bool,
    unacked_segments: u32,
    delack_deadline: Option<Time>,
    /// Sequence number of the peer's FIN, once seen.
    fin_seq: Option<u64>,
    fin_received: bool,
    bytes_delivered: u64,
    /// Sequence ranges `[start, end)` the host reported lost to wireless corruption and not
    /// yet received (TCP-ELN), keyed by start.
    corrupted: std::collections::BTreeMap<u64, u64>,
}

impl Receiver {
    /// A receiver expecting `rcv_nxt` next (one past the peer's SYN), buffering at most
    /// `capacity` bytes of segments of at most `mss` bytes. It holds at most
    /// `capacity / mss + 2` out-of-order pieces: a sender of full segments never needs more.
    pub fn new(rcv_nxt: u64, capacity: u64, mss: u64, delayed_ack: bool, delack_ms: u64) -> Self {
        let max_pieces = capacity / mss.max(1) + 2;
        Receiver {
            reasm: Reassembly::new(
                rcv_nxt,
                usize::try_from(capacity).unwrap_or(usize::MAX),
                usize::try_from(max_pieces).unwrap_or(usize::MAX),
            ),
            capacity,
            mss,
            delayed_ack,
            delayed_ack_timeout: Duration::from_millis(delack_ms),
            ts_recent: 0,
            last_ack_sent: rcv_nxt,
            rcv_adv: rcv_nxt.saturating_add(capacity),
            ack_now: false,
            unacked_segments: 0,
            delack_deadline: None,
            fin_seq: None,
            fin_received: false,
            bytes_delivered: 0,
            corrupted: std::collections::BTreeMap::new(),
        }
    }

    /// Records that the segment `[seq, seq + len)` arrived corrupted on the local wireless hop
    /// (reported by the host; TCP-ELN). At most 1024 ranges are remembered.
    pub fn note_corrupted(&mut self, seq: u64, len: u64) {
        let end = seq.saturating_add(len);
        if len == 0 || end <= self.rcv_nxt() {
            return;
        }
        if self.corrupted.len() >= MAX_CORRUPTED_RANGES {
            self.corrupted.pop_first();
        }
        let e = self.corrupted.entry(seq).or_insert(end);
        *e = (*e).max(end);
    }

    /// The ELN bit for the next ACK (rcp-r2cp.txt §3.4.2): set when the hole at the
    /// acknowledgement point was lost on the wireless hop. Forgets repaired holes.
    pub fn eln_mark(&mut self) -> bool {
        let rcv_nxt = self.rcv_nxt();
        while let Some((&start, &end)) = self.corrupted.first_key_value() {
            if end > rcv_nxt {
                return start <= rcv_nxt && self.reasm.has_holes();
            }
            self.corrupted.remove(&start);
        }
        false
    }

    /// RCV.NXT: the acknowledgement number to send.
    #[inline]
    pub fn rcv_nxt(&self) -> u64 {
        self.reasm.rcv_nxt()
    }

    /// The timestamp to echo.
    pub fn ts_recent(&self) -> u32 {
        self.ts_recent
    }

    /// Records the TSval of the peer's SYN (or SYN-ACK, or a repeated SYN) as TS.Recent, so the
    /// handshake's answer echoes it (RFC 7323 §3.2, §4.3: the SYN occupies one sequence number,
    /// which `on_segment`'s payload-only test would miss).
    pub fn on_syn(&mut self, ts_val: u32) {
        self.ts_recent = ts_val;
    }

    /// True once the peer's FIN was received in order (end of stream).
    pub fn fin_received(&self) -> bool {
        self.fin_received
    }

    /// In-order bytes the application has read so far.
    pub fn bytes_delivered(&self) -> u64 {
        self.bytes_delivered
    }

    /// In-order bytes waiting to be read.
    pub fn readable(&self) -> usize {
        self.reasm.readable()
    }

    /// Bytes held: in order and not yet read, plus out of order.
    pub fn buffered(&self) -> usize {
        self.reasm.buffered()
    }

    /// Out-of-order pieces held now, and at most.
    pub fn out_of_order_pieces(&self) -> (usize, usize) {
        (self.reasm.pieces(), self.reasm.max_pieces())
    }

    /// Out-of-order pieces refused so far because the most were held (a sender of full
    /// segments never causes this).
    pub fn refused_pieces(&self) -> u64 {
        self.reasm.refused()
    }

    /// Most bytes this receiver holds: the buffer, the out-of-order pieces' overhead, the
    /// freed piece buffers kept for reuse and the ELN ranges (see `docs/HANDSHAKE.md`,
    /// "Memory").
    pub fn memory_bound(&self) -> usize {
        let corrupted_entry = 2 * std::mem::size_of::<u64>() + 48;
        usize::try_from(self.capacity)
            .unwrap_or(usize::MAX)
            .saturating_add(self.reasm.max_pieces().saturating_mul(PIECE_OVERHEAD))
            .saturating_add(SPARE_BOUND)
            .saturating_add(MAX_CORRUPTED_RANGES * corrupted_entry)
    }

    /// The window to advertise now: free buffer space, never shrinking the right edge.
    #[inline]
    pub fn window(&self) -> u64 {
        let free = self.capacity.saturating_sub(self.reasm.buffered() as u64);
        let keep = self.rcv_adv.saturating_sub(self.rcv_nxt());
        free.max(keep).min(u64::from(u32::MAX))
    }

    /// Records that an ACK is being sent carrying `ack` and `window`: the current RCV.NXT and
    /// [`Receiver::window`], as the connection wrote them into the segment (taken from it
    /// rather than computed again).
    pub fn on_ack_sent(&mut self, ack: u64, window: u32) {
        debug_assert_eq!((ack, u64::from(window)), (self.rcv_nxt(), self.window()));
        self.last_ack_sent = ack;
        self.rcv_adv = ack.saturating_add(u64::from(window));
        self.ack_now = false;
        self.unacked_segments = 0;
        self.delack_deadline = None;
    }

    /// True when an ACK should go out now.
    pub fn wants_ack(&self) -> bool {
        self.ack_now
    }

    /// Requests an immediate ACK (e.g. after a duplicate SYN or an unacceptable segment).
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

    /// Fills SACK blocks into `opts`.
    pub fn fill_sack(&mut self, opts: &mut roam_wire::Options) {
        self.reasm.sack_blocks(opts);
    }

    /// Whether [`Receiver::fill_sack`] would fill any block; when not, it has done what
    /// `fill_sack` would (so an ACK without SACK blocks needs no options block to fill).
    #[inline]
    pub fn sack_blocks_due(&mut self) -> bool {
        self.reasm.sack_blocks_due()
    }

    /// Processes the sequence part of a segment. Returns in-order bytes that became readable.
    pub fn on_segment(
        &mut self,
        now: Time,
        seq: u64,
        payload: &[u8],
        fin: bool,
        ts_val: u32,
    ) -> u64 {
        let rcv_nxt = self.rcv_nxt();
        let Some(seg_end) = seq
            .checked_add(payload.len() as u64)
            .and_then(|end| end.checked_add(u64::from(fin)))
        else {
            // A segment ending past the sequence space lies beyond any window we offer: it is
            // dropped and answered with an ACK, as any unacceptable segment (RFC 793 §3.9).
            self.ack_now = true;
            return 0;
        };
        // RFC 7323 §4.3: update TS.Recent from a segment covering Last.ACK.sent.
        if seq <= self.last_ack_sent && seg_end >= self.last_ack_sent {
            self.ts_recent = ts_val;
        }
        if fin {
            // seq + len < seg_end: checked above.
            let f = seg_end - 1;
            self.fin_seq.get_or_insert(f);
        }
        if payload.is_empty() && !fin {
            return 0;
        }
        // Trim to the receive window; data beyond it is dropped (RFC 793 §3.9).
        let right = rcv_nxt.saturating_add(self.window());
        let mut end = seg_end - u64::from(fin);
        if end > right {
            end = right.max(seq);
        }
        let usable = &payload[..(end.saturating_sub(seq)) as usize];
        let readable_before = self.reasm.readable();
        let arrival = if usable.is_empty() {
            if seq >= right && !payload.is_empty() {
                self.ack_now = true; // Out of window: answer with our window (persist probe).
            }
            Arrival::Duplicate
        } else {
            self.reasm.insert(seq, usable)
        };
        if self.fin_seq == Some(self.rcv_nxt()) && !self.fin_received {
            self.reasm.advance_control();
            self.fin_received = true;
            self.ack_now = true;
        }
        match arrival {
            Arrival::InOrder { filled_hole: false }
                if self.delayed_ack && !self.reasm.has_holes() =>
            {
                self.unacked_segments = self.unacked_segments.saturating_add(1);
                if self.unacked_segments >= 2 || usable.len() as u64 >= 2 * self.mss {
                    self.ack_now = true;
                } else if self.delack_deadline.is_none() {
                    self.delack_deadline = Some(now + self.delayed_ack_timeout);
                }
            }
            // Out-of-order, duplicate and hole-filling segments are acknowledged at once
            // (RFC 5681 §4.2), as is everything when delayed ACKs are off.
            _ => self.ack_now = true,
        }
        (self.reasm.readable() - readable_before) as u64
    }

    /// Moves up to `max` readable bytes into `out`; may schedule a window update.
    pub fn read(&mut self, out: &mut Vec<u8>, max: usize) -> usize {
        self.read_with(max, |bytes| out.extend_from_slice(bytes))
    }

    /// As [`Receiver::read`], but hands the bytes to `f` where they lie (one or two slices,
    /// in stream order) instead of copying them out.
    pub fn read_with(&mut self, max: usize, f: impl FnMut(&[u8])) -> usize {
        let before = self.window();
        let n = self.reasm.read_with(max, f);
        self.bytes_delivered += n as u64;
        let after = self.window();
        // Window update when the window grows by two segments or half the buffer
        // (receiver-side silly-window avoidance, RFC 1122 §4.2.3.3).
        let threshold = (2 * self.mss).min(self.capacity / 2);
        let advertised = self.rcv_adv.saturating_sub(self.rcv_nxt());
        if n > 0 && after > before && after.saturating_sub(advertised) >= threshold {
            self.ack_now = true;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receiver() -> Receiver {
        Receiver::new(1000, 10_000, 1000, false, 200)
    }

    #[test]
    fn a_segment_ending_past_the_sequence_space_is_dropped_and_acknowledged() {
        let mut r = receiver();
        for (seq, len, fin) in [(u64::MAX - 10, 100, false), (u64::MAX, 0, true)] {
            assert_eq!(r.on_segment(Time::ZERO, seq, &vec![1; len], fin, 7), 0);
            assert!(r.wants_ack(), "answered like any unacceptable segment");
            r.on_ack_sent(r.rcv_nxt(), r.window() as u32);
        }
        assert_eq!(r.rcv_nxt(), 1000);
        assert_eq!(r.reasm.buffered(), 0);
        assert!(!r.fin_received());
        assert_eq!(
            r.ts_recent(),
            0,
            "an unacceptable segment does not set TS.Recent"
        );
        // The connection goes on.
        assert_eq!(r.on_segment(Time::ZERO, 1000, &[2; 10], false, 8), 10);
    }

    #[test]
    fn a_receiver_at_the_end_of_the_sequence_space_saturates_its_window_edge() {
        let mut r = Receiver::new(u64::MAX - 5, 10_000, 1000, false, 200);
        r.on_ack_sent(r.rcv_nxt(), r.window() as u32);
        assert_eq!(r.on_segment(Time::ZERO, u64::MAX - 5, &[3; 5], false, 1), 5);
        assert_eq!(r.rcv_nxt(), u64::MAX);
        assert_eq!(r.on_segment(Time::ZERO, u64::MAX, &[3; 5], false, 1), 0);
    }
}
