//! The receiver's reassembly queue and SACK block generation (RFC 2018).

use std::collections::{BTreeMap, VecDeque};

use roam_wire::{SackBlock, MAX_SACK_BLOCKS};

/// In-order bytes waiting for the application plus out-of-order ranges.
#[derive(Debug, Clone)]
pub struct Reassembly {
    /// Next in-order sequence number expected (RCV.NXT).
    rcv_nxt: u64,
    /// In-order bytes not yet read by the application.
    ready: VecDeque<u8>,
    /// Out-of-order segments by starting sequence number (non-overlapping).
    ooo: BTreeMap<u64, Vec<u8>>,
    ooo_bytes: usize,
    /// Starts of out-of-order blocks, most recently changed first (RFC 2018 §4).
    recent: Vec<u64>,
}

/// What happened to one arriving segment's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Advanced RCV.NXT (possibly filling a hole).
    InOrder {
        /// True if out-of-order data was joined (a hole was filled).
        filled_hole: bool,
    },
    /// Stored beyond a hole.
    OutOfOrder,
    /// Nothing new (entirely duplicate).
    Duplicate,
}

impl Reassembly {
    /// Expects `rcv_nxt` next.
    pub fn new(rcv_nxt: u64) -> Self {
        Reassembly {
            rcv_nxt,
            ready: VecDeque::new(),
            ooo: BTreeMap::new(),
            ooo_bytes: 0,
            recent: Vec::new(),
        }
    }

    /// RCV.NXT.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Advances RCV.NXT past a control bit (SYN/FIN) without data.
    pub fn advance_control(&mut self) {
        self.rcv_nxt = self.rcv_nxt.saturating_add(1);
    }

    /// Bytes buffered (in-order unread plus out-of-order).
    pub fn buffered(&self) -> usize {
        self.ready.len() + self.ooo_bytes
    }

    /// In-order bytes readable.
    pub fn readable(&self) -> usize {
        self.ready.len()
    }

    /// True if there is out-of-order data (a hole at RCV.NXT).
    pub fn has_holes(&self) -> bool {
        !self.ooo.is_empty()
    }

    /// Moves up to `max` readable bytes into `out`.
    pub fn read(&mut self, out: &mut Vec<u8>, max: usize) -> usize {
        let n = max.min(self.ready.len());
        let (a, b) = self.ready.as_slices();
        if n <= a.len() {
            out.extend_from_slice(&a[..n]);
        } else {
            out.extend_from_slice(a);
            out.extend_from_slice(&b[..n - a.len()]);
        }
        self.ready.drain(..n);
        n
    }

    /// Accepts payload starting at `seq`, already trimmed by the caller to the receive window.
    pub fn insert(&mut self, seq: u64, payload: &[u8]) -> Arrival {
        // A range ending past the sequence space is never stored (the caller's window trim
        // already excludes it; this keeps the queue sound on its own).
        let Some(end) = seq.checked_add(payload.len() as u64) else {
            return Arrival::Duplicate;
        };
        if end <= self.rcv_nxt || payload.is_empty() {
            return Arrival::Duplicate;
        }
        if seq <= self.rcv_nxt {
            let skip = (self.rcv_nxt - seq) as usize;
            self.ready.extend(&payload[skip..]);
            self.rcv_nxt = end;
            let filled = self.pull_contiguous();
            return Arrival::InOrder {
                filled_hole: filled,
            };
        }
        if self.store_out_of_order(seq, payload, end) {
            Arrival::OutOfOrder
        } else {
            Arrival::Duplicate
        }
    }

    /// Stores `[seq, seq+len)` minus what is already held; returns false if nothing was new.
    fn store_out_of_order(&mut self, seq: u64, payload: &[u8], end: u64) -> bool {
        // Collect the gaps of [seq, end) not covered by stored segments.
        let mut cursor = seq;
        let mut pieces: Vec<(u64, u64)> = Vec::new();
        let first_key = self
            .ooo
            .range(..=seq)
            .next_back()
            .map(|(k, _)| *k)
            .unwrap_or(seq);
        for (&s, data) in self.ooo.range(first_key..end) {
            let e = s + data.len() as u64;
            if e <= cursor {
                continue;
            }
            if s > cursor {
                pieces.push((cursor, s.min(end)));
            }
            cursor = cursor.max(e);
            if cursor >= end {
                break;
            }
        }
        if cursor < end {
            pieces.push((cursor, end));
        }
        if pieces.is_empty() {
            return false;
        }
        for (s, e) in pieces {
            let a = (s - seq) as usize;
            let b = (e - seq) as usize;
            self.ooo.insert(s, payload[a..b].to_vec());
            self.ooo_bytes += b - a;
        }
        let block_start = self.block_containing(seq).0;
        self.recent.retain(|&s| s != block_start);
        self.recent.insert(0, block_start);
        true
    }

