//! The RCP receive buffer: in-order bytes waiting for the application, and out-of-order
//! pieces waiting for their holes (§3.3.5: resequencing lives with reliability, at the
//! receiver).
//!
//! **Bounded under a hostile sender** (issue 16). Every byte is held at most once: a segment
//! overlapping or duplicating what is held contributes only the bytes not yet held, as new
//! pieces (a piece that ends where a new one starts is extended instead); the first byte
//! received for an offset is the one delivered. The buffer holds at
//! most `max_pieces` out-of-order pieces; a segment that would need more is refused (the
//! caller treats it as lost, and its bytes are requested again). So whatever a sender sends,
//! the buffer holds no more bytes than the range the receiver accepts data for (its receive
//! window), in at most `max_pieces` pieces.

use std::collections::{BTreeMap, VecDeque};

/// Out-of-order pieces a buffer holds at most unless told otherwise.
pub const DEFAULT_MAX_PIECES: usize = 4096;

/// Bytes of bookkeeping one out-of-order piece costs at most besides its data (map entry,
/// vector header, allocation): used to state memory bounds.
pub const PIECE_OVERHEAD: usize = 96;

/// Resequencing buffer over object offsets.
#[derive(Debug, Clone)]
pub struct RecvBuffer {
    /// Next in-order offset expected (RCV.NXT).
    rcv_nxt: u64,
    /// Offset of the first unread in-order byte.
    read_point: u64,
    ready: VecDeque<u8>,
    /// Disjoint out-of-order pieces by start offset, all above `rcv_nxt`.
    pieces: BTreeMap<u64, Vec<u8>>,
    ooo_bytes: usize,
    max_pieces: usize,
}

impl Default for RecvBuffer {
    fn default() -> Self {
        RecvBuffer::new(0)
    }
}

impl RecvBuffer {
    /// An empty buffer expecting `start` next, holding at most [`DEFAULT_MAX_PIECES`]
    /// out-of-order pieces.
    pub fn new(start: u64) -> Self {
        RecvBuffer::with_max_pieces(start, DEFAULT_MAX_PIECES)
    }

    /// An empty buffer expecting `start` next, holding at most `max_pieces` (at least one)
    /// out-of-order pieces.
    pub fn with_max_pieces(start: u64, max_pieces: usize) -> Self {
        RecvBuffer {
            rcv_nxt: start,
            read_point: start,
            ready: VecDeque::new(),
            pieces: BTreeMap::new(),
            ooo_bytes: 0,
            max_pieces: max_pieces.max(1),
        }
    }

    /// RCV.NXT: every byte below it arrived.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Offset of the next byte the application will read.
    pub fn read_point(&self) -> u64 {
        self.read_point
    }

    /// In-order bytes not yet read.
    pub fn readable(&self) -> usize {
        self.ready.len()
    }

    /// Out-of-order bytes held.
    pub fn out_of_order_bytes(&self) -> usize {
        self.ooo_bytes
    }

    /// Out-of-order pieces held.
    pub fn out_of_order_pieces(&self) -> usize {
        self.pieces.len()
    }

    /// The most out-of-order pieces this buffer holds.
    pub fn max_pieces(&self) -> usize {
        self.max_pieces
    }

    /// The piece holding `offset`, as (start, end), if any.
    fn piece_at(&self, offset: u64) -> Option<(u64, u64)> {
        let (&s, v) = self.pieces.range(..=offset).next_back()?;
        let e = s.saturating_add(v.len() as u64);
        (e > offset).then_some((s, e))
    }

    /// True if `[seq, end)` was already received entirely.
    pub fn has(&self, seq: u64, end: u64) -> bool {
        let mut at = seq.max(self.rcv_nxt);
        while at < end {
            match self.piece_at(at) {
                Some((_, e)) => at = e,
                None => return false,
            }
        }
        true
    }

