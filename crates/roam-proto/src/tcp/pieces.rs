//! The reassembly's out-of-order pieces by starting sequence number: a sorted queue while
//! every insert is cheap, a `BTreeMap` once a peer makes inserts land deep inside it.
//!
//! A sender's segments beyond a hole arrive in order: the queue appends them and hands them
//! back from the front when the hole is filled, both without a search or an allocation per
//! piece, and its lookups are binary searches over contiguous memory. But a `VecDeque`
//! insert moves every entry on the shorter side of the insert point: a peer ordering tiny
//! pieces to land mid-queue would make each datagram move half the piece bound (the
//! SegmentSmack class of attack, CVE-2018-5390). So no insert moves more than
//! [`MAX_SHIFT`] entries: one that would turns the queue into a map (O(log n) inserts) before
//! it is made, and the map turns back into an empty queue once its last piece leaves.
//! The design and its measured worst case: `docs/HANDSHAKE.md` ("Memory").

use std::collections::{btree_map, vec_deque, BTreeMap, VecDeque};
use std::iter::Rev;

/// Most queue entries one insert may move. An entry is 32 bytes (start and `Vec` header), so
/// 32 of them are a 1 KiB move: about what copying one 1000-byte segment into its piece
/// costs, and less than a `BTreeMap` insert with its search and node allocations. Ordinary
/// traffic stays far below it: pieces beyond a hole are appended (no move), and a
/// retransmission filling a later hole lands near the back of the window it repairs.
pub const MAX_SHIFT: usize = 32;

/// A queue entry: a piece's first sequence number and its bytes.
type Entry = (u64, Vec<u8>);

/// Non-overlapping out-of-order pieces in sequence order.
#[derive(Debug, Clone)]
pub enum Pieces {
    /// Sorted by start; inserts move at most [`MAX_SHIFT`] entries.
    Queue(VecDeque<Entry>),
    /// Used from the first insert that would have moved more until the last piece leaves.
    Map(BTreeMap<u64, Vec<u8>>),
}

impl Default for Pieces {
    fn default() -> Self {
        Pieces::Queue(VecDeque::new())
    }
}

/// The `(start, end)` of pieces in sequence order (either direction).
pub enum Walk<'a> {
    /// Over the queue.
    Queue(vec_deque::Iter<'a, Entry>),
    /// Over the map.
    Map(btree_map::Range<'a, u64, Vec<u8>>),
}

/// A piece's `(start, end)`. Stored pieces end inside the sequence space (checked when
/// the segment arrived).
#[inline]
fn bounds(start: &u64, data: &[u8]) -> (u64, u64) {
    (*start, *start + data.len() as u64)
}

impl Iterator for Walk<'_> {
    type Item = (u64, u64);

    #[inline]
    fn next(&mut self) -> Option<(u64, u64)> {
        match self {
            Walk::Queue(it) => it.next().map(|(s, d)| bounds(s, d)),
            Walk::Map(it) => it.next().map(|(s, d)| bounds(s, d)),
        }
    }
}

impl DoubleEndedIterator for Walk<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<(u64, u64)> {
        match self {
            Walk::Queue(it) => it.next_back().map(|(s, d)| bounds(s, d)),
            Walk::Map(it) => it.next_back().map(|(s, d)| bounds(s, d)),
        }
    }
}

