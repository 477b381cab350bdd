//! What a pTCP receiver pipe has received, in its own sequence numbers: the cumulative
//! acknowledgement and the SACK blocks (RFC 2018) it returns. ptcp.txt §4.2: a TCP-v pipe
//! acknowledges its own sequence space for its congestion control and loss recovery, while
//! the bytes go to pTCP's one receive buffer by their stream offset (pSEQ); the record holds
//! no bytes.

use std::collections::{BTreeMap, VecDeque};

use roam_wire::{Options, SackBlock, MAX_SACK_BLOCKS};

use crate::seqspace::PipeSeq;
use crate::tcp::Arrival;

/// Most separate ranges a record holds beyond its cumulative point: arrivals that would start
/// one more are not recorded (the sender retransmits them), so a peer cannot grow it without
/// bound.
pub const MAX_RANGES: usize = 1024;

/// One receiver pipe's record of sequence numbers received.
#[derive(Debug, Clone)]
pub struct PipeRecord {
    rcv_nxt: PipeSeq,
    /// Received ranges beyond `rcv_nxt`, `start -> end`, disjoint and not touching.
    above: BTreeMap<u64, u64>,
    /// Starts of recently changed ranges, most recent first (RFC 2018 §4: the first SACK
    /// block reports the most recent arrival).
    recent: VecDeque<u64>,
}

impl PipeRecord {
    /// Expects `first` next.
    pub fn new(first: PipeSeq) -> Self {
        PipeRecord {
            rcv_nxt: first,
            above: BTreeMap::new(),
            recent: VecDeque::new(),
        }
    }

    /// The cumulative acknowledgement: every sequence number below it was received.
    pub fn rcv_nxt(&self) -> PipeSeq {
        self.rcv_nxt
    }

    /// True while sequence numbers beyond a gap were received.
    pub fn has_holes(&self) -> bool {
        !self.above.is_empty()
    }

    /// Records `[seq, end)`; `None` when refused (it would start one range more than
    /// [`MAX_RANGES`]: not acknowledged, so the sender sends it again).
    pub fn on_arrival(&mut self, seq: PipeSeq, end: PipeSeq) -> Option<Arrival> {
        let (mut s, mut e) = (seq.0.max(self.rcv_nxt.0), end.0);
        if s >= e {
            return Some(Arrival::Duplicate);
        }
        if s == self.rcv_nxt.0 {
            let mut filled = false;
            // Join every range the arrival reaches.
            while let Some((&rs, &re)) = self.above.range(..=e).next() {
                self.above.remove(&rs);
                e = e.max(re);
                filled = true;
            }
            self.rcv_nxt = PipeSeq(e);
            self.recent.retain(|&r| r >= e);
            return Some(Arrival::InOrder {
                filled_hole: filled,
            });
        }
        // Beyond a gap: merge with the ranges it touches.
        let before = self.above.range(..=s).next_back().map(|(&a, &b)| (a, b));
        if let Some((a, b)) = before {
            if b >= e {
                return Some(Arrival::Duplicate);
            }
            if b >= s {
                s = a;
            }
        }
        let touched: Vec<(u64, u64)> = self.above.range(s..=e).map(|(&a, &b)| (a, b)).collect();
        if touched.is_empty() && self.above.len() >= MAX_RANGES {
            return None;
        }
        for (a, b) in touched {
            self.above.remove(&a);
            e = e.max(b);
        }
        self.above.insert(s, e);
        self.recent
            .retain(|&r| !(s..e).contains(&r) && r >= self.rcv_nxt.0);
        self.recent.push_front(s);
        self.recent.truncate(MAX_SACK_BLOCKS);
        Some(Arrival::OutOfOrder)
    }

    /// Fills SACK blocks into `opts`: the ranges of the most recent arrivals first, then the
    /// highest others.
    pub fn fill_sack(&self, opts: &mut Options) {
        let mut used: [u64; MAX_SACK_BLOCKS] = [u64::MAX; MAX_SACK_BLOCKS];
        let mut n = 0;
        let recent = self.recent.iter().filter_map(|&r| {
            self.above
                .range(..=r)
                .next_back()
                .filter(|(_, &e)| e > r)
                .map(|(&s, &e)| (s, e))
        });
        let rest = self.above.iter().rev().map(|(&s, &e)| (s, e));
        for (start, end) in recent.chain(rest) {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if used[..n].contains(&start) {
                continue;
            }
            if !opts.push_sack(SackBlock { start, end }) {
                break;
            }
            used[n] = start;
            n += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrive(r: &mut PipeRecord, s: u64, e: u64) -> Option<Arrival> {
        r.on_arrival(PipeSeq(s), PipeSeq(e))
    }

    fn sack(r: &PipeRecord) -> Vec<(u64, u64)> {
        let mut o = Options::default();
        r.fill_sack(&mut o);
        o.sack_blocks().iter().map(|b| (b.start, b.end)).collect()
    }

    #[test]
    fn the_cumulative_point_and_sack_blocks_follow_the_arrivals() {
        let mut r = PipeRecord::new(PipeSeq(1));
        assert_eq!(
            arrive(&mut r, 1, 1001),
            Some(Arrival::InOrder { filled_hole: false })
        );
        assert_eq!(arrive(&mut r, 2001, 3001), Some(Arrival::OutOfOrder));
        assert_eq!(arrive(&mut r, 4001, 5001), Some(Arrival::OutOfOrder));
        assert_eq!(sack(&r), [(4001, 5001), (2001, 3001)], "most recent first");
        assert_eq!(arrive(&mut r, 3001, 4001), Some(Arrival::OutOfOrder));
        assert_eq!(sack(&r), [(2001, 5001)], "joined");
        assert_eq!(arrive(&mut r, 2500, 2600), Some(Arrival::Duplicate));
        assert_eq!(
            arrive(&mut r, 1001, 2001),
            Some(Arrival::InOrder { filled_hole: true })
        );
        assert_eq!(r.rcv_nxt(), PipeSeq(5001));
        assert!(!r.has_holes() && sack(&r).is_empty());
        assert_eq!(arrive(&mut r, 10, 20), Some(Arrival::Duplicate));
    }

    #[test]
    fn ranges_are_bounded() {
        let mut r = PipeRecord::new(PipeSeq(0));
        for k in 0..MAX_RANGES as u64 {
            assert_eq!(
                arrive(&mut r, 10 * k + 5, 10 * k + 6),
                Some(Arrival::OutOfOrder)
            );
        }
        assert_eq!(
            arrive(&mut r, 1_000_000, 1_000_001),
            None,
            "one more is refused"
        );
        assert_eq!(
            arrive(&mut r, 6, 7),
            Some(Arrival::OutOfOrder),
            "growing one is not"
        );
        assert_eq!(
            arrive(&mut r, 0, 20),
            Some(Arrival::InOrder { filled_hole: true })
        );
    }
}