    /// Stores `payload` at `seq`, keeping only bytes not held yet. Returns the number of bytes
    /// by which RCV.NXT advanced. Out-of-order bytes that would need more than the piece
    /// limit are refused: check [`RecvBuffer::has`] to learn whether all of it is held.
    pub fn insert(&mut self, seq: u64, payload: &[u8]) -> u64 {
        // Bytes past the end of the offset space do not exist.
        let room = usize::try_from(u64::MAX - seq).unwrap_or(usize::MAX);
        let payload = &payload[..payload.len().min(room)];
        let end = seq + payload.len() as u64;
        if payload.is_empty() || end <= self.rcv_nxt {
            return 0;
        }
        let before = self.rcv_nxt;
        if seq <= self.rcv_nxt {
            // In order: the payload up to the next held piece, then that piece (its bytes
            // arrived first), and so on. `seq <= rcv_nxt < end` keeps offsets in the payload.
            while self.rcv_nxt < end {
                let next = self.pieces.first_key_value().map(|(&s, _)| s);
                let upto = next.map_or(end, |s| s.min(end));
                if upto > self.rcv_nxt {
                    let a = usize::try_from(self.rcv_nxt - seq).unwrap_or(usize::MAX);
                    let b = usize::try_from(upto - seq).unwrap_or(usize::MAX);
                    self.ready.extend(payload.get(a..b).unwrap_or_default());
                    self.rcv_nxt = upto;
                }
                if next != Some(self.rcv_nxt) {
                    break;
                }
                if let Some((s, bytes)) = self.pieces.pop_first() {
                    self.ooo_bytes -= bytes.len();
                    self.ready.extend(&bytes);
                    self.rcv_nxt = s.saturating_add(bytes.len() as u64);
                }
            }
            self.drain_in_order();
        } else {
            self.store_out_of_order(seq, payload);
        }
        self.rcv_nxt - before
    }

    /// Stores the parts of `[seq, seq + payload.len())` (all above RCV.NXT) that no piece
    /// holds, within the piece limit.
    fn store_out_of_order(&mut self, seq: u64, payload: &[u8]) {
        let end = seq.saturating_add(payload.len() as u64);
        // The gaps the held pieces leave in [seq, end).
        let mut gaps = Vec::new();
        let mut at = seq;
        if let Some((_, e)) = self.piece_at(at) {
            at = e;
        }
        if at >= end {
            return; // Held already.
        }
        for (&s, v) in self.pieces.range(at..end) {
            if s > at {
                gaps.push((at, s));
            }
            at = at.max(s.saturating_add(v.len() as u64));
        }
        if at < end {
            gaps.push((at, end));
        }
        for (a, b) in gaps {
            // Offsets relative to `seq` fit: the gap lies within the payload.
            let from = usize::try_from(a - seq).unwrap_or(usize::MAX);
            let to = usize::try_from(b - seq).unwrap_or(usize::MAX);
            let Some(bytes) = payload.get(from..to) else {
                return;
            };
            // Extend a piece that ends exactly here rather than start another.
            let before = self.pieces.range_mut(..a).next_back();
            match before {
                Some((&s, v)) if s.saturating_add(v.len() as u64) == a => {
                    v.extend_from_slice(bytes);
                }
                _ => {
                    if self.pieces.len() >= self.max_pieces {
                        return;
                    }
                    self.pieces.insert(a, bytes.to_vec());
                }
            }
            self.ooo_bytes += bytes.len();
        }
    }

    /// Moves the pieces RCV.NXT has reached into the in-order bytes.
    fn drain_in_order(&mut self) {
        while let Some((&seq, _)) = self.pieces.first_key_value() {
            if seq > self.rcv_nxt {
                break;
            }
            let Some((_, bytes)) = self.pieces.pop_first() else {
                break;
            };
            self.ooo_bytes -= bytes.len();
            let end = seq.saturating_add(bytes.len() as u64);
            if end > self.rcv_nxt {
                let skip = usize::try_from(self.rcv_nxt - seq).unwrap_or(usize::MAX);
                self.ready.extend(bytes.get(skip..).unwrap_or_default());
                self.rcv_nxt = end;
            }
        }
    }