impl Pieces {
    /// Pieces held.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Pieces::Queue(q) => q.len(),
            Pieces::Map(m) => m.len(),
        }
    }

    /// True if no piece is held.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True while the pieces are in the map (a peer made an insert land deep in the queue).
    #[cfg(test)]
    pub fn is_map(&self) -> bool {
        matches!(self, Pieces::Map(_))
    }

    /// Stores `data` starting at `start`; it must not overlap a piece held.
    pub fn insert(&mut self, start: u64, data: Vec<u8>) {
        match self {
            Pieces::Map(m) => {
                m.insert(start, data);
            }
            Pieces::Queue(q) => {
                // Beyond the last piece: a sender's next segment beyond a hole.
                if q.back().is_none() || q.back().is_some_and(|(s, _)| *s < start) {
                    q.push_back((start, data));
                    return;
                }
                let at = q.partition_point(|(s, _)| *s < start);
                if at.min(q.len() - at) <= MAX_SHIFT {
                    q.insert(at, (start, data));
                    return;
                }
                // Sorted already: the map is built in one pass.
                let mut map: BTreeMap<u64, Vec<u8>> = std::mem::take(q).into_iter().collect();
                map.insert(start, data);
                *self = Pieces::Map(map);
            }
        }
    }

    /// Removes the first piece if it starts at or below `seq` (the map, once empty, turns back
    /// into a queue).
    #[inline]
    pub fn pop_first_reached(&mut self, seq: u64) -> Option<Entry> {
        match self {
            Pieces::Queue(q) => match q.front() {
                Some((s, _)) if *s <= seq => q.pop_front(),
                _ => None,
            },
            Pieces::Map(m) => {
                let first = m.first_entry().filter(|e| *e.key() <= seq)?;
                let piece = first.remove_entry();
                if m.is_empty() {
                    *self = Pieces::default();
                }
                Some(piece)
            }
        }
    }

    /// True if a piece starts at `seq`.
    #[inline]
    pub fn starts_at(&self, seq: u64) -> bool {
        match self {
            Pieces::Queue(q) => q
                .get(q.partition_point(|(s, _)| *s < seq))
                .is_some_and(|(s, _)| *s == seq),
            Pieces::Map(m) => m.contains_key(&seq),
        }
    }

    /// The last piece starting at or below `seq`.
    #[inline]
    pub fn last_at_or_below(&self, seq: u64) -> Option<(u64, u64)> {
        match self {
            Pieces::Queue(q) => {
                let at = q.partition_point(|(s, _)| *s <= seq).checked_sub(1)?;
                let (s, d) = &q[at];
                Some(bounds(s, d))
            }
            Pieces::Map(m) => m.range(..=seq).next_back().map(|(s, d)| bounds(s, d)),
        }
    }

    /// The last piece starting below `seq`.
    #[inline]
    pub fn last_below(&self, seq: u64) -> Option<(u64, u64)> {
        self.walk_below(seq).next()
    }

    /// Pieces starting at or above `seq`, first to last.
    #[inline]
    pub fn walk_from(&self, seq: u64) -> Walk<'_> {
        match self {
            Pieces::Queue(q) => Walk::Queue(q.range(q.partition_point(|(s, _)| *s < seq)..)),
            Pieces::Map(m) => Walk::Map(m.range(seq..)),
        }
    }

    /// Pieces from the last one starting at or below `seq` (from the first if none does),
    /// first to last.
    #[inline]
    pub fn walk_from_holder(&self, seq: u64) -> Walk<'_> {
        match self {
            Pieces::Queue(q) => {
                let at = q.partition_point(|(s, _)| *s <= seq).saturating_sub(1);
                Walk::Queue(q.range(at..))
            }
            Pieces::Map(m) => {
                let from = m.range(..=seq).next_back().map_or(seq, |(s, _)| *s);
                Walk::Map(m.range(from..))
            }
        }
    }

    /// Pieces starting below `seq`, last to first.
    #[inline]
    pub fn walk_below(&self, seq: u64) -> Rev<Walk<'_>> {
        match self {
            Pieces::Queue(q) => Walk::Queue(q.range(..q.partition_point(|(s, _)| *s < seq))),
            Pieces::Map(m) => Walk::Map(m.range(..seq)),
        }
        .rev()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn starts(p: &Pieces) -> Vec<u64> {
        p.walk_from(0).map(|(s, _)| s).collect()
    }

    /// Appends and inserts near either end stay in the queue; the first insert that would
    /// move more than `MAX_SHIFT` entries makes a map with the same pieces; emptying the map
    /// makes a queue again.
    #[test]
    fn the_queue_turns_into_a_map_on_a_deep_insert_and_back_once_empty() {
        let mut p = Pieces::default();
        let n = 2 * MAX_SHIFT as u64 + 4;
        for i in 1..=n {
            p.insert(10 * i, vec![0; 5]);
        }
        // Within MAX_SHIFT of the front and of the back.
        p.insert(10 * (MAX_SHIFT as u64) + 5, vec![0; 1]);
        p.insert(10 * (n - MAX_SHIFT as u64) + 5, vec![0; 1]);
        p.insert(5, vec![0; 1]);
        assert!(!p.is_map());
        let mut expected = starts(&p);
        // Half-way: more than MAX_SHIFT entries on either side.
        p.insert(10 * (n / 2) + 7, vec![0; 1]);
        assert!(p.is_map());
        expected.push(10 * (n / 2) + 7);
        expected.sort_unstable();
        assert_eq!(starts(&p), expected);
        assert_eq!(p.len(), expected.len());
        assert_eq!(
            p.last_at_or_below(10 * (n / 2) + 7),
            Some((10 * (n / 2) + 7, 10 * (n / 2) + 8))
        );
        assert_eq!(
            p.last_below(10 * (n / 2) + 7),
            Some((10 * (n / 2), 10 * (n / 2) + 5))
        );
        assert!(p.starts_at(10 * n) && !p.starts_at(10 * n + 1));
        assert_eq!(p.pop_first_reached(4), None);
        for s in &expected {
            assert!(p.is_map());
            assert_eq!(p.pop_first_reached(u64::MAX).map(|e| e.0), Some(*s));
        }
        assert!(!p.is_map() && p.is_empty());
        assert_eq!(p.pop_first_reached(u64::MAX), None);
    }

    /// Both representations answer every lookup alike.
    #[test]
    fn queue_and_map_answer_alike() {
        let mut queue = Pieces::default();
        for s in [3u64, 10, 20, 21, 40] {
            queue.insert(s, vec![0; if s == 20 { 1 } else { 4 }]);
        }
        let map = Pieces::Map(
            starts(&queue)
                .into_iter()
                .zip(queue.walk_from(0))
                .map(|(s, (_, e))| (s, vec![0; (e - s) as usize]))
                .collect(),
        );
        for seq in 0..50 {
            assert_eq!(queue.starts_at(seq), map.starts_at(seq), "{seq}");
            assert_eq!(queue.last_at_or_below(seq), map.last_at_or_below(seq));
            assert_eq!(queue.last_below(seq), map.last_below(seq));
            assert!(queue.walk_from(seq).eq(map.walk_from(seq)));
            assert!(queue.walk_from_holder(seq).eq(map.walk_from_holder(seq)));
            assert!(queue.walk_below(seq).eq(map.walk_below(seq)));
        }
    }
}