    /// Moves out-of-order data that became contiguous into `ready`.
    fn pull_contiguous(&mut self) -> bool {
        let mut filled = false;
        while let Some((&s, _)) = self.ooo.first_key_value() {
            if s > self.rcv_nxt {
                break;
            }
            let (s, data) = self.ooo.pop_first().expect("checked non-empty");
            self.ooo_bytes -= data.len();
            let end = s + data.len() as u64;
            if end > self.rcv_nxt {
                let skip = (self.rcv_nxt - s) as usize;
                self.ready.extend(&data[skip..]);
                self.rcv_nxt = end;
            }
            filled = true;
        }
        if filled {
            let nxt = self.rcv_nxt;
            self.recent.retain(|&s| s > nxt);
        }
        filled
    }

    /// The maximal contiguous stored range containing `seq` (which must be stored).
    fn block_containing(&self, seq: u64) -> (u64, u64) {
        let mut start = seq;
        // Walk left while the previous segment touches.
        while let Some((&s, d)) = self.ooo.range(..start).next_back() {
            if s + d.len() as u64 == start {
                start = s;
            } else {
                break;
            }
        }
        let mut end = start;
        for (&s, d) in self.ooo.range(start..) {
            if s != end {
                break;
            }
            end = s + d.len() as u64;
        }
        (start, end)
    }

    /// SACK blocks to send: the most recently changed block first, then others by recency
    /// (RFC 2018 §4), at most `MAX_SACK_BLOCKS`.
    pub fn sack_blocks(&mut self, out: &mut roam_wire::Options) {
        out.sack_len = 0;
        if self.ooo.is_empty() {
            self.recent.clear();
            return;
        }
        let mut seen: [SackBlock; MAX_SACK_BLOCKS] = Default::default();
        let mut n = 0;
        let mut i = 0;
        while i < self.recent.len() && n < MAX_SACK_BLOCKS {
            let s = self.recent[i];
            let holder = self.ooo.range(..=s).next_back().map(|(k, d)| (*k, d.len()));
            let valid = matches!(holder, Some((k, len)) if k + len as u64 > s);
            if !valid {
                self.recent.remove(i);
                continue;
            }
            let (bs, be) = self.block_containing(holder.map(|h| h.0).unwrap_or(s));
            let block = SackBlock { start: bs, end: be };
            if !seen[..n].contains(&block) {
                seen[n] = block;
                n += 1;
                out.push_sack(block);
            }
            i += 1;
        }
        self.recent.truncate(MAX_SACK_BLOCKS * 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_a_hole_and_reports_sack_blocks() {
        let mut r = Reassembly::new(0);
        assert_eq!(
            r.insert(0, &[0; 10]),
            Arrival::InOrder { filled_hole: false }
        );
        assert_eq!(r.insert(20, &[2; 10]), Arrival::OutOfOrder);
        assert_eq!(r.insert(40, &[4; 10]), Arrival::OutOfOrder);
        let mut o = roam_wire::Options::default();
        r.sack_blocks(&mut o);
        assert_eq!(
            o.sack_blocks(),
            &[
                SackBlock { start: 40, end: 50 },
                SackBlock { start: 20, end: 30 }
            ]
        );
        assert_eq!(r.insert(25, &[2; 10]), Arrival::OutOfOrder);
        r.sack_blocks(&mut o);
        assert_eq!(o.sack_blocks()[0], SackBlock { start: 20, end: 35 });
        assert_eq!(
            r.insert(10, &[1; 10]),
            Arrival::InOrder { filled_hole: true }
        );
        assert_eq!(r.rcv_nxt(), 35);
        r.sack_blocks(&mut o);
        assert_eq!(o.sack_blocks(), &[SackBlock { start: 40, end: 50 }]);
        let mut out = Vec::new();
        assert_eq!(r.read(&mut out, 100), 35);
        assert_eq!(&out[10..20], &[1; 10]);
        assert_eq!(r.insert(5, &[9; 5]), Arrival::Duplicate);
    }

    #[test]
    fn a_range_past_the_end_of_the_sequence_space_is_not_stored() {
        let mut r = Reassembly::new(u64::MAX - 20);
        assert_eq!(r.insert(u64::MAX - 5, &[1; 10]), Arrival::Duplicate);
        assert_eq!(r.insert(u64::MAX - 10, &[1; 10]), Arrival::OutOfOrder);
        assert_eq!(r.buffered(), 10);
    }

    #[test]
    fn overlapping_out_of_order_data_is_stored_once() {
        let mut r = Reassembly::new(0);
        r.insert(10, &[1; 10]);
        r.insert(5, &[1; 20]);
        assert_eq!(r.buffered(), 20);
        r.insert(0, &[1; 5]);
        assert_eq!(r.rcv_nxt(), 25);
        assert_eq!(r.readable(), 25);
    }
}
