//! The RCP receive buffer: in-order bytes waiting for the application, and out-of-order
//! segments waiting for their holes (§3.3.5: resequencing lives with reliability, at the
//! receiver).

use std::collections::{BTreeMap, VecDeque};

/// Resequencing buffer over object offsets.
#[derive(Debug, Clone, Default)]
pub struct RecvBuffer {
    /// Next in-order offset expected (RCV.NXT).
    rcv_nxt: u64,
    /// Offset of the first unread in-order byte.
    read_point: u64,
    ready: VecDeque<u8>,
    out_of_order: BTreeMap<u64, Vec<u8>>,
    ooo_bytes: usize,
}

impl RecvBuffer {
    /// An empty buffer expecting `start` next.
    pub fn new(start: u64) -> Self {
        RecvBuffer {
            rcv_nxt: start,
            read_point: start,
            ..RecvBuffer::default()
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

    /// True if `[seq, end)` was already received entirely.
    pub fn has(&self, seq: u64, end: u64) -> bool {
        end <= self.rcv_nxt
            || self
                .out_of_order
                .get(&seq)
                .is_some_and(|v| seq + v.len() as u64 >= end)
    }

    /// Stores `payload` at `seq`. Returns the number of bytes by which RCV.NXT advanced.
    pub fn insert(&mut self, seq: u64, payload: &[u8]) -> u64 {
        let end = seq.saturating_add(payload.len() as u64);
        if payload.is_empty() || end <= self.rcv_nxt {
            return 0;
        }
        let before = self.rcv_nxt;
        if seq <= self.rcv_nxt {
            let skip = (self.rcv_nxt - seq) as usize;
            self.ready.extend(&payload[skip..]);
            self.rcv_nxt = end;
            self.drain_in_order();
        } else {
            let slot = self.out_of_order.entry(seq).or_default();
            if slot.len() < payload.len() {
                self.ooo_bytes += payload.len() - slot.len();
                slot.clear();
                slot.extend_from_slice(payload);
            }
        }
        self.rcv_nxt - before
    }

    fn drain_in_order(&mut self) {
        while let Some((&seq, _)) = self.out_of_order.first_key_value() {
            if seq > self.rcv_nxt {
                break;
            }
            let Some((_, bytes)) = self.out_of_order.pop_first() else {
                break;
            };
            self.ooo_bytes -= bytes.len();
            let end = seq + bytes.len() as u64;
            if end > self.rcv_nxt {
                let skip = (self.rcv_nxt - seq) as usize;
                self.ready.extend(&bytes[skip..]);
                self.rcv_nxt = end;
            }
        }
    }

    /// Moves up to `max` in-order bytes to `out`; returns how many.
    pub fn read(&mut self, out: &mut Vec<u8>, max: usize) -> usize {
        let n = max.min(self.ready.len());
        out.extend(self.ready.drain(..n));
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
        assert_eq!(b.insert(100, b"abc"), 5);
        let mut out = Vec::new();
        assert_eq!(b.read(&mut out, 10), 5);
        assert_eq!(out, b"abcde");
        assert_eq!(b.read_point(), 105);
        assert_eq!(b.insert(101, b"bcdef"), 1);
        assert!(b.has(100, 106));
    }
}
