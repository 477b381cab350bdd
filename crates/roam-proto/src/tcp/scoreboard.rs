//! The sender's record of outstanding segments: SACK marking, RFC 6675 loss marking and the
//! "pipe" estimate of bytes in the network.

use std::collections::VecDeque;

use roam_wire::SackBlock;

use crate::Time;

/// One transmitted segment (sequence space, so a FIN counts one byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentSegment {
    /// First sequence number.
    pub seq: u64,
    /// Sequence-space length (payload + 1 if it carries the FIN).
    pub len: u32,
    /// Carries the FIN.
    pub fin: bool,
    /// Last (re)transmission time.
    pub sent_at: Time,
    /// Transmissions so far.
    pub tx_count: u16,
    /// Selectively acknowledged.
    pub sacked: bool,
    /// Deemed lost (RFC 6675 IsLost, fast retransmit, or RTO).
    pub lost: bool,
    /// Retransmitted since it was deemed lost.
    pub retransmitted: bool,
}

impl SentSegment {
    fn end(&self) -> u64 {
        self.seq + u64::from(self.len)
    }
}

/// Result of a cumulative acknowledgement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Acked {
    /// Sequence-space bytes newly acknowledged that had not been SACKed before.
    pub newly_delivered: u64,
    /// Sequence-space bytes removed from the board.
    pub removed: u64,
}

/// Outstanding segments in sequence order, contiguous from SND.UNA to SND.NXT.
#[derive(Debug, Clone, Default)]
pub struct Scoreboard {
    segs: VecDeque<SentSegment>,
    outstanding: u64,
    sacked_bytes: u64,
    /// Bytes lost and not SACKed.
    lost_bytes: u64,
    /// Bytes lost, retransmitted, and not SACKed.
    lost_retx_bytes: u64,
    /// Index hint: no segment before it is lost-and-unretransmitted.
    retx_hint: usize,
    /// End of the highest SACKed segment (0 when none).
    high_sacked: u64,
}

impl Scoreboard {
    /// Records a newly sent segment at the right edge.
    pub fn push(&mut self, seq: u64, len: u32, fin: bool, now: Time) {
        debug_assert!(self.segs.back().is_none_or(|s| s.end() == seq));
        self.segs.push_back(SentSegment {
            seq,
            len,
            fin,
            sent_at: now,
            tx_count: 1,
            sacked: false,
            lost: false,
            retransmitted: false,
        });
        self.outstanding += u64::from(len);
    }

    /// True when nothing is outstanding.
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    /// Sequence-space bytes outstanding (SND.NXT − SND.UNA).
    pub fn outstanding(&self) -> u64 {
        self.outstanding
    }