    /// Moves up to `max` in-order bytes to `out`; returns how many.
    pub fn read(&mut self, out: &mut Vec<u8>, max: usize) -> usize {
        let n = max.min(self.ready.len());
        // Two slice copies, not a byte-by-byte drain (a profile of `roam perf` showed the
        // latter as a third of the receiver's CPU).
        let (front, back) = self.ready.as_slices();
        let from_front = n.min(front.len());
        out.extend_from_slice(&front[..from_front]);
        out.extend_from_slice(&back[..n - from_front]);
        self.ready.drain(..n);
        self.read_point += n as u64;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_order_segments_are_released_when_the_hole_fills() {
        let mut b = RecvBuffer::new(100);
        assert_eq!(b.insert(103, b"de"), 0);
        assert_eq!(b.insert(103, b"de"), 0);
        assert_eq!(b.out_of_order_bytes(), 2);
        assert_eq!(b.insert(100, b"abc"), 5);
        let mut out = Vec::new();
        assert_eq!(b.read(&mut out, 10), 5);
        assert_eq!(out, b"abcde");
        assert_eq!(b.read_point(), 105);
        assert_eq!(b.insert(101, b"bcdef"), 1);
        assert!(b.has(100, 106));
    }

    #[test]
    fn overlaps_keep_the_first_bytes_and_fill_only_the_gaps() {
        let mut b = RecvBuffer::new(0);
        b.insert(10, b"KLM");
        b.insert(20, b"UVW");
        // Spans both pieces and the gaps around them.
        b.insert(8, b"ijxxxnopqrstxxxxz");
        assert_eq!(b.out_of_order_bytes(), 17);
        assert!(b.has(8, 25));
        assert!(!b.has(7, 9));
        b.insert(0, b"abcdefgh");
        let mut out = Vec::new();
        b.read(&mut out, 100);
        assert_eq!(out, b"abcdefghijKLMnopqrstUVWxz");
        assert_eq!(b.out_of_order_bytes(), 0);
        assert_eq!(b.out_of_order_pieces(), 0);
    }

    #[test]
    fn a_segment_inside_a_held_piece_adds_nothing() {
        let mut b = RecvBuffer::new(0);
        b.insert(10, &[1; 100]);
        b.insert(20, &[2; 10]);
        assert_eq!(b.out_of_order_bytes(), 100);
        assert_eq!(b.out_of_order_pieces(), 1);
    }

    #[test]
    fn adjacent_arrivals_extend_one_piece() {
        let mut b = RecvBuffer::with_max_pieces(0, 2);
        for i in 1..100u64 {
            b.insert(i * 10, &[i as u8; 10]);
        }
        assert_eq!(b.out_of_order_pieces(), 1);
        assert_eq!(b.out_of_order_bytes(), 990);
    }

    #[test]
    fn the_piece_limit_refuses_more_pieces_but_never_in_order_bytes() {
        let mut b = RecvBuffer::with_max_pieces(0, 3);
        for i in 1..10u64 {
            b.insert(i * 10, b"x");
        }
        assert_eq!(b.out_of_order_pieces(), 3);
        assert!(b.has(30, 31));
        assert!(!b.has(40, 41), "refused");
        assert_eq!(b.insert(0, &[0; 10]), 11, "in order, then the piece at 10");
        assert_eq!(b.out_of_order_pieces(), 2);
    }

    #[test]
    fn offsets_at_the_top_of_the_range_do_not_overflow() {
        let mut b = RecvBuffer::new(u64::MAX - 10);
        b.insert(u64::MAX - 5, &[1; 5]);
        b.insert(u64::MAX - 3, &[1; 100]);
        assert!(b.has(u64::MAX - 5, u64::MAX));
        assert_eq!(b.insert(u64::MAX - 10, &[1; 5]), 10);
    }
}