    /// Bytes SACKed and not yet cumulatively acknowledged.
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }

    /// RFC 6675 §4 SetPipe: bytes believed to be in the network — outstanding, minus SACKed,
    /// minus lost, plus lost segments that were retransmitted.
    pub fn pipe(&self) -> u64 {
        self.outstanding - self.sacked_bytes - self.lost_bytes + self.lost_retx_bytes
    }

    /// The first outstanding segment.
    pub fn first(&self) -> Option<&SentSegment> {
        self.segs.front()
    }

    /// Segments outstanding (for tests and diagnostics).
    pub fn len(&self) -> usize {
        self.segs.len()
    }

    fn unaccount(&mut self, s: &SentSegment) {
        let len = u64::from(s.len);
        self.outstanding -= len;
        if s.sacked {
            self.sacked_bytes -= len;
        } else if s.lost {
            self.lost_bytes -= len;
            if s.retransmitted {
                self.lost_retx_bytes -= len;
            }
        }
    }

    /// Removes everything below `ack`.
    pub fn ack_to(&mut self, ack: u64) -> Acked {
        let mut out = Acked::default();
        while let Some(front) = self.segs.front().copied() {
            if front.end() <= ack {
                self.unaccount(&front);
                self.segs.pop_front();
                out.removed += u64::from(front.len);
                if !front.sacked {
                    out.newly_delivered += u64::from(front.len);
                }
                self.retx_hint = self.retx_hint.saturating_sub(1);
            } else {
                if front.seq < ack {
                    // Partial acknowledgement of a segment: trim it (only a peer that
                    // re-segments does this; ours never does, but untrusted input may).
                    self.unaccount(&front);
                    let cut = (ack - front.seq) as u32;
                    let mut s = front;
                    s.seq = ack;
                    s.len -= cut;
                    out.removed += u64::from(cut);
                    if !front.sacked {
                        out.newly_delivered += u64::from(cut);
                    }
                    self.segs[0] = s;
                    self.account(&s);
                }
                break;
            }
        }
        if self.segs.is_empty() {
            self.retx_hint = 0;
        }
        out
    }

    fn account(&mut self, s: &SentSegment) {
        let len = u64::from(s.len);
        self.outstanding += len;
        if s.sacked {
            self.sacked_bytes += len;
        } else if s.lost {
            self.lost_bytes += len;
            if s.retransmitted {
                self.lost_retx_bytes += len;
            }
        }
    }

    /// Index of the first segment whose end is above `seq`.
    fn index_after(&self, seq: u64) -> usize {
        self.segs.partition_point(|s| s.end() <= seq)
    }

    /// Marks segments fully inside the SACK blocks; returns newly SACKed bytes.
    pub fn sack(&mut self, blocks: &[SackBlock]) -> u64 {
        let mut newly = 0;
        for b in blocks {
            let first = self.index_after(b.start);
            // Walked in place: a segment SACKed now leaves the lost bytes (and the lost and
            // retransmitted ones) if it was counted there, and joins the SACKed ones (what
            // `unaccount` and `account` do to it).
            let (mut lost, mut lost_retx) = (0u64, 0u64);
            for s in self.segs.range_mut(first..) {
                if s.seq >= b.end {
                    break;
                }
                if s.seq >= b.start && s.end() <= b.end && !s.sacked {
                    let len = u64::from(s.len);
                    if s.lost {
                        lost += len;
                        if s.retransmitted {
                            lost_retx += len;
                        }
                    }
                    s.sacked = true;
                    newly += len;
                    self.high_sacked = self.high_sacked.max(s.end());
                }
            }
            self.lost_bytes -= lost;
            self.lost_retx_bytes -= lost_retx;
        }
        self.sacked_bytes += newly;
        newly
    }

    /// RFC 6675 §4 IsLost applied to the whole board: an un-SACKed segment is lost when at
    /// least `dup_thresh` SACKed segments, or more than `(dup_thresh − 1)·mss` SACKed bytes,
    /// lie above it. Walks down from the highest SACKed segment and stops at the first segment
    /// already marked lost (everything below it was marked by an earlier, weaker walk).
    #[inline]
    pub fn mark_losses(&mut self, dup_thresh: u32, mss: u64) -> bool {
        if self.sacked_bytes == 0 {
            // Nothing SACKed (most ACKs): no call into the walk below.
            return false;
        }
        self.mark_losses_below_sacked(dup_thresh, mss)
    }

    /// [`Scoreboard::mark_losses`] with SACKed data on the board.
    fn mark_losses_below_sacked(&mut self, dup_thresh: u32, mss: u64) -> bool {
        let top = self.index_after(self.high_sacked.saturating_sub(1));
        let mut sacked_segs = 0u32;
        let mut sacked_bytes = 0u64;
        let byte_thresh = u64::from(dup_thresh.saturating_sub(1)) * mss;
        let end = top.min(self.segs.len().saturating_sub(1)) + 1;
        // Walked in place (a long SACKed run is walked on every ACK of a recovery): each
        // segment marked is neither SACKed nor lost, so marking it only adds its bytes to the
        // lost ones (what `mark_lost_at` does to it).
        let mut newly_lost = 0u64;
        let mut lowest_marked = None;
        for (i, s) in self.segs.range_mut(..end).enumerate().rev() {
            if s.sacked {
                sacked_segs += 1;
                sacked_bytes += u64::from(s.len);
                continue;
            }
            if s.lost {
                break;
            }
            if sacked_segs >= dup_thresh || sacked_bytes > byte_thresh {
                s.lost = true;
                s.retransmitted = false;
                newly_lost += u64::from(s.len);
                lowest_marked = Some(i);
            }
        }
        let Some(lowest) = lowest_marked else {
            return false;
        };
        self.lost_bytes += newly_lost;
        self.retx_hint = self.retx_hint.min(lowest);
        true
    }

    fn mark_lost_at(&mut self, i: usize) {
        let s = self.segs[i];
        if s.sacked || s.lost {
            return;
        }
        self.unaccount(&s);
        let mut t = s;
        t.lost = true;
        t.retransmitted = false;
        self.segs[i] = t;
        self.account(&t);
        self.retx_hint = self.retx_hint.min(i);
    }

    /// Marks the first outstanding segment lost (fast retransmit, NewReno partial ACK).
    pub fn mark_first_lost(&mut self) {
        if !self.segs.is_empty() {
            self.mark_lost_at(0);
        }
    }

    /// Marks the first outstanding segment lost and due for (another) retransmission, even if
    /// it was already retransmitted (the end of a TCP-Probing cycle, which replaces the
    /// retransmission a timeout would have made; a zero-window probe; an excused timeout).
    pub fn remark_first_lost(&mut self) {
        let Some(s) = self.segs.front().copied() else {
            return;
        };
        if s.sacked {
            return;
        }
        self.unaccount(&s);
        let mut t = s;
        t.lost = true;
        t.retransmitted = false;
        self.segs[0] = t;
        self.account(&t);
        self.retx_hint = 0;
    }

    /// Segments the sender still has to send again, in sequence order: deemed lost and not
    /// retransmitted since, or (with `passed`) sent once and below a SACKed segment (a later
    /// transmission arrived before it). Returns the first sequence number at which more than
    /// `budget` bytes of them lie below (the budget's worth are the first to go out again);
    /// `None` if they fit in it.
    pub fn owed_beyond(&self, budget: u64, passed: bool) -> Option<u64> {
        // Without a walk when they cannot exceed the budget (the common case in a recovery
        // with few holes): at most the lost bytes not sent again, plus the un-SACKed bytes
        // below the highest SACKed one.
        let front = self.segs.front()?.seq;
        let unsent_lost = self.lost_bytes - self.lost_retx_bytes;
        let below_high = self.high_sacked.saturating_sub(front);
        let bound = unsent_lost
            + if passed {
                below_high.saturating_sub(self.sacked_bytes)
            } else {
                0
            };
        if bound <= budget {
            return None;
        }
        let mut owed = 0u64;
        for s in &self.segs {
            if s.seq >= self.high_sacked && !s.lost {
                break;
            }
            if self.is_owed(s, passed) {
                if owed >= budget {
                    return Some(s.seq);
                }
                owed += u64::from(s.len);
            }
        }
        None
    }

    /// See [`Scoreboard::owed_beyond`].
    pub fn is_owed(&self, s: &SentSegment, passed: bool) -> bool {
        !s.sacked
            && if s.lost {
                !s.retransmitted
            } else {
                passed && s.tx_count == 1 && s.end() <= self.high_sacked
            }
    }

    /// True if the first outstanding segment is deemed lost.
    pub fn first_is_lost(&self) -> bool {
        self.segs.front().is_some_and(|s| s.lost && !s.sacked)
    }

    /// After a retransmission timeout every un-SACKed segment is deemed lost (RFC 6675 §5.1;
    /// SACK information is kept, as our receivers never renege).
    pub fn mark_all_lost(&mut self) {
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            if s.sacked {
                continue;
            }
            self.unaccount(&s);
            let mut t = s;
            t.lost = true;
            t.retransmitted = false;
            self.segs[i] = t;
            self.account(&t);
        }
        self.retx_hint = 0;
    }

    /// RFC 6675 NextSeg rule 1: the first lost, un-SACKed segment not yet retransmitted.
    #[inline]
    pub fn next_lost(&mut self) -> Option<SentSegment> {
        if self.lost_bytes == self.lost_retx_bytes {
            // Every lost un-SACKed segment was retransmitted (segments are never empty), or
            // none is lost: the walk below would find none (the hint may stay behind).
            return None;
        }
        while self.retx_hint < self.segs.len() {
            let s = self.segs[self.retx_hint];
            if s.lost && !s.sacked && !s.retransmitted {
                return Some(s);
            }
            self.retx_hint += 1;
        }
        None
    }

    /// Records the retransmission of the segment starting at `seq`.
    pub fn on_retransmit(&mut self, seq: u64, now: Time) {
        let i = self.index_after(seq);
        if let Some(s) = self.segs.get(i).copied() {
            if s.seq != seq {
                return;
            }
            self.unaccount(&s);
            let mut t = s;
            t.tx_count = t.tx_count.saturating_add(1);
            t.sent_at = now;
            if t.lost {
                t.retransmitted = true;
            }
            self.segs[i] = t;
            self.account(&t);
        }
    }

    /// The segment starting at `seq`, if outstanding.
    pub fn get(&self, seq: u64) -> Option<&SentSegment> {
        let i = self.index_after(seq);
        self.segs.get(i).filter(|s| s.seq == seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::default();
        for i in 0..n {
            b.push(1 + i * 100, 100, false, Time::ZERO);
        }
        b
    }

    #[test]
    fn three_sacked_segments_above_mark_a_hole_lost() {
        let mut b = board(6);
        let newly = b.sack(&[SackBlock {
            start: 101,
            end: 401,
        }]);
        assert_eq!(newly, 300);
        assert!(b.mark_losses(3, 100));
        assert!(b.first_is_lost());
        assert_eq!(b.pipe(), 600 - 300 - 100);
        let s = b.next_lost().unwrap();
        assert_eq!(s.seq, 1);
        b.on_retransmit(1, Time::ZERO);
        assert_eq!(b.pipe(), 300);
        assert!(b.next_lost().is_none());
    }

    /// The byte counters, recounted from the segments.
    fn assert_counts(b: &Scoreboard) {
        let (mut out, mut sacked, mut lost, mut lost_retx) = (0, 0, 0, 0);
        for s in &b.segs {
            let len = u64::from(s.len);
            out += len;
            if s.sacked {
                sacked += len;
            } else if s.lost {
                lost += len;
                if s.retransmitted {
                    lost_retx += len;
                }
            }
        }
        assert_eq!(
            (
                b.outstanding,
                b.sacked_bytes,
                b.lost_bytes,
                b.lost_retx_bytes
            ),
            (out, sacked, lost, lost_retx)
        );
    }

    /// SACK and loss marking keep the counters what the segments say, through lost,
    /// retransmitted, then SACKed segments, blocks over several segments and partly
    /// overlapping ones, and the hint pointing at the lowest segment marked.
    #[test]
    fn sack_and_loss_marking_keep_the_counters_exact() {
        let mut b = board(12);
        let block = |start: u64, end: u64| SackBlock { start, end };
        assert_eq!(b.sack(&[block(301, 501)]), 200);
        assert_counts(&b);
        assert!(!b.mark_losses(3, 100));
        b.mark_first_lost();
        b.on_retransmit(1, Time::ZERO);
        assert_counts(&b);
        assert_eq!(b.sack(&[block(701, 901), block(450, 601)]), 300);
        assert_counts(&b);
        // Five SACKed segments above 101..301 make both lost (601..701 has two above it), the
        // lowest unretransmitted one next.
        assert!(b.mark_losses(3, 100));
        assert_counts(&b);
        assert_eq!(b.next_lost().map(|s| s.seq), Some(101));
        b.on_retransmit(101, Time::ZERO);
        assert_counts(&b);
        // A retransmitted lost segment, then SACKed.
        assert_eq!(b.sack(&[block(1, 201), block(1101, 1201)]), 300);
        assert_counts(&b);
        assert!(b.mark_losses(3, 100));
        assert_counts(&b);
        assert_eq!(b.next_lost().map(|s| s.seq), Some(201));
        assert!(
            b.segs[6].lost,
            "601..701 now has three SACKed segments above it"
        );
        b.ack_to(601);
        assert_counts(&b);
    }

    #[test]
    fn two_sacked_segments_are_not_enough() {
        let mut b = board(4);
        b.sack(&[SackBlock {
            start: 101,
            end: 301,
        }]);
        assert!(!b.mark_losses(3, 100));
        assert_eq!(b.pipe(), 200);
    }

    #[test]
    fn cumulative_ack_removes_segments_and_accounting() {
        let mut b = board(4);
        b.sack(&[SackBlock {
            start: 201,
            end: 301,
        }]);
        let a = b.ack_to(301);
        assert_eq!(a.removed, 300);
        assert_eq!(a.newly_delivered, 200);
        assert_eq!(b.outstanding(), 100);
        assert_eq!(b.sacked_bytes(), 0);
        assert_eq!(b.pipe(), 100);
    }

    #[test]
    fn timeout_marks_everything_unsacked_lost() {
        let mut b = board(4);
        b.sack(&[SackBlock {
            start: 201,
            end: 301,
        }]);
        b.mark_all_lost();
        assert_eq!(b.pipe(), 0);
        assert_eq!(b.next_lost().unwrap().seq, 1);
        b.on_retransmit(1, Time::ZERO);
        assert_eq!(b.next_lost().unwrap().seq, 101);
        assert_eq!(b.pipe(), 100);
    }
}
